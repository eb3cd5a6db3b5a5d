"""Deals the solver proves winnable: for tournaments of ``deals: "winnable"`` and for the
daily challenge.

A deal is **winnable** when ``gaps.solver.solve`` finds a line that places every card by
moves alone, without a redeal (its verdict ``won``, which is always exact). Most deals
are decided within a second by the solver's compiled core; some are not within a
budget, and those are not taken: each candidate gets ``max_nodes`` positions (and, as a
safety, ``time_budget_s`` seconds of CPU and about ``max_memory_mb`` MB), and a
candidate the solver cannot prove ``won`` within them (``lost``, or ``unknown``) is
passed over for the next. So the deals taken lean towards those whose win the solver
finds quickly. Within the default budget 44 of deals 0-59 (73%) are proven winnable, in
0.2 s each on average, and one passed over takes about a second, so a deal takes about
1.4 candidates and 0.6 s (docs/solver.md).

The solves run in child processes (``server.process_pool``, as par does), so that
neither the event loop nor the players' moves wait for them; the pool is started at the
first solve and ended by ``close``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import BrokenExecutor, Executor
from functools import partial
from itertools import islice
from typing import Final, Protocol

from gaps.game import Game
from gaps.seed import Seed
from gaps.solver import solve
from server.process_pool import ProcessPool

#: Positions one candidate's solve may search (what decides which deals are taken: a
#: node count is the same on every machine, a time budget is not).
DEAL_MAX_NODES: Final = 400_000
#: CPU seconds and table memory one solve may take besides, as a safety.
DEAL_TIME_BUDGET_S: Final = 30.0
DEAL_MAX_MEMORY_MB: Final = 200.0
#: How many candidates are tried for one deal before giving up (each is proven winnable
#: with a chance of about 0.7: 64 all failing is beyond belief, unless the solver is).
MAX_DRAWS: Final = 64
#: The solving processes' niceness: the server's own, unlike par's 19. Somebody waits
#: for these (a host, the day's first player), and a nicer process can get a tenth of a
#: core on a busy machine (measured: a deal that takes 1 s took over 30 s at niceness 10
#: beside a browser and a test server on two cores); the server's moves have a core of
#: their own all the same, the event loop's, and one worker takes one core at most.
DEAL_NICENESS: Final = 0


class Prove(Protocol):
    """The solver's verdict without redeal (``won``, ``lost``, ``unknown``) on the deal
    of ``seed`` under ``ruleset``; run in a worker process, so it must pickle."""

    def __call__(
        self, seed: bytes, ruleset: str, *, max_nodes: int, time_budget_s: float,
        max_memory_mb: float,
    ) -> str: ...


def prove(
    seed: bytes, ruleset: str, *, max_nodes: int, time_budget_s: float, max_memory_mb: float
) -> str:
    """``gaps.solver.solve``'s verdict on the deal of ``seed`` under ``ruleset``."""
    verdict = solve(
        Game(Seed(seed), ruleset),
        max_nodes=max_nodes,
        time_budget_s=time_budget_s,
        max_memory_mb=max_memory_mb,
        # CPU time: at a low priority on a busy machine a solve waits for the CPU, and
        # should still get its whole budget of work.
        clock=time.process_time,
    )
    return verdict.status


class NoWinnableDeal(Exception):
    """No candidate was proven winnable."""


class DealProver:
    """Proves deals winnable in ``workers`` child processes.

    ``prove`` and ``executor`` replace the solver and the process pool (tests).
    """

    def __init__(
        self,
        *,
        workers: int = 1,
        max_nodes: int = DEAL_MAX_NODES,
        time_budget_s: float = DEAL_TIME_BUDGET_S,
        max_memory_mb: float = DEAL_MAX_MEMORY_MB,
        prove: Prove = prove,
        executor: Callable[[int], Executor] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"a deal prover needs 1 worker or more, not {workers}")
        self._workers = workers
        self._prove = partial(
            prove, max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb
        )
        self._new_executor = executor or _process_pool
        self._executor: Executor | None = None
        #: How many candidates were solved (for tests and logs).
        self.solved = 0

    async def verdict(self, seed: Seed, ruleset: str) -> str:
        """The solver's verdict without redeal on the deal of ``seed``."""
        return (await self._verdicts([seed], ruleset))[0]

    async def first_winnable(
        self, candidates: Iterable[Seed], ruleset: str
    ) -> tuple[int, Seed]:
        """The first of ``candidates``, in their order, proven winnable, with its index:
        the same for the same candidates, however many workers solve them (they are
        solved ``workers`` at a time). Raises ``NoWinnableDeal`` when none is."""
        source: Iterator[Seed] = iter(candidates)
        index = 0
        while batch := list(islice(source, self._workers)):
            verdicts = await self._verdicts(batch, ruleset)
            for offset, verdict in enumerate(verdicts):
                if verdict == "won":
                    return index + offset, batch[offset]
            index += len(batch)
        raise NoWinnableDeal(f"none of {index} candidate deals was proven winnable")

    async def draw(self, count: int, ruleset: str) -> tuple[Seed, ...]:
        """``count`` fresh deals (``Seed.generate``: the operating system's secure
        random source) proven winnable, each the first of up to ``MAX_DRAWS`` draws.
        Raises ``NoWinnableDeal``."""
        seeds = []
        for _ in range(count):
            try:
                _, seed = await self.first_winnable(
                    (Seed.generate() for _ in range(MAX_DRAWS)), ruleset
                )
            except NoWinnableDeal:
                raise NoWinnableDeal(
                    f"no winnable {ruleset} deal was proven in {MAX_DRAWS} draws"
                ) from None
            seeds.append(seed)
        return tuple(seeds)

    async def _verdicts(self, seeds: list[Seed], ruleset: str) -> list[str]:
        if self._executor is None:
            self._executor = self._new_executor(self._workers)
        executor = self._executor
        loop = asyncio.get_running_loop()
        try:
            verdicts = await asyncio.gather(
                *(
                    loop.run_in_executor(executor, partial(self._prove, seed.data, ruleset))
                    for seed in seeds
                )
            )
        except BrokenExecutor:
            # A worker died (killed for its memory, say): the next solves get a new pool.
            if self._executor is executor:
                self._executor = None
                await asyncio.to_thread(_stop, executor)
            raise
        self.solved += len(seeds)
        return list(verdicts)

    async def close(self) -> None:
        """End the worker processes (a solve under way fails with ``BrokenExecutor``)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(_stop, executor)


def _process_pool(workers: int) -> Executor:
    return ProcessPool(workers, niceness=DEAL_NICENESS)


def _stop(executor: Executor) -> None:
    executor.shutdown(wait=True, cancel_futures=True)
