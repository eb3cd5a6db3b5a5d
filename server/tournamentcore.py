"""The rules of a tournament, without I/O: a state, commands, and what each one does.

A tournament is in the duplicate format: every entrant plays the same deals, round by
round; each round is one match of every entrant still in. ``handle(state, command, now)``
returns a :class:`Step`: the new state, the reply (or the ``ServerError`` refusing the
command), the events to publish in order, the rows to store first, the next instant to
be woken at, and what the actor is to do besides: deal a round (create its match) or
check in the database whether the round's match has ended. Nothing here reads a clock,
sleeps, stores or logs; ``now`` is wall-clock milliseconds since the Unix epoch.

Deadlines are state: a scheduled start (``start_at``), the end of a break
(``next_round_at``) and the next check of the round being played (``check_at``). Every
``handle`` first applies what is due at ``now``, in time order.

The organiser steers the evening: announcements to every entrant and follower (the last
``ANNOUNCEMENTS_KEPT`` are in the view, for whoever follows later), a pause between
rounds (asked during a round, it holds the next round back once this one has ended;
the break's end is not applied while paused), a cancel with a reason at any time
before the end (a round being played is abandoned: its match is given up, unrated, and
not counted; the standings stay those of the rounds counted), late entry until a
round they chose (``late_entry_until_round``), and reinstating an entrant they removed
(seated from the next round dealt).

An entrant who missed a counted round (they entered late, or were removed then) scores
0 for it and is charged the round's whole time limit: missing a round never ranks
anyone above those who played it with the same score.

A scheduled tournament whose start comes with nobody to play is cancelled (``if_empty:
"cancel"``, the default) or, if its organiser chose ``if_empty: "wait"`` at creation,
starts as soon as its first entrant joins.

Its deals are committed before anyone enters (``gaps.commitment``): the seed of every
round is drawn when it is created and is part of its state, with the commitment in its
view; a round is dealt its own seed (dealt again after its match was lost, the same
seed: every entrant had been shown it at the same instant, so the commitment holds and
nobody gains on another), revealed once the round has ended, and all of them once the
tournament is over. A tournament of ``deals: "winnable"`` has no seed when it is
created: the actor draws deals until the solver proves them winnable (``DrawDeals``),
off the players' path, and entries open once they are committed (``DealsDrawn``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from gaps.commitment import deals_commitment, round_commitments
from gaps.seed import Seed
from server.clock import iso
from server.errors import ServerError, bots_not_allowed
from server.records import Ms

#: The rows ranked 1 to this many (and still in) are the podium.
PODIUM: Final = 3

#: Why a scheduled tournament with nobody to play is cancelled.
NOBODY_ENTERED: Final = "nobody entered before the start time"

STATUSES: Final = ("open", "running", "finished", "cancelled")
#: How many of the host's announcements the view keeps (the last ones).
ANNOUNCEMENTS_KEPT: Final = 10
#: Which deals a tournament's rounds are dealt: any deal, or only those the solver
#: proved winnable without redeal.
DEALS: Final = ("any", "winnable")


# -- state ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentOptions:
    """What the organiser chose at creation (and the server's timings)."""

    name: str
    ruleset: str
    rounds: int
    max_players: int
    round_time_limit_s: int
    start_at: Ms | None = None
    bots: bool = False
    if_empty: str = "cancel"
    countdown_s: int = 10
    break_s: float = 15.0
    deals: str = "any"
    #: Players may enter a running tournament until this round is dealt (0: no late
    #: entry); they play from the next round dealt.
    late_entry_until_round: int = 0


@dataclass(frozen=True)
class Announcement:
    """What the host said to everyone, and when."""

    text: str
    at: Ms


@dataclass(frozen=True)
class Entrant:
    player_id: int
    name: str
    bot: bool = False
    #: Why the host removed them (None: still in).
    removed_reason: str | None = None

    @property
    def removed(self) -> bool:
        return self.removed_reason is not None


@dataclass(frozen=True)
class RoundScore:
    """One entrant's result in one round: what the standings add up."""

    player_id: int
    score: int
    time_ms: int


@dataclass(frozen=True)
class Round:
    """A round dealt: its match, and once counted, its scores and when it ended."""

    number: int
    code: str
    scores: tuple[RoundScore, ...] | None = None
    ended_at: Ms | None = None

    @property
    def counted(self) -> bool:
        return self.scores is not None


@dataclass(frozen=True)
class TournamentState:
    id: int
    code: str
    host_id: int
    options: TournamentOptions
    status: str = "open"
    entrants: tuple[Entrant, ...] = ()
    #: The rounds dealt, in order (the last one may be being played).
    rounds: tuple[Round, ...] = ()
    #: The round whose match is being created (None: none).
    dealing: int | None = None
    #: When the next round is dealt (running, between rounds).
    next_round_at: Ms | None = None
    #: When the round being played is next looked for in the database (its match may
    #: end on another process); None while a check is under way.
    check_at: Ms | None = None
    #: How long between two checks of the round being played.
    check_ms: int = 1000
    #: The round's match ended here while a look was under way: look again after it.
    look_again: bool = False
    #: The scheduled start passed with nobody to play (``if_empty: "wait"``): the first
    #: entrant starts it.
    start_due: bool = False
    cancel_reason: str | None = None
    #: The seed of each round, in order, committed to before anyone entered; none while
    #: winnable deals are being drawn (or for a tournament stored before deals were
    #: committed, whose rounds are dealt a fresh seed each).
    seeds: tuple[bytes, ...] = ()
    #: Winnable deals are being drawn for it by this process (not stored: a rebuilt
    #: tournament asks for them again).
    drawing: bool = False
    #: The host paused it: no round is dealt until they resume it.
    paused: bool = False
    #: The next deal is of a round begun already (its match lost, or never stored before
    #: a restart): dealt even while paused, which holds only rounds not begun.
    dealing_again: bool = False
    #: The host's last announcements, oldest first (``ANNOUNCEMENTS_KEPT`` at most).
    announcements: tuple[Announcement, ...] = ()

    @property
    def preparing(self) -> bool:
        """Its winnable deals are not drawn yet: nobody may enter or start it."""
        return self.options.deals == "winnable" and not self.seeds and not self.over

    def seed_of(self, number: int) -> bytes | None:
        """Round ``number``'s committed seed (None: the tournament committed none)."""
        return self.seeds[number - 1] if len(self.seeds) >= number else None

    def revealed(self, number: int) -> bool:
        """Whether round ``number``'s seed is public: the round has ended (its match, and
        the seed's secret with it, is over), or the tournament has."""
        if self.over:
            return True
        return len(self.rounds) >= number and self.rounds[number - 1].counted

    @property
    def current_round(self) -> int:
        """The last round dealt or being dealt (0 before the first)."""
        return self.dealing if self.dealing is not None else len(self.rounds)

    @property
    def playing(self) -> bool:
        """A round is being dealt or played (from its deal to its count)."""
        return self.dealing is not None or (bool(self.rounds) and not self.rounds[-1].counted)

    @property
    def round_code(self) -> str | None:
        """The match of the round being played."""
        if self.rounds and not self.rounds[-1].counted:
            return self.rounds[-1].code
        return None

    def entrant(self, player_id: int) -> Entrant | None:
        for entrant in self.entrants:
            if entrant.player_id == player_id:
                return entrant
        return None

    def seated(self) -> tuple[Entrant, ...]:
        """The entrants a round seats: all but those removed, in joining order."""
        return tuple(e for e in self.entrants if not e.removed)

    @property
    def over(self) -> bool:
        return self.status in ("finished", "cancelled")


def new_tournament(
    *,
    tournament_id: int,
    code: str,
    host_id: int,
    options: TournamentOptions,
    check_ms: int,
    seeds: Sequence[bytes] = (),
) -> TournamentState:
    """A tournament just stored: open, with no entrant, and the ``seeds`` of its rounds
    (none for ``deals: "winnable"``: they are drawn next)."""
    if seeds and len(seeds) != options.rounds:
        raise ValueError(f"{options.rounds} rounds need {options.rounds} seeds, not {len(seeds)}")
    return TournamentState(
        id=tournament_id,
        code=code,
        host_id=host_id,
        options=options,
        check_ms=check_ms,
        seeds=tuple(seeds),
    )


# -- records to store ----------------------------------------------------------------------


@dataclass(frozen=True)
class EntrantAdded:
    player_id: int
    at: Ms
    #: Their place in the joining order (1 for the first): rounds seat them in it.
    position: int


@dataclass(frozen=True)
class EntrantRemoved:
    player_id: int
    reason: str
    at: Ms


@dataclass(frozen=True)
class TournamentStarted:
    at: Ms


@dataclass(frozen=True)
class RoundBegun:
    """Round ``number`` is dealt next (stored before its match is)."""

    number: int


@dataclass(frozen=True)
class StandingsRecorded:
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class TournamentFinished:
    at: Ms


@dataclass(frozen=True)
class TournamentCancelled:
    reason: str
    at: Ms
    #: The rounds counted: a round dealt or being played when the host cancelled is not.
    current_round: int = 0


@dataclass(frozen=True)
class EntrantReinstated:
    player_id: int
    at: Ms


@dataclass(frozen=True)
class PauseSet:
    """The host paused (``paused``) or resumed the tournament."""

    paused: bool
    at: Ms


@dataclass(frozen=True)
class AnnouncementMade:
    text: str
    at: Ms


@dataclass(frozen=True)
class DealsCommitted:
    """The seeds of the rounds, drawn (proven winnable), stored before they are said."""

    seeds: tuple[bytes, ...]


Write = (
    EntrantAdded
    | EntrantRemoved
    | TournamentStarted
    | RoundBegun
    | StandingsRecorded
    | TournamentFinished
    | TournamentCancelled
    | DealsCommitted
    | EntrantReinstated
    | PauseSet
    | AnnouncementMade
)


# -- commands --------------------------------------------------------------------------


@dataclass(frozen=True)
class Join:
    player_id: int
    name: str
    bot: bool = False


@dataclass(frozen=True)
class Remove:
    """The host (``by``) removes the entrant named ``player`` (any case) for ``reason``."""

    by: int
    player: str
    reason: str


@dataclass(frozen=True)
class Start:
    """The host (``by``) starts the tournament now."""

    by: int


@dataclass(frozen=True)
class Reinstate:
    """The host (``by``) takes back the entrant named ``player`` they had removed."""

    by: int
    player: str


@dataclass(frozen=True)
class Cancel:
    """The host (``by``) cancels the tournament, before or during it, for ``reason``."""

    by: int
    reason: str


@dataclass(frozen=True)
class Pause:
    """The host (``by``) holds the next round back (``Resume``: lets it be dealt)."""

    by: int


@dataclass(frozen=True)
class Resume:
    by: int


@dataclass(frozen=True)
class Announce:
    """The host (``by``) says ``text`` to every entrant and follower."""

    by: int
    text: str


@dataclass(frozen=True)
class Tick:
    """Apply what is due."""


@dataclass(frozen=True)
class RoundDealt:
    """Round ``number``'s match ``code`` is stored, its seats reserved."""

    number: int
    code: str


@dataclass(frozen=True)
class CheckRound:
    """The round being played may have ended (its match ended on this process): look."""


@dataclass(frozen=True)
class RoundRunning:
    """A check found round ``number``'s match still running."""

    number: int


@dataclass(frozen=True)
class RoundLost:
    """Round ``number``'s match ``code`` was abandoned unplayed (it could not be taken
    back after a crash): the round is dealt again, with a new deal."""

    number: int
    code: str


@dataclass(frozen=True)
class RoundEnded:
    """Round ``number``'s match ``code`` has ended (or was abandoned: no scores)."""

    number: int
    code: str
    scores: tuple[RoundScore, ...]
    ended_at: Ms


@dataclass(frozen=True)
class DealsDrawn:
    """The winnable deals asked for by ``DrawDeals`` are drawn: ``seeds``, in round order."""

    seeds: tuple[bytes, ...]


@dataclass(frozen=True)
class NoDeals:
    """The deals asked for by ``DrawDeals`` could not be drawn (``reason``)."""

    reason: str


Command = (
    Join
    | Remove
    | Start
    | Tick
    | RoundDealt
    | CheckRound
    | RoundRunning
    | RoundEnded
    | RoundLost
    | DealsDrawn
    | NoDeals
    | Reinstate
    | Cancel
    | Pause
    | Resume
    | Announce
)


# -- what to do besides -----------------------------------------------------------------


@dataclass(frozen=True)
class DealRound:
    """Create round ``number``'s match for ``seats`` (player id, name, declared bot),
    dealt ``seed`` (None: a fresh one, for a tournament that committed none), then say
    ``RoundDealt`` and start it."""

    number: int
    seats: tuple[tuple[int, str, bool], ...]
    seed: bytes | None = None


@dataclass(frozen=True)
class DrawDeals:
    """Draw ``count`` deals of ``ruleset`` that the solver proves winnable, then say
    ``DealsDrawn`` (or ``NoDeals``)."""

    count: int
    ruleset: str


@dataclass(frozen=True)
class LookForRound:
    """Look in the database whether round ``number``'s match ``code`` has ended; say
    ``RoundEnded``, ``RoundLost`` (abandoned) or ``RoundRunning``."""

    number: int
    code: str


@dataclass(frozen=True)
class Event:
    name: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Entered:
    """The reply to a join or a removal: the view and the last event's seq."""


@dataclass(frozen=True)
class Viewed:
    """The reply to a start: the view."""


Reply = Entered | Viewed | ServerError | None


@dataclass(frozen=True)
class Step:
    state: TournamentState
    reply: Reply
    events: tuple[Event, ...] = ()
    writes: tuple[Write, ...] = ()
    wake_at: Ms | None = None
    deal: DealRound | None = None
    look: LookForRound | None = None
    draw: DrawDeals | None = None
    #: Give up this match unplayed: the round being played when the host cancelled.
    abandon: str | None = None
    #: The tournament is over for good (finished or cancelled).
    closed: bool = False


@dataclass
class _Out:
    events: list[Event] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    deal: DealRound | None = None
    look: LookForRound | None = None
    draw: DrawDeals | None = None
    abandon: str | None = None
    closed: bool = False

    def emit(self, name: str, /, **data: Any) -> None:
        self.events.append(Event(name, data))


def handle(state: TournamentState, command: Command, now: Ms) -> Step:
    """Apply what is due at ``now``, then ``command``. A refused command changes nothing
    itself: its step carries only what was due (and the refusal as ``reply``)."""
    out = _Out()
    state = advance(state, now, out)
    reply: Reply
    try:
        state, reply = _command(state, command, now, out)
    except ServerError as error:
        reply = error
    state = advance(state, now, out)
    return Step(
        state=state,
        reply=reply,
        events=tuple(out.events),
        writes=tuple(out.writes),
        wake_at=next_deadline(state),
        deal=out.deal,
        look=out.look,
        draw=out.draw,
        abandon=out.abandon,
        closed=out.closed,
    )


def _command(
    state: TournamentState, command: Command, now: Ms, out: _Out
) -> tuple[TournamentState, Reply]:
    match command:
        case Join(player_id=player_id, name=name, bot=bot):
            return _join(state, player_id, name, bot, now, out), Entered()
        case Remove(by=by, player=player, reason=reason):
            return _remove(state, by, player, reason, now, out), Entered()
        case Start(by=by):
            if by != state.host_id:
                raise ServerError("not_host", f"only the host starts tournament {state.code}")
            require_open(state)
            require_deals(state)
            if not state.seated():
                raise ServerError("bad_message", f"tournament {state.code} has no entrants")
            return _begin(state, now, out), Viewed()
        case Reinstate(by=by, player=player):
            return _reinstate(state, by, player, now, out), Entered()
        case Cancel(by=by, reason=reason):
            _require_host(state, by, "cancels tournament")
            require_not_over(state)
            return _cancel(state, reason, now, out, by_host=True), Viewed()
        case Pause(by=by):
            return _pause(state, by, now, out), Viewed()
        case Resume(by=by):
            return _resume(state, by, now, out), Viewed()
        case Announce(by=by, text=text):
            return _announce(state, by, text, now, out), Viewed()
        case Tick():
            return state, None
        case RoundDealt(number=number, code=code):
            return _dealt(state, number, code, now, out), None
        case CheckRound():
            if state.round_code is not None:
                if state.check_at is None:  # a look is under way: look again after it
                    state = replace(state, look_again=True)
                else:
                    state = replace(state, check_at=now)  # looked for at once: ``advance``
            return state, None
        case RoundRunning(number=number):
            if state.round_code is not None and state.current_round == number:
                delay = 0 if state.look_again else state.check_ms
                state = replace(state, check_at=now + delay, look_again=False)
            return state, None
        case RoundEnded():
            return _round_ended(state, command, now, out), None
        case RoundLost(number=number, code=code):
            if state.round_code == code and state.current_round == number:
                # Dealt again at once: the round is not counted, nobody played it.
                state = replace(
                    state, rounds=state.rounds[:-1], check_at=None, look_again=False,
                    next_round_at=now, dealing_again=True,
                )
            return state, None
        case DealsDrawn(seeds=seeds):
            return _committed(state, seeds, out), None
        case NoDeals(reason=reason):
            if state.preparing:
                state = _cancel(state, reason, now, out)
            return replace(state, drawing=False), None
    raise AssertionError(f"unknown command {command!r}")


# -- entrants --------------------------------------------------------------------------


def require_open(state: TournamentState) -> None:
    if state.status == "running":
        raise ServerError("already_started", f"tournament {state.code} has started")
    if state.status == "finished":
        raise ServerError(
            "tournament_finished", f"tournament {state.code} is over", status="finished"
        )
    if state.status == "cancelled":
        raise ServerError(
            "tournament_finished",
            f"tournament {state.code} was cancelled: {state.cancel_reason}",
            status="cancelled",
            reason=state.cancel_reason,
        )


def require_not_over(state: TournamentState) -> None:
    """Refuse what only a tournament not over takes (``tournament_finished``)."""
    if state.over:
        require_open(state)


def _require_host(state: TournamentState, by: int, does: str) -> None:
    if by != state.host_id:
        raise ServerError("not_host", f"only the host {does} {state.code}")


def require_deals(state: TournamentState) -> None:
    if state.preparing:
        raise ServerError(
            "deals_not_ready",
            f"tournament {state.code} is still drawing its winnable deals: entries open "
            "once they are committed (deals_committed), in a moment",
        )


def _join(
    state: TournamentState, player_id: int, name: str, bot: bool, now: Ms, out: _Out
) -> TournamentState:
    entrant = state.entrant(player_id)
    if entrant is not None:
        if entrant.removed:
            raise ServerError(
                "removed",
                f"the host removed you from tournament {state.code}: {entrant.removed_reason}",
                reason=entrant.removed_reason,
            )
        return state  # they follow it again (from another connection)
    late = state.status == "running"
    if late:
        _require_late_entry(state)
    else:
        require_open(state)
    require_deals(state)
    if bot and not state.options.bots:
        raise bots_not_allowed(
            f"the host of tournament {state.code} lets no bot enter", refused_by="tournament"
        )
    if len(state.seated()) >= state.options.max_players:
        raise ServerError(
            "tournament_full",
            f"tournament {state.code} has its {state.options.max_players} players",
        )
    out.writes.append(EntrantAdded(player_id, now, len(state.entrants) + 1))
    if late:
        out.emit("entrant_joined", player_id=player_id, name=name, bot=bot, late=True,
                 from_round=state.current_round + 1)
    else:
        out.emit("entrant_joined", player_id=player_id, name=name, bot=bot)
    state = replace(state, entrants=(*state.entrants, Entrant(player_id, name, bot)))
    if state.start_due:
        state = _begin(state, now, out)
    return state


def _require_late_entry(state: TournamentState) -> None:
    """A running tournament takes an entrant while its next round to deal (the one after
    the round being played) is at most ``late_entry_until_round``."""
    until = min(state.options.late_entry_until_round, state.options.rounds)
    if until == 0:
        require_open(state)  # raises: it has started
    if state.current_round + 1 > until:
        raise ServerError(
            "late_entry_closed",
            f"tournament {state.code} took late entrants until round {until} was dealt",
            late_entry_until_round=until,
        )


def _named(state: TournamentState, player: str) -> Entrant | None:
    """The entrant named ``player``, in any case."""
    return next((e for e in state.entrants if e.name.lower() == player.lower()), None)


def _remove(
    state: TournamentState, by: int, player: str, reason: str, now: Ms, out: _Out
) -> TournamentState:
    _require_host(state, by, "removes entrants of")
    require_not_over(state)
    found = _named(state, player)
    if found is None or found.removed:
        raise ServerError(
            "not_an_entrant", f"{player!r} is not in tournament {state.code}", player=player
        )
    if state.playing:
        raise ServerError(
            "round_in_play",
            f"round {state.current_round} of {state.code} is being played: "
            "remove an entrant once it has ended",
            round=state.current_round,
        )
    entrant = found
    out.writes.append(EntrantRemoved(entrant.player_id, reason, now))
    out.emit(
        "entrant_removed",
        player_id=entrant.player_id,
        name=entrant.name,
        reason=reason,
        after_round=state.current_round,
    )
    removed = replace(entrant, removed_reason=reason)
    return replace(
        state,
        entrants=tuple(removed if e is entrant else e for e in state.entrants),
    )


def _reinstate(
    state: TournamentState, by: int, player: str, now: Ms, out: _Out
) -> TournamentState:
    _require_host(state, by, "reinstates entrants of")
    require_not_over(state)
    entrant = _named(state, player)
    if entrant is None:
        raise ServerError(
            "not_an_entrant", f"{player!r} is not in tournament {state.code}", player=player
        )
    if not entrant.removed:
        raise ServerError(
            "not_removed", f"{entrant.name} is in tournament {state.code}: nothing to reinstate",
            player=entrant.name,
        )
    if len(state.seated()) >= state.options.max_players:
        raise ServerError(
            "tournament_full",
            f"tournament {state.code} has its {state.options.max_players} players",
        )
    out.writes.append(EntrantReinstated(entrant.player_id, now))
    out.emit(
        "entrant_reinstated",
        player_id=entrant.player_id,
        name=entrant.name,
        from_round=state.current_round + 1,
    )
    back = replace(entrant, removed_reason=None)
    return replace(state, entrants=tuple(back if e is entrant else e for e in state.entrants))


# -- the host's hand on the evening ------------------------------------------------------


def _pause(state: TournamentState, by: int, now: Ms, out: _Out) -> TournamentState:
    _require_host(state, by, "pauses tournament")
    _require_running(state, "paused")
    if state.paused:
        raise ServerError("already_paused", f"tournament {state.code} is paused already")
    out.writes.append(PauseSet(True, now))
    # Asked during a round, the pause holds from the round's end: the round goes on.
    out.emit("tournament_paused", after_round=state.current_round, round_in_play=state.playing)
    return replace(state, paused=True)


def _resume(state: TournamentState, by: int, now: Ms, out: _Out) -> TournamentState:
    _require_host(state, by, "resumes tournament")
    _require_running(state, "resumed")
    if not state.paused:
        raise ServerError("not_paused", f"tournament {state.code} is not paused")
    out.writes.append(PauseSet(False, now))
    # A break that ended during the pause ends now: the next round is dealt at once
    # (each round has its countdown); one that had time left keeps it.
    next_round_at = None if state.next_round_at is None else max(state.next_round_at, now)
    out.emit(
        "tournament_resumed",
        next_round_at=None if next_round_at is None else iso(next_round_at),
    )
    return replace(state, paused=False, next_round_at=next_round_at)


def _require_running(state: TournamentState, what: str) -> None:
    if state.status != "running":
        raise ServerError(
            "not_running",
            f"tournament {state.code} is {state.status}: only a running one is {what}",
            status=state.status,
        )


def _announce(
    state: TournamentState, by: int, text: str, now: Ms, out: _Out
) -> TournamentState:
    _require_host(state, by, "makes announcements in tournament")
    require_not_over(state)
    out.writes.append(AnnouncementMade(text, now))
    out.emit("tournament_announcement", text=text, at=iso(now))
    kept = (*state.announcements, Announcement(text, now))[-ANNOUNCEMENTS_KEPT:]
    return replace(state, announcements=kept)


# -- running ---------------------------------------------------------------------------


def _begin(state: TournamentState, now: Ms, out: _Out) -> TournamentState:
    """The start: the first round is dealt at once."""
    out.writes.append(TournamentStarted(now))
    out.emit(
        "tournament_started",
        rounds=state.options.rounds,
        entrants=[entrant_view(e) for e in state.entrants],
    )
    return replace(state, status="running", start_due=False, next_round_at=now)


def _deal(state: TournamentState, at: Ms, out: _Out) -> TournamentState:
    """Deal the next round (or finish, if nobody is left to play it)."""
    seats = state.seated()
    if not seats:  # the host removed everyone
        return _finish(state, at, out)
    number = len(state.rounds) + 1
    out.writes.append(RoundBegun(number))
    out.deal = DealRound(
        number, tuple((e.player_id, e.name, e.bot) for e in seats), state.seed_of(number)
    )
    return replace(state, dealing=number, next_round_at=None, dealing_again=False)


def _committed(
    state: TournamentState, seeds: tuple[bytes, ...], out: _Out
) -> TournamentState:
    """The winnable deals drawn: stored, then their commitment said; entries open."""
    if not state.preparing:
        return state  # cancelled meanwhile (or committed already)
    if len(seeds) != state.options.rounds:
        raise AssertionError(f"{len(seeds)} deals drawn for {state.options.rounds} rounds")
    out.writes.append(DealsCommitted(seeds))
    state = replace(state, seeds=seeds, drawing=False)
    out.emit("deals_committed", **commitment_view(state))
    return state


def _dealt(
    state: TournamentState, number: int, code: str, now: Ms, out: _Out
) -> TournamentState:
    if state.dealing != number or state.over:
        return state  # cancelled while its match was being created: it is not played
    out.emit(
        "round_starting",
        round=number,
        match=code,
        countdown_ms=state.options.countdown_s * 1000,
    )
    return replace(
        state,
        dealing=None,
        rounds=(*state.rounds, Round(number, code)),
        check_at=now + state.check_ms,
    )


def _round_ended(
    state: TournamentState, ended: RoundEnded, now: Ms, out: _Out
) -> TournamentState:
    if state.round_code != ended.code or state.current_round != ended.number:
        return state  # counted already (a check and the lobby's word both came)
    counted = replace(state.rounds[-1], scores=ended.scores, ended_at=ended.ended_at)
    state = replace(
        state, rounds=(*state.rounds[:-1], counted), check_at=None, look_again=False
    )
    rows = standings(state)
    out.writes.append(StandingsRecorded(tuple(rows)))
    last = ended.number >= state.options.rounds
    next_round_at = None if last else ended.ended_at + round(state.options.break_s * 1000)
    out.emit(
        "round_ended",
        round=ended.number,
        match=ended.code,
        seed=_share_code(state.seed_of(ended.number)),
        standings=rows,
        # Paused: the next round waits for the host's resume.
        next_round_at=None if next_round_at is None or state.paused else iso(next_round_at),
        paused=state.paused,
    )
    if last:
        return _finish(state, now, out, rows=rows)
    return replace(state, next_round_at=next_round_at)


def _finish(
    state: TournamentState, now: Ms, out: _Out, *, rows: list[dict[str, Any]] | None = None
) -> TournamentState:
    rows = standings(state) if rows is None else rows
    out.writes.append(TournamentFinished(now))
    out.emit(
        "tournament_ended",
        standings=rows,
        podium=[row for row in rows if row["rank"] <= PODIUM and not row["removed"]],
        seeds=[_share_code(seed) for seed in state.seeds],
    )
    out.closed = True
    return replace(
        state, status="finished", next_round_at=None, check_at=None, dealing_again=False
    )


def _cancel(
    state: TournamentState, reason: str, now: Ms, out: _Out, *, by_host: bool = False
) -> TournamentState:
    """Cancel the tournament; a round being played is abandoned, not counted."""
    abandoned = state.round_code
    rounds = tuple(round_ for round_ in state.rounds if round_.counted)
    out.writes.append(TournamentCancelled(reason, now, len(rounds)))
    out.emit(
        "tournament_cancelled",
        reason=reason,
        by_host=by_host,
        abandoned_round=None if abandoned is None else state.current_round,
        seeds=[_share_code(s) for s in state.seeds],
    )
    out.abandon = abandoned
    out.draw = None  # asked for in this very step: not needed any more
    out.closed = True
    return replace(
        state, status="cancelled", cancel_reason=reason, rounds=rounds, dealing=None,
        next_round_at=None,
        check_at=None, look_again=False, start_due=False, dealing_again=False,
        drawing=False,  # a draw under way is for nothing
    )


# -- deadlines --------------------------------------------------------------------------


def _deadlines(state: TournamentState) -> Iterable[tuple[Ms, int]]:
    """(instant, kind) of every deadline of ``state``: 0 the scheduled start, 1 the end
    of a break, 2 the next check of the round being played."""
    start_at = state.options.start_at
    # A start waits for the deals: nobody can have entered before they were committed.
    if state.status == "open" and start_at is not None and not state.start_due \
            and not state.preparing:
        yield start_at, 0
    if state.status == "running" and state.dealing is None:
        if state.next_round_at is not None and (not state.paused or state.dealing_again):
            yield state.next_round_at, 1
        if state.check_at is not None and state.round_code is not None:
            yield state.check_at, 2


def next_deadline(state: TournamentState) -> Ms | None:
    return min((at for at, _ in _deadlines(state)), default=None)


def advance(state: TournamentState, now: Ms, out: _Out | None = None) -> TournamentState:
    """Apply every deadline due at ``now``, in time order; and ask for the winnable deals
    of a tournament that has none, unless they are being drawn already."""
    out = out if out is not None else _Out()
    while True:
        due = min((d for d in _deadlines(state) if d[0] <= now), default=None)
        if due is None:
            if state.preparing and not state.drawing:
                out.draw = DrawDeals(state.options.rounds, state.options.ruleset)
                state = replace(state, drawing=True)
            return state
        at, kind = due
        if kind == 0:
            if state.seated():
                state = _begin(state, at, out)
            elif state.options.if_empty == "wait":
                state = replace(state, start_due=True)
            else:
                state = _cancel(state, NOBODY_ENTERED, at, out)
        elif kind == 1:
            if len(state.rounds) >= state.options.rounds:
                state = _finish(state, at, out)
            else:
                state = _deal(state, at, out)
        else:
            round_ = state.rounds[-1]
            out.look = LookForRound(round_.number, round_.code)
            state = replace(state, check_at=None)


# -- views ------------------------------------------------------------------------------


def entrant_view(entrant: Entrant) -> dict[str, Any]:
    """An entrant as shown: a declared bot or not, removed by the host or not."""
    return {
        "player_id": entrant.player_id,
        "name": entrant.name,
        "bot": entrant.bot,
        "removed": entrant.removed,
        "removed_reason": entrant.removed_reason,
    }


def _share_code(seed: bytes | None) -> str | None:
    return None if seed is None else str(Seed(seed))


def commitment_view(state: TournamentState) -> dict[str, Any]:
    """The commitment to the tournament's deals (docs/protocol.md, Committed deals):
    ``commitment`` (None: none committed yet, or ever), ``round_commitments``, and each
    round's ``seeds`` once revealed (None while secret)."""
    if not state.seeds:
        return {"commitment": None, "round_commitments": [], "seeds": []}
    seeds = [Seed(seed) for seed in state.seeds]
    return {
        "commitment": deals_commitment(seeds),
        "round_commitments": round_commitments(seeds),
        "seeds": [
            str(seed) if state.revealed(number) else None
            for number, seed in enumerate(seeds, start=1)
        ],
    }


def view(state: TournamentState) -> dict[str, Any]:
    """The tournament view (docs/protocol.md): ``entrant_count`` counts those still in,
    the one count every client shows."""
    options = state.options
    return {
        "id": state.id,
        "code": state.code,
        "name": options.name,
        "host_id": state.host_id,
        "ruleset": options.ruleset,
        "rounds": options.rounds,
        "max_players": options.max_players,
        "round_time_limit_s": options.round_time_limit_s,
        "start_at": None if options.start_at is None else iso(options.start_at),
        "if_empty": options.if_empty,
        "status": state.status,
        "cancel_reason": state.cancel_reason,
        "current_round": state.current_round,
        "round_match": state.round_code,
        "bots": options.bots,
        "countdown_s": options.countdown_s,
        "break_s": options.break_s,
        "deals": options.deals,
        "deals_ready": not state.preparing,
        "late_entry_until_round": options.late_entry_until_round,
        "paused": state.paused,
        "announcements": [
            {"text": a.text, "at": iso(a.at)} for a in state.announcements
        ],
        **commitment_view(state),
        "entrant_count": len(state.seated()),
        "entrants": [entrant_view(e) for e in state.entrants],
    }


def standings(state: TournamentState) -> list[dict[str, Any]]:
    """Totals over the counted rounds: score (higher first), then time (less first), the
    entrants the host removed after everyone still in; equal rows share a rank. A round
    counted without an entrant (entered late, or removed then) scores 0 for them and
    costs them the round's whole time limit."""
    counted = [round_ for round_ in state.rounds if round_.counted]
    totals: dict[int, list[int]] = {}
    for round_ in counted:
        for result in round_.scores or ():
            total = totals.setdefault(result.player_id, [0, 0, 0])
            total[0] += result.score
            total[1] += result.time_ms
            total[2] += 1
    missed_ms = state.options.round_time_limit_s * 1000
    rows: list[dict[str, Any]] = []
    for entrant in state.entrants:
        score, time_ms, played = totals.get(entrant.player_id, (0, 0, 0))
        time_ms += (len(counted) - played) * missed_ms
        rows.append(
            {
                **entrant_view(entrant),
                "total_score": score,
                "total_time_ms": time_ms,
                "rounds_played": played,
            }
        )
    rows.sort(key=lambda r: (r["removed"], -r["total_score"], r["total_time_ms"], r["player_id"]))
    for position, row in enumerate(rows, start=1):
        previous = rows[position - 2] if position > 1 else None
        same = previous is not None and (
            previous["removed"],
            previous["total_score"],
            previous["total_time_ms"],
        ) == (row["removed"], row["total_score"], row["total_time_ms"])
        row["rank"] = previous["rank"] if same and previous else position
    return rows


# -- restore ----------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredRound:
    """A round's match as stored: the last one dealt for that round number."""

    number: int
    code: str
    status: str
    ended_at: Ms | None
    scores: tuple[RoundScore, ...]


def rebuild(
    *,
    tournament_id: int,
    code: str,
    host_id: int,
    options: TournamentOptions,
    status: str,
    current_round: int,
    entrants: Sequence[Entrant],
    rounds: Sequence[StoredRound],
    cancel_reason: str | None,
    now: Ms,
    check_ms: int,
    seeds: Sequence[bytes] = (),
    paused: bool = False,
    announcements: Sequence[Announcement] = (),
) -> TournamentState:
    """The tournament as the database holds it, after a restart or a new leader.

    Rounds before the current one are counted from their stored results. The current
    round goes on: if its match is stored (unfinished, or finished while nobody ran the
    tournament) it is looked for at once, and counted once it has ended (``round_ended``
    is said again); if its match was never stored (or was abandoned), it is dealt again.
    A break goes on from the end of the last round counted, on the wall clock."""
    state = TournamentState(
        id=tournament_id,
        code=code,
        host_id=host_id,
        options=options,
        status=status,
        entrants=tuple(entrants),
        check_ms=check_ms,
        cancel_reason=cancel_reason,
        seeds=tuple(seeds),
        paused=paused,
        announcements=tuple(announcements)[-ANNOUNCEMENTS_KEPT:],
    )
    by_number = {r.number: r for r in rounds}
    # Every round before the current one was counted before the next was dealt; once the
    # tournament is over, the last one too (a cancel stores the rounds counted).
    last_counted = current_round if status in ("finished", "cancelled") else current_round - 1
    current = by_number.get(current_round)
    counted = []
    for number in range(1, last_counted + 1):
        stored = by_number.get(number)
        counted.append(
            Round(number, stored.code, stored.scores, stored.ended_at)
            if stored is not None
            else Round(number, "", (), None)
        )
    state = replace(state, rounds=tuple(counted))
    if status != "running":
        return state
    if current is None or current.status == "abandoned":
        # Never dealt (or dealt and lost): deal it (again) now.
        return replace(state, next_round_at=now, dealing_again=True)
    return replace(state, rounds=(*state.rounds, Round(current_round, current.code)), check_at=now)
