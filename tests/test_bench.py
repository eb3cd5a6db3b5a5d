"""The benchmark runs (tiny sizes only: the real figures come from ``python -m gaps.bench``)."""

from __future__ import annotations

import subprocess
import sys

from gaps.bench import bench_games, bench_moves, bench_replays, recorded_games
from gaps.replay import replay


def test_bench_moves_returns_a_positive_rate() -> None:
    assert bench_moves(rounds=1) > 0


def test_bench_games_returns_a_positive_rate() -> None:
    assert bench_games(rounds=1, games=3) > 0


def test_bench_replays_returns_a_positive_rate() -> None:
    assert bench_replays(rounds=1, games=3) > 0


def test_recorded_games_are_the_same_every_run_and_replay() -> None:
    first, second = recorded_games(3), recorded_games(3)
    assert [(seed, [str(a) for a in actions]) for seed, actions in first] == [
        (seed, [str(a) for a in actions]) for seed, actions in second
    ]
    for seed, actions in first:
        assert replay(seed, "classic", actions).ok


def test_the_bench_command_has_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gaps.bench", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0
    assert "--rounds" in done.stdout
