"""A histogram of durations, counted on the players' path and read when /metrics is scraped.

Pure and lock-free: only the event loop's thread observes and reads it (the scrape is
served on the same loop), so an observation is a bisection and two additions, where
prometheus-client's own histogram takes a lock twice. ``server.metrics`` shows it in the
Prometheus format.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Final

#: Bucket bounds (seconds) for a request answered on the players' path: an action from
#: receipt to acknowledgement, a group commit. From a tenth of a millisecond to 10 s,
#: where a bounded wait on the database gives up.
LATENCY_BUCKETS_S: Final = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
)  # fmt: skip


class Histogram:
    """Counts of observations at or below each bound of ``bounds`` (ascending), their
    count and their sum."""

    __slots__ = ("bounds", "_counts", "count", "sum")

    def __init__(self, bounds: Sequence[float] = LATENCY_BUCKETS_S) -> None:
        if list(bounds) != sorted(set(bounds)) or not bounds:
            raise ValueError(f"bucket bounds must be ascending and distinct, not {bounds}")
        self.bounds = tuple(bounds)
        self._counts = [0] * (len(self.bounds) + 1)  # the last: above every bound
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self._counts[bisect_left(self.bounds, value)] += 1
        self.count += 1
        self.sum += value

    def cumulative(self) -> list[tuple[float, int]]:
        """(bound, observations at or below it) for each bound, then (inf, all)."""
        buckets, total = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self._counts, strict=True):
            total += count
            buckets.append((bound, total))
        return buckets
