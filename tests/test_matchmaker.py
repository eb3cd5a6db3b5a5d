"""Quick match through the server: the queue actor pairs players on the one clock.

The queue's rules (grouping by rating and waiting time, bots with bots) are tested on
its pure core in tests/test_queuecore.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from server.app import Server
from server.config import Settings
from tests.client import Client
from tests.fake_clock import FakeClock

Connect = Callable[[], Awaitable[Client]]


async def test_two_queued_players_are_put_in_one_quick_match(connect: Connect) -> None:
    ana, bob = await connect(), await connect()
    await ana.register("ana")
    await bob.register("bob")
    queued = await ana.ok("quick_match", ruleset="classic")
    assert queued == {"type": "queued", "id": queued["id"], "ruleset": "classic", "waiting": 1}
    await bob.ok("quick_match", ruleset="classic")
    found = [await client.event("matched") for client in (ana, bob)]
    code = found[0]["match"]["code"]
    assert found[1]["match"]["code"] == code and found[0]["match"]["kind"] == "quick"
    assert {p["name"] for p in found[0]["players"]} == {"ana", "bob"}
    dealt = [await client.event("started", match=code) for client in (ana, bob)]
    assert dealt[0]["grid"] == dealt[1]["grid"]
    for client in (ana, bob):
        assert (await client.act(code, "stop"))["type"] == "action_ok"
    ended = await ana.event("match_ended", match=code)
    assert len(ended["ratings"]) == 2


async def test_a_pair_waits_for_more_until_the_wait_is_over(
    settings: Settings, clock: FakeClock
) -> None:
    server = Server(replace(settings, quick_wait_s=5.0), clock=clock)
    await server.start()
    url = f"ws://127.0.0.1:{server.port}"
    ana, bob = await Client.connect(url), await Client.connect(url)
    try:
        await ana.register("ana")
        await bob.register("bob")
        for client in (ana, bob):
            await client.ok("quick_match", ruleset="classic")
        clock.advance(4.8)
        assert (await ana.ok("ping"))["type"] == "pong"  # the queue had its turn
        assert not [e for e in ana.events if e["event"] == "matched"]
        clock.advance(0.4)  # past the wait, at the queue's next cut
        found = [await client.event("matched") for client in (ana, bob)]
        assert found[0]["match"]["code"] == found[1]["match"]["code"]
    finally:
        for client in (ana, bob):
            await client.close()
        await server.close()


async def test_a_player_who_cancels_or_leaves_is_not_matched(
    connect: Connect, server: Server, clock: FakeClock
) -> None:
    ana, bob, cat = await connect(), await connect(), await connect()
    for client, name in ((ana, "ana"), (bob, "bob"), (cat, "cat")):
        await client.register(name)
    await ana.ok("quick_match", ruleset="classic")
    cancelled = await ana.ok("quick_cancel")
    assert cancelled["cancelled"] is True
    assert (await ana.ok("quick_cancel"))["cancelled"] is False
    await bob.ok("quick_match", ruleset="classic")
    await cat.ok("quick_match", ruleset="addiction")  # another queue
    clock.advance(1.0)  # well past the test server's wait
    for client in (ana, bob, cat):
        assert (await client.ok("ping"))["type"] == "pong"
    assert not any(e["event"] == "matched" for c in (ana, bob, cat) for e in c.events)
    assert server.matchmaker is not None
    queue = server.matchmaker.state
    assert [w.name for w in queue.waiting("classic")] == ["bob"]
    assert [w.name for w in queue.waiting("addiction")] == ["cat"]


async def test_a_bot_may_not_queue_unless_the_server_lets_bots_race_bots(
    settings: Settings, clock: FakeClock
) -> None:
    for quick_match_bots in (False, True):
        server = Server(replace(settings, quick_match_bots=quick_match_bots), clock=clock)
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
            found = [await client.event("matched") for client in (boop, bleep)]
            assert {p["name"] for p in found[0]["players"]} == {"boop1", "bleep1"}
            assert all(p["bot"] for p in found[0]["players"]) and found[0]["match"]["bots"]
            assert server.matchmaker is not None
            alone = server.matchmaker.state.waiting("classic")
            assert [w.name for w in alone] == ["ana1"]
        finally:
            for client in clients:
                await client.close()
            await server.close()
