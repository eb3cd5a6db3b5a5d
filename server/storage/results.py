"""The results repository: a match's end, with what it adds to the boards and ratings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, cast

from sqlalchemy import Table, bindparam, select, update

from server.fairplay import DEFAULT_RULES, TimingRules
from server.storage.boards import Result, record_results
from server.storage.counting import counted_seats
from server.storage.database import Database
from server.storage.matches import UPDATE_SEAT
from server.storage.models import DailyEntry, Match
from server.storage.players import bots_among
from server.storage.ratings import changes_of_match, lock_ratings, update_ratings
from server.storage.reviews import review_seats, statuses_of

_DAILY_ENTRIES: Final = cast(Table, DailyEntry.__table__)
_SET_DAILY_ENTRY: Final = (
    update(_DAILY_ENTRIES)
    .where(
        _DAILY_ENTRIES.c.match_id == bindparam("at_match_id"),
        _DAILY_ENTRIES.c.player_id == bindparam("at_player_id"),
    )
)


@dataclass(frozen=True)
class FinishedGame:
    """One line of a finished match's table."""

    player_id: int
    rank: int
    score: int
    finish_ms: int
    won: bool


@dataclass(frozen=True)
class MatchEnd:
    """A match's end as stored: when (see ``Results.finish_match``), each player's new
    rating (empty for an unrated match or one of fewer than two results that count), and
    the results held off the boards and ratings."""

    ended_at: datetime
    ratings: list[dict[str, Any]]
    #: The status of each result that does not simply count (server.storage.counting):
    #: held for review, played while suspended.
    reviews: dict[int, str] = field(default_factory=dict)


def _utc(moment: datetime) -> datetime:
    """``moment`` with its zone: SQLite keeps none, and the server stores UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Results:
    """The end of each match: ranks, the daily entries, the boards and the ratings."""

    def __init__(self, database: Database, *, timing_rules: TimingRules = DEFAULT_RULES) -> None:
        self._database = database
        self._timing_rules = timing_rules

    async def finish_match(
        self,
        match_id: int,
        ended_at: datetime,
        table: Sequence[FinishedGame],
        *,
        ruleset: str,
        rated: bool,
        daily_date: date | None = None,
    ) -> MatchEnd:
        """In one transaction: store each rank, mark the match finished and, for a rated
        match, judge each person's game by its timing (``server.fairplay``: a flagged result
        is held for review) and fold the results that count (``server.storage.counting``:
        in a match with a bot in it the bots' only, less the held, voided and suspended
        ones) into the leaderboards and the ratings.

        Idempotent: for a match already finished it changes nothing and returns the end
        stored then, so a commit whose answer was lost can be run again. Rows are taken
        in player id order, so that matches ending at once never deadlock.

        The end stored may be a little later than ``ended_at``: never before the last
        rating of any of its players, so that the order of ``ended_at`` is the order in
        which matches were rated, and boards and ratings can be rebuilt in that order
        (``server.storage.rebuild``) to the same rows."""
        table = sorted(table, key=lambda game: game.player_id)
        ids = [game.player_id for game in table]
        locked = None
        async with self._database.write() as connection:
            # The write comes first: it takes the match's row before anything is read, so
            # two of these cannot both go on (on SQLite, BEGIN IMMEDIATE took the file).
            claimed = await connection.execute(
                update(Match)
                .where(Match.id == match_id, Match.status != "finished")
                .values(status="finished", ended_at=ended_at)
            )
            if claimed.rowcount == 0:
                stored = (
                    await connection.execute(select(Match.ended_at).where(Match.id == match_id))
                ).scalar_one()
                assert stored is not None  # finished matches have ended
                ratings = (
                    await changes_of_match(connection, ruleset=ruleset, match_id=match_id)
                    if rated
                    else []
                )
                return MatchEnd(_utc(stored), ratings, await statuses_of(connection, match_id))
            bots = await bots_among(connection, ids) if rated else set()
            reviews = (
                await review_seats(
                    connection,
                    match_id=match_id,
                    player_ids=ids,
                    bots=bots,
                    at=ended_at,
                    rules=self._timing_rules,
                )
                if rated
                else {}
            )
            scored = counted_seats(ids, bots=bots, reviewed_out=reviews)
            if rated and len(scored) >= 2:
                locked = await lock_ratings(
                    connection, ruleset=ruleset, player_ids=scored, at=ended_at
                )
                rated_last = [_utc(row.updated_at) for row in locked.values() if row.games]
                if rated_last and max(rated_last) >= ended_at:
                    ended_at = max(rated_last) + timedelta(microseconds=1)
                    await connection.execute(
                        update(Match).where(Match.id == match_id).values(ended_at=ended_at)
                    )
            # One statement for all the seats (run once per row of parameters; the
            # columns set are the keys), not one built and run for each.
            await connection.execute(
                UPDATE_SEAT,
                [
                    {"at_match_id": match_id, "at_player_id": game.player_id, "rank": game.rank}
                    for game in table
                ],
            )
            if daily_date is not None:
                await connection.execute(
                    _SET_DAILY_ENTRY,
                    [
                        {
                            "at_match_id": match_id,
                            "at_player_id": game.player_id,
                            "score": game.score,
                            "finish_ms": game.finish_ms,
                        }
                        for game in table
                    ],
                )
            if not rated:
                return MatchEnd(ended_at, [])
            counted_games = [game for game in table if game.player_id in scored]
            await record_results(
                connection,
                ruleset=ruleset,
                ended_at=ended_at,
                results=[
                    Result(game.player_id, game.score, game.finish_ms, game.won)
                    for game in counted_games
                ],
            )
            ratings = await update_ratings(
                connection,
                ruleset=ruleset,
                match_id=match_id,
                ranking=[(game.player_id, game.rank) for game in counted_games],
                at=ended_at,
                locked=locked,
            )
            return MatchEnd(ended_at, ratings, reviews)
