"""Par: the best score over a deal and its redeals, exact or an honest lower bound."""

from __future__ import annotations

import pytest

from gaps import RULESETS, Game, Seed
from gaps.bots import GreedyBot, RandomBot, SearchBot, play_game
from gaps.move import Action
from gaps.par import Par, final_score, par, par_of
from gaps.replay import replay
from tests.test_solver import DEAD, WON, WON_IN_TWO


def seed(number: int) -> Seed:
    return Seed(number.to_bytes(10, "big"))


def replayed(game: Game, line: tuple[Action, ...]) -> Game:
    """``game`` after ``line``, every action checked by the engine."""
    played = game.copy()
    for action in line:
        played.push(action)
    return played


def test_a_won_deal_scores_the_win_and_its_bonus() -> None:
    assert par_of(Game.from_layout(WON, "classic")).score == 58


def test_a_win_two_moves_away_has_par_58_with_those_moves() -> None:
    result = par_of(Game.from_layout(WON_IN_TWO, "classic"))
    assert (result.score, result.exact, result.redeals, len(result.line)) == (58, True, 0, 2)


def test_a_dead_position_without_redeals_has_par_zero() -> None:
    result = par_of(Game.from_layout(DEAD, "no-redeal"))
    assert (result.score, result.exact, result.line) == (0, True, ())


def test_a_dead_position_with_redeals_left_redeals_when_it_pays() -> None:
    game = Game.from_layout(DEAD, "classic", seed=seed(3))
    result = par_of(game, max_nodes=200_000)
    assert result.score >= 0
    assert replayed(game, result.line).score == result.score
    if result.score > 0:
        assert result.redeals >= 1


def test_montana_deal_44_needs_a_redeal_to_reach_its_exact_par() -> None:
    game = Game(seed(44), "montana")
    result = par_of(game, max_nodes=60_000)
    assert (result.score, result.exact, result.redeals) == (43, True, 1)
    assert replayed(game, result.line).score == 43


@pytest.mark.parametrize("number", [17, 20, 51])
def test_a_montana_deal_won_without_redeal_has_par_58(number: int) -> None:
    result = par(seed(number), "montana", max_nodes=20_000)
    assert (result.score, result.exact) == (58, True)


@pytest.mark.parametrize("name", ["classic", "addiction"])
@pytest.mark.parametrize("number", [1, 2, 7])
def test_a_deal_won_before_any_redeal_has_exact_par_58_without_searching_redeals(
    name: str, number: int
) -> None:
    game = Game(seed(number), name)
    result = par_of(game, max_nodes=200_000)
    assert (result.score, result.exact, result.redeals) == (58, True, 0)
    assert result.nodes < 200_000 // 2  # the best-first search's share sufficed
    assert replayed(game, result.line).is_won()


@pytest.mark.parametrize("name", sorted(RULESETS))
@pytest.mark.parametrize("number", [1, 2])
def test_a_par_line_replays_to_its_score_in_every_ruleset(name: str, number: int) -> None:
    game = Game(seed(number), name)
    result = par_of(game, max_nodes=3_000)
    played = replayed(game, result.line)
    assert played.score == result.score
    assert (played.placed, played.redeals_used) == (result.placed, result.redeals)
    assert result.exact or result.exhausted == "nodes"


@pytest.mark.parametrize(("name", "number"), [("montana", 44), ("montana", 20), ("no-redeal", 0)])
def test_an_exact_par_is_never_below_what_a_bot_scores(name: str, number: int) -> None:
    result = par(seed(number), name, max_nodes=60_000)
    assert result.exact
    for bot in (RandomBot(number), GreedyBot(number, samples=2),
                SearchBot(number, max_nodes=2_000, samples=2, rollout_nodes=30)):
        game = Game(seed(number), name)
        play_game(bot, game)
        assert game.score <= result.score


def test_a_finished_game_has_its_own_score_as_par() -> None:
    game = Game.from_layout(WON, "classic", redeals_used=1)
    assert game.is_over()
    assert par_of(game, clock=lambda: 0.0) == Par(43, 48, 1, (), True, 0, 0.0)


def test_the_final_score_counts_placed_cards_redeals_and_the_bonus() -> None:
    assert final_score(48, 0) == 58
    assert final_score(48, 1) == 43
    assert final_score(30, 2) == 20


def test_a_par_prints_as_its_constructor() -> None:
    result = par_of(Game.from_layout(WON_IN_TWO, "classic"))
    from gaps.move import Move  # noqa: F401 - the repr names it

    assert eval(repr(result)) == result


@pytest.mark.parametrize("name", ["classic", "addiction"])
def test_a_par_cut_short_is_never_below_the_search_bot(name: str) -> None:
    game = Game(seed(1), name)
    result = par_of(game, max_nodes=2_000)
    bot = game.copy()
    play_game(SearchBot(0), bot)
    assert not result.exact
    assert result.score >= bot.score
    assert replayed(game, result.line).score == result.score


def test_without_the_bot_floor_a_par_cut_short_is_the_search_line() -> None:
    game = Game(seed(1), "classic")
    result = par_of(game, max_nodes=2_000, bot_floor=False)
    assert not result.exact
    assert all(str(action) != "stop" for action in result.line)
    assert replayed(game, result.line).score == result.score


@pytest.mark.parametrize(
    ("name", "number"),
    [("montana", 17), ("montana", 44), ("montana", 51), ("no-redeal", 0), ("no-redeal", 173)],
)
def test_an_exact_par_is_at_least_every_recorded_players_replayed_score(
    name: str, number: int
) -> None:
    result = par(seed(number), name, max_nodes=60_000)
    assert result.exact
    players = (RandomBot(number), GreedyBot(number, samples=2),
               SearchBot(number, max_nodes=2_000, samples=2, rollout_nodes=30))
    for bot in players:
        recorded = [str(action) for action in play_game(bot, Game(seed(number), name))]
        audited = replay(seed(number), name, recorded)
        assert audited.ok
        assert audited.score <= result.score
