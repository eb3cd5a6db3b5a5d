"""The daily deals repository: the deal each day's challenge of a ruleset deals, once
chosen (server/daily.py), so that every process of a cluster, and a restarted one, deals
the same without solving again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.database import Database
from server.storage.models import DailyDeal


@dataclass(frozen=True)
class ChosenDeal:
    """A day's deal: its seed, and which of the day's candidates it is (0 the first)."""

    seed: bytes
    candidate: int


class DailyDeals:
    """The ``daily_deals`` table."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def chosen(self, *, ruleset: str, day: date) -> ChosenDeal | None:
        """The deal chosen for ``ruleset`` on ``day``, if one is."""
        async with self._database.read() as connection:
            return await self._chosen(connection, ruleset, day)

    async def choose(self, *, ruleset: str, day: date, deal: ChosenDeal) -> ChosenDeal:
        """Keep ``deal`` as the day's, unless another process kept one first: the one
        kept, either way."""
        try:
            async with self._database.write() as connection:
                await connection.execute(
                    insert(DailyDeal).values(
                        ruleset=ruleset, day=day, seed=deal.seed, candidate=deal.candidate
                    )
                )
            return deal
        except IntegrityError:  # another process chose first: theirs is the day's
            async with self._database.read() as connection:
                found = await self._chosen(connection, ruleset, day)
            assert found is not None  # a day's deal is never deleted
            return found

    @staticmethod
    async def _chosen(connection: AsyncConnection, ruleset: str, day: date) -> ChosenDeal | None:
        row = (
            await connection.execute(
                select(DailyDeal.seed, DailyDeal.candidate).where(
                    DailyDeal.ruleset == ruleset, DailyDeal.day == day
                )
            )
        ).first()
        return None if row is None else ChosenDeal(bytes(row.seed), int(row.candidate))
