"""What the server pushes: a match's events (``type: "event"``) and a tournament's
(``type: "tournament_event"``), each tagged by its ``event`` and numbered by ``seq``."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from gaps_protocol.messages.common import (
    Code,
    Count,
    Message,
    Ruleset,
    Sha256,
    ShareCode,
    Time,
)
from gaps_protocol.messages.views import (
    EnteredResult,
    Entrant,
    Grid,
    Progress,
    RankedProgress,
    RatingView,
    RematchBy,
    StandingsRow,
)

Seq = Annotated[int, msgspec.Meta(ge=1)]
#: The ``seq`` of an event not yet numbered: the server numbers each as it publishes it
#: (``msgspec.structs.replace(event, seq=n)``); no frame carries it.
UNNUMBERED = 0

# -- a match's --------------------------------------------------------------------------


class _MatchEvent(Message, tag_field="event", kw_only=True, frozen=True):
    #: The frame's kind, the same for every match event: given, so that the server
    #: builds an event from what it says alone (always written, and required by the
    #: schema all the same).
    type: Literal["event"] = "event"
    match: Code
    seq: Seq
    #: The match clock when it happened (0 before the deal).
    t_ms: Count


class _ProgressEvent(Progress, tag_field="event", kw_only=True, frozen=True):
    """An event that is a player's progress object (``progress``, ``player_finished``)."""

    type: Literal["event"] = "event"
    match: Code
    seq: Seq
    t_ms: Count


class PlayerJoined(_MatchEvent, tag="player_joined", kw_only=True, frozen=True):
    player: Progress


class PlayerLeft(_MatchEvent, tag="player_left", kw_only=True, frozen=True):
    player_id: int


class HostChanged(_MatchEvent, tag="host_changed", kw_only=True, frozen=True):
    host_id: int


class Presence(_MatchEvent, tag="presence", kw_only=True, frozen=True):
    player_id: int
    connected: bool


class MatchAbandoned(_MatchEvent, tag="match_abandoned", kw_only=True, frozen=True):
    pass


class ReadyChanged(_MatchEvent, tag="ready", kw_only=True, frozen=True):
    player_id: int
    ready: bool


class Countdown(_MatchEvent, tag="countdown", kw_only=True, frozen=True):
    countdown_ms: Count
    commitment: Sha256
    #: The seated players' ids.
    players: list[int]


class Started(_MatchEvent, tag="started", kw_only=True, frozen=True):
    """The deal, the same for all, at match clock 0."""

    started_at: Time
    commitment: Sha256
    ruleset: Ruleset
    time_limit_s: int
    grid: Grid
    players: list[Progress]


class ProgressMade(_ProgressEvent, tag="progress", kw_only=True, frozen=True):
    pass


class PlayerFinished(_ProgressEvent, tag="player_finished", kw_only=True, frozen=True):
    pass


class MatchEnded(_MatchEvent, tag="match_ended", kw_only=True, frozen=True):
    ranking: list[RankedProgress]
    #: The share code (null for a daily challenge until its day is over).
    seed: ShareCode | None
    commitment: Sha256
    ended_at: Time
    ratings: list[RatingView]


class RematchOffered(_MatchEvent, tag="rematch_offered", kw_only=True, frozen=True):
    code: Code
    same_seed: bool
    by: RematchBy


MatchEvent = (
    PlayerJoined | PlayerLeft | HostChanged | Presence | MatchAbandoned | ReadyChanged
    | Countdown | Started | ProgressMade | PlayerFinished | MatchEnded | RematchOffered
)

# -- a tournament's ---------------------------------------------------------------------


class _TournamentEvent(Message, tag_field="event", kw_only=True, frozen=True):
    type: Literal["tournament_event"] = "tournament_event"
    tournament: Code
    seq: Seq


class DealsCommitted(_TournamentEvent, tag="deals_committed", kw_only=True, frozen=True):
    commitment: Sha256 | None
    round_commitments: list[Sha256]
    seeds: list[ShareCode | None]


class EntrantJoined(_TournamentEvent, tag="entrant_joined", kw_only=True, frozen=True):
    player_id: int
    name: str
    bot: bool
    #: A late entrant's: ``late`` is true, and ``from_round`` the first round they play.
    late: Literal[True] | msgspec.UnsetType = msgspec.UNSET
    from_round: Seq | msgspec.UnsetType = msgspec.UNSET


class EntrantReinstated(_TournamentEvent, tag="entrant_reinstated", kw_only=True,
                        frozen=True):
    player_id: int
    name: str
    #: The first round they play again.
    from_round: Seq


class TournamentPaused(_TournamentEvent, tag="tournament_paused", kw_only=True, frozen=True):
    #: The round being played, or the last one.
    after_round: Count
    round_in_play: bool


class TournamentResumed(_TournamentEvent, tag="tournament_resumed", kw_only=True,
                        frozen=True):
    #: When the next round's ``round_starting`` comes (null during a round).
    next_round_at: Time | None


class TournamentAnnouncement(_TournamentEvent, tag="tournament_announcement", kw_only=True,
                             frozen=True):
    text: str
    at: Time


class EntrantRemoved(_TournamentEvent, tag="entrant_removed", kw_only=True, frozen=True):
    player_id: int
    name: str
    reason: str
    #: The last round dealt (0 before the first).
    after_round: Count


class TournamentStarted(_TournamentEvent, tag="tournament_started", kw_only=True, frozen=True):
    rounds: int
    entrants: list[Entrant]


class RoundStarting(_TournamentEvent, tag="round_starting", kw_only=True, frozen=True):
    round: Seq
    #: Null: every entrant plays the round at a table.
    match: Code | None
    countdown_ms: Count
    #: Who plays the round at a table (no seat in its match).
    tables: list[str]


class RoundEnded(_TournamentEvent, tag="round_ended", kw_only=True, frozen=True):
    round: Seq
    match: Code | None
    #: The tables' results entered so far, and the table entrants with none yet.
    entered: list[EnteredResult]
    results_awaited: list[str]
    #: The round's deal, revealed now.
    seed: ShareCode | None
    standings: list[StandingsRow]
    #: When the next round's ``round_starting`` comes (null after the last round, and
    #: while paused).
    next_round_at: Time | None
    paused: bool


class TournamentEnded(_TournamentEvent, tag="tournament_ended", kw_only=True, frozen=True):
    standings: list[StandingsRow]
    podium: list[StandingsRow]
    seeds: list[ShareCode | None]


class TournamentCancelled(_TournamentEvent, tag="tournament_cancelled", kw_only=True, frozen=True):
    reason: str
    #: The host cancelled (``tournament_cancel``), rather than the server.
    by_host: bool
    #: The round given up unplayed, if one was being played.
    abandoned_round: Seq | None
    seeds: list[ShareCode | None]


class ArbiterNamed(_TournamentEvent, tag="arbiter_named", kw_only=True, frozen=True):
    player_id: int
    name: str


class EntrantTable(_TournamentEvent, tag="entrant_table", kw_only=True, frozen=True):
    player_id: int
    name: str
    at_table: bool
    from_round: Seq


class ResultEntered(_TournamentEvent, tag="result_entered", kw_only=True, frozen=True):
    """A table's result, as ``EnteredResult`` (msgspec types take one base), and what it
    changed."""

    round: Seq
    player_id: int
    name: str
    score: int
    placed: Count
    redeals: Count
    finish_ms: Count
    won: bool
    entered: Literal[True]
    entered_by: str | None
    entered_at: Time
    #: It replaces one entered before for the same round and entrant.
    replaced: bool
    #: Null while its round is not counted yet.
    standings: list[StandingsRow] | None


TournamentEvent = (
    DealsCommitted | EntrantJoined | EntrantReinstated | EntrantRemoved | TournamentStarted
    | RoundStarting | RoundEnded | TournamentPaused | TournamentResumed
    | TournamentAnnouncement | TournamentEnded | TournamentCancelled | ArbiterNamed
    | EntrantTable | ResultEntered
)


def event_name(event: MatchEvent | TournamentEvent) -> str:
    """What ``event`` is, as its frame's ``event`` member names it (``"progress"``)."""
    tag = type(event).__struct_config__.tag
    assert isinstance(tag, str), f"{type(event).__name__} has no tag"
    return tag
