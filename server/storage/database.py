"""The database: which one (Postgres or the embedded SQLite file), its engine, migrations."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

# The repository's top-level migrations/ directory, which pyproject.toml installs as this
# package: found the same way in an editable install and in a wheel.
MIGRATIONS_PACKAGE = "server.storage.migrations"


def database_url(configured: str | None, *, data_dir: Path) -> str:
    """The SQLAlchemy URL: ``configured`` (postgres:// forms get asyncpg), or else the
    embedded SQLite file in ``data_dir``."""
    if not configured:
        return f"sqlite+aiosqlite:///{data_dir / 'gaps.sqlite3'}"
    url = make_url(configured)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+asyncpg")
    elif url.drivername == "sqlite":
        url = url.set(drivername="sqlite+aiosqlite")
    return url.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def migrations_dir() -> Path:
    """The directory of the alembic scripts (env.py, versions/)."""
    location = resources.files(MIGRATIONS_PACKAGE)
    if not isinstance(location, Path):
        # alembic reads its scripts from a directory: a zipped install cannot migrate.
        raise RuntimeError(f"{MIGRATIONS_PACKAGE} is not a directory on disk: {location!r}")
    return location


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def migrate(engine: AsyncEngine) -> None:
    """Bring the database to the newest migration."""
    async with engine.begin() as connection:
        await connection.run_sync(lambda sync: command.upgrade(alembic_config(sync), "head"))
