"""No process outlives the gaps-server that started it, however the server ends: its par
solvers (server/process_pool.py) and the workers of ``--workers`` (server/children.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import kill_marked, left_after, marked, marked_environment
from tests.server_process import ServerProcess, solving_par
from tests.services import free_port

#: How soon every process of a dead server must be gone (the issue's bound).
GONE_WITHIN_S = 5.0


@pytest.fixture
def environment() -> Iterator[dict[str, str]]:
    """The mark of the test's processes; any the test left are killed after it."""
    environment = marked_environment()
    yield environment
    kill_marked(environment)


async def test_a_server_killed_while_it_solves_par_leaves_no_process(
    tmp_path: Path, environment: dict[str, str]
) -> None:
    async with solving_par(tmp_path, environment) as server:
        server.kill()
        left = await asyncio.to_thread(left_after, environment, timeout_s=GONE_WITHIN_S)
        assert left == {}


async def test_a_server_stopped_while_it_solves_par_leaves_no_process(
    tmp_path: Path, environment: dict[str, str]
) -> None:
    async with solving_par(tmp_path, environment) as server:
        server.terminate()
        assert await server.exited() == 0
        assert await asyncio.to_thread(left_after, environment, timeout_s=GONE_WITHIN_S) == {}


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)  # --workers needs it
async def test_a_supervisor_of_workers_killed_leaves_no_process(
    database_url: str, redis_url: str, tmp_path: Path, environment: dict[str, str]
) -> None:
    supervisor = ServerProcess(
        database_url, tmp_path, env=environment,
        args=["--port", str(free_port()), "--workers", "2", "--redis-url", redis_url,
              "--par-workers", "1"],
    )
    supervisor.start()
    try:
        # Both workers up, each with its solver process: 2 workers and 2 solvers.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while len(marked(environment)) < 5:
            assert loop.time() < deadline, marked(environment)
            await asyncio.sleep(0.1)
        supervisor.kill()
        left = await asyncio.to_thread(left_after, environment, timeout_s=GONE_WITHIN_S)
        assert left == {}
    finally:
        await supervisor.stop()
