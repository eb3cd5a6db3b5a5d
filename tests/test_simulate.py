"""Simulations: sane tallies, a Markdown table, the same figures on any number of jobs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gaps.bots import bot_named, play_game
from gaps.game import Game
from gaps.move import Action, Move
from gaps.simulate import deal_seed, main, revisits, simulate, table


def test_a_simulation_counts_every_deal_and_gives_sane_rates_and_scores() -> None:
    results = simulate(["classic", "no-redeal"], ["random", "greedy"], 4)
    for ruleset in ("classic", "no-redeal"):
        for bot in ("random", "greedy"):
            tally = results.tallies[(ruleset, bot)]
            assert tally.deals == 4
            assert 0 <= tally.win_rate <= 1
            assert -15 <= tally.mean_score <= 58
    assert results.tallies[("no-redeal", "random")].redeals == 0


def test_the_moves_of_the_games_won_are_counted_per_win() -> None:
    results = simulate(["no-redeal"], ["solver"], 2)  # deal 0 lost, deal 1 won
    tally = results.tallies[("no-redeal", "solver")]
    assert tally.wins == 1
    won = Game(deal_seed(1), "no-redeal")
    moves = sum(isinstance(action, Move) for action in play_game(bot_named("solver", seed=1), won))
    assert won.is_won()
    assert tally.won_moves == tally.moves_per_win == moves
    assert f"| 0.00 | {moves}.0 |" in table(results, markdown=True)


def test_the_markdown_table_has_a_line_per_ruleset_and_bot_and_the_human_rates() -> None:
    results = simulate(["classic", "addiction"], ["random"], 3)
    text = table(results, markdown=True)
    lines = text.splitlines()
    assert lines[0].startswith("| ruleset | bot | deals | win rate | mean score")
    assert lines[2].startswith("| classic | random | 3 |")
    assert lines[3].startswith("| addiction | random | 3 |")
    assert "5-10%" in lines[2] and "40-50%" in lines[3]
    assert "wall time" in text


def test_a_simulation_gives_the_same_figures_on_two_jobs_as_on_one() -> None:
    one = simulate(["classic"], ["random", "greedy"], 30, jobs=1)
    two = simulate(["classic"], ["random", "greedy"], 30, jobs=2)
    for key, tally in one.tallies.items():
        other = two.tallies[key]
        assert (tally.deals, tally.wins, tally.score) == (other.deals, other.wins, other.score)


def test_deal_seeds_are_fixed_by_their_number() -> None:
    assert deal_seed(0).data == bytes(10)
    assert deal_seed(258).data == bytes(8) + b"\x01\x02"


def test_the_command_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--rules", "no-redeal", "--deals", "2", "--bots", "random,greedy", "--markdown"])
    captured = capsys.readouterr()
    assert "| no-redeal | greedy | 2 |" in captured.out
    assert "2/4 games" in captured.err


def test_the_command_refuses_an_unknown_ruleset_or_bot(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--rules", "poker"], ["--bots", "oracle"]):
        with pytest.raises(SystemExit) as exit_info:
            main([*argv, "--deals", "1"])
        assert exit_info.value.code == 2
    assert "not a" in capsys.readouterr().err


def test_the_command_explains_itself_with_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gaps.simulate", "--help"], capture_output=True, text=True,
        check=False,
    )
    assert done.returncode == 0
    assert "--deals" in done.stdout and "--jobs" in done.stdout and "--markdown" in done.stdout


def test_a_move_back_to_a_position_of_the_same_deal_is_a_revisit() -> None:
    # Deal 4 of classic: the 2 of hearts stands alone in row 2, row 4 starts with a gap.
    there, back = Move.parse("2H>4"), Move.parse("2H>2")
    actions: list[Action] = [there, back, there, back]
    assert revisits(deal_seed(4), "classic", actions) == 3
    assert revisits(deal_seed(4), "classic", actions[:1]) == 0


def test_the_table_counts_the_revisits_per_game() -> None:
    results = simulate(["classic"], ["random"], 3)
    results.tallies[("classic", "random")].revisits = 6
    assert "| 2.00 |" in table(results, markdown=True).splitlines()[2]
