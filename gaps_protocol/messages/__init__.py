"""The protocol's messages as typed values, both ways (docs/protocol.md).

``ClientMessage`` is every request; ``ServerMessage`` every frame the server sends: a
reply (``ServerReply``, tagged by ``type``), a match's event or a tournament's (tagged
by ``event`` inside a ``type: "event"`` or ``"tournament_event"`` frame). ``decode_request``
and ``decode_server_message`` read a frame strictly, raising ``msgspec.ValidationError``
naming the path of what is wrong (``$.match.players[0].score``); ``encode`` writes any
message. ``gaps_protocol.schema`` publishes their JSON Schema.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import msgspec

from gaps_protocol.messages.errors import ERROR_CODES, Error, ErrorCode
from gaps_protocol.messages.events import MatchEvent, TournamentEvent
from gaps_protocol.messages.replies import (
    ActionOk,
    AuditLog,
    DailyBoard,
    DailyStarted,
    DealSheet,
    Events,
    Joined,
    Leaderboard,
    Left,
    MatchCreated,
    Matched,
    Matches,
    Ok,
    Pong,
    Queued,
    Rating,
    Registered,
    RematchJoined,
    ReplayReply,
    Reviews,
    Snapshot,
    Standings,
    Tournament,
    TournamentEvents,
    Tournaments,
    Welcome,
)
from gaps_protocol.messages.requests import REQUEST_TYPES, ClientMessage

ServerReply: TypeAlias = (
    Registered | Welcome | Pong | Ok | MatchCreated | Joined | Snapshot | Matched
    | RematchJoined | DailyStarted | Matches | Left | ActionOk | Events | ReplayReply
    | Leaderboard | Rating | Tournament | Tournaments | Standings | TournamentEvents
    | DailyBoard | Queued | Reviews | AuditLog | DealSheet | Error
)
ServerMessage: TypeAlias = ServerReply | MatchEvent | TournamentEvent


class _Envelope(msgspec.Struct):
    """A server frame's ``type`` alone, to pick the decoder of the rest."""

    type: str


_REQUESTS: Final = msgspec.json.Decoder(ClientMessage)
_ENVELOPE: Final = msgspec.json.Decoder(_Envelope)
_BY_FRAME_TYPE: Final[dict[str, msgspec.json.Decoder[Any]]] = {
    "event": msgspec.json.Decoder(MatchEvent),
    "tournament_event": msgspec.json.Decoder(TournamentEvent),
}
_REPLIES: Final = msgspec.json.Decoder(ServerReply)
_ENCODER: Final = msgspec.json.Encoder()


def decode_request(frame: str | bytes) -> ClientMessage:
    """The client message in ``frame``; ``msgspec.ValidationError`` (naming the field's
    path) or ``msgspec.DecodeError`` (not JSON) if it is not one."""
    return _REQUESTS.decode(frame)


def decode_server_message(frame: str | bytes) -> ServerMessage:
    """The server message in ``frame``, strictly: an unknown member, a missing one or a
    value out of its type is a ``msgspec.ValidationError`` naming its path."""
    kind = _ENVELOPE.decode(frame).type
    decoder = _BY_FRAME_TYPE.get(kind, _REPLIES)
    message: ServerMessage = decoder.decode(frame)
    return message


def encode(message: Any) -> bytes:
    """One frame: compact JSON in UTF-8 (a message; or, for the server's last line,
    ``server.protocol.encode``, the builtins of one)."""
    return _ENCODER.encode(message)


__all__ = [
    "ERROR_CODES", "REQUEST_TYPES", "ClientMessage", "Error", "ErrorCode", "MatchEvent",
    "ServerMessage", "ServerReply", "TournamentEvent", "decode_request",
    "decode_server_message", "encode",
]
