"""Leaderboards: per ruleset and period, read from ``board_entries`` (and ``ratings``).

``record_results`` keeps one row per (ruleset, period, player) up to date as each match
ends, so a page is a range scan of the board's index, whatever the number of results.
Pages are cut with keyset cursors (the last row's sort key), never OFFSET.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

from sqlalchemy import ColumnElement, FromClause, and_, case, false, func, or_, select, true
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.errors import ServerError
from server.storage.models import BoardEntry, Player, Rating

PERIODS: Final = ("all", "month", "day")
ALL_TIME: Final = date(2000, 1, 1)  # the period_start of the all-time rows


def period_start(period: str, day: date) -> date:
    """The first day of the ``period`` (all, month or day) that holds ``day``."""
    if period == "all":
        return ALL_TIME
    if period == "month":
        return day.replace(day=1)
    if period == "day":
        return day
    raise ServerError("bad_message", f"period {period!r} is not one of all, month, day",
                      field="period")


@dataclass(frozen=True)
class Result:
    """What one finished game adds to the boards."""

    player_id: int
    score: int
    finish_ms: int
    won: bool


def _insert_for(connection: AsyncConnection) -> Any:
    return postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert


async def record_results(
    connection: AsyncConnection, *, ruleset: str, ended_at: datetime, results: Sequence[Result]
) -> None:
    """Fold each result into its player's all-time, month and day rows (in the caller's
    transaction)."""
    insert = _insert_for(connection)
    table = BoardEntry.__table__
    day = ended_at.date()
    for result in results:
        for period in PERIODS:
            row = {
                "ruleset": ruleset, "period": period, "period_start": period_start(period, day),
                "player_id": result.player_id, "games": 1, "wins": int(result.won),
                "best_score": result.score, "best_score_ms": result.finish_ms,
                "fastest_win_ms": result.finish_ms if result.won else None,
                "fastest_win_score": result.score if result.won else None,
            }
            statement = insert(table).values(**row)
            new = statement.excluded
            better_score = or_(
                new.best_score > table.c.best_score,
                and_(new.best_score == table.c.best_score,
                     new.best_score_ms < table.c.best_score_ms),
            )
            faster = and_(
                new.fastest_win_ms.is_not(None),
                or_(table.c.fastest_win_ms.is_(None),
                    new.fastest_win_ms < table.c.fastest_win_ms,
                    and_(new.fastest_win_ms == table.c.fastest_win_ms,
                         new.fastest_win_score > table.c.fastest_win_score)),
            )
            await connection.execute(statement.on_conflict_do_update(
                index_elements=["ruleset", "period", "period_start", "player_id"],
                set_={
                    "games": table.c.games + 1,
                    "wins": table.c.wins + new.wins,
                    "best_score": _pick(better_score, new.best_score, table.c.best_score),
                    "best_score_ms": _pick(better_score, new.best_score_ms, table.c.best_score_ms),
                    "fastest_win_ms": _pick(faster, new.fastest_win_ms, table.c.fastest_win_ms),
                    "fastest_win_score": _pick(faster, new.fastest_win_score,
                                               table.c.fastest_win_score),
                },
            ))


def _pick(condition: ColumnElement[bool], new: Any, old: Any) -> Any:
    return case((condition, new), else_=old)


@dataclass(frozen=True)
class Board:
    """One leaderboard: its table, its sort key (column, descending?) and what it shows."""

    name: str
    table: FromClause
    key: tuple[tuple[str, bool], ...]  # the last one is player_id, ascending
    shown: tuple[str, ...]
    per_period: bool

    def where(self, ruleset: str, period: str, start: date) -> ColumnElement[bool]:
        c = self.table.c
        clauses = [c.ruleset == ruleset]
        if self.per_period:
            clauses += [c.period == period, c.period_start == start]
        if self.name == "time":
            clauses.append(c.fastest_win_ms.is_not(None))
        if self.name == "wins":
            clauses.append(c.wins > 0)
        return and_(*clauses)

    def order(self) -> list[Any]:
        return [self.table.c[name].desc() if descending else self.table.c[name].asc()
                for name, descending in self.key]

    def ahead_of(self, values: Sequence[Any]) -> ColumnElement[bool]:
        """Rows that sort strictly before a row with sort key ``values``."""
        return self._beyond(values, before=True)

    def behind(self, values: Sequence[Any]) -> ColumnElement[bool]:
        return self._beyond(values, before=False)

    def _beyond(self, values: Sequence[Any], *, before: bool) -> ColumnElement[bool]:
        alternatives = []
        for depth, (name, descending) in enumerate(self.key):
            column = self.table.c[name]
            value = values[depth]
            earlier = column > value if descending == before else column < value
            equal_prefix = [self.table.c[n] == values[i] for i, (n, _) in enumerate(self.key[:depth])]
            alternatives.append(and_(true(), *equal_prefix, earlier))
        return or_(false(), *alternatives)


BOARDS: Final[dict[str, Board]] = {
    "score": Board("score", BoardEntry.__table__,
                   (("best_score", True), ("best_score_ms", False), ("player_id", False)),
                   ("best_score", "best_score_ms", "games"), True),
    "time": Board("time", BoardEntry.__table__,
                  (("fastest_win_ms", False), ("fastest_win_score", True), ("player_id", False)),
                  ("fastest_win_ms", "fastest_win_score", "wins"), True),
    "wins": Board("wins", BoardEntry.__table__,
                  (("wins", True), ("games", False), ("player_id", False)),
                  ("wins", "games"), True),
    "rating": Board("rating", Rating.__table__,
                    (("ordinal", True), ("player_id", False)),
                    ("ordinal", "mu", "sigma", "games"), False),
}


def board_named(name: str) -> Board:
    board = BOARDS.get(name)
    if board is None:
        raise ServerError("bad_message", f"board {name!r} is not one of {', '.join(BOARDS)}",
                          field="by")
    return board


def encode_cursor(key: Sequence[Any], rank: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([list(key), rank]).encode()).decode().rstrip("=")


def decode_cursor(board: Board, cursor: str) -> tuple[list[Any], int]:
    try:
        key, rank = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if len(key) != len(board.key) or not isinstance(rank, int):
            raise ValueError(cursor)
    except (ValueError, TypeError, binascii.Error):
        raise ServerError("bad_message", f"cursor {cursor[:40]!r} is not one of ours",
                          field="cursor") from None
    return key, rank


def _row(board: Board, row: Any, rank: int, provisional_games: int) -> dict[str, Any]:
    entry = {"rank": rank, "player_id": row.player_id, "name": row.name}
    entry.update({name: getattr(row, name) for name in board.shown})
    if board.name == "rating":
        entry["provisional"] = row.games < provisional_games
    return entry


async def page(
    connection: AsyncConnection, *, ruleset: str, by: str, period: str, day: date,
    cursor: str | None, limit: int, provisional_games: int,
) -> dict[str, Any]:
    """One page of a board, best first; ``next_cursor`` continues it (None at the end)."""
    board = board_named(by)
    start = period_start(period, day)
    c = board.table.c
    condition = board.where(ruleset, period, start)
    rank = 0
    if cursor:
        after, rank = decode_cursor(board, cursor)
        condition = and_(condition, board.behind(after))
    rows = (await connection.execute(
        select(board.table, Player.name).join(Player, Player.id == c.player_id)
        .where(condition).order_by(*board.order()).limit(limit + 1)
    )).all()
    entries = [_row(board, row, rank + i + 1, provisional_games) for i, row in enumerate(rows[:limit])]
    next_cursor = None
    if len(rows) > limit:
        last = rows[limit - 1]
        next_cursor = encode_cursor([_json(getattr(last, n)) for n, _ in board.key], rank + limit)
    return {"board": by, "ruleset": ruleset, "period": period if board.per_period else "all",
            "period_start": start.isoformat() if board.per_period else None,
            "entries": entries, "next_cursor": next_cursor}


async def around(
    connection: AsyncConnection, *, ruleset: str, by: str, period: str, day: date,
    player_id: int, neighbours: int, provisional_games: int,
) -> dict[str, Any]:
    """The player's rank and the ``neighbours`` rows on each side (no row: rank None)."""
    board = board_named(by)
    start = period_start(period, day)
    c = board.table.c
    base = board.where(ruleset, period, start)
    mine = (await connection.execute(
        select(board.table, Player.name).join(Player, Player.id == c.player_id)
        .where(base, c.player_id == player_id)
    )).first()
    result: dict[str, Any] = {"board": by, "ruleset": ruleset,
                              "period": period if board.per_period else "all",
                              "period_start": start.isoformat() if board.per_period else None,
                              "rank": None, "entries": []}
    if mine is None:
        return result
    key = [getattr(mine, name) for name, _ in board.key]
    ahead = (await connection.execute(
        select(func.count()).select_from(board.table).where(base, board.ahead_of(key))
    )).scalar_one()
    rank = int(ahead) + 1
    before = (await connection.execute(
        select(board.table, Player.name).join(Player, Player.id == c.player_id)
        .where(base, board.ahead_of(key))
        .order_by(*[col.desc() if not d else col.asc()
                    for col, d in ((c[n], d) for n, d in board.key)])
        .limit(neighbours)
    )).all()
    after = (await connection.execute(
        select(board.table, Player.name).join(Player, Player.id == c.player_id)
        .where(base, board.behind(key)).order_by(*board.order()).limit(neighbours)
    )).all()
    entries = [_row(board, row, rank - i - 1, provisional_games) for i, row in enumerate(before)]
    entries.reverse()
    entries.append(_row(board, mine, rank, provisional_games))
    entries += [_row(board, row, rank + i + 1, provisional_games) for i, row in enumerate(after)]
    result.update(rank=rank, entries=entries)
    return result


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date) else value
