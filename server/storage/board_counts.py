"""The counted index of the leaderboards: how many rows of each board sort into each
bucket of its sort key (``board_counts``), so that a rank is a sum over the few hundred
buckets ahead plus a count inside one bucket, never a count of every row ahead.

A bucket takes the first ``exact`` columns of the board's key whole and a range of the
next one (``Width``: 1,000 ms; ``Doubling``: values within 1/16 of each other), so its
rows are contiguous in the board's index. ``bucket`` and ``sub`` ascend in the board's
order: a descending column's bucket is negated.

The counts move in the transaction that writes ``board_entries`` (``apply``), as one
``INSERT .. ON CONFLICT DO UPDATE SET rows = rows + delta`` per bucket, in bucket order:
an increment is atomic per row on PostgreSQL and SQLite alike, and transactions that
take the same buckets take them in the same order, so none is lost and none deadlocks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.models import BoardCount, Player

COUNTS: Final = BoardCount.__table__

#: Where a bucket is: (board, ruleset, period, period_start, bot, bucket, sub).
Place = tuple[str, str, str, date, bool, int, int]


@dataclass(frozen=True)
class Width:
    """Buckets of ``width`` consecutive values (of a column that is never negative)."""

    width: int

    def bucket(self, value: int) -> int:
        return value // self.width

    def first(self, bucket: int) -> int:
        return bucket * self.width

    def past(self, bucket: int) -> int:
        return (bucket + 1) * self.width


@dataclass(frozen=True)
class Doubling:
    """A bucket for each value below 32, then 16 buckets for each doubling: a count of
    games stays in small buckets from 1 to millions, where one width would make either
    a bucket of every daily player or thousands of buckets of all-time ones."""

    def bucket(self, value: int) -> int:
        if value < 32:
            return value
        shift = value.bit_length() - 5  # value >> shift is from 16 to 31
        return (shift << 5) + (value >> shift)

    def first(self, bucket: int) -> int:
        return bucket if bucket < 32 else (bucket & 31) << (bucket >> 5)

    def past(self, bucket: int) -> int:
        return bucket + 1 if bucket < 32 else ((bucket & 31) + 1) << (bucket >> 5)


@dataclass(frozen=True)
class Counting:
    """How a board's rows are bucketed: its first ``exact`` key columns whole (0 or 1),
    and the next one by ``coarse``."""

    exact: int
    coarse: Width | Doubling

    def bucket(self, key: Sequence[tuple[str, bool]], row: Mapping[str, Any]) -> tuple[int, int]:
        parts = [-row[name] if descending else row[name] for name, descending in key[: self.exact]]
        name, descending = key[self.exact]
        coarse = self.coarse.bucket(row[name])
        parts.append(-coarse if descending else coarse)
        return parts[0], parts[1] if len(parts) == 2 else 0

    def bound(
        self, key: Sequence[tuple[str, bool]], column: ColumnElement[Any], row: Mapping[str, Any]
    ) -> ColumnElement[bool]:
        """The bucket's edge on the side of the rows ahead of ``row``: with the key's
        ranges nearer than it, the rows ahead of ``row`` inside its bucket."""
        name, descending = key[self.exact]
        coarse = self.coarse.bucket(row[name])
        return column < self.coarse.past(coarse) if descending else column >= self.coarse.first(
            coarse
        )


def place(
    board: str, ruleset: str, period: str, start: date, bot: bool, bucket: tuple[int, int]
) -> Place:
    return (board, ruleset, period, start, bot, bucket[0], bucket[1])


def move(changes: Counter[Place], old: Place | None, new: Place | None) -> None:
    """Record a row moving from bucket ``old`` to ``new`` (None: off the board)."""
    if old == new:
        return
    if old is not None:
        changes[old] -= 1
    if new is not None:
        changes[new] += 1


_FIELDS: Final = ("board", "ruleset", "period", "period_start", "bot", "bucket", "sub")


async def apply(connection: AsyncConnection, changes: Counter[Place]) -> None:
    """Add ``changes`` to the counts (in the caller's transaction), in bucket order."""
    moved = sorted(item for item in changes.items() if item[1])
    if not moved:
        return
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    statement = insert(BoardCount)
    await connection.execute(
        statement.on_conflict_do_update(
            index_elements=list(_FIELDS), set_={"rows": COUNTS.c.rows + statement.excluded.rows}
        ),
        [{**dict(zip(_FIELDS, where, strict=True)), "rows": delta} for where, delta in moved],
    )


def ahead(
    board: str, ruleset: str, period: str, start: date, bot: bool, bucket: tuple[int, int]
) -> Any:
    """The rows in the buckets ahead of ``bucket``, as a scalar subquery: the buckets of
    the same ``bucket`` and a smaller ``sub``, then those of a smaller ``bucket``."""
    c = COUNTS.c
    same = [c.board == board, c.ruleset == ruleset, c.period == period]
    same += [c.period_start == start, c.bot.is_(bot)]
    total = func.coalesce(func.sum(c.rows), 0)
    nearer = select(total).where(*same, c.bucket == bucket[0], c.sub < bucket[1])
    further = select(total).where(*same, c.bucket < bucket[0])
    return nearer.scalar_subquery() + further.scalar_subquery()


async def recount(
    connection: AsyncConnection,
    boards: Mapping[str, tuple[Any, Sequence[tuple[str, bool]], Counting, ColumnElement[bool]]],
) -> int:
    """Replace the counts of ``boards`` (name: table, key, counting, which rows are on
    it) by counts of their rows; returns the buckets written. The rows are grouped by
    their bucket's columns in the database, and the groups into buckets here."""
    await connection.execute(delete(BoardCount).where(COUNTS.c.board.in_(list(boards))))
    total = 0
    for name, (table, key, counting, on_board) in boards.items():
        columns = [table.c[column] for column, _ in key[: counting.exact + 1]]
        coarse = columns[-1]
        if isinstance(counting.coarse, Width):  # a group per bucket, not per value
            columns[-1] = coarse // counting.coarse.width
        grouped = [table.c.ruleset, table.c.period, table.c.period_start, Player.bot, *columns]
        groups = await connection.execute(
            select(*grouped, func.count())
            .join(Player, Player.id == table.c.player_id)
            .where(on_board)
            .group_by(*grouped)
        )
        changes: Counter[Place] = Counter()
        names = [column for column, _ in key[: counting.exact + 1]]
        for group in groups:
            ruleset, period, start, bot, *values, rows = group
            if isinstance(counting.coarse, Width):  # back to a value of the bucket
                values[-1] = counting.coarse.first(values[-1])
            bucket = counting.bucket(key, dict(zip(names, values, strict=True)))
            changes[place(name, ruleset, period, start, bot, bucket)] += rows
        await apply(connection, changes)
        total += sum(1 for rows in changes.values() if rows)
    return total
