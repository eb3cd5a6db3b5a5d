"""scripts/topology end to end: PostgreSQL, Redis, two gaps-server replicas and HAProxy on
loopback ports, reached through the load balancer only (TLS: wss://), as players would."""

from __future__ import annotations

import asyncio
import http.client
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.processes import kill_marked, left_after, marked_environment
from tests.topologies import (
    SCRIPT,
    START_TIMEOUT_S,
    TRUSTED,
    Topology,
    command,
    connected,
    http_get,
    replica,
    skip_if_not_installable,
    started,
    wait_gone,
)
from tests.topologies import directory as new_directory

#: How soon HAProxy must send players to a replica that answers its checks again
#: (deploy/haproxy.cfg: checked every 250 ms while down, two checks: about 0.5 s).
BACK_WITHIN_S = 2.0


def unused_ports(count: int) -> list[int]:
    """Loopback ports free now, below the ephemeral range (32768 and up) from which other
    processes' free ports come, so that none takes them before the topology binds them."""
    chosen: list[int] = []
    while len(chosen) < count:
        port = random.randrange(20_000, 30_000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        if port not in chosen:
            chosen.append(port)
    return chosen


PINNED = unused_ports(2)


@pytest.fixture(scope="module")
def topology() -> Iterator[Topology]:
    """A topology started in the background (`start`), its replicas on ports pinned, and
    ended by `stop`, which must leave none of its processes behind."""
    with started(replica_ports=PINNED) as running:
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


def test_the_replicas_listen_on_the_ports_pinned(topology: Topology) -> None:
    assert [topology.service(name)["port"] for name in topology.replicas()] == PINNED
    for port in PINNED:
        assert http_get(port, "/healthz")[0] == 200


def test_the_load_balancer_speaks_tls_only_and_asks_browsers_to_stay_on_it(
    topology: Topology,
) -> None:
    assert topology.url.startswith("wss://")
    with urllib.request.urlopen(
        f"https://127.0.0.1:{topology.port}/healthz", timeout=5, context=TRUSTED
    ) as reply:
        assert reply.headers["Strict-Transport-Security"] == "max-age=31536000"
        assert reply.version == 11  # HTTP/1.1
    # In clear, HAProxy answers no HTTP at all: the TLS handshake never came.
    plain = http.client.HTTPConnection("127.0.0.1", topology.port, timeout=5)
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        plain.request("GET", "/healthz")
        plain.getresponse()
    plain.close()
    # Nor does a client that does not trust the certificate get through.
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(
            f"https://127.0.0.1:{topology.port}/healthz", timeout=5,
            context=ssl.create_default_context(),
        )
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)


async def test_a_player_registers_and_plays_a_one_player_race_over_wss_to_its_end(
    topology: Topology,
) -> None:
    ana = await connected(topology.url)
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
    clients = [await connected(topology.url) for _ in range(4)]
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
        bob = await connected(topology.url)
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
    assert "missing: postgresql-15 redis-server haproxy openssl." in refused.stderr
    assert "--install" in refused.stderr
    assert not (tmp_path / "topology").exists()


def test_replica_ports_must_be_one_per_replica(tmp_path: Path) -> None:
    refused = subprocess.run(
        [sys.executable, str(SCRIPT), "up", "--replicas", "2", "--replica-ports", "9001",
         "--dir", str(tmp_path / "topology")],
        capture_output=True, text=True, timeout=30,
    )
    assert refused.returncode == 1
    assert "--replica-ports gives 1 ports for 2 replicas: one each" in refused.stderr


async def test_a_replica_started_again_serves_through_the_load_balancer_within_a_second(
) -> None:
    """server-1 stopped until HAProxy takes it out, then started again on its port: the
    load balancer sends players to it again within about 0.5 s of its first 200."""
    with started(replica_ports=unused_ports(2)) as topology:
        first = topology.service("server-1")
        os.kill(first["pid"], signal.SIGTERM)
        assert wait_gone([first["pid"]]) == []
        await until(lambda: topology.lb_status("replica-1").startswith("DOWN"), timeout_s=30)
        # Held open on replica-2 (the only one up): with the fewest connections, replica-1
        # is where HAProxy sends each new one, once it has it back.
        held = await connected(topology.url)
        again = restart(topology, "server-1")
        try:
            assert replica(held) == "replica-2"
            await until(lambda: ready(first["port"]), timeout_s=60)
            answering = time.monotonic()
            await until(lambda: topology.get("/healthz")[1] == "replica-1", timeout_s=30)
            back_s = time.monotonic() - answering
            print(f"\nreplica-1 served through HAProxy {back_s:.2f} s after it answered 200")
            assert back_s < BACK_WITHIN_S
            assert topology.lb_status("replica-1") == "UP"
        finally:
            await held.close()
            again.terminate()
            again.wait(timeout=30)


def ready(port: int) -> bool:
    """Whether the replica on ``port`` answers its /healthz 200 (not at all: False)."""
    try:
        return http_get(port, "/healthz")[0] == 200
    except OSError:
        return False


def restart(topology: Topology, name: str) -> subprocess.Popen[bytes]:
    """Service ``name`` started again as scripts/topology started it; the caller's to stop."""
    service = topology.service(name)
    with open(service["log"], "ab") as log:
        return subprocess.Popen(
            service["command"], stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "DATABASE_URL": topology.database_url,
                 "REDIS_URL": topology.state["redis_url"]},
        )


async def until(holds: Callable[[], bool], *, timeout_s: float) -> None:
    """Return once ``holds()`` (asked in a thread, every 20 ms), or fail at ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not await asyncio.to_thread(holds):
        assert time.monotonic() < deadline, "not within the deadline"
        await asyncio.sleep(0.02)


def test_a_pinned_port_that_is_taken_is_named_and_nothing_is_left_running() -> None:
    where = new_directory()
    environment = marked_environment()
    taken, free = unused_ports(2)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        refused = subprocess.run(
            command("up", where, replica_ports=[taken, free]),
            capture_output=True, text=True, timeout=START_TIMEOUT_S,
            env={**os.environ, **environment},
        )
    try:
        skip_if_not_installable(refused.stdout + refused.stderr)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"server-1: port {taken} is taken: choose another" in refused.stderr
        assert left_after(environment, timeout_s=10) == {}
    finally:
        kill_marked(environment)
        shutil.rmtree(where, ignore_errors=True)
