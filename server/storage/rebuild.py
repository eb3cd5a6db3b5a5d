"""Rebuilding the boards and the ratings from the stored results of every rated match.

``Results.finish_match`` folds each rated match into ``board_entries``, ``ratings`` and
``rating_history`` as it ends. The rebuild empties those tables and folds every finished
rated match again, in the order the matches ended, through the same two functions with
the same inputs: it is the reference the incremental rows must equal (after an import,
a change to the rating model, or to check them). Results that do not count (held for
review, voided, played while suspended) and those the bot rule leaves out (a match with a
bot in it counts for its bots only) are left out of both: ``server.storage.counting``.
An operator's clear or void refolds (``refold``) in the transaction that records it.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.storage.boards import Result, record_results
from server.storage.boards import clear as clear_boards
from server.storage.counting import NOT_COUNTED, counted_seats, with_reviews
from server.storage.database import Database
from server.storage.models import (
    Match,
    MatchPlayer,
    Rating,
    RatingChange,
    SeatReview,
)
from server.storage.players import bots_among
from server.storage.ratings import update_ratings


async def rebuild_boards_and_ratings(
    database: Database | AsyncEngine, *, batch_matches: int = 1000
) -> int:
    """In one (write) transaction, replace the boards, the ratings and the rating history by the
    fold of every finished rated match, ordered by end time then id; returns how many
    matches were folded. Matches are read ``batch_matches`` at a time."""
    if not isinstance(database, Database):
        database = Database.of(database)
    async with database.write() as connection:
        return await refold(connection, batch_matches=batch_matches)


async def refold(connection: AsyncConnection, *, batch_matches: int = 1000) -> int:
    """``rebuild_boards_and_ratings`` in the caller's write transaction."""
    if connection.dialect.name == "postgresql":
        # Matches ending meanwhile wait for the rebuild (they write these tables), then
        # fold on top of it: a match is either read below or folded after, never both.
        # Leaderboard reads go on, on the old rows.
        await connection.execute(
            text("LOCK TABLE board_entries, ratings, rating_history IN EXCLUSIVE MODE")
        )
    # On SQLite the transaction took the database's write lock as it began: no match
    # ends between the reads below and the commit.
    await connection.execute(delete(RatingChange))
    await connection.execute(delete(Rating))
    await clear_boards(connection)
    folded = 0
    after: tuple[datetime, int] | None = None
    while matches := await _matches_after(connection, after, limit=batch_matches):
        games = await _games_of(connection, [match.id for match in matches])
        bots = await bots_among(
            connection, {g.player_id for rows in games.values() for g in rows}
        )
        for match in matches:
            await _fold(connection, match, games[match.id], bots)
        folded += len(matches)
        after = (matches[-1].ended_at, matches[-1].id)
    return folded


async def _matches_after(
    connection: AsyncConnection, after: tuple[datetime, int] | None, *, limit: int
) -> list[Any]:
    """Up to ``limit`` finished rated matches ending after ``after`` (end time, id)."""
    query = select(Match.id, Match.ruleset, Match.ended_at).where(
        Match.status == "finished", Match.rated.is_(True)
    )
    if after is not None:
        ended_at, match_id = after
        query = query.where(
            or_(Match.ended_at > ended_at, and_(Match.ended_at == ended_at, Match.id > match_id))
        )
    rows = await connection.execute(query.order_by(Match.ended_at, Match.id).limit(limit))
    return list(rows.all())


async def _games_of(connection: AsyncConnection, match_ids: list[int]) -> dict[int, list[Any]]:
    """Each match's result rows, each with its review's status (None without one), in
    player id order (the order ``finish_match`` takes): every seat, since the bot rule
    looks at every seat, a held or voided one included (``counting.counted_seats``)."""
    rows = await connection.execute(
        with_reviews(
            select(
                MatchPlayer.match_id,
                MatchPlayer.player_id,
                MatchPlayer.score,
                MatchPlayer.finish_ms,
                MatchPlayer.won,
                MatchPlayer.rank,
                SeatReview.status.label("review"),
            )
        )
        .where(MatchPlayer.match_id.in_(match_ids))
        .order_by(MatchPlayer.match_id, MatchPlayer.player_id)
    )
    games: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        games[row.match_id].append(row)
    return games


async def _fold(
    connection: AsyncConnection, match: Any, games: list[Any], bots: set[int]
) -> None:
    """What ``Results.finish_match`` does for a rated match, from its stored rows (a
    finish time the match never stored is 0, as the match passes it), counting whom it
    counts (``counting.counted_seats``: a match with a bot in it counts for its bots
    only, and a held, voided or suspended result for nobody)."""
    scored = set(
        counted_seats(
            [g.player_id for g in games],
            bots=bots,
            reviewed_out={g.player_id for g in games if g.review in NOT_COUNTED},
        )
    )
    games = [g for g in games if g.player_id in scored]
    await record_results(
        connection,
        ruleset=match.ruleset,
        ended_at=match.ended_at,
        results=[Result(g.player_id, g.score, g.finish_ms or 0, g.won) for g in games],
    )
    await update_ratings(
        connection,
        ruleset=match.ruleset,
        match_id=match.id,
        ranking=[(g.player_id, g.rank) for g in games],
        at=match.ended_at,
    )
