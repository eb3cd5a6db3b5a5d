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
from typing import Any

import msgspec

from gaps import Action, Game, IllegalAction, Move, Redeal, Undo
from gaps_protocol.messages.common import ActionKind
from gaps_protocol.messages.events import (
    UNNUMBERED,
    Countdown,
    HostChanged,
    MatchEnded,
    MatchEvent,
    PlayerFinished,
    PlayerJoined,
    PlayerLeft,
    Presence,
    ProgressMade,
    ReadyChanged,
    RematchOffered,
    Started,
)
from gaps_protocol.messages.events import (
    MatchAbandoned as MatchAbandonedEvent,
)
from gaps_protocol.messages.replies import ActionOk
from gaps_protocol.messages.views import RatingView, RematchBy
from server.clock import iso
from server.errors import ServerError, bots_not_allowed
from server.matchstate import (
    CACHED_ACKS,
    MatchState,
    Seat,
    deal_secret,
    evolve,
    seed_revealed,
)
from server.matchviews import ack_of, progress, ranking, wire_grid
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
    ratings: tuple[RatingView, ...] = ()
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


#: ``action_ok``; a rematch's offer (see ``OfferRematch``); a snapshot to build.
Reply = ActionOk | Mapping[str, Any] | Snap | ServerError | None


@dataclass(frozen=True)
class Step:
    #: The state once ``writes`` are stored.
    state: MatchState
    reply: Reply
    #: To publish, in order, once ``writes`` are stored.
    events: tuple[MatchEvent, ...] = ()
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

    events: list[MatchEvent] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    end: tuple[RankedGame, ...] | None = None
    closed: bool = False

    def emit(self, event: MatchEvent) -> None:
        """Say ``event`` (its ``seq`` ``UNNUMBERED``: the history numbers it)."""
        self.events.append(event)


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
            if state.phase in ("finished", "abandoned"):
                raise _over(state)
            admit(state, player_id, now)
            return evolve(state, spectators=state.spectators + 1), Snap(None)
        case Unwatch():
            return evolve(state, spectators=max(0, state.spectators - 1)), None
        case Disconnect(player_id=player_id):
            return _disconnect(state, player_id, now, out), None
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
        state = evolve(state, rematches=tuple(offered.items()))
        out.emit(RematchOffered(
            match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now),
            code=code,
            same_seed=offer.same_seed,
            by=RematchBy(player_id=seat.player_id, name=seat.name),
        ))
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


def _over(state: MatchState) -> ServerError:
    """The refusal of a request that needs the match live: it has finished or was
    abandoned (``status`` says which); its result and replay stay readable."""
    if state.phase == "abandoned":
        return ServerError(
            "match_finished", f"match {state.code} was abandoned before its end", status="abandoned"
        )
    return ServerError(
        "match_finished",
        f"match {state.code} is over: its result and replay stay readable (get_replay)",
        status=state.phase,
    )


def _require_lobby(state: MatchState) -> None:
    if state.phase in ("finished", "abandoned"):
        raise _over(state)
    if state.phase != "lobby":
        raise ServerError("already_started", f"match {state.code} has started")


def _with_seat(state: MatchState, seat: Seat) -> MatchState:
    return evolve(
        state, seats=tuple(seat if s.player_id == seat.player_id else s for s in state.seats)
    )


def _connect(state: MatchState, player_id: int, now: Ms, out: _Out) -> MatchState:
    """One more connection of a seated player: back (``presence``) if they had none."""
    seat = state.seat(player_id)
    assert seat is not None
    if seat.connections == 0:
        out.emit(Presence(match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now),
                          player_id=player_id, connected=True))
    return _with_seat(state, evolve(seat, connections=seat.connections + 1, away_since=None))


def _join(
    state: MatchState, player_id: int, name: str, connected: bool, bot: bool, now: Ms, out: _Out
) -> MatchState:
    if state.seat(player_id) is not None:
        if state.phase in ("finished", "abandoned"):
            raise _over(state)
        return _connect(state, player_id, now, out) if connected else state
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
    out.emit(PlayerJoined(match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now),
                          player=progress(seat)))
    return evolve(state, seats=(*state.seats, seat))


def _disconnect(state: MatchState, player_id: int, now: Ms, out: _Out) -> MatchState:
    """A connection of a seated player closed: away (``presence``) if it was their last;
    their grace period runs while it counts against them."""
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
    if connections == 0 and seat.connections > 0 and state.phase not in ("finished", "abandoned"):
        out.emit(Presence(match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now),
                          player_id=player_id, connected=False))
    return _with_seat(state, evolve(seat, connections=connections, away_since=away_since))


def _leave(state: MatchState, player_id: int, now: Ms, out: _Out) -> MatchState:
    seat = state.seat(player_id)
    if seat is None:
        raise ServerError("not_in_match", f"you are not a player of match {state.code}")
    if state.phase == "lobby":
        return _free_seat(state, seat, now, out)
    if state.phase == "countdown":
        # Ended at the deal, with the dealt game, as if left at its first instant.
        return _with_seat(state, evolve(seat, leaving=True))
    if state.phase == "running":
        if seat.finished:
            return state
        return _end_game(state, seat, "left", state.t_ms(now), now, out)
    if state.phase == "ending":
        return state
    raise _over(state)


def _free_seat(state: MatchState, seat: Seat, at: Ms, out: _Out) -> MatchState:
    """Give ``seat`` up in the lobby: the host passes on, an empty match is abandoned."""
    state = evolve(state, seats=tuple(s for s in state.seats if s is not seat))
    out.writes.append(SeatRemoved(seat.player_id))
    out.emit(PlayerLeft(match=state.code, seq=UNNUMBERED, t_ms=0, player_id=seat.player_id))
    if not state.seats:
        return _abandon(state, at, out)
    if seat.player_id == state.host_id:
        host_id = state.seats[0].player_id
        out.writes.append(HostSet(host_id))
        out.emit(HostChanged(match=state.code, seq=UNNUMBERED, t_ms=0, host_id=host_id))
        state = evolve(state, host_id=host_id)
    if all(s.ready for s in state.seats):
        # However the seats changed, a lobby whose seated players are all ready starts.
        state = _start(state, at, out)
    return state


def _abandon(state: MatchState, now: Ms, out: _Out) -> MatchState:
    if state.phase in ("finished", "abandoned"):
        return state
    out.writes.append(MatchAbandoned(now))
    out.emit(MatchAbandonedEvent(match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now)))
    out.closed = True
    return evolve(state, phase="abandoned", deal_at=None)


def _ready(state: MatchState, player_id: int, ready: bool, now: Ms, out: _Out) -> MatchState:
    seat = state.seat(player_id)
    if seat is None:
        raise ServerError("not_in_match", f"you are not a player of match {state.code}")
    _require_lobby(state)
    out.writes.append(ReadySet(player_id, ready))
    out.emit(ReadyChanged(match=state.code, seq=UNNUMBERED, t_ms=0, player_id=player_id,
                          ready=ready))
    state = _with_seat(state, evolve(seat, ready=ready))
    if all(s.ready for s in state.seats):
        state = _start(state, now, out)
    return state


def _start(state: MatchState, now: Ms, out: _Out) -> MatchState:
    _require_lobby(state)
    deal_at = now + state.options.countdown_s * 1000
    # A seat away in the lobby is no longer given up: the deal times it out, from the deal.
    seats = tuple(
        evolve(seat, away_since=deal_at if seat.connections == 0 else None)
        for seat in state.seats
    )
    out.emit(Countdown(
        match=state.code, seq=UNNUMBERED, t_ms=0,
        countdown_ms=state.options.countdown_s * 1000,
        commitment=state.seed.commitment,
        players=[seat.player_id for seat in seats],
    ))
    return evolve(state, phase="countdown", deal_at=deal_at, seats=seats)


# -- play -------------------------------------------------------------------------------


def action_kind(action: Action) -> ActionKind:
    if isinstance(action, Move):
        return "move"
    if isinstance(action, Redeal):
        return "redeal"
    if isinstance(action, Undo):
        return "undo"
    return "stop"


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
        return state, msgspec.structs.replace(cached, duplicate=True)
    if state.phase in ("lobby", "countdown"):
        raise ServerError("not_started", f"match {state.code} has not started")
    if seat.finished or seat.game is None:
        raise ServerError(
            "game_over", f"your game in {state.code} has ended ({seat.end_reason})"
        )
    t_ms = state.t_ms(now)
    game = seat.game.copy()
    try:
        row, ack = push(state.code, player_id, game, seq, action, t_ms)
    except IllegalAction as error:
        raise ServerError("illegal_action", error.message, reason=error.reason) from None
    seat = acknowledged(seat, game, row, ack, score_before=seat.game.score)
    out.writes.append(row)
    state = _with_seat(state, seat)
    out.emit(progress(seat, ProgressMade, match=state.code, seq=UNNUMBERED, t_ms=t_ms))
    if game.is_over():
        state = _end_game(state, seat, game.result(), t_ms, now, out)
    return state, ack


def push(
    code: str, player_id: int, game: Game, seq: int, action: Action, t_ms: int
) -> tuple[ActionRow, ActionOk]:
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



def acknowledged(
    seat: Seat, game: Game, row: ActionRow, ack: ActionOk, *, score_before: int
) -> Seat:
    """``seat`` once its action ``row`` is stored: ``game`` is its game after it."""
    acks = (*seat.acks, (row.seq, ack))[-CACHED_ACKS:]
    return evolve(
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
    seat = evolve(seat, end_reason=reason, finish_ms=finish_ms, away_since=None, leaving=False)
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
    out.emit(progress(seat, PlayerFinished, match=state.code, seq=UNNUMBERED,
                      t_ms=state.t_ms(now)))
    return _with_seat(state, seat)


def _maybe_end(state: MatchState, out: _Out) -> MatchState:
    """Once every game has ended, the end of the match is to be stored."""
    if state.phase != "running" or not state.seats or not all(s.finished for s in state.seats):
        return state
    out.end = tuple(
        RankedGame(row.player_id, row.rank, row.score, row.finish_ms or 0, row.won)
        for row in ranking(state)
    )
    return evolve(state, phase="ending")


def _ended(
    state: MatchState,
    ended_at: str,
    ratings: Sequence[RatingView],
    reviews: Mapping[int, str],
    now: Ms,
    out: _Out,
) -> MatchState:
    if state.phase != "ending":
        return state
    state = evolve(state, phase="finished")
    out.emit(MatchEnded(
        match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now),
        # Each result's review: null when it counts, "held" (for an operator's review)...
        ranking=ranking(state, reviews),
        seed=str(state.seed) if seed_revealed(state, now) else None,
        commitment=state.seed.commitment,
        ended_at=ended_at,
        ratings=list(ratings),
    ))
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
    seats = tuple(evolve(seat, game=Game(state.seed, ruleset)) for seat in state.seats)
    state = evolve(state, phase="running", started_at=at, deal_at=None, seats=seats)
    out.writes.append(MatchStarted(at))
    first = seats[0].game
    assert first is not None
    out.emit(Started(
        match=state.code, seq=UNNUMBERED, t_ms=state.t_ms(now),
        started_at=iso(at),
        commitment=state.seed.commitment,
        ruleset=state.options.ruleset.name,
        time_limit_s=state.options.time_limit_s,
        grid=wire_grid(first),
        players=[progress(seat) for seat in seats],
    ))
    for seat in seats:
        if seat.leaving:
            state = _end_game(state, seat, "left", 0, now, out)
        elif seat.game is not None and seat.game.is_over():
            state = _end_game(state, seat, seat.game.result(), 0, now, out)
    return state


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

