"""The lobby: every live match of this process, by code; creation and listing.

In a cluster (PostgreSQL), the lobby runs only the matches whose lease it holds
(``server.storage.leases``): it takes the lease of each match it creates, renews its
leases every ``renew_s``, drops a match whose lease another process took over, and takes
over (and restores from the database) every unfinished match whose lease ran out. On
SQLite it has no leases: the one process runs every match, as before.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime
from typing import Any, Final

from gaps import Seed
from server import matchcore
from server.broker import Broker, BrokerError
from server.clock import Clock, SystemClock
from server.errors import ServerError
from server.match import Match, MatchOptions, Sleep
from server.relay import Relay
from server.remote import MatchHandle, MatchService, RemoteMatch, unavailable
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
#: The log messages of a match changing owner while serving (gaps-bench counts them).
TAKEN_OVER: Final = "matches taken over while serving"
LEASE_LOST: Final = "match lease lost: match dropped"


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
        clock: Clock | None = None,
        leases: MatchLeases | None = None,
        relay: Relay | None = None,
        renew_s: float = 1.0,
    ) -> None:
        """``leases`` and ``relay``: a cluster's (both or neither)."""
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._leases = leases
        self._relay = relay
        self._renew_s = renew_s
        self._retry_ms = round(renew_s * 1000)
        #: The handles on matches of other processes in use here, by code.
        self._remote: weakref.WeakValueDictionary[str, RemoteMatch] = (
            weakref.WeakValueDictionary()
        )
        self._moved_listeners: list[Callable[[str], None]] = []
        self._service = (
            MatchService(self, relay, retry_ms=self._retry_ms) if relay is not None else None
        )
        #: The epoch of each match whose lease this process holds, by match id.
        self.epochs: dict[int, int] = {}
        self._keeping: asyncio.Task[None] | None = None
        self._default_countdown_s = 0
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
        self._retiring: set[asyncio.Task[None]] = set()

    async def create(
        self,
        host_id: int,
        options: MatchOptions,
        seed: Seed | None,
        *,
        seats: Sequence[tuple[int, str, bool]],
        connected: bool = True,
        kind: str = "race",
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
                created_at=datetime.now(UTC),
                countdown_s=options.countdown_s,
                kind=kind,
                tournament_id=tournament_id,
                round=round_number,
                daily_date=daily_date,
            )
            if self._leases is not None:
                try:
                    epoch = await self._leases.claim(match_id, self._now())
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
            matchcore.new_match(
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

    def _new_match(self, state: matchcore.MatchState) -> Match:
        return Match(
            state,
            store=self._store,
            journal=self._journal,
            broker=self._broker,
            max_history_events=self._max_history_events,
            clock=self._clock,
            on_end=self._ended,
            sleep=self._sleep,
        )

    async def restore(self, *, default_countdown_s: int) -> list[Match]:
        """Take back every match the database holds in its lobby or running, after a
        restart (``matchcore.rebuild``): seats and ready flags and, once dealt, every game
        replayed from its stored actions. What fell due while the server was down (a
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
                now=self._now(),
                running=set(self.epochs),
                creating=set(self._storing),
            )
            for match_id, epoch in taken.items():
                self._hold(match_id, epoch)
            stored_matches = await self._store.matches.unfinished(
                kinds=RESTORED_KINDS, ids=taken.keys()
            )
            if taken:
                log.info("matches taken over", extra={"epochs": taken})
        restored = []
        now = self._clock.now_ms()
        for stored in stored_matches:
            if stored.match.code in self.matches:  # already running here
                continue
            try:
                state = matchcore.rebuild(
                    stored,
                    now=now,
                    grace_ms=round(self._grace_s * 1000),
                    default_countdown_s=default_countdown_s,
                )
            except Exception:
                # One match the server cannot take back must not keep the others down.
                log.exception("match not restored: abandoned", extra={"match": stored.match.code})
                await self._store.matches.set_status(
                    stored.match.id, "abandoned", ended_at=datetime.now(UTC)
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

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._clock.now_ms() / 1000, UTC)

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
            await self._sleep(self._renew_s)
            try:
                await self.keep_leases()
            except Exception as error:
                # The database is down: the leases are renewed when it is back, if no
                # other process took them over meanwhile (then their matches are dropped).
                if not is_transient(error):
                    log.exception("keeping the match leases failed")
                else:
                    log.warning("keeping the match leases failed", extra={"error": repr(error)})

    async def keep_leases(self) -> list[Match]:
        """Once: renew the leases held, drop the matches whose lease was lost, take over
        and restore those whose lease ran out; return the matches taken over."""
        assert self._leases is not None
        held = dict(self.epochs)
        kept = await self._leases.renew(held, self._now())
        for match_id in held.keys() - kept:
            await self._drop(match_id)
        taken = await self.restore(default_countdown_s=self._default_countdown_s)
        if taken:
            # At start, restoring is expected; while serving, it means another process
            # stopped renewing (dead, paused, or too busy): worth an operator's look.
            log.warning(TAKEN_OVER, extra={"matches": [match.code for match in taken]})
        await self._check_remote()
        if self._service is not None:
            await self._service.forget_gone()
        return taken

    async def _check_remote(self) -> None:
        """Tell the connections that hold a handle on a match that moved (a new owner,
        a new epoch: its events are numbered anew) or ended, so that they join it again."""
        assert self._leases is not None
        handles = list(self._remote.values())
        if not handles:
            return
        owners = await self._leases.owners([handle.id for handle in handles])
        for handle in handles:
            if owners.get(handle.id) != (handle.node, handle.epoch):
                if self._remote.get(handle.code) is handle:
                    del self._remote[handle.code]
                self._moved(handle.code)

    def on_moved(self, listener: Callable[[str], None]) -> None:
        """Call ``listener`` with the code of a match that this process's handle (a live
        match, or a ``RemoteMatch``) no longer reaches: it moved to another process."""
        self._moved_listeners.append(listener)

    def _moved(self, code: str) -> None:
        for listener in self._moved_listeners:
            listener(code)

    async def _drop(self, match_id: int) -> None:
        """Stop running a match whose lease another process took over: its actor is
        stopped (its writes would be refused anyway), nothing is ended or abandoned."""
        self.epochs.pop(match_id, None)
        match = next((m for m in self.matches.values() if m.id == match_id), None)
        log.warning(
            LEASE_LOST,
            extra={"match": match.code if match is not None else match_id},
        )
        if match is not None:
            if self.matches.get(match.code) is match:
                del self.matches[match.code]
            if self._service is not None:
                self._service.forget(match.code)
            self._moved(match.code)
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

    async def find(self, code: str) -> MatchHandle:
        """The live match ``code``, wherever it runs: this process's own, or a handle on
        the process of the cluster that runs it. A match stored unfinished that no
        process runs right now (its lease has to run out after its owner's crash) is
        refused for now with ``match_unavailable``, not as gone."""
        code = code.upper()
        match = self.matches.get(code)
        if match is not None:
            return match
        if self._leases is None:
            return self.get(code)
        holder = await self._leases.holder(code, self._now())
        # Without a relay (PostgreSQL without Redis: one process) another owner is a
        # previous run of this server, whose leases have to run out before restoring.
        if (
            holder is None
            or not holder.live
            or holder.owner == self._leases.owner
            or self._relay is None
        ):
            if holder is not None or await self._store.matches.is_unfinished(code):
                raise unavailable(code, self._retry_ms, "no process serves it yet")
            return self.get(code)
        handle = self._remote.get(code)
        if handle is None or (handle.node, handle.epoch) != (holder.owner, holder.epoch):
            handle = RemoteMatch(
                self._relay,
                node=holder.owner,
                match_id=holder.match_id,
                code=code,
                epoch=holder.epoch,
                retry_ms=self._retry_ms,
            )
            self._remote[code] = handle
        return handle

    def open_public_here(self) -> list[dict[str, Any]]:
        """The summaries of this process's matches open to anyone, with a seat free."""
        return [
            match.summary()
            for match in self.matches.values()
            if match.options.public
            and match.status == "lobby"
            and len(match.players) < match.options.max_players
        ]

    async def open_public(self) -> list[dict[str, Any]]:
        """The summaries of the cluster's matches open to anyone, with a seat free; a
        process that does not answer within a second is left out."""
        listed = self.open_public_here()
        if self._leases is None or self._relay is None:
            return listed
        others = await self._leases.live_owners(self._now()) - {self._leases.owner}
        relay = self._relay

        async def ask(node: str) -> list[dict[str, Any]]:
            try:
                return list(await relay.call(node, "match", "open_public", {}, timeout_s=1.0))
            except (ServerError, BrokerError) as error:
                log.warning("open matches not listed", extra={"node": node, "error": str(error)})
                return []

        for answer in await asyncio.gather(*(ask(node) for node in sorted(others))):
            listed.extend(answer)
        return listed

    async def _ended(self, match: Match) -> None:
        for listener in self._end_listeners:
            await listener(match)
        # A finished match stays in memory a while for late resyncs; its replay is read
        # from the database.
        asyncio.get_running_loop().call_later(self._retain_finished_s, self._retire, match)

    def _retire(self, match: Match) -> None:
        """Forget a match over for a while, and stop its actor."""
        if self.matches.get(match.code) is match:
            del self.matches[match.code]
        if self._service is not None:
            self._service.forget(match.code)
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
        await asyncio.gather(*(match.shutdown() for match in list(self.matches.values())))
        if self._leases is not None and self.epochs:
            try:
                await self._leases.release(self.epochs)
            except Exception as error:  # they run out by themselves
                log.warning("match leases not released", extra={"error": repr(error)})
            self.epochs.clear()
