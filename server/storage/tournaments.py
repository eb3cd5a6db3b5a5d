"""The tournaments repository: every query about tournaments, their entrants, their
rounds and the totals their standings add up.

A tournament's rows are ``tournaments`` (one) and ``tournament_entries`` (one per
entrant); its rounds are the ``matches`` of kind ``tournament`` that name it, with their
round number; the totals of its standings are summed from the results of those rounds
that finished (``match_players``), so that they can always be computed again from what
is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.database import Database
from server.storage.models import Match, MatchPlayer, Player, Tournament, TournamentEntry

#: The statuses of a round match that has not ended.
UNFINISHED: Final = ("lobby", "countdown", "running")


def _utc(moment: datetime | None) -> datetime | None:
    """``moment`` with its zone: SQLite keeps none, and the server stores UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class StoredTournament:
    """A tournament as stored: its ``tournaments`` row, and its entrants (player id,
    name) in the order they joined; which of them are declared bots, and which the host
    removed (player id -> reason)."""

    id: int
    code: str
    name: str
    host_id: int
    ruleset: str
    rounds: int
    max_players: int
    round_time_limit_s: int
    start_at: datetime | None
    status: str
    current_round: int
    entrants: list[tuple[int, str]]
    bots: bool = False  # whether bots may enter
    bot_entrants: frozenset[int] = frozenset()
    removed: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredRound:
    """The match of one round, as stored: the last one dealt for that round."""

    match_id: int
    code: str
    status: str
    ended_at: datetime | None


@dataclass(frozen=True)
class Totals:
    """What one entrant's finished rounds add up to."""

    score: int
    time_ms: int
    rounds: int


@dataclass(frozen=True)
class StandingRow:
    """One entrant's line of the standings, as ``record_standings`` stores it."""

    player_id: int
    total_score: int
    total_time_ms: int
    rounds_played: int
    rank: int


class TournamentRepository:
    """The tournaments' rows; each method is one transaction."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def create(
        self,
        *,
        code: str,
        name: str,
        host_id: int,
        ruleset: str,
        rounds: int,
        max_players: int,
        round_time_limit_s: int,
        start_at: datetime | None,
        created_at: datetime,
        bots: bool = False,
    ) -> int:
        """Store a new open tournament, before its first round (``bots``: whether
        declared bots may enter); its id."""
        async with self._database.write() as connection:
            tournament_id = (
                await connection.execute(
                    insert(Tournament)
                    .values(
                        code=code,
                        name=name,
                        host_id=host_id,
                        ruleset=ruleset,
                        rounds=rounds,
                        max_players=max_players,
                        round_time_limit_s=round_time_limit_s,
                        start_at=start_at,
                        status="open",
                        current_round=0,
                        created_at=created_at,
                        bots=bots,
                    )
                    .returning(Tournament.id)
                )
            ).scalar_one()
        return int(tournament_id)

    async def add_entrant(self, tournament_id: int, player_id: int, *, at: datetime) -> bool:
        """Enter ``player_id``; False if they had entered already."""
        try:
            async with self._database.write() as connection:
                await connection.execute(
                    insert(TournamentEntry).values(
                        tournament_id=tournament_id,
                        player_id=player_id,
                        joined_at=at,
                        total_score=0,
                        total_time_ms=0,
                        rounds_played=0,
                    )
                )
        except IntegrityError:
            return False
        return True

    async def remove_entrant(
        self, tournament_id: int, player_id: int, *, reason: str, at: datetime
    ) -> bool:
        """Mark ``player_id`` removed by the host, with ``reason``: kept out of every
        round dealt from now on, also by a tournament resumed elsewhere; False if they
        had no entry or were removed already."""
        async with self._database.write() as connection:
            removed = await connection.execute(
                update(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    TournamentEntry.player_id == player_id,
                    TournamentEntry.removed_at.is_(None),
                )
                .values(removed_at=at, removed_reason=reason)
            )
        return bool(removed.rowcount)

    async def update(self, tournament_id: int, **values: Any) -> None:
        """Write ``values`` (``status``, ``current_round``, ``started_at``, ...) to the
        tournament's row."""
        async with self._database.write() as connection:
            await connection.execute(
                update(Tournament).where(Tournament.id == tournament_id).values(**values)
            )

    async def finished(self, code: str) -> StoredTournament | None:
        """The finished tournament ``code`` (upper case), if there is one."""
        async with self._database.read() as connection:
            found = await self._tournaments(
                connection, (Tournament.code == code, Tournament.status == "finished")
            )
        return found[0] if found else None

    async def unfinished(self) -> list[StoredTournament]:
        """Every tournament open or running, oldest first."""
        async with self._database.read() as connection:
            return await self._tournaments(
                connection, (Tournament.status.in_(("open", "running")),)
            )

    async def _tournaments(
        self, connection: AsyncConnection, where: Sequence[Any]
    ) -> list[StoredTournament]:
        rows = (
            await connection.execute(
                select(Tournament.__table__).where(*where).order_by(Tournament.id)
            )
        ).all()
        entrants: dict[int, list[tuple[int, str]]] = {}
        bots: dict[int, set[int]] = {}
        removed: dict[int, dict[int, str]] = {}
        for entry in (
            await connection.execute(
                select(
                    TournamentEntry.tournament_id,
                    TournamentEntry.removed_at,
                    TournamentEntry.removed_reason,
                    Player.id,
                    Player.name,
                    Player.bot,
                )
                .join(Player, Player.id == TournamentEntry.player_id)
                .where(TournamentEntry.tournament_id.in_([row.id for row in rows]))
                .order_by(TournamentEntry.joined_at, Player.id)
            )
        ).all():
            entrants.setdefault(entry.tournament_id, []).append((entry.id, entry.name))
            if entry.bot:
                bots.setdefault(entry.tournament_id, set()).add(entry.id)
            if entry.removed_at is not None:
                removed.setdefault(entry.tournament_id, {})[entry.id] = entry.removed_reason or ""
        return [
            StoredTournament(
                id=row.id,
                code=row.code,
                name=row.name,
                host_id=row.host_id,
                ruleset=row.ruleset,
                rounds=row.rounds,
                max_players=row.max_players,
                round_time_limit_s=row.round_time_limit_s,
                start_at=_utc(row.start_at),
                status=row.status,
                current_round=row.current_round,
                entrants=entrants.get(row.id, []),
                bots=row.bots,
                bot_entrants=frozenset(bots.get(row.id, ())),
                removed=removed.get(row.id, {}),
            )
            for row in rows
        ]

    async def round(self, tournament_id: int, number: int) -> StoredRound | None:
        """The match last dealt for round ``number``, if one was stored."""
        async with self._database.read() as connection:
            row = (
                await connection.execute(
                    select(Match.id, Match.code, Match.status, Match.ended_at)
                    .where(Match.tournament_id == tournament_id, Match.round == number)
                    .order_by(Match.id.desc())
                    .limit(1)
                )
            ).first()
        if row is None:
            return None
        return StoredRound(row.id, row.code, row.status, _utc(row.ended_at))

    async def abandon_round(self, match_id: int, *, at: datetime) -> None:
        """Mark a round match that never ended abandoned (a finished one stays)."""
        async with self._database.write() as connection:
            await connection.execute(
                update(Match)
                .where(Match.id == match_id, Match.status.in_(UNFINISHED))
                .values(status="abandoned", ended_at=at)
            )

    async def totals(self, tournament_id: int) -> dict[int, Totals]:
        """Each player's totals over the tournament's finished rounds: the sum of their
        scores and finish times, and how many rounds they played."""
        async with self._database.read() as connection:
            rows = (
                await connection.execute(
                    select(
                        MatchPlayer.player_id,
                        func.sum(MatchPlayer.score).label("score"),
                        func.sum(MatchPlayer.finish_ms).label("time_ms"),
                        func.count().label("rounds"),
                    )
                    .join(Match, Match.id == MatchPlayer.match_id)
                    .where(Match.tournament_id == tournament_id, Match.status == "finished")
                    .group_by(MatchPlayer.player_id)
                )
            ).all()
        return {
            row.player_id: Totals(int(row.score or 0), int(row.time_ms or 0), int(row.rounds))
            for row in rows
        }

    async def record_standings(self, tournament_id: int, rows: Sequence[StandingRow]) -> None:
        """Store the standings on the entrants' rows, in player id order (two
        transactions writing the same rows never wait on each other in a cycle)."""
        async with self._database.write() as connection:
            for row in sorted(rows, key=lambda row: row.player_id):
                await connection.execute(
                    update(TournamentEntry)
                    .where(
                        TournamentEntry.tournament_id == tournament_id,
                        TournamentEntry.player_id == row.player_id,
                    )
                    .values(
                        total_score=row.total_score,
                        total_time_ms=row.total_time_ms,
                        rounds_played=row.rounds_played,
                        rank=row.rank,
                    )
                )
