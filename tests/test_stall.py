"""A stalled or restarting PostgreSQL (issue 33): every wait on the database has a
deadline, past which the request is refused ``storage_unavailable`` (not applied: send it
again), while the connection's pings and reads are answered at once; a restart is an
outage, never a bug (no ``internal_error``), and ``/healthz`` says so.

The module has a PostgreSQL cluster of its own (each test a database in it), which a
test stops (SIGSTOP) or restarts, and leaves running again. The waits here are the
database's I/O deadlines (``server.storage.database``), real time by nature; the server's
own timers run on the fake clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy import exc, select

from gaps import Game
from server.app import Server
from server.config import Settings
from server.storage.database import CONNECT_TIMEOUT_S
from server.storage.journal import ACTION_DEADLINE_S
from server.storage.models import ActionRecord, Match
from server.storage.outage import is_outage
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.services import Postgres

#: How long an action may wait on a stalled database before it is refused, at most: its
#: batch's deadline, with room for a loaded machine.
BOUND_S = ACTION_DEADLINE_S + 1.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Postgres]:
    postgres = Postgres()
    yield postgres
    postgres.stop()


@pytest.fixture
async def server(settings: Settings, cluster: Postgres, clock: FakeClock) -> AsyncIterator[Server]:
    running = Server(replace(settings, database_url=cluster.create_database()), clock=clock)
    await running.start()
    yield running
    await running.close(drain_timeout_s=BOUND_S)


async def a_race(server: Server) -> tuple[Client, str, Game]:
    """ana in a one-player race, dealt."""
    ana = await Client.connect(f"ws://127.0.0.1:{server.port}")
    await ana.register("ana")
    code = (await ana.ok("create_match", max_players=1, countdown_s=0))["match"]["code"]
    await ana.ok("ready", code=code)
    started = await ana.event("started", match=code)
    return ana, code, Game.from_layout("\n".join(started["grid"]))


async def stored_actions(server: Server, code: str) -> list[tuple[int, str]]:
    async with server.database.read() as connection:
        rows = await connection.execute(
            select(ActionRecord.seq, ActionRecord.action)
            .join(Match, Match.id == ActionRecord.match_id)
            .where(Match.code == code)
            .order_by(ActionRecord.seq)
        )
        return [(row.seq, row.action) for row in rows]


async def test_a_stalled_database_refuses_an_action_in_time_and_pings_are_answered_meanwhile(
    server: Server, cluster: Postgres
) -> None:
    ana, code, game = await a_race(server)
    first = game.legal_moves()[0]
    assert (await ana.act(code, str(first), seq=1))["type"] == "action_ok"
    game.play(first)
    second = game.legal_moves()[0]
    cluster.halt()
    try:
        stalled_at = time.monotonic()
        acting = asyncio.ensure_future(ana.act(code, str(second), seq=2))
        await asyncio.sleep(0.2)
        pinged_at = time.monotonic()
        pong = await ana.request("ping")
        assert pong["type"] == "pong" and time.monotonic() - pinged_at < 1.0
        # A read of the connection is answered too, while the action waits.
        listed = await ana.request("list_matches")
        assert listed["type"] == "matches" and not acting.done()
        refused = await asyncio.wait_for(acting, BOUND_S + 2)
        waited_s = time.monotonic() - stalled_at
        assert refused["code"] == "storage_unavailable", refused
        assert waited_s < BOUND_S, waited_s
    finally:
        cluster.resume()
    # Sent again once the database is back: applied once, whether or not the first try
    # was taken by the database after all.
    again = await ana.act(code, str(second), seq=2)
    assert again["type"] == "action_ok" and again["seq"] == 2, again
    assert await stored_actions(server, code) == [(1, str(first)), (2, str(second))]
    assert (await ana.act(code, "stop", seq=3))["type"] == "action_ok"
    await ana.event("match_ended", match=code)
    await ana.close()


async def test_a_database_stopped_and_started_again_is_an_outage_never_a_bug(
    server: Server, cluster: Postgres
) -> None:
    ana, code, game = await a_race(server)
    status, _ = await http_get(server.port, "/healthz")
    assert status == 200
    cluster.pg_ctl("stop", "-m", "fast")
    try:
        status, body = await http_get(server.port, "/healthz")
        assert (status, body["failing"]) == (503, ["database"])
        move = game.legal_moves()[0]
        refused = await ana.act(code, str(move), seq=1)
        assert refused["code"] == "storage_unavailable", refused
        created = await ana.request("create_match")
        assert created["code"] == "storage_unavailable", created
    finally:
        cluster.pg_ctl("start")
    async with asyncio.timeout(CONNECT_TIMEOUT_S + 10):
        while (await http_get(server.port, "/healthz"))[0] != 200:
            await asyncio.sleep(0.1)
    assert (await ana.act(code, str(move), seq=1))["type"] == "action_ok"
    game.play(move)
    # And across a fast restart, every answer is an action's or an outage's.
    restarting = asyncio.ensure_future(asyncio.to_thread(cluster.pg_ctl, "restart", "-m", "fast"))
    codes = set()
    seq = 1
    while not restarting.done():
        legal = game.legal_moves() if not game.is_over() else []
        game_move = legal[0] if legal else None
        if game_move is None:
            break
        reply = await ana.act(code, str(game_move), seq=seq + 1)
        codes.add(reply.get("code", reply["type"]))
        if reply["type"] == "action_ok":
            seq += 1
            game.play(game_move)
        await asyncio.sleep(0.05)
    await restarting
    assert codes <= {"action_ok", "storage_unavailable"}, codes
    await ana.close()


def test_a_server_shutting_down_starting_up_or_cancelling_a_statement_is_an_outage() -> None:
    for error in (
        asyncpg.exceptions.CannotConnectNowError("the database system is starting up"),
        asyncpg.exceptions.AdminShutdownError("terminating connection"),
        asyncpg.exceptions.QueryCanceledError("canceling statement due to statement timeout"),
        asyncpg.exceptions.TooManyConnectionsError("too many clients"),
    ):
        wrapped = exc.DBAPIError("SELECT 1", None, error)
        assert is_outage(error) and is_outage(wrapped), error
    violation = asyncpg.exceptions.UniqueViolationError("duplicate key")
    assert not is_outage(exc.DBAPIError("INSERT", None, violation))
