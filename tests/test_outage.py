"""A database outage while a match ends: the ends of its games wait for the database,
then the match ends with complete results and a replay that verifies.

The server reaches PostgreSQL through a proxy the test cuts. Real time passes: the grace
period and the time limit are the server's own timers, and what is tested is how they
meet the retries of a database that does not answer.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from sqlalchemy import exc

from client_cli.verify import verify
from gaps import Game
from server.app import Server
from server.config import Settings
from server.storage.outage import is_transient, until_stored
from tests.client import Client
from tests.proxy import TcpProxy, proxied_server
from tests.races import start_race

TIME_LIMIT_S = 2
RETRIED = "storing failed; retrying"


@dataclass
class Outage:
    """A server whose database goes through ``proxy``."""

    server: Server
    proxy: TcpProxy
    url: str

    async def player(self, name: str) -> Client:
        client = await Client.connect(self.url)
        await client.register(name)
        return client


@pytest.fixture
async def outage(settings: Settings) -> AsyncIterator[Outage]:
    async with proxied_server(settings) as (server, proxy):
        yield Outage(server, proxy, f"ws://127.0.0.1:{server.port}")


async def make_moves(client: Client, code: str, count: int) -> None:
    started = await client.event("started", match=code)
    game = Game.from_layout("\n".join(started["grid"]), "classic")
    for _ in range(count):
        move = game.legal_moves()[0]
        reply = await client.act(code, str(move))
        assert reply["type"] == "action_ok", reply
        game.play(move)


def finished_players(events: list[dict[str, Any]], code: str) -> dict[int, str]:
    """Each player_finished event's player and end reason."""
    return {
        e["player_id"]: e["end_reason"]
        for e in events
        if e["event"] == "player_finished" and e["match"] == code
    }


@pytest.mark.grace_s(0.5)
async def test_a_match_whose_games_end_during_an_outage_ends_once_the_database_is_back(
    outage: Outage, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="gaps.storage")  # each retry: DEBUG
    ana, bob = await outage.player("ana"), await outage.player("bob")
    code = await start_race([ana, bob], time_limit_s=TIME_LIMIT_S)
    await make_moves(ana, code, 3)
    await make_moves(bob, code, 2)
    await bob.close()  # his game ends after the grace period
    await outage.proxy.cut()
    # Past the grace period and the time limit: both ends wait for the database.
    await asyncio.sleep(TIME_LIMIT_S + 0.5)
    assert not finished_players(ana.events, code)
    await outage.proxy.restore()

    ended = await ana.event("match_ended", match=code, timeout=15)
    expected = {ana.player_id: "time", bob.player_id: "disconnected"}
    assert finished_players(ana.events, code) == expected
    assert {row["player_id"]: row["end_reason"] for row in ended["ranking"]} == expected
    bob_again = await Client.connect(outage.url)
    try:
        await bob_again.ok("hello", token=bob.token)
        missed = await bob_again.ok("resync", code=code, since=0)
    finally:
        await bob_again.close()
    assert finished_players(missed["events"], code) == expected
    assert [e["event"] for e in missed["events"]][-1] == "match_ended"

    stored = await outage.server.store.matches.replay(code)
    assert stored is not None and stored["match"]["status"] == "finished"
    for row in stored["players"]:
        assert row["end_reason"] == expected[row["player_id"]]
        assert row["finish_ms"] is not None and row["rank"] is not None
    assert {r["player_id"]: r["finish_ms"] for r in stored["players"]}[ana.player_id] == (
        TIME_LIMIT_S * 1000
    )
    report = verify(msgspec.to_builtins(await outage.server.services.reads.replay(code)))
    assert report.discrepancies == []
    retried = {getattr(r, "what", "") for r in caplog.records if r.getMessage() == RETRIED}
    assert {f"the end of player {p}'s game in match {code}" for p in expected} <= retried
    await ana.close()


@pytest.mark.grace_s(1.0)
async def test_a_grace_period_ending_past_the_time_limit_during_an_outage_finishes_within_it(
    outage: Outage,
) -> None:
    ana, bob = await outage.player("ana"), await outage.player("bob")
    code = await start_race([ana, bob], time_limit_s=TIME_LIMIT_S)
    started = asyncio.get_running_loop().time()
    await make_moves(ana, code, 2)
    await make_moves(bob, code, 2)
    await asyncio.sleep(started + 1.5 - asyncio.get_running_loop().time())
    # His grace period ends at 2.5 s, while the end of ana's game by time, at 2 s, waits
    # for the database: nothing ends his before then.
    await bob.close()
    await outage.proxy.cut()
    await asyncio.sleep(started + TIME_LIMIT_S + 1.5 - asyncio.get_running_loop().time())
    await outage.proxy.restore()

    await ana.event("match_ended", match=code, timeout=15)
    stored = await outage.server.store.matches.replay(code)
    assert stored is not None
    report = verify(msgspec.to_builtins(await outage.server.services.reads.replay(code)))
    assert report.discrepancies == []
    finish_ms = {row["player_id"]: row["finish_ms"] for row in stored["players"]}
    assert max(finish_ms.values()) <= TIME_LIMIT_S * 1000, finish_ms
    await ana.close()


def test_a_locked_sqlite_database_is_an_outage_but_a_missing_table_is_a_bug() -> None:
    def wrapped(message: str) -> exc.OperationalError:
        return exc.OperationalError("SELECT 1", {}, sqlite3.OperationalError(message))

    assert is_transient(wrapped("database is locked"))
    assert is_transient(wrapped("disk I/O error"))
    assert not is_transient(wrapped("no such table: matches"))
    assert not is_transient(wrapped('near "SELEC": syntax error'))


async def test_until_stored_raises_a_bug_at_once_instead_of_retrying_it() -> None:
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise exc.OperationalError("SELECT 1", {}, sqlite3.OperationalError("no such table: x"))

    with pytest.raises(exc.OperationalError):
        await until_stored(broken, what="a test write")
    assert calls == 1
