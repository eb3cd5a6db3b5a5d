"""Bots: only legal actions, deterministic, blind to the seed, ranked by strength, and
never back to a position of the same deal."""

from __future__ import annotations

import random
from collections.abc import Callable
from statistics import mean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import RULESETS, Game, Seed
from gaps.board import Board, move_for, shuffle_rank
from gaps.bots import (
    BOT_NAMES,
    Bot,
    GreedyBot,
    RandomBot,
    SearchBot,
    bot_for_level,
    bot_named,
    play_game,
)
from gaps.lookahead import greedy_move, search_deal
from gaps.move import REDEAL, STOP, Action, Move
from gaps.replay import replay

SEEDS = st.binary(min_size=10, max_size=10).filter(any)
#: Every bot, and the hint, ends a game within this many actions (measured over 300 deals
#: of each ruleset: at most 230, the random bot playing spaces).
ACTIONS_BOUND = 1_000


def play_to_the_end(choose: Callable[[Game], Action | None], game: Game) -> list[Action]:
    """Play ``game`` with what ``choose`` says until it is over, failing if a move comes
    back to a position of the same deal or the game takes ``ACTIONS_BOUND`` actions."""
    deal_number, positions = game.redeals_used, {game.grid_codes()}
    actions: list[Action] = []
    while not game.is_over():
        assert len(actions) < ACTIONS_BOUND, f"still playing after {len(actions)} actions"
        action = choose(game)
        assert action is not None
        game.push(action)
        actions.append(action)
        if game.redeals_used != deal_number:
            deal_number, positions = game.redeals_used, set()
        elif isinstance(action, Move):
            assert game.grid_codes() not in positions, (
                f"action {len(actions)}, {action}, comes back to a position of this deal"
            )
        positions.add(game.grid_codes())
    return actions


def quick_bots(seed: int) -> list[Bot]:
    """One bot of each level, the search with a small budget to keep tests fast."""
    return [
        RandomBot(seed),
        GreedyBot(seed, samples=2),
        SearchBot(seed, max_nodes=300, samples=2, rollout_nodes=30),
        SearchBot(seed, max_nodes=300, play_to_win=True),
    ]


def deal(number: int) -> Seed:
    return Seed(number.to_bytes(10, "big"))


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_bot_plays_whole_games_of_every_ruleset_with_legal_actions_only(
    ruleset: str,
) -> None:
    for number in range(6):
        for bot in quick_bots(number):
            game = Game(deal(number), ruleset)
            actions = play_game(bot, game)  # Game.push raises on an illegal action
            assert game.is_over()
            replayed = replay(deal(number), ruleset, actions)
            assert replayed.ok and replayed.game == game


@settings(max_examples=25, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)), level=st.sampled_from([1, 2]))
def test_random_and_greedy_bots_never_choose_an_illegal_action(
    data: bytes, ruleset: str, level: int
) -> None:
    game = Game(Seed(data), ruleset)
    play_game(bot_for_level(level, seed=len(data)), game)
    assert game.is_over()


@settings(max_examples=10, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)))
def test_the_search_bot_never_chooses_an_illegal_action(data: bytes, ruleset: str) -> None:
    game = Game(Seed(data), ruleset)
    play_game(SearchBot(1, max_nodes=200, samples=2, rollout_nodes=20), game)
    assert game.is_over()


def test_a_bot_chooses_a_redeal_or_a_stop_only_when_it_has_no_better_move() -> None:
    for number in range(4):
        game = Game(deal(number), "classic")
        bot = GreedyBot(number)
        while not game.is_over():
            action = bot.choose(game)
            if action == REDEAL:
                assert game.is_blocked()
            game.push(action)


@pytest.mark.parametrize("name", BOT_NAMES)
def test_a_bot_plays_the_same_game_again_from_the_same_seed(name: str) -> None:
    for ruleset in ("classic", "addiction"):
        first = play_game(bot_named(name, seed=7), Game(deal(3), ruleset))
        again = play_game(bot_named(name, seed=7), Game(deal(3), ruleset))
        assert first == again


def test_bots_never_read_the_game_seed() -> None:
    # The same position under two seeds: the redeals would differ, the choices may not.
    position = Game(deal(11), "classic")
    position.random_playout(random.Random(3), redeal=False)
    assert position.is_blocked()
    grid = position.grid_codes()
    for make in (
        lambda: GreedyBot(5),
        lambda: SearchBot(5, max_nodes=500, samples=3, rollout_nodes=30),
    ):
        choices = []
        for secret in (b"one secret", b"another"):
            game = Game.restore(Seed(secret), "classic", grid)
            choices.append(make().choose(game))
        assert choices[0] == choices[1]
        assert choices[0] in (REDEAL, STOP)


def test_bot_levels_are_random_greedy_search_and_solver() -> None:
    assert isinstance(bot_for_level(1, seed=0), RandomBot)
    assert isinstance(bot_for_level(2, seed=0), GreedyBot)
    assert isinstance(bot_for_level(3, seed=0), SearchBot)
    assert bot_for_level(4, seed=0).name == bot_named("solver", seed=0).name == "solver"
    with pytest.raises(ValueError, match="bot level 5 is not one of 1, 2, 3, 4"):
        bot_for_level(5, seed=0)
    with pytest.raises(ValueError):
        bot_named("perfect", seed=0)
    assert bot_named("search-win", seed=0).name == "search-win"


def test_the_search_bot_outscores_the_greedy_bot_which_outscores_the_random_bot() -> None:
    scores: dict[str, list[int]] = {"random": [], "greedy": [], "search": []}
    for number in range(30):
        for name, bot in (
            ("random", RandomBot(number)),
            ("greedy", GreedyBot(number)),
            ("search", SearchBot(number, max_nodes=1_500, samples=4, rollout_nodes=50)),
        ):
            game = Game(deal(number), "classic")
            play_game(bot, game)
            scores[name].append(game.score)
    assert mean(scores["search"]) > mean(scores["greedy"]) + 5
    assert mean(scores["greedy"]) > mean(scores["random"])


def test_a_search_of_a_deal_reaches_the_placed_count_it_promises() -> None:
    for number in range(5):
        game = Game(deal(number), "no-redeal")
        board = Board.of(game)
        before = board.grid.copy()
        placed, plan = search_deal(board, 2_000)
        assert board.grid == before  # the search leaves the board as it was
        for code, to in plan:
            game.play(move_for(code, to))
        assert game.placed == placed


def test_a_search_finds_the_win_of_a_position_one_move_from_it() -> None:
    layout = """
    2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
    2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
    2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
    2S 3S 4S 5S 6S 7S 8S 9S TS JS QS -- KS
    """
    game = Game.from_layout(layout, "no-redeal")
    action = SearchBot(0).choose(game)
    assert action == Move.parse("KS")
    game.push(action)
    assert game.is_won() and game.score == 58


def test_the_search_bot_stops_rather_than_redeal_when_a_redeal_cannot_pay() -> None:
    # 44 cards placed, blocked: a redeal costs 5 and can win back 4 at most.
    layout = """
    2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
    2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
    2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
    2S 3S 4S 5S 6S 7S 8S 9S KS -- TS JS QS
    """
    game = Game.from_layout(layout, "classic")
    assert game.is_blocked() and game.placed == 44
    assert SearchBot(0).choose(game) == STOP
    assert GreedyBot(0).choose(game) == STOP
    assert SearchBot(0, play_to_win=True).choose(game) == REDEAL


def test_the_search_bot_redeals_a_blocked_position_with_few_cards_placed() -> None:
    game = Game(deal(11), "classic")
    game.random_playout(random.Random(3), redeal=False)
    assert game.is_blocked() and game.placed < 20
    assert SearchBot(0, max_nodes=500, samples=4, rollout_nodes=50).choose(game) == REDEAL


@pytest.mark.parametrize("level", [1, 2])
@settings(max_examples=40, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)))
def test_a_random_or_greedy_bot_never_comes_back_to_a_position_and_ends_the_game(
    level: int, data: bytes, ruleset: str
) -> None:
    play_to_the_end(bot_for_level(level, seed=len(data)).choose, Game(Seed(data), ruleset))


@settings(max_examples=8, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)))
def test_the_search_bot_never_comes_back_to_a_position_and_ends_the_game(
    data: bytes, ruleset: str
) -> None:
    for name in ("search", "search-win"):
        play_to_the_end(bot_named(name, seed=data[0]).choose, Game(Seed(data), ruleset))


@settings(max_examples=150, deadline=None)
@given(data=SEEDS, ruleset=st.sampled_from(sorted(RULESETS)), rng=st.randoms())
def test_no_walk_of_onward_moves_comes_back_to_a_position_or_loses_a_card(
    data: bytes, ruleset: str, rng: random.Random
) -> None:
    # The lemmas of gaps.board, on walks that shuffle 2s far more than a bot does.
    game = Game(Seed(data), ruleset)
    positions = {game.grid_codes()}
    while True:
        board = Board.of(game)
        legal = game.legal_moves()
        onward = [move for move in legal if board.is_onward(move.code, board.destination(move))]
        # Onward moves are the moves the search tries, and none are left only when blocked.
        assert {(move.code, board.destination(move)) for move in onward} >= set(board.moves())
        assert bool(onward) == bool(board.moves()) == (not game.is_blocked())
        if not onward:
            break
        twos = [move for move in onward if move.code % 13 == 1]
        move = rng.choice(twos if twos and rng.random() < 0.7 else onward)
        placed = game.placed
        game.play(move)
        assert game.placed >= placed
        assert game.grid_codes() not in positions
        positions.add(game.grid_codes())


#: Deal XDY3-YQU5-ZCY2-5SN5 after 19 hinted moves: the hint of the code before the onward
#: order moved the 2 of spades from row 4 to row 2 here, and back, for ever.
SHUFFLED_TWO = """
2H 2C QD KD -- TS 8S 7C 8C 6H 7H 3S KC
2S 4S KH 2D -- JC 3C 9C TC QC 5D 6D 7D
3D 8D 9D TD 3H JD 4C 5C 6C 8H 9H 4D 5S
-- QS 5H TH JH QH 7S 9S 4H KS -- 6S JS
"""


def test_a_lone_2_moves_between_two_column_1_gaps_one_way_only() -> None:
    board = Board.of(Game.from_layout(SHUFFLED_TWO, "classic"))
    two_of_spades = Move.parse("2S>4").code
    row_2, row_4 = 13, 39
    assert board.where[two_of_spades] == row_2
    assert not board.is_onward(two_of_spades, row_4)
    assert (two_of_spades, row_4) not in board.moves()
    board.play(two_of_spades, row_4)  # made anyway: back is then the onward way
    assert board.is_onward(two_of_spades, row_2)
    assert (two_of_spades, row_2) in board.moves()


def test_a_2_shuffle_that_places_a_card_is_onward_whatever_the_order() -> None:
    # The 3 of hearts waits in row 4's column 2; the 3 of spades hangs on the 2 in row 2.
    layout = (
        SHUFFLED_TWO.replace("2S 4S KH", "2S 3S KH").replace("7H 3S KC", "7H 4S KC")
        .replace("-- QS 5H", "-- 3H 5H").replace("TD 3H JD", "TD QS JD")
    )
    board = Board.of(Game.from_layout(layout, "classic"))
    two_of_hearts, two_of_spades = Move.parse("2H>4").code, Move.parse("2S>4").code
    row_1, row_4 = 0, 39
    assert board.where[two_of_hearts] == row_1
    assert shuffle_rank(board.grid, row_1) < shuffle_rank(board.grid, row_4)
    assert board.is_onward(two_of_hearts, row_4)  # against the order, but it places the 3
    assert not board.is_onward(two_of_spades, row_4)  # it would leave the 3 of spades behind


def test_a_greedy_move_passes_over_the_positions_it_is_told_to_avoid() -> None:
    board = Board.of(Game.from_layout(SHUFFLED_TWO, "classic"))
    after = {}
    for code, to in board.moves():
        undo = board.play(code, to)
        after[code, to] = board.key
        board.take_back(undo)
    best = greedy_move(board, random.Random(1))
    assert best is not None
    second = greedy_move(board, random.Random(1), {after[best]})
    assert second is not None and second != best
    assert greedy_move(board, random.Random(1), set(after.values())) is None
