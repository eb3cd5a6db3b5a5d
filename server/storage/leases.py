"""The match leases repository: which process of a cluster owns each live match.

A process owns a match while it holds the match's lease (a ``match_leases`` row naming
it, not yet expired), and renews it every few seconds. A lease that ran out (its owner
died, or was paused past it) may be taken over by any process: the row then names the
new owner and its ``epoch`` grows by one. The epoch is the fence: the journal stores an
action row only if the lease still has the epoch its writer took the match with, checked
in the transaction that stores the row (``server.storage.journal``), so an owner that
lost its lease can no longer store, and two owners never both acknowledge an action.

Leases are PostgreSQL's: its row locks order a take-over and a journal commit on one
match (the commit holds the lease row ``FOR SHARE``; a take-over updates it), and
``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` decides every race between two
processes taking the same match over. The embedded SQLite database is one process's,
which owns every match: it keeps no leases.

Expiry instants come from the caller's clock (``now``). Clocks of different hosts that
disagree make a take-over come early or late, never unsafe: the epoch, not the clock,
fences the writes.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from sqlalchemy import ColumnElement, and_, or_, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.database import Database
from server.storage.models import Match, MatchLease

#: When a released lease ran out: long ago.
RELEASED: Final = datetime(1970, 1, 1, tzinfo=UTC)


def process_name() -> str:
    """A name for this process, new at each start: host, pid and a random part (a
    restarted process, or a reused pid, never passes for the one before)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


class LeasesUnsupported(ValueError):
    """Leases were asked of a database that keeps none (SQLite)."""


class LeaseTaken(RuntimeError):
    """A match was taken over before its creator claimed its lease."""

    def __init__(self, match_id: int) -> None:
        super().__init__(
            f"match {match_id} was taken over before its creator claimed its lease "
            "(its creation took longer than a lease)"
        )
        self.match_id = match_id


class MatchLeases:
    """The leases of ``owner`` (this process) on matches.

    :param database: a PostgreSQL database.
    :param owner: this process's name (:func:`process_name`).
    :param lease_s: how long a lease lasts after it is taken or renewed, in seconds.
    """

    def __init__(self, database: Database, *, owner: str, lease_s: float) -> None:
        if database.is_sqlite:
            raise LeasesUnsupported(
                f"match leases need PostgreSQL, not {database.url.split(':', 1)[0]}"
            )
        if not lease_s > 0:
            raise ValueError(f"lease_s must be above 0, got {lease_s}")
        self._database = database
        self.owner = owner
        self.lease_s = lease_s
        self._lease = timedelta(seconds=lease_s)

    async def claim(self, match_id: int, now: datetime) -> int:
        """Take the lease of a match this process has just created; return its epoch
        (1). Raises :class:`LeaseTaken` if a take-over was first (``take_over`` leaves a
        match without a lease to its creator for a lease's time only)."""
        async with self._database.write() as connection:
            result = await connection.execute(
                insert(MatchLease)
                .values(match_id=match_id, owner=self.owner, epoch=1, expires_at=now + self._lease)
                .on_conflict_do_nothing(index_elements=[MatchLease.match_id])
                .returning(MatchLease.epoch)
            )
            epoch = result.scalar_one_or_none()
        if epoch is None:
            raise LeaseTaken(match_id)
        return int(epoch)

    async def take_over(
        self,
        *,
        kinds: Sequence[str],
        now: datetime,
        running: Collection[int] = (),
        creating: Collection[str] = (),
    ) -> dict[int, int]:
        """Take the lease of every match of ``kinds`` in its lobby or running whose
        lease ran out before ``now`` or that has none: return the epoch of each match
        taken, by match id. Of processes taking over at once, each match goes to one.

        The matches this process is ``running`` (ids) or ``creating`` (codes) are left
        out: a lease of its own that ran out (its renewal came late) is renewed, not
        taken over, which would raise its epoch and refuse the process's own writes still
        in flight; a match it is still creating is its to claim, however late."""
        async with self._database.write() as connection:
            candidates = (
                await connection.execute(
                    select(Match.id, Match.code)
                    .outerjoin(MatchLease, MatchLease.match_id == Match.id)
                    .where(
                        Match.status.in_(("lobby", "running")),
                        Match.kind.in_(kinds),
                        or_(
                            # One with no lease yet is being created (stored, then its
                            # lease claimed): its creator has a lease's time to claim it.
                            and_(
                                MatchLease.match_id.is_(None),
                                Match.created_at < now - self._lease,
                            ),
                            MatchLease.expires_at < now,
                        ),
                    )
                    .order_by(Match.id)
                )
            ).all()
            taken: dict[int, int] = {}
            for match_id, code in candidates:
                if match_id in running or code in creating:
                    continue
                statement = insert(MatchLease).values(
                    match_id=match_id, owner=self.owner, epoch=1, expires_at=now + self._lease
                )
                # Re-checked on the row as committed: of two processes, the second finds
                # the lease the first has just taken, not expired, and takes nothing.
                statement = statement.on_conflict_do_update(
                    index_elements=[MatchLease.match_id],
                    set_={
                        "owner": self.owner,
                        "epoch": MatchLease.epoch + 1,
                        "expires_at": now + self._lease,
                    },
                    where=MatchLease.expires_at < now,
                )
                epoch = (
                    await connection.execute(statement.returning(MatchLease.epoch))
                ).scalar_one_or_none()
                if epoch is not None:
                    taken[match_id] = int(epoch)
            return taken

    async def renew(self, held: Mapping[int, int], now: datetime) -> set[int]:
        """Renew the leases ``held`` (epoch by match id) until ``now`` plus the lease;
        return the ids of those still held. A match left out was taken over (or its
        lease released): this process must drop it."""
        if not held:
            return set()
        async with self._database.write() as connection:
            await _lock_in_order(connection, self._held(held))
            result = await connection.execute(
                update(MatchLease)
                .where(*self._held(held))
                .values(expires_at=now + self._lease)
                .returning(MatchLease.match_id)
            )
            return {int(match_id) for match_id in result.scalars()}

    async def release(self, held: Mapping[int, int]) -> None:
        """Give up the leases ``held`` (epoch by match id) at once, so that another
        process may take their matches over without waiting for them to run out. The
        rows stay, expired: the epoch must go on growing, or a writer fenced by an old
        epoch could pass again once a later owner reached that number."""
        if not held:
            return
        async with self._database.write() as connection:
            await _lock_in_order(connection, self._held(held))
            await connection.execute(
                update(MatchLease).where(*self._held(held)).values(expires_at=RELEASED)
            )

    def _held(self, held: Mapping[int, int]) -> tuple[ColumnElement[bool], ...]:
        """Where a lease is among ``held`` (epoch by match id), still this process's."""
        return (
            tuple_(MatchLease.match_id, MatchLease.epoch).in_(list(held.items())),
            MatchLease.owner == self.owner,
        )

    async def holder(self, code: str, now: datetime) -> Holder | None:
        """Who runs match ``code`` (or keeps it, finished, for a while), if it has a
        lease."""
        async with self._database.read() as connection:
            row = (
                await connection.execute(
                    select(MatchLease.match_id, MatchLease.owner, MatchLease.epoch,
                           MatchLease.expires_at, Match.status)
                    .join(Match, Match.id == MatchLease.match_id)
                    .where(Match.code == code)
                )
            ).one_or_none()
        if row is None:
            return None
        return Holder(
            int(row.match_id), row.owner, int(row.epoch), row.expires_at >= now, row.status
        )

    async def live_owners(self, now: datetime) -> set[str]:
        """The processes that hold a lease running at ``now``."""
        async with self._database.read() as connection:
            rows = await connection.execute(
                select(MatchLease.owner).where(MatchLease.expires_at >= now).distinct()
            )
            return {str(owner) for owner in rows.scalars()}

    async def owners(self, match_ids: Sequence[int]) -> dict[int, tuple[str, int]]:
        """The owner and epoch of each of ``match_ids`` that has a lease."""
        async with self._database.read() as connection:
            rows = await connection.execute(
                select(MatchLease.match_id, MatchLease.owner, MatchLease.epoch).where(
                    MatchLease.match_id.in_(match_ids)
                )
            )
            return {int(row.match_id): (row.owner, int(row.epoch)) for row in rows}


@dataclass(frozen=True)
class Holder:
    """Who runs a match: its lease's owner and epoch, and whether the lease was still
    running at the instant asked (``live``)."""

    match_id: int
    owner: str
    epoch: int
    live: bool
    #: The match's stored status (a finished match is kept by its owner a while).
    status: str = "running"


async def _lock_in_order(connection: AsyncConnection, where: Sequence[ColumnElement[bool]]) -> None:
    """Lock the lease rows ``where`` holds, in match id order, before updating them.

    An ``UPDATE`` of several rows locks them in the order its plan meets them (on a small
    table, where their latest versions happen to lie), and a take-over or a journal
    commit locks the same rows in match id order: two such transactions could each hold
    a row the other waits for, and PostgreSQL would abort one ("deadlock detected"), a
    renewal lost for a lease's time. Every transaction that locks several lease rows
    takes them in match id order, so none waits on another that waits on it."""
    await connection.execute(
        select(MatchLease.match_id).where(*where).order_by(MatchLease.match_id).with_for_update()
    )
