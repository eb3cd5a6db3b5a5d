"""A live match: its seats, their games, the clock, and every event it emits.

One ``Match`` object is the single authority on its state in this process. Events are
numbered by ``History`` and fanned out through the broker on channel ``match:CODE``.
The action journal is the source of truth: every acknowledged action is committed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from gaps import Action, Game, IllegalAction, Move, Redeal, Ruleset, Seed, Undo, parse_action
from gaps.ranking import Finish, rank
from gaps.replay import replay
from server.broker import Broker, BrokerError
from server.errors import ServerError
from server.history import History
from server.protocol import encode
from server.storage.journal import Journal
from server.storage.outage import until_stored
from server.storage.store import FinishedGame, Store, StoredMatch

log = logging.getLogger("gaps.match")

#: The ways a game ends other than by its own play.
ENDED_FROM_OUTSIDE = ("time", "disconnected", "left")

#: How many acknowledgements a seat keeps to answer resent actions.
CACHED_ACKS = 32

#: How a match waits (its countdown, time limit and grace periods): ``asyncio.sleep``, or a
#: fake clock's in tests.
Sleep = Callable[[float], Awaitable[None]]


def wire_grid(game: Game) -> list[str]:
    """The grid as four rows of 13 cells (``--`` a gap), as it goes on the wire."""
    return game.layout().splitlines()


def action_kind(action: Action) -> str:
    if isinstance(action, Move):
        return "move"
    if isinstance(action, Redeal):
        return "redeal"
    if isinstance(action, Undo):
        return "undo"
    return "stop"


@dataclass
class Seat:
    player_id: int
    name: str
    ready: bool = False
    game: Game | None = None
    last_seq: int = 0
    acks: OrderedDict[int, dict[str, Any]] = field(default_factory=OrderedDict)
    committed: list[Action] = field(default_factory=list)
    end_reason: str | None = None
    finish_ms: int | None = None
    score_ms: int = 0
    connections: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    disconnect_timer: asyncio.Task[None] | None = None

    @property
    def finished(self) -> bool:
        return self.end_reason is not None

    @property
    def status(self) -> str:
        """``waiting`` before the deal, then the game's result; a game ended from outside
        (``time``, ``disconnected``, ``left``) says so."""
        if self.game is None:
            return "waiting"
        if self.end_reason in ENDED_FROM_OUTSIDE:
            return self.end_reason
        return self.game.result()

    def progress(self) -> dict[str, Any]:
        game = self.game
        return {
            "player_id": self.player_id,
            "name": self.name,
            "ready": self.ready,
            "connected": self.connections > 0,
            "placed": game.placed if game else 0,
            "score": game.score if game else 0,
            "redeals_used": game.redeals_used if game else 0,
            "moves_made": game.moves_made if game else 0,
            "status": self.status,
            "finished": self.finished,
            "won": bool(game and game.is_won()),
            "end_reason": self.end_reason,
            "finish_ms": self.finish_ms,
        }


@dataclass(frozen=True)
class MatchOptions:
    ruleset: Ruleset
    max_players: int
    time_limit_s: int
    win_by: str
    public: bool
    countdown_s: int


class Match:
    def __init__(
        self,
        *,
        match_id: int,
        code: str,
        options: MatchOptions,
        seed: Seed,
        rated: bool,
        host_id: int,
        store: Store,
        journal: Journal,
        broker: Broker,
        grace_s: float,
        max_history_events: int,
        on_end: Callable[[Match], Awaitable[None]] | None = None,
        kind: str = "race",
        daily_date: date | None = None,
        tournament_id: int | None = None,
        round_number: int | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.id = match_id
        self.kind = kind
        # A tournament round's: which tournament, which round (None otherwise).
        self.tournament_id = tournament_id
        self.round_number = round_number
        self.daily_date = daily_date
        self.code = code
        self.options = options
        self.seed = seed
        self.rated = rated
        self.host_id = host_id
        self.status = "lobby"  # lobby, countdown, running, finished, abandoned
        self.seats: dict[int, Seat] = {}
        self.spectators = 0
        self.history = History(max_events=max_history_events)
        self.created_at = datetime.now(UTC)
        self.started_at: datetime | None = None
        self._store = store
        self._journal = journal
        self._broker = broker
        self._grace_s = grace_s
        self._sleep = sleep
        self._clock = clock
        # Sleeping timers (countdown, time limit, grace periods): the end of the match
        # cancels them. A timer that has fired leaves this set and ends what it started.
        self._timers: set[asyncio.Task[None]] = set()
        self._ending = False
        self._on_end = on_end
        self._started_mono: float | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._state_lock = asyncio.Lock()

    def seed_revealed(self) -> bool:
        """Whether the seed may be published: once the match is over, except that a daily
        challenge's seed stays secret until its day is over (others still play it)."""
        return self.status == "finished" and not self.deal_secret()

    def deal_secret(self) -> bool:
        """Whether the deal is still to be played by others: a daily challenge's is, until
        its day is over."""
        return self.daily_date is not None and datetime.now(UTC).date() <= self.daily_date

    def admit_spectator(self, player_id: int) -> None:
        """Let ``player_id`` see the match's events (watch it, resync it), or refuse with
        ``not_watchable``: nobody but its own player may see a daily challenge's deal
        before its day is over, when nobody can play it any more. A spectator would get
        the deal in the ``started`` event, then play that very deal."""
        if player_id in self.seats or not self.deal_secret():
            return
        raise ServerError(
            "not_watchable",
            f"match {self.code} is a daily challenge: it can be watched once "
            f"{self.daily_date} is over",
        )

    @property
    def channel(self) -> str:
        return f"match:{self.code}"

    def now_ms(self) -> int:
        """Server milliseconds since the match started (0 before)."""
        if self._started_mono is None:
            return 0
        return int((self._clock() - self._started_mono) * 1000)

    # -- what clients see -----------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        options = self.options
        summary: dict[str, Any] = {
            "id": self.id,
            "code": self.code,
            "ruleset": options.ruleset.name,
            "max_players": options.max_players,
            "time_limit_s": options.time_limit_s,
            "win_by": options.win_by,
            "public": options.public,
            "rated": self.rated,
            "countdown_s": options.countdown_s,
            "host_id": self.host_id,
            "kind": self.kind,
            "status": self.status,
            "players": len(self.seats),
            "commitment": self.seed.commitment if self.status != "lobby" else None,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "t_ms": self.now_ms(),
        }
        if self.seed_revealed():
            summary["seed"] = str(self.seed)
        return summary

    def snapshot(self, player_id: int | None) -> dict[str, Any]:
        """Everything a client needs to draw the match now, as ``player_id`` sees it."""
        seat = self.seats.get(player_id) if player_id is not None else None
        you: dict[str, Any] = {"role": "player" if seat else "spectator"}
        if seat is not None and seat.game is not None:
            you["game"] = self.game_view(seat)
            you["last_seq"] = seat.last_seq
        return {
            "match": self.summary(),
            "players": [s.progress() for s in self.seats.values()],
            "spectators": self.spectators,
            "you": you,
            "seq": self.history.last_seq,
        }

    def game_view(self, seat: Seat, *, with_grid: bool = True) -> dict[str, Any]:
        game = seat.game
        assert game is not None
        view: dict[str, Any] = {"grid": wire_grid(game)} if with_grid else {}
        return view | {
            "score": game.score,
            "placed": game.placed,
            "redeals_used": game.redeals_used,
            "redeals_left": game.redeals_left,
            "moves_made": game.moves_made,
            "status": seat.status,
            "can_undo": game.can_undo(),
        }

    async def emit(self, event: str, **data: Any) -> None:
        message = {
            "type": "event",
            "match": self.code,
            "seq": 0,
            "event": event,
            "t_ms": self.now_ms(),
            **data,
        }
        self.history.append(message)
        try:
            await self._broker.publish(self.channel, encode(message))
        except BrokerError:
            # Kept in the history: watchers see the gap and resync.
            log.warning("match event not published", extra={"match": self.code, "event": event})

    # -- lobby ----------------------------------------------------------------------

    def _require_lobby(self) -> None:
        if self.status in ("finished", "abandoned"):
            raise ServerError("match_finished", f"match {self.code} is over")
        if self.status != "lobby":
            raise ServerError("already_started", f"match {self.code} has started")

    async def join(self, player_id: int, name: str, *, connected: bool = True) -> Seat:
        """Seat the player (or find their seat again on a reconnect), counting one more
        connection of theirs unless not ``connected`` (a seat reserved by the server, as
        for a tournament round); ``disconnect`` counts it off."""
        async with self._state_lock:
            seat = self.seats.get(player_id)
            if seat is not None:
                if connected:
                    self.connect(seat)
                return seat
            self._require_lobby()
            if len(self.seats) >= self.options.max_players:
                raise ServerError(
                    "match_full", f"match {self.code} has its {self.options.max_players} players"
                )
            seat = Seat(player_id, name)
            self.seats[player_id] = seat
            if connected:
                self.connect(seat)
            await self._store.add_match_player(self.id, player_id, datetime.now(UTC))
        await self.emit("player_joined", player=seat.progress())
        return seat

    def connect(self, seat: Seat) -> None:
        seat.connections += 1
        if seat.disconnect_timer is not None:
            seat.disconnect_timer.cancel()
            seat.disconnect_timer = None

    def disconnect(self, seat: Seat) -> None:
        """A connection of ``seat`` closed: past the grace period its game ends or, in the
        lobby, its seat is given up."""
        seat.connections = max(0, seat.connections - 1)
        if seat.connections > 0 or seat.disconnect_timer is not None:
            return
        if self.status == "lobby":
            seat.disconnect_timer = self._spawn_timer(self._free_seat(seat))
        elif self.status in ("countdown", "running") and not seat.finished:
            seat.disconnect_timer = self._spawn_timer(self._expire(seat))

    async def _free_seat(self, seat: Seat) -> None:
        """Leave for a player gone from the lobby, so that nobody waits for them: the host
        passes on, an empty match is abandoned (a public one is no longer listed)."""
        await self._sleep(self._grace_s)
        self._fired()
        seat.disconnect_timer = None
        await self._leave_lobby(seat)

    async def _expire(self, seat: Seat) -> None:
        await self._sleep(self._grace_s)
        self._fired()
        seat.disconnect_timer = None
        if self.status == "countdown":
            await self._wait_started()
        await self.finish_seat(seat, "disconnected")

    async def leave(self, player_id: int) -> None:
        seat = self.seats.get(player_id)
        if seat is None:
            raise ServerError("not_in_match", f"you are not a player of match {self.code}")
        if await self._leave_lobby(seat):
            return
        if self.status in ("countdown", "running"):
            if self.status == "countdown":
                await self._wait_started()
            await self.finish_seat(seat, "left")
            return
        if self.status == "lobby":  # another connection of theirs left it meanwhile
            raise ServerError("not_in_match", f"you are not a player of match {self.code}")
        self._require_lobby()

    async def _leave_lobby(self, seat: Seat) -> bool:
        """Free ``seat`` if the match is still in the lobby (the host passes on, an empty
        match is abandoned); whether it was freed."""
        player_id = seat.player_id
        # Checked under the lock: the match may start, or the seat go, while it is awaited.
        async with self._state_lock:
            if self.status != "lobby" or self.seats.get(player_id) is not seat:
                return False
            del self.seats[player_id]
            await self._store.remove_match_player(self.id, player_id)
        await self.emit("player_left", player_id=player_id)
        if not self.seats:
            await self.abandon()
        elif player_id == self.host_id:
            self.host_id = next(iter(self.seats))
            await self._store.set_host(self.id, self.host_id)
            await self.emit("host_changed", host_id=self.host_id)
        return True

    async def abandon(self) -> None:
        """Give the match up unplayed (everyone left the lobby, or the server did)."""
        if self.status in ("finished", "abandoned"):
            return
        self.status = "abandoned"
        await self._store.set_match_status(self.id, "abandoned", ended_at=datetime.now(UTC))
        await self.emit("match_abandoned")
        for task in list(self._tasks):
            # Not the task abandoning it (a seat given up): it has the ending to finish.
            if task is not asyncio.current_task():
                task.cancel()
        if self._on_end is not None:
            await self._on_end(self)

    async def set_ready(self, player_id: int, ready: bool) -> None:
        seat = self.seats.get(player_id)
        if seat is None:
            raise ServerError("not_in_match", f"you are not a player of match {self.code}")
        self._require_lobby()
        await self._store.set_ready(self.id, player_id, ready)
        seat.ready = ready
        await self.emit("ready", player_id=player_id, ready=ready)
        if all(s.ready for s in self.seats.values()):
            await self.start()

    async def start_by(self, player_id: int) -> None:
        if player_id != self.host_id:
            raise ServerError("not_host", f"only the host starts match {self.code}")
        self._require_lobby()
        await self.start()

    async def start(self) -> None:
        """Count down, then deal the same game to every seat at one server instant."""
        async with self._state_lock:
            self._require_lobby()
            self.status = "countdown"
        for seat in self.seats.values():
            # A seat away in the lobby is no longer given up; the deal times it out.
            if seat.disconnect_timer is not None:
                seat.disconnect_timer.cancel()
                seat.disconnect_timer = None
        self._deal_ready = asyncio.Event()
        await self.emit(
            "countdown",
            countdown_ms=self.options.countdown_s * 1000,
            commitment=self.seed.commitment,
            players=[seat.player_id for seat in self.seats.values()],
        )
        self._spawn_timer(self._count_down())

    async def _wait_started(self) -> None:
        await self._deal_ready.wait()

    async def _count_down(self) -> None:
        await self._sleep(self.options.countdown_s)
        self._fired()
        games = {pid: Game(self.seed, self.options.ruleset) for pid in self.seats}
        self.started_at = datetime.now(UTC)
        self._started_mono = self._clock()
        for pid, game in games.items():
            self.seats[pid].game = game
        self.status = "running"
        self._deal_ready.set()
        started_at = self.started_at
        await until_stored(
            lambda: self._store.set_match_status(self.id, "running", started_at=started_at),
            what=f"the start of match {self.code}",
            sleep=self._sleep,
        )
        first = next(iter(games.values()))
        await self.emit(
            "started",
            started_at=self.started_at.isoformat(),
            commitment=self.seed.commitment,
            ruleset=self.options.ruleset.name,
            time_limit_s=self.options.time_limit_s,
            grid=wire_grid(first),
            players=[seat.progress() for seat in self.seats.values()],
        )
        # From the deal: storing the start may have waited out an outage.
        self._spawn_timer(self._time_limit(max(0.0, self.time_limit_ms - self.now_ms()) / 1000))
        for seat in list(self.seats.values()):
            # A seat whose player left during the countdown, or who dropped, is timed out.
            if seat.connections == 0 and not seat.finished and seat.disconnect_timer is None:
                seat.disconnect_timer = self._spawn_timer(self._expire(seat))
            if seat.game is not None and seat.game.is_over():
                await self.finish_seat(seat, seat.game.result())

    async def _time_limit(self, delay_s: float | None = None) -> None:
        await self._sleep(self.options.time_limit_s if delay_s is None else delay_s)
        self._fired()
        for seat in list(self.seats.values()):
            await self.finish_seat(seat, "time", at_ms=self.options.time_limit_s * 1000)

    @property
    def time_limit_ms(self) -> int:
        return self.options.time_limit_s * 1000

    # -- restart --------------------------------------------------------------------

    def restore(self, stored: StoredMatch, *, now: datetime) -> None:
        """Take the match back as the database holds it, after a restart: its seats and
        ready flags and, once dealt, every game replayed from its stored actions (last
        seq, acknowledgements for resends, ends of games) on the match's clock, which is
        the wall clock since the deal: the downtime counts. Nobody is connected: every
        seat has the grace period from now to come back. A time limit that passed during
        the downtime ends the games still running at once; a match whose games had all
        ended is ended (its end stored) now."""
        actions: dict[int, list[Any]] = {}
        for action in stored.actions:
            actions.setdefault(action.player_id, []).append(action)
        for row in stored.seats:
            self.seats[row.player_id] = Seat(row.player_id, row.name, ready=row.ready)
        if stored.match.status == "lobby":
            for seat in self.seats.values():
                seat.disconnect_timer = self._spawn_timer(self._free_seat(seat))
            return
        started_at = stored.match.started_at
        if started_at.tzinfo is None:  # SQLite keeps no zone: the server stores UTC
            started_at = started_at.replace(tzinfo=UTC)
        self.started_at = started_at
        self._started_mono = self._clock() - (now - started_at).total_seconds()
        self.status = "running"
        self._deal_ready = asyncio.Event()
        self._deal_ready.set()
        for row in stored.seats:
            seat = self.seats[row.player_id]
            seat.game = Game(self.seed, self.options.ruleset)
            for action in actions.get(row.player_id, ()):
                played = parse_action(action.action)
                ack, _ = self._push(seat, action.seq, played, action.t_ms)
                self._acknowledged(seat, action.seq, played, ack)
            if row.end_reason is not None:
                seat.end_reason, seat.finish_ms = row.end_reason, row.finish_ms
            elif seat.game.is_over():
                # Its last action ended it, and the server stopped before storing that.
                last_ms = max((a.t_ms for a in actions.get(row.player_id, ())), default=0)
                self._spawn(self.finish_seat(seat, seat.game.result(), at_ms=last_ms))
            else:
                seat.disconnect_timer = self._spawn_timer(self._expire(seat))
        if all(seat.finished for seat in self.seats.values()):
            self._ending = True
            self._spawn(self._end())
        else:
            remaining_s = self.options.time_limit_s - self.now_ms() / 1000
            self._spawn_timer(self._time_limit(max(0.0, remaining_s)))

    # -- play -----------------------------------------------------------------------

    async def play(self, player_id: int, seq: int, action: Action) -> dict[str, Any]:
        seat = self.seats.get(player_id)
        if seat is None:
            raise ServerError("not_a_player", f"you are not a player of match {self.code}")
        async with seat.lock:
            if seq <= seat.last_seq:
                cached = seat.acks.get(seq)
                if cached is None:
                    raise ServerError(
                        "stale_seq", f"seq {seq} is older than your last action ({seat.last_seq})"
                    )
                return {**cached, "duplicate": True}
            if self.status in ("lobby", "countdown"):
                raise ServerError("not_started", f"match {self.code} has not started")
            if seat.finished or seat.game is None:
                raise ServerError(
                    "game_over", f"your game in {self.code} has ended ({seat.end_reason})"
                )
            # The timer may not have run yet: the clock decides, not the timer.
            timed_out = (
                await self._store_end(seat, "time", at_ms=self.time_limit_ms)
                if self.now_ms() >= self.time_limit_ms
                else None
            )
            if timed_out is None:
                ack = await self._apply(seat, seq, action)
                # Ended under the lock, when the server took the action: no timer can end
                # the game otherwise in between.
                ended = (
                    await self._store_end(seat, seat.game.result(), at_ms=ack["t_ms"])
                    if seat.game.is_over()
                    else None
                )
        if timed_out is not None:
            await self._announce_end(timed_out)
            raise ServerError("game_over", f"your game in {self.code} has ended (time)")
        await self.emit("progress", **seat.progress())
        if ended is not None:
            await self._announce_end(ended)
        return ack

    async def _apply(self, seat: Seat, seq: int, action: Action) -> dict[str, Any]:
        """Apply ``action`` to ``seat``'s game, store it, and only then acknowledge it."""
        t_ms = self.now_ms()
        ack, row = self._push(seat, seq, action, t_ms)
        try:
            await self._journal.append(row)
        except Exception:
            log.exception("journal append failed", extra={"match": self.code})
            # Nothing acknowledged is lost, nothing unacknowledged stays: rebuild the game
            # from the committed actions.
            seat.game = replay(self.seed, self.options.ruleset, seat.committed).game
            raise ServerError(
                "storage_unavailable", "the action could not be stored and was not applied"
            ) from None
        self._acknowledged(seat, seq, action, ack)
        return ack

    def _acknowledged(
        self, seat: Seat, seq: int, action: Action, ack: dict[str, Any]
    ) -> None:
        """Count ``action``, stored, as ``seat``'s: its seq, its ack kept for a resend."""
        seat.committed.append(action)
        seat.last_seq = seq
        if ack["score"] != ack["score_before"]:
            seat.score_ms = ack["t_ms"]
        del ack["score_before"]
        seat.acks[seq] = ack
        while len(seat.acks) > CACHED_ACKS:
            seat.acks.popitem(last=False)

    def _push(
        self, seat: Seat, seq: int, action: Action, t_ms: int
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Play ``action`` on ``seat``'s game at ``t_ms``: its acknowledgement (with the
        score before it, for ``_acknowledged``) and its row for the journal."""
        game = seat.game
        assert game is not None
        score_before = game.score
        # The card a move or undo displaces, and where from, for the ack and the journal.
        card = came_from = None
        if isinstance(action, Move) and action.card.rank > 1:
            card, came_from = action.card, game.slot_of(action.card)
        elif isinstance(action, Undo) and game.can_undo():
            card = game.undo_stack()[-1][0]
            came_from = game.slot_of(card)
        try:
            game.push(action)
        except IllegalAction as error:
            raise ServerError("illegal_action", error.message, reason=error.reason) from None
        to = game.slot_of(card) if card is not None else None
        ack: dict[str, Any] = {
            "type": "action_ok",
            "match": self.code,
            "seq": seq,
            "action": str(action),
            "kind": action_kind(action),
            "t_ms": t_ms,
            # A move or undo says what moved; a redeal sends the new grid.
            **self.game_view(seat, with_grid=isinstance(action, Redeal)),
        }
        if card is not None:
            ack.update({"card": str(card), "from": str(came_from), "to": str(to)})
        row = {
            "match_id": self.id,
            "player_id": seat.player_id,
            "seq": seq,
            "action": str(action),
            "kind": action_kind(action),
            "card": str(card) if card else None,
            "from_slot": str(came_from) if came_from else None,
            "to_slot": str(to) if to else None,
            "t_ms": t_ms,
            "score": game.score,
        }
        return {**ack, "score_before": score_before}, row

    async def finish_seat(self, seat: Seat, reason: str, *, at_ms: int | None = None) -> None:
        """End ``seat``'s game (won, lost, stopped, time, disconnected, left) and, once
        every game has ended, the match."""
        async with seat.lock:
            progress = await self._store_end(seat, reason, at_ms=at_ms)
        if progress is not None:
            await self._announce_end(progress)

    async def _store_end(
        self, seat: Seat, reason: str, *, at_ms: int | None
    ) -> dict[str, Any] | None:
        """With ``seat.lock`` held: store the end of ``seat``'s game, retrying until the
        database takes it, and only then count the seat finished (the match ends on the
        stored results, never on some still in flight). Its progress, or None if it had
        ended already."""
        if seat.finished:
            return None
        ends_ms = self.now_ms() if at_ms is None else at_ms
        if self.status == "running" and ends_ms >= self.time_limit_ms:
            # Past the limit the game has ended by time, whatever else ends it now (a
            # grace period, a leave, a timer late behind an outage).
            reason, at_ms = "time", self.time_limit_ms
        finish_ms = self.now_ms() if at_ms is None else min(at_ms, self.now_ms())
        game = seat.game
        result = {
            "score": game.score if game else 0,
            "placed": game.placed if game else 0,
            "redeals": game.redeals_used if game else 0,
            "moves": game.moves_made if game else 0,
            "won": bool(game and game.is_won()),
            "end_reason": reason,
            "finish_ms": finish_ms,
            "score_ms": seat.score_ms,
        }
        await until_stored(
            lambda: self._store.save_result(self.id, seat.player_id, **result),
            what=f"the end of player {seat.player_id}'s game in match {self.code}",
            sleep=self._sleep,
        )
        seat.end_reason = reason
        seat.finish_ms = finish_ms
        if seat.disconnect_timer is not None and reason != "disconnected":
            seat.disconnect_timer.cancel()
            seat.disconnect_timer = None
        return seat.progress()

    async def _announce_end(self, progress: dict[str, Any]) -> None:
        await self.emit("player_finished", **progress)
        if not self._ending and all(s.finished for s in self.seats.values()):
            # Off the path of the reply to whoever ended the last game.
            self._ending = True
            self._spawn(self._end())

    async def _end(self) -> None:
        """Store the end of the match (once: ``_ending`` guards it), then say so."""
        for timer in list(self._timers):
            timer.cancel()
        table = self.ranking()
        ended_at = datetime.now(UTC)
        finished = [
            FinishedGame(
                row["player_id"], row["rank"], row["score"], row["finish_ms"] or 0, row["won"]
            )
            for row in table
        ]
        end = await until_stored(
            lambda: self._store.finish_match(
                self.id,
                ended_at,
                finished,
                ruleset=self.options.ruleset.name,
                rated=self.rated,
                daily_date=self.daily_date,
            ),
            what=f"the end of match {self.code}",
            sleep=self._sleep,
        )
        self.status = "finished"
        await self.emit(
            "match_ended",
            ranking=table,
            seed=str(self.seed) if self.seed_revealed() else None,
            commitment=self.seed.commitment,
            ended_at=end.ended_at.isoformat(),
            ratings=end.ratings,
        )
        if self._on_end is not None:
            await self._on_end(self)

    def ranking(self) -> list[dict[str, Any]]:
        finishes = []
        for seat in self.seats.values():
            game = seat.game
            finishes.append(
                Finish(
                    player_id=seat.player_id,
                    won=bool(game and game.is_won()),
                    score=game.score if game else 0,
                    finish_ms=seat.finish_ms or 0,
                    score_ms=seat.score_ms,
                )
            )
        return [
            {"rank": position, **self.seats[finish.player_id].progress()}
            for position, finish in rank(finishes, self.options.win_by)
        ]

    # -- housekeeping ------------------------------------------------------------------

    def _spawn(self, coroutine: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _spawn_timer(self, coroutine: Awaitable[None]) -> asyncio.Task[None]:
        """A task that sleeps, then calls ``_fired`` and acts."""
        task = self._spawn(coroutine)
        self._timers.add(task)
        task.add_done_callback(self._timers.discard)
        return task

    def _fired(self) -> None:
        """Called by a timer once it has slept: what it does now, it finishes, even if
        the match ends meanwhile."""
        task = asyncio.current_task()
        if task is not None:
            self._timers.discard(task)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("match task failed", exc_info=task.exception(), extra={"match": self.code})

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
