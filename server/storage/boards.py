"""The boards repository: leaderboards per ruleset and period, read from
``board_entries`` (and ``ratings``), and the rows each rated match adds to them.

``record_results`` keeps one row per (ruleset, period, player) up to date as each match
ends, so a page is a range scan of the board's index, whatever the number of results.
Pages are cut with keyset cursors (the last row's sort key), never OFFSET.
"""

from __future__ import annotations

import base64
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Float,
    FromClause,
    Integer,
    SmallInteger,
    and_,
    delete,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from server.errors import ServerError
from server.storage import board_counts
from server.storage.counting import kept_by_review, with_reviews
from server.storage.database import Database
from server.storage.models import BoardEntry, MatchPlayer, Player, Rating
from server.storage.models import Match as MatchRow
from server.storage.players import bots_among

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
    raise ServerError(
        "bad_message", f"period {period!r} is not one of all, month, day", field="period"
    )


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
    """Fold each result into its player's all-time, month and day rows, and move each
    row's counts from its old buckets to its new ones (in the caller's transaction), in
    player id order: transactions that take the same rows take them in the same order,
    and never deadlock."""
    day = ended_at.date()
    bots = await bots_among(connection, {result.player_id for result in results})
    changes: Counter[board_counts.Place] = Counter()
    for result in sorted(results, key=lambda result: result.player_id):
        for period in PERIODS:
            where = (ruleset, period, period_start(period, day), result.player_id)
            old, new = await _fold(connection, where, result)
            bot = result.player_id in bots
            for board in COUNTED:
                board_counts.move(changes, board.place(old, bot), board.place(new, bot))
    await board_counts.apply(connection, changes)


_ENTRY_KEY: Final = ("ruleset", "period", "period_start", "player_id")


async def _fold(
    connection: AsyncConnection, where: tuple[str, str, date, int], result: Result
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Fold ``result`` into the board row at ``where``: the row before (None: there was
    none) and after. The row is read locked (FOR UPDATE on PostgreSQL; on SQLite the
    transaction holds the database's write lock): what it was decides which counts move."""
    table = BoardEntry.__table__
    matches = [table.c[name] == value for name, value in zip(_ENTRY_KEY, where, strict=True)]
    locked = select(table).where(*matches).with_for_update()
    found = (await connection.execute(locked)).mappings().first()
    if found is None:
        new = merged(dict(zip(_ENTRY_KEY, where, strict=True)), None, result)
        inserted = await connection.execute(
            _insert_for(connection)(table)
            .values(**new)
            .on_conflict_do_nothing()
            .returning(table.c.player_id)
        )
        if inserted.first() is not None:
            return None, new
        # A match of the same player that ended at once inserted the row first.
        found = (await connection.execute(locked)).mappings().one()
    old = dict(found)
    new = merged(old, old, result)
    await connection.execute(update(BoardEntry).where(*matches).values(**new))
    return old, new


def merged(
    where: Mapping[str, Any], row: Mapping[str, Any] | None, result: Result
) -> dict[str, Any]:
    """The board row at ``where`` once ``result`` is folded into ``row`` (None: the
    first result of that row): the best score (then the quickest of it), the fastest win
    (then the best score of it), the wins and the games."""
    new = {name: where[name] for name in _ENTRY_KEY}
    if row is None:
        return new | {
            "games": 1,
            "wins": int(result.won),
            "best_score": result.score,
            "best_score_ms": result.finish_ms,
            "fastest_win_ms": result.finish_ms if result.won else None,
            "fastest_win_score": result.score if result.won else None,
        }
    new |= {name: row[name] for name in _FOLDED}
    new["games"] += 1
    new["wins"] += int(result.won)
    if (-result.score, result.finish_ms) < (-row["best_score"], row["best_score_ms"]):
        new["best_score"], new["best_score_ms"] = result.score, result.finish_ms
    if result.won and (
        row["fastest_win_ms"] is None
        or (result.finish_ms, -result.score) < (row["fastest_win_ms"], -row["fastest_win_score"])
    ):
        new["fastest_win_ms"], new["fastest_win_score"] = result.finish_ms, result.score
    return new


_FOLDED: Final = (
    "games", "wins", "best_score", "best_score_ms", "fastest_win_ms", "fastest_win_score"
)


@dataclass(frozen=True)
class Board:
    """One leaderboard: its table, its sort key (column, descending?) and what it shows."""

    name: str
    table: FromClause
    key: tuple[tuple[str, bool], ...]  # the last one is player_id, ascending
    shown: tuple[str, ...]
    per_period: bool
    counting: board_counts.Counting | None = None  # None: a rank counts the rows ahead

    def where(self, ruleset: str, period: str, start: date) -> ColumnElement[bool]:
        c = self.table.c
        clauses = [c.ruleset == ruleset]
        if self.per_period:
            clauses += [c.period == period, c.period_start == start]
        return and_(*clauses, self.on_board())

    def on_board(self) -> ColumnElement[bool]:
        """Which rows of its table the board shows (``holds``, in SQL)."""
        c = self.table.c
        if self.name == "time":
            return c.fastest_win_ms.is_not(None)
        if self.name == "wins":
            return c.wins > 0
        return true()

    def holds(self, row: Mapping[str, Any]) -> bool:
        """Whether the board shows ``row`` (``on_board``, in Python)."""
        if self.name == "time":
            return row["fastest_win_ms"] is not None
        if self.name == "wins":
            return bool(row["wins"] > 0)
        return True

    def place(self, row: Mapping[str, Any] | None, bot: bool) -> board_counts.Place | None:
        """The bucket a board row is counted in (None: no row, or not on the board)."""
        if row is None or self.counting is None or not self.holds(row):
            return None
        bucket = self.counting.bucket(self.key, row)
        return board_counts.place(
            self.name, row["ruleset"], row["period"], row["period_start"], bot, bucket
        )

    def ahead_in_bucket(self, row: Mapping[str, Any]) -> list[ColumnElement[bool]]:
        """The rows sorting before ``row`` in its own bucket, as index ranges: the
        key's ranges that keep the bucket's whole columns, the widest of them cut at
        the bucket's edge."""
        assert self.counting is not None
        exact = self.counting.exact
        ranges = self.ranges([row[name] for name, _ in self.key], before=True)
        inside = ranges[: len(self.key) - exact]
        column = self.table.c[self.key[exact][0]]
        inside[-1] = and_(inside[-1], self.counting.bound(self.key, column, row))
        return inside

    def order(self, *, reverse: bool = False) -> list[Any]:
        return [
            self.table.c[name].desc() if descending != reverse else self.table.c[name].asc()
            for name, descending in self.key
        ]

    def ranges(self, values: Sequence[Any], *, before: bool) -> list[ColumnElement[bool]]:
        """The rows sorting strictly before (or after) a row of sort key ``values``, as
        contiguous ranges of the board's index, nearest range first.

        "After (s, m, p)" is (= s, = m, > p), then (= s, after m), then (after s): each an
        equality prefix and one bound, which an index scans directly, where one OR of
        them would make the database filter the board from its start.
        """
        found = []
        for depth in reversed(range(len(self.key))):
            name, descending = self.key[depth]
            column = self.table.c[name]
            bound = column > values[depth] if descending == before else column < values[depth]
            prefix = [self.table.c[n] == values[i] for i, (n, _) in enumerate(self.key[:depth])]
            found.append(and_(*prefix, bound))
        return found


BOARDS: Final[dict[str, Board]] = {
    "score": Board(
        "score",
        BoardEntry.__table__,
        (("best_score", True), ("best_score_ms", False), ("player_id", False)),
        ("best_score", "best_score_ms", "games"),
        True,
        # a bucket per score and second: at most one game's time limit in seconds of
        # them for each score, and few players in each
        board_counts.Counting(1, board_counts.Width(1000)),
    ),
    "time": Board(
        "time",
        BoardEntry.__table__,
        (("fastest_win_ms", False), ("fastest_win_score", True), ("player_id", False)),
        ("fastest_win_ms", "fastest_win_score", "wins"),
        True,
        board_counts.Counting(0, board_counts.Width(1000)),
    ),
    "wins": Board(
        "wins",
        BoardEntry.__table__,
        (("wins", True), ("games", False), ("player_id", False)),
        ("wins", "games"),
        True,
        board_counts.Counting(1, board_counts.Doubling()),
    ),
    "rating": Board(
        "rating",
        Rating.__table__,
        (("ordinal", True), ("player_id", False)),
        ("ordinal", "mu", "sigma", "games"),
        False,
    ),
}

#: The boards of ``board_entries``, each with its counts.
COUNTED: Final = tuple(board for board in BOARDS.values() if board.counting is not None)


def board_named(name: str) -> Board:
    board = BOARDS.get(name)
    if board is None:
        raise ServerError(
            "bad_message", f"board {name!r} is not one of {', '.join(BOARDS)}", field="by"
        )
    return board


def encode_cursor(key: Sequence[Any], rank: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([list(key), rank]).encode()).decode().rstrip("=")


#: The largest rank a cursor may hold: no board has more rows than there are player ids.
MAX_RANK: Final = 2**63 - 1


def decode_cursor(board: Board, cursor: str) -> tuple[list[Any], int]:
    """The sort key and rank a cursor of ``board`` holds, each value checked against its
    column: a forged value must be refused here, as the database would refuse it as a bug."""
    try:
        decoded = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, RecursionError):  # binascii.Error and bad UTF-8 are ValueErrors
        raise _bad_cursor(cursor, "is not base64 of JSON") from None
    if not (isinstance(decoded, list) and len(decoded) == 2):
        raise _bad_cursor(cursor, "is not a [key, rank] pair")
    key, rank = decoded
    if not (isinstance(key, list) and len(key) == len(board.key)):
        raise _bad_cursor(
            cursor, f"has no key of the {len(board.key)} values of the {board.name} board"
        )
    values = [
        _key_value(board.table.c[name].type, name, value, cursor)
        for (name, _), value in zip(board.key, key, strict=True)
    ]
    if not (_is_int(rank) and 0 <= rank <= MAX_RANK):
        raise _bad_cursor(cursor, f"has rank {_shown(rank)}, not an integer from 0 to {MAX_RANK}")
    return values, rank


def _int_bounds(column_type: Any) -> tuple[int, int] | None:
    """The values an integer column holds (None: not an integer column)."""
    if isinstance(column_type, SmallInteger):
        return -(2**15), 2**15 - 1
    if isinstance(column_type, BigInteger):
        return -(2**63), 2**63 - 1
    if isinstance(column_type, Integer):
        return -(2**31), 2**31 - 1
    return None


def _key_value(column_type: Any, name: str, value: Any, cursor: str) -> Any:
    bounds = _int_bounds(column_type)
    if bounds is not None:
        low, high = bounds
        if _is_int(value) and low <= value <= high:
            return value
        raise _bad_cursor(
            cursor, f"has {name} {_shown(value)}, not an integer from {low} to {high}"
        )
    if isinstance(column_type, Float):
        if _is_int(value) or isinstance(value, float):
            try:
                number = float(value)
            except OverflowError:  # an integer past the largest double
                number = math.inf
            if math.isfinite(number):  # JSON reads NaN, Infinity and 1e999 too
                return number
        raise _bad_cursor(cursor, f"has {name} {_shown(value)}, not a finite number")
    raise AssertionError(f"the {name} column of a board is of type {column_type!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # JSON true is not 1


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 24 else f"{text[:21]}..."


def _bad_cursor(cursor: str, problem: str) -> ServerError:
    return ServerError(
        "bad_message", f"cursor {cursor[:40]!r} is not one of ours: it {problem}", field="cursor"
    )


def _row(board: Board, row: Any, rank: int, provisional_games: int) -> dict[str, Any]:
    entry = {"rank": rank, "player_id": row.player_id, "name": row.name, "bot": row.bot}
    entry.update({name: getattr(row, name) for name in board.shown})
    if board.name == "rating":
        entry["provisional"] = row.games < provisional_games
    return entry


async def _rows_beyond(
    connection: AsyncConnection,
    board: Board,
    base: ColumnElement[bool],
    values: Sequence[Any] | None,
    *,
    before: bool,
    limit: int,
) -> list[Any]:
    """Up to ``limit`` rows nearest to a row of key ``values`` on one side (the board's
    start when None), nearest first."""
    c = board.table.c
    ranges = [true()] if values is None else board.ranges(values, before=before)
    rows: list[Any] = []
    for condition in ranges:
        rows += (
            await connection.execute(
                select(board.table, Player.name, Player.bot)
                .join(Player, Player.id == c.player_id)
                .where(base, condition)
                .order_by(*board.order(reverse=before))
                .limit(limit - len(rows))
            )
        ).all()
        if len(rows) >= limit:
            break
    return rows


async def page(
    connection: AsyncConnection,
    *,
    ruleset: str,
    by: str,
    period: str,
    day: date,
    cursor: str | None,
    limit: int,
    provisional_games: int,
    kind: str = "people",
) -> dict[str, Any]:
    """One page of a board, best first; ``next_cursor`` continues it (None at the end).
    ``kind``: the people's board or the bots' (docs/fair-play.md)."""
    board = board_named(by)
    start = period_start(period, day)
    after, rank = decode_cursor(board, cursor) if cursor else (None, 0)
    base = and_(board.where(ruleset, period, start), _of_kind(kind))
    rows = await _rows_beyond(connection, board, base, after, before=False, limit=limit + 1)
    entries = [
        _row(board, row, rank + i + 1, provisional_games) for i, row in enumerate(rows[:limit])
    ]
    next_cursor = None
    if len(rows) > limit:
        last = rows[limit - 1]
        next_cursor = encode_cursor([_json(getattr(last, n)) for n, _ in board.key], rank + limit)
    return {
        "board": by,
        "kind": kind,
        "ruleset": ruleset,
        "period": period if board.per_period else "all",
        "period_start": start.isoformat() if board.per_period else None,
        "entries": entries,
        "next_cursor": next_cursor,
    }


async def around(
    connection: AsyncConnection,
    *,
    ruleset: str,
    by: str,
    period: str,
    day: date,
    player_id: int,
    neighbours: int,
    provisional_games: int,
    kind: str = "people",
) -> dict[str, Any]:
    """The player's rank and the ``neighbours`` rows on each side (no row: rank None),
    on the ``kind`` board (a bot has no row on the people's, nor a person on the bots')."""
    board = board_named(by)
    start = period_start(period, day)
    c = board.table.c
    base = and_(board.where(ruleset, period, start), _of_kind(kind))
    mine = (
        await connection.execute(
            select(board.table, Player.name, Player.bot)
            .join(Player, Player.id == c.player_id)
            .where(base, c.player_id == player_id)
        )
    ).first()
    result: dict[str, Any] = {
        "board": by,
        "kind": kind,
        "ruleset": ruleset,
        "period": period if board.per_period else "all",
        "period_start": start.isoformat() if board.per_period else None,
        "rank": None,
        "entries": [],
    }
    if mine is None:
        return result
    key = [getattr(mine, name) for name, _ in board.key]
    rank = await _rows_ahead(connection, board, base, dict(mine._mapping), kind == "bots") + 1
    before = await _rows_beyond(connection, board, base, key, before=True, limit=neighbours)
    after = await _rows_beyond(connection, board, base, key, before=False, limit=neighbours)
    entries = [_row(board, row, rank - i - 1, provisional_games) for i, row in enumerate(before)]
    entries.reverse()
    entries.append(_row(board, mine, rank, provisional_games))
    entries += [_row(board, row, rank + i + 1, provisional_games) for i, row in enumerate(after)]
    result.update(rank=rank, entries=entries)
    return result


async def _rows_ahead(
    connection: AsyncConnection,
    board: Board,
    base: ColumnElement[bool],
    row: Mapping[str, Any],
    bot: bool,
) -> int:
    """How many rows of the board sort before ``row``, in one query: the counts of the
    buckets ahead of its bucket, and the rows ahead of it inside its bucket (a board
    without counts counts every row ahead)."""
    place = board.place(row, bot)
    if place is None:
        ranges, counted = board.ranges([row[name] for name, _ in board.key], before=True), []
    else:
        ranges = board.ahead_in_bucket(row)
        counted = [board_counts.ahead(place[0], *place[1:5], (place[5], place[6]))]
    c = board.table.c
    counts = [
        select(func.count())
        .select_from(board.table)
        .join(Player, Player.id == c.player_id)
        .where(base, condition)
        .scalar_subquery()
        for condition in ranges
    ]
    total = (await connection.execute(select(sum(counted + counts[1:], counts[0])))).scalar_one()
    return int(total)


#: The boards of people and the boards of bots.
KINDS: Final = ("people", "bots")


def _of_kind(kind: str) -> ColumnElement[bool]:
    """The rows of the ``kind`` board's players (the query joins ``players``)."""
    if kind not in KINDS:
        raise ServerError(
            "bad_message", f"kind {kind!r} is not one of {', '.join(KINDS)}", field="kind"
        )
    return Player.bot.is_(kind == "bots")


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date) else value


async def rebuild(connection: AsyncConnection, *, batch_rows: int = 5000) -> int:
    """Recompute every board row from the stored results of rated finished matches that
    count (after an import, or to check the incremental rows); returns the rows written.
    What counts is ``server.storage.counting``'s: the bot rule over every seat of a match
    (``with_bot``, a held or voided seat included), then the review rule."""
    seated, seated_player = aliased(MatchPlayer), aliased(Player)
    with_bot = (
        select(seated.player_id)
        .join(seated_player, seated_player.id == seated.player_id)
        .where(seated.match_id == MatchRow.id, seated_player.bot.is_(True))
        .exists()
    )
    games = await connection.stream(
        with_reviews(
            select(
                MatchRow.ruleset,
                MatchRow.ended_at,
                MatchPlayer.player_id,
                MatchPlayer.score,
                MatchPlayer.finish_ms,
                MatchPlayer.won,
                Player.bot,
                with_bot.label("with_bot"),
            )
            .join(MatchPlayer, MatchPlayer.match_id == MatchRow.id)
            .join(Player, Player.id == MatchPlayer.player_id)
        )
        .where(MatchRow.status == "finished", MatchRow.rated.is_(True), kept_by_review())
        .execution_options(yield_per=batch_rows)
    )
    rows: dict[tuple[str, str, date, int], dict[str, Any]] = {}
    async for game in games:
        if game.with_bot and not game.bot:  # counting.kept_by_bot_rule: the bots' only
            continue
        result = Result(game.player_id, game.score, game.finish_ms or 0, game.won)
        for period in PERIODS:
            key = (game.ruleset, period, period_start(period, game.ended_at.date()), game.player_id)
            where = dict(zip(_ENTRY_KEY, key, strict=True))
            rows[key] = merged(where, rows.get(key), result)
    await clear(connection)
    values = list(rows.values())
    for start in range(0, len(values), batch_rows):
        await connection.execute(insert(BoardEntry), values[start : start + batch_rows])
    await recount(connection)
    return len(values)


async def clear(connection: AsyncConnection) -> None:
    """Empty ``board_entries`` and their counts (in the caller's transaction)."""
    await connection.execute(delete(BoardEntry))
    await recount(connection)


async def recount(connection: AsyncConnection) -> int:
    """Count the rows of ``board_entries`` into their buckets again (after they were
    written other than by ``record_results``); returns the buckets written."""
    return await board_counts.recount(
        connection,
        {
            board.name: (board.table, board.key, board.counting, board.on_board())
            for board in COUNTED
            if board.counting is not None
        },
    )


class Boards:
    """The leaderboards, read (``page``, ``around``) and rebuilt (``rebuild``).

    A match's rows are added by ``Results.finish_match``, in its own transaction."""

    def __init__(self, database: Database, *, provisional_games: int) -> None:
        self._database = database
        self._provisional_games = provisional_games

    async def page(
        self,
        *,
        ruleset: str,
        by: str,
        period: str,
        day: date,
        cursor: str | None,
        limit: int,
        kind: str = "people",
    ) -> dict[str, Any]:
        """One page of a board, best first; see :func:`page`."""
        async with self._database.read() as connection:
            return await page(
                connection,
                ruleset=ruleset,
                by=by,
                period=period,
                day=day,
                cursor=cursor,
                limit=limit,
                provisional_games=self._provisional_games,
                kind=kind,
            )

    async def around(
        self,
        *,
        ruleset: str,
        by: str,
        period: str,
        day: date,
        player_id: int,
        neighbours: int,
        kind: str = "people",
    ) -> dict[str, Any]:
        """A player's rank and neighbours on a board; see :func:`around`."""
        async with self._database.read() as connection:
            return await around(
                connection,
                ruleset=ruleset,
                by=by,
                period=period,
                day=day,
                player_id=player_id,
                neighbours=neighbours,
                provisional_games=self._provisional_games,
                kind=kind,
            )

    async def rebuild(self, *, batch_rows: int = 5000) -> int:
        """Recompute every board row in one transaction; see :func:`rebuild`."""
        async with self._database.write() as connection:
            return await rebuild(connection, batch_rows=batch_rows)
