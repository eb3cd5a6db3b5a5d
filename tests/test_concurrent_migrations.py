"""Replicas started at once on one PostgreSQL database: each migrates at start, one at a
time (an advisory lock), and all of them serve, on a fresh database and on one some
migrations behind."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text

from server.storage import database
from tests.server_process import ServerProcess

REPLICAS = 3
#: A revision with migrations after it that change tables (0007 and 0008 add columns and
#: tables, 0009 merges them).
BEHIND = "0006"
pytestmark = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)


def heads() -> list[str]:
    return list(ScriptDirectory.from_config(database.alembic_config()).get_heads())


async def revisions(url: str, data_dir: Path) -> list[str]:
    engine = database.create_engine(database.database_url(url, data_dir=data_dir))
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(text("SELECT version_num FROM alembic_version")))
            return sorted(row[0] for row in rows)
    finally:
        await engine.dispose()


async def migrated_to(url: str, data_dir: Path, revision: str) -> None:
    engine = database.create_engine(database.database_url(url, data_dir=data_dir))
    try:
        async with engine.begin() as connection:
            await connection.run_sync(
                lambda sync: command.upgrade(database.alembic_config(sync), revision)
            )
    finally:
        await engine.dispose()


async def test_migrations_started_at_once_on_a_fresh_database_all_succeed(
    database_url: str, tmp_path: Path
) -> None:
    migrations = [
        subprocess.Popen(
            [sys.executable, "-m", "server", "migrate", "--database-url", database_url,
             "--data-dir", str(tmp_path / f"migrate-{number}")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        for number in range(REPLICAS)
    ]
    outcomes = [await asyncio.to_thread(migration.communicate, None, 120)
                for migration in migrations]
    assert [migration.returncode for migration in migrations] == [0] * REPLICAS, outcomes
    assert await revisions(database_url, tmp_path) == heads()
    # One of them migrated; the others found nothing to do.
    ran = ["Running upgrade" in stderr for _, stderr in outcomes]
    assert ran.count(True) == 1, outcomes


@pytest.mark.parametrize("start", ["fresh", "migrations behind"])
async def test_replicas_started_at_once_all_migrate_and_serve(
    database_url: str, tmp_path: Path, start: str
) -> None:
    if start == "migrations behind":
        await migrated_to(database_url, tmp_path, BEHIND)
        assert await revisions(database_url, tmp_path) == [BEHIND]
    replicas = [
        ServerProcess(database_url, tmp_path / f"replica-{number}", log=tmp_path / f"{number}.log")
        for number in range(REPLICAS)
    ]
    try:
        await asyncio.gather(*(asyncio.to_thread(replica.start) for replica in replicas))
        for replica in replicas:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{replica.port}/healthz", timeout=10
            ) as reply:
                assert (reply.status, json.loads(reply.read())) == (200, {"status": "ok"})
    finally:
        for replica in replicas:
            await replica.stop()
    assert await revisions(database_url, tmp_path) == heads()
    for replica in replicas:
        assert replica.process is not None and replica.process.returncode == 0


async def test_a_migration_that_waits_for_a_held_table_gives_up_and_changes_nothing(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table held by a live transaction (a long query, a pg_dump) is waited for
    briefly: meanwhile every query of the live replicas on it queues behind the
    migration."""
    monkeypatch.setattr(database, "MIGRATION_LOCK_TIMEOUT_S", 0.2)
    await migrated_to(database_url, tmp_path, BEHIND)
    holder = database.create_engine(database.database_url(database_url, data_dir=tmp_path))
    engine = database.create_engine(database.database_url(database_url, data_dir=tmp_path))
    try:
        async with holder.connect() as holding:
            # 0007 adds a column to players: its ALTER TABLE waits for this reader.
            await holding.execute(text("LOCK TABLE players IN ACCESS SHARE MODE"))
            with pytest.raises(database.MigrationBlocked, match="waited 0.2 s for a table"):
                await database.migrate(engine)
            await holding.rollback()
        assert await revisions(database_url, tmp_path) == [BEHIND]
        await database.migrate(engine)
        assert await revisions(database_url, tmp_path) == heads()
    finally:
        await engine.dispose()
        await holder.dispose()
