"""The objects replies and events carry: a player's progress, your game, a match's
summary, a tournament's view and standings, the signed records (replays, daily boards)
and the boards' rows (docs/protocol.md names each)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

import msgspec

from gaps_protocol.messages.common import (
    Code,
    Count,
    Deals,
    EndReason,
    IfEmpty,
    MatchKind,
    MatchStatus,
    Message,
    Par,
    PlayerStatus,
    Review,
    Role,
    Ruleset,
    Sha256,
    ShareCode,
    Signature,
    Time,
    TournamentStatus,
    WinBy,
)

_CELL = r"(--|[2-9TJQKA][CDHS])"
#: A grid: 4 rows of 13 cells separated by spaces, ``--`` for a gap.
Grid = Annotated[
    list[Annotated[str, msgspec.Meta(pattern=f"^{_CELL}( {_CELL}){{12}}$")]],
    msgspec.Meta(min_length=4, max_length=4),
]

# -- matches ----------------------------------------------------------------------------


class Progress(Message, frozen=True):
    """What everyone may know of a player in a match: never their grid, never the seed."""

    player_id: int
    name: str
    bot: bool
    ready: bool
    connected: bool
    placed: Annotated[int, msgspec.Meta(ge=0, le=48)]
    score: int
    redeals_used: Count
    moves_made: Count
    status: PlayerStatus
    finished: bool
    won: bool
    end_reason: EndReason | None
    finish_ms: Count | None


class RankedProgress(Progress, frozen=True):
    """A row of ``match_ended``'s ranking: the progress with its rank and review."""

    rank: Annotated[int, msgspec.Meta(ge=1)]
    review: Review | None


class GameCounters(Message, frozen=True):
    """Your own game's counters, as ``action_ok`` and ``you.game`` give them."""

    score: int
    placed: Annotated[int, msgspec.Meta(ge=0, le=48)]
    redeals_used: Count
    redeals_left: Count
    moves_made: Count
    status: PlayerStatus
    can_undo: bool


class GameView(GameCounters, frozen=True):
    """Your game: its grid and counters (a snapshot's ``you.game``)."""

    grid: Grid


class You(Message, frozen=True):
    """You in a match's snapshot: your role, and once dealt your game and last ``seq``."""

    role: Role
    game: GameView | msgspec.UnsetType = msgspec.UNSET
    last_seq: Count | msgspec.UnsetType = msgspec.UNSET


class MatchSummary(Message, frozen=True):
    """A match as listed and as the snapshots give it."""

    id: int
    code: Code
    ruleset: Ruleset
    max_players: int
    time_limit_s: int
    win_by: WinBy
    public: bool
    rated: bool
    countdown_s: Count
    bots: bool
    host_id: int | None
    kind: MatchKind
    status: MatchStatus
    players: Count
    commitment: Sha256 | None
    started_at: Time | None
    t_ms: Count
    #: Only once the match has finished (a daily challenge's once its day is over).
    seed: ShareCode | msgspec.UnsetType = msgspec.UNSET


class RematchBy(Message, frozen=True):
    player_id: int
    name: str


class RatingView(Message, frozen=True):
    """A player's rating in one ruleset (``rating``, ``match_ended``'s ``ratings``)."""

    player_id: int
    ruleset: Ruleset
    mu: float
    sigma: float
    ordinal: float
    games: Count
    provisional: bool


class RatingChange(Message, frozen=True):
    """One update of a player's rating (``rating``'s ``history``), newest first."""

    ruleset: Ruleset
    match_id: int
    match_code: Code
    rank: int
    mu: float
    sigma: float
    ordinal: float
    at: Time


class DailyAttempt(Message, frozen=True):
    """``daily_started``'s ``daily``: the day, and whether you are ranked on its board."""

    day: date
    ranked: bool
    reason: str | None


# -- records ----------------------------------------------------------------------------


class ReplayMatch(Message, frozen=True):
    id: int
    code: Code
    ruleset: Ruleset
    win_by: WinBy
    time_limit_s: int
    rated: bool
    seed: ShareCode
    commitment: Sha256
    started_at: Time | None
    ended_at: Time | None
    par: Par | None


class ReplayAction(Message, frozen=True):
    seq: int
    action: str
    t_ms: Count
    score: int


class ReplayPlayer(Message, frozen=True):
    player_id: int
    name: str
    bot: bool
    rank: int | None
    score: int
    placed: int
    redeals: Count
    moves: Count
    won: bool
    end_reason: EndReason | None
    finish_ms: Count | None
    review: Review | None
    actions: list[ReplayAction]


class Replay(Message, frozen=True):
    """A finished match's signed audit record (``gaps-replay/1``)."""

    format: Literal["gaps-replay/1"]
    match: ReplayMatch
    players: list[ReplayPlayer]
    signature: Signature


class DailyEntry(Message, frozen=True):
    rank: int
    player_id: int
    name: str
    bot: bool
    score: int
    finish_ms: Count


class LeaderboardEntry(Message, frozen=True):
    """A board's row: who, and the figures of its board (``score``: best_score,
    best_score_ms, games; ``time``: fastest_win_ms, fastest_win_score, wins; ``wins``:
    wins, games; ``rating``: ordinal, mu, sigma, games, provisional)."""

    rank: int
    player_id: int
    name: str
    bot: bool
    best_score: int | msgspec.UnsetType = msgspec.UNSET
    best_score_ms: Count | msgspec.UnsetType = msgspec.UNSET
    fastest_win_ms: Count | None | msgspec.UnsetType = msgspec.UNSET
    fastest_win_score: int | None | msgspec.UnsetType = msgspec.UNSET
    wins: Count | msgspec.UnsetType = msgspec.UNSET
    games: Count | msgspec.UnsetType = msgspec.UNSET
    ordinal: float | msgspec.UnsetType = msgspec.UNSET
    mu: float | msgspec.UnsetType = msgspec.UNSET
    sigma: float | msgspec.UnsetType = msgspec.UNSET
    provisional: bool | msgspec.UnsetType = msgspec.UNSET


class SigningKey(Message, frozen=True):
    """A key the server signs (or signed) with, as ``/keys`` lists it."""

    key_id: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16}$")]
    alg: Literal["Ed25519"]
    public_key: str
    created_at: Time
    status: Literal["current", "retired"]
    retired_at: Time | None


# -- operators ---------------------------------------------------------------------------


class HeldResult(Message, frozen=True):
    """A result held for an operator's review, with its timing."""

    match_code: Code
    ruleset: Ruleset
    player_id: int
    name: str
    flags: list[Literal["fast", "even"]]
    intervals: Count
    median_ms: float | None
    spread_ratio: float | None
    held_at: Time
    chart: list[str]


class AuditEntry(Message, frozen=True):
    at: Time
    operator: str
    decision: Literal["clear", "void", "suspend"]
    target: str
    reason: str


class Suspension(Message, frozen=True):
    """``welcome``'s ``suspended``: since when the account's results count nowhere."""

    since: Time
    reason: str


# -- tournaments -------------------------------------------------------------------------


class Entrant(Message, frozen=True):
    player_id: int
    name: str
    bot: bool
    removed: bool
    removed_reason: str | None
    #: They play at a table from the next round dealt (docs/tables.md).
    at_table: bool


class StandingsRow(Entrant, frozen=True):
    rank: Annotated[int, msgspec.Meta(ge=1)]
    total_score: int
    total_time_ms: Count
    rounds_played: Count
    #: The row counts a result entered for a table, in these rounds.
    entered: bool
    entered_rounds: list[Annotated[int, msgspec.Meta(ge=1)]]


class Arbiter(Message, frozen=True):
    player_id: int
    name: str


class EnteredResult(Message, frozen=True):
    """A table's result as the host or an arbiter entered it: never the server's."""

    round: Annotated[int, msgspec.Meta(ge=1)]
    player_id: int
    name: str
    score: int
    placed: Count
    redeals: Count
    finish_ms: Count
    won: bool
    entered: Literal[True]
    #: The arbiter who entered it; null: the host.
    entered_by: str | None
    entered_at: Time


class Announcement(Message, frozen=True):
    """A tournament host's word to everyone, and when they said it."""

    text: str
    at: Time


class TournamentView(Message, frozen=True):
    id: int
    code: Code
    name: str
    host_id: int
    ruleset: Ruleset
    rounds: Annotated[int, msgspec.Meta(ge=1)]
    max_players: Annotated[int, msgspec.Meta(ge=1)]
    round_time_limit_s: Annotated[int, msgspec.Meta(ge=1)]
    start_at: Time | None
    if_empty: IfEmpty
    status: TournamentStatus
    cancel_reason: str | None
    current_round: Count
    round_match: Code | None
    bots: bool
    countdown_s: Count
    break_s: Annotated[float, msgspec.Meta(ge=0)]
    deals: Deals
    deals_ready: bool
    #: Players may enter the running tournament until this round is dealt (0: never).
    late_entry_until_round: Count
    #: The host holds the next round back.
    paused: bool
    arbiters: list[Arbiter]
    #: When the play of the round being played began (its countdown's end).
    round_started_at: Time | None
    #: Who plays the round being played at a table.
    round_tables: list[str]
    #: The host's last announcements, oldest first.
    announcements: list[Announcement]
    commitment: Sha256 | None
    round_commitments: list[Sha256]
    seeds: list[ShareCode | None]
    entrant_count: Count
    entrants: list[Entrant]

