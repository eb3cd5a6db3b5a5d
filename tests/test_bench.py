"""The benchmark runs (tiny sizes only: the real figures come from ``python -m gaps.bench``)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator

from gaps.bench import best_rates, games_round, moves_round, recorded_games, replays_round
from gaps.replay import replay


def test_a_moves_round_measures_a_positive_rate() -> None:
    assert moves_round(games=3)() > 0


def test_a_games_round_measures_a_positive_rate() -> None:
    assert games_round(games=3)() > 0


def test_a_replays_round_measures_a_positive_rate() -> None:
    assert replays_round(games=3)() > 0


def test_recorded_games_are_the_same_every_run_and_replay() -> None:
    first, second = recorded_games(3), recorded_games(3)
    assert [(seed, [str(a) for a in actions]) for seed, actions in first] == [
        (seed, [str(a) for a in actions]) for seed, actions in second
    ]
    for seed, actions in first:
        assert replay(seed, "classic", actions).ok


def rates(*values: float) -> Iterator[float]:
    yield from values


def test_best_rates_keeps_each_figures_best_round_and_runs_them_in_turn() -> None:
    calls: list[str] = []
    first, second = rates(3.0, 9.0, 5.0), rates(7.0, 1.0, 2.0)

    def one() -> float:
        calls.append("one")
        return next(first)

    def two() -> float:
        calls.append("two")
        return next(second)

    assert best_rates([one, two], seconds=0, min_rounds=3) == [9.0, 7.0]
    assert calls == ["one", "two"] * 3


def test_best_rates_goes_on_until_the_seconds_are_spent() -> None:
    calls = 0

    def slow() -> float:
        nonlocal calls
        calls += 1
        time.sleep(0.05)
        return 1.0

    best_rates([slow], seconds=0.3)
    assert calls >= 2


def test_the_bench_command_prints_one_labelled_figure_a_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gaps.bench", "--seconds", "0"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    lines = done.stdout.splitlines()
    assert [line.split()[-1] for line in lines] == ["moves/s", "games/s", "replays/s"]
    for line in lines:
        assert re.fullmatch(r"[a-z +]+: +[0-9,]+ [a-z]+/s", line), line
    assert "measuring for 0 s" in done.stderr


def test_the_bench_command_has_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gaps.bench", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0
    assert "--seconds" in done.stdout
