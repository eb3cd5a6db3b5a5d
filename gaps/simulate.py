"""Bot simulations: win rate and mean score of each bot over fixed, seeded deals.

    python -m gaps.simulate --rules classic,no-redeal,addiction --deals 2000 \\
        --bots random,greedy,search,search-win --jobs 2 --markdown

Deal ``i`` is ``Seed(i.to_bytes(10, "big"))`` (deals 0 .. N-1) and the bot playing it is
seeded with ``i``, so every figure is the same on every rerun, whatever ``--jobs``.
Progress goes to stderr; the table to stdout. Beside wins and scores the table counts
the bots' revisits: moves back to a position the deal has already been in.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from gaps.bots import BOT_NAMES, bot_named, play_game
from gaps.game import Game
from gaps.move import Action, Move
from gaps.ruleset import RULESETS
from gaps.seed import Seed

#: The seeds' historical win rates for human play, by ruleset (docs/bots.md cites them).
HUMAN_WIN_RATES: dict[str, str] = {
    "classic": "5-10%",
    "no-redeal": "1-2%",
    "addiction": "40-50% (3 redeals)",
}
CHUNK = 25  # deals per task handed to a worker


def deal_seed(number: int) -> Seed:
    """The seed of simulated deal ``number``."""
    return Seed(number.to_bytes(10, "big"))


@dataclass
class Tally:
    """What one bot did over some deals of one ruleset."""

    deals: int = 0
    wins: int = 0
    score: int = 0
    redeals: int = 0
    won_moves: int = 0  # moves played in the games won (how fast a win is, in moves)
    revisits: int = 0  # moves back to a position the deal had been in (since its redeal)
    seconds: float = 0.0  # time spent playing, summed over the deals (CPU-bound)

    def add(self, other: Tally) -> None:
        self.deals += other.deals
        self.wins += other.wins
        self.score += other.score
        self.redeals += other.redeals
        self.won_moves += other.won_moves
        self.revisits += other.revisits
        self.seconds += other.seconds

    @property
    def win_rate(self) -> float:
        return self.wins / self.deals if self.deals else 0.0

    @property
    def mean_score(self) -> float:
        return self.score / self.deals if self.deals else 0.0

    @property
    def moves_per_win(self) -> float:
        return self.won_moves / self.wins if self.wins else 0.0


@dataclass
class Results:
    """Tallies by (ruleset, bot), in the order asked for, and the run's wall time."""

    rulesets: list[str]
    bots: list[str]
    tallies: dict[tuple[str, str], Tally] = field(default_factory=dict)
    wall_seconds: float = 0.0

    def tally(self, ruleset: str, bot: str) -> Tally:
        return self.tallies.setdefault((ruleset, bot), Tally())


def revisits(seed: Seed, ruleset: str, actions: Iterable[Action]) -> int:
    """The moves of ``actions``, played from the deal of ``seed``, that come back to a
    position the deal has been in since its last redeal."""
    game = Game(seed, ruleset)
    deal, positions = game.redeals_used, {game.grid_codes()}
    count = 0
    for action in actions:
        game.push(action)
        if game.redeals_used != deal:
            deal, positions = game.redeals_used, set()
        elif isinstance(action, Move) and game.grid_codes() in positions:
            count += 1
        positions.add(game.grid_codes())
    return count


def play_deals(ruleset: str, bot: str, numbers: Iterable[int]) -> Tally:
    """Let ``bot`` play deals ``numbers`` of ``ruleset``."""
    tally = Tally()
    for number in numbers:
        start = time.perf_counter()
        game = Game(deal_seed(number), ruleset)
        actions = play_game(bot_named(bot, seed=number), game)
        tally.seconds += time.perf_counter() - start
        tally.deals += 1
        if game.is_won():
            tally.wins += 1
            tally.won_moves += sum(isinstance(action, Move) for action in actions)
        tally.score += game.score
        tally.redeals += game.redeals_used
        tally.revisits += revisits(deal_seed(number), ruleset, actions)
    return tally


def _task(job: tuple[str, str, int, int]) -> tuple[str, str, Tally]:
    ruleset, bot, first, stop = job
    return ruleset, bot, play_deals(ruleset, bot, range(first, stop))


def simulate(
    rulesets: Sequence[str],
    bots: Sequence[str],
    deals: int,
    *,
    jobs: int = 1,
    progress: bool = False,
) -> Results:
    """Play every bot over deals 0 .. ``deals``-1 of every ruleset, on ``jobs`` processes."""
    for name in rulesets:
        if name not in RULESETS:
            raise ValueError(f"{name!r} is not a ruleset: expected one of {', '.join(RULESETS)}")
    for name in bots:
        if name not in BOT_NAMES:
            raise ValueError(f"{name!r} is not a bot: expected one of {', '.join(BOT_NAMES)}")
    results = Results(list(rulesets), list(bots))
    tasks = [
        (ruleset, bot, first, min(first + CHUNK, deals))
        for ruleset in rulesets
        for bot in bots
        for first in range(0, deals, CHUNK)
    ]
    started = time.perf_counter()
    done, total = 0, deals * len(rulesets) * len(bots)
    for ruleset, bot, tally in _run(tasks, jobs):
        results.tally(ruleset, bot).add(tally)
        done += tally.deals
        if progress:
            elapsed = time.perf_counter() - started
            print(
                f"{done}/{total} games, {elapsed:.0f} s ({ruleset}, {bot})",
                file=sys.stderr, flush=True,
            )
    results.wall_seconds = time.perf_counter() - started
    return results


def _run(tasks: list[tuple[str, str, int, int]], jobs: int) -> Iterator[tuple[str, str, Tally]]:
    if jobs <= 1:
        yield from map(_task, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_task, tasks)


def table(results: Results, *, markdown: bool = False) -> str:
    """The results as a table: one line per (ruleset, bot)."""
    header = [
        "ruleset", "bot", "deals", "win rate", "mean score", "redeals/game", "moves/win",
        "revisits/game", "ms/game", "human win rate",
    ]
    rows = []
    for ruleset in results.rulesets:
        for bot in results.bots:
            tally = results.tallies.get((ruleset, bot), Tally())
            rows.append([
                ruleset,
                bot,
                str(tally.deals),
                f"{100 * tally.win_rate:.1f}%",
                f"{tally.mean_score:.2f}",
                f"{tally.redeals / tally.deals if tally.deals else 0:.2f}",
                f"{tally.moves_per_win:.1f}" if tally.wins else "-",
                f"{tally.revisits / tally.deals if tally.deals else 0:.2f}",
                f"{1000 * tally.seconds / tally.deals if tally.deals else 0:.0f}",
                HUMAN_WIN_RATES.get(ruleset, "-"),
            ])
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    else:
        widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            for line in [header, *rows]
        ]
    lines.append("")
    lines.append(f"wall time: {results.wall_seconds:.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m gaps.simulate",
        description="Play bots over seeded deals and print their win rate and mean score.",
    )
    parser.add_argument(
        "--rules", default="classic,no-redeal,addiction",
        help="comma-separated rulesets (default: classic,no-redeal,addiction)",
    )
    parser.add_argument("--deals", type=int, default=2000, help="deals per ruleset (default 2000)")
    parser.add_argument(
        "--bots", default="random,greedy,search",
        help=f"comma-separated bots among {','.join(BOT_NAMES)} (default: random,greedy,search)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    options = parser.parse_args(argv)
    rulesets = [name.strip() for name in options.rules.split(",") if name.strip()]
    bots = [name.strip() for name in options.bots.split(",") if name.strip()]
    try:
        results = simulate(rulesets, bots, options.deals, jobs=options.jobs, progress=True)
    except ValueError as error:
        parser.error(str(error))
    print(table(results, markdown=options.markdown))


if __name__ == "__main__":
    main()
