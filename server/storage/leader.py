"""The leader lock: which process of a cluster runs its singletons (tournaments, quick match).

A PostgreSQL advisory lock held by one connection of the leader. Whoever takes it first
leads; it is let go when the leader releases it, or when its connection ends, which
PostgreSQL notices when the process dies or the network drops (the host's TCP
keepalive). A leader paused (SIGSTOP) keeps the lock and its singletons wait with it;
nothing else is stalled, since every match has a lease of its own.

Who holds the lock is read from ``pg_locks``: the holding connection's
``application_name`` is the leader's process name.
"""

from __future__ import annotations

import logging
from typing import Final

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.database import Database

log = logging.getLogger("gaps.storage")

#: The advisory lock's key: any number no other user of the database takes.
LEADER_LOCK_KEY: Final = 0x6A7053


class LeaderLock:
    """This process's attempt at leading: ``owner`` is its name (at most 63 bytes, the
    longest ``application_name`` PostgreSQL keeps)."""

    def __init__(self, database: Database, *, owner: str) -> None:
        if database.is_sqlite:
            raise ValueError("the leader lock needs PostgreSQL: SQLite is one process's")
        if len(owner.encode()) > 63:
            raise ValueError(f"process name {owner!r} is longer than 63 bytes")
        self._database = database
        self.owner = owner
        self._connection: AsyncConnection | None = None

    async def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; whether this process holds it now."""
        if self._connection is not None:
            return await self.held()
        connection = await self._database.engine.connect()
        try:
            await connection.execute(
                text("SELECT set_config('application_name', :name, false)"), {"name": self.owner}
            )
            taken = (
                await connection.execute(
                    text("SELECT pg_try_advisory_lock(:key)"), {"key": LEADER_LOCK_KEY}
                )
            ).scalar_one()
            await connection.commit()
        except BaseException:
            await self._let_go(connection)
            raise
        if not taken:
            await self._let_go(connection)
            return False
        self._connection = connection
        return True

    async def held(self) -> bool:
        """Whether the connection that holds the lock still answers: if not, the lock is
        given up here (PostgreSQL frees it when it sees the connection gone)."""
        connection = self._connection
        if connection is None:
            return False
        try:
            await connection.execute(text("SELECT 1"))
            await connection.commit()
        except Exception as error:
            log.warning("leader lock lost", extra={"error": repr(error)[:300]})
            self._connection = None
            await self._let_go(connection)
            return False
        return True

    async def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await self._let_go(connection)

    async def holder(self) -> str | None:
        """The name of the process that holds the lock, if any."""
        async with self._database.read() as connection:
            return (
                await connection.execute(
                    text(
                        "SELECT a.application_name FROM pg_locks l"
                        " JOIN pg_stat_activity a ON a.pid = l.pid"
                        " WHERE l.locktype = 'advisory' AND l.granted"
                        " AND l.classid = 0 AND l.objid = :key AND l.objsubid = 1"
                        " AND l.database = (SELECT oid FROM pg_database"
                        "                   WHERE datname = current_database())"
                    ),
                    {"key": LEADER_LOCK_KEY},
                )
            ).scalar_one_or_none()

    @staticmethod
    async def _let_go(connection: AsyncConnection) -> None:
        # Invalidated, not pooled: a pooled connection would keep the lock it holds.
        try:
            await connection.invalidate()
        finally:
            await connection.close()
