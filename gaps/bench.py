"""Benchmark of the rules engine: ``python -m gaps.bench`` prints one figure a line.

* ``moves/s``: move validations + applies (``Game.play`` on recorded legal moves);
* ``games/s``: full random classic games (deal, random moves, redeals to the end);
* ``replays/s``: verifications of recorded classic games (``gaps.replay.replay``).

Each figure is the best of many short timed rounds, measured on one core. The rounds of
the three figures take turns for ``--seconds`` in all, so that each figure gets rounds
in the quiet moments of a shared machine: its speed swings by nearly a factor of two
from one few-second stretch to the next, while the best round is repeatable.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from gaps.game import Game
from gaps.move import Action, Move
from gaps.replay import replay
from gaps.seed import Seed

#: One timed round of a benchmark: it returns the items per second it measured.
Round = Callable[[], float]


def _seed(number: int) -> Seed:
    return Seed(number.to_bytes(10, "big"))


def recorded_games(count: int, ruleset: str = "classic") -> list[tuple[Seed, list[Action]]]:
    """``count`` random games as (seed, actions), the same every run."""
    rng = random.Random(2026)
    games = []
    for number in range(count):
        game = Game(_seed(number), ruleset)
        games.append((game.seed, game.random_playout(rng)))
    return games


def moves_round(*, games: int = 400) -> Round:
    """A round plays the recorded moves of ``games`` games through ``Game.play``."""
    rng = random.Random(7)
    segments: list[tuple[Game, list[Move]]] = []
    for number in range(games):
        game = Game(_seed(number), "no-redeal")
        start = game.copy()
        moves = [action for action in game.random_playout(rng) if isinstance(action, Move)]
        segments.append((start, moves))

    def run() -> float:
        # Copying the starting positions is set-up, not validation: it is not timed.
        games = [(start.copy(), moves) for start, moves in segments]
        count = 0
        begin = time.perf_counter()
        for game, moves in games:
            play = game.play
            for move in moves:
                play(move)
            count += len(moves)
        return count / (time.perf_counter() - begin)

    return run


def games_round(*, games: int = 200) -> Round:
    """A round plays ``games`` full random classic games."""
    rng = random.Random(11)
    seeds = [_seed(number) for number in range(games)]

    def run() -> float:
        begin = time.perf_counter()
        for seed in seeds:
            Game(seed, "classic").random_playout(rng)
        return games / (time.perf_counter() - begin)

    return run


def replays_round(*, games: int = 200) -> Round:
    """A round verifies ``games`` recorded classic games."""
    recorded = recorded_games(games)

    def run() -> float:
        begin = time.perf_counter()
        for seed, actions in recorded:
            if not replay(seed, "classic", actions).ok:
                raise AssertionError("a recorded game failed to replay")
        return games / (time.perf_counter() - begin)

    return run


def best_rates(rounds: list[Round], *, seconds: float, min_rounds: int = 1) -> list[float]:
    """The best rate of each of ``rounds``, run in turn for ``seconds``, ``min_rounds`` at least."""
    best = [0.0] * len(rounds)
    deadline = time.monotonic() + seconds
    done = 0
    while done < min_rounds or time.monotonic() < deadline:
        for index, run in enumerate(rounds):
            best[index] = max(best[index], run())
        done += 1
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m gaps.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--seconds", type=float, default=20.0,
        help="time spent measuring, shared by the three figures (default 20)",
    )
    seconds = parser.parse_args(argv).seconds
    figures = (
        ("move validations+applies", moves_round(), "moves/s"),
        ("random classic games", games_round(), "games/s"),
        ("replay verifications", replays_round(), "replays/s"),
    )
    print(f"measuring for {seconds:g} s, best round kept...", file=sys.stderr, flush=True)
    rates = best_rates([run for _, run, _ in figures], seconds=seconds)
    for (label, _, unit), rate in zip(figures, rates, strict=True):
        print(f"{label + ':':<26}{rate:>12,.0f} {unit}", flush=True)


if __name__ == "__main__":
    main()
