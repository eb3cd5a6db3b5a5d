"""A clock for timer tests: time passes only when the test says so."""

from __future__ import annotations

import asyncio


class FakeClock:
    """Time that passes only when the test says so: ``sleep`` returns once ``advance``
    has moved the clock past its end. Called, it reads the time (seconds), as a match's
    ``clock`` does."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + seconds, wake))
        await wake  # cancelled with the sleeping task

    def sleeping(self) -> int:
        """How many sleeps are under way (a cancelled one is not)."""
        return sum(1 for _, wake in self._sleepers if not wake.done())

    async def until_sleeping(self, count: int) -> None:
        """Wait until ``count`` sleeps are under way: a timer starts sleeping only once its
        task runs, and advancing before would leave it behind."""
        async with asyncio.timeout(5):
            while self.sleeping() < count:
                await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for end, wake in self._sleepers:
            if end <= self.now and not wake.done():
                wake.set_result(None)
        self._sleepers = [(end, wake) for end, wake in self._sleepers if not wake.done()]
