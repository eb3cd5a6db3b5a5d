"""The server's clock: wall-clock milliseconds, and wake-ups at a given instant."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

#: Cancels a wake-up (nothing happens if it has run already).
Cancel = Callable[[], None]


class Clock(Protocol):
    def now_ms(self) -> int:
        """Wall-clock milliseconds since the Unix epoch, UTC."""

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Cancel:
        """Call ``callback`` once ``now_ms()`` has reached ``at_ms`` (at once if it has)."""


class SystemClock:
    """The wall clock, read through the event loop's monotonic clock: anchored to
    ``time.time()`` once, it neither jumps within a process nor stops across a restart
    (a match's clock is the wall clock since its deal: downtime counts)."""

    def __init__(self) -> None:
        self._wall0_ms = time.time_ns() // 1_000_000
        self._mono0 = time.monotonic()

    def now_ms(self) -> int:
        return self._wall0_ms + int((time.monotonic() - self._mono0) * 1000)

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Cancel:
        delay_s = max(0.0, (at_ms - self.now_ms()) / 1000)
        return asyncio.get_running_loop().call_later(delay_s, callback).cancel
