"""The figures of the timing flags: ``python -m bench.fair`` (docs/fair-play.md).

It judges (``server.fairplay``) two sets of games, offline, the same every run but for
the bots' own thinking time, which is measured:

* the project's bots, every level of ``gaps.bots``, at each pace of ``PACES_S``: each deal
  is played once per level, each choice timed, then paced as ``gaps bot --pace`` paces
  it (``think_time``, as client_cli/bot.py: about the pace for a move, 2.5 times it for a
  redeal or a stop, times a uniform 0.5-1.5), plus a network round trip per action;
* human-paced games: the same deals played by the level 2 (greedy) bot, timed by a
  stated model of a person (``HumanModel``), since no recorded human game exists here.

Every game of a bot is a true positive when flagged; every human-paced one a false
positive when flagged.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gaps import Action, Game, Move, Seed
from gaps.bots import LEVELS, bot_for_level
from server.fairplay import DEFAULT_RULES, EVEN, FAST, TimingRules, judge

#: The paces ``gaps bot --pace`` is run with here, seconds: 0 (no pause), the default 1.2,
#: and values around and well above it (the option takes any from 0 to 600).
PACES_S: Final = (0.0, 0.3, 0.6, 1.2, 2.5, 5.0)
#: A bot game stopped after this many actions (``gaps.bots.play_game`` has the same net).
MAX_ACTIONS: Final = 2000


def think_time(action: Action, pace_s: float, rng: random.Random) -> float:
    """How long ``gaps bot`` waits before ``action`` (client_cli/bot.py's ``think_time``,
    which a test checks this against), seconds."""
    if pace_s <= 0:
        return 0.0
    factor = 1.0 if isinstance(action, Move) else 2.5
    return pace_s * factor * rng.uniform(0.5, 1.5)


@dataclass(frozen=True, kw_only=True)
class NetworkModel:
    """The time between the server's answer to an action and the next action's arrival,
    besides thinking: a round trip of two one-way delays, each uniform in this range."""

    one_way_low_ms: float = 5.0
    one_way_high_ms: float = 40.0

    def round_trip_ms(self, rng: random.Random) -> float:
        return rng.uniform(self.one_way_low_ms, self.one_way_high_ms) + rng.uniform(
            self.one_way_low_ms, self.one_way_high_ms
        )


@dataclass(frozen=True, kw_only=True)
class HumanModel:
    """A person's time per action (a model, not a measurement): a floor of perception and
    a click, plus a log-normal thinking time (its median and log standard deviation),
    plus now and then a long pause (with this probability, exponential of this mean); a
    redeal or a stop takes ``redeal_factor`` times the thinking."""

    floor_ms: float = 300.0
    thinking_median_ms: float = 1200.0
    thinking_log_sd: float = 0.7
    pause_probability: float = 0.08
    pause_mean_ms: float = 5000.0
    redeal_factor: float = 2.5

    def interval_ms(self, action: Action, rng: random.Random) -> float:
        thinking = self.thinking_median_ms * math.exp(rng.gauss(0.0, self.thinking_log_sd))
        if not isinstance(action, Move):
            thinking *= self.redeal_factor
        if rng.random() < self.pause_probability:
            thinking += rng.expovariate(1.0 / self.pause_mean_ms)
        return self.floor_ms + thinking


#: The person of the model, then steadier ones (a smaller spread of thinking times): how
#: the false positives of the "even" rule grow as people are less varied than the model.
HUMAN_MODELS: Final = (
    HumanModel(),
    HumanModel(thinking_log_sd=0.6),
    HumanModel(thinking_log_sd=0.5),
    HumanModel(thinking_log_sd=0.4),
)


@dataclass(frozen=True)
class Played:
    """One game of a bot: each action and how long the bot took to choose it, ms."""

    actions: tuple[Action, ...]
    choose_ms: tuple[float, ...]


def play(level: int, seed: Seed, *, bot_seed: int) -> Played:
    """A classic game of ``seed`` played by the bot of ``level``, each choice timed."""
    bot = bot_for_level(level, seed=bot_seed)
    game = Game(seed, "classic")
    actions: list[Action] = []
    choose_ms: list[float] = []
    while not game.is_over() and len(actions) < MAX_ACTIONS:
        started = time.perf_counter()
        action = bot.choose(game)
        choose_ms.append((time.perf_counter() - started) * 1000)
        game.push(action)
        actions.append(action)
    return Played(tuple(actions), tuple(choose_ms))


def bot_times(
    played: Played, pace_s: float, rng: random.Random, network: NetworkModel
) -> list[int]:
    """The match-clock times the server would store for ``played`` at ``pace_s``."""
    t_ms = 0.0
    times = []
    for action, choose_ms in zip(played.actions, played.choose_ms, strict=True):
        t_ms += choose_ms + think_time(action, pace_s, rng) * 1000 + network.round_trip_ms(rng)
        times.append(round(t_ms))
    return times


def human_times(actions: Sequence[Action], rng: random.Random, model: HumanModel) -> list[int]:
    """The times a person of ``model`` would make ``actions`` at."""
    t_ms = 0.0
    times = []
    for action in actions:
        t_ms += model.interval_ms(action, rng)
        times.append(round(t_ms))
    return times


@dataclass
class Tally:
    games: int = 0
    fast: int = 0
    even: int = 0
    flagged: int = 0
    judged: int = 0  # games with at least the rules' minimum of intervals

    def add(self, times: Sequence[int], rules: TimingRules) -> None:
        verdict = judge(times, rules)
        self.games += 1
        self.judged += verdict.intervals >= rules.min_intervals
        self.fast += FAST in verdict.flags
        self.even += EVEN in verdict.flags
        self.flagged += verdict.flagged

    def row(self, name: str) -> str:
        return (
            f"| {name} | {self.games} | {self.judged} | {self.fast} | {self.even} | "
            f"{self.flagged} ({100 * self.flagged / max(1, self.games):.0f}%) |"
        )


def figures(
    *,
    games_per_level: int,
    human_games: int,
    rules: TimingRules = DEFAULT_RULES,
    network: NetworkModel = NetworkModel(),
    humans: Sequence[HumanModel] = HUMAN_MODELS,
    levels: Sequence[int] = tuple(LEVELS),
    paces_s: Sequence[float] = PACES_S,
) -> list[str]:
    """The table of figures, as Markdown lines."""
    rng = random.Random(2026)
    lines = [
        "| games | played | judged | fast | even | flagged |",
        "|---|---|---|---|---|---|",
    ]
    for level in levels:
        played = [
            play(level, _seed(number), bot_seed=number) for number in range(games_per_level)
        ]
        for pace_s in paces_s:
            tally = Tally()
            for game in played:
                tally.add(bot_times(game, pace_s, rng, network), rules)
            lines.append(tally.row(f"bot level {level} ({LEVELS[level]}), pace {pace_s:g} s"))
    human_actions = [
        play(2, _seed(10_000 + number), bot_seed=number).actions for number in range(human_games)
    ]
    for human in humans:
        tally = Tally()
        for actions in human_actions:
            tally.add(human_times(actions, rng, human), rules)
        lines.append(tally.row(f"human-paced (model, log sd {human.thinking_log_sd:g})"))
    return lines


def _seed(number: int) -> Seed:
    return Seed(number.to_bytes(10, "big"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fair",
        description="How many bot and human-paced games the timing flags flag.",
    )
    parser.add_argument("--games-per-level", type=int, default=20)
    parser.add_argument("--human-games", type=int, default=500)
    options = parser.parse_args(argv)
    rules = DEFAULT_RULES
    print(
        f"rules: min_intervals {rules.min_intervals}, median_floor_ms {rules.median_floor_ms}, "
        f"spread_floor_ratio {rules.spread_floor_ratio}"
    )
    for line in figures(games_per_level=options.games_per_level, human_games=options.human_games):
        print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
