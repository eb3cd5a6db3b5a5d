"""Two server processes of one cluster (two ``Server`` objects on one PostgreSQL and one
Redis): a player connected to either reaches a match that the other runs."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update

from gaps import Game
from server.app import Server
from server.remote import RemoteMatch
from server.storage.database import Database
from server.storage.leases import RELEASED
from server.storage.models import MatchLease
from tests.client import Client
from tests.fake_clock import DAY_S, FakeClock

pytestmark = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)


async def client_of(server: Server, name: str) -> Client:
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    await client.register(name)
    return client


async def dealt(host: Client, guest: Client) -> tuple[str, Game]:
    """``host`` creates a match, ``guest`` joins it, both ready: its code and deal."""
    code = (await host.ok("create_match", max_players=2, countdown_s=0, public=True))["match"][
        "code"
    ]
    joined = await guest.ok("join_match", code=code)
    assert joined["you"]["role"] == "player"
    await host.ok("ready", code=code)
    await guest.ok("ready", code=code)
    started = await guest.event("started", match=code)
    return code, Game.from_layout("\n".join(started["grid"]))


async def test_a_player_on_one_process_races_in_a_match_the_other_runs(
    pair: tuple[Server, Server],
) -> None:
    owner, other = pair
    ana, bob = await client_of(owner, "ana"), await client_of(other, "bob")
    code, game = await dealt(ana, bob)
    assert code in owner.lobby.matches and code not in other.lobby.matches
    move = game.legal_moves()[0]
    reply = await bob.act(code, str(move))
    assert reply["type"] == "action_ok" and reply["seq"] == 1
    # Its own event and the other player's come to bob through the broker.
    await bob.event("progress", match=code, player_id=bob.player_id)
    await ana.event("progress", match=code, player_id=bob.player_id)
    assert (await bob.act(code, str(move), seq=1)).get("duplicate") is True
    refused = await bob.act(code, "no-such-move")
    assert refused["type"] == "error" and refused["code"] == "bad_message"
    resynced = await bob.ok("resync", code=code, since=0)
    assert [e["event"] for e in resynced["events"]][-1] == "progress"
    await bob.act(code, "stop")
    await ana.act(code, "stop")
    ended = await bob.event("match_ended", match=code)
    assert {p["name"] for p in ended["ranking"]} == {"ana", "bob"}
    for client in (ana, bob):
        await client.close()


async def test_a_rematch_asked_on_the_other_process_is_offered_on_the_finished_matchs_events(
    pair: tuple[Server, Server],
) -> None:
    owner, other = pair
    ana, bob = await client_of(owner, "ana"), await client_of(other, "bob")
    code, _ = await dealt(ana, bob)
    for client in (ana, bob):
        await client.act(code, "stop")
    await ana.event("match_ended", match=code)
    asked = await bob.ok("rematch", code=code)  # the finished match runs on the owner
    new_code = asked["match"]["code"]
    assert new_code in other.lobby.matches  # created where bob asked
    for client in (ana, bob):
        offered = await client.event("rematch_offered", match=code)
        assert offered["code"] == new_code and offered["by"]["name"] == "bob"
    accepted = await ana.ok("rematch", code=code)  # reaches the new match on the other
    assert accepted["match"]["code"] == new_code
    assert {p["name"] for p in accepted["players"]} == {"ana", "bob"}
    for client in (ana, bob):
        await client.close()


async def test_refusals_of_the_owner_reach_a_player_on_the_other_process(
    pair: tuple[Server, Server],
) -> None:
    owner, other = pair
    ana, bob = await client_of(owner, "ana"), await client_of(other, "bob")
    code = (await ana.ok("create_match", max_players=2))["match"]["code"]
    await bob.ok("join_match", code=code)
    refused = await bob.request("start_match", code=code)
    assert refused["code"] == "not_host" and code in refused["message"]
    cara = await client_of(other, "cara")
    full = await cara.request("join_match", code=code)
    assert full["code"] == "match_full"
    gone = await cara.request("join_match", code="ZZZZZZ")
    assert gone["code"] == "no_such_match"
    for client in (ana, bob, cara):
        await client.close()


async def test_open_matches_of_every_process_are_listed_by_each(
    pair: tuple[Server, Server],
) -> None:
    first, second = pair
    ana, bob = await client_of(first, "ana"), await client_of(second, "bob")
    here = (await ana.ok("create_match", max_players=2, public=True))["match"]["code"]
    there = (await bob.ok("create_match", max_players=2, public=True))["match"]["code"]
    await bob.ok("create_match", max_players=2, public=False)
    for client in (ana, bob):
        listed = {m["code"] for m in (await client.ok("list_matches"))["matches"]}
        assert listed == {here, there}
    for client in (ana, bob):
        await client.close()


async def test_a_spectator_on_the_other_process_watches_and_leaves(
    pair: tuple[Server, Server],
) -> None:
    owner, other = pair
    ana, bob = await client_of(owner, "ana"), await client_of(owner, "bob")
    eve = await client_of(other, "eve")
    code, game = await dealt(ana, bob)
    watching = await eve.ok("join_match", code=code, role="spectator")
    assert watching["you"]["role"] == "spectator" and watching["spectators"] == 1
    await ana.act(code, str(game.legal_moves()[0]))
    await eve.event("progress", match=code, player_id=ana.player_id)
    refused = await eve.act(code, "stop")
    assert refused["code"] in ("not_a_player", "not_in_match")
    await eve.ok("leave_match", code=code)
    snapshot = await owner.lobby.get(code).snapshot(None)
    assert snapshot.spectators == 0
    for client in (ana, bob, eve):
        await client.close()


async def test_a_seat_held_from_a_process_that_vanished_is_counted_away(
    pair: tuple[Server, Server],
) -> None:
    owner, other = pair
    ana, bob = await client_of(owner, "ana"), await client_of(other, "bob")
    code, _ = await dealt(ana, bob)
    seat = lambda snapshot: next(p for p in snapshot.players if p.name == "bob")  # noqa: E731
    match = owner.lobby.get(code)
    assert seat(await match.snapshot(None)).connected is True
    assert other.relay is not None
    await other.relay.close()  # as if the process died: its sessions say nothing
    await owner.lobby.keep_leases()
    assert seat(await match.snapshot(None)).connected is False
    for client in (ana, bob):
        await client.close()


async def test_a_connection_following_a_match_that_moved_is_closed_to_rejoin_it(
    pair: tuple[Server, Server],
) -> None:
    owner, other = pair
    ana, bob = await client_of(owner, "ana"), await client_of(other, "bob")
    code, game = await dealt(ana, bob)
    handle = await other.routes.find(code)
    assert isinstance(handle, RemoteMatch) and handle.node != other.relay.node  # type: ignore[union-attr]
    # The owner stops renewing and its lease runs out: the other process takes over.
    database = Database(owner.url)
    async with database.write() as connection:
        await connection.execute(update(MatchLease).values(expires_at=RELEASED))
    await database.dispose()
    taken = await other.lobby.keep_leases()
    assert [match.code for match in taken] == [code]
    await asyncio.wait_for(asyncio.gather(bob._reader, return_exceptions=True), 5)
    assert bob.connection.close_code == 1012
    token = bob.token
    await bob.close()
    bob = await Client.connect(f"ws://127.0.0.1:{other.port}")
    await bob.ok("hello", token=token)
    rejoined = await bob.ok("join_match", code=code)
    assert rejoined["you"]["role"] == "player" and rejoined["match"]["status"] == "running"
    assert (await bob.act(code, str(game.legal_moves()[0]), seq=1))["type"] == "action_ok"
    await ana.close()
    await bob.close()


async def test_the_daily_challenge_is_one_per_player_and_one_board_from_either_process(
    pair: tuple[Server, Server], clock: FakeClock
) -> None:
    first, second = pair
    ana_here, bob = await client_of(first, "ana"), await client_of(second, "bob")
    clock.advance(DAY_S)  # registered yesterday: ranked today (tests/test_daily_ranked.py)
    started = await ana_here.ok("daily", ruleset="classic")
    code = started["match"]["code"]
    dealt_grid = (await ana_here.event("started", match=code))["grid"]
    # The same player, through the other process: refused, and her match is reached there.
    ana_there = await Client.connect(f"ws://127.0.0.1:{second.port}")
    await ana_there.ok("hello", token=ana_here.token)
    again = await ana_there.request("daily", ruleset="classic")
    assert again["code"] == "daily_already_played"
    rejoined = await ana_there.ok("join_match", code=code)
    assert rejoined["you"]["role"] == "player"
    assert (await ana_there.act(code, "stop"))["type"] == "action_ok"
    # Bob gets the same deal on the other process, and one board ranks both.
    bobs = await bob.ok("daily", ruleset="classic")
    assert (await bob.event("started", match=bobs["match"]["code"]))["grid"] == dealt_grid
    await bob.act(bobs["match"]["code"], "stop")
    await bob.event("match_ended", match=bobs["match"]["code"])
    await ana_there.event("match_ended", match=code)
    for client in (ana_here, bob):
        board = await client.ok("daily_board", ruleset="classic")
        assert sorted(e["name"] for e in board["entries"]) == ["ana", "bob"]
    for client in (ana_here, ana_there, bob):
        await client.close()
