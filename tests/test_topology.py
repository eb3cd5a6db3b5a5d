"""scripts/topology end to end: PostgreSQL, Redis, two gaps-server replicas and HAProxy on
loopback ports, reached through the load balancer only, as players would."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client import Client
from tests.topologies import (
    SCRIPT,
    Topology,
    command,
    replica,
    skip_if_not_installable,
    started,
    wait_gone,
)
from tests.topologies import directory as new_directory


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    """A topology started in the background (`start`) and ended by `stop`, which must leave
    none of its processes behind."""
    with started() as running:
        yield running


@pytest.fixture
def foreground() -> Iterator[tuple[subprocess.Popen[str], Topology]]:
    """A topology run by `up` in the foreground, the way an operator runs it; the test
    ends it with SIGINT, as Ctrl-C would."""
    directory = new_directory()
    process = subprocess.Popen(
        command("up", directory), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    output = []
    for line in process.stdout:
        output.append(line)
        if line.startswith("ready: "):
            break
    else:
        process.wait()
        skip_if_not_installable("".join(output))
        pytest.fail("scripts/topology up failed:\n" + "".join(output))
    running = Topology(directory)
    yield process, running
    if process.poll() is None:
        process.kill()
        process.wait()
        subprocess.run([sys.executable, str(SCRIPT), "stop", "--dir", str(directory)])
    shutil.rmtree(directory, ignore_errors=True)


def test_the_load_balancer_answers_for_the_replicas_readiness(topology: Topology) -> None:
    status, replica, body = topology.get("/healthz")
    assert (status, body) == (200, {"status": "ok"})
    assert replica in ("replica-1", "replica-2")


async def test_a_player_registers_and_plays_a_one_player_race_to_its_end(
    topology: Topology,
) -> None:
    ana = await Client.connect(topology.url)
    try:
        await ana.register("ana")
        created = await ana.ok(
            "create_match", max_players=1, countdown_s=0, seed="AAAA-BBBB-CCCC-DDDD"
        )
        code = created["match"]["code"]
        await ana.ok("ready", code=code)
        await ana.event("started", match=code)
        for action in ("3H", "2C>4", "3C"):
            assert (await ana.act(code, action))["type"] == "action_ok"
        assert (await ana.act(code, "stop"))["type"] == "action_ok"
        await ana.event("match_ended", match=code)
    finally:
        await ana.close()
    # From whichever replica the load balancer picks: the replay is read from PostgreSQL.
    status, _, replay = await asyncio.to_thread(topology.get, f"/matches/{code}/replay")
    assert status == 200 and replay["format"] == "gaps-replay/1"


async def test_the_load_balancer_spreads_connections_over_both_replicas(
    topology: Topology,
) -> None:
    clients = [await Client.connect(topology.url) for _ in range(4)]
    try:
        replicas = [replica(client) for client in clients]
        for client in clients:
            assert (await client.ok("ping"))["type"] == "pong"
    finally:
        for client in clients:
            await client.close()
    assert sorted(replicas) == ["replica-1", "replica-1", "replica-2", "replica-2"]


async def test_stopping_a_replica_leaves_the_load_balancer_serving_through_the_other(
    foreground: tuple[subprocess.Popen[str], Topology],
) -> None:
    process, topology = foreground
    os.kill(topology.pid("server-1"), signal.SIGTERM)
    assert wait_gone([topology.pid("server-1")]) == []
    # At once, before the health checks take replica-1 out: HAProxy retries elsewhere.
    for _ in range(4):
        status, answering, _ = await asyncio.to_thread(topology.get, "/healthz")
        assert (status, answering) == (200, "replica-2")
        bob = await Client.connect(topology.url)
        try:
            assert replica(bob) == "replica-2"
            assert (await bob.ok("ping"))["type"] == "pong"
        finally:
            await bob.close()
    # Ctrl-C: every other process stops, and `up` says so.
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "server-1 exited with status 0" in output
    assert output.splitlines()[-1] == "stopped"
    assert wait_gone(topology.pids()) == []


def test_a_missing_package_is_named_and_nothing_starts(tmp_path: Path) -> None:
    """Without --install, and with nothing on the PATH, the script says what to install."""
    refused = subprocess.run(
        [sys.executable, str(SCRIPT), "up", "--dir", str(tmp_path / "topology")],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(tmp_path / "empty"), "PG_BIN": str(tmp_path / "none")},
        timeout=30,
    )
    assert refused.returncode == 1
    assert "missing: postgresql-15 redis-server haproxy." in refused.stderr
    assert "--install" in refused.stderr
    assert not (tmp_path / "topology").exists()
