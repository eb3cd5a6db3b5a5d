"""The Gaps Arena wire protocol as a client speaks it, without I/O (docs/protocol.md).

``ClientSession`` is one client's session: fed frames, the connection's ups and downs and
the time, it says what to send, when to wake it and what changed (``notices``). The
terminal client (``client_cli.connection``) runs it over asyncio and websockets; its tests
run it over a fake server and a fake clock.

``gaps_protocol.messages`` holds every message both ways as a typed value (msgspec
Structs) with one strict decoder each way; ``gaps_protocol.limits`` the protocol's bounds;
``gaps_protocol.schema`` the published JSON Schema, AsyncAPI and OpenAPI documents.
"""

from gaps_protocol.backoff import Backoff
from gaps_protocol.messages import (
    ClientMessage,
    ServerMessage,
    decode_request,
    decode_server_message,
)
from gaps_protocol.notices import (
    Closed,
    Disconnect,
    Event,
    Failed,
    Gone,
    Lost,
    Notice,
    Reconnect,
    Refused,
    Reply,
    Restored,
    Retrying,
    Snapshot,
    Unanswered,
)
from gaps_protocol.refusals import TRANSIENT_CODES, describe, is_transient, pause_after
from gaps_protocol.session import (
    RECONNECT_FOR_S,
    REQUEST_TIMEOUT_S,
    RETRY_FIRST_S,
    RETRY_MOST_S,
    ClientSession,
    NotInMatch,
    State,
)
from gaps_protocol.tracks import (
    MATCH_SNAPSHOTS,
    Delivered,
    EventTrack,
    MatchSnapshot,
    MatchTrack,
    NumberedEvent,
    TournamentTrack,
)

__all__ = [
    "ClientMessage", "ServerMessage", "decode_request", "decode_server_message",
    "MATCH_SNAPSHOTS", "RECONNECT_FOR_S", "REQUEST_TIMEOUT_S", "RETRY_FIRST_S", "RETRY_MOST_S",
    "TRANSIENT_CODES", "Backoff", "ClientSession", "Closed", "Delivered", "Disconnect",
    "Event", "EventTrack", "Failed", "Gone", "Lost", "MatchSnapshot", "MatchTrack",
    "NotInMatch", "Notice", "NumberedEvent", "Reconnect", "Refused", "Reply", "Restored",
    "Retrying", "Snapshot", "State", "TournamentTrack", "Unanswered", "describe",
    "is_transient", "pause_after",
]
