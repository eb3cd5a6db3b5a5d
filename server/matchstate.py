"""The state of a live match: plain frozen values, never changed in place.

``MatchState`` is what ``server.matchcore`` takes and returns; ``evolve`` copies a seat or
the state with some fields changed, at a fifth of ``dataclasses.replace``'s cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args

from gaps import Game, Ruleset, Seed
from gaps_protocol.messages.common import EndReason, MatchKind, MatchStatus, PlayerStatus, WinBy
from gaps_protocol.messages.replies import ActionOk
from server.records import Ms

#: The ways a game ends other than by its own play.
ENDED_FROM_OUTSIDE: Final = ("time", "disconnected", "left")

#: The phases of a match. ``ending``: every game has ended and the end of the match is
#: being stored (``running`` on the wire until ``match_ended``).
Phase: TypeAlias = Literal["lobby", "countdown", "running", "ending", "finished", "abandoned"]

#: How many acknowledgements a seat keeps to answer resent actions.
CACHED_ACKS: Final = 32

if TYPE_CHECKING:
    # What mypy checks: the names and the types of the changes, as for ``replace``.
    from dataclasses import replace

    evolve = replace
else:

    def evolve(state, /, **changes):
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
    win_by: WinBy
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
    acks: tuple[tuple[int, ActionOk], ...] = ()
    end_reason: EndReason | None = None
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
    def status(self) -> PlayerStatus:
        """``waiting`` before the deal, then the game's result; a game ended from outside
        (``time``, ``disconnected``, ``left``) says so."""
        if self.game is None:
            return "waiting"
        match self.end_reason:
            case "time" | "disconnected" | "left":  # ENDED_FROM_OUTSIDE
                return self.end_reason
        return self.game.result()


PHASES: Final[tuple[Phase, ...]] = get_args(Phase)


@dataclass(frozen=True)
class MatchState:
    id: int
    code: str
    kind: MatchKind
    options: MatchOptions
    seed: Seed
    rated: bool
    host_id: int
    grace_ms: int
    daily_date: date | None = None
    tournament_id: int | None = None
    round: int | None = None
    seats: tuple[Seat, ...] = ()
    phase: Phase = "lobby"
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
    def status(self) -> MatchStatus:
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
    kind: MatchKind,
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



def deal_secret(state: MatchState, now: Ms) -> bool:
    """Whether the deal is still to be played by others: a daily challenge's is, until
    its day is over."""
    today = datetime.fromtimestamp(now / 1000, UTC).date()
    return state.daily_date is not None and today <= state.daily_date


def seed_revealed(state: MatchState, now: Ms) -> bool:
    """Whether the seed may be published: once the match is over, except that a daily
    challenge's seed stays secret until its day is over (others still play it)."""
    return state.phase == "finished" and not deal_secret(state, now)

