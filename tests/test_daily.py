"""The daily challenge: one secret deal a day per ruleset, one attempt each, a daily board."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Game, Ruleset
from server.app import Server
from server.broker import LocalBroker
from server.config import Settings
from server.daily import Daily, daily_seed
from server.deals import DealProver
from server.errors import ServerError
from server.storage.store import Store
from tests.client import Client
from tests.fake_clock import DAY_S, FakeClock
from tests.lobbies import new_lobby, new_player

Connect = Callable[[], Awaitable[Client]]



def test_the_daily_seed_depends_on_the_key_the_day_and_the_ruleset() -> None:
    key = b"k" * 32
    day = date(2026, 11, 29)
    assert daily_seed(key, "classic", day) == daily_seed(key, "classic", day)
    others = {
        daily_seed(key, "addiction", day),
        daily_seed(key, "classic", date(2026, 11, 30)),
        daily_seed(b"j" * 32, "classic", day),
    }
    assert daily_seed(key, "classic", day) not in others and len(others) == 3


async def play_daily(
    client: Client,
    ruleset: str,
    moves: int,
    *,
    taking_s: float = 0.0,
    clock: FakeClock | None = None,
) -> dict:
    """Play today's challenge: ``moves`` legal moves, then stop after ``taking_s`` on the
    server's ``clock``."""
    started = await client.ok("daily", ruleset=ruleset)
    code = started["match"]["code"]
    assert started["match"]["kind"] == "daily" and started["match"]["max_players"] == 1
    dealt = await client.event("started", match=code)
    game = Game.from_layout("\n".join(dealt["grid"]), ruleset)
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            break
        reply = await client.act(code, str(legal[0]))
        assert reply["type"] == "action_ok", reply
        game.play(legal[0])
    if clock is not None:
        clock.advance(taking_s)
    await client.act(code, "stop")
    return {
        "code": code,
        "grid": dealt["grid"],
        "score": game.score,
        "ended": await client.event("match_ended", match=code),
    }


async def test_everyone_gets_the_same_daily_deal_once_and_a_board_ranks_them(
    connect: Connect,
    clock: FakeClock,
) -> None:
    ana, bob = await connect(), await connect()
    await ana.register("ana")
    await bob.register("bob")
    clock.advance(DAY_S)  # registered yesterday: ranked today (tests/test_daily_ranked.py)
    first = await play_daily(ana, "classic", moves=3, taking_s=2.0, clock=clock)
    second = await play_daily(bob, "classic", moves=0)
    assert first["grid"] == second["grid"]
    again = await ana.request("daily", ruleset="classic")
    assert again["code"] == "daily_already_played"
    other_rules = await play_daily(ana, "montana", moves=0)  # another ruleset: another deal
    assert other_rules["grid"] != first["grid"]
    board = await bob.ok("daily_board", ruleset="classic")
    assert board["day"] == clock.today().isoformat()
    entries = board["entries"]
    assert {e["name"]: e["score"] for e in entries} == {
        "ana": first["score"],
        "bob": second["score"],
    }
    # By score, then by how long the attempt took (each attempt has its own clock).
    assert [(-e["score"], e["finish_ms"]) for e in entries] == sorted(
        (-e["score"], e["finish_ms"]) for e in entries
    )
    assert [e["rank"] for e in entries] == [1, 2]


async def test_the_daily_seed_stays_secret_until_the_day_is_over(connect: Connect) -> None:
    ana = await connect()
    await ana.register("ana")
    played = await play_daily(ana, "classic", moves=1)
    assert played["ended"]["seed"] is None and len(played["ended"]["commitment"]) == 64
    withheld = await ana.request("get_replay", code=played["code"])
    assert withheld["code"] == "not_finished"


async def test_the_daily_deal_is_the_same_after_a_restart(settings: Settings) -> None:
    grids = []
    for name in ("ana", "bob"):
        server = Server(settings)
        await server.start()
        try:
            client = await Client.connect(f"ws://127.0.0.1:{server.port}")
            await client.register(name)
            grids.append((await play_daily(client, "montana", moves=0))["grid"])
            await client.close()
        finally:
            await server.close()
    assert grids[0] == grids[1]


async def test_nobody_but_its_player_may_watch_a_daily_attempt_before_the_day_is_over(
    migrated_engine: AsyncEngine,
) -> None:
    store = Store(migrated_engine)
    clock = FakeClock()
    lobby = new_lobby(store, LocalBroker(), clock)
    prover = DealProver()
    daily = Daily(store=store, lobby=lobby, clock=clock, countdown_s=0, prover=prover)
    try:
        ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
        classic = Ruleset.named("classic")
        attempt = (await daily.start(ana.id, ana.name, classic)).match
        await attempt.resync(ana.id, 0)
        with pytest.raises(ServerError) as watching:
            await attempt.watch(bob.id)
        assert watching.value.code == "not_watchable"
        with pytest.raises(ServerError) as seating:  # nor does a player's seat let him in
            await attempt.join(bob.id, bob.name)
        assert seating.value.code == "already_started"
        await daily.start(bob.id, bob.name, classic)  # bob's own attempt: the same deal
        with pytest.raises(ServerError) as still:
            await attempt.resync(bob.id, 0)
        assert still.value.code == "not_watchable"
    finally:
        await lobby.close()
        await prover.close()


async def test_another_account_can_neither_watch_nor_resync_a_daily_attempt(
    connect: Connect,
) -> None:
    ana, bob = await connect(), await connect()
    await ana.register("ana")
    await bob.register("bob")
    started = await ana.ok("daily", ruleset="classic")
    code = started["match"]["code"]
    watching = await bob.request("join_match", code=code, role="spectator")
    assert watching["code"] == "not_watchable"
    resync = await bob.request("resync", code=code, since=0)
    assert resync["code"] == "not_watchable"
    await ana.event("started", match=code)
    own = await ana.ok("resync", code=code, since=0)
    assert any(event["event"] == "started" for event in own["events"])
    await ana.act(code, "stop")
    await ana.event("match_ended", match=code)
    assert not [event for event in bob.events if event.get("match") == code]


async def test_a_bot_may_not_play_the_daily_challenge(connect: Connect) -> None:
    beep = await connect()
    await beep.register("beep", bot=True)
    refused = await beep.request("daily", ruleset="classic")
    assert (refused["code"], refused["refused_by"]) == ("bots_not_allowed", "daily")
    board = await beep.ok("daily_board", ruleset="classic")
    assert board["entries"] == []
