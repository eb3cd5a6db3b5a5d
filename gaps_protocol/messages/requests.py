"""Every client message (docs/protocol.md), as it goes on the wire: its fields, their
bounds and their defaults. The server decodes every request into these types and
refuses what they refuse (``bad_json``, ``bad_message`` naming the field,
``unknown_type``, ``bad_name``, ``bad_token``); it then checks what a schema cannot say:
that a text follows the one rule for text (``gaps_protocol.text``: printable, no space
but U+0020, none around, never two in a row), and that an action, a share code or a
ruleset reads as one."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, get_args

import msgspec

from gaps_protocol.limits import (
    CODE_REGEX,
    MAX_ACTION_LENGTH,
    MAX_ANNOUNCEMENT_LENGTH,
    MAX_BREAK_S,
    MAX_CODE_LENGTH,
    MAX_COUNTDOWN_S,
    MAX_CURSOR_LENGTH,
    MAX_PAGE_ROWS,
    MAX_PLACED,
    MAX_PLAYER_REFERENCE_LENGTH,
    MAX_PLAYERS,
    MAX_REASON_LENGTH,
    MAX_ROUNDS,
    MAX_RULESET_LENGTH,
    MAX_SEED_LENGTH,
    MAX_SEQ,
    MAX_TABLE_REDEALS,
    MAX_TIME_LIMIT_S,
    MAX_TOKEN_LENGTH,
    MAX_TOURNAMENT_NAME_LENGTH,
    MAX_TOURNAMENT_PLAYERS,
    NAME_REGEX,
    TOKEN_REGEX,
)
from gaps_protocol.messages.common import (
    Board,
    BoardKind,
    Deals,
    IfEmpty,
    Message,
    Period,
    RequestId,
    Role,
    TournamentList,
    WinBy,
)


def _text(max_length: int, pattern: str | None = None) -> msgspec.Meta:
    """A non-empty string of at most ``max_length`` characters, taken as sent (the server
    refuses a text the rule of ``gaps_protocol.text`` refuses); ``pattern``, if given, is
    all it holds."""
    return msgspec.Meta(
        min_length=1,
        max_length=max_length,
        pattern=None if pattern is None else f"^{pattern}$",
    )


#: A match's or tournament's code, in any case.
CodeText = Annotated[str, _text(MAX_CODE_LENGTH, CODE_REGEX)]
RulesetText = Annotated[str, _text(MAX_RULESET_LENGTH, r"[A-Za-z\-]+")]
#: Someone else's name, in any case (looked up as it is).
NameText = Annotated[str, _text(MAX_PLAYER_REFERENCE_LENGTH)]
ReasonText = Annotated[str, _text(MAX_REASON_LENGTH)]
Seq = Annotated[int, msgspec.Meta(ge=1, le=MAX_SEQ)]
Since = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEQ)]


class Request(Message, tag_field="type", forbid_unknown_fields=False, frozen=True):
    """A client message: its reply echoes its ``id``. The server ignores members it does
    not know (a newer client's), so these types take them too."""

    id: RequestId = None


class Register(Request, tag="register", kw_only=True, frozen=True):
    #: Any other text is refused ``bad_name``.
    name: Annotated[str, msgspec.Meta(pattern=f"^{NAME_REGEX}$")]
    bot: bool = False


class Hello(Request, tag="hello", kw_only=True, frozen=True):
    #: Exactly as ``registered`` gave it: no space around it.
    token: Annotated[
        str,
        msgspec.Meta(
            min_length=1, max_length=MAX_TOKEN_LENGTH, pattern=f"^{TOKEN_REGEX}$"
        ),
    ]


class Ping(Request, tag="ping", kw_only=True, frozen=True):
    pass


class CreateMatch(Request, tag="create_match", kw_only=True, frozen=True):
    ruleset: RulesetText = "classic"
    max_players: Annotated[int, msgspec.Meta(ge=1, le=MAX_PLAYERS)] = 2
    time_limit_s: Annotated[int, msgspec.Meta(ge=1, le=MAX_TIME_LIMIT_S)] = 600
    win_by: WinBy = "time"
    public: bool = False
    #: None: the server's ``--countdown-s``.
    countdown_s: Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNTDOWN_S)] | None = None
    #: A share code: the match is then unrated.
    seed: Annotated[str, _text(MAX_SEED_LENGTH)] | None = None
    bots: bool = False


class ListMatches(Request, tag="list_matches", kw_only=True, frozen=True):
    pass


class JoinMatch(Request, tag="join_match", kw_only=True, frozen=True):
    code: CodeText
    role: Role = "player"


class LeaveMatch(Request, tag="leave_match", kw_only=True, frozen=True):
    code: CodeText


class Ready(Request, tag="ready", kw_only=True, frozen=True):
    code: CodeText
    ready: bool = True


class StartMatch(Request, tag="start_match", kw_only=True, frozen=True):
    code: CodeText


class Rematch(Request, tag="rematch", kw_only=True, frozen=True):
    code: CodeText
    same_seed: bool = False


class Play(Request, tag="action", kw_only=True, frozen=True):
    code: CodeText
    seq: Seq
    #: A move (``8C``, ``2H>3``, ``8C>r2c6``), ``redeal``, ``undo`` or ``stop``.
    action: Annotated[str, _text(MAX_ACTION_LENGTH)]


class Resync(Request, tag="resync", kw_only=True, frozen=True):
    code: CodeText
    since: Since


class GetReplay(Request, tag="get_replay", kw_only=True, frozen=True):
    code: CodeText


class GetLeaderboard(Request, tag="leaderboard", kw_only=True, frozen=True):
    ruleset: RulesetText = "classic"
    by: Board = "score"
    period: Period = "all"
    #: None: today (UTC).
    day: date | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE_ROWS)] = 20
    cursor: Annotated[str, _text(MAX_CURSOR_LENGTH)] | None = None
    around_me: bool = False
    kind: BoardKind = "people"


class GetRating(Request, tag="rating", kw_only=True, frozen=True):
    #: None: yours.
    name: NameText | None = None


class CreateTournament(Request, tag="tournament_create", kw_only=True, frozen=True):
    name: Annotated[str, _text(MAX_TOURNAMENT_NAME_LENGTH)] = "Tournament"
    ruleset: RulesetText = "classic"
    rounds: Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)] = 3
    max_players: Annotated[int, msgspec.Meta(ge=1, le=MAX_TOURNAMENT_PLAYERS)] = 16
    round_time_limit_s: Annotated[int, msgspec.Meta(ge=1, le=MAX_TIME_LIMIT_S)] = 600
    #: None: the host starts it.
    start_at: datetime | None = None
    if_empty: IfEmpty = "cancel"
    bots: bool = False
    deals: Deals = "any"
    #: Each round's countdown and the break between rounds (None: the server's).
    countdown_s: Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNTDOWN_S)] | None = None
    break_s: Annotated[int, msgspec.Meta(ge=0, le=MAX_BREAK_S)] | None = None
    #: Players may enter the running tournament until this round is dealt (0: never; more
    #: than ``rounds`` is refused).
    late_entry_until_round: Annotated[int, msgspec.Meta(ge=0, le=MAX_ROUNDS)] = 0


class JoinTournament(Request, tag="tournament_join", kw_only=True, frozen=True):
    code: CodeText


class StartTournament(Request, tag="tournament_start", kw_only=True, frozen=True):
    code: CodeText


class RemoveEntrant(Request, tag="tournament_remove", kw_only=True, frozen=True):
    code: CodeText
    player: NameText
    reason: ReasonText


class ReinstateEntrant(Request, tag="tournament_reinstate", kw_only=True, frozen=True):
    """The host takes back an entrant they removed."""

    code: CodeText
    player: NameText


class CancelTournament(Request, tag="tournament_cancel", kw_only=True, frozen=True):
    """The host cancels the tournament, open or running, with a reason shown to all."""

    code: CodeText
    reason: ReasonText


class PauseTournament(Request, tag="tournament_pause", kw_only=True, frozen=True):
    """The host holds the next round back."""

    code: CodeText


class ResumeTournament(Request, tag="tournament_resume", kw_only=True, frozen=True):
    """The host lets the next round be dealt."""

    code: CodeText


class Announce(Request, tag="tournament_announce", kw_only=True, frozen=True):
    """The host says ``text`` to every entrant and follower."""

    code: CodeText
    text: Annotated[str, _text(MAX_ANNOUNCEMENT_LENGTH)]


Round = Annotated[int, msgspec.Meta(ge=1, le=MAX_ROUNDS)]


class NameArbiter(Request, tag="tournament_arbiter", kw_only=True, frozen=True):
    """The host names ``player`` an arbiter: they seat entrants at tables, read the deal
    sheets and enter the tables' results (docs/tables.md)."""

    code: CodeText
    player: NameText


class SetTable(Request, tag="tournament_table", kw_only=True, frozen=True):
    """The host or an arbiter seats ``player`` at a table (or online again) from the next
    round dealt."""

    code: CodeText
    player: NameText
    at_table: bool = True


class EnterTableResult(Request, tag="tournament_enter_result", kw_only=True, frozen=True):
    """The host or an arbiter enters the result ``player`` reached at a table."""

    code: CodeText
    round: Round
    player: NameText
    placed: Annotated[int, msgspec.Meta(ge=0, le=MAX_PLACED)]
    redeals: Annotated[int, msgspec.Meta(ge=0, le=MAX_TABLE_REDEALS)]
    finish_ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_TIME_LIMIT_S * 1000)]
    won: bool = False


class GetDealSheet(Request, tag="tournament_deal_sheet", kw_only=True, frozen=True):
    """A round's deal, to lay out at a table: for the host and the arbiters, once its
    play has begun."""

    code: CodeText
    round: Round


class ListTournaments(Request, tag="tournament_list", kw_only=True, frozen=True):
    status: TournamentList = "active"


class GetStandings(Request, tag="tournament_standings", kw_only=True, frozen=True):
    code: CodeText


class ResyncTournament(Request, tag="tournament_resync", kw_only=True, frozen=True):
    code: CodeText
    since: Since


class PlayDaily(Request, tag="daily", kw_only=True, frozen=True):
    ruleset: RulesetText = "classic"


class GetDailyBoard(Request, tag="daily_board", kw_only=True, frozen=True):
    ruleset: RulesetText = "classic"
    #: None: today (UTC).
    day: date | None = None


class QuickMatch(Request, tag="quick_match", kw_only=True, frozen=True):
    ruleset: RulesetText = "classic"


class CancelQuickMatch(Request, tag="quick_cancel", kw_only=True, frozen=True):
    pass


class ListReviews(Request, tag="review_list", kw_only=True, frozen=True):
    pass


class _Decision(Request, kw_only=True, frozen=True):
    """An operator's decision on player ``name``'s result in match ``code``."""

    code: CodeText
    name: NameText
    reason: ReasonText


class ClearReview(_Decision, tag="review_clear", kw_only=True, frozen=True):
    """The held result counts from now on."""


class VoidReview(_Decision, tag="review_void", kw_only=True, frozen=True):
    """The result counts for nothing, for good."""


class Suspend(Request, tag="suspend", kw_only=True, frozen=True):
    name: NameText
    reason: ReasonText


class GetAuditLog(Request, tag="audit_log", kw_only=True, frozen=True):
    pass


ClientMessage = (
    Register | Hello | CreateMatch | ListMatches | JoinMatch | LeaveMatch | Ready
    | StartMatch | Rematch | Play | Resync | GetReplay | Ping | GetLeaderboard | GetRating
    | CreateTournament | JoinTournament | StartTournament | RemoveEntrant | ReinstateEntrant
    | CancelTournament | PauseTournament | ResumeTournament | Announce | NameArbiter
    | SetTable | EnterTableResult | GetDealSheet | ListTournaments
    | GetStandings | ResyncTournament | PlayDaily | GetDailyBoard | QuickMatch
    | CancelQuickMatch | ListReviews | ClearReview | VoidReview | Suspend | GetAuditLog
)

#: Every client message's ``type``.
REQUEST_TYPES: tuple[str, ...] = tuple(
    str(info.tag)
    for info in msgspec.inspect.multi_type_info(get_args(ClientMessage))
    if isinstance(info, msgspec.inspect.StructType)
)
