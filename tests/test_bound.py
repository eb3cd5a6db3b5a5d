"""The upper bound: never below what a line places, and tight where cards are locked."""

from __future__ import annotations

import random

import pytest

from gaps import Game
from gaps.bound import reach, upper_bound
from tests.test_frontier import scrambled
from tests.test_solver import DEAD, ONE_ROW, WON, deal, most_placed, reachable

# Each of KC, KD and KH stands where another of them belongs: KC waits for KH to leave
# right of QC, KH for KD, KD for KC. The gap right of JS takes QS and then every gap is
# right of a King: 45 placed at most, which the bound sees without searching.
LOCKED_KINGS = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KH --
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KC --
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KD --
2S 3S 4S 5S 6S 7S 8S 9S TS JS -- KS QS
"""


def key_of(game: Game) -> bytes:
    return bytes(255 if code < 0 else code for code in game.grid_codes())


def test_a_won_position_is_bounded_by_all_its_cards() -> None:
    assert upper_bound(key_of(Game.from_layout(WON, "no-redeal"))) == 48


def test_a_position_where_nothing_moves_is_bounded_by_what_it_places() -> None:
    game = Game.from_layout(DEAD, "no-redeal")
    assert upper_bound(key_of(game)) == game.placed == 0


def test_kings_waiting_on_each_other_bound_the_count_below_a_win() -> None:
    game = Game.from_layout(LOCKED_KINGS, "no-redeal")
    assert upper_bound(key_of(game)) == most_placed(game) == 45


def test_a_row_that_can_still_be_fixed_is_counted_whole() -> None:
    game = Game.from_layout(ONE_ROW, "no-redeal")
    assert upper_bound(key_of(game)) == most_placed(game) == 12


@pytest.mark.parametrize("number", range(40))
def test_no_reachable_position_places_more_than_the_bound(number: int) -> None:
    rng = random.Random(number)
    game = scrambled(rng, rng.randint(6, 11))
    bound = upper_bound(key_of(game))
    positions = reachable(game)
    assert max(position.placed for position in positions) <= bound, game.layout()


@pytest.mark.parametrize("number", range(40))
def test_every_cell_a_card_stands_in_is_in_its_reach(number: int) -> None:
    rng = random.Random(100 + number)
    game = scrambled(rng, rng.randint(6, 11))
    masks = reach(key_of(game))
    for position in reachable(game):
        for cell, code in enumerate(position.grid_codes()):
            if code >= 0:
                assert masks[code] >> cell & 1, (game.layout(), position.layout(), code)


def test_a_deal_is_bounded_by_a_win_until_play_locks_cards() -> None:
    assert upper_bound(key_of(deal(1))) == 48


def test_a_position_of_the_wrong_size_is_refused_by_its_size() -> None:
    with pytest.raises(ValueError, match="52 cells, not 51"):
        upper_bound(bytes(51))
