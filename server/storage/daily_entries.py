"""The daily repository: the server's secrets, and each player's daily challenge entry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.counting import kept_by_review
from server.storage.database import Database
from server.storage.models import DailyEntry, Player, SeatReview, ServerSecret


class AlreadyEntered(Exception):
    """The player has an entry for this ruleset and day already."""


@dataclass(frozen=True)
class DailyResult:
    """A finished entry of a day's challenge."""

    player_id: int
    name: str
    score: int
    finish_ms: int | None
    bot: bool = False


class DailyEntries:
    """The ``daily_entries`` and ``server_secrets`` tables."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def secret(self, name: str, new: bytes) -> bytes:
        """The secret called ``name``: the one stored, or else ``new``, stored now (when
        two processes store one at once, both get the first one stored)."""
        async with self._database.read() as connection:
            found = await self._secret(connection, name)
        if found is not None:
            return found
        try:
            async with self._database.write() as connection:
                await connection.execute(insert(ServerSecret).values(name=name, value=new))
            return new
        except IntegrityError:  # another process made it first: use theirs
            async with self._database.read() as connection:
                found = await self._secret(connection, name)
            assert found is not None  # secrets are never deleted
            return found

    @staticmethod
    async def _secret(connection: AsyncConnection, name: str) -> bytes | None:
        found = (
            await connection.execute(select(ServerSecret.value).where(ServerSecret.name == name))
        ).scalar_one_or_none()
        return None if found is None else bytes(found)

    async def played(self, *, ruleset: str, day: date, player_id: int) -> bool:
        """Whether the player has an entry for ``ruleset`` on ``day``."""
        async with self._database.read() as connection:
            found = (
                await connection.execute(
                    select(DailyEntry.match_id).where(
                        DailyEntry.ruleset == ruleset,
                        DailyEntry.day == day,
                        DailyEntry.player_id == player_id,
                    )
                )
            ).first()
        return found is not None

    async def enter(self, *, ruleset: str, day: date, player_id: int, match_id: int) -> None:
        """Store the player's entry; raise :class:`AlreadyEntered` if they have one."""
        try:
            async with self._database.write() as connection:
                await connection.execute(
                    insert(DailyEntry).values(
                        ruleset=ruleset, day=day, player_id=player_id, match_id=match_id
                    )
                )
        except IntegrityError:
            raise AlreadyEntered(f"player {player_id} has entered {ruleset} on {day}") from None

    async def results(
        self, *, ruleset: str, day: date, registered_before: datetime, limit: int
    ) -> list[DailyResult]:
        """The day's finished entries that count, best first: score (higher first), then
        finish time (earlier first), then player id. An entry counts when its player
        registered before ``registered_before`` and it is not held for review, voided or
        played while suspended (``server.storage.counting``)."""
        async with self._database.read() as connection:
            rows = (
                await connection.execute(
                    select(
                        DailyEntry.player_id,
                        Player.name,
                        DailyEntry.score,
                        DailyEntry.finish_ms,
                        Player.bot,
                    )
                    .join(Player, Player.id == DailyEntry.player_id)
                    .outerjoin(
                        SeatReview,
                        (SeatReview.match_id == DailyEntry.match_id)
                        & (SeatReview.player_id == DailyEntry.player_id),
                    )
                    .where(
                        DailyEntry.ruleset == ruleset,
                        DailyEntry.day == day,
                        DailyEntry.score.is_not(None),
                        Player.created_at < registered_before,
                        kept_by_review(),
                    )
                    .order_by(DailyEntry.score.desc(), DailyEntry.finish_ms, DailyEntry.player_id)
                    .limit(limit)
                )
            ).all()
        return [
            DailyResult(row.player_id, row.name, row.score, row.finish_ms, row.bot) for row in rows
        ]
