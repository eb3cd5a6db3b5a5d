"""Queries: everything the server reads from and writes to the database, but actions.

(Actions go through ``Journal``, which batches them.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.leaderboard import Result, record_results
from server.rating import changes_of_match, lock_ratings, update_ratings
from server.storage.models import ActionRecord, DailyEntry, Match, MatchPlayer, Player

#: Every name a player can have, those registered before names had to start with a
#: letter or digit included. Lookups of anything else find nobody without a query (a NUL
#: or a lone surrogate is no text the database takes).
STORED_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,24}")
#: Every code a match can have.
STORED_CODE: Final = re.compile(r"[A-Z0-9]{1,8}")


class NameTaken(Exception):
    """Another player has this name, in some case."""


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
    """A match's end as stored: when (see ``Store.finish_match``), and each player's
    new rating (empty for an unrated match or one of a single player)."""

    ended_at: datetime
    ratings: list[dict[str, Any]]


def _utc(moment: datetime) -> datetime:
    """``moment`` with its zone: SQLite keeps none, and the server stores UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class StoredMatch:
    """A match as stored: its ``matches`` row, its ``match_players`` rows (with the
    player's ``name``) and its ``actions`` rows (by player, then seq)."""

    match: Any
    seats: list[Any]
    actions: list[Any]


@dataclass(frozen=True)
class PlayerRecord:
    id: int
    name: str


class Store:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def register_player(self, name: str, token_hash: str, now: datetime) -> PlayerRecord:
        try:
            async with self.engine.begin() as connection:
                result = await connection.execute(
                    insert(Player)
                    .values(name=name, token_hash=token_hash, created_at=now)
                    .returning(Player.id)
                )
                return PlayerRecord(result.scalar_one(), name)
        except IntegrityError:
            raise NameTaken(name) from None

    async def player_by_token_hash(self, token_hash: str) -> PlayerRecord | None:
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(Player.id, Player.name).where(Player.token_hash == token_hash)
                )
            ).first()
        return None if row is None else PlayerRecord(row.id, row.name)

    async def player_named(self, name: str) -> PlayerRecord | None:
        """The player called ``name`` in any case (names are unique in any case)."""
        if STORED_NAME.fullmatch(name) is None:
            return None
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(Player.id, Player.name).where(func.lower(Player.name) == name.lower())
                )
            ).first()
        return None if row is None else PlayerRecord(row.id, row.name)

    async def create_match(self, **values: Any) -> int:
        async with self.engine.begin() as connection:
            result = await connection.execute(insert(Match).values(**values).returning(Match.id))
            return int(result.scalar_one())

    async def add_match_player(self, match_id: int, player_id: int, now: datetime) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                insert(MatchPlayer).values(
                    match_id=match_id,
                    player_id=player_id,
                    joined_at=now,
                    score=0,
                    placed=0,
                    redeals=0,
                    moves=0,
                    won=False,
                )
            )

    async def remove_match_player(self, match_id: int, player_id: int) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                delete(MatchPlayer).where(
                    MatchPlayer.match_id == match_id, MatchPlayer.player_id == player_id
                )
            )

    async def set_match_status(self, match_id: int, status: str, **times: datetime) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                update(Match).where(Match.id == match_id).values(status=status, **times)
            )

    async def set_ready(self, match_id: int, player_id: int, ready: bool) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                update(MatchPlayer)
                .where(MatchPlayer.match_id == match_id, MatchPlayer.player_id == player_id)
                .values(ready=ready)
            )

    async def set_host(self, match_id: int, host_id: int) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                update(Match).where(Match.id == match_id).values(host_id=host_id)
            )

    async def unfinished_matches(self, *, kinds: Sequence[str]) -> list[StoredMatch]:
        """Every match of these kinds still in its lobby or running, with its seats (in
        the order they were taken, names included) and every stored action, for a
        restart to restore them."""
        async with self.engine.connect() as connection:
            matches = (
                await connection.execute(
                    select(Match.__table__)
                    .where(Match.status.in_(("lobby", "running")), Match.kind.in_(kinds))
                    .order_by(Match.id)
                )
            ).all()
            ids = [match.id for match in matches]
            seats: dict[int, list[Any]] = {}
            for seat in (
                await connection.execute(
                    select(MatchPlayer.__table__, Player.name)
                    .join(Player, Player.id == MatchPlayer.player_id)
                    .where(MatchPlayer.match_id.in_(ids))
                    .order_by(MatchPlayer.joined_at, MatchPlayer.player_id)
                )
            ).all():
                seats.setdefault(seat.match_id, []).append(seat)
            actions: dict[int, list[Any]] = {}
            for action in (
                await connection.execute(
                    select(ActionRecord.__table__)
                    .where(ActionRecord.match_id.in_(ids))
                    .order_by(ActionRecord.match_id, ActionRecord.player_id, ActionRecord.seq)
                )
            ).all():
                actions.setdefault(action.match_id, []).append(action)
        return [
            StoredMatch(match, seats.get(match.id, []), actions.get(match.id, []))
            for match in matches
        ]

    async def save_result(self, match_id: int, player_id: int, **result: Any) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                update(MatchPlayer)
                .where(MatchPlayer.match_id == match_id, MatchPlayer.player_id == player_id)
                .values(**result)
            )

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
        match, fold the results into the leaderboards and the ratings.

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
        async with self.engine.begin() as connection:
            # The write comes first: it takes the match's row (and, on SQLite, the
            # database) before anything is read, so two of these cannot both go on.
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
                return MatchEnd(_utc(stored), ratings)
            if rated and len(table) >= 2:
                locked = await lock_ratings(
                    connection, ruleset=ruleset, player_ids=ids, at=ended_at
                )
                rated_last = [_utc(row.updated_at) for row in locked.values() if row.games]
                if rated_last and max(rated_last) >= ended_at:
                    ended_at = max(rated_last) + timedelta(microseconds=1)
                    await connection.execute(
                        update(Match).where(Match.id == match_id).values(ended_at=ended_at)
                    )
            for game in table:
                await connection.execute(
                    update(MatchPlayer)
                    .where(
                        MatchPlayer.match_id == match_id, MatchPlayer.player_id == game.player_id
                    )
                    .values(rank=game.rank)
                )
            if daily_date is not None:
                for game in table:
                    await connection.execute(
                        update(DailyEntry)
                        .where(
                            DailyEntry.match_id == match_id, DailyEntry.player_id == game.player_id
                        )
                        .values(score=game.score, finish_ms=game.finish_ms)
                    )
            if not rated:
                return MatchEnd(ended_at, [])
            await record_results(
                connection,
                ruleset=ruleset,
                ended_at=ended_at,
                results=[
                    Result(game.player_id, game.score, game.finish_ms, game.won) for game in table
                ],
            )
            ratings = await update_ratings(
                connection,
                ruleset=ruleset,
                match_id=match_id,
                ranking=[(game.player_id, game.rank) for game in table],
                at=ended_at,
                locked=locked,
            )
            return MatchEnd(ended_at, ratings)

    async def replay(self, code: str) -> dict[str, Any] | None:
        """The stored match ``code`` with its results and every action (seed included)."""
        if STORED_CODE.fullmatch(code) is None:
            return None
        async with self.engine.connect() as connection:
            match = (
                await connection.execute(select(Match.__table__).where(Match.code == code))
            ).first()
            if match is None:
                return None
            players = (
                await connection.execute(
                    select(MatchPlayer.__table__, Player.name)
                    .join(Player, Player.id == MatchPlayer.player_id)
                    .where(MatchPlayer.match_id == match.id)
                    .order_by(MatchPlayer.rank.nulls_last(), MatchPlayer.player_id)
                )
            ).all()
            actions = (
                await connection.execute(
                    select(ActionRecord.__table__)
                    .where(ActionRecord.match_id == match.id)
                    .order_by(ActionRecord.player_id, ActionRecord.seq)
                )
            ).all()
        return {
            "match": match._asdict(),
            "players": [row._asdict() for row in players],
            "actions": [row._asdict() for row in actions],
        }
