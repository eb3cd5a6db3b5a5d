"""The ratings repository: openskill's Plackett-Luce model, updated from each rated
match's ranking (in the transaction that stores the match's end), and read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from openskill.models import PlackettLuce
from sqlalchemy import Row, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from gaps_protocol.times import format_time
from server.storage.database import Database
from server.storage.models import Match, Rating, RatingChange

MODEL: Final = PlackettLuce()
#: A rating is provisional (shown as such) until the player has this many rated games.
PROVISIONAL_GAMES: Final = 10


async def update_ratings(
    connection: AsyncConnection,
    *,
    ruleset: str,
    match_id: int,
    ranking: Sequence[tuple[int, int]],
    at: datetime,
    locked: Mapping[int, Row[Any]] | None = None,
) -> list[dict[str, Any]]:
    """Rate the match's (player id, rank) table (ties share a rank) in the caller's
    transaction; returns each player's new rating. A match of one player rates nobody.

    The players' rating rows are made if missing, then locked, in player id order: two
    matches of one player that end at once rate one after the other (no update lost), and
    two that share players cannot each hold a row the other waits for. A caller that has
    locked them already in this transaction (``lock_ratings``) passes them as ``locked``."""
    if len(ranking) < 2:
        return []
    known = locked or await lock_ratings(
        connection, ruleset=ruleset, player_ids=[player_id for player_id, _ in ranking], at=at
    )
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    teams = [
        [MODEL.rating(mu=known[pid].mu, sigma=known[pid].sigma)] for pid, _ in ranking
    ]
    rated = MODEL.rate(teams, ranks=[rank for _, rank in ranking])
    changes = []
    for (player_id, rank), [new] in zip(ranking, rated, strict=True):
        games = known[player_id].games + 1
        await connection.execute(
            update(Rating)
            .where(Rating.ruleset == ruleset, Rating.player_id == player_id)
            .values(
                games=games, mu=new.mu, sigma=new.sigma, ordinal=new.ordinal(), updated_at=at
            )
        )
        await connection.execute(
            insert(RatingChange).values(
                player_id=player_id,
                ruleset=ruleset,
                match_id=match_id,
                rank=rank,
                mu=new.mu,
                sigma=new.sigma,
                ordinal=new.ordinal(),
                at=at,
            )
        )
        changes.append(view(player_id, ruleset, new.mu, new.sigma, new.ordinal(), games))
    return changes


async def lock_ratings(
    connection: AsyncConnection, *, ruleset: str, player_ids: Sequence[int], at: datetime
) -> dict[int, Row[Any]]:
    """The players' rating rows in ``ruleset``, made (unrated: 0 games) where missing,
    then locked until the caller's transaction ends, in player id order."""
    ids = sorted(player_ids)
    default = MODEL.rating()
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    for player_id in ids:
        await connection.execute(
            insert(Rating)
            .values(
                player_id=player_id,
                ruleset=ruleset,
                games=0,
                mu=default.mu,
                sigma=default.sigma,
                ordinal=default.ordinal(),
                updated_at=at,
            )
            .on_conflict_do_nothing(index_elements=["player_id", "ruleset"])
        )
    return {
        row.player_id: row
        for row in (
            await connection.execute(
                select(Rating.__table__)
                .where(Rating.ruleset == ruleset, Rating.player_id.in_(ids))
                .order_by(Rating.player_id)
                .with_for_update()
            )
        ).all()
    }


async def changes_of_match(
    connection: AsyncConnection, *, ruleset: str, match_id: int
) -> list[dict[str, Any]]:
    """What ``update_ratings`` returned for ``match_id``, read back (for a match end that
    is stored again after its first commit went unanswered)."""
    rows = (
        await connection.execute(
            select(RatingChange.__table__, Rating.games)
            .join(
                Rating,
                (Rating.player_id == RatingChange.player_id) & (Rating.ruleset == ruleset),
            )
            .where(RatingChange.match_id == match_id)
            .order_by(RatingChange.id)
        )
    ).all()
    return [view(r.player_id, ruleset, r.mu, r.sigma, r.ordinal, r.games) for r in rows]


def view(
    player_id: int, ruleset: str, mu: float, sigma: float, ordinal: float, games: int
) -> dict[str, Any]:
    return {
        "player_id": player_id,
        "ruleset": ruleset,
        "mu": round(mu, 3),
        "sigma": round(sigma, 3),
        "ordinal": round(ordinal, 3),
        "games": games,
        "provisional": games < PROVISIONAL_GAMES,
    }


async def rating_of(connection: AsyncConnection, player_id: int) -> dict[str, Any]:
    """A player's rating in every ruleset played, with its history (newest first)."""
    rows = (
        await connection.execute(
            select(Rating.__table__).where(Rating.player_id == player_id).order_by(Rating.ruleset)
        )
    ).all()
    history = (
        await connection.execute(
            select(RatingChange.__table__, Match.code.label("match_code"))
            .join(Match, Match.id == RatingChange.match_id)
            .where(RatingChange.player_id == player_id)
            .order_by(RatingChange.id.desc())
            .limit(200)
        )
    ).all()
    return {
        "ratings": [view(r.player_id, r.ruleset, r.mu, r.sigma, r.ordinal, r.games) for r in rows],
        "history": [
            {
                "ruleset": h.ruleset,
                "match_id": h.match_id,
                "match_code": h.match_code,
                "rank": h.rank,
                "mu": round(h.mu, 3),
                "sigma": round(h.sigma, 3),
                "ordinal": round(h.ordinal, 3),
                "at": format_time(h.at),
            }
            for h in history
        ],
    }


class Ratings:
    """The ``ratings`` and ``rating_history`` tables, for reading.

    They are written by ``Results.finish_match``, with the match's end."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def of_player(self, player_id: int) -> dict[str, Any]:
        """A player's rating in every ruleset played, with its history; see
        :func:`rating_of`."""
        async with self._database.read() as connection:
            return await rating_of(connection, player_id)

    async def ordinal(self, player_id: int, ruleset: str) -> float | None:
        """The player's rating in ``ruleset`` as one number (None: never rated)."""
        async with self._database.read() as connection:
            found = (
                await connection.execute(
                    select(Rating.ordinal).where(
                        Rating.player_id == player_id, Rating.ruleset == ruleset
                    )
                )
            ).scalar_one_or_none()
        return None if found is None else float(found)
