"""Fixtures: a real PostgreSQL and Redis for the session, a real server per test."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from server.app import Server
from server.config import Settings
from server.storage.database import create_engine, migrate
from server.storage.database import database_url as sqlalchemy_url
from tests.client import Client
from tests.services import Postgres, Redis


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres | None]:
    if os.environ.get("TEST_DATABASE_URL"):
        yield None
        return
    cluster = Postgres()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if os.environ.get("TEST_REDIS_URL"):
        yield os.environ["TEST_REDIS_URL"]
        return
    server = Redis()
    yield server.url
    server.stop()


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database, on each backend in turn."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'gaps.sqlite3'}"
    cluster: Postgres | None = request.getfixturevalue("postgres")
    if cluster is None:
        return os.environ["TEST_DATABASE_URL"]
    return cluster.create_database()


@pytest.fixture
def config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """For client tests: a config directory of the test's own, no server from the
    environment, and the test's own working directory."""
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("GAPS_SERVER", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "config"


@pytest.fixture
async def migrated_engine(database_url: str, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """An engine on a fresh database with every migration applied, on each backend."""
    engine = create_engine(sqlalchemy_url(database_url, data_dir=tmp_path))
    await migrate(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
def settings(database_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    """The test server's settings; ``@pytest.mark.max_history_events(n)`` shortens its
    event histories, for resync tests."""
    history = request.node.get_closest_marker("max_history_events")
    return Settings(
        port=0,
        max_history_events=history.args[0] if history else Settings.max_history_events,
        database_url=database_url,
        data_dir=tmp_path,
        countdown_s=0,
        grace_s=1.0,
        tournament_countdown_s=0,
        tournament_break_s=0.1,
        quick_wait_s=0.3,
        log_level="WARNING",
    )


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[Server]:
    running = Server(settings)
    await running.start()
    yield running
    await running.close()


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
