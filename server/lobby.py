"""The lobby: every live match of this process, by code; creation, restore and leases.

In a cluster (PostgreSQL), the lobby runs only the matches whose lease it holds
(``server.storage.leases``): it takes the lease of each match it creates, renews its
leases every ``renew_s``, drops a match whose lease another process took over, and takes
over (and restores from the database) every unfinished match whose lease ran out. On
SQLite it has no leases: the one process runs every match. Matches run by other
processes are ``server.routes``' business, not the lobby's.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Final

from gaps import Seed
from gaps_protocol.messages.common import MatchKind
from gaps_protocol.messages.views import MatchSummary
from server import matchcore
from server.broker import Broker
from server.clock import Cancel, Clock
from server.errors import ServerError
from server.match import Match, MatchOptions
from server.matchrestore import rebuild
from server.matchstate import MatchState, new_match
from server.matchviews import ranking
from server.outages import Outage
from server.storage.journal import Journal
from server.storage.leases import LeaseTaken, MatchLeases
from server.storage.outage import is_transient
from server.storage.store import Store

log = logging.getLogger("gaps.lobby")

# No 0/O, 1/I/L: codes are read aloud and typed.
CODE_ALPHABET: Final = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH: Final = 6
#: The matches a restart takes back: all of them.
RESTORED_KINDS: Final = ("race", "quick", "daily", "tournament")


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


@dataclass
class LobbyCounts:
    """What this process's lobby has done since it started (``server.metrics`` shows it)."""

    created: int = 0
    started: int = 0
    #: Matches over, by outcome: ``finished`` or ``abandoned``.
    ended: Counter[str] = field(default_factory=Counter)
    #: Matches taken over while serving (their owner stopped renewing its lease), and
    #: matches dropped because another process took their lease.
    taken_over: int = 0
    leases_lost: int = 0


class Lobby:
    """This process's live matches.

    :param grace_s: how long a seat without a connection is kept.
    :param retain_finished_s: how long a finished match stays here (late resyncs,
        rematch offers) before its actor stops.
    :param leases: a cluster's match leases (None on SQLite: one process runs all).
    :param renew_s: how often leases are renewed and ran-out ones taken over.
    :param outage: told of the database's failures and successes (its outages are
        logged once each way: ``server.outages``).
    """

    def __init__(
        self,
        *,
        store: Store,
        journal: Journal,
        broker: Broker,
        clock: Clock,
        grace_s: float,
        max_history_events: int,
        retain_finished_s: float = 600.0,
        max_open_matches_per_player: int = 3,
        leases: MatchLeases | None = None,
        renew_s: float = 1.0,
        outage: Outage | None = None,
    ) -> None:
        self._clock = clock
        self._outage = outage
        self.counts = LobbyCounts()
        self._leases = leases
        self._renew_s = renew_s
        self._retry_ms = round(renew_s * 1000)
        self._dropped_listeners: list[Callable[[str], None]] = []
        self._retired_listeners: list[Callable[[str], None]] = []
        self._renewed_listeners: list[Callable[[], Awaitable[None]]] = []
        #: The epoch of each match whose lease this process holds, by match id.
        self.epochs: dict[int, int] = {}
        self._keeping: asyncio.Task[None] | None = None
        self._default_countdown_s = 0
        self._retain_finished_s = retain_finished_s
        self._max_open_matches_per_player = max_open_matches_per_player
        # The host and kind of each match being stored, not yet in ``matches``, by code.
        self._storing: dict[str, tuple[int, str]] = {}
        self._store = store
        self._journal = journal
        self._broker = broker
        self._grace_s = grace_s
        self._max_history_events = max_history_events
        self.matches: dict[str, Match] = {}
        self._end_listeners: list[Callable[[Match], Awaitable[None]]] = []
        self._retiring: set[asyncio.Task[None]] = set()
        self._retirements: dict[str, Cancel] = {}

    @property
    def retry_ms(self) -> int:
        """How long a request for a match no process serves yet should wait: a renewal."""
        return self._retry_ms

    @property
    def clustered(self) -> bool:
        return self._leases is not None

    async def create(
        self,
        host_id: int,
        options: MatchOptions,
        seed: Seed | None,
        *,
        seats: Sequence[tuple[int, str, bool]],
        connected: bool = True,
        kind: MatchKind = "race",
        tournament_id: int | None = None,
        round_number: int | None = None,
        daily_date: date | None = None,
        rated: bool | None = None,
    ) -> Match:
        """A new match with ``seats`` (player id, name, declared bot) taken, connected
        or reserved (a bot where ``options.bots`` says no is refused: the match stays).

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
            match_id = await self._store.matches.create(
                code=code,
                ruleset=options.ruleset.name,
                max_players=options.max_players,
                time_limit_s=options.time_limit_s,
                win_by=options.win_by,
                public=options.public,
                bots=options.bots,
                rated=rated,
                host_id=host_id,
                status="lobby",
                seed=seed.data,
                commitment=seed.commitment,
                created_at=self._clock.now(),
                countdown_s=options.countdown_s,
                kind=kind,
                tournament_id=tournament_id,
                round=round_number,
                daily_date=daily_date,
            )
            if self._leases is not None:
                try:
                    epoch = await self._leases.claim(match_id, self._clock.now())
                except LeaseTaken:
                    # A take-over runs it now (an empty lobby); this request made nothing.
                    raise ServerError(
                        "match_unavailable",
                        f"match {code} was taken over before its creation was done (the "
                        "server is overloaded): create a match again in a moment",
                        retry_after_ms=self._retry_ms,
                    ) from None
                self._hold(match_id, epoch)
        finally:
            del self._storing[code]
        match = self._new_match(
            new_match(
                match_id=match_id,
                code=code,
                kind=kind,
                options=options,
                seed=seed,
                rated=rated,
                host_id=host_id,
                grace_ms=round(self._grace_s * 1000),
                daily_date=daily_date,
                tournament_id=tournament_id,
                round_number=round_number,
            )
        )
        self.matches[code] = match
        self.counts.created += 1
        log.info(
            "match created",
            extra={
                "match": code,
                "kind": kind,
                "ruleset": options.ruleset.name,
                "max_players": options.max_players,
                "host": host_id,
                "rated": rated,
                "tournament": tournament_id,
                "round": round_number,
            },
        )
        for player_id, name, bot in seats:
            await match.join(player_id, name, connected=connected, bot=bot)
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

    def _new_match(self, state: MatchState) -> Match:
        return Match(
            state,
            store=self._store,
            journal=self._journal,
            broker=self._broker,
            max_history_events=self._max_history_events,
            clock=self._clock,
            on_start=self._started,
            on_end=self._ended,
            outage=self._outage,
        )

    async def restore(self, *, default_countdown_s: int) -> list[Match]:
        """Take back every match the database holds in its lobby or running, after a
        restart (``server.matchrestore``): seats and ready flags and, once dealt, every
        game replayed from its stored actions. What fell due while the server was down (a
        time limit, a grace period) is applied at once, at its own instant. A lobby
        whose seats were all ready, and a match of the server's own (quick, daily,
        tournament round) still in its lobby, count down again: their countdown was cut
        short. A match that cannot be taken back is abandoned, and logged."""
        self._default_countdown_s = default_countdown_s
        if self._leases is None:
            stored_matches = await self._store.matches.unfinished(kinds=RESTORED_KINDS)
        else:
            # The lease first, then the match as stored: what its previous owner
            # stored after this read would be refused by the epoch taken here.
            taken = await self._leases.take_over(
                kinds=RESTORED_KINDS,
                now=self._clock.now(),
                running=set(self.epochs),
                creating=set(self._storing),
            )
            for match_id, epoch in taken.items():
                self._hold(match_id, epoch)
            stored_matches = await self._store.matches.unfinished(
                kinds=RESTORED_KINDS, ids=taken.keys()
            )
        restored = []
        now = self._clock.now_ms()
        for stored in stored_matches:
            if stored.match.code in self.matches:  # already running here
                continue
            try:
                state = rebuild(
                    stored,
                    now=now,
                    grace_ms=round(self._grace_s * 1000),
                    default_countdown_s=default_countdown_s,
                )
            except Exception:
                # One match the server cannot take back must not keep the others down.
                log.exception("match not restored: abandoned", extra={"match": stored.match.code})
                await self._store.matches.set_status(
                    stored.match.id, "abandoned", ended_at=self._clock.now()
                )
                continue
            match = self._new_match(state)
            self.matches[match.code] = match
            match.tell(matchcore.Tick())
            seats = state.seats
            # A lobby all ready, or the server's own match (they start at once), was
            # counting down when the server stopped.
            counting_down = state.kind != "race" or all(seat.ready for seat in seats)
            if state.phase == "lobby" and seats and counting_down:
                match.tell(matchcore.Start(None))
            restored.append(match)
        return restored

    def _hold(self, match_id: int, epoch: int) -> None:
        self.epochs[match_id] = epoch
        self._journal.fence(match_id, epoch)

    def start_leases(self) -> None:
        """Renew this process's leases, drop the matches whose lease was lost and take
        over those whose lease ran out, every ``renew_s`` (until ``close``); nothing
        without leases (SQLite)."""
        if self._leases is not None and self._keeping is None:
            self._keeping = asyncio.create_task(self._keep_leases(), name="lobby-leases")

    async def _keep_leases(self) -> None:
        while True:
            await self._clock.sleep(self._renew_s)
            try:
                await self.keep_leases()
            except Exception as error:
                # The database is down: the leases are renewed when it is back, if no
                # other process took them over meanwhile (then their matches are dropped).
                if not is_transient(error):
                    log.exception("keeping the match leases failed")
                else:
                    log.debug("keeping the match leases failed", extra={"error": repr(error)})
                    if self._outage is not None:
                        self._outage.failed("keeping the match leases", error)
            else:
                if self._outage is not None:
                    self._outage.recovered()

    async def keep_leases(self) -> list[Match]:
        """Once: renew the leases held, drop the matches whose lease was lost, take over
        and restore those whose lease ran out; then tell the renewal's listeners (the
        routes to other processes' matches check theirs). The matches taken over."""
        assert self._leases is not None
        held = dict(self.epochs)
        kept = await self._leases.renew(held, self._clock.now())
        for match_id in held.keys() - kept:
            await self._drop(match_id)
        taken = await self.restore(default_countdown_s=self._default_countdown_s)
        for match in taken:
            # At start, restoring is expected; while serving, it means another process
            # stopped renewing (dead, paused, or too busy): worth an operator's look.
            self.counts.taken_over += 1
            log.warning(
                "match taken over",
                extra={
                    "match": match.code,
                    "kind": match.kind,
                    "status": match.status,
                    "epoch": self.epochs[match.id],
                },
            )
        for renewed in self._renewed_listeners:
            await renewed()
        return taken

    def on_renewed(self, listener: Callable[[], Awaitable[None]]) -> None:
        """Call ``listener`` after each renewal of the leases."""
        self._renewed_listeners.append(listener)

    def on_dropped(self, listener: Callable[[str], None]) -> None:
        """Call ``listener`` with the code of a match this process stopped running
        because another process took its lease over: it moved."""
        self._dropped_listeners.append(listener)

    def on_retired(self, listener: Callable[[str], None]) -> None:
        """Call ``listener`` with the code of a finished match this process no longer
        keeps (its retention is over)."""
        self._retired_listeners.append(listener)

    async def _drop(self, match_id: int) -> None:
        """Stop running a match whose lease another process took over: its actor is
        stopped (its writes would be refused anyway), nothing is ended or abandoned."""
        self.epochs.pop(match_id, None)
        match = next((m for m in self.matches.values() if m.id == match_id), None)
        self.counts.leases_lost += 1
        log.warning(
            "match lease lost: match dropped",
            extra={"match": match.code if match is not None else match_id},
        )
        if match is not None:
            if self.matches.get(match.code) is match:
                del self.matches[match.code]
            for dropped in self._dropped_listeners:
                dropped(match.code)
            await match.shutdown()

    def round_match(self, tournament_id: int, round_number: int) -> Match | None:
        """The live match of round ``round_number`` of tournament ``tournament_id`` (one
        restored after a restart included), if any."""
        for match in self.matches.values():
            if match.tournament_id == tournament_id and match.round == round_number:
                return match
        return None

    def on_end(self, listener: Callable[[Match], Awaitable[None]]) -> None:
        """Call ``listener`` with every match that ends (tournaments wait on rounds)."""
        self._end_listeners.append(listener)

    def get(self, code: str) -> Match:
        """The live match ``code`` of this process."""
        match = self.matches.get(code.upper())
        if match is None:
            raise ServerError("no_such_match", f"no live match has code {code!r}")
        return match

    def open_public_here(self) -> list[MatchSummary]:
        """The summaries of this process's matches open to anyone, with a seat free."""
        return [
            match.summary()
            for match in self.matches.values()
            if match.options.public
            and match.status == "lobby"
            and len(match.players) < match.options.max_players
        ]

    def _started(self, match: Match) -> None:
        """``match`` was dealt (its countdown is over)."""
        state = match.state
        self.counts.started += 1
        log.info(
            "match started",
            extra={
                "match": match.code,
                "kind": match.kind,
                "ruleset": state.options.ruleset.name,
                "rated": state.rated,
                "players": [
                    {"player": seat.player_id, "name": seat.name} for seat in state.seats
                ],
            },
        )

    async def _ended(self, match: Match) -> None:
        state = match.state
        finished = state.phase == "finished"
        self.counts.ended["finished" if finished else "abandoned"] += 1
        log.info(
            "match ended" if finished else "match abandoned",
            extra={
                "match": match.code,
                "kind": match.kind,
                "ruleset": state.options.ruleset.name,
                "rated": state.rated,
                "duration_s": (
                    None if state.started_at is None
                    else round((self._clock.now_ms() - state.started_at) / 1000, 3)
                ),
                # The result: each player's rank, score, and how their game ended.
                "ranking": [
                    {"rank": row.rank, "player": row.player_id, "name": row.name,
                     "score": row.score, "end": row.end_reason}
                    for row in ranking(state)
                ],
            },
        )
        for listener in self._end_listeners:
            await listener(match)
        # A finished match stays in memory a while for late resyncs and rematch offers;
        # its replay is read from the database.
        self._retirements[match.code] = self._clock.call_later(
            self._retain_finished_s, lambda: self._retire(match)
        )

    def _retire(self, match: Match) -> None:
        """Forget a match over for a while, and stop its actor."""
        self._retirements.pop(match.code, None)
        if self.matches.get(match.code) is match:
            del self.matches[match.code]
        for retired in self._retired_listeners:
            retired(match.code)
        epoch = self.epochs.pop(match.id, None)
        self._journal.unfence(match.id)
        task = asyncio.ensure_future(self._stop_retired(match, epoch))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def _stop_retired(self, match: Match, epoch: int | None) -> None:
        await match.shutdown()
        if self._leases is not None and epoch is not None:
            try:
                await self._leases.release({match.id: epoch})
            except Exception as error:  # it runs out by itself; the match is over anyway
                log.warning(
                    "match lease not released", extra={"match": match.code, "error": repr(error)}
                )

    async def close(self) -> None:
        """Shut every match down (``Match.shutdown``): what they have queued is answered,
        nothing is abandoned or ended; the next start restores them. Then release their
        leases: another process takes them over at once."""
        if self._keeping is not None:
            self._keeping.cancel()
            await asyncio.gather(self._keeping, return_exceptions=True)
            self._keeping = None
        for cancel in self._retirements.values():
            cancel()
        self._retirements.clear()
        await asyncio.gather(*(match.shutdown() for match in list(self.matches.values())))
        if self._leases is not None and self.epochs:
            try:
                await self._leases.release(self.epochs)
            except Exception as error:  # they run out by themselves
                log.warning("match leases not released", extra={"error": repr(error)})
            self.epochs.clear()
