"""A live match: one actor, the only owner of its state in this process.

A ``Match`` is a task with a mailbox. Commands (join, ready, play, leave, a timer, ...)
are taken one at a time: ``matchcore.handle`` computes the step, its writes are stored
(actions through the journal's group commit, the rest through ``Store``), and only then
is the state replaced, the events published (numbered by ``History``, fanned out on
channel ``match:CODE``), the one timer armed at the next deadline, and the command
answered. A step whose first write fails is dropped whole: the state stays as it was, the
command is refused, and the match is woken again after a backoff, so that a deadline due
(a time limit, a grace period, the deal) is applied, at its own instant, once the
database takes it. The end of the match (results, boards, ratings) is stored off the
mover's reply path, retried until it is stored, and only then is ``match_ended`` said.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from typing import Any, Final

from gaps import Action, Seed
from server import matchcore
from server.broker import Broker, BrokerError
from server.clock import Cancel, Clock, SystemClock
from server.errors import ServerError
from server.history import History
from server.matchcore import MatchOptions, MatchState
from server.protocol import encode
from server.records import (
    ActionRow,
    GameEnded,
    HostSet,
    MatchAbandoned,
    MatchStarted,
    RankedGame,
    ReadySet,
    SeatAdded,
    SeatRemoved,
    Write,
)
from server.storage.journal import Journal
from server.storage.outage import is_transient, until_stored
from server.storage.results import FinishedGame
from server.storage.store import Store

__all__ = ["Match", "MatchOptions", "Sleep"]

log = logging.getLogger("gaps.match")
storage_log = logging.getLogger("gaps.storage")

#: How retries wait (storing the end of a match): ``asyncio.sleep``, or a fake clock's.
Sleep = Callable[[float], Awaitable[None]]

#: The first and the longest wait before a failed step's deadlines are tried again.
FIRST_RETRY_MS: Final = 50
MAX_RETRY_MS: Final = 2000


@dataclass(frozen=True)
class _Snapshot:
    player_id: int | None


@dataclass(frozen=True)
class _Resync:
    player_id: int
    since: int


_Query = _Snapshot | _Resync


class _Stop:
    pass


_Mail = matchcore.Command | _Query | _Stop


class Match:
    """The actor of one match. Everything else talks to it through its async methods,
    which post to its mailbox and wait for the answer; the properties read the state as
    last committed."""

    def __init__(
        self,
        state: MatchState,
        *,
        store: Store,
        journal: Journal,
        broker: Broker,
        max_history_events: int,
        clock: Clock | None = None,
        on_end: Callable[[Match], Awaitable[None]] | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._state = state
        self.history = History(max_events=max_history_events)
        self._store = store
        self._journal = journal
        self._broker = broker
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._on_end = on_end
        self._sleep = sleep
        self._mailbox: asyncio.Queue[tuple[_Mail, asyncio.Future[Any] | None]] = asyncio.Queue()
        self._closing = False
        self._cancel_timer: Cancel | None = None
        self._timer_at: int | None = None  # when the armed timer fires
        self._tick_queued = False
        self._retry_ms = FIRST_RETRY_MS
        self._tasks: set[asyncio.Task[None]] = set()
        self._task = asyncio.create_task(self._run())

    # -- what others read -----------------------------------------------------------

    @property
    def state(self) -> MatchState:
        """The state as last committed (never changed in place)."""
        return self._state

    @property
    def id(self) -> int:
        return self._state.id

    @property
    def code(self) -> str:
        return self._state.code

    @property
    def kind(self) -> str:
        return self._state.kind

    @property
    def options(self) -> MatchOptions:
        return self._state.options

    @property
    def seed(self) -> Seed:
        return self._state.seed

    @property
    def rated(self) -> bool:
        return self._state.rated

    @property
    def host_id(self) -> int:
        return self._state.host_id

    @property
    def daily_date(self) -> date | None:
        return self._state.daily_date

    @property
    def tournament_id(self) -> int | None:
        return self._state.tournament_id

    @property
    def round(self) -> int | None:
        return self._state.round

    @property
    def status(self) -> str:
        """``lobby``, ``countdown``, ``running``, ``finished`` or ``abandoned``."""
        return self._state.status

    @property
    def players(self) -> list[int]:
        """The seated players' ids, in seat order."""
        return [seat.player_id for seat in self._state.seats]

    @property
    def channel(self) -> str:
        return f"match:{self.code}"

    def summary(self) -> dict[str, Any]:
        return matchcore.summary(self._state, self._clock.now_ms())

    # -- what others ask ------------------------------------------------------------

    async def join(
        self, player_id: int, name: str, *, connected: bool = True, bot: bool = False
    ) -> dict[str, Any]:
        """Seat the player (or count one more connection of a seated one, unless not
        ``connected``: a seat the server reserves), a declared ``bot`` or not (refused
        with ``bots_not_allowed`` where the host said no); their snapshot."""
        return await self._ask(matchcore.Join(player_id, name, connected, bot))  # type: ignore[no-any-return]

    async def watch(self, player_id: int) -> dict[str, Any]:
        """A spectator comes (``not_watchable`` for a daily challenge before its day is
        over, except for its own player); a seated player watches as a spectator too.
        The spectator's snapshot."""
        return await self._ask(matchcore.Watch(player_id))  # type: ignore[no-any-return]

    async def unwatch(self) -> None:
        await self._ask(matchcore.Unwatch())

    async def disconnect(self, player_id: int) -> None:
        """A connection of ``player_id`` closed: past the grace period without another,
        their game ends or, in the lobby, their seat is given up."""
        await self._ask(matchcore.Disconnect(player_id))

    async def leave(self, player_id: int) -> None:
        await self._ask(matchcore.Leave(player_id))

    async def set_ready(self, player_id: int, ready: bool) -> None:
        await self._ask(matchcore.Ready(player_id, ready))

    async def start_by(self, player_id: int) -> None:
        await self._ask(matchcore.Start(player_id))

    async def start(self) -> None:
        """Count down (the server starts it), then deal the same game to every seat."""
        await self._ask(matchcore.Start(None))

    async def play(self, player_id: int, seq: int, action: Action) -> dict[str, Any]:
        """Apply ``action``, stored before it is acknowledged; its ``action_ok``."""
        return await self._ask(matchcore.Act(player_id, seq, action))  # type: ignore[no-any-return]

    async def offer_rematch(
        self, player_id: int, same_seed: bool, code: str | None = None,
        replacing: str | None = None,
    ) -> dict[str, Any]:
        """The rematch of this finished match: see ``matchcore.OfferRematch``."""
        command = matchcore.OfferRematch(player_id, same_seed, code, replacing)
        return await self._ask(command)  # type: ignore[no-any-return]

    async def abandon(self) -> None:
        """Give the match up unplayed."""
        await self._ask(matchcore.Abandon())

    async def snapshot(self, player_id: int | None) -> dict[str, Any]:
        """Everything a client needs to draw the match now, as ``player_id`` sees it."""
        return await self._ask(_Snapshot(player_id))  # type: ignore[no-any-return]

    async def resync(self, player_id: int, since: int) -> dict[str, Any]:
        """The events after ``since`` or, when some are no longer kept (or ``since`` is a
        number from before a restart), a snapshot."""
        return await self._ask(_Resync(player_id, since))  # type: ignore[no-any-return]

    async def shutdown(self, *, timeout_s: float = 10.0) -> None:
        """Stop the actor: what is queued is processed and answered, what comes later
        is refused (``shutting_down``); nothing is abandoned or ended, so that the next
        start restores the match as stored."""
        if not self._closing:
            self._closing = True
            self._mailbox.put_nowait((_Stop(), None))
        self._disarm()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
        except TimeoutError:
            self._task.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._task, *self._tasks, return_exceptions=True)
        while not self._mailbox.empty():
            _, waiter = self._mailbox.get_nowait()
            if waiter is not None and not waiter.done():
                waiter.set_exception(_shutting_down(self.code))

    async def _ask(self, mail: _Mail) -> Any:
        if self._closing:
            raise _shutting_down(self.code)
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._mailbox.put_nowait((mail, waiter))
        return await waiter

    def tell(self, command: matchcore.Command) -> None:
        """Post ``command`` without waiting for it (dropped once shutting down)."""
        if not self._closing:
            self._mailbox.put_nowait((command, None))

    # -- the loop ---------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            mail, waiter = await self._mailbox.get()
            if isinstance(mail, _Stop):
                return
            if isinstance(mail, matchcore.Tick):
                self._tick_queued = False
            try:
                reply = await self._process(mail)
            except Exception as error:
                if waiter is None:
                    # A write that failed was logged, and is retried; a refusal is no fault.
                    if not isinstance(error, ServerError) and not is_transient(error):
                        log.error("match step failed", exc_info=error, extra={"match": self.code})
                elif not waiter.done():
                    waiter.set_exception(error)
            else:
                if waiter is not None and not waiter.done():
                    waiter.set_result(reply)

    async def _process(self, mail: _Mail) -> Any:
        if isinstance(mail, _Snapshot | _Resync):
            if self._due():
                # What is due is said before the state is shown; if it cannot be stored
                # yet (it is retried), the state as it is.
                try:
                    await self._step(matchcore.Tick())
                except Exception as error:
                    if not is_transient(error):
                        raise
            return self._answer(mail)
        assert not isinstance(mail, _Stop)
        return await self._step(mail)

    def _due(self) -> bool:
        deadline = matchcore.next_deadline(self._state)
        return deadline is not None and deadline <= self._clock.now_ms()

    def _answer(self, query: _Query) -> dict[str, Any]:
        now = self._clock.now_ms()
        if isinstance(query, _Snapshot):
            return matchcore.snapshot(
                self._state, query.player_id, now, seq=self.history.last_seq
            )
        matchcore.admit(self._state, query.player_id, now)
        events = self.history.since(query.since)
        if events is None:
            return {
                "type": "snapshot",
                **matchcore.snapshot(self._state, query.player_id, now, seq=self.history.last_seq),
            }
        return {"type": "events", "match": self.code, "events": events}

    async def _step(self, command: matchcore.Command) -> Any:
        step = matchcore.handle(self._state, command, self._clock.now_ms())
        if step.writes:
            try:
                await self._store_writes(step.writes)
            except Exception as error:
                retry_in_s = self._retry_later() / 1000
                if is_transient(error):
                    for write in step.writes:  # each of them is tried again
                        storage_log.warning(
                            "storing failed; retrying",
                            extra={
                                "what": self._what(write),
                                "error": repr(error)[:300],
                                "retry_in_s": retry_in_s,
                            },
                        )
                if isinstance(command, matchcore.Act):
                    raise ServerError(
                        "storage_unavailable",
                        "the action could not be stored and was not applied",
                    ) from None
                raise
        self._retry_ms = FIRST_RETRY_MS
        self._state = step.state
        for event in step.events:
            await self._publish(event.message(self.code))
        self._arm(step.wake_at)
        if step.end is not None:
            self._spawn(self._end(step.end))
        if step.closed and self._on_end is not None:
            self._spawn(self._on_end(self))
        if isinstance(step.reply, ServerError):
            raise step.reply
        if isinstance(step.reply, matchcore.Snap):
            return self._answer(_Snapshot(step.reply.player_id))
        return step.reply

    async def _store_writes(self, writes: tuple[Write, ...]) -> None:
        """Store ``writes`` in order. If the first fails, nothing is stored and the error
        is raised; once one is stored, the rest are stored whatever it takes (retried
        through outages): a step is never left half stored."""
        await self._store_one(writes[0])
        for write in writes[1:]:
            await until_stored(
                lambda write=write: self._store_one(write),  # type: ignore[misc]
                what=self._what(write),
                sleep=self._sleep,
            )

    def _what(self, write: Write) -> str:
        """What ``write`` is, for the log."""
        match write:
            case GameEnded(player_id=player_id):
                return f"the end of player {player_id}'s game in match {self.code}"
            case MatchStarted():
                return f"the start of match {self.code}"
            case ActionRow(player_id=player_id, seq=seq):
                return f"action {seq} of player {player_id} in match {self.code}"
        return f"{type(write).__name__} of match {self.code}"

    async def _store_one(self, write: Write) -> None:
        match_id = self.id
        match write:
            case ActionRow():
                # vars(), not asdict(): asdict deep-copies, a tenth of a step's time.
                await self._journal.append({"match_id": match_id, **vars(write)})
            case GameEnded():
                result = asdict(write)
                del result["player_id"]
                await self._store.matches.save_result(match_id, write.player_id, **result)
            case SeatAdded(player_id=player_id, joined_at=joined_at):
                await self._store.matches.add_player(match_id, player_id, _datetime(joined_at))
            case SeatRemoved(player_id=player_id):
                await self._store.matches.remove_player(match_id, player_id)
            case ReadySet(player_id=player_id, ready=ready):
                await self._store.matches.set_ready(match_id, player_id, ready)
            case HostSet(host_id=host_id):
                await self._store.matches.set_host(match_id, host_id)
            case MatchStarted(started_at=started_at):
                await self._store.matches.set_status(
                    match_id, "running", started_at=_datetime(started_at)
                )
            case MatchAbandoned(ended_at=ended_at):
                await self._store.matches.set_status(
                    match_id, "abandoned", ended_at=_datetime(ended_at)
                )

    async def _publish(self, message: dict[str, Any]) -> None:
        self.history.append(message)
        try:
            await self._broker.publish(self.channel, encode(message))
        except BrokerError:
            # Kept in the history: watchers see the gap and resync.
            log.warning(
                "match event not published", extra={"match": self.code, "event": message["event"]}
            )

    async def _end(self, table: tuple[RankedGame, ...]) -> None:
        """Store the end of the match (results, boards, ratings: idempotent), retried
        until stored; then say so, through the mailbox."""
        ended_at = _datetime(self._clock.now_ms())
        finished = [
            FinishedGame(row.player_id, row.rank, row.score, row.finish_ms, row.won)
            for row in table
        ]
        state = self._state
        end = await until_stored(
            lambda: self._store.results.finish_match(
                state.id,
                ended_at,
                finished,
                ruleset=state.options.ruleset.name,
                rated=state.rated,
                daily_date=state.daily_date,
            ),
            what=f"the end of match {self.code}",
            sleep=self._sleep,
        )
        self.tell(matchcore.Ended(end.ended_at.isoformat(), tuple(end.ratings), end.reviews))

    # -- timers -----------------------------------------------------------------------

    def _arm(self, wake_at: int | None) -> None:
        """The one timer of the match, at ``wake_at`` (none if None)."""
        if wake_at is not None and wake_at == self._timer_at:
            return  # most actions leave the next deadline (the time limit) where it was
        self._disarm()
        if wake_at is not None and not self._closing:
            self._cancel_timer = self._clock.call_at(wake_at, self._wake)
            self._timer_at = wake_at

    def _disarm(self) -> None:
        if self._cancel_timer is not None:
            self._cancel_timer()
            self._cancel_timer = None
            self._timer_at = None

    def _retry_later(self) -> int:
        """Wake the match after a backoff, so that what is due is applied once the
        database takes it; the backoff, in ms."""
        delay_ms = self._retry_ms
        self._arm(self._clock.now_ms() + delay_ms)
        self._retry_ms = min(MAX_RETRY_MS, self._retry_ms * 2)
        return delay_ms

    def _wake(self) -> None:
        self._cancel_timer = self._timer_at = None
        if not self._tick_queued and not self._closing:
            self._tick_queued = True
            self._mailbox.put_nowait((matchcore.Tick(), None))

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("match task failed", exc_info=task.exception(), extra={"match": self.code})

    async def close(self) -> None:
        """Shut the actor down (as ``shutdown``)."""
        await self.shutdown()


def _datetime(at_ms: int) -> datetime:
    return datetime.fromtimestamp(at_ms / 1000, UTC)


def _shutting_down(code: str) -> ServerError:
    return ServerError("shutting_down", f"the server is shutting down: match {code} resumes after")
