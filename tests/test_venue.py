"""A venue behind one address (docs/operations.md, Limits): with the DEFAULT limits, a club
of 50 players behind one NAT registers at once, says hello again and creates its matches,
while one abusive client among them is still held back by its player's and its
connection's budgets, and the address's budget still bounds what nobody is known for.

The budgets run on the fake clock, which does not move: no refill helps anybody.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from websockets.asyncio.client import connect as websocket_connect

from server.app import Server
from server.config import Limits, Settings
from tests.client import Client
from tests.fake_clock import FakeClock

CLUB = 50


@pytest.fixture
async def server(settings: Settings, clock: FakeClock) -> AsyncIterator[Server]:
    """A server with the default limits, not the tests' generous ones."""
    running = Server(replace(settings, limits=Limits()), clock=clock)
    await running.start()
    yield running
    await running.close()


@pytest.fixture
async def clients(server: Server) -> AsyncIterator[list[Client]]:
    """Every client the test opens, all from 127.0.0.1; closed after it."""
    opened: list[Client] = []
    yield opened
    await asyncio.gather(*(client.close() for client in opened))


async def open_client(server: Server, opened: list[Client]) -> Client:
    client = await Client.connect(f"ws://127.0.0.1:{server.port}")
    opened.append(client)
    return client


async def test_a_club_of_50_behind_one_address_registers_says_hello_and_creates_matches(
    server: Server, clients: list[Client]
) -> None:
    newcomers = await asyncio.gather(*(open_client(server, clients) for _ in range(CLUB)))
    registered = await asyncio.gather(
        *(c.request("register", name=f"member{n}") for n, c in enumerate(newcomers))
    )
    assert [reply["type"] for reply in registered] == ["registered"] * CLUB
    # Back on new connections (a reconnection, a second device), all at once again.
    returning = await asyncio.gather(*(open_client(server, clients) for _ in range(CLUB)))
    welcomed = await asyncio.gather(
        *(c.request("hello", token=r["token"]) for c, r in zip(returning, registered, strict=True))
    )
    assert [reply["type"] for reply in welcomed] == ["welcome"] * CLUB
    created = await asyncio.gather(
        *(c.request("create_match", max_players=2) for c in returning)
    )
    assert [reply["type"] for reply in created] == ["match_created"] * CLUB
    assert server.metrics.rate_limited.total() == 0


async def test_an_abusive_member_is_held_back_by_its_own_budgets_not_the_club(
    server: Server, clients: list[Client]
) -> None:
    abuser, member = await open_client(server, clients), await open_client(server, clients)
    await abuser.register("abuser")
    await member.register("member")
    limits = server.limits
    # Costly requests: the player's burst, then refusals; the club's next member is served.
    replies = [
        (await abuser.request("rating"))["type"] for _ in range(limits.costly_request_burst + 3)
    ]
    assert replies == ["rating"] * limits.costly_request_burst + ["error"] * 3
    assert (await member.request("rating"))["type"] == "rating"
    assert server.metrics.rate_limited["costly_per_player"] == 3
    assert server.metrics.rate_limited["costly_per_address"] == 0
    # A burst of frames past the connection's budget (of which its register and its
    # ratings took some): refused on that connection only.
    spent = 1 + limits.costly_request_burst + 3
    burst = limits.request_burst + 5
    pings = await asyncio.gather(
        *(abuser.send_raw(json.dumps({"type": "ping", "id": n}), n) for n in range(burst))
    )
    refused = [reply for reply in pings if reply.get("code") == "rate_limited"]
    assert len(refused) == burst - (limits.request_burst - spent)
    assert server.metrics.rate_limited["requests_per_connection"] == len(refused)
    assert (await member.request("ping"))["type"] == "pong"


async def test_the_address_still_bounds_requests_made_before_any_player_is_known(
    server: Server,
) -> None:
    """Anonymous costly requests (hello with a wrong token, register) spend the address's
    budget alone: past it they are refused, whoever sends them."""
    limits = server.limits
    sent = limits.costly_request_burst_per_ip + 10
    per_connection = limits.request_burst // 2
    connections = [
        await websocket_connect(f"ws://127.0.0.1:{server.port}")
        for _ in range(-(-sent // per_connection))
    ]
    codes: list[str] = []
    try:
        for number in range(sent):
            connection = connections[number // per_connection]
            await connection.send(json.dumps({"type": "hello", "id": number, "token": "x" * 43}))
            codes.append(json.loads(await connection.recv())["code"])
    finally:
        for connection in connections:
            await connection.close()
    assert codes.count("bad_token") == limits.costly_request_burst_per_ip
    assert codes.count("rate_limited") == 10
    assert server.metrics.rate_limited["costly_per_address"] == 10
