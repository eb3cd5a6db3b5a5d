"""Quick match: grouping by rating and waiting time, and pairing through the server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

from server.app import Server
from server.config import Settings
from server.matchmaker import GROUP_MAX, Waiting, groups, groups_by_kind, window
from tests.client import Client

Connect = Callable[[], Awaitable[Client]]


def waiting(player_id: int, rating: float, since: float) -> Waiting:
    return Waiting(player_id, f"p{player_id}", rating, since)


def a_bot(player_id: int, rating: float, since: float) -> Waiting:
    return Waiting(player_id, f"b{player_id}", rating, since, bot=True)


def ids(found: list[list[Waiting]]) -> list[list[int]]:
    return [[w.player_id for w in group] for group in found]


def test_four_close_players_are_grouped_at_once() -> None:
    queue = [waiting(n, 10.0 + n * 0.1, since=100.0) for n in range(4)]
    assert ids(groups(queue, 100.0, wait_s=5)) == [[0, 1, 2, 3]]


def test_two_players_wait_for_more_until_the_wait_is_over() -> None:
    queue = [waiting(1, 10.0, since=100.0), waiting(2, 11.0, since=101.0)]
    assert groups(queue, 102.0, wait_s=5) == []
    assert ids(groups(queue, 105.0, wait_s=5)) == [[1, 2]]


def test_a_lone_player_is_never_matched_alone() -> None:
    assert groups([waiting(1, 10.0, since=0.0)], 1000.0, wait_s=5) == []


def test_far_ratings_are_not_grouped_until_the_window_has_widened() -> None:
    gap = window(5) + 1
    queue = [waiting(1, 0.0, since=100.0), waiting(2, gap, since=100.0)]
    assert groups(queue, 105.0, wait_s=5) == []  # window(5) < gap
    assert ids(groups(queue, 110.0, wait_s=5)) == [[1, 2]]  # window(10) > gap


def test_groups_take_at_most_four_and_the_rest_form_their_own() -> None:
    queue = [waiting(n, float(n) * 0.01, since=0.0) for n in range(7)]
    found = ids(groups(queue, 100.0, wait_s=5))
    assert found == [[0, 1, 2, 3], [4, 5, 6]] and max(map(len, found)) == GROUP_MAX


def test_groups_form_among_close_ratings_first() -> None:
    queue = [
        waiting(1, 0.0, since=0.0),
        waiting(2, 50.0, since=0.0),
        waiting(3, 0.5, since=0.0),
        waiting(4, 50.5, since=0.0),
    ]
    assert ids(groups(queue, 10.0, wait_s=5)) == [[1, 3], [2, 4]]


async def test_two_queued_players_are_put_in_one_quick_match(connect: Connect) -> None:
    ana, bob = await connect(), await connect()
    await ana.register("ana")
    await bob.register("bob")
    queued = await ana.ok("quick_match", ruleset="classic")
    assert queued == {"type": "queued", "id": queued["id"], "ruleset": "classic", "waiting": 1}
    await bob.ok("quick_match", ruleset="classic")
    found = [await client.event("matched", timeout=10) for client in (ana, bob)]
    code = found[0]["match"]["code"]
    assert found[1]["match"]["code"] == code and found[0]["match"]["kind"] == "quick"
    assert {p["name"] for p in found[0]["players"]} == {"ana", "bob"}
    dealt = [await client.event("started", match=code) for client in (ana, bob)]
    assert dealt[0]["grid"] == dealt[1]["grid"]
    for client in (ana, bob):
        assert (await client.act(code, "stop"))["type"] == "action_ok"
    ended = await ana.event("match_ended", match=code)
    assert len(ended["ratings"]) == 2


async def test_a_player_who_cancels_or_leaves_is_not_matched(connect: Connect) -> None:
    ana, bob, cat = await connect(), await connect(), await connect()
    for client, name in ((ana, "ana"), (bob, "bob"), (cat, "cat")):
        await client.register(name)
    await ana.ok("quick_match", ruleset="classic")
    cancelled = await ana.ok("quick_cancel")
    assert cancelled["cancelled"] is True
    assert (await ana.ok("quick_cancel"))["cancelled"] is False
    await bob.ok("quick_match", ruleset="classic")
    await cat.ok("quick_match", ruleset="addiction")  # another queue
    await asyncio.sleep(1.0)  # well past the test server's 0.3 s wait
    assert not any(e["event"] == "matched" for c in (ana, bob, cat) for e in c.events)


def test_bots_are_grouped_with_bots_only_and_people_with_people() -> None:
    queue = [
        waiting(1, 10.0, since=100.0),
        a_bot(2, 10.0, since=100.0),
        waiting(3, 10.1, since=100.0),
        a_bot(4, 10.1, since=100.0),
        a_bot(5, 10.2, since=100.0),
    ]
    assert ids(groups_by_kind(queue, 200.0, wait_s=5)) == [[1, 3], [2, 4, 5]]
    assert groups_by_kind([waiting(1, 10.0, 0.0), a_bot(2, 10.0, 0.0)], 99.0, wait_s=5) == []


async def test_a_bot_may_not_queue_unless_the_server_lets_bots_race_bots(
    settings: Settings,
) -> None:
    for quick_match_bots in (False, True):
        server = Server(replace(settings, quick_match_bots=quick_match_bots))
        await server.start()
        url = f"ws://127.0.0.1:{server.port}"
        clients = [await Client.connect(url) for _ in range(3)]
        try:
            ana, boop, bleep = clients
            await ana.register(f"ana{int(quick_match_bots)}")
            await boop.register(f"boop{int(quick_match_bots)}", bot=True)
            await bleep.register(f"bleep{int(quick_match_bots)}", bot=True)
            if not quick_match_bots:
                refused = await boop.request("quick_match", ruleset="classic")
                assert (refused["code"], refused["refused_by"]) == (
                    "bots_not_allowed",
                    "quick_match",
                )
                continue
            for client in clients:
                await client.ok("quick_match", ruleset="classic")
            found = [await client.event("matched", timeout=10) for client in (boop, bleep)]
            assert {p["name"] for p in found[0]["players"]} == {"boop1", "bleep1"}
            assert all(p["bot"] for p in found[0]["players"]) and found[0]["match"]["bots"]
            assert [w.name for w in server.matchmaker.queues["classic"]] == ["ana1"]  # alone
        finally:
            for client in clients:
                await client.close()
            await server.close()
