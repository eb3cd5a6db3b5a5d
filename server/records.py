"""What the match core asks the shell to store: plain frozen records, no SQL, no asyncio.

Instants are wall-clock milliseconds since the Unix epoch (UTC); ``t_ms`` and
``finish_ms`` are milliseconds of the match's clock (since the deal).
"""

from __future__ import annotations

from dataclasses import dataclass

from gaps_protocol.messages.common import ActionKind

#: Wall-clock milliseconds since the Unix epoch, UTC.
Ms = int


@dataclass(frozen=True)
class SeatAdded:
    player_id: int
    joined_at: Ms


@dataclass(frozen=True)
class SeatRemoved:
    player_id: int


@dataclass(frozen=True)
class ReadySet:
    player_id: int
    ready: bool


@dataclass(frozen=True)
class HostSet:
    host_id: int


@dataclass(frozen=True)
class MatchStarted:
    """The deal: status ``running`` from ``started_at`` on."""

    started_at: Ms


@dataclass(frozen=True)
class ActionRow:
    """One acknowledged action, exactly as the journal stores it."""

    player_id: int
    seq: int
    action: str
    kind: ActionKind
    card: str | None
    from_slot: str | None
    to_slot: str | None
    t_ms: int
    score: int


@dataclass(frozen=True)
class GameEnded:
    """The end of one seat's game, stored whole."""

    player_id: int
    end_reason: str
    finish_ms: int
    score_ms: int
    score: int
    placed: int
    redeals: int
    moves: int
    won: bool


@dataclass(frozen=True)
class MatchAbandoned:
    ended_at: Ms


Write = SeatAdded | SeatRemoved | ReadySet | HostSet | MatchStarted | ActionRow | GameEnded | (
    MatchAbandoned
)


@dataclass(frozen=True)
class RankedGame:
    """One row of the table a match ends with, for ``Store.finish_match``."""

    player_id: int
    rank: int
    score: int
    finish_ms: int
    won: bool
