"""The lobby: every live match of this process, by code; creation and listing."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime
from typing import Final

from gaps import Ruleset, Seed
from server.broker import Broker
from server.errors import ServerError
from server.match import Match, MatchOptions, Sleep
from server.storage.journal import Journal
from server.storage.store import Store, StoredMatch

log = logging.getLogger("gaps.lobby")

# No 0/O, 1/I/L: codes are read aloud and typed.
CODE_ALPHABET: Final = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH: Final = 6
#: The matches a restart takes back (a tournament attaches to its restored round).
RESTORED_KINDS: Final = ("race", "quick", "daily", "tournament")


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Lobby:
    def __init__(
        self,
        *,
        store: Store,
        journal: Journal,
        broker: Broker,
        grace_s: float,
        max_history_events: int,
        retain_finished_s: float = 600.0,
        max_open_matches_per_player: int = 3,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._retain_finished_s = retain_finished_s
        self._max_open_matches_per_player = max_open_matches_per_player
        self._sleep = sleep
        # The code, host and kind of each match being stored, not yet in ``matches``.
        self._storing: dict[str, tuple[int, str]] = {}
        self._store = store
        self._journal = journal
        self._broker = broker
        self._grace_s = grace_s
        self._max_history_events = max_history_events
        self.matches: dict[str, Match] = {}
        self._end_listeners: list[Callable[[Match], Awaitable[None]]] = []

    async def create(
        self,
        host_id: int,
        options: MatchOptions,
        seed: Seed | None,
        *,
        seats: Sequence[tuple[int, str]],
        connected: bool = True,
        kind: str = "race",
        tournament_id: int | None = None,
        round_number: int | None = None,
        daily_date: date | None = None,
        rated: bool | None = None,
    ) -> Match:
        """A new match with ``seats`` (player id, name) taken, connected or reserved.

        A match is rated unless its seed was chosen by someone (``seed`` given): then
        the seed was not secret, and its results count for no board and no rating.
        The server's own choices (a daily challenge's seed) say so with ``rated``.

        A player hosts at most ``max_open_matches_per_player`` matches of their own
        (``race``) in the lobby at once (``too_many_matches``); the server's matches
        (quick, tournament, daily) start at once and do not count.
        """
        if kind == "race":
            limit = self._max_open_matches_per_player
            if self.open_hosted_by(host_id) >= limit:
                raise ServerError(
                    "too_many_matches",
                    f"you host {limit} open matches, the most a player may: "
                    "start or leave one before creating another",
                    limit=limit,
                )
        code = new_code()
        while code in self.matches or code in self._storing:
            code = new_code()
        if rated is None:
            rated = seed is None
        seed = seed or Seed.generate()
        # Counted while it is stored: two creations at once cannot both pass the cap.
        self._storing[code] = (host_id, kind)
        try:
            match_id = await self._store.create_match(
                code=code,
                ruleset=options.ruleset.name,
                max_players=options.max_players,
                time_limit_s=options.time_limit_s,
                win_by=options.win_by,
                public=options.public,
                rated=rated,
                host_id=host_id,
                status="lobby",
                seed=seed.data,
                commitment=seed.commitment,
                created_at=datetime.now(UTC),
                countdown_s=options.countdown_s,
                kind=kind,
                tournament_id=tournament_id,
                round=round_number,
                daily_date=daily_date,
            )
        finally:
            del self._storing[code]
        match = self._new_match(
            match_id=match_id,
            code=code,
            options=options,
            seed=seed,
            rated=rated,
            host_id=host_id,
            kind=kind,
            daily_date=daily_date,
            tournament_id=tournament_id,
            round_number=round_number,
        )
        self.matches[code] = match
        for player_id, name in seats:
            await match.join(player_id, name, connected=connected)
        return match

    def open_hosted_by(self, player_id: int) -> int:
        """How many matches of their own (``race``) ``player_id`` hosts in the lobby,
        those being stored included."""
        live = sum(
            1
            for match in self.matches.values()
            if match.kind == "race" and match.status == "lobby" and match.host_id == player_id
        )
        return live + sum(1 for entry in self._storing.values() if entry == (player_id, "race"))

    def _new_match(
        self,
        *,
        match_id: int,
        code: str,
        options: MatchOptions,
        seed: Seed,
        rated: bool,
        host_id: int,
        kind: str,
        daily_date: date | None,
        tournament_id: int | None = None,
        round_number: int | None = None,
    ) -> Match:
        return Match(
            match_id=match_id,
            code=code,
            options=options,
            seed=seed,
            rated=rated,
            host_id=host_id,
            store=self._store,
            journal=self._journal,
            broker=self._broker,
            grace_s=self._grace_s,
            max_history_events=self._max_history_events,
            on_end=self._ended,
            kind=kind,
            daily_date=daily_date,
            tournament_id=tournament_id,
            round_number=round_number,
            sleep=self._sleep,
        )

    async def restore(self, *, default_countdown_s: int) -> list[Match]:
        """Take back every race, quick match, daily challenge and tournament round the
        database holds in its lobby or running (``Match.restore``), after a restart
        (tournaments find their round again with ``round_match``). A lobby whose seats
        were all ready, and a quick match, daily challenge or tournament round still in
        its lobby (their countdown was cut short), count down again. A match that cannot
        be taken back is abandoned, and logged."""
        restored = []
        now = datetime.now(UTC)
        for stored in await self._store.unfinished_matches(kinds=RESTORED_KINDS):
            try:
                match = await self._restored(
                    stored, now=now, default_countdown_s=default_countdown_s
                )
            except Exception:
                # One match the server cannot take back must not keep the others down.
                log.exception("match not restored: abandoned", extra={"match": stored.match.code})
                await self._store.set_match_status(stored.match.id, "abandoned", ended_at=now)
                continue
            restored.append(match)
        return restored

    async def _restored(
        self, stored: StoredMatch, *, now: datetime, default_countdown_s: int
    ) -> Match:
        row = stored.match
        countdown_s = default_countdown_s if row.countdown_s is None else row.countdown_s
        options = MatchOptions(
            ruleset=Ruleset.named(row.ruleset),
            max_players=row.max_players,
            time_limit_s=row.time_limit_s,
            win_by=row.win_by,
            public=row.public,
            countdown_s=countdown_s,
        )
        match = self._new_match(
            match_id=row.id,
            code=row.code,
            options=options,
            seed=Seed(row.seed),
            rated=row.rated,
            host_id=row.host_id,
            kind=row.kind,
            daily_date=row.daily_date,
            tournament_id=row.tournament_id,
            round_number=row.round,
        )
        try:
            match.restore(stored, now=now)
        except Exception:
            await match.close()  # its timers, if any had started
            raise
        self.matches[match.code] = match
        seats = match.seats.values()
        # A lobby all ready, or the server's own match (quick, daily: they start at once),
        # was counting down when the server stopped.
        counting_down = match.kind != "race" or all(seat.ready for seat in seats)
        if match.status == "lobby" and seats and counting_down:
            await match.start()
        return match

    def on_end(self, listener: Callable[[Match], Awaitable[None]]) -> None:
        """Call ``listener`` with every match that ends (tournaments wait on rounds)."""
        self._end_listeners.append(listener)

    def round_match(self, tournament_id: int, round_number: int) -> Match | None:
        """The live match of round ``round_number`` of tournament ``tournament_id``
        (the last dealt, if the round was dealt more than once), or None."""
        found = None
        for match in self.matches.values():
            if match.tournament_id == tournament_id and match.round_number == round_number:
                if found is None or match.id > found.id:
                    found = match
        return found

    def get(self, code: str) -> Match:
        match = self.matches.get(code.upper())
        if match is None:
            raise ServerError("no_such_match", f"no live match has code {code!r}")
        return match

    def open_public(self) -> list[Match]:
        return [
            match
            for match in self.matches.values()
            if match.options.public
            and match.status == "lobby"
            and len(match.seats) < match.options.max_players
        ]

    async def _ended(self, match: Match) -> None:
        for listener in self._end_listeners:
            await listener(match)
        # A finished match stays in memory a while for late resyncs; its replay is read
        # from the database.
        asyncio.get_running_loop().call_later(
            self._retain_finished_s, self.matches.pop, match.code, None
        )

    async def close(self) -> None:
        for match in self.matches.values():
            await match.close()
