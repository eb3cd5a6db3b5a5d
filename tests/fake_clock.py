"""A clock for timer tests: time passes only when the test says so."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from server.clock import Cancel, Clock

#: A day, in the seconds ``FakeClock.advance`` takes.
DAY_S = 24 * 3600


class FakeClock(Clock):
    """Time that passes only when the test says so: ``sleep`` returns, and a wake-up set
    with ``call_at`` runs, once ``advance`` has moved the clock past its end. Called, it
    reads the time (seconds since it was made, as ``monotonic``); ``now_ms`` reads it as
    the server's wall clock (milliseconds since the epoch, starting at the real time it
    was made, so that dates are today's)."""

    def __init__(self) -> None:
        self.now_s = 0.0
        self.epoch_ms = time.time_ns() // 1_000_000
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._wakeups: list[tuple[int, Callable[[], None]]] = []

    def __call__(self) -> float:
        return self.now_s

    def monotonic(self) -> float:
        return self.now_s

    def now_ms(self) -> int:
        return self.epoch_ms + round(self.now_s * 1000)

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Cancel:
        entry = (at_ms, callback)
        if at_ms <= self.now_ms():
            handle = asyncio.get_running_loop().call_soon(callback)
            return handle.cancel
        self._wakeups.append(entry)

        def cancel() -> None:
            if entry in self._wakeups:
                self._wakeups.remove(entry)

        return cancel

    def wakeups(self) -> int:
        """How many wake-ups are set and not yet run."""
        return len(self._wakeups)

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now_s + seconds, wake))
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
        """Move the clock ``seconds`` on: every sleep and wake-up due by then runs (the
        wake-ups in the order of their instants)."""
        self.now_s += seconds
        for end, wake in self._sleepers:
            if end <= self.now_s and not wake.done():
                wake.set_result(None)
        self._sleepers = [(end, wake) for end, wake in self._sleepers if not wake.done()]
        now_ms = self.now_ms()
        due = sorted((w for w in self._wakeups if w[0] <= now_ms), key=lambda w: w[0])
        self._wakeups = [w for w in self._wakeups if w[0] > now_ms]
        for _, callback in due:
            callback()
