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

Tables in the room (docs/tables.md): the host, or an arbiter they name, marks entrants
as playing at a table, from the next round dealt. A round's match seats the entrants
online only; a round with every entrant at a table has no match and ends by its own
clock (its countdown and time limit, as a match would). Once a round's play has begun
(its countdown over) the host and the arbiters get its deal sheet, and enter each
table's result, checked against the rules and the round's time limit and scored as the
rules score; an entered result is kept apart (``entered``) and counted with the others
once its round is. A result entered after its round was counted updates the standings
(``result_entered``); the last round waits for its tables' results until its time limit
and a break have passed, then the tournament ends without those not entered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from gaps.board import ALL_PLACED
from gaps.commitment import deals_commitment, round_commitments
from gaps.par import final_score
from gaps.ruleset import Ruleset
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
    #: They play at a table in the room, from the next round dealt (not online).
    at_table: bool = False

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
class EnteredResult:
    """A table's result in one round, entered by the host or an arbiter (``by``)."""

    player_id: int
    placed: int
    redeals: int
    finish_ms: int
    won: bool
    score: int
    by: int
    at: Ms


@dataclass(frozen=True)
class Round:
    """A round dealt: its match ("" when every entrant of it was at a table), when its
    play began, who played it at a table and the results entered for them, and once
    counted, the match's scores and when it ended."""

    number: int
    code: str
    scores: tuple[RoundScore, ...] | None = None
    ended_at: Ms | None = None
    #: When play began (its countdown over): the deal sheet is given from then.
    started_at: Ms | None = None
    #: The entrants who played it at a table (player ids).
    tables: tuple[int, ...] = ()
    entered: tuple[EnteredResult, ...] = ()

    @property
    def counted(self) -> bool:
        return self.scores is not None

    @property
    def match(self) -> str | None:
        """Its match's code (None: it had none, every entrant was at a table)."""
        return self.code or None

    def entered_for(self, player_id: int) -> EnteredResult | None:
        return next((r for r in self.entered if r.player_id == player_id), None)

    @property
    def awaited(self) -> tuple[int, ...]:
        """The table entrants with no result entered yet."""
        return tuple(p for p in self.tables if self.entered_for(p) is None)


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
    #: The players the host named arbiters (player id, name), in the order named.
    arbiters: tuple[tuple[int, str], ...] = ()
    #: The table entrants of the round being dealt (fixed when it was dealt).
    dealing_tables: tuple[int, ...] = ()

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
        """The match of the round being played (None: none, or every entrant of it is
        at a table)."""
        if self.rounds and not self.rounds[-1].counted:
            return self.rounds[-1].match
        return None

    def is_arbiter(self, player_id: int) -> bool:
        return any(arbiter_id == player_id for arbiter_id, _ in self.arbiters)

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
    """Round ``number`` is dealt next (stored before its match is), ``tables`` playing
    it at a table."""

    number: int
    tables: tuple[int, ...] = ()


@dataclass(frozen=True)
class RoundStarted:
    """Round ``number``'s play begins at ``at`` (its countdown over); ``online``: it has
    a match (not every entrant of it is at a table)."""

    number: int
    at: Ms
    online: bool = True


@dataclass(frozen=True)
class ArbiterNamed:
    player_id: int
    at: Ms


@dataclass(frozen=True)
class TableSet:
    """The entrant plays at a table (``at_table``) or online, from the next round."""

    player_id: int
    at_table: bool


@dataclass(frozen=True)
class ResultEntered:
    """A table's result in round ``number`` (replacing one entered before)."""

    number: int
    result: EnteredResult


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
    | RoundStarted
    | ArbiterNamed
    | TableSet
    | ResultEntered
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
class NameArbiter:
    """The host (``by``) names player ``player_id`` (``name``) an arbiter."""

    by: int
    player_id: int
    name: str


@dataclass(frozen=True)
class SetTable:
    """The host or an arbiter (``by``) puts the entrant named ``player`` at a table
    (``at_table``) or back online, from the next round dealt."""

    by: int
    player: str
    at_table: bool


@dataclass(frozen=True)
class EnterResult:
    """The host or an arbiter (``by``) enters the result of the entrant named ``player``
    at a table in round ``number``."""

    by: int
    number: int
    player: str
    placed: int
    redeals: int
    finish_ms: int
    won: bool


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
    | NameArbiter
    | SetTable
    | EnterResult
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


@dataclass(frozen=True)
class Standing:
    """The reply to an entered result: the view and the standings."""


Reply = Entered | Viewed | Standing | ServerError | None


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
        case NameArbiter(by=by, player_id=player_id, name=name):
            return _name_arbiter(state, by, player_id, name, now, out), Viewed()
        case SetTable(by=by, player=player, at_table=at_table):
            return _set_table(state, by, player, at_table, out), Viewed()
        case EnterResult():
            return _enter_result(state, command, now, out), Standing()
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


# -- tables in the room ------------------------------------------------------------------


def _require_desk(state: TournamentState, by: int, does: str) -> None:
    """Refuse anyone but the host and the arbiters they named (``not_arbiter``)."""
    if by != state.host_id and not state.is_arbiter(by):
        raise ServerError(
            "not_arbiter", f"only the host or an arbiter they named {does} {state.code}"
        )


def _name_arbiter(
    state: TournamentState, by: int, player_id: int, name: str, now: Ms, out: _Out
) -> TournamentState:
    _require_host(state, by, "names the arbiters of")
    require_not_over(state)
    if player_id == state.host_id or state.is_arbiter(player_id):
        return state  # may do what an arbiter does already
    out.writes.append(ArbiterNamed(player_id, now))
    out.emit("arbiter_named", player_id=player_id, name=name)
    return replace(state, arbiters=(*state.arbiters, (player_id, name)))


def _set_table(
    state: TournamentState, by: int, player: str, at_table: bool, out: _Out
) -> TournamentState:
    _require_desk(state, by, "seats entrants at tables in")
    require_not_over(state)
    entrant = _named(state, player)
    if entrant is None or entrant.removed:
        raise ServerError(
            "not_an_entrant", f"{player!r} is not in tournament {state.code}", player=player
        )
    if entrant.at_table == at_table:
        return state
    out.writes.append(TableSet(entrant.player_id, at_table))
    out.emit(
        "entrant_table",
        player_id=entrant.player_id,
        name=entrant.name,
        at_table=at_table,
        from_round=state.current_round + 1,
    )
    moved = replace(entrant, at_table=at_table)
    return replace(state, entrants=tuple(moved if e is entrant else e for e in state.entrants))


def _started_round(state: TournamentState, number: int, now: Ms) -> Round:
    """Round ``number``, once its play has begun (``round_not_started`` before)."""
    if 1 <= number <= len(state.rounds):
        round_ = state.rounds[number - 1]
        if round_.started_at is None or round_.started_at <= now or round_.counted:
            return round_
        raise ServerError(
            "round_not_started",
            f"round {number} of tournament {state.code} starts at {iso(round_.started_at)}",
            round=number, starts_at=iso(round_.started_at),
        )
    if not 1 <= number <= state.options.rounds:
        raise ServerError(
            "bad_message",
            f"tournament {state.code} has rounds 1 to {state.options.rounds}, not {number}",
            field="round",
        )
    raise ServerError(
        "round_not_started", f"round {number} of tournament {state.code} is not dealt yet",
        round=number, starts_at=None,
    )


def deal_sheet(state: TournamentState, by: int, number: int, now: Ms) -> dict[str, Any]:
    """The ``deal_sheet`` reply for round ``number``: given to the host and the arbiters,
    once the round's play has begun."""
    _require_desk(state, by, "gets the deal sheets of")
    round_ = _started_round(state, number, now)
    seed = state.seed_of(number)
    if seed is None:
        raise ServerError(
            "round_not_started",
            f"tournament {state.code} committed no deals (it was stored before they were): "
            "it has no deal sheets",
            round=number, starts_at=None,
        )
    return {
        "type": "deal_sheet",
        "tournament": state.code,
        "round": number,
        "seed": str(Seed(seed)),
        "ruleset": state.options.ruleset,
        "match": round_.match,
        "started_at": None if round_.started_at is None else iso(round_.started_at),
    }


def _bad_result(field: str, message: str) -> ServerError:
    return ServerError(
        "bad_message", f"tournament_enter_result: field {field!r}: {message}", field=field
    )


def check_result(command: EnterResult, ruleset: Ruleset, time_limit_ms: int) -> int:
    """The score of an entered result, as the rules score it; refuses (``bad_message``,
    naming the field) what the rules and the round's time limit do not allow."""
    if not 0 <= command.placed <= ALL_PLACED:
        raise _bad_result("placed", f"placed must be from 0 to {ALL_PLACED}, got {command.placed}")
    if not 0 <= command.redeals <= ruleset.redeals:
        raise _bad_result(
            "redeals",
            f"{ruleset.name} allows {ruleset.redeals} redeal(s), got {command.redeals}",
        )
    if not 0 <= command.finish_ms <= time_limit_ms:
        raise _bad_result(
            "finish_ms",
            f"the round's time limit is {time_limit_ms} ms, got {command.finish_ms}",
        )
    if command.won != (command.placed == ALL_PLACED):
        raise _bad_result(
            "won",
            f"a game is won when all {ALL_PLACED} cards are placed: won is "
            f"{str(command.won).lower()} with {command.placed} placed",
        )
    return final_score(command.placed, command.redeals)


def _enter_result(
    state: TournamentState, command: EnterResult, now: Ms, out: _Out
) -> TournamentState:
    _require_desk(state, command.by, "enters results in")
    require_not_over(state)
    round_ = _started_round(state, command.number, now)
    entrant = _named(state, command.player)
    if entrant is None:
        raise ServerError(
            "not_an_entrant", f"{command.player!r} is not in tournament {state.code}",
            player=command.player,
        )
    if entrant.player_id not in round_.tables:
        raise ServerError(
            "not_at_table",
            f"{entrant.name} did not play round {round_.number} of {state.code} at a table",
            player=entrant.name, round=round_.number,
        )
    score = check_result(
        command, Ruleset.named(state.options.ruleset), state.options.round_time_limit_s * 1000
    )
    result = EnteredResult(
        entrant.player_id, command.placed, command.redeals, command.finish_ms, command.won,
        score, command.by, now,
    )
    replaced = round_.entered_for(entrant.player_id) is not None
    entered = tuple(r for r in round_.entered if r.player_id != entrant.player_id)
    round_ = replace(round_, entered=(*entered, result))
    rounds = list(state.rounds)
    rounds[round_.number - 1] = round_
    state = replace(state, rounds=tuple(rounds))
    out.writes.append(ResultEntered(round_.number, result))
    rows = standings(state) if round_.counted else None
    if rows is not None:
        out.writes.append(StandingsRecorded(tuple(rows)))
    out.emit(
        "result_entered",
        **entered_view(state, round_.number, result),
        replaced=replaced,
        standings=rows,
    )
    last = round_.number == state.options.rounds
    if last and round_.counted and not round_.awaited and state.status == "running":
        return _finish(state, now, out, rows=rows)  # every table's result is in
    return state


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
    """Deal the next round (or finish, if nobody is left to play it): a match for the
    entrants online; a round of tables only has none and starts at once."""
    seats = state.seated()
    if not seats:  # the host removed everyone
        return _finish(state, at, out)
    number = len(state.rounds) + 1
    online = tuple(e for e in seats if not e.at_table)
    tables = tuple(e.player_id for e in seats if e.at_table)
    out.writes.append(RoundBegun(number, tables))
    state = replace(
        state, dealing=number, next_round_at=None, dealing_again=False, dealing_tables=tables
    )
    if not online:
        return _dealt(state, number, "", at, out)
    out.deal = DealRound(
        number, tuple((e.player_id, e.name, e.bot) for e in online), state.seed_of(number)
    )
    return state


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
    started_at = now + state.options.countdown_s * 1000
    out.writes.append(RoundStarted(number, started_at, online=bool(code)))
    out.emit(
        "round_starting",
        round=number,
        match=code or None,
        countdown_ms=state.options.countdown_s * 1000,
        tables=[_name_of(state, p) for p in state.dealing_tables],
    )
    round_ = Round(number, code, started_at=started_at, tables=state.dealing_tables)
    return replace(
        state,
        dealing=None,
        dealing_tables=(),
        rounds=(*state.rounds, round_),
        check_at=now + state.check_ms if code else None,
    )


def _name_of(state: TournamentState, player_id: int) -> str:
    entrant = state.entrant(player_id)
    return entrant.name if entrant is not None else str(player_id)


def _round_ended(
    state: TournamentState, ended: RoundEnded, now: Ms, out: _Out
) -> TournamentState:
    if state.round_code != ended.code or state.current_round != ended.number:
        return state  # counted already (a check and the lobby's word both came)
    return _count(state, ended.scores, ended.ended_at, now, out)


def _count(
    state: TournamentState, scores: tuple[RoundScore, ...], ended_at: Ms, now: Ms, out: _Out
) -> TournamentState:
    """Count the round being played: its match's ``scores`` and the results entered."""
    counted = replace(state.rounds[-1], scores=scores, ended_at=ended_at)
    state = replace(
        state, rounds=(*state.rounds[:-1], counted), check_at=None, look_again=False
    )
    rows = standings(state)
    out.writes.append(StandingsRecorded(tuple(rows)))
    last = counted.number >= state.options.rounds
    break_ms = round(state.options.break_s * 1000)
    if last:
        # The tables' results are awaited until the round's time limit and a break
        # have passed: the arbiters enter them then.
        next_round_at = (
            max(ended_at, _time_up(state, counted)) + break_ms if counted.awaited else None
        )
    else:
        next_round_at = ended_at + break_ms
    out.emit(
        "round_ended",
        round=counted.number,
        match=counted.match,
        seed=_share_code(state.seed_of(counted.number)),
        standings=rows,
        # Paused: the next round waits for the host's resume.
        next_round_at=None if next_round_at is None or state.paused else iso(next_round_at),
        paused=state.paused,
        entered=[entered_view(state, counted.number, r) for r in counted.entered],
        results_awaited=[_name_of(state, p) for p in counted.awaited],
    )
    if last and next_round_at is None:
        return _finish(state, now, out, rows=rows)
    return replace(state, next_round_at=next_round_at)


def _time_up(state: TournamentState, round_: Round) -> Ms:
    """When round ``round_``'s time limit is up (its play began at ``started_at``)."""
    started_at = round_.started_at if round_.started_at is not None else 0
    return started_at + state.options.round_time_limit_s * 1000


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
    of a break (or of the wait for the last round's tables), 2 the next check of the
    round being played, 3 the end of a round of tables only."""
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
        if state.playing and state.round_code is None:
            yield _time_up(state, state.rounds[-1]), 3


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
        elif kind == 2:
            round_ = state.rounds[-1]
            out.look = LookForRound(round_.number, round_.code)
            state = replace(state, check_at=None)
        else:
            state = _count(state, (), at, at, out)


# -- views ------------------------------------------------------------------------------


def entrant_view(entrant: Entrant) -> dict[str, Any]:
    """An entrant as shown: a declared bot or not, removed by the host or not."""
    return {
        "player_id": entrant.player_id,
        "name": entrant.name,
        "bot": entrant.bot,
        "removed": entrant.removed,
        "removed_reason": entrant.removed_reason,
        "at_table": entrant.at_table,
    }


def entered_view(state: TournamentState, number: int, result: EnteredResult) -> dict[str, Any]:
    """A table's result as shown: always ``entered``."""
    return {
        "round": number,
        "player_id": result.player_id,
        "name": _name_of(state, result.player_id),
        "score": result.score,
        "placed": result.placed,
        "redeals": result.redeals,
        "finish_ms": result.finish_ms,
        "won": result.won,
        "entered": True,
        "entered_by": _arbiter_name(state, result.by),
        "entered_at": iso(result.at),
    }


def _arbiter_name(state: TournamentState, player_id: int) -> str | None:
    """The name of an arbiter (None: the host, whose name the tournament does not keep)."""
    if player_id == state.host_id:
        return None
    for arbiter_id, name in state.arbiters:
        if arbiter_id == player_id:
            return name
    return _name_of(state, player_id)


def entered_results(state: TournamentState) -> list[dict[str, Any]]:
    """Every result entered for a table, by round."""
    return [
        entered_view(state, round_.number, result)
        for round_ in state.rounds
        for result in round_.entered
    ]


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
        "arbiters": [{"player_id": p, "name": name} for p, name in state.arbiters],
        "round_started_at": _round_started_at(state),
        # Who plays the round being played at a table (no seat in its match).
        "round_tables": [_name_of(state, p) for p in state.rounds[-1].tables]
        if state.rounds and not state.rounds[-1].counted else [],
        "announcements": [
            {"text": a.text, "at": iso(a.at)} for a in state.announcements
        ],
        **commitment_view(state),
        "entrant_count": len(state.seated()),
        "entrants": [entrant_view(e) for e in state.entrants],
    }


def _round_started_at(state: TournamentState) -> str | None:
    """When the play of the round being played began (or begins: its countdown)."""
    if not state.playing or state.dealing is not None:
        return None
    started_at = state.rounds[-1].started_at
    return None if started_at is None else iso(started_at)


def standings(state: TournamentState) -> list[dict[str, Any]]:
    """Totals over the counted rounds: score (higher first), then time (less first), the
    entrants the host removed after everyone still in; equal rows share a rank. A round
    counted without an entrant (entered late, or removed then) scores 0 for them and
    costs them the round's whole time limit."""
    counted = [round_ for round_ in state.rounds if round_.counted]
    totals: dict[int, list[int]] = {}
    entered: dict[int, list[int]] = {}
    for round_ in counted:
        results = [*(round_.scores or ()), *(
            RoundScore(r.player_id, r.score, r.finish_ms) for r in round_.entered
        )]
        for result in results:
            total = totals.setdefault(result.player_id, [0, 0, 0])
            total[0] += result.score
            total[1] += result.time_ms
            total[2] += 1
        for table in round_.entered:
            entered.setdefault(table.player_id, []).append(round_.number)
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
                # Counts a result entered for a table (not validated by the server).
                "entered": entrant.player_id in entered,
                "entered_rounds": entered.get(entrant.player_id, []),
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
    arbiters: Sequence[tuple[int, str]] = (),
    tables: StoredTables | None = None,
) -> TournamentState:
    """The tournament as the database holds it, after a restart or a new leader.

    Rounds before the current one are counted from their stored results. The current
    round goes on: if its match is stored (unfinished, or finished while nobody ran the
    tournament) it is looked for at once, and counted once it has ended (``round_ended``
    is said again); if its match was never stored (or was abandoned), it is dealt again.
    A break goes on from the end of the last round counted, on the wall clock. A round
    of tables only goes on to its time limit from when its play began, as stored."""
    tables = tables if tables is not None else StoredTables()
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
        arbiters=tuple(arbiters),
    )
    by_number = {r.number: r for r in rounds}
    # Every round before the current one was counted before the next was dealt; once the
    # tournament is over, the last one too (a cancel stores the rounds counted).
    last_counted = current_round if status in ("finished", "cancelled") else current_round - 1
    current = by_number.get(current_round)
    counted = []
    for number in range(1, last_counted + 1):
        stored = by_number.get(number)
        round_ = (
            Round(number, stored.code, stored.scores, stored.ended_at)
            if stored is not None
            else Round(number, "", (), None)
        )
        counted.append(tables.attach(round_))
    state = replace(state, rounds=tuple(counted))
    if status != "running":
        return state
    tables_only = current_round in tables.started and not tables.online.get(current_round, True)
    if tables_only:
        return replace(state, rounds=(*state.rounds, tables.attach(Round(current_round, ""))))
    if current is None or current.status == "abandoned":
        # Never dealt (or dealt and lost): deal it (again) now.
        return replace(state, next_round_at=now, dealing_again=True)
    round_ = tables.attach(Round(current_round, current.code))
    if round_.started_at is None:  # stopped before its start was stored: it counts down again
        round_ = replace(round_, started_at=now + options.countdown_s * 1000)
    return replace(state, rounds=(*state.rounds, round_), check_at=now)


@dataclass(frozen=True)
class StoredTables:
    """What is stored of each round for tables in the room: when its play began, whether
    it had a match (``online``), who played it at a table, and the results entered."""

    started: Mapping[int, Ms] = field(default_factory=dict)
    online: Mapping[int, bool] = field(default_factory=dict)
    tables: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    entered: Mapping[int, tuple[EnteredResult, ...]] = field(default_factory=dict)

    def attach(self, round_: Round) -> Round:
        number = round_.number
        return replace(
            round_,
            started_at=self.started.get(number),
            tables=self.tables.get(number, ()),
            entered=self.entered.get(number, ()),
        )
