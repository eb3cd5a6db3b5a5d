"""Timing flags: whether the times of a game's actions are beyond a person's reach, or
too even for a person. Pure: no I/O, no clock (docs/fair-play.md, "Timing flags").

A game is judged from the match-clock times (``t_ms``, since the deal) of its actions in
order. Its intervals are the times between the deal and the first action, and between
each action and the next. Two rules, each only over at least ``min_intervals`` of them:

* ``fast``: the median interval is under ``median_floor_ms``;
* ``even``: the intervals' interdecile ratio (the 90th percentile over the 10th) is
  under ``spread_floor_ratio``: a person's pace varies with what each move asks of
  them, quick for an obvious move, slow for a hard one, with a long tail of pauses.

A flag never decides anything by itself: the server holds the result off the boards and
ratings until an operator clears or voids it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

#: The flags, in the order they are reported.
FAST: Final = "fast"
EVEN: Final = "even"


@dataclass(frozen=True, kw_only=True)
class TimingRules:
    """The thresholds of the two rules (how they were chosen: docs/fair-play.md)."""

    min_intervals: int = 30
    median_floor_ms: int = 350
    spread_floor_ratio: float = 2.75

    def __post_init__(self) -> None:
        if self.min_intervals < 2:
            raise ValueError(f"min_intervals must be 2 or more, not {self.min_intervals}")
        if self.median_floor_ms < 0 or self.spread_floor_ratio < 0:
            raise ValueError("timing floors must be 0 or more")


#: The server's rules (the figures of docs/fair-play.md are measured with them).
DEFAULT_RULES: Final = TimingRules()


@dataclass(frozen=True)
class Verdict:
    """What the rules found in one game: its flags (empty: none), how many intervals it
    has, their median (ms) and spread (the 90th percentile over the 10th); the last two
    are None for a game with no interval, the spread also when the 10th percentile is 0."""

    flags: tuple[str, ...]
    intervals: int
    median_ms: float | None
    spread_ratio: float | None

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    def to_json(self) -> dict[str, Any]:
        return {
            "flags": list(self.flags),
            "intervals": self.intervals,
            "median_ms": self.median_ms,
            "spread_ratio": self.spread_ratio,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            tuple(data["flags"]), data["intervals"], data["median_ms"], data["spread_ratio"]
        )


def intervals_ms(times_ms: Sequence[int]) -> list[int]:
    """The intervals of actions at ``times_ms`` (in order): the first from the deal (0)."""
    previous = 0
    found = []
    for t_ms in times_ms:
        found.append(max(0, t_ms - previous))
        previous = t_ms
    return found


def judge(times_ms: Sequence[int], rules: TimingRules = DEFAULT_RULES) -> Verdict:
    """The verdict of ``rules`` on a game whose actions came at ``times_ms``."""
    intervals = intervals_ms(times_ms)
    if not intervals:
        return Verdict((), 0, None, None)
    median = float(statistics.median(intervals))
    low, high = _decile(intervals, 0.1), _decile(intervals, 0.9)
    spread = high / low if low > 0 else None
    flags = []
    if len(intervals) >= rules.min_intervals:
        if median < rules.median_floor_ms:
            flags.append(FAST)
        if spread is not None and spread < rules.spread_floor_ratio:
            flags.append(EVEN)
    return Verdict(tuple(flags), len(intervals), round(median, 1), _rounded(spread))


def _decile(values: Sequence[int], fraction: float) -> float:
    """The ``fraction`` quantile of ``values``, interpolated between the nearest ranks."""
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


#: The upper bounds of a chart's rows, ms (the last row takes the rest).
CHART_BOUNDS_MS: Final = (100, 200, 350, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000)


def chart(times_ms: Sequence[int], *, width_chars: int = 40) -> list[str]:
    """A text chart of a game's intervals: one row per band of durations, a bar as long
    as its share of the intervals (the longest row ``width_chars`` wide), and a count."""
    intervals = intervals_ms(times_ms)
    counts = [0] * (len(CHART_BOUNDS_MS) + 1)
    for interval in intervals:
        row = next(
            (i for i, bound in enumerate(CHART_BOUNDS_MS) if interval < bound),
            len(CHART_BOUNDS_MS),
        )
        counts[row] += 1
    most = max(counts) or 1
    labels = [f"< {bound} ms" for bound in CHART_BOUNDS_MS] + [f">= {CHART_BOUNDS_MS[-1]} ms"]
    return [
        f"{label:>11} | " + (f"{'#' * math.ceil(count * width_chars / most)} " if count else "")
        + str(count)
        for label, count in zip(labels, counts, strict=True)
    ]
