"""The actor: one owner for one piece of live state (a match, a tournament, the quick-match queue).

An actor is one asyncio task that takes commands from one mailbox, one at a time, in the
order they arrived. The rules live in a core without I/O, in the manner of the websockets
library's sans-I/O protocol and lichess' round and tournament actors:

    step = core(state, command, now_ms)

A step carries the new state, the reply (or the ``ServerError`` refusing the command),
the events to publish, the rows to store (``writes``) and the instant to be woken at next
(``wake_at``). The actor applies it in one order, whatever the kind of state:

1. the writes are stored, in order. If the first fails, the step is dropped whole: the
   state stays as it was (it is immutable), the command is refused (a transient failure
   as ``storage_unavailable``: not applied, send it again) and the actor wakes itself after
   a backoff, so that a deadline that was due is applied at its own instant once the
   database takes it. Once one write is stored the others are retried until they are: a
   step is never left half stored;
2. only then is the state replaced, the events numbered (``History``) and published on
   the actor's channel, the one timer armed at ``wake_at``, what the step asks for besides
   done (``_after``), and the command answered.

Deadlines are state, not tasks: the core derives them from the state, and every command
first applies what is due at its ``now``. The timer only wakes the actor with the core's
tick command.

Commands that a kind of actor says may go together (``_batchable``: a match's actions)
and that find others of their kind queued behind them are stepped together: one after
the other from the state as it is, each from the state the one before it leaves, as they
would be alone; their writes are stored at once (the journal commits them in one
transaction), and then each step is applied and answered in order. Only a step whose
writes all may be stored that way (``_stored_together``) joins; the first that does not
waits for the steps before it and is then stepped alone. If a write of the batch fails,
the steps before it stand (their writes are stored); a step whose write failed is
answered as it would be alone (``_store_failed``: refused, never tried a second time); a
later step whose writes were stored was stepped from a state that was not, and the actor
reads its state again from what is stored to answer it (``_stored_apart``); a later one
that stored nothing is stepped again, alone.

Subclasses say how a write is stored (``_store``), what a step asks for besides
(``_after``), and which command is the tick. Events are the protocol's own
(``gaps_protocol.messages.events``), built by the core as they go on the wire.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from gaps_protocol.messages.events import MatchEvent, TournamentEvent, event_name
from server.broker import Broker, BrokerError
from server.clock import Cancel, Clock
from server.errors import ServerError
from server.history import History
from server.outages import Outage
from server.protocol import encode
from server.storage.outage import is_outage, is_transient, until_stored

log = logging.getLogger("gaps.actor")
storage_log = logging.getLogger("gaps.storage")

#: The first and the longest wait before a failed step's deadlines are tried again.
FIRST_RETRY_MS: Final = 50
MAX_RETRY_MS: Final = 2000

State = TypeVar("State")
StepState = TypeVar("StepState", covariant=True)
Command = TypeVar("Command")
Write = TypeVar("Write")
Result = TypeVar("Result")
#: The events an actor publishes: a match's, a tournament's (``Never``: none).
Event = TypeVar("Event", bound=MatchEvent | TournamentEvent)


class Step(Protocol[StepState]):
    """What a core returns for one command (each core's own ``Step`` has these)."""

    @property
    def state(self) -> StepState: ...

    @property
    def reply(self) -> Any: ...

    @property
    def events(self) -> Sequence[Any]: ...

    @property
    def writes(self) -> Sequence[Any]: ...

    @property
    def wake_at(self) -> int | None: ...


class _Read(Generic[State, Result]):
    """A query answered from the state, in mailbox order, once what is due is applied."""

    __slots__ = ("answer",)

    def __init__(self, answer: Callable[[State, int], Result]) -> None:
        self.answer = answer


class _Stop:
    pass


#: What the mailbox holds: a command, a read or a stop, and who waits for its answer.
_Mail = tuple[Any, "asyncio.Future[Any] | None"]


class Actor(Generic[State, Command, Event]):
    """The mailbox, the store-then-apply order and the one timer of one piece of state.

    :param state: the state to start from (new, or rebuilt from stored rows).
    :param clock: the server's clock: ``now`` for the core, and the timer.
    :param broker: where events are published, on ``channel``.
    :param max_history_events: how many events are kept for resyncs.
    :param name: what the actor is, for logs and refusals ("match K7QX2M").
    :param outage: told when storing fails for an outage and when it succeeds (an
        outage is logged once each way: ``server.outages``).
    """

    def __init__(
        self,
        state: State,
        *,
        clock: Clock,
        broker: Broker,
        channel: str,
        max_history_events: int,
        name: str,
        outage: Outage | None = None,
    ) -> None:
        self._state = state
        self._outage = outage
        self._clock = clock
        self._broker = broker
        self.channel = channel
        # This process publishes the channel: its own followers get each event from the
        # publish itself, the other processes' through the broker (server/redis_broker.py).
        broker.claim(channel)
        self._claimed = True
        self.name = name
        self.history: History[Event] = History(max_events=max_history_events)
        self._mailbox: asyncio.Queue[_Mail] = asyncio.Queue()
        self._closing = False
        self._cancel_timer: Cancel | None = None
        self._timer_at: int | None = None
        self._tick_queued = False
        self._retry_ms = FIRST_RETRY_MS
        self._tasks: set[asyncio.Task[Any]] = set()
        self._task = asyncio.create_task(self._run(), name=name)

    # -- what a kind of actor says --------------------------------------------------------

    def _core(self, state: State, command: Command, now: int) -> Step[State]:
        raise NotImplementedError

    def _tick(self) -> Command:
        """The command that only applies what is due."""
        raise NotImplementedError

    def _deadline(self, state: State) -> int | None:
        """The next instant ``state`` must be woken at (None: never)."""
        raise NotImplementedError

    async def _store(self, write: Any) -> None:
        """Store one write (one transaction)."""
        raise NotImplementedError

    def _describe(self, write: Any) -> str:
        """What ``write`` is, for the log."""
        return f"{type(write).__name__} of {self.name}"

    def _after(self, step: Any) -> None:
        """Do what ``step`` asks for besides its writes, events and timer (once they are
        stored and said): start a task, tell another actor."""

    def _not_stored(self, error: Exception) -> bool:
        """Whether a first write that failed with ``error`` is refused as not stored
        (``storage_unavailable``: send it again) rather than as a bug."""
        return is_transient(error)

    def _answer(self, reply: Any) -> Any:
        """The answer to the command from the step's ``reply``."""
        return reply

    def _batchable(self, command: Command) -> bool:
        """Whether ``command`` may be stepped together with the like commands queued
        behind it (see the module's doc): none may, unless a kind of actor says so."""
        return False

    def _stored_together(self, write: Any) -> bool:
        """Whether ``write`` may be stored at the same time as the writes of the other
        steps of a batch (each ``_store`` call on its own, with no order between them
        but the order of the calls)."""
        return False

    # -- what others read and ask -----------------------------------------------------------

    @property
    def state(self) -> State:
        """The state as last stored (never changed in place)."""
        return self._state

    async def ask(self, command: Command) -> Any:
        """Post ``command`` and wait for its answer (or its refusal, raised)."""
        return await self._post(command)

    def tell(self, command: Command) -> None:
        """Post ``command`` without waiting for it (dropped once shutting down)."""
        if not self._closing:
            self._mailbox.put_nowait((command, None))

    async def read(self, answer: Callable[[State, int], Result]) -> Result:
        """``answer(state, now)``, in mailbox order, once what is due at ``now`` is
        applied (if it cannot be stored yet, the state as it is)."""
        return await self._post(_Read(answer))  # type: ignore[no-any-return]

    async def _post(self, mail: Any) -> Any:
        if self._closing:
            raise self._shutting_down()
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._mailbox.put_nowait((mail, waiter))
        return await waiter

    def spawn(self, coroutine: Awaitable[Any]) -> None:
        """Run ``coroutine`` beside the actor (cancelled at shutdown; a failure logged)."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    async def shutdown(self, *, timeout_s: float = 10.0) -> None:
        """Stop the actor: what is queued is processed and answered, what comes later is
        refused (``shutting_down``); its timer is cancelled. Nothing is ended: the next
        start rebuilds the state from what is stored."""
        if not self._closing:
            self._closing = True
            self._mailbox.put_nowait((_Stop(), None))
        self._disarm()
        try:
            # An I/O deadline (the queue's commits), not the server's clock.
            await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
        except TimeoutError:
            self._task.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._task, *self._tasks, return_exceptions=True)
        while not self._mailbox.empty():
            _, waiter = self._mailbox.get_nowait()
            if waiter is not None and not waiter.done():
                waiter.set_exception(self._shutting_down())
        if self._claimed:
            self._claimed = False
            self._broker.release(self.channel)

    @property
    def closing(self) -> bool:
        return self._closing

    @property
    def timer_at(self) -> int | None:
        """The instant the actor's one timer is armed at (None: none is)."""
        return self._timer_at

    # -- the loop -------------------------------------------------------------------------

    async def _run(self) -> None:
        held: _Mail | None = None  # taken from the mailbox, not batched: next
        while True:
            mail, waiter = held if held is not None else await self._mailbox.get()
            held = None
            if isinstance(mail, _Stop):
                return
            if self._mailbox.empty() or isinstance(mail, _Read) or not self._batchable(mail):
                await self._settle((mail, waiter), self._handle(mail))
                continue
            batch: list[_Mail] = [(mail, waiter)]
            while not self._mailbox.empty():
                queued = self._mailbox.get_nowait()
                if isinstance(queued[0], (_Read, _Stop)) or not self._batchable(queued[0]):
                    held = queued
                    break
                batch.append(queued)
            await self._step_together(batch)

    async def _handle(self, mail: Any) -> Any:
        if isinstance(mail, _Read):
            return await self._read(mail)
        if mail == self._tick():
            self._tick_queued = False
        return await self._step(mail)

    async def _settle(self, mail: _Mail, answering: Awaitable[Any]) -> None:
        """Answer ``mail`` with what ``answering`` returns or raises."""
        waiter = mail[1]
        try:
            reply = await answering
        except Exception as error:
            if waiter is None:
                # A write that failed was logged, and is retried; a refusal is no fault.
                if not isinstance(error, ServerError) and not is_transient(error):
                    log.error("actor step failed", exc_info=error, extra={"actor": self.name})
            elif not waiter.done():
                waiter.set_exception(error)
        else:
            if waiter is not None and not waiter.done():
                waiter.set_result(reply)

    async def _step_together(self, batch: list[_Mail]) -> None:
        """Step the commands of ``batch`` together (see the module's doc)."""
        now = self._clock.now_ms()
        state = self._state
        steps: list[Step[State]] = []
        for command, _waiter in batch:
            try:
                step = self._core(state, command, now)
            except Exception:
                break  # stepped alone below, where its failure is answered
            if not all(self._stored_together(write) for write in step.writes):
                break
            steps.append(step)
            state = step.state
        stores = [(index, write) for index, step in enumerate(steps) for write in step.writes]
        outcomes = await asyncio.gather(
            *(self._store(write) for _index, write in stores), return_exceptions=True
        )
        errors: dict[int, Exception] = {}
        for (index, _write), outcome in zip(stores, outcomes, strict=True):
            if isinstance(outcome, Exception):
                errors.setdefault(index, outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
        applied = min(errors, default=len(steps))
        if stores and not errors and self._outage is not None:
            self._outage.recovered()
        for index, mail in enumerate(batch):
            command = mail[0]
            if index < applied:
                answering = self._apply(steps[index])
            elif index in errors:  # answered as if it had been stepped alone
                answering = self._store_failed(command, steps[index], errors[index])
            elif index < len(steps) and steps[index].writes:
                # Stored, but stepped from a state with a step that was not.
                answering = self._stored_apart(command)
            else:
                answering = self._handle(command)  # nothing stored: stepped again, alone
            await self._settle(mail, answering)

    async def _read(self, read: _Read[State, Any]) -> Any:
        deadline = self._deadline(self._state)
        if deadline is not None and deadline <= self._clock.now_ms():
            # What is due is said before the state is shown.
            try:
                await self._step(self._tick())
            except Exception as error:
                if not is_transient(error) and not isinstance(error, ServerError):
                    raise
        return read.answer(self._state, self._clock.now_ms())

    async def _step(self, command: Command) -> Any:
        step = self._core(self._state, command, self._clock.now_ms())
        if step.writes:
            try:
                await self._store_all(step.writes)
            except Exception as error:
                return await self._store_failed(command, step, error)
            if self._outage is not None:
                self._outage.recovered()
        return await self._apply(step)

    async def _store_failed(self, command: Command, step: Step[State], error: Exception) -> Any:
        """The answer to ``command`` when the first write of its ``step`` failed with
        ``error``: the step is dropped, the command refused (``storage_unavailable``) and
        the actor woken after a backoff, or the error raised if it is no refusal. A kind
        of actor may answer some errors otherwise (a match: a row stored before)."""
        retry_in_s = self._retry_later() / 1000
        if not self._not_stored(error):
            raise error
        if self._outage is not None and is_outage(error):  # not a lost lease
            self._outage.failed(self._describe(step.writes[0]), error)
        for write in step.writes:  # each of them is tried again
            storage_log.debug(
                "storing failed; retrying",
                extra={
                    "what": self._describe(write),
                    "error": repr(error)[:300],
                    "retry_in_s": retry_in_s,
                },
            )
        raise ServerError(
            "storage_unavailable",
            "the database could not store this: it was not applied, send it again",
        ) from None

    async def _stored_apart(self, command: Command) -> Any:
        """The answer to a command of a batch whose writes were stored though a step
        before it was not: the actor reads its state again from what is stored and
        answers from there. Only a kind of actor that batches (``_batchable``) is asked."""
        raise NotImplementedError

    async def _apply(self, step: Step[State]) -> Any:
        """Make ``step`` (its writes stored) the actor's: its state, events, timer and what
        it asks for besides; its answer, or its refusal raised."""
        self._retry_ms = FIRST_RETRY_MS
        self._state = step.state
        for event in step.events:
            await self.publish(event)
        self._arm(step.wake_at)
        self._after(step)
        if isinstance(step.reply, ServerError):
            raise step.reply
        return self._answer(step.reply)

    async def _store_all(self, writes: Sequence[Any]) -> None:
        """Store ``writes`` in order. If the first fails, nothing is stored and the error
        is raised; once one is stored, the rest are stored whatever it takes."""
        await self._store(writes[0])
        for write in writes[1:]:
            await until_stored(
                lambda write=write: self._store(write),  # type: ignore[misc]
                what=self._describe(write),
                sleep=self._clock.sleep,
                outage=self._outage,
            )

    async def publish(self, event: Event) -> None:
        """Number ``event``, keep it for resyncs and publish it on the channel, encoded
        once for every follower of every process."""
        numbered = self.history.append(event)
        try:
            await self._broker.publish(self.channel, encode(numbered))
        except BrokerError:
            # Kept in the history: followers see the gap and resync. The broker logs its
            # outage once (server.outages): not once an event.
            log.debug(
                "event not published",
                extra={"actor": self.name, "event": event_name(numbered)},
            )

    # -- the timer --------------------------------------------------------------------------

    def _arm(self, wake_at: int | None) -> None:
        """The one timer, at ``wake_at`` (none if None)."""
        if wake_at is not None and wake_at == self._timer_at:
            return  # most steps leave the next deadline where it was
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
        """Wake the actor after a backoff, so that what is due is applied once the
        database takes it; the backoff, in ms."""
        delay_ms = self._retry_ms
        self._arm(self._clock.now_ms() + delay_ms)
        self._retry_ms = min(MAX_RETRY_MS, self._retry_ms * 2)
        return delay_ms

    def _wake(self) -> None:
        self._cancel_timer = self._timer_at = None
        if not self._tick_queued and not self._closing:
            self._tick_queued = True
            self._mailbox.put_nowait((self._tick(), None))

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("actor task failed", exc_info=task.exception(), extra={"actor": self.name})

    def _shutting_down(self) -> ServerError:
        return ServerError(
            "shutting_down", f"the server is shutting down: {self.name} resumes after"
        )
