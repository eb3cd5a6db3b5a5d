"""What a handler may use of the connection it answers (``server.session.Session`` is
one): the player, the server's parts, and how to follow and leave matches."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

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

    async def seat(self, match: MatchHandle) -> dict[str, Any]: ...

    async def spectate(self, match: MatchHandle) -> dict[str, Any]: ...

    async def stop_following(self, match: MatchHandle) -> None: ...

    async def follow(self, channel: str) -> None: ...

    def unfollow(self, channel: str) -> None: ...

    async def send_then_forward(self, message: dict[str, Any]) -> None: ...


#: A request's handler: the reply's fields for the request, on a connection.
Handler = Callable[[Connection, Any], Awaitable[dict[str, Any]]]
