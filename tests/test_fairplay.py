"""The timing flags: a game's action times, judged by written rules."""

from __future__ import annotations

import itertools
import random

import pytest

from server.fairplay import (
    CHART_BOUNDS_MS,
    DEFAULT_RULES,
    EVEN,
    FAST,
    TimingRules,
    Verdict,
    chart,
    intervals_ms,
    judge,
)


def times_of(intervals: list[float]) -> list[int]:
    return [round(t) for t in itertools.accumulate(intervals)]


def test_intervals_count_from_the_deal_then_from_one_action_to_the_next() -> None:
    assert intervals_ms([400, 1000, 1000, 2500]) == [400, 600, 0, 1500]


def test_a_bot_at_no_pace_is_flagged_fast_and_even() -> None:
    rng = random.Random(1)
    verdict = judge(times_of([rng.uniform(20, 40) for _ in range(100)]))
    assert verdict.flags == (FAST, EVEN)
    assert verdict.flagged and verdict.intervals == 100
    assert verdict.median_ms is not None and verdict.median_ms < 40


def test_a_bot_at_a_human_pace_but_an_even_one_is_flagged_even_only() -> None:
    rng = random.Random(2)
    verdict = judge(times_of([1200 * rng.uniform(0.5, 1.5) for _ in range(80)]))
    assert verdict.flags == (EVEN,)
    assert verdict.spread_ratio is not None and verdict.spread_ratio < 2.75


def test_a_person_of_varied_pace_is_not_flagged() -> None:
    rng = random.Random(3)
    verdict = judge(times_of([300 + 1200 * rng.lognormvariate(0, 0.7) for _ in range(80)]))
    assert verdict.flags == ()
    assert not verdict.flagged
    assert verdict.spread_ratio is not None and verdict.spread_ratio > 2.75


def test_a_game_shorter_than_the_minimum_is_never_flagged_however_fast() -> None:
    fast = times_of([20.0] * (DEFAULT_RULES.min_intervals - 1))
    assert judge(fast).flags == ()
    assert judge(fast + [fast[-1] + 20]).flags == (FAST, EVEN)


def test_the_thresholds_are_options_of_the_rules() -> None:
    times = times_of([500.0, 600.0] * 10)
    assert judge(times, TimingRules(min_intervals=20, median_floor_ms=600)).flags == (
        FAST,
        EVEN,
    )
    lenient = TimingRules(min_intervals=20, median_floor_ms=100, spread_floor_ratio=1.1)
    assert judge(times, lenient).flags == ()


def test_rules_refuse_a_minimum_below_two_intervals() -> None:
    with pytest.raises(ValueError, match="min_intervals"):
        TimingRules(min_intervals=1)


def test_a_game_without_actions_has_no_figures() -> None:
    assert judge([]) == Verdict((), 0, None, None)


def test_a_verdict_round_trips_through_json() -> None:
    verdict = judge(times_of([100.0, 300.0] * 20))
    assert Verdict.from_json(verdict.to_json()) == verdict


def test_the_chart_has_a_row_per_band_with_bars_as_long_as_their_share() -> None:
    lines = chart(times_of([150.0] * 10 + [1200.0] * 5), width_chars=20)
    assert len(lines) == len(CHART_BOUNDS_MS) + 1
    assert lines[1] == "   < 200 ms | #################### 10"
    assert lines[6] == "  < 1500 ms | ########## 5"
    assert lines[0] == "   < 100 ms | 0"
