"""What a client session tells its application: each a value, in the order it happened.

The server's messages they carry are typed (``gaps_protocol.messages``), decoded once,
strictly, by the session."""

from __future__ import annotations

from dataclasses import dataclass

from gaps_protocol.messages import Error, ServerReply
from gaps_protocol.messages.replies import Tournament
from gaps_protocol.refusals import describe, is_transient
from gaps_protocol.tracks import MatchSnapshot, NumberedEvent


@dataclass(frozen=True)
class Reply:
    """The answer to the application's request ``request_id``."""

    request_id: int
    message: ServerReply


@dataclass(frozen=True)
class Refused:
    """The server refused request ``request_id`` (its ``error`` reply), for good or, for a
    request not to be repeated, for now."""

    request_id: int
    message: Error

    @property
    def code(self) -> str:
        return self.message.code

    @property
    def transient(self) -> bool:
        return is_transient(self.message)

    def __str__(self) -> str:
        return describe(self.message)


@dataclass(frozen=True)
class Unanswered:
    """No answer to request ``request_id`` will come: ``lost`` with the connection (or the
    session is closed or failed), or none came in time."""

    request_id: int
    reason: str
    lost: bool


@dataclass(frozen=True)
class Event:
    """A match's ``event`` or a tournament's ``tournament_event``: each delivered once, in
    ``seq`` order."""

    message: NumberedEvent


@dataclass(frozen=True)
class Snapshot:
    """A match's state as a reply gives it (``joined``, ``snapshot``, ``matched``...) or a
    tournament's resync snapshot: the count of its events goes on from its ``seq``."""

    message: MatchSnapshot | Tournament


@dataclass(frozen=True)
class Lost:
    """The connection dropped; the session reconnects (``Reconnect`` follows)."""

    detail: str


@dataclass(frozen=True)
class Reconnect:
    """Open a new connection ``after_s`` seconds from now, then call ``connection_made``
    (or ``connect_failed``)."""

    after_s: float


@dataclass(frozen=True)
class Disconnect:
    """Close the current connection with WebSocket close ``code``: the session is done with
    it (it failed, or a reconnect refused for now tries again on a new one)."""

    code: int
    reason: str


@dataclass(frozen=True)
class Restored:
    """Reconnected: signed in again, matches rejoined, tournaments followed again."""

    detail: str


@dataclass(frozen=True)
class Retrying:
    """Request ``request_id`` was refused for now (``code``); it goes again after a pause."""

    request_id: int
    code: str
    detail: str


@dataclass(frozen=True)
class Gone:
    """A match (or tournament) could not be rejoined (followed again) after a reconnect:
    the session forgot it."""

    detail: str
    match: str | None = None
    tournament: str | None = None


@dataclass(frozen=True)
class Failed:
    """The session gave up for good: the server broke the protocol, refused the reconnect,
    or could not be reached again in time."""

    reason: str


@dataclass(frozen=True)
class Closed:
    """The application closed the session."""

    detail: str = "closed"


Notice = (Reply | Refused | Unanswered | Event | Snapshot | Lost | Reconnect | Disconnect
          | Restored | Retrying | Gone | Failed | Closed)
