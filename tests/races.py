"""Helpers for tests that race through the real server: players, and a dealt match."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gaps import Seed
from tests.client import Client

Connect = Callable[[], Awaitable[Client]]

#: A deal on which always playing the first legal move goes on for 20 moves: tests that
#: play a fixed number of moves before a kill or a pause use it (a random deal blocks
#: within 9 moves about once in 70).
LONG_FIRST_MOVES = Seed(bytes(range(16)))


async def registered(connect: Connect, *names: str) -> list[Client]:
    """A new connection per name, each registered as that player."""
    clients = []
    for name in names:
        client = await connect()
        await client.register(name)
        clients.append(client)
    return clients


async def start_race(clients: list[Client], **options: Any) -> str:
    """The first client creates a match, all join and ready; returns its code once dealt."""
    host, *others = clients
    created = await host.ok("create_match", max_players=len(clients), countdown_s=0, **options)
    code: str = created["match"]["code"]
    for client in others:
        await client.ok("join_match", code=code)
    for client in clients:
        await client.ok("ready", code=code)
    for client in clients:
        await client.event("started", match=code)
    return code


async def stop_all(clients: list[Client], code: str) -> dict[str, Any]:
    """Everyone stops at once; returns the match_ended event."""
    for client in clients:
        reply = await client.act(code, "stop")
        assert reply["type"] == "action_ok", reply
    return await clients[0].event("match_ended", match=code)
