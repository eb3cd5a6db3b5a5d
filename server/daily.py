"""The daily challenge: one deal a day per ruleset, the same for everyone, played solo once.

Its seed is an HMAC of the day and ruleset under a server secret made once and kept in
the database, so nobody can compute tomorrow's deal, and every server process (and a
restarted one) deals the same. A player's attempt is a one-seat match; a unique row per
(ruleset, day, player) refuses a second attempt.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import date
from typing import Any, Final

from gaps import Ruleset, Seed
from server.clock import Clock
from server.errors import ServerError, bots_not_allowed
from server.lobby import Lobby
from server.match import Match, MatchOptions
from server.storage.daily_entries import AlreadyEntered
from server.storage.store import Store

SECRET_NAME: Final = "daily"
TIME_LIMIT_S: Final = 1800
#: The ``format`` of a day's board, as published and signed.
BOARD_FORMAT: Final = "gaps-daily/1"


def daily_seed(key: bytes, ruleset: str, day: date) -> Seed:
    digest = hmac.new(key, f"{day.isoformat()}/{ruleset}".encode(), hashlib.sha256).digest()
    return Seed(digest[:10])


class Daily:
    def __init__(self, *, store: Store, lobby: Lobby, clock: Clock, countdown_s: int) -> None:
        self._store = store
        self._clock = clock
        self._lobby = lobby
        self._countdown_s = countdown_s
        self._key: bytes | None = None

    async def key(self) -> bytes:
        if self._key is None:
            self._key = await self._store.daily.secret(SECRET_NAME, secrets.token_bytes(32))
        return self._key

    async def start(
        self, player_id: int, name: str, ruleset: Ruleset, *, bot: bool = False
    ) -> Match:
        """Deal today's challenge to the player, once per day and ruleset; never to a
        declared ``bot`` (its board is the people's)."""
        if bot:
            raise bots_not_allowed(
                "the daily challenge is for people: bots may not play it", refused_by="daily"
            )
        day = self._clock.today()
        if await self._store.daily.played(ruleset=ruleset.name, day=day, player_id=player_id):
            raise ServerError(
                "daily_already_played", f"you have played today's {ruleset} challenge ({day})"
            )
        options = MatchOptions(
            ruleset=ruleset,
            max_players=1,
            time_limit_s=TIME_LIMIT_S,
            win_by="score",
            public=False,
            countdown_s=self._countdown_s,
        )
        match = await self._lobby.create(
            player_id,
            options,
            daily_seed(await self.key(), ruleset.name, day),
            seats=[(player_id, name, False)],
            connected=False,  # the session attaches the player's connection
            kind="daily",
            daily_date=day,
            rated=True,
        )
        try:
            await self._store.daily.enter(
                ruleset=ruleset.name, day=day, player_id=player_id, match_id=match.id
            )
        except AlreadyEntered:
            await match.abandon()
            raise ServerError(
                "daily_already_played", f"you have played today's {ruleset} challenge ({day})"
            ) from None
        await match.start()
        return match

    async def board(self, ruleset: str, day: date, *, limit: int = 100) -> dict[str, Any]:
        """The day's ranking: score (higher first), then finish time (earlier first); and
        the deal's ``par`` (``score``, ``exact``) once one attempt at it has been solved;
        and when it was read."""
        rows = await self._store.daily.results(ruleset=ruleset, day=day, limit=limit)
        entries: list[dict[str, Any]] = []
        for position, row in enumerate(rows, start=1):
            tied = entries and (entries[-1]["score"], entries[-1]["finish_ms"]) == (
                row.score,
                row.finish_ms,
            )
            entries.append(
                {
                    "rank": entries[-1]["rank"] if tied else position,
                    "player_id": row.player_id,
                    "name": row.name,
                    "bot": row.bot,
                    "score": row.score,
                    "finish_ms": row.finish_ms,
                }
            )
        par = await self._store.matches.daily_par(ruleset=ruleset, day=day)
        return {
            "format": BOARD_FORMAT,
            "ruleset": ruleset,
            "day": day.isoformat(),
            "as_of": self._clock.now().isoformat(),
            "par": None if par is None else {"score": par.score, "exact": par.exact},
            "entries": entries,
        }
