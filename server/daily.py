"""The daily challenge: one deal a day per ruleset, the same for everyone, played solo once.

Its seed is an HMAC of the day and ruleset under a server secret made once and kept in
the database, so nobody can compute tomorrow's deal, and every server process (and a
restarted one) deals the same. A player's attempt is a one-seat match; a unique row per
(ruleset, day, player) refuses a second attempt.

The deal is always winnable (``winnable_deal``): the day's candidates are HMACs of the
day, the ruleset and their number 0, 1, 2..., and the first the solver proves winnable
without redeal is the day's; the choice is kept in the database, so that every process
deals the same without solving again.

Only accounts registered before the day began (00:00 UTC) are ranked on its board: an
account made during the day may play, unranked (its match unrated), and is told why.
Otherwise anyone could make a free account, look at the day's deal with it, and play it
with their own knowing it (docs/fair-play.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any, Final

from gaps import Ruleset, Seed
from gaps_protocol.messages.views import DailyAttempt
from gaps_protocol.times import format_time
from server.clock import Clock
from server.deals import DealProver, NoWinnableDeal
from server.errors import ServerError, bots_not_allowed
from server.lobby import Lobby
from server.match import Match, MatchOptions
from server.storage.daily_deals import ChosenDeal
from server.storage.daily_entries import AlreadyEntered
from server.storage.store import Store

SECRET_NAME: Final = "daily"
TIME_LIMIT_S: Final = 1800
#: How many of a day's candidates may be solved before giving up.
MAX_CANDIDATES: Final = 64
#: The ``format`` of a day's board, as published and signed.
BOARD_FORMAT: Final = "gaps-daily/1"


def daily_seed(key: bytes, ruleset: str, day: date, candidate: int = 0) -> Seed:
    """The day's ``candidate``-th deal (0: the first, as the days before winnable deals)."""
    text = f"{day.isoformat()}/{ruleset}" + (f"/{candidate}" if candidate else "")
    digest = hmac.new(key, text.encode(), hashlib.sha256).digest()
    return Seed(digest[:10])


def day_began(day: date) -> datetime:
    """When ``day`` began: 00:00 UTC. Accounts registered before it are ranked that day."""
    return datetime.combine(day, time(), UTC)


@dataclass(frozen=True)
class Attempt:
    """A player's attempt at a day's challenge, dealt."""

    match: Match
    day: date
    #: Why the result stays off the day's board, or None: it is ranked.
    reason: str | None = None

    @property
    def ranked(self) -> bool:
        return self.reason is None

    def view(self) -> DailyAttempt:
        """The ``daily`` member of the ``daily_started`` reply."""
        return DailyAttempt(day=self.day, ranked=self.ranked, reason=self.reason)


def unranked_reason(registered_at: datetime, day: date) -> str | None:
    """Why an account registered at ``registered_at`` is not ranked on ``day``'s board,
    or None when it is."""
    if registered_at < day_began(day):
        return None
    return (
        f"your account was registered at {format_time(registered_at)}, "
        f"after the {day} challenge began (00:00 UTC): you may play it, but your result "
        "stays off its board. Only accounts registered before a day begins are ranked on it, "
        "so that nobody can look at the deal first with a new account; your results count "
        "from tomorrow's challenge"
    )


class Daily:
    def __init__(
        self, *, store: Store, lobby: Lobby, clock: Clock, countdown_s: int, prover: DealProver
    ) -> None:
        self._store = store
        self._clock = clock
        self._lobby = lobby
        self._countdown_s = countdown_s
        self._key: bytes | None = None
        self._prover = prover
        #: The day's deal of each ruleset, once chosen (or being chosen), by (ruleset, day).
        self._deals: dict[tuple[str, date], asyncio.Task[Seed]] = {}

    async def key(self) -> bytes:
        if self._key is None:
            self._key = await self._store.daily.secret(SECRET_NAME, secrets.token_bytes(32))
        return self._key

    async def winnable_deal(self, ruleset: str, day: date) -> Seed:
        """The day's deal: the first candidate proven winnable, as kept in the database
        (chosen now, if no process did yet). Requests at once share one choice."""
        key = (ruleset, day)
        choice = self._deals.get(key)
        if choice is None or (choice.done() and (choice.cancelled() or choice.exception())):
            for older in [k for k in self._deals if k[1] < day]:  # yesterday's are done
                del self._deals[older]
            choice = self._deals[key] = asyncio.ensure_future(self._choose(ruleset, day))
        try:
            return await asyncio.shield(choice)
        except (NoWinnableDeal, BrokenExecutor):  # the solver failed: the next request tries again
            raise ServerError(
                "deals_not_ready",
                f"today's {ruleset} challenge has no deal yet: try again in a moment",
                retry_after_ms=5_000,
            ) from None

    async def _choose(self, ruleset: str, day: date) -> Seed:
        deals = self._store.daily_deals
        chosen = await deals.chosen(ruleset=ruleset, day=day)
        if chosen is None:
            key = await self.key()
            candidate, seed = await self._prover.first_winnable(
                (daily_seed(key, ruleset, day, n) for n in range(MAX_CANDIDATES)), ruleset
            )
            chosen = await deals.choose(
                ruleset=ruleset, day=day, deal=ChosenDeal(seed.data, candidate)
            )
        return Seed(chosen.seed)

    async def start(
        self, player_id: int, name: str, ruleset: Ruleset, *, bot: bool = False
    ) -> Attempt:
        """Deal today's challenge to the player, once per day and ruleset; never to a
        declared ``bot`` (its board is the people's). The attempt is ranked, and its
        match rated, when the player registered before the day began."""
        if bot:
            raise bots_not_allowed(
                "the daily challenge is for people: bots may not play it", refused_by="daily"
            )
        day = self._clock.today()
        if await self._store.daily.played(ruleset=ruleset.name, day=day, player_id=player_id):
            raise ServerError(
                "daily_already_played", f"you have played today's {ruleset} challenge ({day})"
            )
        registered_at = await self._store.players.registered_at(player_id)
        if registered_at is None:  # a session's player is registered: never, in truth
            raise ServerError("no_such_player", f"no player has id {player_id}")
        reason = unranked_reason(registered_at, day)
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
            await self.winnable_deal(ruleset.name, day),
            seats=[(player_id, name, False)],
            connected=False,  # the session attaches the player's connection
            kind="daily",
            daily_date=day,
            rated=reason is None,
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
        return Attempt(match, day, reason)

    async def board(self, ruleset: str, day: date, *, limit: int = 100) -> dict[str, Any]:
        """The day's ranking of the accounts registered before it began: score (higher
        first), then finish time (earlier first); the deal's ``par`` (``score``,
        ``exact``) once one attempt at it has been solved; and when it was read."""
        began = day_began(day)
        rows = await self._store.daily.results(
            ruleset=ruleset, day=day, registered_before=began, limit=limit
        )
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
            "as_of": format_time(self._clock.now()),
            "registered_before": format_time(began),
            "par": None if par is None else {"score": par.score, "exact": par.exact},
            "entries": entries,
        }
