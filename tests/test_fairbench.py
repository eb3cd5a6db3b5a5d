"""``python -m bench.fair``: the figures of the timing flags, rerun by anyone."""

from __future__ import annotations

import random

import pytest

from bench.fair import (
    HUMAN_MODELS,
    PACES_S,
    HumanModel,
    NetworkModel,
    bot_times,
    figures,
    main,
    play,
    think_time,
)
from client_cli import bot as bot_client
from gaps import Move, Redeal, Seed, Stop
from server.fairplay import judge


def test_the_bots_are_paced_exactly_as_gaps_bot_paces_them() -> None:
    for action in (Move.parse("5H"), Redeal(), Stop()):
        for pace_s in PACES_S:
            ours, theirs = random.Random(9), random.Random(9)
            assert [think_time(action, pace_s, ours) for _ in range(5)] == [
                bot_client.think_time(action, pace_s, theirs) for _ in range(5)
            ]


def test_a_paced_game_is_the_bots_thinking_and_pace_and_a_round_trip_per_action() -> None:
    played = play(2, _seed(4), bot_seed=4)
    times = bot_times(played, 1.2, random.Random(1), NetworkModel())
    assert len(times) == len(played.actions) and times == sorted(times)
    network = NetworkModel()
    shortest = sum(
        choose + (0.6 if isinstance(action, Move) else 1.5) * 1000 + 2 * network.one_way_low_ms
        for action, choose in zip(played.actions, played.choose_ms, strict=True)
    )
    assert times[-1] >= shortest - len(times)  # each time is rounded to the ms


def test_every_bot_game_is_flagged_and_no_human_paced_one() -> None:
    lines = figures(games_per_level=2, human_games=40, levels=(1, 2), humans=[HumanModel()])
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines[2:]}
    assert len(rows) == 2 * len(PACES_S) + 1
    assert "human-paced (model, log sd 0.7)" in rows
    for name, row in rows.items():
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        played, judged, flagged = int(cells[1]), int(cells[2]), int(cells[5].split()[0])
        assert judged == played
        assert flagged == (0 if name.startswith("human") else played), row


def test_a_person_of_the_model_is_slower_and_more_varied_than_the_floors() -> None:
    rng = random.Random(5)
    model = HumanModel()
    times, t_ms = [], 0.0
    for _ in range(200):
        t_ms += model.interval_ms(Move.parse("5H"), rng)
        times.append(round(t_ms))
    verdict = judge(times)
    assert verdict.median_ms is not None and verdict.median_ms > 1000
    assert verdict.spread_ratio is not None and verdict.spread_ratio > 3


def test_the_command_prints_the_rules_and_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--games-per-level", "1", "--human-games", "3"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("rules: min_intervals 30, median_floor_ms 350")
    assert out[1] == "| games | played | judged | fast | even | flagged |"
    assert sum(line.startswith("| bot level") for line in out) == 4 * len(PACES_S)
    assert out[-len(HUMAN_MODELS)].startswith("| human-paced (model, log sd 0.7) | 3 |")


def _seed(number: int) -> Seed:
    return Seed(number.to_bytes(10, "big"))
