"""Faults on the real topology (scripts/topology: PostgreSQL, Redis, two gaps-server replicas
and HAProxy), reached through the load balancer only, as players would: the owner of a
running match killed with -9, paused past its lease then resumed, and Redis restarted
mid-match. Leases are short here (``LEASE_ARGS``) so that take-overs come within a test's
patience.

Each test checks the same invariant at the end: every action that any process
acknowledged is in the replay with the same seq and action, each seq once, and the
replay verifies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from client_cli.verify import verify
from gaps import Game
from server.storage.database import Database
from server.storage.database import database_url as sqlalchemy_url
from server.storage.models import MatchLease
from tests.client import Client
from tests.races import LONG_FIRST_MOVES
from tests.topologies import Topology, connected, http_get, replica, started, wait_gone

LEASE_S = 2.0
RENEW_S = 0.5
LEASE_ARGS = ["--lease-s", str(LEASE_S), "--lease-renew-s", str(RENEW_S)]
#: Within this, a process dead or paused has its matches taken over.
TAKEOVER_S = LEASE_S + RENEW_S
#: How long a test waits for what should come within a take-over, on a busy machine.
PATIENCE_S = TAKEOVER_S + 15


@pytest.fixture
def topology() -> Iterator[Topology]:
    """A topology of the test's own: each test breaks a part of it."""
    with started(server_args=LEASE_ARGS) as running:
        yield running


async def until(condition: Callable[[], Any], *, timeout_s: float, what: str) -> Any:
    """``condition()`` once true, polled until ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not (result := condition()):
        assert loop.time() < deadline, f"not within {timeout_s} s: {what}"
        await asyncio.sleep(0.05)
    return result


class Player:
    """A player reaching a match through the load balancer. ``acknowledged`` keeps every
    ``action_ok`` it got, from whichever process: seq -> action."""

    def __init__(self, topology: Topology, name: str) -> None:
        self.topology = topology
        self.name = name
        self.client: Client | None = None
        self.token = ""
        self.acknowledged: dict[int, str] = {}
        self.game: Game | None = None

    @property
    def connection(self) -> Client:
        assert self.client is not None
        return self.client

    async def connect(self, *, avoid: str = "") -> str:
        """A new connection (on another replica than ``avoid`` if the load balancer
        gives one within a few tries); the replica it reached."""
        for _ in range(4):
            client = await connected(self.topology.url, timeout_s=PATIENCE_S)
            if replica(client) != avoid:
                break
            await client.close()
        self.client = client
        if self.token:
            await client.ok("hello", token=self.token)
        else:
            self.token = str((await client.register(self.name))["token"])
        return replica(client)

    async def rejoin(self, code: str) -> dict[str, Any]:
        """``join_match`` on a new connection, again while it answers
        ``match_unavailable`` (the match's lease has not run out yet)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PATIENCE_S
        await self.connect()
        while True:
            reply = await self.connection.request("join_match", code=code)
            if reply.get("code") != "match_unavailable":
                break
            assert loop.time() < deadline, reply
            await asyncio.sleep(reply["retry_after_ms"] / 1000)
        assert reply["type"] != "error", reply
        self.connection.seq[code] = reply["you"]["last_seq"]
        return reply

    def record(self, reply: dict[str, Any]) -> None:
        if reply.get("type") != "action_ok":
            return
        seq, action = reply["seq"], reply["action"]
        assert self.acknowledged.setdefault(seq, action) == action, (
            f"{self.name}'s seq {seq} acknowledged twice: {self.acknowledged[seq]} then {action}"
        )

    async def act(self, code: str, action: str) -> dict[str, Any]:
        reply = await self.connection.act(code, action)
        self.record(reply)
        return reply

    async def play(self, code: str, count: int) -> None:
        """``count`` legal moves, each acknowledged before the next."""
        assert self.game is not None
        for _ in range(count):
            move = self.game.legal_moves()[0]
            reply = await self.act(code, str(move))
            assert reply["type"] == "action_ok", reply
            self.game.push(move)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()


async def match_of(topology: Topology) -> tuple[Player, Player, str, int]:
    """ana and bob in a running match that ana created (so ana's replica owns it); bob
    on the other replica if the load balancer gives it, so that his commands are
    forwarded to the owner and the match's events reach him from another process."""
    ana, bob = Player(topology, "ana"), Player(topology, "bob")
    where = await ana.connect()
    await bob.connect(avoid=where)
    created = await ana.connection.ok(
        "create_match", max_players=2, countdown_s=0, seed=str(LONG_FIRST_MOVES)
    )
    code, match_id = created["match"]["code"], created["match"]["id"]
    await bob.connection.ok("join_match", code=code)
    await ana.connection.ok("ready", code=code)
    await bob.connection.ok("ready", code=code)
    for player in (ana, bob):
        dealt = await player.connection.event("started", match=code)
        player.game = Game.from_layout("\n".join(dealt["grid"]))
    return ana, bob, code, match_id


async def owner_pid(topology: Topology, match_id: int) -> int:
    """The pid of the replica that holds the match's lease (server.storage.leases names
    an owner host:pid:random)."""
    database = Database(sqlalchemy_url(topology.database_url, data_dir=topology.directory))
    try:
        async with database.read() as connection:
            owner = (await connection.execute(
                select(MatchLease.owner).where(MatchLease.match_id == match_id)
            )).scalar_one()
    finally:
        await database.dispose()
    pid = int(owner.split(":")[1])
    assert pid in [topology.pid(name) for name in topology.replicas()], owner
    return pid


def replica_name(topology: Topology, pid: int) -> str:
    """The load balancer's name of the replica with ``pid``: server-N is replica-N."""
    (name,) = [name for name in topology.replicas() if topology.pid(name) == pid]
    return name.replace("server-", "replica-")


def replay(topology: Topology, code: str) -> dict[str, Any]:
    status, _, document = http_get(topology.port, f"/matches/{code}/replay")
    assert status == 200, document
    return document  # type: ignore[no-any-return]


def assert_every_acknowledgement_stands(
    topology: Topology, code: str, players: list[Player]
) -> None:
    """The replay verifies and holds each player's acknowledged actions, each seq once."""
    document = replay(topology, code)
    report = verify(document)
    assert report.holds, report.discrepancies
    for player in players:
        (recorded,) = [p for p in document["players"] if p["name"] == player.name]
        seqs = [action["seq"] for action in recorded["actions"]]
        assert len(seqs) == len(set(seqs)), seqs
        stored = {action["seq"]: action["action"] for action in recorded["actions"]}
        assert {seq: stored.get(seq) for seq in player.acknowledged} == player.acknowledged


async def answer(client: Client, reply: asyncio.Future[dict[str, Any]]) -> dict[str, Any] | None:
    """The reply, or None if the connection closed first (the action then unanswered)."""
    closed = asyncio.ensure_future(client.connection.wait_closed())
    await asyncio.wait({reply, closed}, timeout=PATIENCE_S, return_when=asyncio.FIRST_COMPLETED)
    closed.cancel()
    if reply.done() and not isinstance(reply.exception(), ConnectionError):
        return reply.result()
    assert client.connection.close_code is not None, "neither an answer nor a close"
    return None


def send(client: Client, code: str, seq: int, action: str) -> asyncio.Future[dict[str, Any]]:
    """An action sent without waiting for its answer."""
    frame = json.dumps({"type": "action", "id": f"seq{seq}", "code": code, "seq": seq,
                        "action": action})
    return asyncio.ensure_future(client.send_raw(frame, f"seq{seq}"))


async def test_a_killed_owners_players_finish_on_the_other_replica_with_no_action_lost(
    topology: Topology,
) -> None:
    ana, bob, code, match_id = await match_of(topology)
    for _ in range(4):
        await ana.play(code, 1)
        await bob.play(code, 1)
    assert ana.game is not None
    in_flight = str(ana.game.legal_moves()[0])
    reply = send(ana.connection, code, 5, in_flight)
    owner = await owner_pid(topology, match_id)
    owner_replica = replica_name(topology, owner)
    killed_at = time.monotonic()
    os.kill(owner, signal.SIGKILL)
    assert wait_gone([owner]) == []

    # Every connection closes: the owner's as it dies, the other replica's with 1012
    # (reconnect) once that replica has taken the match over.
    for player in (ana, bob):
        where = replica(player.connection)
        await asyncio.wait_for(player.connection.connection.wait_closed(), PATIENCE_S)
        if where != owner_replica:
            assert player.connection.connection.close_code == 1012, where
    ana.record(await answer(ana.connection, reply) or {})
    for player in (ana, bob):
        await player.close()

    joined = await ana.rejoin(code)
    assert joined["match"]["status"] == "running"
    last_seq = joined["you"]["last_seq"]
    # Every acknowledged action is there; the one in flight at the kill may be too.
    assert last_seq in (4, 5) and (last_seq == 5) >= (5 in ana.acknowledged)
    if last_seq == 5:
        ana.game.push(next(m for m in ana.game.legal_moves() if str(m) == in_flight))
    again = await ana.connection.act(code, ana.acknowledged[4], seq=4)
    assert again.get("duplicate") is True and again["seq"] == 4, again
    await ana.play(code, 1)
    takeover_s = time.monotonic() - killed_at
    # For docs/benchmarks.md (pytest -s shows it): from the kill to ana acting again.
    print(f"takeover: {takeover_s:.2f} s after kill -9 (--lease-s {LEASE_S:g})")
    assert takeover_s < TAKEOVER_S + 5, takeover_s
    assert replica(ana.connection) != owner_replica

    assert (await bob.rejoin(code))["you"]["last_seq"] == 4
    await bob.play(code, 2)
    for player in (ana, bob):
        assert (await player.act(code, "stop"))["type"] == "action_ok"
    ended = await ana.connection.event("match_ended", match=code)
    assert len(ended["ranking"]) == 2
    assert_every_acknowledgement_stands(topology, code, [ana, bob])
    for player in (ana, bob):
        await player.close()


async def test_an_owner_paused_past_its_lease_acknowledges_nothing_twice(
    topology: Topology,
) -> None:
    ana, bob, code, match_id = await match_of(topology)
    assert (await bob.act(code, "stop"))["type"] == "action_ok"
    await ana.play(code, 3)
    assert ana.game is not None
    moves = [str(move) for move in ana.game.legal_moves()]
    owner = await owner_pid(topology, match_id)
    paused = ana.connection
    # In flight as the owner stops: stored and answered before, or not at all.
    before = send(paused, code, 4, moves[0])
    os.kill(owner, signal.SIGSTOP)
    try:
        # Read by the paused owner only once it resumes, long past its lease.
        late = send(paused, code, 5, moves[-1])
        joined = await ana.rejoin(code)
        last_seq = joined["you"]["last_seq"]
        assert last_seq in (3, 4)
        if last_seq == 4:
            ana.game.push(next(m for m in ana.game.legal_moves() if str(m) == moves[0]))
        # The new owner acknowledges seq 4 and 5 (or 5 and 6) with its own moves.
        await ana.play(code, 2)
    finally:
        os.kill(owner, signal.SIGCONT)
    ana.record(await answer(paused, before) or {})
    late_answer = await answer(paused, late)
    ana.record(late_answer or {})
    assert late_answer is None or late_answer["type"] == "error", late_answer

    assert (await ana.act(code, "stop"))["type"] == "action_ok"
    await ana.connection.event("match_ended", match=code)
    assert_every_acknowledgement_stands(topology, code, [ana])
    await paused.close()
    for player in (ana, bob):
        await player.close()


def stop_redis(topology: Topology) -> None:
    """Redis stopped (SIGTERM) and gone."""
    pid = topology.pid("redis")
    os.kill(pid, signal.SIGTERM)
    assert wait_gone([pid]) == []


def start_redis(topology: Topology) -> subprocess.Popen[bytes]:
    """Redis started again on its port, as scripts/topology starts it (redis-server
    rewrites its process title: /proc does not keep its command line); the new one is
    the caller's to stop."""
    port = topology.service("redis")["port"]
    command = [
        "redis-server", "--bind", "127.0.0.1", "--port", str(port),
        "--dir", str(topology.directory / "redis"), "--save", "", "--appendonly", "no",
    ]
    log = Path(topology.service("redis")["log"])
    with open(log, "ab") as output:
        return subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
        )


def progress_seqs(client: Client, code: str, player_id: int | None) -> list[int]:
    return [
        event["seq"] for event in client.events
        if event.get("match") == code and event["event"] == "progress"
        and event.get("player_id") == player_id
    ]


async def test_a_match_goes_on_across_a_redis_restart_and_missed_events_are_resynced(
    topology: Topology,
) -> None:
    ana, bob, code, _ = await match_of(topology)
    await ana.play(code, 2)
    seen = await until(lambda: progress_seqs(bob.connection, code, ana.connection.player_id)
                       [1:], timeout_s=PATIENCE_S, what="bob sees ana's two moves")
    last_seen = max(event["seq"] for event in bob.connection.events if "seq" in event)
    assert seen[-1] == last_seen

    stop_redis(topology)
    # Acknowledged while Redis is down: stored, their events missed.
    await ana.play(code, 3)
    redis = start_redis(topology)
    try:
        ports = [topology.service(name)["port"] for name in topology.replicas()]
        await until(
            lambda: all(http_get(port, "/healthz")[0] == 200 for port in ports),
            timeout_s=PATIENCE_S, what="every replica's broker back",
        )
        # Sent until one of its events reaches bob: his broker may subscribe again a
        # little after it answers.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PATIENCE_S
        while not [e for e in bob.connection.events if e.get("seq", 0) > last_seen]:
            assert loop.time() < deadline, "no event reached bob after Redis came back"
            await ana.play(code, 1)
            await asyncio.sleep(0.2)
        arrived = min(e["seq"] for e in bob.connection.events if e.get("seq", 0) > last_seen)
        # A gap in seq: bob missed the events of the moves made while Redis was down.
        assert arrived > last_seen + 1
        caught_up = await bob.connection.ok("resync", code=code, since=last_seen)
        assert caught_up["type"] == "events", caught_up
        resynced = [event["seq"] for event in caught_up["events"]]
        assert resynced[: arrived - last_seen - 1] == list(range(last_seen + 1, arrived))
        missed = [e for e in caught_up["events"] if e["seq"] < arrived]
        assert [e["event"] for e in missed] == ["progress"] * len(missed)
        # The three moves made while Redis was down, and any made before bob's broker
        # was subscribed again.
        assert len(missed) >= 3

        assert (await ana.act(code, "stop"))["type"] == "action_ok"
        assert (await bob.act(code, "stop"))["type"] == "action_ok"
        await bob.connection.event("match_ended", match=code)
        assert_every_acknowledgement_stands(topology, code, [ana, bob])
    finally:
        for player in (ana, bob):
            await player.close()
        redis.terminate()
        redis.wait(timeout=30)
