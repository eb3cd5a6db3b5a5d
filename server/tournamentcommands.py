"""What a tournament's core is told (commands: a request of a person, a timer, or what
the actor found out) and what it answers (``Step``: the new state, the reply, events,
records to store, the next wake-up, and what the actor is to do besides)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gaps_protocol.messages.events import TournamentEvent
from server.errors import ServerError
from server.records import Ms
from server.tournamentstate import RoundScore, TournamentState, Write

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
    events: tuple[TournamentEvent, ...] = ()
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
class Out:
    events: list[TournamentEvent] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    deal: DealRound | None = None
    look: LookForRound | None = None
    draw: DrawDeals | None = None
    abandon: str | None = None
    closed: bool = False

    def emit(self, event: TournamentEvent) -> None:
        """Say ``event`` (its ``seq`` ``UNNUMBERED``: the history numbers it)."""
        self.events.append(event)
