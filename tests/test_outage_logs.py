"""An outage is logged once when it begins and once when it ends (server/outages.py), not
once a retry: an 8 s outage of Redis, and one of PostgreSQL, in the middle of a race.

The 8 s pass on the server's fake clock (the durations logged are the clock's); the
retries are real, a few of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace

import pytest
from sqlalchemy import make_url

from gaps import Game
from server.app import Server
from server.config import Settings
from server.outages import Outage
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.proxy import TcpProxy
from tests.races import start_race
from tests.services import Redis

OUTAGE_S = 8.0


@pytest.fixture
def own_redis() -> Iterator[Redis]:
    """A Redis of the test's own, to stop and start again."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = Redis()
    yield server
    server.stop()


async def until(condition: Callable[[], bool], *, timeout_s: float = 20) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)


async def players(server: Server) -> tuple[Client, Client, str]:
    url = f"ws://127.0.0.1:{server.port}"
    ana, bob = await Client.connect(url), await Client.connect(url)
    await ana.register("ana")
    await bob.register("bob")
    return ana, bob, await start_race([ana, bob])


async def legal_move(client: Client, code: str) -> str:
    started = await client.event("started", match=code)
    game = Game.from_layout("\n".join(started["grid"]), "classic")
    return str(game.legal_moves()[0])


def loud(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """What an operator reading warnings sees."""
    return [record for record in caplog.records if record.levelno >= logging.WARNING]


#: What else an outage of the database changes, said once: this process's lock on the
#: cluster's lead went with its connection.
CONSEQUENCES = frozenset({"leader lock lost", "no longer leading the cluster"})


def said_once_each_way(caplog: pytest.LogCaptureFixture, outage: Outage) -> None:
    """The outage's two lines, no line a retry, no traceback; besides them, only what the
    outage changed, once."""
    part = outage.part
    lines = [r for r in loud(caplog) if r.name == "gaps.outage"]
    assert [r.getMessage() for r in lines] == [f"{part} outage began", f"{part} outage ended"]
    others = [r.getMessage() for r in loud(caplog) if r.name != "gaps.outage"]
    assert set(others) <= CONSEQUENCES and len(others) == len(set(others)), others
    began, ended = lines
    assert began.outage == part and began.error  # type: ignore[attr-defined]
    assert ended.duration_s == OUTAGE_S  # type: ignore[attr-defined]
    assert ended.failures == outage.failures > 2  # type: ignore[attr-defined]
    assert not any(record.exc_info for record in caplog.records)
    assert outage.up and outage.outages == 1 and outage.down_s == OUTAGE_S


async def test_a_redis_outage_is_logged_when_it_begins_and_when_it_ends(
    settings: Settings, clock: FakeClock, own_redis: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    server = Server(replace(settings, redis_url=own_redis.url), clock=clock)
    await server.start()
    try:
        ana, bob, code = await players(server)
        cyd = await Client.connect(f"ws://127.0.0.1:{server.port}")
        await cyd.register("cyd")
        caplog.set_level(logging.DEBUG)
        caplog.clear()
        outage = server.broker_outage
        own_redis.halt()
        await until(lambda: not outage.up)
        # Meanwhile: actions whose events reach no other replica (this replica's own
        # connections still follow its matches: a spectator joins), and the broker's own
        # attempts to reconnect, each failing.
        assert (await ana.act(code, await legal_move(ana, code)))["type"] == "action_ok"
        watching = await cyd.request("join_match", code=code, role="spectator")
        assert watching["type"] == "joined"
        await until(lambda: outage.failures >= 6)
        clock.advance(OUTAGE_S)
        own_redis.resume()
        await until(lambda: outage.up)
        said_once_each_way(caplog, outage)
        debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
        assert "redis out of reach" in debug and "event not published" in debug
        for client in (ana, bob, cyd):
            await client.close()
    finally:
        await server.close()


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_a_database_outage_is_logged_when_it_begins_and_when_it_ends(
    settings: Settings, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    async with database_behind_proxy(settings, clock) as (server, proxy):
        ana, bob, code = await players(server)
        move = await legal_move(ana, code)
        caplog.set_level(logging.DEBUG)
        caplog.clear()
        await proxy.cut()
        for _ in range(3):  # a player sends the action again and again
            refused = await ana.act(code, move, seq=1)
            assert refused["code"] == "storage_unavailable", refused
        clock.advance(OUTAGE_S)
        await proxy.restore()
        assert (await ana.act(code, move, seq=1))["type"] == "action_ok"
        said_once_each_way(caplog, server.storage_outage)
        for client in (ana, bob):
            await client.close()


@contextlib.asynccontextmanager
async def database_behind_proxy(
    settings: Settings, clock: FakeClock
) -> AsyncIterator[tuple[Server, TcpProxy]]:
    """A server on the fake clock whose PostgreSQL is reached through a proxy to cut."""
    assert settings.database_url is not None
    url = make_url(settings.database_url)
    assert url.host is not None and url.port is not None
    proxy = TcpProxy(url.host, url.port)
    await proxy.start()
    proxied = url.set(port=proxy.port).render_as_string(hide_password=False)
    server = Server(replace(settings, database_url=proxied), clock=clock)
    await server.start()
    try:
        yield server, proxy
    finally:
        await server.close()
        await proxy.close()


# -- the tracker alone ------------------------------------------------------------------


def test_failures_during_an_outage_are_counted_and_said_only_at_its_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    outage = Outage("storage", clock=clock.monotonic)
    caplog.set_level(logging.DEBUG, logger="gaps.outage")
    outage.recovered()  # up already: nothing to say
    for attempt in range(5):
        outage.failed(f"attempt {attempt}", ConnectionRefusedError("refused"))
        clock.advance(1.5)
    assert not outage.up and outage.down_s == 7.5
    outage.recovered()
    outage.recovered()
    outage.failed("again", "no answer")
    clock.advance(0.5)
    outage.recovered()
    said = [(r.getMessage(), r.__dict__.get("failures")) for r in caplog.records]
    assert said == [
        ("storage outage began", None), ("storage outage ended", 5),
        ("storage outage began", None), ("storage outage ended", 1),
    ]  # fmt: skip
    began = caplog.records[0]
    assert began.what == "attempt 0"  # type: ignore[attr-defined]
    assert began.error == "ConnectionRefusedError('refused')"  # type: ignore[attr-defined]
    assert caplog.records[1].duration_s == 7.5  # type: ignore[attr-defined]
    assert (outage.outages, outage.failures, outage.seconds_down) == (2, 6, 8.0)
