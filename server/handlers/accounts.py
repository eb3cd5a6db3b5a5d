"""Accounts: register, hello (a token back), ping."""

from __future__ import annotations

import logging
from typing import Final

from gaps_protocol.messages.common import Player
from gaps_protocol.messages.replies import Pong, Registered, Welcome
from gaps_protocol.messages.requests import Hello, Ping, Register
from gaps_protocol.messages.views import Suspension
from server import protocol
from server.errors import ServerError
from server.handlers.context import Connection, Handler
from server.identity import new_token, token_hash
from server.storage.players import NameTaken

log = logging.getLogger("gaps.server")


async def register(session: Connection, request: Register) -> Registered:
    if session.player is not None:
        raise ServerError("already_authenticated", f"this connection is {session.player.name}'s")
    services = session.services
    if services.is_operator(request.name):
        # An operator's account is registered before it is listed: registering a listed
        # name would take the role.
        raise ServerError("name_taken", f"{request.name!r} is reserved: choose another name")
    token = new_token()
    try:
        session.player = await services.store.players.register(
            request.name, token_hash(token), services.clock.now(), bot=request.bot
        )
    except NameTaken:
        raise ServerError("name_taken", f"{request.name!r} is taken: choose another name") from None
    log.info("registered", extra={"player": request.name, "bot": request.bot})
    return Registered(id=request.id, player=player_view(session), token=token)


async def hello(session: Connection, request: Hello) -> Welcome:
    if session.player is not None:
        raise ServerError("already_authenticated", f"this connection is {session.player.name}'s")
    store = session.services.store
    player = await store.players.by_token_hash(token_hash(request.token))
    if player is None:
        raise ServerError("bad_token", "no player has this token")
    session.player = player
    suspension = await store.reviews.suspension_of(player.id)
    return Welcome(
        id=request.id,
        player=player_view(session),
        protocol=protocol.PROTOCOL_VERSION,
        server_time=session.now(),
        # Suspended from rated play: since when, and why; null when not.
        suspended=None if suspension is None else Suspension(**suspension),
    )


async def ping(session: Connection, request: Ping) -> Pong:
    return Pong(id=request.id, server_time=session.now())


def player_view(session: Connection) -> Player:
    player = session.require_player()
    return Player(id=player.id, name=player.name, bot=player.bot)


#: The requests answered before the player is known.
HANDLERS: Final[dict[type, Handler]] = {Register: register, Hello: hello, Ping: ping}
