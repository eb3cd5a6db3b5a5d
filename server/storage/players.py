"""The players repository: registration, lookups by token or name, and when a player
registered."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.database import Database
from server.storage.models import Player

#: Every name a player can have, those registered before names had to start with a
#: letter or digit included. Lookups of anything else find nobody without a query (a NUL
#: or a lone surrogate is no text the database takes).
STORED_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,24}")


class NameTaken(Exception):
    """Another player has this name, in some case."""


@dataclass(frozen=True)
class PlayerRecord:
    id: int
    name: str
    #: A declared bot (docs/fair-play.md): fixed at registration.
    bot: bool = False


class Players:
    """The ``players`` table."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def register(
        self, name: str, token_hash: str, now: datetime, *, bot: bool = False
    ) -> PlayerRecord:
        """Store a new player, a person or a ``bot``; raise :class:`NameTaken` if the
        name is, in any case."""
        try:
            async with self._database.write() as connection:
                result = await connection.execute(
                    insert(Player)
                    .values(name=name, token_hash=token_hash, created_at=now, bot=bot)
                    .returning(Player.id)
                )
                return PlayerRecord(result.scalar_one(), name, bot)
        except IntegrityError:
            raise NameTaken(name) from None

    async def by_token_hash(self, token_hash: str) -> PlayerRecord | None:
        async with self._database.read() as connection:
            row = (
                await connection.execute(
                    select(Player.id, Player.name, Player.bot).where(
                        Player.token_hash == token_hash
                    )
                )
            ).first()
        return None if row is None else PlayerRecord(row.id, row.name, row.bot)

    async def named(self, name: str) -> PlayerRecord | None:
        """The player called ``name`` in any case (names are unique in any case)."""
        if STORED_NAME.fullmatch(name) is None:
            return None
        async with self._database.read() as connection:
            row = (
                await connection.execute(
                    select(Player.id, Player.name, Player.bot).where(
                        func.lower(Player.name) == name.lower()
                    )
                )
            ).first()
        return None if row is None else PlayerRecord(row.id, row.name, row.bot)

    async def registered_at(self, player_id: int) -> datetime | None:
        """When the player registered (UTC), or None if no player has that id."""
        async with self._database.read() as connection:
            found = (
                await connection.execute(
                    select(Player.created_at).where(Player.id == player_id)
                )
            ).scalar_one_or_none()
        if found is None or found.tzinfo is not None:
            return found
        return found.replace(tzinfo=UTC)  # SQLite keeps no zone; every time is stored in UTC


async def bots_among(connection: AsyncConnection, player_ids: Collection[int]) -> set[int]:
    """Which of ``player_ids`` are declared bots (in the caller's transaction)."""
    if not player_ids:
        return set()
    rows = await connection.execute(
        select(Player.id).where(Player.id.in_(list(player_ids)), Player.bot.is_(True))
    )
    return {row.id for row in rows}

