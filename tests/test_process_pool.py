"""server.process_pool: jobs run in child processes that end with the pool (and with the
server: tests/test_orphans.py)."""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Iterator
from concurrent.futures import BrokenExecutor, CancelledError, Future
from typing import Any

import pytest

from server.process_pool import ProcessPool
from tests.processes import running


@pytest.fixture
def pool() -> Iterator[ProcessPool]:
    made = ProcessPool(1)
    yield made
    made.shutdown()


def under_way(future: Future[Any]) -> None:
    """Wait until ``future``'s job has been handed to a process."""
    deadline = time.monotonic() + 30
    while not future.running():
        assert time.monotonic() < deadline, future
        time.sleep(0.01)


def test_a_job_runs_in_a_child_process_and_gives_its_result(pool: ProcessPool) -> None:
    assert pool.submit(pow, 2, 10).result(timeout=30) == 1024
    child = pool.submit(os.getppid).result(timeout=30)
    assert child == os.getpid()


def test_a_jobs_exception_is_raised_by_its_future(pool: ProcessPool) -> None:
    with pytest.raises(ValueError, match="invalid literal"):
        pool.submit(int, "twelve").result(timeout=30)
    assert pool.submit(int, "12").result(timeout=30) == 12


def test_what_a_job_prints_does_not_reach_the_replies(pool: ProcessPool) -> None:
    assert pool.submit(print, "not a reply").result(timeout=30) is None
    assert pool.submit(pow, 3, 2).result(timeout=30) == 9


def test_a_job_or_an_outcome_that_does_not_pickle_fails_alone(pool: ProcessPool) -> None:
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pool.submit(lambda: 1).result(timeout=30)
    with pytest.raises(RuntimeError, match="does not pickle"):
        pool.submit(threading.Lock).result(timeout=30)
    assert pool.submit(pow, 2, 3).result(timeout=30) == 8


def test_a_child_that_dies_breaks_the_pool(pool: ProcessPool) -> None:
    child = pool.submit(os.getpid).result(timeout=30)
    sleeping = pool.submit(time.sleep, 600)
    waiting = pool.submit(pow, 2, 2)
    under_way(sleeping)
    os.kill(child, 9)
    with pytest.raises(BrokenExecutor, match=f"process {child} exited with status -9"):
        sleeping.result(timeout=30)
    with pytest.raises(BrokenExecutor):
        waiting.result(timeout=30)
    with pytest.raises(BrokenExecutor, match="a process of the pool died"):
        pool.submit(pow, 2, 2)


def test_shutdown_gives_up_the_job_under_way_and_ends_the_children() -> None:
    pool = ProcessPool(2)
    children = {pool.submit(os.getpid).result(timeout=30) for _ in range(4)}
    spinning = pool.submit(sum, range(10**12))
    pending = [pool.submit(time.sleep, 600) for _ in range(3)]
    under_way(spinning)
    pool.shutdown()
    assert not any(running(child) for child in children)
    with pytest.raises(BrokenExecutor, match="shut down"):
        spinning.result(timeout=0)
    for future in pending:
        if future.cancelled():
            continue
        # The second child took one before the shutdown: given up too.
        with pytest.raises(BrokenExecutor, match="shut down"):
            future.result(timeout=0)
    assert sum(future.cancelled() for future in pending) >= 2
    with pytest.raises(BrokenExecutor, match="shut down"):
        pool.submit(pow, 2, 2)


def test_a_cancelled_job_never_runs(pool: ProcessPool) -> None:
    blocking = pool.submit(time.sleep, 0.5)
    cancelled = pool.submit(os.getpid)
    assert cancelled.cancel()
    assert blocking.result(timeout=30) is None
    with pytest.raises(CancelledError):
        cancelled.result(timeout=0)


def test_the_children_run_at_the_niceness_asked() -> None:
    pool = ProcessPool(1, niceness=5)
    try:
        # os.nice(0) reads the niceness without changing it.
        assert pool.submit(os.nice, 0).result(timeout=30) == min(os.nice(0) + 5, 19)
    finally:
        pool.shutdown()


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="1 worker or more, not 0"):
        ProcessPool(0)
