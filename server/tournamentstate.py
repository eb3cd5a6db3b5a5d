"""A tournament's state, without I/O: what the organiser chose, its entrants and rounds,
and the records the core asks to store (each one a row of server/storage's tournaments
repository, written before the state that follows from it is applied)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, get_args

from gaps import RulesetName
from gaps_protocol.messages.common import Deals, IfEmpty, TournamentStatus
from gaps_protocol.messages.views import StandingsRow
from server.records import Ms

#: The rows ranked 1 to this many (and still in) are the podium.
PODIUM: Final = 3

#: Why a scheduled tournament with nobody to play is cancelled.
NOBODY_ENTERED: Final = "nobody entered before the start time"

STATUSES: Final[tuple[TournamentStatus, ...]] = get_args(TournamentStatus)
#: How many of the host's announcements the view keeps (the last ones).
ANNOUNCEMENTS_KEPT: Final = 10
#: Which deals a tournament's rounds are dealt: any deal, or only those the solver
#: proved winnable without redeal.
DEALS: Final[tuple[Deals, ...]] = get_args(Deals)



# -- state ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentOptions:
    """What the organiser chose at creation (and the server's timings)."""

    name: str
    ruleset: RulesetName
    rounds: int
    max_players: int
    round_time_limit_s: int
    start_at: Ms | None = None
    bots: bool = False
    if_empty: IfEmpty = "cancel"
    countdown_s: int = 10
    break_s: float = 15.0
    deals: Deals = "any"
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
    status: TournamentStatus = "open"
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

    def name_of(self, player_id: int) -> str:
        """An entrant's name (their id, should they be no entrant)."""
        entrant = self.entrant(player_id)
        return entrant.name if entrant is not None else str(player_id)

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
    rows: tuple[StandingsRow, ...]


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
