"""The rules of a live match, without I/O: a state, commands, and what each one does.

``handle(state, command, now)`` returns a :class:`Step`: the state once its writes are
stored, the reply (or the :class:`~server.errors.ServerError` refusing the command), the
events to publish in order, the records to store before anything is said, the next instant
the match must be woken at, and whether every game has ended (the match's end is to be
stored) or the match is over for good. Nothing here reads a clock, sleeps, stores or logs:
``now`` is the caller's wall-clock time in milliseconds since the Unix epoch.

Deadlines are state, not tasks: the end of the countdown (the deal), the time limit and
each away seat's grace period are instants derived from the state. Every ``handle`` first
applies, in time order and each at its own instant, what is due at ``now`` (``advance``):
a timer only wakes the match, and a deadline that passed while the server was down or the
database was unreachable is applied as it would have been on time.

A state is never changed in place (a seat's game is copied before an action is pushed): a
step whose writes fail is dropped, and the state it came from is still whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Final

from gaps import Action, Game, IllegalAction, Move, Redeal, Ruleset, Seed, Undo, parse_action
from gaps.ranking import Finish, rank
from server.errors import ServerError, bots_not_allowed
from server.records import (
    ActionRow,
    GameEnded,
    HostSet,
    MatchAbandoned,
    MatchStarted,
    Ms,
    RankedGame,
    ReadySet,
    SeatAdded,
    SeatRemoved,
    Write,
)

#: The ways a game ends other than by its own play.
ENDED_FROM_OUTSIDE: Final = ("time", "disconnected", "left")

#: How many acknowledgements a seat keeps to answer resent actions.
CACHED_ACKS: Final = 32

if TYPE_CHECKING:
    # What mypy checks: the names and the types of the changes, as for ``replace``.
    from dataclasses import replace as _evolve
else:

    def _evolve(state, /, **changes):
        """``state`` with ``changes``, as ``dataclasses.replace`` makes it, at a fifth of
        its cost: a step rebuilds a seat and the match state, and ``replace`` was a fifth
        of a step's time (docs/benchmarks.md). A name that is not a field is refused as
        there. For ``Seat`` and ``MatchState`` only: frozen dataclasses whose instance
        dict holds their fields and nothing else (no ``__post_init__``, no cached
        property, which the copy would carry over)."""
        fields = state.__dataclass_fields__
        for name in changes:
            if name not in fields:
                raise TypeError(f"{type(state).__name__} has no field {name!r}")
        new = object.__new__(type(state))
        # A frozen dataclass only refuses ``setattr``: its ``__dict__`` is what
        # ``__init__`` would have filled.
        new.__dict__.update(state.__dict__)
        new.__dict__.update(changes)
        return new


@dataclass(frozen=True)
class MatchOptions:
    ruleset: Ruleset
    max_players: int
    time_limit_s: int
    win_by: str
    public: bool
    countdown_s: int
    #: Whether declared bots may sit (docs/fair-play.md).
    bots: bool = False


# -- state ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seat:
    """One player's seat. ``game`` is never pushed in place: the core copies it first."""

    player_id: int
    name: str
    ready: bool = False
    game: Game | None = None
    #: A declared bot's seat.
    bot: bool = False
    last_seq: int = 0
    #: (seq, action_ok) of the last ``CACHED_ACKS`` actions, oldest first.
    acks: tuple[tuple[int, Mapping[str, Any]], ...] = ()
    end_reason: str | None = None
    finish_ms: int | None = None
    score_ms: int = 0
    last_action_ms: int = 0
    #: Live connections of the player (never stored).
    connections: int = 0
    #: Since when the seat has had no connection, while that counts against it.
    away_since: Ms | None = None
    #: Left during the countdown: the game ends ``left`` at the deal.
    leaving: bool = False

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


#: The phases of a match. ``ending``: every game has ended and the end of the match is
#: being stored (``running`` on the wire until ``match_ended``).
PHASES: Final = ("lobby", "countdown", "running", "ending", "finished", "abandoned")


@dataclass(frozen=True)
class MatchState:
    id: int
    code: str
    kind: str
    options: MatchOptions
    seed: Seed
    rated: bool
    host_id: int
    grace_ms: int
    daily_date: date | None = None
    tournament_id: int | None = None
    round: int | None = None
    seats: tuple[Seat, ...] = ()
    phase: str = "lobby"
    #: The instant of the deal, once the countdown runs.
    deal_at: Ms | None = None
    #: The instant of the deal, once dealt: the match clock's zero.
    started_at: Ms | None = None
    spectators: int = 0
    #: The rematches offered once the match is over: (same seed?, the new match's code).
    #: Not stored: a finished match is not restored.
    rematches: tuple[tuple[bool, str], ...] = ()

    def seat(self, player_id: int | None) -> Seat | None:
        for seat in self.seats:
            if seat.player_id == player_id:
                return seat
        return None

    @property
    def status(self) -> str:
        """The status clients see."""
        return "running" if self.phase == "ending" else self.phase

    @property
    def time_limit_ms(self) -> int:
        return self.options.time_limit_s * 1000

    def t_ms(self, now: Ms) -> int:
        """The match clock at ``now``: milliseconds since the deal (0 before)."""
        if self.started_at is None:
            return 0
        return max(0, now - self.started_at)


def new_match(
    *,
    match_id: int,
    code: str,
    kind: str,
    options: MatchOptions,
    seed: Seed,
    rated: bool,
    host_id: int,
    grace_ms: int,
    daily_date: date | None = None,
    tournament_id: int | None = None,
    round_number: int | None = None,
) -> MatchState:
    """A match just stored, in its lobby, with no seat yet."""
    return MatchState(
        id=match_id,
        code=code,
        kind=kind,
        options=options,
        seed=seed,
        rated=rated,
        host_id=host_id,
        grace_ms=grace_ms,
        daily_date=daily_date,
        tournament_id=tournament_id,
        round=round_number,
    )


# -- commands ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Join:
    """Seat the player, or count one more connection of a seated one. ``connected``
    false reserves the seat (the server seats them: tournament, quick match, daily)."""

    player_id: int
    name: str
    connected: bool = True
    bot: bool = False


@dataclass(frozen=True)
class Watch:
    """A spectator comes (a seated player too: they watch as a spectator)."""

    player_id: int


@dataclass(frozen=True)
class Unwatch:
    pass


@dataclass(frozen=True)
class Disconnect:
    """A connection of the player closed."""

    player_id: int


@dataclass(frozen=True)
class Leave:
    player_id: int


@dataclass(frozen=True)
class Ready:
    player_id: int
    ready: bool


@dataclass(frozen=True)
class Start:
    """Count down; ``by`` is the player asking (the host), None for the server."""

    by: int | None = None


@dataclass(frozen=True)
class Act:
    player_id: int
    seq: int
    action: Action


@dataclass(frozen=True)
class Tick:
    """Apply what is due (a timer woke the match, or a failed write is retried)."""


@dataclass(frozen=True)
class Ended:
    """The end of the match is stored: say so."""

    ended_at: str
    ratings: tuple[Mapping[str, Any], ...] = ()
    #: The status of each result held off the boards and ratings, by player id.
    reviews: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Abandon:
    """Give the match up unplayed."""


@dataclass(frozen=True)
class OfferRematch:
    """A player of the finished match asks for a rematch (``same_seed``: its deal again,
    unrated; else a new secret deal). Without ``code``, only asks which match is offered
    already; with it, offers match ``code``, unless another is offered already (the first
    offer stands, so that everyone who asks meets in one match) other than ``replacing``
    (an offered match that could not be joined any more)."""

    player_id: int
    same_seed: bool
    code: str | None = None
    replacing: str | None = None


Command = (
    Join
    | Watch
    | Unwatch
    | Disconnect
    | Leave
    | Ready
    | Start
    | Act
    | Tick
    | Ended
    | Abandon
    | OfferRematch
)


@dataclass(frozen=True)
class Snap:
    """A reply to build once the step's events are published: the snapshot as
    ``player_id`` sees it (None: as a spectator)."""

    player_id: int | None


Reply = Mapping[str, Any] | Snap | ServerError | None


@dataclass(frozen=True)
class Event:
    name: str
    t_ms: int
    data: Mapping[str, Any]

    def message(self, code: str) -> dict[str, Any]:
        """The event as it goes on the wire (``seq`` is numbered by the history)."""
        return {
            "type": "event",
            "match": code,
            "seq": 0,
            "event": self.name,
            "t_ms": self.t_ms,
            **self.data,
        }


@dataclass(frozen=True)
class Step:
    #: The state once ``writes`` are stored.
    state: MatchState
    reply: Reply
    #: To publish, in order, once ``writes`` are stored.
    events: tuple[Event, ...] = ()
    #: To store, in order, before anything else.
    writes: tuple[Write, ...] = ()
    #: When to wake the match next (None: nothing is due ever).
    wake_at: Ms | None = None
    #: Every game has ended: the table to store the end of the match with.
    end: tuple[RankedGame, ...] | None = None
    #: The match is over for good (``match_ended`` or ``match_abandoned`` is published).
    closed: bool = False


@dataclass
class _Out:
    """What a step has produced so far."""

    events: list[Event] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    end: tuple[RankedGame, ...] | None = None
    closed: bool = False

    def emit(self, event: str, t_ms: int, /, **data: Any) -> None:
        self.events.append(Event(event, t_ms, data))


def handle(state: MatchState, command: Command, now: Ms) -> Step:
    """Apply what is due at ``now``, then ``command``. A refused command changes nothing
    itself: its step carries only what was due (and the refusal as ``reply``)."""
    out = _Out()
    state = advance(state, now, out)
    try:
        state, reply = _command(state, command, now, out)
    except ServerError as error:
        reply = error
    state = _maybe_end(state, out)
    return Step(
        state=state,
        reply=reply,
        events=tuple(out.events),
        writes=tuple(out.writes),
        wake_at=next_deadline(state),
        end=out.end,
        closed=out.closed,
    )


def _command(
    state: MatchState, command: Command, now: Ms, out: _Out
) -> tuple[MatchState, Reply]:
    match command:
        case Join(player_id=player_id, name=name, connected=connected, bot=bot):
            return _join(state, player_id, name, connected, bot, now, out), Snap(player_id)
        case Watch(player_id=player_id):
            # A seated player may watch too (from another terminal): as a spectator, and
            # the watching connection does not count as their seat's.
            admit(state, player_id, now)
            return _evolve(state, spectators=state.spectators + 1), Snap(None)
        case Unwatch():
            return _evolve(state, spectators=max(0, state.spectators - 1)), None
        case Disconnect(player_id=player_id):
            return _disconnect(state, player_id, now), None
        case Leave(player_id=player_id):
            return _leave(state, player_id, now, out), None
        case Ready(player_id=player_id, ready=ready):
            return _ready(state, player_id, ready, now, out), None
        case Start(by=by):
            if by is not None and by != state.host_id:
                raise ServerError("not_host", f"only the host starts match {state.code}")
            return _start(state, now, out), None
        case Act(player_id=player_id, seq=seq, action=action):
            return _act(state, player_id, seq, action, now, out)
        case Tick():
            return state, None
        case Ended(ended_at=ended_at, ratings=ratings, reviews=reviews):
            return _ended(state, ended_at, ratings, reviews, now, out), None
        case Abandon():
            return _abandon(state, now, out), None
        case OfferRematch():
            return _offer_rematch(state, command, now, out)
    raise AssertionError(f"unknown command {command!r}")


# -- rematch ----------------------------------------------------------------------------


def _offer_rematch(
    state: MatchState, offer: OfferRematch, now: Ms, out: _Out
) -> tuple[MatchState, Reply]:
    """See ``OfferRematch``. The reply: the match offered (``code``, None if none yet)
    and what a new one is created with (``options``, and the ``seed`` to deal again)."""
    seat = state.seat(offer.player_id)
    if seat is None:
        raise ServerError(
            "not_in_match", f"only the players of match {state.code} ask for its rematch"
        )
    if state.phase != "finished":
        raise ServerError(
            "not_finished", f"match {state.code} has not finished: its rematch comes after"
        )
    if offer.same_seed and not seed_revealed(state, now):
        raise ServerError(
            "not_finished",
            f"match {state.code} is a daily challenge: its deal is played again once "
            f"{state.daily_date} is over",
        )
    offered = dict(state.rematches)
    code = offered.get(offer.same_seed)
    if offer.code is not None and (code is None or code == offer.replacing):
        code = offer.code
        offered[offer.same_seed] = code
        state = _evolve(state, rematches=tuple(offered.items()))
        out.emit(
            "rematch_offered",
            state.t_ms(now),
            code=code,
            same_seed=offer.same_seed,
            by={"player_id": seat.player_id, "name": seat.name},
        )
    return state, {
        "code": code,
        "options": rematch_options(state),
        "seed": str(state.seed) if offer.same_seed else None,
    }


def rematch_options(state: MatchState) -> dict[str, Any]:
    """The options of a rematch of ``state``: the same rules, clock and bots rule; a match
    the server started (quick, daily, tournament) becomes a race for as many as played it."""
    options = state.options
    race = state.kind == "race"
    return {
        "ruleset": options.ruleset.name,
        "max_players": options.max_players if race else max(1, len(state.seats)),
        "time_limit_s": options.time_limit_s,
        "win_by": options.win_by,
        "public": options.public if race else False,
        "countdown_s": options.countdown_s,
        "bots": options.bots,
    }


# -- lobby ------------------------------------------------------------------------------


def _require_lobby(state: MatchState) -> None:
    if state.phase in ("finished", "abandoned"):
        raise ServerError("match_finished", f"match {state.code} is over")
    if state.phase != "lobby":
        raise ServerError("already_started", f"match {state.code} has started")


def _with_seat(state: MatchState, seat: Seat) -> MatchState:
    return _evolve(
        state, seats=tuple(seat if s.player_id == seat.player_id else s for s in state.seats)
    )


def _connect(state: MatchState, player_id: int) -> MatchState:
    seat = state.seat(player_id)
    assert seat is not None
    return _with_seat(state, _evolve(seat, connections=seat.connections + 1, away_since=None))


def _join(
    state: MatchState, player_id: int, name: str, connected: bool, bot: bool, now: Ms, out: _Out
) -> MatchState:
    if state.seat(player_id) is not None:
        return _connect(state, player_id) if connected else state
    _require_lobby(state)
    if bot and not state.options.bots:
        raise bots_not_allowed(
            f"the host of match {state.code} lets no bot sit", refused_by="match"
        )
    if len(state.seats) >= state.options.max_players:
        raise ServerError(
            "match_full", f"match {state.code} has its {state.options.max_players} players"
        )
    # A reserved seat (connections 0) is timed out from the deal, not given up in the lobby.
    seat = Seat(player_id, name, connections=int(connected), bot=bot)
    out.writes.append(SeatAdded(player_id, now))
    out.emit("player_joined", state.t_ms(now), player=progress(seat))
    return _evolve(state, seats=(*state.seats, seat))


def _disconnect(state: MatchState, player_id: int, now: Ms) -> MatchState:
    seat = state.seat(player_id)
    if seat is None:
        return state
    connections = max(0, seat.connections - 1)
    away_since = seat.away_since
    counts = state.phase in ("lobby", "countdown") or (
        state.phase == "running" and not seat.finished
    )
    if connections == 0 and away_since is None and counts:
        away_since = now
    return _with_seat(state, _evolve(seat, connections=connections, away_since=away_since))


def _leave(state: MatchState, player_id: int, now: Ms, out: _Out) -> MatchState:
    seat = state.seat(player_id)
    if seat is None:
        raise ServerError("not_in_match", f"you are not a player of match {state.code}")
    if state.phase == "lobby":
        return _free_seat(state, seat, now, out)
    if state.phase == "countdown":
        # Ended at the deal, with the dealt game, as if left at its first instant.
        return _with_seat(state, _evolve(seat, leaving=True))
    if state.phase == "running":
        if seat.finished:
            return state
        return _end_game(state, seat, "left", state.t_ms(now), now, out)
    if state.phase == "ending":
        return state
    raise ServerError("match_finished", f"match {state.code} is over")


def _free_seat(state: MatchState, seat: Seat, at: Ms, out: _Out) -> MatchState:
    """Give ``seat`` up in the lobby: the host passes on, an empty match is abandoned."""
    state = _evolve(state, seats=tuple(s for s in state.seats if s is not seat))
    out.writes.append(SeatRemoved(seat.player_id))
    out.emit("player_left", 0, player_id=seat.player_id)
    if not state.seats:
        return _abandon(state, at, out)
    if seat.player_id == state.host_id:
        host_id = state.seats[0].player_id
        out.writes.append(HostSet(host_id))
        out.emit("host_changed", 0, host_id=host_id)
        state = _evolve(state, host_id=host_id)
    return state


def _abandon(state: MatchState, now: Ms, out: _Out) -> MatchState:
    if state.phase in ("finished", "abandoned"):
        return state
    out.writes.append(MatchAbandoned(now))
    out.emit("match_abandoned", state.t_ms(now))
    out.closed = True
    return _evolve(state, phase="abandoned", deal_at=None)


def _ready(state: MatchState, player_id: int, ready: bool, now: Ms, out: _Out) -> MatchState:
    seat = state.seat(player_id)
    if seat is None:
        raise ServerError("not_in_match", f"you are not a player of match {state.code}")
    _require_lobby(state)
    out.writes.append(ReadySet(player_id, ready))
    out.emit("ready", 0, player_id=player_id, ready=ready)
    state = _with_seat(state, _evolve(seat, ready=ready))
    if all(s.ready for s in state.seats):
        state = _start(state, now, out)
    return state


def _start(state: MatchState, now: Ms, out: _Out) -> MatchState:
    _require_lobby(state)
    deal_at = now + state.options.countdown_s * 1000
    # A seat away in the lobby is no longer given up: the deal times it out, from the deal.
    seats = tuple(
        _evolve(seat, away_since=deal_at if seat.connections == 0 else None)
        for seat in state.seats
    )
    out.emit(
        "countdown",
        0,
        countdown_ms=state.options.countdown_s * 1000,
        commitment=state.seed.commitment,
        players=[seat.player_id for seat in seats],
    )
    return _evolve(state, phase="countdown", deal_at=deal_at, seats=seats)


# -- play -------------------------------------------------------------------------------


def action_kind(action: Action) -> str:
    if isinstance(action, Move):
        return "move"
    if isinstance(action, Redeal):
        return "redeal"
    if isinstance(action, Undo):
        return "undo"
    return "stop"


def wire_grid(game: Game) -> list[str]:
    """The grid as four rows of 13 cells (``--`` a gap), as it goes on the wire."""
    return game.layout().splitlines()


def _act(
    state: MatchState, player_id: int, seq: int, action: Action, now: Ms, out: _Out
) -> tuple[MatchState, Reply]:
    seat = state.seat(player_id)
    if seat is None:
        raise ServerError("not_a_player", f"you are not a player of match {state.code}")
    if seq <= seat.last_seq:
        cached = dict(seat.acks).get(seq)
        if cached is None:
            raise ServerError(
                "stale_seq", f"seq {seq} is older than your last action ({seat.last_seq})"
            )
        return state, {**cached, "duplicate": True}
    if state.phase in ("lobby", "countdown"):
        raise ServerError("not_started", f"match {state.code} has not started")
    if seat.finished or seat.game is None:
        raise ServerError(
            "game_over", f"your game in {state.code} has ended ({seat.end_reason})"
        )
    t_ms = state.t_ms(now)
    game = seat.game.copy()
    try:
        row, ack = _push(state.code, player_id, game, seq, action, t_ms)
    except IllegalAction as error:
        raise ServerError("illegal_action", error.message, reason=error.reason) from None
    seat = _acknowledged(seat, game, row, ack, score_before=seat.game.score)
    out.writes.append(row)
    state = _with_seat(state, seat)
    out.emit("progress", t_ms, **progress(seat))
    if game.is_over():
        state = _end_game(state, seat, game.result(), t_ms, now, out)
    return state, ack


def _push(
    code: str, player_id: int, game: Game, seq: int, action: Action, t_ms: int
) -> tuple[ActionRow, dict[str, Any]]:
    """Play ``action`` on ``game`` (in place) at ``t_ms``: its journal row and its
    acknowledgement. Raises ``IllegalAction``, ``game`` untouched."""
    # The card a move or undo displaces, and where from, for the ack and the journal.
    card = came_from = None
    if isinstance(action, Move) and action.card.rank > 1:
        card, came_from = action.card, game.slot_of(action.card)
    elif isinstance(action, Undo) and game.can_undo():
        card = game.undo_stack()[-1][0]
        came_from = game.slot_of(card)
    game.push(action)
    to = game.slot_of(card) if card is not None else None
    row = ActionRow(
        player_id=player_id,
        seq=seq,
        action=str(action),
        kind=action_kind(action),
        card=str(card) if card else None,
        from_slot=str(came_from) if came_from else None,
        to_slot=str(to) if to else None,
        t_ms=t_ms,
        score=game.score,
    )
    return row, ack_of(code, row, game)


def ack_of(code: str, row: ActionRow, game: Game) -> dict[str, Any]:
    """The acknowledgement of the action ``row``, ``game`` being the game right after it:
    live and rebuilt after a restart alike."""
    ack: dict[str, Any] = {
        "type": "action_ok",
        "match": code,
        "seq": row.seq,
        "action": row.action,
        "kind": row.kind,
        "t_ms": row.t_ms,
        # A move or undo says what moved; a redeal sends the new grid.
        **_game_view(game, game.result(), with_grid=row.kind == "redeal"),
    }
    if row.card is not None:
        ack.update({"card": row.card, "from": row.from_slot, "to": row.to_slot})
    return ack


def _acknowledged(
    seat: Seat, game: Game, row: ActionRow, ack: dict[str, Any], *, score_before: int
) -> Seat:
    """``seat`` once its action ``row`` is stored: ``game`` is its game after it."""
    acks = (*seat.acks, (row.seq, ack))[-CACHED_ACKS:]
    return _evolve(
        seat,
        game=game,
        last_seq=row.seq,
        acks=acks,
        score_ms=row.t_ms if game.score != score_before else seat.score_ms,
        last_action_ms=row.t_ms,
    )


def _end_game(
    state: MatchState, seat: Seat, reason: str, finish_ms: int, now: Ms, out: _Out
) -> MatchState:
    """End ``seat``'s game: stored whole, then said (``player_finished``). Past the time
    limit a game has ended by time, whatever else ends it."""
    if finish_ms >= state.time_limit_ms:
        reason, finish_ms = "time", state.time_limit_ms
    finish_ms = max(0, finish_ms)
    game = seat.game
    seat = _evolve(seat, end_reason=reason, finish_ms=finish_ms, away_since=None, leaving=False)
    out.writes.append(
        GameEnded(
            player_id=seat.player_id,
            end_reason=reason,
            finish_ms=finish_ms,
            score_ms=seat.score_ms,
            score=game.score if game else 0,
            placed=game.placed if game else 0,
            redeals=game.redeals_used if game else 0,
            moves=game.moves_made if game else 0,
            won=bool(game and game.is_won()),
        )
    )
    out.emit("player_finished", state.t_ms(now), **progress(seat))
    return _with_seat(state, seat)


def _maybe_end(state: MatchState, out: _Out) -> MatchState:
    """Once every game has ended, the end of the match is to be stored."""
    if state.phase != "running" or not state.seats or not all(s.finished for s in state.seats):
        return state
    out.end = tuple(
        RankedGame(row["player_id"], row["rank"], row["score"], row["finish_ms"] or 0, row["won"])
        for row in ranking(state)
    )
    return _evolve(state, phase="ending")


def _ended(
    state: MatchState,
    ended_at: str,
    ratings: Sequence[Mapping[str, Any]],
    reviews: Mapping[int, str],
    now: Ms,
    out: _Out,
) -> MatchState:
    if state.phase != "ending":
        return state
    state = _evolve(state, phase="finished")
    out.emit(
        "match_ended",
        state.t_ms(now),
        # Each result's review: null when it counts, "held" (for an operator's review)...
        ranking=[{**row, "review": reviews.get(row["player_id"])} for row in ranking(state)],
        seed=str(state.seed) if seed_revealed(state, now) else None,
        commitment=state.seed.commitment,
        ended_at=ended_at,
        ratings=[dict(rating) for rating in ratings],
    )
    out.closed = True
    return state


# -- deadlines --------------------------------------------------------------------------


def _deadlines(state: MatchState) -> Iterable[tuple[Ms, int, int]]:
    """(instant, order, player_id) of every deadline of ``state``; order: the deal, then
    games over by play, the time limit, grace periods."""
    if state.phase == "countdown" and state.deal_at is not None:
        yield state.deal_at, 0, 0
    elif state.phase == "lobby":
        for seat in state.seats:
            if seat.connections == 0 and seat.away_since is not None:
                yield seat.away_since + state.grace_ms, 3, seat.player_id
    elif state.phase == "running" and state.started_at is not None:
        unfinished = [seat for seat in state.seats if not seat.finished]
        if unfinished:
            yield state.started_at + state.time_limit_ms, 2, 0
        for seat in unfinished:
            if seat.game is not None and seat.game.is_over():
                yield state.started_at + seat.last_action_ms, 1, seat.player_id
            elif seat.connections == 0 and seat.away_since is not None:
                yield seat.away_since + state.grace_ms, 3, seat.player_id


def next_deadline(state: MatchState) -> Ms | None:
    """The instant the match must be woken at next, if any."""
    return min((at for at, _, _ in _deadlines(state)), default=None)


def advance(state: MatchState, now: Ms, out: _Out | None = None) -> MatchState:
    """Apply every deadline due at ``now``, in time order, each at its own instant."""
    out = out if out is not None else _Out()
    while True:
        due = min((d for d in _deadlines(state) if d[0] <= now), default=None)
        if due is None:
            return _maybe_end(state, out)
        at, order, player_id = due
        if order == 0:
            state = _deal(state, at, now, out)
            continue
        seat = state.seat(player_id)
        if order == 2:
            for seat in state.seats:
                if not seat.finished:
                    state = _end_game(state, seat, "time", state.time_limit_ms, now, out)
        elif state.phase == "lobby":
            assert seat is not None
            state = _free_seat(state, seat, at, out)
        elif order == 1:
            assert seat is not None and seat.game is not None
            state = _end_game(state, seat, seat.game.result(), seat.last_action_ms, now, out)
        else:
            assert seat is not None
            finish_ms = max(state.t_ms(at), seat.last_action_ms)
            state = _end_game(state, seat, "disconnected", finish_ms, now, out)


def _deal(state: MatchState, at: Ms, now: Ms, out: _Out) -> MatchState:
    """The end of the countdown: the same game to every seat at one instant."""
    ruleset = state.options.ruleset
    seats = tuple(_evolve(seat, game=Game(state.seed, ruleset)) for seat in state.seats)
    state = _evolve(state, phase="running", started_at=at, deal_at=None, seats=seats)
    out.writes.append(MatchStarted(at))
    first = seats[0].game
    assert first is not None
    out.emit(
        "started",
        state.t_ms(now),
        started_at=_iso(at),
        commitment=state.seed.commitment,
        ruleset=state.options.ruleset.name,
        time_limit_s=state.options.time_limit_s,
        grid=wire_grid(first),
        players=[progress(seat) for seat in seats],
    )
    for seat in seats:
        if seat.leaving:
            state = _end_game(state, seat, "left", 0, now, out)
        elif seat.game is not None and seat.game.is_over():
            state = _end_game(state, seat, seat.game.result(), 0, now, out)
    return state


# -- restore ----------------------------------------------------------------------------


def rebuild(
    stored: Any, *, now: Ms, grace_ms: int, default_countdown_s: int
) -> MatchState:
    """The match as the database holds it (``Store.unfinished_matches``' rows: ``match``,
    ``seats``, ``actions``), after a restart: seats and ready flags and, once dealt,
    every game replayed from its stored actions (last seq, the acknowledgements of the
    last ``CACHED_ACKS`` for resends, ends of games). Nobody is connected: every seat
    still playing has the grace period from ``now``. The match's clock is the wall clock
    since the deal: what fell due during the downtime is applied by the next ``handle``."""
    row = stored.match
    options = MatchOptions(
        ruleset=Ruleset.named(row.ruleset),
        max_players=row.max_players,
        time_limit_s=row.time_limit_s,
        win_by=row.win_by,
        public=row.public,
        countdown_s=default_countdown_s if row.countdown_s is None else row.countdown_s,
        bots=bool(getattr(row, "bots", False)),
    )
    state = MatchState(
        id=row.id,
        code=row.code,
        kind=row.kind,
        options=options,
        seed=Seed(row.seed),
        rated=row.rated,
        host_id=row.host_id,
        grace_ms=grace_ms,
        daily_date=row.daily_date,
        tournament_id=getattr(row, "tournament_id", None),
        round=getattr(row, "round", None),
    )
    if row.status == "lobby":
        return _evolve(
            state,
            seats=tuple(
                Seat(s.player_id, s.name, ready=s.ready, away_since=now, bot=_bot(s))
                for s in stored.seats
            ),
        )
    started_at = _ms(row.started_at)
    actions: dict[int, list[Any]] = {}
    for action in stored.actions:
        actions.setdefault(action.player_id, []).append(action)
    seats: list[Seat] = []
    for s in stored.seats:
        seat = Seat(s.player_id, s.name, ready=s.ready, bot=_bot(s))
        game = Game(state.seed, options.ruleset)
        for action in actions.get(s.player_id, ()):
            before = game.score
            played = parse_action(action.action)
            pushed, ack = _push(state.code, s.player_id, game, action.seq, played, action.t_ms)
            seat = _acknowledged(seat, game, pushed, ack, score_before=before)
        seat = _evolve(seat, game=game)
        if s.end_reason is not None:
            seat = _evolve(seat, end_reason=s.end_reason, finish_ms=s.finish_ms)
            if s.score_ms is not None:
                seat = _evolve(seat, score_ms=s.score_ms)
        else:
            seat = _evolve(seat, away_since=now)
        seats.append(seat)
    return _evolve(state, phase="running", started_at=started_at, seats=tuple(seats))


def _bot(stored_seat: Any) -> bool:
    """Whether a stored seat is a declared bot's (rows read before there were bots: no)."""
    return bool(getattr(stored_seat, "bot", False))


def _ms(moment: datetime) -> Ms:
    if moment.tzinfo is None:  # SQLite keeps no zone: the server stores UTC
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _iso(at: Ms) -> str:
    return datetime.fromtimestamp(at / 1000, UTC).isoformat()


# -- views ------------------------------------------------------------------------------


def deal_secret(state: MatchState, now: Ms) -> bool:
    """Whether the deal is still to be played by others: a daily challenge's is, until
    its day is over."""
    today = datetime.fromtimestamp(now / 1000, UTC).date()
    return state.daily_date is not None and today <= state.daily_date


def seed_revealed(state: MatchState, now: Ms) -> bool:
    """Whether the seed may be published: once the match is over, except that a daily
    challenge's seed stays secret until its day is over (others still play it)."""
    return state.phase == "finished" and not deal_secret(state, now)


def admit(state: MatchState, player_id: int, now: Ms) -> None:
    """Let ``player_id`` see the match's events (watch it, resync it), or refuse with
    ``not_watchable``: nobody but its own player may see a daily challenge's deal before
    its day is over. A spectator would get the deal in the ``started`` event, then play
    that very deal."""
    if state.seat(player_id) is not None or not deal_secret(state, now):
        return
    raise ServerError(
        "not_watchable",
        f"match {state.code} is a daily challenge: it can be watched once "
        f"{state.daily_date} is over",
    )


def progress(seat: Seat) -> dict[str, Any]:
    game = seat.game
    return {
        "player_id": seat.player_id,
        "name": seat.name,
        "bot": seat.bot,
        "ready": seat.ready,
        "connected": seat.connections > 0,
        "placed": game.placed if game else 0,
        "score": game.score if game else 0,
        "redeals_used": game.redeals_used if game else 0,
        "moves_made": game.moves_made if game else 0,
        "status": seat.status,
        "finished": seat.finished,
        "won": bool(game and game.is_won()),
        "end_reason": seat.end_reason,
        "finish_ms": seat.finish_ms,
    }


def game_view(seat: Seat, *, with_grid: bool = True) -> dict[str, Any]:
    assert seat.game is not None
    return _game_view(seat.game, seat.status, with_grid=with_grid)


def _game_view(game: Game, status: str, *, with_grid: bool) -> dict[str, Any]:
    view: dict[str, Any] = {"grid": wire_grid(game)} if with_grid else {}
    return view | {
        "score": game.score,
        "placed": game.placed,
        "redeals_used": game.redeals_used,
        "redeals_left": game.redeals_left,
        "moves_made": game.moves_made,
        "status": status,
        "can_undo": game.can_undo(),
    }


def summary(state: MatchState, now: Ms) -> dict[str, Any]:
    options = state.options
    view: dict[str, Any] = {
        "id": state.id,
        "code": state.code,
        "ruleset": options.ruleset.name,
        "max_players": options.max_players,
        "time_limit_s": options.time_limit_s,
        "win_by": options.win_by,
        "public": options.public,
        "rated": state.rated,
        "countdown_s": options.countdown_s,
        "bots": options.bots,
        "host_id": state.host_id,
        "kind": state.kind,
        "status": state.status,
        "players": len(state.seats),
        "commitment": state.seed.commitment if state.phase != "lobby" else None,
        "started_at": _iso(state.started_at) if state.started_at is not None else None,
        "t_ms": state.t_ms(now),
    }
    if seed_revealed(state, now):
        view["seed"] = str(state.seed)
    return view


def snapshot(state: MatchState, player_id: int | None, now: Ms, *, seq: int) -> dict[str, Any]:
    """Everything a client needs to draw the match at ``now``, as ``player_id`` sees it;
    ``seq`` is the last event's."""
    seat = state.seat(player_id) if player_id is not None else None
    you: dict[str, Any] = {"role": "player" if seat else "spectator"}
    if seat is not None and seat.game is not None:
        you["game"] = game_view(seat)
        you["last_seq"] = seat.last_seq
    return {
        "match": summary(state, now),
        "players": [progress(s) for s in state.seats],
        "spectators": state.spectators,
        "you": you,
        "seq": seq,
    }


def ranking(state: MatchState) -> list[dict[str, Any]]:
    """Every seat with its rank (``gaps.ranking``), best first."""
    finishes = []
    for seat in state.seats:
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
    by_id = {seat.player_id: seat for seat in state.seats}
    return [
        {"rank": position, **progress(by_id[finish.player_id])}
        for position, finish in rank(finishes, state.options.win_by)
    ]
