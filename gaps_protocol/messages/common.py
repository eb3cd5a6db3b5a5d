"""What every message is built of: the base of the types, the request id, the names of
the protocol's enumerations, and the small values many messages share."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec

from gaps_protocol.limits import MAX_ID_LENGTH, MAX_SAFE_INTEGER


class Message(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A value of the protocol: immutable, and strict as decoded (an unknown member, a
    missing one or one of the wrong type is refused, naming its path)."""


#: A request's ``id``, echoed by its reply as sent: null, an integer every JSON reader
#: holds exactly (written as one: no fraction, no exponent, not ``-0``), or a short text
#: (by the one rule for text, ``gaps_protocol.text``: the server checks it).
RequestId: TypeAlias = (
    Annotated[int, msgspec.Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
    | Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ID_LENGTH)]
    | None
)

#: Whole numbers that count up from 0 (an event's ``seq``, a score, milliseconds...).
Count: TypeAlias = Annotated[int, msgspec.Meta(ge=0)]
#: A match's or tournament's code as the server gives it.
Code: TypeAlias = str
#: A share code (``AAAA-BBBB-CCCC-DDDD``): a seed's 10 bytes in base32.
ShareCode: TypeAlias = Annotated[str, msgspec.Meta(pattern=r"^[A-Z2-7]{4}(-[A-Z2-7]{1,4})*$")]
#: An instant, in the protocol's one form (``gaps_protocol.times``: RFC 3339 in UTC to the
#: millisecond, ``2026-12-02T09:22:45.123Z``), as ``format_time`` writes it. Text, not a
#: ``datetime``: msgspec would write one its own way (``.123000Z``, or no fraction).
Time: TypeAlias = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$",
        extra_json_schema={"format": "date-time"},
    ),
]
#: SHA-256, lower-case hex.
Sha256: TypeAlias = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]

Ruleset: TypeAlias = Literal["classic", "no-redeal", "addiction", "spaces", "montana", "paganini"]
WinBy: TypeAlias = Literal["time", "score"]
Role: TypeAlias = Literal["player", "spectator"]
MatchKind: TypeAlias = Literal["race", "quick", "tournament", "daily"]
MatchStatus: TypeAlias = Literal["lobby", "countdown", "running", "finished", "abandoned"]
#: Why a game ended (``null`` while it runs).
EndReason: TypeAlias = Literal["won", "lost", "stopped", "time", "disconnected", "left"]
#: A player's status: ``waiting`` before the deal, then the game's, or how it ended.
PlayerStatus: TypeAlias = Literal[
    "waiting", "playing", "blocked", "won", "lost", "stopped", "time", "disconnected", "left"
]
ActionKind: TypeAlias = Literal["move", "redeal", "undo", "stop"]
#: Why a result is kept off the boards and ratings (``null``: it counts).
Review: TypeAlias = Literal["held", "cleared", "voided", "suspended"]
TournamentStatus: TypeAlias = Literal["open", "running", "finished", "cancelled"]
IfEmpty: TypeAlias = Literal["cancel", "wait"]
Deals: TypeAlias = Literal["any", "winnable"]
Board: TypeAlias = Literal["score", "time", "wins", "rating"]
BoardKind: TypeAlias = Literal["people", "bots"]
Period: TypeAlias = Literal["all", "month", "day"]
TournamentList: TypeAlias = Literal["active", "ended", "all"]
#: The rules engine's reasons for refusing an action (docs/rules.md).
IllegalReason: TypeAlias = Literal[
    "not_a_gap", "dead_gap", "wrong_card", "row_required", "not_in_play",
    "redeal_not_allowed", "no_redeals_left", "undo_not_allowed", "nothing_to_undo",
    "game_over",
]
#: What may refuse a declared bot a seat (``bots_not_allowed``'s ``refused_by``).
BotRefuser: TypeAlias = Literal["match", "tournament", "quick_match", "daily"]


class Player(Message, frozen=True):
    """A player as the server names them: ``registered``, ``welcome``, ``rating``."""

    id: int
    name: str
    bot: bool


class Par(Message, frozen=True):
    """A deal's par: ``score`` exact, or only a lower bound when ``exact`` is false."""

    score: int
    exact: bool


class Signature(Message, frozen=True):
    """The server's Ed25519 signature of a document (docs/protocol.md, Signatures)."""

    alg: Literal["Ed25519"]
    key_id: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16}$")]
    value: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_\-]+$")]
