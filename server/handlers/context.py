"""What a handler may use of the connection it answers (``server.session.Session`` is
one): the player, the server's parts, and how to follow and leave matches."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

import msgspec

from gaps_protocol.messages import ClientMessage, ServerReply
from gaps_protocol.messages.common import Message
from gaps_protocol.messages.replies import Snapshot
from server.remote import MatchHandle
from server.services import Services
from server.storage.players import PlayerRecord


class Connection(Protocol):
    services: Services
    player: PlayerRecord | None
    seats: set[str]
    spectating: set[str]
    #: The quick-match request this player waits on: (ruleset, ticket, since).
    queued: tuple[str, str, float] | None
    requeueing: asyncio.Task[None] | None

    def require_player(self) -> PlayerRecord: ...

    def now(self) -> str: ...

    async def match(self, code: str) -> MatchHandle: ...

    async def seat(self, match: MatchHandle) -> Snapshot: ...

    async def spectate(self, match: MatchHandle) -> Snapshot: ...

    async def stop_following(self, match: MatchHandle) -> None: ...

    async def follow(self, channel: str) -> None: ...

    def unfollow(self, channel: str) -> None: ...

    async def send_then_forward(self, message: Message) -> None: ...


#: A request's handler: the reply to the request (its ``id`` the request's), on a
#: connection.
Handler = Callable[[Connection, Any], Awaitable[ServerReply]]

R = TypeVar("R", bound=ServerReply)


def from_document(kind: type[R], request: ClientMessage, document: Mapping[str, Any]) -> R:
    """The reply ``kind`` to ``request`` whose members are ``document``: a read the HTTP
    reads serve too (a board, a replay, standings), as storage or the leader gives it.
    Typed here, checked as it is (a member the reply has no room for is a bug)."""
    return msgspec.convert({**document, "id": request.id}, kind)


def answering(request: ClientMessage, reply: R) -> R:
    """``reply``, built where the id of the request is not known (an actor, the leader:
    ``id`` None), as the answer to ``request``."""
    return msgspec.structs.replace(reply, id=request.id)
