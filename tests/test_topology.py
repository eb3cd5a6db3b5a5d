"""scripts/topology end to end: PostgreSQL, Redis, two gaps-server replicas and HAProxy on
loopback ports, reached through the load balancer only, as players would."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client import Client

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "topology"
HEADER = "X-Gaps-Replica"
START_TIMEOUT_S = 120


class Topology:
    """What scripts/topology wrote to D/topology.json once ready."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state: dict[str, Any] = json.loads((directory / "topology.json").read_text())
        self.url: str = self.state["url"]
        self.port = int(self.url.rsplit(":", 1)[1])

    def pid(self, name: str) -> int:
        (service,) = [s for s in self.state["services"] if s["name"] == name]
        return int(service["pid"])

    def pids(self) -> list[int]:
        return [int(service["pid"]) for service in self.state["services"]]

    def get(self, path: str) -> tuple[int, str, Any]:
        """A GET through the load balancer: status, the replica that answered, JSON body."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.headers.get(HEADER, ""), json.loads(r.read())
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get(HEADER, ""), json.loads(error.read())


def _directory() -> Path:
    """A directory of the test's own that the postgres user can reach (pytest's tmp_path
    is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="gaps-test-topology-"))
    directory.chmod(0o755)
    return directory


def _command(subcommand: str, directory: Path) -> list[str]:
    command = [sys.executable, str(SCRIPT), subcommand, "--replicas", "2"]
    # Port 0: the script picks free loopback ports, again if one is taken meanwhile.
    command += ["--port", "0", "--dir", str(directory)]
    # Installs the load balancer when this runs as root and it is missing.
    return command + (["--install"] if os.geteuid() == 0 else [])


def _replica(client: Client) -> str:
    """The replica the load balancer sent ``client``'s WebSocket to."""
    response = client.connection.response
    assert response is not None
    return response.headers.get(HEADER, "")


def _skip_if_not_installable(output: str) -> None:
    if "missing:" in output or "apt-get" in output:
        pytest.skip(f"the topology's packages cannot be installed:\n{output[-1500:]}")


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _wait_gone(pids: list[int], *, timeout_s: float = 30) -> list[int]:
    """The pids still running after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if _running(pid)]


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    """A topology started in the background (`start`) and ended by `stop`, which must leave
    none of its processes behind."""
    directory = _directory()
    started = subprocess.run(
        _command("start", directory), capture_output=True, text=True, timeout=START_TIMEOUT_S
    )
    if started.returncode != 0:
        _skip_if_not_installable(started.stderr)
        pytest.fail(f"scripts/topology start failed:\n{started.stdout}{started.stderr}")
    running = Topology(directory)
    yield running
    stopped = subprocess.run(
        [sys.executable, str(SCRIPT), "stop", "--dir", str(directory)],
        capture_output=True,
        text=True,
        timeout=90,
    )
    left = _wait_gone([running.state["supervisor_pid"], *running.pids()])
    shutil.rmtree(directory, ignore_errors=True)
    assert stopped.returncode == 0 and left == [], (stopped.stdout, stopped.stderr, left)


@pytest.fixture
def foreground() -> Iterator[tuple[subprocess.Popen[str], Topology]]:
    """A topology run by `up` in the foreground, the way an operator runs it; the test
    ends it with SIGINT, as Ctrl-C would."""
    directory = _directory()
    process = subprocess.Popen(
        _command("up", directory), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    output = []
    for line in process.stdout:
        output.append(line)
        if line.startswith("ready: "):
            break
    else:
        process.wait()
        _skip_if_not_installable("".join(output))
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
        replicas = [_replica(client) for client in clients]
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
    assert _wait_gone([topology.pid("server-1")]) == []
    # At once, before the health checks take replica-1 out: HAProxy retries elsewhere.
    for _ in range(4):
        status, replica, _ = await asyncio.to_thread(topology.get, "/healthz")
        assert (status, replica) == (200, "replica-2")
        bob = await Client.connect(topology.url)
        try:
            assert _replica(bob) == "replica-2"
            assert (await bob.ok("ping"))["type"] == "pong"
        finally:
            await bob.close()
    # Ctrl-C: every other process stops, and `up` says so.
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "server-1 exited with status 0" in output
    assert output.splitlines()[-1] == "stopped"
    assert _wait_gone(topology.pids()) == []


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
