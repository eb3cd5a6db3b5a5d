"""The best-first search: the same exact answers as the depth-first one, sooner wins."""

from __future__ import annotations

import random

import pytest

from gaps import Game, Move, Seed
from gaps.board import ALL_PLACED, move_for
from gaps.frontier import best_first, placed_in
from gaps.solver import Budget, solve
from tests.test_solver import WON, deal, most_placed, replayed

_GAP_BYTE = 255

# Playing 3D right of 2D extends a preserved sequence and places 11 cards at once, but
# leaves the gap right of KD dead: the position is won, yet no line after that move
# places more than 34 cards. Such a move is tried first, never alone.
FORCED_LOSES = """
-- 3C 4C 5C 6C 7C 8C 9C TC 3S QC KC QS
2D -- 4D 5D 6D 7D 8D 9D TD JD QD KD 3D
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2S JC 4S 5S 6S 7S 8S 9S TS JS 2C KS --
"""


def scrambled(rng: random.Random, cells: int) -> Game:
    """A won grid with ``cells`` random cells (the 4 gaps among them) shuffled."""
    grid = list(Game.from_layout(WON, "no-redeal").grid_codes())
    gaps = [index for index, code in enumerate(grid) if code < 0]
    others = rng.sample([index for index in range(52) if index not in gaps], cells - 4)
    chosen = gaps + others
    contents = [grid[index] for index in chosen]
    rng.shuffle(contents)
    for index, code in zip(chosen, contents, strict=True):
        grid[index] = code
    return Game.restore(Seed(b"scrambled"), "no-redeal", grid)


def test_both_orders_agree_on_two_thousand_scrambled_positions() -> None:
    rng = random.Random(15)
    for _ in range(2_000):
        game = scrambled(rng, rng.randint(5, 12))
        first = solve(game, order="best-first")
        depth = solve(game, order="depth-first")
        assert (first.status, first.placed) == (depth.status, depth.placed), game.layout()
        assert first.exact
        assert replayed(game, first.line).placed == first.placed


@pytest.mark.parametrize("number", range(20))
def test_a_scrambled_position_places_what_the_engine_search_finds(number: int) -> None:
    game = scrambled(random.Random(number), 10)
    verdict = solve(game, order="best-first")
    assert verdict.placed == most_placed(game)


def test_a_move_extending_a_sequence_is_not_forced_yet_is_tried_first() -> None:
    game = Game.from_layout(FORCED_LOSES, "no-redeal")
    after = game.copy()
    after.play(Move.parse("3D"))
    assert after.placed > game.placed
    won, lost = solve(game), solve(after)
    assert (won.status, lost.status) == ("won", "lost")
    assert lost.placed < ALL_PLACED
    assert lost.placed == solve(after, order="depth-first").placed
    assert replayed(game, won.line).is_won()


def test_deferring_moves_changes_no_answer_only_the_order() -> None:
    rng = random.Random(151)
    for _ in range(300):
        grid = list(scrambled(rng, rng.randint(6, 14)).grid_codes())
        deferred = best_first(grid, Budget())
        at_once = best_first(grid, Budget(), defer=False)
        assert (deferred[0], deferred[2]) == (at_once[0], at_once[2])


def test_the_bound_changes_no_answer_only_what_is_stored() -> None:
    rng = random.Random(152)
    for _ in range(300):
        grid = list(scrambled(rng, rng.randint(6, 14)).grid_codes())
        bounded = best_first(grid, Budget(), compiled=False)
        unbounded = best_first(grid, Budget(), bound=False, compiled=False)
        assert (bounded[0], bounded[2]) == (unbounded[0], unbounded[2])
        if bounded[0] < ALL_PLACED:  # searched to the end: the bounded one stores a subset
            assert bounded[3] <= unbounded[3]


def test_the_bound_proves_a_lost_deal_lost_from_a_fraction_of_its_positions() -> None:
    grid = list(deal(84).grid_codes())
    placed, plan, complete, nodes = best_first(grid, Budget())
    unbounded = best_first(grid, Budget(), bound=False)
    assert (placed, complete) == (unbounded[0], unbounded[2]) == (30, True)
    assert nodes * 4 < unbounded[3]
    assert replayed(deal(84), tuple(move_for(code, to) for code, to in plan)).placed == 30


def test_a_search_for_wins_only_tells_won_from_not_won_as_the_full_search_does() -> None:
    rng = random.Random(153)
    for _ in range(300):
        grid = list(scrambled(rng, rng.randint(6, 14)).grid_codes())
        wins = best_first(grid, Budget(), wins_only=True, compiled=False)
        full = best_first(grid, Budget(), compiled=False)
        assert (wins[0] == ALL_PLACED) == (full[0] == ALL_PLACED)
        assert wins[2] and wins[0] <= full[0]


def test_a_search_for_wins_only_proves_a_lost_deal_unwinnable_sooner() -> None:
    grid = list(deal(84).grid_codes())
    placed, plan, complete, nodes = best_first(grid, Budget(), wins_only=True)
    assert complete and placed < ALL_PLACED
    assert nodes < best_first(grid, Budget())[3]
    assert replayed(deal(84), tuple(move_for(code, to) for code, to in plan)).placed == placed


def test_placed_in_counts_what_the_engine_counts() -> None:
    rng = random.Random(3)
    for number in range(200):
        game = scrambled(rng, 16) if number % 2 else deal(number)
        cells = bytes(_GAP_BYTE if code < 0 else code for code in game.grid_codes())
        assert placed_in(cells) == game.placed


def test_a_node_budget_leaves_it_incomplete_with_a_line_that_reaches_its_count() -> None:
    game = deal(5)
    budget = Budget(max_nodes=2_000)
    placed, plan, complete, nodes = best_first(list(game.grid_codes()), budget)
    assert (complete, budget.exhausted) == (False, "nodes")
    assert nodes >= 2_000
    assert replayed(game, tuple(move_for(code, to) for code, to in plan)).placed == placed


def test_a_won_deal_is_won_sooner_than_depth_first() -> None:
    game = deal(2)
    first = solve(game, max_nodes=100_000, order="best-first")
    assert first.status == "won"
    assert solve(game, max_nodes=first.nodes, order="depth-first").status == "unknown"


def test_an_unknown_order_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="sideways"):
        solve(deal(0), order="sideways")
