"""A graceful shutdown (SIGTERM) answers or refuses every request it took, closes every
connection with "going away", stores every acknowledged action and no refused one, and
leaves every match to be restored at the next start."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from gaps import Game
from tests.client import Client
from tests.server_process import ServerProcess, back

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

#: The tests send as fast as they can: no rate limit may answer in the shutdown's place.
UNLIMITED = ("--requests-per-s", "100000", "--request-burst", "100000")

#: Actions each player sends back to back, without waiting for their replies.
PIPELINED = 400


@pytest.fixture
async def server_process(database_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    process = ServerProcess(database_url, tmp_path, args=UNLIMITED)
    process.start()
    yield process
    await process.stop()


async def race(server: ServerProcess, names: tuple[str, str]) -> tuple[list[Client], str, Game]:
    """A running 2-player race: its clients, its code and its deal."""
    host, guest = await Client.connect(server.url), await Client.connect(server.url)
    await host.register(names[0])
    await guest.register(names[1])
    code = (await host.ok("create_match", max_players=2, countdown_s=0))["match"]["code"]
    await guest.ok("join_match", code=code)
    await host.ok("ready", code=code)
    await guest.ok("ready", code=code)
    started = await host.event("started", match=code)
    return [host, guest], code, Game.from_layout("\n".join(started["grid"]))


async def pipeline(client: Client, code: str, game: Game) -> dict[int, dict[str, Any]]:
    """Send legal actions one after the other without waiting (the server must take them
    in order); every reply, by seq, once the connection is closed."""
    replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
    loop = asyncio.get_running_loop()
    game = game.copy()
    for seq in range(1, PIPELINED + 1):
        moves = game.legal_moves()
        action = moves[0] if moves else None
        if action is None:
            break
        game.push(action)
        replies[seq] = loop.create_future()
        client._replies[f"a{seq}"] = replies[seq]
        frame = json.dumps(
            {"type": "action", "id": f"a{seq}", "code": code, "seq": seq, "action": str(action)}
        )
        try:
            await client.connection.send(frame)
        except Exception:
            break
        await asyncio.sleep(0.002)
    await client.connection.wait_closed()
    await asyncio.wait([client._reader])  # every reply read; the unanswered ones failed
    return {
        seq: future.result()
        for seq, future in replies.items()
        if future.done() and future.exception() is None
    }


async def test_sigterm_answers_or_refuses_every_request_and_loses_no_acknowledged_action(
    server_process: ServerProcess,
) -> None:
    races = [await race(server_process, (f"host{i}", f"guest{i}")) for i in range(3)]
    players = [(client, code, game) for clients, code, game in races for client in clients]
    tokens = [str(client.token) for client, _, _ in players]
    sending = [asyncio.create_task(pipeline(client, code, game)) for client, code, game in players]
    await asyncio.sleep(0.3)
    server_process.terminate()
    answered = await asyncio.wait_for(asyncio.gather(*sending), 30)
    assert server_process.process is not None
    assert await server_process.exited() == 0

    acknowledged: list[int] = []
    for (client, _, _), replies in zip(players, answered, strict=True):
        assert client.connection.close_code == 1001
        outcomes = [
            reply["type"] if reply["type"] != "error" else reply["code"]
            for _, reply in sorted(replies.items())
        ]
        # Nothing taken is left unanswered: the answered seqs are the first ones, the
        # acknowledged ones first, then only refusals (what came after the close is unread).
        assert sorted(replies) == list(range(1, len(replies) + 1))
        accepted = outcomes.count("action_ok")
        assert outcomes == ["action_ok"] * accepted + ["shutting_down"] * (len(outcomes) - accepted)
        acknowledged.append(accepted)
    assert sum(acknowledged) > 0
    for client, _, _ in players:
        await client.close()

    server_process.start()
    for (_, code, _), token, count in zip(players, tokens, acknowledged, strict=True):
        client = await back(server_process, token)
        joined = await client.ok("join_match", code=code)
        assert joined["match"]["status"] == "running"
        assert joined["you"]["last_seq"] == count
        await client.close()


async def test_a_request_after_the_shutdown_began_is_refused_as_shutting_down(
    server_process: ServerProcess,
) -> None:
    (host, guest), code, _ = await race(server_process, ("ana", "bob"))
    server_process.terminate()
    outcomes = []
    while True:
        try:
            reply = await host.request("ping")
        except Exception:  # the connection closed: the request was never read
            break
        outcomes.append(reply["type"] if reply["type"] != "error" else reply["code"])
    assert host.connection.close_code == 1001
    assert server_process.process is not None
    assert await server_process.exited() == 0
    # Answered until the shutdown began, refused from then on until the close.
    assert "shutting_down" in outcomes
    first_refused = outcomes.index("shutting_down")
    assert set(outcomes[:first_refused]) <= {"pong"}
    assert set(outcomes[first_refused:]) == {"shutting_down"}
    for client in (host, guest):
        await client.close()
