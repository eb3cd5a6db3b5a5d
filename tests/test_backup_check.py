"""scripts/backup-check on a live database: a server keeps serving while its database is
dumped, restored into a new one and the copy's replays verified."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from server.storage import database
from tests.client import Client
from tests.server_process import ServerProcess

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "backup-check"
ON_POSTGRES = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)


async def play(url: str, name: str, seed: str, actions: list[str]) -> str:
    """A one-player match of ``name`` on ``seed``, ``actions`` then stop; its code."""
    client = await Client.connect(url)
    try:
        await client.register(name)
        created = await client.ok("create_match", max_players=1, countdown_s=0, seed=seed)
        code: str = created["match"]["code"]
        await client.ok("ready", code=code)
        await client.event("started", match=code)
        for action in [*actions, "stop"]:
            assert (await client.act(code, action))["type"] == "action_ok"
        await client.event("match_ended", match=code)
        return code
    finally:
        await client.close()


def backup_check(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), url], capture_output=True, text=True, timeout=300
    )


async def copies_left(url: str, tmp_path: Path) -> list[str]:
    engine = database.create_engine(database.database_url(url, data_dir=tmp_path))
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text(
                "SELECT datname FROM pg_database WHERE datname LIKE '%restore_check%'"
            ))
            return [row[0] for row in rows]
    finally:
        await engine.dispose()


@pytest.fixture
async def live(database_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    server = ServerProcess(database_url, tmp_path / "server")
    server.start()
    yield server
    await server.stop()


@ON_POSTGRES
async def test_a_live_databases_backup_restores_with_every_replay(
    live: ServerProcess, database_url: str, tmp_path: Path
) -> None:
    await play(live.url, "ana", "AAAA-BBBB-CCCC-DDDD", ["3H", "2C>4", "3C"])
    await play(live.url, "bob", "JX5N-OFBH-UCXL-H7XJ", [])
    checked = await asyncio.to_thread(backup_check, database_url)
    assert checked.returncode == 0, checked.stderr
    assert "2 finished matches, every replay verified and equal to the live one" in (
        checked.stdout
    )
    assert "backup-check: the backup restores and checks out" in checked.stdout
    assert await copies_left(database_url, tmp_path) == []


@ON_POSTGRES
async def test_a_replay_that_does_not_check_out_fails_the_check(
    live: ServerProcess, database_url: str, tmp_path: Path
) -> None:
    code = await play(live.url, "ana", "AAAA-BBBB-CCCC-DDDD", ["3H", "2C>4", "3C"])
    engine = database.create_engine(database.database_url(database_url, data_dir=tmp_path))
    try:
        async with engine.begin() as connection:  # a stored score that its move never gave
            await connection.execute(text(
                "UPDATE actions SET score = score + 1 WHERE seq = 2"
            ))
    finally:
        await engine.dispose()
    checked = await asyncio.to_thread(backup_check, database_url)
    assert checked.returncode == 1
    assert "FAILED: 1 of 1 finished matches do not check out" in checked.stderr
    assert f"{code}: " in checked.stderr
    assert await copies_left(database_url, tmp_path) == []


def test_sqlite_is_refused_with_what_to_do_instead() -> None:
    refused = backup_check("sqlite:///var/gaps.sqlite3")
    assert refused.returncode == 2
    assert "PostgreSQL only" in refused.stderr
