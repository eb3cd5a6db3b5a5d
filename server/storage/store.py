"""The repositories of one database, and (until every caller takes a repository) the
methods callers used before there were repositories.

Actions go through ``Journal``, which batches them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.boards import Boards
from server.storage.daily_entries import DailyEntries
from server.storage.database import Database
from server.storage.matches import STORED_CODE, Matches, StoredMatch
from server.storage.players import STORED_NAME, NameTaken, PlayerRecord, Players
from server.storage.ratings import PROVISIONAL_GAMES, Ratings
from server.storage.results import FinishedGame, MatchEnd, Results

__all__ = [
    "STORED_CODE",
    "STORED_NAME",
    "FinishedGame",
    "MatchEnd",
    "NameTaken",
    "PlayerRecord",
    "Store",
    "StoredMatch",
]


class Store:
    """Every repository of ``database``.

    :param database: the database, or (until every caller passes one) its engine.
    """

    def __init__(self, database: Database | AsyncEngine) -> None:
        self.database = database if isinstance(database, Database) else Database.of(database)
        #: Kept for callers that have not moved their SQL into a repository yet.
        self.engine = self.database.engine
        self.players = Players(self.database)
        self.matches = Matches(self.database)
        self.results = Results(self.database)
        self.boards = Boards(self.database, provisional_games=PROVISIONAL_GAMES)
        self.ratings = Ratings(self.database)
        self.daily = DailyEntries(self.database)

    # The methods below delegate to the repositories, under the names callers use today.

    async def register_player(self, name: str, token_hash: str, now: datetime) -> PlayerRecord:
        return await self.players.register(name, token_hash, now)

    async def player_by_token_hash(self, token_hash: str) -> PlayerRecord | None:
        return await self.players.by_token_hash(token_hash)

    async def player_named(self, name: str) -> PlayerRecord | None:
        return await self.players.named(name)

    async def create_match(self, **values: Any) -> int:
        return await self.matches.create(**values)

    async def add_match_player(self, match_id: int, player_id: int, now: datetime) -> None:
        await self.matches.add_player(match_id, player_id, now)

    async def remove_match_player(self, match_id: int, player_id: int) -> None:
        await self.matches.remove_player(match_id, player_id)

    async def set_match_status(self, match_id: int, status: str, **times: datetime) -> None:
        await self.matches.set_status(match_id, status, **times)

    async def set_ready(self, match_id: int, player_id: int, ready: bool) -> None:
        await self.matches.set_ready(match_id, player_id, ready)

    async def set_host(self, match_id: int, host_id: int) -> None:
        await self.matches.set_host(match_id, host_id)

    async def unfinished_matches(
        self, *, kinds: Sequence[str], ids: Collection[int] | None = None
    ) -> list[StoredMatch]:
        return await self.matches.unfinished(kinds=kinds, ids=ids)

    async def save_result(self, match_id: int, player_id: int, **result: Any) -> None:
        await self.matches.save_result(match_id, player_id, **result)

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
        return await self.results.finish_match(
            match_id, ended_at, table, ruleset=ruleset, rated=rated, daily_date=daily_date
        )

    async def replay(self, code: str) -> dict[str, Any] | None:
        return await self.matches.replay(code)
