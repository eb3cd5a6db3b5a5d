"""Fixtures: a real PostgreSQL and Redis for the session, a real server per test."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Final

import asyncpg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from server.app import Server
from server.config import Limits, Settings
from server.storage.database import create_engine, migrate
from server.storage.database import database_url as sqlalchemy_url
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.services import Postgres, Redis


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database, on which each test gets a
    database of its own: TEST_DATABASE_URL's server, or else a cluster for the session."""
    if os.environ.get("TEST_DATABASE_URL"):
        yield os.environ["TEST_DATABASE_URL"]
        _close_maintenance()
        return
    cluster = Postgres()
    yield cluster.url()
    _close_maintenance()
    cluster.stop()


class _Maintenance:
    """Statements on PostgreSQL maintenance databases, run by a thread with an event loop
    of its own (the tests' event loop stays the only one of the main thread), through one
    connection per database kept for the session: a new thread, loop and connection for
    each statement cost more than most statements (two for each test on PostgreSQL)."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="postgres-maintenance", daemon=True
        )
        self._thread.start()
        self._connections: dict[str, asyncpg.Connection] = {}

    def run(self, url: str, statement: str) -> None:
        asyncio.run_coroutine_threadsafe(self._execute(url, statement), self._loop).result()

    async def _execute(self, url: str, statement: str) -> None:
        connection = self._connections.get(url)
        if connection is not None and not connection.is_closed():
            try:
                await connection.execute(statement)
                return
            except (OSError, asyncpg.ConnectionDoesNotExistError, asyncpg.InterfaceError):
                pass  # the connection was lost (the server restarted): a new one
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._connections[url] = connection = await asyncpg.connect(dsn)
        await connection.execute(statement)

    def close(self) -> None:
        async def close_all() -> None:
            for connection in self._connections.values():
                connection.terminate()

        asyncio.run_coroutine_threadsafe(close_all(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


_maintenance: _Maintenance | None = None


def _on_postgres(url: str, statement: str) -> None:
    """Runs ``statement`` on the database at ``url`` (see :class:`_Maintenance`)."""
    global _maintenance
    if _maintenance is None:
        _maintenance = _Maintenance()
    _maintenance.run(url, statement)


def _close_maintenance() -> None:
    global _maintenance
    if _maintenance is not None:
        _maintenance.close()
        _maintenance = None


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if os.environ.get("TEST_REDIS_URL"):
        yield os.environ["TEST_REDIS_URL"]
        return
    server = Redis()
    yield server.url
    server.stop()


def _migrate(url: str, data_dir: Path) -> None:
    """Applies every migration to the database at ``url``, in a thread (as
    :func:`_on_postgres` does)."""

    async def run() -> None:
        engine = create_engine(sqlalchemy_url(url, data_dir=data_dir))
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(asyncio.run, run()).result()


def _database_url(server: str, name: str) -> str:
    return make_url(server).set(drivername="postgresql", database=name).render_as_string(
        hide_password=False
    )


@pytest.fixture(scope="session")
def postgres_template(postgres: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The name of a PostgreSQL database with every migration applied, made once for the
    session: each test's migrated database is a copy of it (``CREATE DATABASE ...
    TEMPLATE``), a tenth of the time of migrating one."""
    name = f"gaps_template_{secrets.token_hex(6)}"
    _on_postgres(postgres, f'CREATE DATABASE "{name}"')
    _migrate(_database_url(postgres, name), tmp_path_factory.mktemp("postgres-template"))
    yield name
    _on_postgres(postgres, f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file with every migration applied, made once for the session: each
    test's migrated database is a copy of it."""
    directory = tmp_path_factory.mktemp("sqlite-template")
    path = directory / "gaps.sqlite3"
    _migrate(f"sqlite:///{path}", directory)
    # Everything in the file itself, none in a write-ahead log beside it: a copy of the
    # file is the whole database.
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


#: The backends a test runs on: both where the storage is what it checks (its module
#: says ``pytestmark = pytest.mark.both_backends``); elsewhere the embedded default, where
#: the rules of the server are the same (a test may ask for PostgreSQL by parametrizing
#: ``database_url`` itself, as the cluster's tests do).
BOTH_BACKENDS: Final = ("postgres", "sqlite")
EMBEDDED: Final = ("sqlite",)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "database_url" not in metafunc.fixturenames:
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        if "database_url" in marker.args[0]:
            return  # the test chose its backend
    both = metafunc.definition.get_closest_marker("both_backends") is not None
    metafunc.parametrize("database_url", BOTH_BACKENDS if both else EMBEDDED, indirect=True)


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database, on the backend the test runs on (``pytest_generate_tests``):
    empty, or, for a test that uses ``migrated_database_url`` (the test servers,
    ``migrated_engine``), a copy of the session's migrated template. A PostgreSQL one is
    dropped after the test."""
    migrated = "migrated_database_url" in request.fixturenames
    if request.param == "sqlite":
        path = tmp_path / "gaps.sqlite3"
        if migrated:
            shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    server: str = request.getfixturevalue("postgres")
    name = f"gaps_test_{secrets.token_hex(6)}"
    template = f' TEMPLATE "{request.getfixturevalue("postgres_template")}"' if migrated else ""
    _on_postgres(server, f'CREATE DATABASE "{name}"{template}')
    yield _database_url(server, name)
    # FORCE: a connection the test left open must not keep its database alive.
    _on_postgres(server, f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def migrated_database_url(database_url: str) -> str:
    """``database_url`` with every migration applied (see ``database_url``): a server
    started on it finds nothing to migrate. The servers of ``gaps-server`` processes
    (tests/server_process.py) and tests/test_database.py start from empty databases."""
    return database_url


@pytest.fixture
def config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """For client tests: a config directory of the test's own, no server from the
    environment, and the test's own working directory."""
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("GAPS_SERVER", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "config"


@pytest.fixture
async def migrated_engine(
    migrated_database_url: str, tmp_path: Path
) -> AsyncIterator[AsyncEngine]:
    """An engine on a fresh database with every migration applied, on each backend."""
    engine = create_engine(sqlalchemy_url(migrated_database_url, data_dir=tmp_path))
    yield engine
    await engine.dispose()


#: The test servers' limits: the tests register, create and read far faster than any
#: person, all from one address; ``@pytest.mark.limits(...)`` sets tighter ones.
GENEROUS_LIMITS = Limits(
    requests_per_s=10_000,
    request_burst=10_000,
    costly_requests_per_min=1_000_000,
    costly_request_burst=10_000,
    costly_requests_per_min_per_ip=1_000_000,
    costly_request_burst_per_ip=10_000,
    max_connections_per_ip=10_000,
    max_open_matches_per_player=1_000,
)


@pytest.fixture
def settings(
    migrated_database_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Settings:
    """The test server's settings; ``@pytest.mark.max_history_events(n)`` shortens its
    event histories, for resync tests. The server computes no par (it would keep a
    process solving after every test's match) unless ``@pytest.mark.par(**fields)`` sets
    the par settings."""
    history = request.node.get_closest_marker("max_history_events")
    par = request.node.get_closest_marker("par")
    limits = request.node.get_closest_marker("limits")
    grace = request.node.get_closest_marker("grace_s")
    pause = request.node.get_closest_marker("tournament_break_s")
    return Settings(
        port=0,
        max_history_events=history.args[0] if history else Settings.max_history_events,
        database_url=migrated_database_url,
        data_dir=tmp_path,
        countdown_s=0,
        grace_s=grace.args[0] if grace else 1.0,
        tournament_countdown_s=0,
        tournament_break_s=pause.args[0] if pause else 0,
        quick_wait_s=0,
        log_level="WARNING",
        limits=replace(GENEROUS_LIMITS, **(limits.kwargs if limits else {})),
        **({"par_workers": 0} | (par.kwargs if par else {})),
    )


@pytest.fixture
def clock() -> FakeClock:
    """The test server's clock: time passes only when the test advances it."""
    return FakeClock()


@pytest.fixture
async def server(settings: Settings, clock: FakeClock) -> AsyncIterator[Server]:
    running = Server(settings, clock=clock)
    await running.start()
    yield running
    await running.close()


@pytest.fixture
async def pair(
    settings: Settings, redis_url: str, clock: FakeClock
) -> AsyncIterator[tuple[Server, Server]]:
    """Two processes of one cluster (two servers on one PostgreSQL and Redis, and one
    fake clock), the first leading it; leases and leadership are checked when a test says
    (``keep_leases``, ``leadership.campaign``), never by themselves."""
    clustered = replace(settings, redis_url=redis_url, lease_s=7200.0, lease_renew_s=3600.0)
    first, second = Server(clustered, clock=clock), Server(clustered, clock=clock)
    await first.start()
    await second.start()
    yield first, second
    for server in (second, first):
        await server.close()


@pytest.fixture
def ws_url(server: Server) -> str:
    return f"ws://127.0.0.1:{server.port}"


@pytest.fixture
async def connect(ws_url: str) -> AsyncIterator[object]:
    """``await connect()`` opens a new client; all are closed after the test."""
    clients: list[Client] = []

    async def open_client() -> Client:
        client = await Client.connect(ws_url)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.close()
