"""server.storage.database: which database, its engine and its migrations, on real databases.

The ``database_url`` fixture (tests/conftest.py) is a fresh empty database on each backend in
turn: a real PostgreSQL started for the session, and an SQLite file.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import insert, inspect, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage import database
from server.storage.models import ActionRecord, Base, Match, MatchPlayer, Player

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TABLES = {"players", "matches", "match_players", "actions"}


# --- database_url ------------------------------------------------------------------------


def test_no_configured_url_means_sqlite_in_the_data_dir(tmp_path: Path) -> None:
    assert database.database_url(None, data_dir=tmp_path) == (
        f"sqlite+aiosqlite:///{tmp_path / 'gaps.sqlite3'}"
    )


def test_an_empty_configured_url_means_sqlite_in_the_data_dir(tmp_path: Path) -> None:
    assert database.database_url("", data_dir=tmp_path) == database.database_url(
        None, data_dir=tmp_path
    )


def test_a_relative_data_dir_gives_a_relative_sqlite_file() -> None:
    assert database.database_url(None, data_dir=Path("var")) == (
        "sqlite+aiosqlite:///var/gaps.sqlite3"
    )


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        ("postgres://gaps:secret@db:5432/gaps", "postgresql+asyncpg://gaps:secret@db:5432/gaps"),
        ("postgresql://gaps:secret@db/gaps", "postgresql+asyncpg://gaps:secret@db/gaps"),
        ("postgresql://gaps@127.0.0.1:6543/x", "postgresql+asyncpg://gaps@127.0.0.1:6543/x"),
        ("postgresql+asyncpg://gaps@db/gaps", "postgresql+asyncpg://gaps@db/gaps"),
    ],
)
def test_postgres_urls_get_the_asyncpg_driver(configured: str, expected: str) -> None:
    assert database.database_url(configured, data_dir=Path("unused")) == expected


def test_a_postgres_password_is_kept_and_stays_escaped() -> None:
    url = database.database_url("postgresql://gaps:p%40ss%2Fw@db/gaps", data_dir=Path("x"))
    assert url == "postgresql+asyncpg://gaps:p%40ss%2Fw@db/gaps"
    from sqlalchemy.engine import make_url

    assert make_url(url).password == "p@ss/w"


def test_a_plain_sqlite_url_gets_the_aiosqlite_driver() -> None:
    assert database.database_url("sqlite:///elsewhere/x.db", data_dir=Path("var")) == (
        "sqlite+aiosqlite:///elsewhere/x.db"
    )


def test_is_sqlite_tells_the_backends_apart(tmp_path: Path) -> None:
    assert database.is_sqlite(database.database_url(None, data_dir=tmp_path))
    assert database.is_sqlite("sqlite+aiosqlite:///x.db")
    assert not database.is_sqlite("postgresql+asyncpg://gaps@db/gaps")


# --- engine and migrations, on real databases --------------------------------------------


@pytest.fixture
async def engine(database_url: str, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    created = database.create_engine(database.database_url(database_url, data_dir=tmp_path))
    yield created
    await created.dispose()


async def table_names(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        return set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))


async def revision(engine: AsyncEngine) -> list[str]:
    async with engine.connect() as connection:
        rows = (await connection.execute(text("SELECT version_num FROM alembic_version"))).all()
    return [row[0] for row in rows]


async def test_migrate_creates_every_table_of_the_models_in_a_fresh_database(
    engine: AsyncEngine,
) -> None:
    assert not (await table_names(engine)) & TABLES
    await database.migrate(engine)
    names = await table_names(engine)
    assert TABLES <= names
    assert set(Base.metadata.tables) <= names
    assert "alembic_version" in names


async def test_the_migrated_columns_are_the_models_columns(engine: AsyncEngine) -> None:
    await database.migrate(engine)

    def columns(sync: object) -> dict[str, set[str]]:
        inspector = inspect(sync)
        return {name: {c["name"] for c in inspector.get_columns(name)}
                for name in inspector.get_table_names()}

    async with engine.connect() as connection:
        migrated = await connection.run_sync(columns)
    for name, table in Base.metadata.tables.items():
        assert migrated.get(name) == {column.name for column in table.columns}, name


def descending_indexes() -> set[str]:
    """The models' indexes with a column sorted DESC."""
    return {
        index.name
        for table in Base.metadata.tables.values()
        for index in table.indexes
        if index.name and any(" DESC" in str(part) for part in index.expressions)
    }


# SQLite cannot reflect an index on an expression (lower(name)), so autogenerate skips it
# there, saying so; test_player_names_are_unique_in_any_case checks it on both backends.
@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based")
async def test_autogenerate_finds_nothing_the_migrations_missed(
    engine: AsyncEngine, database_url: str
) -> None:
    await database.migrate(engine)
    async with engine.connect() as connection:
        differences = await connection.run_sync(
            lambda sync: compare_metadata(MigrationContext.configure(sync), Base.metadata)
        )
    found = sorted(
        (d[0], d[1].name) if isinstance(d, tuple) else ("changed", repr(d)) for d in differences
    )
    if database_url.startswith("postgresql"):
        assert found == []
    else:
        # SQLite's reflection drops an index column's DESC, so autogenerate reports each
        # such index as removed and added again, and nothing else.
        assert found == sorted(
            (kind, name) for name in descending_indexes() for kind in ("add_index", "remove_index")
        )


async def test_migrating_again_from_any_engine_changes_nothing_and_keeps_the_data(
    database_url: str, tmp_path: Path, engine: AsyncEngine
) -> None:
    await database.migrate(engine)
    first_revision = await revision(engine)
    assert len(first_revision) == 1
    async with engine.begin() as connection:
        await connection.execute(insert(Player).values(name="ana", token_hash="a" * 64,
                                                       created_at=NOW))
    await database.migrate(engine)
    other = database.create_engine(database.database_url(database_url, data_dir=tmp_path))
    try:
        await database.migrate(other)
        assert await revision(other) == first_revision
    finally:
        await other.dispose()
    assert await revision(engine) == first_revision
    async with engine.connect() as connection:
        names = (await connection.execute(select(Player.name))).scalars().all()
    assert names == ["ana"]


async def test_a_database_a_newer_release_migrated_is_served_as_it_is(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """An older replica beside a newer one (a rolling upgrade, a roll-back) finds the
    database at a revision it does not know: it leaves it alone, and says so."""
    await database.migrate(engine)
    async with engine.begin() as connection:
        await connection.execute(text("UPDATE alembic_version SET version_num = '0999'"))
    with caplog.at_level(logging.WARNING, logger="gaps.storage"):
        await database.migrate(engine)
    assert await revision(engine) == ["0999"]
    (record,) = [r for r in caplog.records if r.name == "gaps.storage"]
    assert "a revision this release does not know" in record.getMessage()
    assert record.revision == ["0999"]  # type: ignore[attr-defined]


async def test_player_names_and_token_hashes_are_unique(engine: AsyncEngine) -> None:
    await database.migrate(engine)
    async with engine.begin() as connection:
        await connection.execute(insert(Player).values(name="ana", token_hash="a" * 64,
                                                       created_at=NOW))
    for values in ({"name": "ana", "token_hash": "b" * 64},
                   {"name": "bob", "token_hash": "a" * 64}):
        with pytest.raises(IntegrityError):
            async with engine.begin() as connection:
                await connection.execute(insert(Player).values(created_at=NOW, **values))


async def test_player_names_are_unique_in_any_case(engine: AsyncEngine) -> None:
    await database.migrate(engine)
    async with engine.begin() as connection:
        await connection.execute(insert(Player).values(name="ana", token_hash="a" * 64,
                                                       created_at=NOW))
    for index, name in enumerate(["Ana", "ANA", "aNa"]):
        with pytest.raises(IntegrityError):
            async with engine.begin() as connection:
                await connection.execute(insert(Player).values(
                    name=name, token_hash=str(index) * 64, created_at=NOW))


async def migrate_to(engine: AsyncEngine, revision: str) -> None:
    async with engine.begin() as connection:
        await connection.run_sync(
            lambda sync: command.upgrade(database.alembic_config(sync), revision)
        )


async def test_migration_0003_renames_the_later_players_of_a_name_taken_in_another_case(
    engine: AsyncEngine,
) -> None:
    await migrate_to(engine, "0002")
    before = {1: "ana", 2: "Ana", 3: "ana-2", 4: "ANA", 5: "bob", 6: "x" * 24, 7: "X" * 24}
    async with engine.begin() as connection:
        for player_id, name in before.items():
            await connection.execute(insert(Player).values(
                id=player_id, name=name, token_hash=str(player_id) * 64, created_at=NOW))
    await database.migrate(engine)
    async with engine.connect() as connection:
        after = dict((await connection.execute(select(Player.id, Player.name))).all())
        hashes = dict((await connection.execute(select(Player.id, Player.token_hash))).all())
    # The oldest of each name keeps it; the others get the first free numbered name.
    assert after == {1: "ana", 2: "Ana-3", 3: "ana-2", 4: "ANA-4", 5: "bob", 6: "x" * 24,
                     7: "X" * 22 + "-2"}
    assert hashes == {player_id: str(player_id) * 64 for player_id in before}
    assert len({name.lower() for name in after.values()}) == len(after)


async def seed_rows(engine: AsyncEngine) -> tuple[int, int]:
    async with engine.begin() as connection:
        player_id = (await connection.execute(
            insert(Player).values(name="ana", token_hash="a" * 64, created_at=NOW)
            .returning(Player.id))).scalar_one()
        match_id = (await connection.execute(
            insert(Match).values(
                code="K7QX2M", ruleset="classic", max_players=2, time_limit_s=600,
                win_by="time", public=False, rated=True, host_id=player_id, status="lobby",
                seed=b"\x00" * 10, commitment="c" * 64, created_at=NOW,
            ).returning(Match.id))).scalar_one()
    return player_id, match_id


async def test_foreign_keys_are_enforced_on_every_backend(engine: AsyncEngine) -> None:
    await database.migrate(engine)
    player_id, match_id = await seed_rows(engine)
    with pytest.raises(IntegrityError):
        async with engine.begin() as connection:
            await connection.execute(insert(MatchPlayer).values(
                match_id=match_id + 1000, player_id=player_id, joined_at=NOW, score=0,
                placed=0, redeals=0, moves=0, won=False))
    with pytest.raises(IntegrityError):
        async with engine.begin() as connection:
            await connection.execute(insert(ActionRecord).values(
                match_id=match_id, player_id=player_id + 1000, seq=1, action="8C",
                kind="move", t_ms=0, score=0))


async def test_a_write_alone_commits_as_it_runs_on_postgres_and_with_the_block_on_sqlite(
    engine: AsyncEngine,
) -> None:
    writes = database.Database.of(engine)
    async with writes.write() as connection:
        await connection.execute(text("CREATE TABLE notes (body TEXT)"))

    async def seen() -> int:
        async with writes.read() as connection:
            return len((await connection.execute(text("SELECT body FROM notes"))).all())

    async with writes.write_alone() as connection:
        await connection.execute(text("INSERT INTO notes VALUES ('one')"))
        # PostgreSQL: autocommit, no transaction around it; SQLite: the writer's transaction.
        assert await seen() == (0 if writes.is_sqlite else 1)
    assert await seen() == 1


async def test_an_action_seq_is_unique_per_match_and_player(engine: AsyncEngine) -> None:
    await database.migrate(engine)
    player_id, match_id = await seed_rows(engine)
    row = {"match_id": match_id, "player_id": player_id, "seq": 1, "action": "8C",
           "kind": "move", "t_ms": 0, "score": 0}
    async with engine.begin() as connection:
        await connection.execute(insert(ActionRecord).values(**row))
    with pytest.raises(IntegrityError):
        async with engine.begin() as connection:
            await connection.execute(insert(ActionRecord).values(**row))


async def test_a_stored_match_keeps_its_time_instant_and_its_seed_bytes(
    engine: AsyncEngine,
) -> None:
    await database.migrate(engine)
    await seed_rows(engine)
    async with engine.connect() as connection:
        created_at, seed = (await connection.execute(select(Match.created_at, Match.seed))).one()
    if created_at.tzinfo is None:  # SQLite keeps no zone: every time is stored in UTC
        created_at = created_at.replace(tzinfo=UTC)
    assert created_at == NOW
    assert bytes(seed) == b"\x00" * 10


async def test_sqlite_creates_its_data_dir_and_turns_on_foreign_keys_and_wal(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "deep" / "data"
    engine = database.create_engine(database.database_url(None, data_dir=data_dir))
    try:
        assert data_dir.is_dir()
        async with engine.connect() as connection:
            foreign_keys = (await connection.execute(text("PRAGMA foreign_keys"))).scalar_one()
            journal_mode = (await connection.execute(text("PRAGMA journal_mode"))).scalar_one()
        assert foreign_keys == 1
        assert journal_mode == "wal"
        await database.migrate(engine)
        assert (data_dir / "gaps.sqlite3").is_file()
    finally:
        await engine.dispose()


async def test_an_in_memory_sqlite_engine_needs_no_directory() -> None:
    engine = database.create_engine("sqlite+aiosqlite:///:memory:")
    try:
        async with engine.connect() as connection:
            assert (await connection.execute(text("SELECT 1"))).scalar_one() == 1
    finally:
        await engine.dispose()


# --- where the migrations are ------------------------------------------------------------

REPOSITORY = Path(__file__).resolve().parents[1]


def test_the_alembic_config_points_at_the_migrations() -> None:
    config = database.alembic_config()
    location = Path(config.get_main_option("script_location") or "")
    assert location == database.migrations_dir()
    assert (location / "env.py").is_file()
    assert (location / "script.py.mako").is_file()
    assert any((location / "versions").glob("*.py"))


def test_in_a_checkout_the_migrations_package_is_the_top_level_migrations_directory() -> None:
    # The editable install maps server.storage.migrations onto migrations/, as the wheel
    # installs it (scripts/check-wheel tries the wheel).
    assert database.migrations_dir() == REPOSITORY / "migrations"


def test_the_alembic_command_line_sees_the_servers_migrations() -> None:
    by_hand = ScriptDirectory.from_config(Config(REPOSITORY / "alembic.ini"))
    server = ScriptDirectory.from_config(database.alembic_config())
    assert Path(by_hand.dir).resolve() == Path(server.dir).resolve()
    assert by_hand.get_heads() == server.get_heads()
    assert len(server.get_heads()) == 1


async def test_the_alembic_command_line_migrates_the_database_url(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    config = Config(REPOSITORY / "alembic.ini")
    # env.py runs its own event loop, so not on this one's thread.
    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(command.upgrade, config, "head").result()
    engine = database.create_engine(database.database_url(database_url, data_dir=tmp_path))
    try:
        assert set(Base.metadata.tables) <= await table_names(engine)
        assert await revision(engine) == list(ScriptDirectory.from_config(config).get_heads())
    finally:
        await engine.dispose()
