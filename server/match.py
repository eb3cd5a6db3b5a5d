"""A live match: one actor (``server.actor``), the only owner of its state in this process.

Commands (join, ready, play, leave, a timer, ...) are taken one at a time from its
mailbox: ``matchcore.handle`` computes the step, its writes are stored (actions through
the journal's group commit, the rest through ``Store``), and only then is the state
replaced, the events published on channel ``match:CODE``, the timer armed at the next
deadline, and the command answered. The end of the match (results, boards, ratings) is
stored off the mover's reply path, retried until it is stored, and only then is
``match_ended`` said.

Actions queued behind one another are stepped together (``server.actor``): while one
batch's rows are committed, the next players' actions wait in the mailbox, and they go
into the journal's next commit all at once instead of one commit each. An action that
stores more than its row (the end of a game) is stepped alone. If a row of a batch is
refused as stored before (an action sent again whose first try was stored though its
answer was lost: ``StoredBefore``), the actions before it stand, the match reads itself
again from the database, and an action after it whose row was stored is answered from
there, as a resend (``duplicate``), its ``progress`` event not said (the player's next
one tells the same and more). A lost lease refuses every row of the batch, each action
as it would be alone.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import date
from typing import Any

import msgspec

from gaps import Action, Seed
from gaps_protocol.messages.events import MatchEvent
from gaps_protocol.messages.replies import ActionOk, Events, Snapshot
from gaps_protocol.messages.views import MatchSummary, RatingView
from gaps_protocol.times import format_time
from server import matchcore, matchviews
from server.actor import Actor, Step
from server.broker import Broker
from server.clock import Clock, datetime_of
from server.matchrestore import rebuild
from server.matchstate import MatchOptions, MatchState, evolve
from server.outages import Outage
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
from server.storage.journal import Journal, LeaseLost, StoredBefore
from server.storage.outage import until_stored
from server.storage.results import FinishedGame
from server.storage.store import Store

__all__ = ["Match", "MatchOptions", "channel_of"]

log = logging.getLogger("gaps.match")


def channel_of(code: str) -> str:
    """The broker channel of match ``code``'s events."""
    return f"match:{code}"


class Match(Actor[MatchState, matchcore.Command, MatchEvent]):
    """The actor of one match. Everything else talks to it through its async methods,
    which post to its mailbox and wait for the answer; the properties read the state as
    last stored."""

    def __init__(
        self,
        state: MatchState,
        *,
        store: Store,
        journal: Journal,
        broker: Broker,
        max_history_events: int,
        clock: Clock,
        on_start: Callable[[Match], None] | None = None,
        on_end: Callable[[Match], Awaitable[None]] | None = None,
        outage: Outage | None = None,
    ) -> None:
        self._storage = store
        self._journal = journal
        self._read_again = False  # answering from the state just read from the database
        self._on_start = on_start
        self._on_end = on_end
        super().__init__(
            state,
            clock=clock,
            broker=broker,
            channel=channel_of(state.code),
            max_history_events=max_history_events,
            name=f"match {state.code}",
            outage=outage,
        )

    # -- what others read -----------------------------------------------------------

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

    def summary(self) -> MatchSummary:
        return matchviews.summary(self._state, self._clock.now_ms())

    # -- what others ask ------------------------------------------------------------

    async def join(
        self, player_id: int, name: str, *, connected: bool = True, bot: bool = False
    ) -> Snapshot:
        """Seat the player (or count one more connection of a seated one, unless not
        ``connected``: a seat the server reserves), a declared ``bot`` or not (refused
        with ``bots_not_allowed`` where the host said no); their snapshot."""
        return await self.ask(matchcore.Join(player_id, name, connected, bot))  # type: ignore[no-any-return]

    async def watch(self, player_id: int) -> Snapshot:
        """A spectator comes (``not_watchable`` for a daily challenge before its day is
        over, except for its own player); a seated player watches as a spectator too.
        The spectator's snapshot."""
        return await self.ask(matchcore.Watch(player_id))  # type: ignore[no-any-return]

    async def unwatch(self) -> None:
        await self.ask(matchcore.Unwatch())

    async def disconnect(self, player_id: int) -> None:
        """A connection of ``player_id`` closed: past the grace period without another,
        their game ends or, in the lobby, their seat is given up."""
        await self.ask(matchcore.Disconnect(player_id))

    async def leave(self, player_id: int) -> None:
        await self.ask(matchcore.Leave(player_id))

    async def set_ready(self, player_id: int, ready: bool) -> None:
        await self.ask(matchcore.Ready(player_id, ready))

    async def start_by(self, player_id: int) -> None:
        await self.ask(matchcore.Start(player_id))

    async def start(self) -> None:
        """Count down (the server starts it), then deal the same game to every seat."""
        await self.ask(matchcore.Start(None))

    async def play(self, player_id: int, seq: int, action: Action) -> ActionOk:
        """Apply ``action``, stored before it is acknowledged; its ``action_ok``."""
        return await self.ask(matchcore.Act(player_id, seq, action))  # type: ignore[no-any-return]

    async def offer_rematch(
        self, player_id: int, same_seed: bool, code: str | None = None,
        replacing: str | None = None,
    ) -> dict[str, Any]:
        """The rematch of this finished match: see ``matchcore.OfferRematch``."""
        command = matchcore.OfferRematch(player_id, same_seed, code, replacing)
        return await self.ask(command)  # type: ignore[no-any-return]

    async def abandon(self) -> None:
        """Give the match up unplayed."""
        await self.ask(matchcore.Abandon())

    async def snapshot(self, player_id: int | None) -> Snapshot:
        """Everything a client needs to draw the match now, as ``player_id`` sees it."""
        return await self.read(lambda state, now: self._snapshot(state, player_id, now))

    async def resync(self, player_id: int, since: int) -> Events | Snapshot:
        """The events after ``since`` or, when some are no longer kept (or ``since`` is a
        number from before a restart), a snapshot."""
        return await self.read(lambda state, now: self._resync(state, player_id, since, now))

    async def close(self) -> None:
        """Shut the actor down (as ``shutdown``)."""
        await self.shutdown()

    # -- the core and its effects ---------------------------------------------------------

    async def _store_failed(
        self, command: matchcore.Command, step: Step[MatchState], error: Exception
    ) -> Any:
        if not isinstance(error, StoredBefore) or self._read_again:
            return await super()._store_failed(command, step, error)
        # An earlier try of this action was stored though its answer was lost (the
        # database stalled or restarted after taking it): the match is read again, as
        # stored, and the command answered from there (a resend: its first ack).
        return await self._stored_apart(command)

    async def _stored_apart(self, command: matchcore.Command) -> Any:
        await self._reload()
        self._read_again = True  # a row stored before now would be a bug: raised
        try:
            return await self._step(command)
        finally:
            self._read_again = False

    async def _reload(self) -> None:
        """Take the state back from the database, keeping what is never stored (the
        connections of each seat, the spectators)."""
        [stored] = await self._storage.matches.unfinished(kinds=(self.kind,), ids=[self.id])
        now = self._clock.now_ms()
        state = rebuild(
            stored, now=now, grace_ms=self._state.grace_ms,
            default_countdown_s=self.options.countdown_s,
        )
        live = {seat.player_id: seat for seat in self._state.seats}
        seats = tuple(
            evolve(seat, connections=live[seat.player_id].connections,
                   away_since=live[seat.player_id].away_since)
            if seat.player_id in live and not seat.finished else seat
            for seat in state.seats
        )
        self._state = evolve(state, seats=seats, spectators=self._state.spectators)
        log.warning("match read again from the database", extra={"match": self.code})

    def _core(self, state: MatchState, command: matchcore.Command, now: int) -> matchcore.Step:
        return matchcore.handle(state, command, now)

    def _tick(self) -> matchcore.Command:
        return matchcore.Tick()

    def _deadline(self, state: MatchState) -> int | None:
        return matchcore.next_deadline(state)

    def _answer(self, reply: matchcore.Reply) -> Any:
        if isinstance(reply, matchcore.Snap):
            return self._snapshot(self._state, reply.player_id, self._clock.now_ms())
        return reply

    def _after(self, step: matchcore.Step) -> None:
        if self._on_start is not None and any(isinstance(w, MatchStarted) for w in step.writes):
            self._on_start(self)
        if step.end is not None:
            self.spawn(self._end(step.end))
        if step.closed and self._on_end is not None:
            self.spawn(self._on_end(self))

    def _snapshot(self, state: MatchState, player_id: int | None, now: int) -> Snapshot:
        return matchviews.snapshot(state, player_id, now, seq=self.history.last_seq)

    def _resync(
        self, state: MatchState, player_id: int, since: int, now: int
    ) -> Events | Snapshot:
        matchcore.admit(state, player_id, now)
        events = self.history.since(since)
        if events is None:
            return self._snapshot(state, player_id, now)
        return Events(id=None, match=self.code, events=events)

    def _batchable(self, command: matchcore.Command) -> bool:
        return isinstance(command, matchcore.Act)

    def _stored_together(self, write: Write) -> bool:
        # A journal row: the journal keeps the order of the appends, and a row stored
        # before is recognised (StoredBefore, handled in ``_step``).
        return isinstance(write, ActionRow)

    def _not_stored(self, error: Exception) -> bool:
        # Another process took the match over: this one may store nothing more of it.
        return isinstance(error, LeaseLost) or super()._not_stored(error)

    def _describe(self, write: Write) -> str:
        match write:
            case GameEnded(player_id=player_id):
                return f"the end of player {player_id}'s game in match {self.code}"
            case MatchStarted():
                return f"the start of match {self.code}"
            case ActionRow(player_id=player_id, seq=seq):
                return f"action {seq} of player {player_id} in match {self.code}"
        return f"{type(write).__name__} of match {self.code}"

    async def _store(self, write: Write) -> None:
        match_id = self.id
        matches = self._storage.matches
        match write:
            case ActionRow():
                # vars(), not asdict(): asdict deep-copies, a tenth of a step's time.
                await self._journal.append({"match_id": match_id, **vars(write)})
            case GameEnded():
                result = asdict(write)
                del result["player_id"]
                await matches.save_result(match_id, write.player_id, **result)
            case SeatAdded(player_id=player_id, joined_at=joined_at):
                await matches.add_player(match_id, player_id, datetime_of(joined_at))
            case SeatRemoved(player_id=player_id):
                await matches.remove_player(match_id, player_id)
            case ReadySet(player_id=player_id, ready=ready):
                await matches.set_ready(match_id, player_id, ready)
            case HostSet(host_id=host_id):
                await matches.set_host(match_id, host_id)
            case MatchStarted(started_at=started_at):
                await matches.set_status(match_id, "running", started_at=datetime_of(started_at))
            case MatchAbandoned(ended_at=ended_at):
                await matches.set_status(match_id, "abandoned", ended_at=datetime_of(ended_at))

    async def _end(self, table: tuple[RankedGame, ...]) -> None:
        """Store the end of the match (results, boards, ratings: idempotent), retried
        until stored; then say so, through the mailbox."""
        ended_at = self._clock.now()
        finished = [
            FinishedGame(row.player_id, row.rank, row.score, row.finish_ms, row.won)
            for row in table
        ]
        state = self._state
        end = await until_stored(
            lambda: self._storage.results.finish_match(
                state.id,
                ended_at,
                finished,
                ruleset=state.options.ruleset.name,
                rated=state.rated,
                daily_date=state.daily_date,
            ),
            what=f"the end of match {self.code}",
            sleep=self._clock.sleep,
            outage=self._outage,
        )
        ratings = msgspec.convert(end.ratings, tuple[RatingView, ...])
        self.tell(matchcore.Ended(format_time(end.ended_at), ratings, end.reviews))
