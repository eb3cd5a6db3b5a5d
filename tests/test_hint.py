"""Hints: a legal, useful action, quick enough for an interactive client; following them
ends the game without ever coming back to a position of the same deal."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings

from gaps import RULESETS, Game, Seed
from gaps.hint import hint
from gaps.move import REDEAL, STOP, Move
from tests.test_bots import SEEDS, play_to_the_end

NEARLY_WON_BLOCKED = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2S 3S 4S 5S 6S 7S 8S 9S KS -- TS JS QS
"""


def positions(ruleset: str, count: int) -> list[Game]:
    """Games part-way through random play, some of them blocked."""
    rng = random.Random(ruleset)
    games = []
    for number in range(count):
        game = Game(Seed(number.to_bytes(10, "big")), ruleset)
        game.random_playout(rng, redeal=False, max_moves=rng.randrange(0, 40))
        games.append(game)
    return games


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_a_hint_is_a_legal_action(ruleset: str) -> None:
    for game in positions(ruleset, 8):
        action = hint(game)
        if game.is_over():  # a blocked no-redeal game is lost
            assert action is None
            continue
        assert action is not None
        game.push(action)  # raises if it is not legal


def test_a_hint_is_the_same_for_the_same_position() -> None:
    for game in positions("classic", 5):
        assert hint(game) == hint(game.copy())


def test_there_is_no_hint_once_the_game_is_over() -> None:
    game = Game(Seed(b"over"), "no-redeal")
    game.random_playout(random.Random(1))
    assert game.is_over()
    assert hint(game) is None
    stopped = Game(Seed(b"stopped"), "classic")
    stopped.stop()
    assert hint(stopped) is None


def test_a_blocked_position_gets_a_redeal_or_a_stop_as_its_hint() -> None:
    blocked = [game for game in positions("classic", 20) if game.is_blocked()]
    assert blocked
    for game in blocked:
        assert hint(game) in (REDEAL, STOP)


def test_a_blocked_position_with_few_cards_placed_gets_a_redeal_as_its_hint() -> None:
    game = Game(Seed((11).to_bytes(10, "big")), "classic")
    game.random_playout(random.Random(3), redeal=False)
    assert game.is_blocked() and game.placed < 20
    assert hint(game) == REDEAL


def test_a_blocked_position_four_cards_from_a_win_gets_stop_as_its_hint() -> None:
    game = Game.from_layout(NEARLY_WON_BLOCKED, "classic")
    assert hint(game) == STOP


def test_a_hint_takes_the_winning_move() -> None:
    game = Game.from_layout(NEARLY_WON_BLOCKED.replace("KS -- TS JS QS", "TS JS QS -- KS"))
    assert hint(game) == Move.parse("KS")


def test_a_hint_comes_quickly() -> None:
    games = positions("classic", 10) + positions("addiction", 10)
    start = time.perf_counter()
    for game in games:
        hint(game)
    per_hint = (time.perf_counter() - start) / len(games)
    assert per_hint < 0.25  # about 10-50 ms on an idle core; slack for a busy machine


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
@settings(max_examples=3, deadline=None)
@given(data=SEEDS)
def test_following_the_hint_ends_the_game_and_never_comes_back_to_a_position(
    ruleset: str, data: bytes
) -> None:
    play_to_the_end(hint, Game(Seed(data), ruleset))


def test_following_the_hint_from_the_deal_it_once_shuttled_a_2_on_ends_the_game() -> None:
    # The hint used to move the 2 of spades between rows 2 and 4 for ever after 19 moves.
    game = Game(Seed.parse("XDY3-YQU5-ZCY2-5SN5"), "classic")
    play_to_the_end(hint, game)
    assert game.is_over() and game.placed > 2
