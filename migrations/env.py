"""Alembic environment. The server runs migrations on its own connection (see
server/storage/database.py); the ``alembic`` command line uses DATABASE_URL."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from alembic import context
from sqlalchemy.engine import Connection

from server.storage.database import create_engine, database_url, hold_migration_lock
from server.storage.models import Base

target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    # Before alembic reads the revision: one migration at a time (replicas start at once).
    hold_migration_lock(connection)
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things: batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_from_environment() -> None:
    url = database_url(
        os.environ.get("DATABASE_URL"), data_dir=Path(os.environ.get("GAPS_DATA_DIR", "var"))
    )
    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(run_on)
    await engine.dispose()


given = context.config.attributes.get("connection")
if given is not None:
    run_on(given)
else:
    asyncio.run(run_from_environment())
