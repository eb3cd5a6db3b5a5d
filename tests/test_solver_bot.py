"""gaps.solver_bot: the level-4 bot plays the solver's best line, blind to the seed."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import RULESETS, Game, Seed
from gaps.bots import SearchBot, play_game
from gaps.move import REDEAL, STOP, Action, Move
from gaps.replay import replay
from gaps.solver import Verdict, solve
from gaps.solver_bot import SOLVE_NODES, SolverBot
from tests.test_bots import SEEDS, SHUFFLED_TWO, play_to_the_end


def deal(number: int) -> Seed:
    """Deal ``number`` as ``gaps.simulate`` numbers them."""
    return Seed(number.to_bytes(10, "big"))


#: Deal 25: the solver wins it without redeal in a few hundredths of a second.
WINNABLE = deal(25)


class Blindfolded:
    """A game that lets a bot see everything but its seed."""

    def __init__(self, game: Game) -> None:
        self._game = game

    def __getattr__(self, name: str) -> Any:
        if name == "seed":
            raise AssertionError("the bot read the game's seed")
        return getattr(self._game, name)


def play_blindfolded(bot: SolverBot, game: Game) -> list[Action]:
    actions = []
    while not game.is_over():
        action = bot.choose(Blindfolded(game))  # type: ignore[arg-type]
        game.push(action)
        actions.append(action)
    return actions


#: A time budget no solve here reaches: the node budget decides, on a busy machine too.
UNTIMED_S = 3600.0


@pytest.mark.parametrize("ruleset", ["no-redeal", "classic", "addiction"])
def test_the_solver_bot_wins_a_deal_known_winnable_without_redeal(ruleset: str) -> None:
    game = Game(WINNABLE, ruleset)
    bot = SolverBot(1, solve_time_s=UNTIMED_S)
    actions = play_game(bot, game)
    assert game.is_won() and game.redeals_used == 0 and game.score == 58
    assert (bot.solves, bot.exact_solves) == (1, 1)
    assert replay(WINNABLE, ruleset, actions).score == 58  # the engine agrees


def test_the_solver_bot_never_reads_the_seed_even_across_redeals() -> None:
    game = Game(deal(3), "classic")
    actions = play_blindfolded(SolverBot(4, solve_nodes=2_000, samples=2, rollout_nodes=30), game)
    assert REDEAL in actions  # the redeal decision, sampled, saw no seed either
    assert game.is_over()


def test_the_same_position_under_two_seeds_gets_the_same_choices() -> None:
    position = Game(deal(11), "classic")
    position.random_playout(random.Random(3), redeal=False)
    assert position.is_blocked()
    choices = []
    for secret in (b"one secret", b"another"):
        game = Game.restore(Seed(secret), "classic", position.grid_codes())
        choices.append(SolverBot(5, solve_nodes=500, samples=3, rollout_nodes=30).choose(game))
    assert choices[0] == choices[1]
    assert choices[0] in (REDEAL, STOP)


@pytest.mark.parametrize("number", range(4))
def test_out_of_budget_it_plays_no_worse_than_the_search_bot(number: int) -> None:
    # One node: every solve runs out at once, and the search bot's line is played.
    solver_game, search_game = Game(deal(number), "no-redeal"), Game(deal(number), "no-redeal")
    bot = SolverBot(number, solve_nodes=1)
    play_game(bot, solver_game)
    play_game(SearchBot(number), search_game)
    assert bot.exact_solves == 0
    assert solver_game.score >= search_game.score


def test_a_time_budget_that_runs_out_still_gives_a_legal_game() -> None:
    # Ten seconds pass at each look at the clock: a solve that needs a second look at it
    # (after 1,024 positions) runs out of time.
    ticks = iter(range(10**9))
    bot = SolverBot(2, solve_time_s=3, clock=lambda: 10.0 * next(ticks), samples=2,
                    rollout_nodes=30)
    game = Game(deal(5), "classic")
    actions = play_game(bot, game)
    assert bot.solves > bot.exact_solves
    assert replay(deal(5), "classic", actions).score == game.score


def test_the_solver_bot_plays_the_same_game_again_from_the_same_seed() -> None:
    first = play_game(SolverBot(7, solve_nodes=3_000), Game(deal(6), "classic"))
    again = play_game(SolverBot(7, solve_nodes=3_000), Game(deal(6), "classic"))
    assert first == again


def test_a_deal_solved_exactly_is_not_solved_again() -> None:
    game = Game(deal(7), "no-redeal")
    bot = SolverBot(0, solve_time_s=UNTIMED_S)
    play_game(bot, game)
    assert game.is_won() and bot.solves == 1


def test_a_deal_solved_exactly_is_won_in_fewer_moves_than_the_solvers_line() -> None:
    # the solver's winning line has 111 moves; shortening its tails leaves 89
    game = Game(WINNABLE, "no-redeal")
    solver_moves = len(solve(Game(WINNABLE, "no-redeal")).line)
    actions = play_game(SolverBot(0, solve_time_s=UNTIMED_S), game)
    moves = [action for action in actions if action not in (REDEAL, STOP)]
    assert game.is_won()
    assert len(moves) < solver_moves
    assert replay(WINNABLE, "no-redeal", actions).game.is_won()


@settings(max_examples=3, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)))
def test_the_solver_bot_never_comes_back_to_a_position_and_ends_the_game(
    data: bytes, ruleset: str
) -> None:
    # A tenth of the level-4 budget (in nodes), to keep this to a few seconds.
    bot = SolverBot(data[0], solve_nodes=SOLVE_NODES // 10, solve_time_s=UNTIMED_S)
    play_to_the_end(bot.choose, Game(Seed(data), ruleset))


@settings(max_examples=8, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)))
def test_out_of_budget_at_every_solve_it_never_comes_back_to_a_position(
    data: bytes, ruleset: str
) -> None:
    # Small solves run out: the bot plays lines of the solver and the search bot in
    # turn, solving again after each, the case where a line might come back.
    bot = SolverBot(data[0], solve_nodes=3_000, search_nodes=500, samples=2, rollout_nodes=30)
    play_to_the_end(bot.choose, Game(Seed(data), ruleset))


def test_a_line_of_the_solver_is_cut_short_of_a_position_the_deal_has_been_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A solver that answers with the 2 of spades going from row to row and back: the
    # bot plays the first move only, and then neither that line's next move nor the
    # onward move that would take the 2 back (its wandering passes over it too).
    there, back = Move.parse("2S>4"), Move.parse("2S>2")

    def shuttle(game: Game, **budget: object) -> Verdict:
        if game.is_legal(there):
            line = (there, back, there)
        elif game.is_legal(back):
            line = (back, there, back)
        else:  # the 2 has nowhere to go any more
            line = ()
        return Verdict("unknown", 48, line, nodes=1, seconds=0.0, exhausted="nodes")

    monkeypatch.setattr("gaps.solver_bot.solve", shuttle)
    game = Game.from_layout(SHUFFLED_TWO, "classic")
    actions = play_to_the_end(SolverBot(0, samples=2, rollout_nodes=30).choose, game)
    assert actions[0] == there
    assert back not in actions[1:]
