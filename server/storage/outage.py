"""Telling a database outage from a bug, asking whether the database answers, and
storing what must not be lost until the database takes it."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from asyncpg import (  # type: ignore[import-untyped]
    ConnectionDoesNotExistError,
    PostgresConnectionError,
)
from sqlalchemy import exc, text
from sqlalchemy.ext.asyncio import AsyncEngine

from server.outages import Outage

log = logging.getLogger("gaps.storage")
T = TypeVar("T")

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


# SQLite reports bugs ("no such table", a syntax error) as OperationalError too: of its
# errors, only these say the file is busy or cannot be read or written now.
_SQLITE_OUTAGES = ("database is locked", "database table is locked", "disk i/o error",
                   "unable to open database", "database or disk is full")


#: Classes of PostgreSQL's SQLSTATEs that say the server cannot serve now, whatever the
#: request: 08 connection exceptions, 53 insufficient resources (too many connections),
#: 57 operator intervention (shutting down, starting up: 57P01-57P03, a statement cancelled
#: by its deadline: 57014), 58 system errors (I/O).
_OUTAGE_SQLSTATE_CLASSES: Final = ("08", "53", "57", "58")


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` means the database is down, busy, stalled or unreachable, now."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    orig = getattr(error, "orig", None)
    if isinstance(orig, sqlite3.Error):
        text = str(orig).lower()
        return any(outage in text for outage in _SQLITE_OUTAGES)
    for cause in (error, orig, getattr(orig, "__cause__", None)):
        sqlstate = getattr(cause, "sqlstate", None)
        if isinstance(sqlstate, str) and sqlstate[:2] in _OUTAGE_SQLSTATE_CLASSES:
            return True
    return isinstance(error, _OUTAGES) or isinstance(orig, _OUTAGES)


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


#: SQLSTATEs of a transaction the database gave up so that another could go on: the same
#: transaction, run again, succeeds.
_RETRY_SQLSTATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock


def is_transient(error: BaseException) -> bool:
    """Whether running the failed transaction again may succeed: an outage, a deadlock,
    a serialization failure (SQLite's "database is locked" is an outage)."""
    if is_outage(error):
        return True
    orig = getattr(error, "orig", None)
    return getattr(orig, "sqlstate", None) in _RETRY_SQLSTATES


async def until_stored(
    write: Callable[[], Awaitable[T]],
    *,
    what: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    first_delay_s: float = 0.05,
    max_delay_s: float = 2.0,
    outage: Outage | None = None,
) -> T:
    """Run ``write`` (one transaction) until it succeeds: after a transient failure it
    waits, twice as long each time up to ``max_delay_s``, and runs it again. For writes
    that must not be lost, like the end of a game; ``write`` must be idempotent, since a
    commit whose answer was lost is run again. Other errors (bugs) are raised. Each
    failure is logged at DEBUG and told to ``outage``, which logs the outage once each
    way (``server.outages``)."""
    delay_s = first_delay_s
    while True:
        try:
            stored = await write()
        except Exception as error:
            if not is_transient(error):
                raise
            if outage is not None and is_outage(error):  # not a deadlock: the database is up
                outage.failed(what, error)
            log.debug(
                "storing failed; retrying",
                extra={"what": what, "error": repr(error)[:300], "retry_in_s": delay_s},
            )
        else:
            if outage is not None:
                outage.recovered()
            return stored
        await sleep(delay_s)
        delay_s = min(max_delay_s, delay_s * 2)
