"""Benchmark of the rules engine: ``python -m gaps.bench`` prints one figure a line.

* ``moves/s``: move validations + applies (``Game.play`` on recorded legal moves);
* ``games/s``: full random classic games (deal, random moves, redeals to the end);
* ``replays/s``: verifications of recorded classic games (``gaps.replay.replay``).

Each figure is the best of a few timed rounds, measured on one core. The machines are
shared and noisy: compare figures taken in the same run, not across runs.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from gaps.game import Game
from gaps.move import Action, Move
from gaps.replay import replay
from gaps.seed import Seed


def _best_rate(run: Callable[[], int], *, rounds: int) -> float:
    """Items per second of the fastest of ``rounds`` calls of ``run`` (which counts items)."""
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        items = run()
        best = max(best, items / (time.perf_counter() - start))
    return best


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


def bench_moves(*, rounds: int) -> float:
    rng = random.Random(7)
    segments: list[tuple[Game, list[Move]]] = []
    for number in range(400):
        game = Game(_seed(number), "no-redeal")
        start = game.copy()
        moves = [action for action in game.random_playout(rng) if isinstance(action, Move)]
        segments.append((start, moves))

    best = 0.0
    for _ in range(rounds):
        # Copying the starting positions is set-up, not validation: it is not timed.
        games = [(start.copy(), moves) for start, moves in segments]
        count = 0
        begin = time.perf_counter()
        for game, moves in games:
            play = game.play
            for move in moves:
                play(move)
            count += len(moves)
        best = max(best, count / (time.perf_counter() - begin))
    return best


def bench_games(*, rounds: int, games: int = 1000) -> float:
    rng = random.Random(11)

    def run() -> int:
        for number in range(games):
            Game(_seed(number), "classic").random_playout(rng)
        return games

    return _best_rate(run, rounds=rounds)


def bench_replays(*, rounds: int, games: int = 500) -> float:
    recorded = recorded_games(games)

    def run() -> int:
        for seed, actions in recorded:
            if not replay(seed, "classic", actions).ok:
                raise AssertionError("a recorded game failed to replay")
        return len(recorded)

    return _best_rate(run, rounds=rounds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m gaps.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per figure (best kept)")
    rounds = parser.parse_args(argv).rounds
    for label, rate, unit in (
        ("move validations+applies", bench_moves, "moves/s"),
        ("random classic games", bench_games, "games/s"),
        ("replay verifications", bench_replays, "replays/s"),
    ):
        print(f"{label + ':':<26}{rate(rounds=rounds):>12,.0f} {unit}", flush=True)


if __name__ == "__main__":
    main()
