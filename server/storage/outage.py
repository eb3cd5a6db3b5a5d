"""Telling a database outage from a bug, and asking whether the database answers."""

from __future__ import annotations

import asyncio

from asyncpg import (  # type: ignore[import-untyped]
    ConnectionDoesNotExistError,
    PostgresConnectionError,
)
from sqlalchemy import exc, text
from sqlalchemy.ext.asyncio import AsyncEngine

# Errors that say the database could not be reached or could not answer, as opposed to
# errors that say the request itself was wrong (a bug).
_OUTAGES = (
    exc.OperationalError,
    exc.InterfaceError,
    exc.TimeoutError,  # no pooled connection came free in time
    exc.DisconnectionError,
    PostgresConnectionError,
    ConnectionDoesNotExistError,
    ConnectionError,
    OSError,
    TimeoutError,
)


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` means the database is down or unreachable, now."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    return isinstance(error, _OUTAGES)


async def database_answers(engine: AsyncEngine, *, timeout_s: float) -> bool:
    """Whether the database answers a trivial query within ``timeout_s``."""
    try:
        async with asyncio.timeout(timeout_s):
            async with engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
    except Exception as error:
        if is_outage(error):
            return False
        raise
    return True
