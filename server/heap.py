"""The garbage collector of a long-running server process: collections on a clock.

CPython collects its young generation after a count of net allocations: allocations
less deallocations, of any generation. A server holding thousands of connections keeps,
for each one, what waits for its next message (the reading coroutines and futures, the
player's game and seat, copied at each action): short-lived enough to be young, long-lived
enough to survive. Their deaths pay for their replacements in the count, so a young
collection came only about once a second and then walked every such object of every
connection at once: under 3,000 players at one action a second, each paused every match
for 30 to 70 ms, and those pauses were the 99th percentile of the acknowledgements
(docs/benchmarks.md). Collections by the count also promoted what a full collection
walks again: before any tuning, each of its full collections paused for about 260 ms.

So the server turns the count off and collects on a clock (``Collector``): the young
generation every ``young_every_s`` (each collection walks only what was made since the
last one and is still alive: about a millisecond there), the middle one every
``middle_every_s`` and everything every ``full_every_s``. What start-up allocated (modules,
the tables of the server) is frozen out of every collection first (``freeze_start_up``).
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from typing import Final

__all__ = ["Collector", "freeze_start_up"]

#: The clock's defaults: each generation is collected at least this often.
YOUNG_EVERY_S: Final = 0.05
MIDDLE_EVERY_S: Final = 60.0
FULL_EVERY_S: Final = 600.0


def freeze_start_up() -> None:
    """Collect once, then keep what is alive now out of every later collection."""
    gc.collect()
    gc.freeze()


class Collector:
    """Collects one generation at each ``step``: the oldest one that is due.

    :param young_every_s: the period of the young generation's collections (``run``'s tick).
    :param middle_every_s: the middle generation's (with the young one).
    :param full_every_s: every generation's.
    :param collect: ``gc.collect``, or a stand-in (tests).
    :param clock: seconds on the server's monotonic clock (``Clock.monotonic``).
    :param sleep: how ``run`` waits for its next tick (``Clock.sleep``).
    """

    def __init__(
        self,
        *,
        young_every_s: float = YOUNG_EVERY_S,
        middle_every_s: float = MIDDLE_EVERY_S,
        full_every_s: float = FULL_EVERY_S,
        collect: Callable[[int], object] = gc.collect,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        if not 0 < young_every_s <= middle_every_s <= full_every_s:
            raise ValueError(
                "the periods must be above 0 and grow with the generation, not "
                f"young_every_s={young_every_s}, middle_every_s={middle_every_s}, "
                f"full_every_s={full_every_s}"
            )
        self.young_every_s = young_every_s
        self._every_s = (middle_every_s, full_every_s)
        self._collect = collect
        self._clock = clock
        self._sleep = sleep
        start = clock()
        self._due = [start + middle_every_s, start + full_every_s]
        #: Collections made, per generation (0 young, 1 middle, 2 full).
        self.collections = [0, 0, 0]

    def step(self) -> int:
        """Collect the oldest generation due now (the young one if no other is); return it."""
        now = self._clock()
        generation = 0
        for older in (2, 1):
            if now >= self._due[older - 1]:
                generation = older
                break
        # A collection of a generation collects the younger ones too: their clocks restart.
        for older in range(1, generation + 1):
            self._due[older - 1] = now + self._every_s[older - 1]
        self._collect(generation)
        self.collections[generation] += 1
        return generation

    async def run(self) -> None:
        """Turn the allocation count off and ``step`` every ``young_every_s`` until
        cancelled; the count is on again after."""
        gc.disable()
        try:
            while True:
                await self._sleep(self.young_every_s)
                self.step()
        finally:
            gc.enable()
