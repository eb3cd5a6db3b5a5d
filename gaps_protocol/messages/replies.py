"""Every reply of the server, and the messages it sends unasked but ``event`` frames
(``matched``): each is tagged by its ``type`` and echoes its request's ``id``."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

import msgspec

from gaps_protocol.messages.common import (
    ActionKind,
    Board,
    BoardKind,
    Code,
    Count,
    Message,
    Par,
    Player,
    RequestId,
    Ruleset,
    ShareCode,
    Signature,
    Time,
)
from gaps_protocol.messages.events import MatchEvent, TournamentEvent
from gaps_protocol.messages.views import (
    AuditEntry,
    DailyAttempt,
    DailyEntry,
    EnteredResult,
    GameCounters,
    Grid,
    HeldResult,
    LeaderboardEntry,
    MatchSummary,
    Progress,
    RatingChange,
    RatingView,
    Replay,
    StandingsRow,
    Suspension,
    TournamentView,
    You,
)


class Reply(Message, tag_field="type", kw_only=True, frozen=True):
    """The answer to a request: ``id`` is the request's."""

    id: RequestId


class Registered(Reply, tag="registered", kw_only=True, frozen=True):
    player: Player
    #: Shown once: keep it, it is how the player authenticates from now on.
    token: str


class Welcome(Reply, tag="welcome", kw_only=True, frozen=True):
    player: Player
    protocol: Literal[1]
    server_time: Time
    suspended: Suspension | None


class Pong(Reply, tag="pong", kw_only=True, frozen=True):
    server_time: Time


class Ok(Reply, tag="ok", kw_only=True, frozen=True):
    #: ``quick_cancel``: whether you were queued.
    cancelled: bool | msgspec.UnsetType = msgspec.UNSET


class Seated(Message, tag_field="type", kw_only=True, frozen=True):
    """Everything to draw a match as you see it (``joined`` and its kin); ``seq`` is the
    last event it reflects."""

    match: MatchSummary
    players: list[Progress]
    spectators: Count
    you: You
    seq: Count


class MatchCreated(Seated, tag="match_created", kw_only=True, frozen=True):
    id: RequestId


class Joined(Seated, tag="joined", kw_only=True, frozen=True):
    id: RequestId


class Snapshot(Seated, tag="snapshot", kw_only=True, frozen=True):
    """``resync``'s answer when the events asked for are no longer all kept."""

    id: RequestId


class Matched(Seated, tag="matched", kw_only=True, frozen=True):
    """Sent unasked: the quick-match queue seated you in this match."""


class RematchJoined(Seated, tag="rematch", kw_only=True, frozen=True):
    id: RequestId
    #: The finished match this one follows.
    of: Code
    same_seed: bool


class DailyStarted(Seated, tag="daily_started", kw_only=True, frozen=True):
    id: RequestId
    daily: DailyAttempt


class Matches(Reply, tag="matches", kw_only=True, frozen=True):
    matches: list[MatchSummary]


class Left(Reply, tag="left", kw_only=True, frozen=True):
    match: Code


class ActionOk(GameCounters, tag_field="type", tag="action_ok", kw_only=True, frozen=True):
    """An action applied and stored (or, with ``duplicate``, applied before)."""

    id: RequestId
    match: Code
    seq: Annotated[int, msgspec.Meta(ge=1)]
    action: str
    kind: ActionKind
    t_ms: Count
    #: A move or an undo: which card went from which slot to which.
    card: str | msgspec.UnsetType = msgspec.UNSET
    from_: str | msgspec.UnsetType = msgspec.field(default=msgspec.UNSET, name="from")
    to: str | msgspec.UnsetType = msgspec.UNSET
    #: A redeal: the new grid.
    grid: Grid | msgspec.UnsetType = msgspec.UNSET
    #: A resend of an action applied already: its first reply, again.
    duplicate: Literal[True] | msgspec.UnsetType = msgspec.UNSET


class Events(Reply, tag="events", kw_only=True, frozen=True):
    """``resync``: the match's events after ``since``, oldest first."""

    match: Code
    events: list[MatchEvent]


class ReplayReply(Reply, tag="replay", kw_only=True, frozen=True):
    replay: Replay


class Leaderboard(Reply, tag="leaderboard", kw_only=True, frozen=True):
    board: Board
    kind: BoardKind
    ruleset: Ruleset
    period: Literal["all", "month", "day"]
    #: The first day of the period (null: all time, and the rating board).
    period_start: date | None
    entries: list[LeaderboardEntry]
    #: A page's: the next page's cursor (null: the last page).
    next_cursor: str | None | msgspec.UnsetType = msgspec.UNSET
    #: ``around_me``'s: your rank (null: you have no row on this board).
    rank: int | None | msgspec.UnsetType = msgspec.UNSET


class Rating(Reply, tag="rating", kw_only=True, frozen=True):
    player: Player
    ratings: list[RatingView]
    history: list[RatingChange]


class Tournament(Reply, tag="tournament", kw_only=True, frozen=True):
    """A tournament's view; with ``seq`` (the last event it reflects) once you follow
    it; with ``standings`` as ``tournament_resync``'s snapshot."""

    tournament: TournamentView
    seq: Count | msgspec.UnsetType = msgspec.UNSET
    standings: list[StandingsRow] | msgspec.UnsetType = msgspec.UNSET
    entered_results: list[EnteredResult] | msgspec.UnsetType = msgspec.UNSET


class Tournaments(Reply, tag="tournaments", kw_only=True, frozen=True):
    tournaments: list[TournamentView]


class Standings(Reply, tag="standings", kw_only=True, frozen=True):
    tournament: TournamentView
    standings: list[StandingsRow]
    #: Every table's result entered so far, by round (docs/tables.md).
    entered_results: list[EnteredResult] | msgspec.UnsetType = msgspec.UNSET


class DealSheet(Reply, tag="deal_sheet", kw_only=True, frozen=True):
    """``tournament_deal_sheet``: a round's deal, to lay out at a table."""

    tournament: Code
    round: Annotated[int, msgspec.Meta(ge=1)]
    seed: ShareCode
    ruleset: Ruleset
    #: The round's match of the players online; null: everyone plays it at a table.
    match: Code | None
    #: When its play began.
    started_at: Time | None


class TournamentEvents(Reply, tag="tournament_events", kw_only=True, frozen=True):
    """``tournament_resync``: the tournament's events after ``since``, oldest first."""

    tournament: Code
    events: list[TournamentEvent]


class DailyBoard(Reply, tag="daily_board", kw_only=True, frozen=True):
    """A day's board, signed: the signed document is this reply without ``type`` and
    ``id`` (``/daily/RULESET`` serves it so)."""

    format: Literal["gaps-daily/1"]
    ruleset: Ruleset
    day: date
    as_of: Time
    registered_before: Time
    par: Par | None
    entries: list[DailyEntry]
    signature: Signature


class Queued(Reply, tag="queued", kw_only=True, frozen=True):
    ruleset: Ruleset
    waiting: Count


class Reviews(Reply, tag="reviews", kw_only=True, frozen=True):
    reviews: list[HeldResult]


class AuditLog(Reply, tag="audit_log", kw_only=True, frozen=True):
    entries: list[AuditEntry]
