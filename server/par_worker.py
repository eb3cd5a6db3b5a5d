"""The par worker: the par of every finished match, solved by a pool of processes.

When a match ends, the lobby's end listener queues its id; a few asyncio tasks take ids
from the queue and hand each deal to a pool of processes (server/process_pool.py:
``gaps.par.par`` with the worker's budgets), so that a long solve neither blocks the event
loop nor delays the end of the match; the processes end with the server, however it
ends. The result is stored with the match (``Matches.save_par``): its score, and whether
it is exact or only a lower bound (the budget ran out: shown as "unknown").

Par is never stored below a score a player recorded in the match: that score was reached
by a real line, so it is a lower bound too. A match whose par is not stored (the server
stopped, the database failed) stays unsolved in the database, and ``start`` queues every
such match again: nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor
from functools import partial
from typing import TYPE_CHECKING, Final, Protocol

from gaps.par import par
from gaps.seed import Seed
from server.process_pool import ProcessPool

if TYPE_CHECKING:  # a solving process imports this module: it needs none of the storage
    from server.storage.matches import Matches, Unsolved

log = logging.getLogger("gaps.server.par")

#: Default budgets of one match's solve: nodes over the deal and all its redeals, seconds.
PAR_MAX_NODES: Final = 2_000_000
PAR_TIME_BUDGET_S: Final = 10.0
#: The solving processes' niceness (19 is the lowest priority): par may wait, moves may
#: not. A solve's time budget is CPU time, so at a low priority it takes longer on a busy
#: machine but searches as far.
PAR_NICENESS: Final = 19
#: About the most memory one solve's tables may take.
PAR_MAX_MEMORY_MB: Final = 200.0


class Solve(Protocol):
    """Computes (score, exact) of a deal; run in a worker process, so it must pickle."""

    def __call__(
        self, seed: bytes, ruleset: str, *, max_nodes: int, time_budget_s: float,
        max_memory_mb: float,
    ) -> tuple[int, bool]: ...


def solve_par(
    seed: bytes, ruleset: str, *, max_nodes: int, time_budget_s: float, max_memory_mb: float
) -> tuple[int, bool]:
    """(score, exact) of the par of the deal of ``seed`` under ``ruleset``."""
    found = par(
        Seed(seed), ruleset, max_nodes=max_nodes, time_budget_s=time_budget_s,
        max_memory_mb=max_memory_mb,
        # CPU time, not wall time: at the lowest priority on a busy machine a solve waits
        # for the CPU, and it should still get its whole budget of work.
        clock=time.process_time,
    )
    return found.score, found.exact


class _Ended(Protocol):
    """What the end listener reads of a match: its id."""

    @property
    def id(self) -> int: ...


class ParWorker:
    """Solves the par of finished matches in ``workers`` processes and stores it.

    ``workers`` 0 turns par off: nothing is queued and no process is started. Each solve
    gets ``par_max_nodes`` positions, ``par_time_budget_s`` seconds and about
    ``par_max_memory_mb`` MB of tables; ``solve`` and ``executor`` replace the solver and
    the process pool (tests).
    """

    def __init__(
        self,
        matches: Matches,
        *,
        workers: int = 1,
        par_max_nodes: int = PAR_MAX_NODES,
        par_time_budget_s: float = PAR_TIME_BUDGET_S,
        par_max_memory_mb: float = PAR_MAX_MEMORY_MB,
        solve: Solve = solve_par,
        executor: Callable[[int], Executor] | None = None,
    ) -> None:
        if workers < 0:
            raise ValueError(f"par workers must be 0 or more, not {workers}")
        self._matches = matches
        self._workers = workers
        self._solve = partial(
            solve, max_nodes=par_max_nodes, time_budget_s=par_time_budget_s,
            max_memory_mb=par_max_memory_mb,
        )
        self._new_executor = executor or _process_pool
        self._executor: Executor | None = None
        self._queue: asyncio.Queue[int] = asyncio.Queue()
        self._queued: set[int] = set()
        self._tasks: list[asyncio.Task[None]] = []
        #: How many matches had their par stored, and how many solves failed (the
        #: match stays unsolved until the next start): ``server.metrics`` shows them.
        self.stored = 0
        self.failed = 0

    @property
    def enabled(self) -> bool:
        return self._workers > 0

    @property
    def queued(self) -> int:
        """Matches waiting to be solved, or being solved."""
        return len(self._queued)

    def start(self) -> None:
        """Start the solving tasks, and queue every finished match still unsolved (those
        of a previous run included). Returns at once."""
        if not self.enabled or self._tasks:
            return
        self._executor = self._new_executor(self._workers)
        self._tasks = [asyncio.create_task(self._sweep())] + [
            asyncio.create_task(self._run()) for _ in range(self._workers)
        ]

    async def ended(self, match: _Ended) -> None:
        """The lobby's end listener: queue ``match`` to be solved. Returns at once."""
        if self.enabled:
            self._put(match.id)

    def _put(self, match_id: int) -> None:
        if match_id not in self._queued:
            self._queued.add(match_id)
            self._queue.put_nowait(match_id)

    async def join(self) -> None:
        """Wait until the start's sweep has queued the matches it found unsolved, and
        every queued match has been handled (tests)."""
        if self._tasks:
            await asyncio.wait(self._tasks[:1])  # the sweep: done, or never to be
        await self._queue.join()

    async def _sweep(self) -> None:
        try:
            unsolved = await self._matches.unsolved()
        except Exception as error:  # the next start sweeps again
            log.warning("unsolved matches not read", extra={"error": repr(error)[:300]})
            return
        for match in unsolved:
            self._put(match.id)
        if unsolved:
            log.info("solving the par of earlier matches", extra={"matches": len(unsolved)})

    async def _run(self) -> None:
        while True:
            match_id = await self._queue.get()
            try:
                await self._solve_one(match_id)
            except Exception as error:
                # It stays unsolved in the database: the next start tries again.
                self.failed += 1
                log.warning(
                    "par not stored", extra={"match_id": match_id, "error": repr(error)[:300]}
                )
            finally:
                self._queued.discard(match_id)
                self._queue.task_done()

    async def _solve_one(self, match_id: int) -> None:
        found = await self._matches.unsolved(ids=[match_id])
        if not found:
            return  # solved already (by another process of a cluster) or not finished
        [match] = found
        executor = self._executor
        assert executor is not None
        try:
            score, exact = await asyncio.get_running_loop().run_in_executor(
                executor, partial(self._solve, match.seed, match.ruleset)
            )
        except BrokenExecutor:
            # A worker died (killed for its memory, say): the pool takes no more work,
            # so the next matches get a new one. This one is solved at the next start.
            if self._executor is executor:
                self._executor = self._new_executor(self._workers)
                await asyncio.to_thread(_stop, executor)
            raise
        score, exact = _floored(match, score, exact)
        if await self._matches.save_par(match.id, score=score, exact=exact):
            self.stored += 1
        log.info(
            "par stored",
            extra={"match": match.code, "par": score, "exact": exact},
        )

    async def close(self) -> None:
        """Stop solving: a solve under way is given up (its match stays unsolved, and is
        solved at the next start), and the worker processes are ended."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(_stop, executor)


def _floored(match: Unsolved, score: int, exact: bool) -> tuple[int, bool]:
    """Par no lower than the best score a player recorded, which a real line reached."""
    if match.best_score is None or match.best_score <= score:
        return score, exact
    if exact:  # an exact par is at least any line's score: the solver is wrong
        log.error(
            "a player scored above the exact par",
            extra={"match": match.code, "par": score, "score": match.best_score},
        )
    return match.best_score, False


def _process_pool(workers: int) -> Executor:
    return ProcessPool(workers, niceness=PAR_NICENESS)


def _stop(executor: Executor) -> None:
    """Shut ``executor`` down. A :class:`ProcessPool` gives up the solves under way
    (solved again at the next start) rather than wait for them."""
    executor.shutdown(wait=True, cancel_futures=True)
