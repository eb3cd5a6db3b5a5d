"""``gaps-server`` as a process of its own, so that tests can kill it or stop it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.client import Client
from tests.processes import cpu_seconds, marked


class ServerProcess:
    """``gaps-server`` on a database, started and killed as a whole process, with
    ``args`` added to its command line (a later option overrides an earlier one), ``env``
    added to its environment, and its log (stderr) appended to ``log`` if given."""

    def __init__(
        self,
        database_url: str,
        data_dir: Path,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
    ) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        self.args = list(args)
        self.env = dict(env or {})
        self.log = log
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self) -> None:
        if self.log is None:
            self._start(subprocess.DEVNULL)
            return
        with open(self.log, "a") as log:
            self._start(log)

    def _start(self, stderr: Any) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "server", "--port", "0",
                "--database-url", self.database_url, "--data-dir", str(self.data_dir),
                "--grace-s", "60", "--countdown-s", "0", "--log-level", "WARNING",
                "--par-workers", "0",  # no solver process left behind by a kill
                *self.args,
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, "REDIS_URL": "", **self.env},
        )
        assert self.process.stdout is not None
        banner = self.process.stdout.readline()
        listening = re.search(r"ws://127\.0\.0\.1:(\d+)", banner)
        log = self.log.read_text()[-3000:] if self.log is not None else ""
        assert listening, f"the server did not start: {banner!r}\n{log}"
        self.port = int(listening.group(1))

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=20)

    def terminate(self) -> None:
        """SIGTERM: the graceful shutdown."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)

    async def exited(self, *, timeout_s: float = 30.0) -> int:
        """The exit status, once the process has exited. Waited for in a thread: the
        test's clients go on answering meanwhile, and a server shutting down waits for
        each connection's closing handshake (up to 10 s for one that cannot answer)."""
        assert self.process is not None
        return await asyncio.to_thread(self.process.wait, timeout_s)

    async def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await self.exited(timeout_s=20)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def replay(self, code: str) -> dict[str, Any]:
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.port}/matches/{code}/replay", timeout=10
        ) as reply:
            document: dict[str, Any] = json.loads(reply.read())
        return document


@pytest.fixture
async def server_process(database_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    process = ServerProcess(database_url, tmp_path)
    process.start()
    yield process
    await process.stop()


async def back(server: ServerProcess, token: str) -> Client:
    """A new connection of the player with ``token``."""
    client = await Client.connect(server.url)
    await client.ok("hello", token=token)
    return client


async def rejoined(client: Client, code: str, *, timeout_s: float = 15.0) -> dict[str, Any]:
    """``join_match``, again while the server answers ``match_unavailable``: on
    PostgreSQL a process killed with -9 still holds its leases, and the process reached
    takes the match over once they run out (--lease-s + --lease-renew-s)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        reply = await client.request("join_match", code=code)
        if reply.get("code") != "match_unavailable":
            break
        assert asyncio.get_running_loop().time() < deadline, reply
        await asyncio.sleep(reply["retry_after_ms"] / 1000)
    assert reply["type"] != "error", reply
    return reply


#: A classic deal whose solve outlasts any test (5 s of CPU leave its par a lower bound).
HARD_DEAL = "JX5N-OFBH-UCXL-H7XJ"
#: Solves that last: a match's solve runs for minutes unless its server dies.
LONG_SOLVES = ("--par-workers", "1", "--par-max-nodes", "1000000000",
               "--par-time-budget-s", "600")


@asynccontextmanager
async def solving_par(
    data_dir: Path,
    environment: dict[str, str],
    *,
    args: Sequence[str] = (),
    log: Path | None = None,
) -> AsyncIterator[ServerProcess]:
    """A gaps-server on a fresh SQLite file in ``data_dir``, with ``environment``'s mark
    (tests/processes.py) and ``args``, once its par solver is at work on a match that
    ended (on ``HARD_DEAL``: it outlasts the test). Stopped after the block if it runs."""
    server = ServerProcess(
        f"sqlite:///{data_dir / 'gaps.sqlite3'}", data_dir, args=[*LONG_SOLVES, *args],
        env=environment, log=log,
    )
    server.start()
    try:
        await _match_ended(server.url)
        await _solver_at_work(server, environment)
        yield server
    finally:
        await server.stop()


async def _match_ended(url: str) -> None:
    """A one-player match on ``HARD_DEAL``, played to its end: its par is to be solved."""
    ana = await Client.connect(url)
    try:
        await ana.register("ana")
        created = await ana.ok("create_match", max_players=1, countdown_s=0, seed=HARD_DEAL)
        code = created["match"]["code"]
        await ana.ok("ready", code=code)
        await ana.event("started", match=code)
        assert (await ana.act(code, "stop"))["type"] == "action_ok"
        await ana.event("match_ended", match=code)
    finally:
        await ana.close()


async def _solver_at_work(server: ServerProcess, environment: dict[str, str]) -> None:
    """Once a process the server started (carrying ``environment``'s mark) is busy: its
    par solver, at work on the match that ended."""
    assert server.process is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while loop.time() < deadline:
        started = set(marked(environment)) - {server.process.pid}
        if any(cpu_seconds(pid) > 0.3 for pid in started):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"no par solver at work: {marked(environment)}")
