"""The server's one clock: every part of the server reads the time and sets its timers here.

One ``Clock`` is made at the composition root (``server.app.Server``) and handed to every
part that needs the time: sessions and rate limits, the lobby and its leases, matches,
tournaments, the daily challenge, quick match and leadership. No other module of the
server reads the time. Tests hand the server a fake clock (``tests.fake_clock``) whose
time passes only when the test says so: a grace period, a countdown, a tournament's break
or a scheduled start is advanced, not waited out.

Two kinds of time come from it:

- **wall time** (``now_ms``, ``now``, ``today``): what is stored and shown, and the instants
  timers are set at (a match's clock is the wall clock since its deal, so downtime counts);
- **monotonic time** (``monotonic``): intervals measured within one process (token buckets,
  how long a queued player has waited).

What the clock does not govern is how long the server waits for I/O (a socket's send, a
database's or Redis' answer): those deadlines are the event loop's own, since no clock of
ours makes a peer answer sooner.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, date, datetime

from gaps_protocol.times import format_time

#: Cancels a wake-up (nothing happens if it has run already).
Cancel = Callable[[], None]


class Clock(ABC):
    """The time, and wake-ups at a given instant."""

    @abstractmethod
    def now_ms(self) -> int:
        """Wall-clock milliseconds since the Unix epoch, UTC."""

    @abstractmethod
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for intervals within this process."""

    @abstractmethod
    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Cancel:
        """Call ``callback`` once ``now_ms()`` has reached ``at_ms`` (soon if it has)."""

    @abstractmethod
    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` have passed on this clock."""

    def now(self) -> datetime:
        """The wall-clock time, UTC, to the millisecond."""
        return datetime_of(self.now_ms())

    def today(self) -> date:
        """Today's date in UTC (the daily challenge's and the boards' day)."""
        return self.now().date()

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancel:
        """Call ``callback`` once ``delay_s`` seconds have passed."""
        return self.call_at(self.now_ms() + round(delay_s * 1000), callback)


class SystemClock(Clock):
    """The wall clock, read through the monotonic clock: anchored to ``time.time()`` once,
    it neither jumps within a process nor stops across a restart."""

    def __init__(self) -> None:
        self._wall0_ms = time.time_ns() // 1_000_000
        self._mono0 = time.monotonic()

    def now_ms(self) -> int:
        return self._wall0_ms + int((time.monotonic() - self._mono0) * 1000)

    def monotonic(self) -> float:
        return time.monotonic()

    def call_at(self, at_ms: int, callback: Callable[[], None]) -> Cancel:
        delay_s = max(0.0, (at_ms - self.now_ms()) / 1000)
        return asyncio.get_running_loop().call_later(delay_s, callback).cancel

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def datetime_of(at_ms: int) -> datetime:
    """The UTC datetime of wall-clock milliseconds ``at_ms``."""
    return datetime.fromtimestamp(at_ms / 1000, UTC)


def ms_of(moment: datetime) -> int:
    """Wall-clock milliseconds of ``moment`` (one without a zone is UTC: SQLite keeps
    none, and the server stores UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def iso(at_ms: int) -> str:
    """``at_ms`` as the protocol writes instants (``gaps_protocol.times``)."""
    return format_time(datetime_of(at_ms))
