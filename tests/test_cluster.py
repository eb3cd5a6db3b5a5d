"""A cluster of real ``gaps-server`` processes on one PostgreSQL and one Redis: a match's
owner killed with -9 or paused past its lease, and processes starting at once. Leases
are short here (``LEASE_ARGS``) so that take-overs come within a test's patience.

A player reaches a match through its owner (forwarding between processes is not done):
after a take-over, the player connects to the process that took the match over."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from client_cli.verify import verify
from gaps import Game
from server.storage.database import Database
from server.storage.database import database_url as sqlalchemy_url
from server.storage.models import MatchLease
from tests.client import Client
from tests.races import LONG_FIRST_MOVES
from tests.server_process import ServerProcess, back, rejoined

pytestmark = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)

LEASE_S = 2.0
RENEW_S = 0.5
#: Within this, a process dead or paused has its matches taken over.
TAKEOVER_S = LEASE_S + RENEW_S


@pytest.fixture
async def cluster(
    database_url: str, redis_url: str, tmp_path: Path
) -> AsyncIterator[Callable[[], ServerProcess]]:
    """Starts processes of one cluster, each stopped (or killed) after the test."""
    started: list[ServerProcess] = []

    def start() -> ServerProcess:
        process = ServerProcess(
            database_url,
            tmp_path / f"process-{len(started)}",
            args=["--redis-url", redis_url, "--lease-s", str(LEASE_S),
                  "--lease-renew-s", str(RENEW_S)],
        )
        process.start()
        started.append(process)
        return process

    yield start
    for process in started:
        if process.process is not None and process.process.poll() is None:
            process.process.send_signal(signal.SIGCONT)
        await process.stop()


async def running_match(owner: ServerProcess) -> tuple[Client, Client, str, Game]:
    """ana and bob in a match ``owner`` runs; bob has stopped, ana plays on."""
    ana, bob = await Client.connect(owner.url), await Client.connect(owner.url)
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2, countdown_s=0,
                         seed=str(LONG_FIRST_MOVES)))["match"]["code"]
    await bob.ok("join_match", code=code)
    await ana.ok("ready", code=code)
    await bob.ok("ready", code=code)
    started = await ana.event("started", match=code)
    await bob.act(code, "stop")
    return ana, bob, code, Game.from_layout("\n".join(started["grid"]))


async def play(client: Client, code: str, game: Game, count: int) -> list[tuple[int, str]]:
    """``count`` legal moves, each acknowledged before the next: (seq, move) of each."""
    acknowledged = []
    for _ in range(count):
        move = game.legal_moves()[0]
        seq = client.seq.get(code, 0) + 1
        reply = await client.act(code, str(move), seq=seq)
        assert reply["type"] == "action_ok", reply
        acknowledged.append((seq, str(move)))
        game.push(move)
    return acknowledged


async def test_a_killed_owners_match_is_taken_over_and_finished_with_no_action_lost(
    cluster: Callable[[], ServerProcess],
) -> None:
    owner, other = cluster(), cluster()
    ana, bob, code, game = await running_match(owner)
    acknowledged = await play(ana, code, game, 8)
    in_flight = game.legal_moves()[0]
    await ana.connection.send(json.dumps(
        {"type": "action", "id": "last", "code": code, "seq": 9, "action": str(in_flight)}
    ))
    killed_at = time.monotonic()
    owner.kill()
    token = str(ana.token)
    for client in (ana, bob):
        await client.close()

    ana = await back(other, token)
    joined = await rejoined(ana, code, timeout_s=TAKEOVER_S + 10)
    takeover_s = time.monotonic() - killed_at
    assert takeover_s < TAKEOVER_S + 5, takeover_s
    you = joined["you"]
    # Every acknowledged action is there; the one in flight at the kill may be too.
    assert you["last_seq"] in (8, 9) and joined["match"]["status"] == "running"
    last_seq, last_move = acknowledged[-1]
    again = await ana.act(code, last_move, seq=last_seq)
    assert again.get("duplicate") is True and again["seq"] == last_seq
    ana.seq[code] = you["last_seq"]
    assert (await ana.act(code, "stop"))["type"] == "action_ok"
    ended = await ana.event("match_ended", match=code)
    assert len(ended["ranking"]) == 2
    report = verify(other.replay(code))
    assert report.holds, report.discrepancies
    assert next(p for p in report.players if p.name == "ana").actions == you["last_seq"] + 1
    await ana.close()


async def test_an_owner_paused_past_its_lease_has_its_late_action_refused(
    cluster: Callable[[], ServerProcess],
) -> None:
    paused, other = cluster(), cluster()
    ana, bob, code, game = await running_match(paused)
    await play(ana, code, game, 3)
    moves = game.legal_moves()
    assert paused.process is not None
    paused.process.send_signal(signal.SIGSTOP)
    # Sent to the paused owner: read only once it resumes, long past its lease.
    late = asyncio.ensure_future(ana.send_raw(json.dumps(
        {"type": "action", "id": "late", "code": code, "seq": 4, "action": str(moves[0])}
    ), "late"))

    elsewhere = await back(other, str(ana.token))
    joined = await rejoined(elsewhere, code, timeout_s=TAKEOVER_S + 10)
    assert joined["you"]["last_seq"] == 3
    elsewhere.seq[code] = 3
    # The new owner acknowledges seq 4 with another move than the one the paused owner got.
    other_move = moves[-1] if len(moves) > 1 else moves[0]
    assert (await elsewhere.act(code, str(other_move), seq=4))["type"] == "action_ok"

    paused.process.send_signal(signal.SIGCONT)
    # Resumed, the old owner either refuses the late action (its epoch is stale), or first
    # finds its lease lost and closes the connection following the match with 1012: never
    # an acknowledgement.
    closed = asyncio.ensure_future(ana.connection.wait_closed())
    await asyncio.wait({late, closed}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    if late.done() and not isinstance(late.exception(), ConnectionError):
        reply = late.result()
        assert reply["type"] == "error", reply
        assert reply["code"] in ("storage_unavailable", "shutting_down", "no_such_match"), reply
    else:
        if late.done():  # failed for want of a reply: the connection closed
            await closed
        assert closed.done() and ana.connection.close_code == 1012
        late.cancel()
    closed.cancel()

    assert (await elsewhere.act(code, "stop"))["type"] == "action_ok"
    await elsewhere.event("match_ended", match=code)
    replay = other.replay(code)
    report = verify(replay)
    assert report.holds, report.discrepancies
    ana_actions = next(p for p in replay["players"] if p["name"] == "ana")["actions"]
    # Seq 4 stored once: the new owner's move, not the paused owner's.
    assert [(a["seq"], a["action"]) for a in ana_actions if a["seq"] == 4] == [
        (4, str(other_move))
    ]
    for client in (ana, bob, elsewhere):
        await client.close()


async def test_two_processes_starting_at_once_restore_each_unfinished_match_once(
    cluster: Callable[[], ServerProcess], database_url: str, tmp_path: Path
) -> None:
    first = cluster()
    clients = []
    for number in range(4):
        host = await Client.connect(first.url)
        await host.register(f"host{number}")
        await host.ok("create_match", max_players=2, countdown_s=0)
        clients.append(host)
    first.terminate()  # its leases are released: free for whoever comes first
    await first.exited()
    for client in clients:
        await client.close()

    processes = [ServerProcess(database_url, tmp_path / f"at-once-{n}",
                               args=["--lease-s", str(LEASE_S), "--lease-renew-s",
                                     str(RENEW_S)]) for n in range(2)]
    try:
        # Both launched before either is up (each waits for its own banner).
        launched = [asyncio.to_thread(process.start) for process in processes]
        await asyncio.gather(*launched)
        await asyncio.sleep(3 * RENEW_S)
        database = Database(sqlalchemy_url(database_url, data_dir=tmp_path))
        try:
            async with database.read() as connection:
                leases = (await connection.execute(
                    select(MatchLease.epoch, MatchLease.owner)
                )).all()
        finally:
            await database.dispose()
    finally:
        for process in processes:
            await process.stop()
    # Taken once each after the first process released them: epoch 2, never more.
    assert sorted(epoch for epoch, _ in leases) == [2, 2, 2, 2]


async def joined_when_served(client: Client, code: str, *, role: str = "player") -> dict:
    """``join_match`` again while no process serves the match (``match_unavailable``)."""
    deadline = time.monotonic() + TAKEOVER_S + 15
    while True:
        reply = await client.request("join_match", code=code, role=role)
        if reply.get("code") != "match_unavailable":
            return reply
        assert time.monotonic() < deadline, reply
        await asyncio.sleep(reply["retry_after_ms"] / 1000)


async def test_a_follower_on_a_surviving_replica_rejoins_whoever_took_the_match_over(
    cluster: Callable[[], ServerProcess],
) -> None:
    owner, survivor, third = cluster(), cluster(), cluster()
    ana, bob = await Client.connect(owner.url), await Client.connect(survivor.url)
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2, countdown_s=0,
                         seed=str(LONG_FIRST_MOVES)))["match"]["code"]
    await bob.ok("join_match", code=code)  # through the survivor: a route to the owner
    for client in (ana, bob):
        await client.ok("ready", code=code)
    started = await bob.event("started", match=code)
    game = Game.from_layout("\n".join(started["grid"]))
    await play(bob, code, game, 2)
    # The survivor sleeps through the take-over, so that the third replica takes it.
    assert survivor.process is not None
    survivor.process.send_signal(signal.SIGSTOP)
    owner.kill()
    await ana.close()
    watcher = await Client.connect(third.url)
    await watcher.register("eve")
    watching = await joined_when_served(watcher, code, role="spectator")
    assert watching["type"] == "joined", watching
    survivor.process.send_signal(signal.SIGCONT)
    # The survivor's route to the dead owner is forgotten: bob is told to reconnect.
    await asyncio.wait_for(bob.connection.wait_closed(), TAKEOVER_S + 10)
    assert bob.connection.close_code == 1012
    again = await back(survivor, str(bob.token))
    rejoined_there = await joined_when_served(again, code)
    assert rejoined_there["you"]["last_seq"] == 2
    again.seq[code] = 2
    await play(again, code, game, 1)
    back_event = await watcher.event("presence", player_id=bob.player_id, connected=True)
    assert back_event["match"] == code
    assert (await again.act(code, "stop"))["type"] == "action_ok"
    await watcher.event("player_finished", player_id=bob.player_id)
    for client in (bob, again, watcher):
        await client.close()


async def test_a_finished_match_answers_alike_on_every_replica_and_after_a_restart(
    cluster: Callable[[], ServerProcess],
) -> None:
    owner, other = cluster(), cluster()
    ana, bob = await Client.connect(owner.url), await Client.connect(other.url)
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2, countdown_s=0))["match"]["code"]
    await bob.ok("join_match", code=code)
    for client in (ana, bob):
        await client.ok("ready", code=code)
    await bob.event("started", match=code)
    for client in (ana, bob):
        await client.act(code, "stop")
    await bob.event("match_ended", match=code)

    async def answers(replica: ServerProcess) -> list[tuple[str, str]]:
        seated = await Client.connect(replica.url)  # ana again, on a new connection
        await seated.ok("hello", token=str(ana.token))
        seen = []
        for role in ("player", "spectator"):
            reply = await seated.request("join_match", code=code, role=role)
            seen.append((reply["code"], reply["status"]))
        await seated.close()
        return seen

    over = [("match_finished", "finished")] * 2
    assert await answers(owner) == over and await answers(other) == over  # while kept
    assert owner.replay(code) == other.replay(code)
    for client in (ana, bob):
        await client.close()
    await owner.stop()
    owner.start()
    assert await answers(owner) == over and await answers(other) == over  # after a restart
    assert owner.replay(code) == other.replay(code)
