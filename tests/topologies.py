"""scripts/topology started and stopped by tests: its state, its processes, and the player
connections that reach it through its load balancer, over TLS (``wss://``, ``https://``)
trusting the topology's self-signed certificate."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.client import Client
from tests.processes import kill_marked, left_after, marked_environment, running

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "topology"
HEADER = "X-Gaps-Replica"
START_TIMEOUT_S = 120
#: Trusts the certificates of the topologies this session started, besides the system's.
TRUSTED = ssl.create_default_context()
#: The load balancers' ports of those topologies: they speak TLS only.
_TLS_PORTS: set[int] = set()


class Topology:
    """What scripts/topology wrote to D/topology.json once ready."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state: dict[str, Any] = json.loads((directory / "topology.json").read_text())
        self.url: str = self.state["url"]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.database_url: str = self.state["database_url"]
        TRUSTED.load_verify_locations(self.state["certificate"])
        _TLS_PORTS.add(self.port)

    def service(self, name: str) -> dict[str, Any]:
        (service,) = [s for s in self.state["services"] if s["name"] == name]
        return service  # type: ignore[no-any-return]

    def pid(self, name: str) -> int:
        return int(self.service(name)["pid"])

    def pids(self) -> list[int]:
        return [int(service["pid"]) for service in self.state["services"]]

    def replicas(self) -> list[str]:
        """The names of the gaps-server services: server-1, server-2..."""
        return [s["name"] for s in self.state["services"] if s["name"].startswith("server-")]

    def get(self, path: str) -> tuple[int, str, Any]:
        """A GET through the load balancer: status, the replica that answered, JSON body."""
        return http_get(self.port, path)

    def lb_status(self, replica: str) -> str:
        """What HAProxy says of ``replica`` (replica-1...): UP, DOWN, or on its way
        ("DOWN 1/2": one check of the two that bring it back passed)."""
        with socket.socket(socket.AF_UNIX) as connection:
            connection.connect(self.state["lb_socket"])
            connection.sendall(b"show stat\n")
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        rows = csv.DictReader(answer.decode().lstrip("# ").splitlines())
        (status,) = [row["status"] for row in rows
                     if row["pxname"] == "replicas" and row["svname"] == replica]
        return status


def http_get(port: int, path: str) -> tuple[int, str, Any]:
    """A GET on loopback ``port`` (over TLS if it is a load balancer's): status, the
    replica header (if any), JSON body."""
    scheme, context = ("https", TRUSTED) if port in _TLS_PORTS else ("http", None)
    try:
        with urllib.request.urlopen(
            f"{scheme}://127.0.0.1:{port}{path}", timeout=5, context=context
        ) as reply:
            return reply.status, reply.headers.get(HEADER, ""), json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get(HEADER, ""), json.loads(error.read())


def directory() -> Path:
    """A directory of the test's own that the postgres user can reach (pytest's tmp_path
    is private to root)."""
    made = Path(tempfile.mkdtemp(prefix="gaps-test-topology-"))
    made.chmod(0o755)
    return made


def command(
    subcommand: str,
    where: Path,
    *,
    replicas: int = 2,
    replica_ports: Sequence[int] = (),
    server_args: Sequence[str] = (),
) -> list[str]:
    line = [sys.executable, str(SCRIPT), subcommand, "--replicas", str(replicas)]
    # Port 0: the script picks free loopback ports, again if one is taken meanwhile.
    line += ["--port", "0", "--dir", str(where)]
    if replica_ports:
        line += ["--replica-ports", ",".join(map(str, replica_ports))]
    # Installs the load balancer when this runs as root and it is missing.
    line += ["--install"] if os.geteuid() == 0 else []
    return line + (["--", *server_args] if server_args else [])


def skip_if_not_installable(output: str) -> None:
    if "missing:" in output or "apt-get" in output:
        pytest.skip(f"the topology's packages cannot be installed:\n{output[-1500:]}")


def wait_gone(pids: list[int], *, timeout_s: float = 30) -> list[int]:
    """The pids still running after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if running(pid)]


@contextmanager
def started(
    *, replicas: int = 2, replica_ports: Sequence[int] = (), server_args: Sequence[str] = ()
) -> Iterator[Topology]:
    """A topology started in the background (`start`) and ended by `stop`, which must leave
    none of its processes behind: none of those it started (the replicas' par solvers and
    PostgreSQL's backends included), found by a mark in their environment."""
    where = directory()
    environment = marked_environment()
    done = subprocess.run(
        command(
            "start", where, replicas=replicas, replica_ports=replica_ports,
            server_args=server_args,
        ),
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        env={**os.environ, **environment},
    )
    if done.returncode != 0:
        skip_if_not_installable(done.stderr)
        pytest.fail(f"scripts/topology start failed:\n{done.stdout}{done.stderr}")
    topology = Topology(where)
    try:
        yield topology
    finally:
        stopped = subprocess.run(
            [sys.executable, str(SCRIPT), "stop", "--dir", str(where)],
            capture_output=True,
            text=True,
            timeout=90,
        )
        left = wait_gone([topology.state["supervisor_pid"], *topology.pids()])
        left_marked = left_after(environment, timeout_s=10)
        kill_marked(environment)
        shutil.rmtree(where, ignore_errors=True)
    assert stopped.returncode == 0 and left == [], (stopped.stdout, stopped.stderr, left)
    assert left_marked == {}


def replica(client: Client) -> str:
    """The replica the load balancer sent ``client``'s WebSocket to."""
    response = client.connection.response
    assert response is not None
    return response.headers.get(HEADER, "")


async def connected(url: str, *, timeout_s: float = 15.0, open_timeout_s: float = 2.0) -> Client:
    """A connection through the load balancer, tried again until ``timeout_s``: a replica
    that died or is paused may still be picked before the health checks take it out (a
    paused one accepts the TCP connection and never answers, hence ``open_timeout_s``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        try:
            secure = TRUSTED if url.startswith("wss:") else None
            return Client(await connect(url, open_timeout=open_timeout_s, ssl=secure))
        except (OSError, TimeoutError, InvalidStatus):
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.1)
