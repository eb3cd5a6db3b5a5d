"""The fewest moves: an estimate that never overestimates, lines as short as any there is."""

from __future__ import annotations

import random
from collections import deque
from itertools import count

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import Game, Move, Seed
from gaps import shortest as shortest_module
from gaps.frontier import cells_of as frontier_cells_of
from gaps.shortest import Shortest, fewest_moves, moves_to_win
from gaps.solver import solve
from tests.test_frontier import scrambled
from tests.test_solver import DEAD, WON, WON_IN_TWO, deal, reachable, replayed

# 5C and 6C stand on each other's cells: two cards off home in one cycle, three moves at
# least (the first of them to move cannot go home).
SWAPPED = """
2C 3C 4C 6C 5C 7C 8C 9C TC JC QC KC --
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS --
"""
# Spades head row 1 and clubs row 4: the rows' order is free, nothing is off home.
ROWS_SWAPPED = """
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS --
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH --
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC --
"""


def cells_of(game: Game) -> bytes:
    return frontier_cells_of(game.grid_codes())


def distances(game: Game, target: int) -> dict[tuple[int, ...], int]:
    """The fewest moves from each position reachable from ``game`` to one placing
    ``target`` cards (positions that never do are left out), by the engine."""
    positions = {position.grid_codes(): position for position in reachable(game)}
    before: dict[tuple[int, ...], list[tuple[int, ...]]] = {grid: [] for grid in positions}
    for grid, position in positions.items():
        for move in position.legal_moves():
            after = position.copy()
            after.play(move)
            before[after.grid_codes()].append(grid)
    found = {grid: 0 for grid, position in positions.items() if position.placed >= target}
    queue = deque(found)
    while queue:
        grid = queue.popleft()
        for earlier in before[grid]:
            if earlier not in found:
                found[earlier] = found[grid] + 1
                queue.append(earlier)
    return found


def test_a_won_position_needs_no_move() -> None:
    assert moves_to_win(cells_of(Game.from_layout(WON, "no-redeal"))) == 0


def test_rows_may_hold_their_suits_in_any_order() -> None:
    assert moves_to_win(cells_of(Game.from_layout(ROWS_SWAPPED, "no-redeal"))) == 0


def test_each_card_off_home_costs_a_move() -> None:
    assert moves_to_win(cells_of(Game.from_layout(WON_IN_TWO, "no-redeal"))) == 2


def test_a_cycle_of_cards_on_each_others_cells_costs_one_move_more() -> None:
    assert moves_to_win(cells_of(Game.from_layout(SWAPPED, "no-redeal"))) == 3


def test_the_estimate_refuses_a_grid_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="52 cells, not 51"):
        moves_to_win(bytes(51))


@pytest.mark.parametrize("number", range(12))
def test_the_estimate_never_exceeds_the_moves_left_to_win(number: int) -> None:
    rng = random.Random(number)
    checked = 0
    while checked < 3:
        game = scrambled(rng, rng.randint(6, 11))
        left = distances(game, 48)
        for grid, moves in left.items():
            position = Game.restore(Seed(b"scrambled"), "no-redeal", list(grid))
            assert moves_to_win(cells_of(position)) <= moves, position.layout()
        checked += bool(left)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=10, max_size=10), cells=st.integers(5, 20))
def test_one_move_changes_the_estimate_by_at_most_one(data: bytes, cells: int) -> None:
    # Consistency: with it, A* never finds a shorter way to a position it has expanded.
    game = scrambled(random.Random(data), cells)
    here = moves_to_win(cells_of(game))
    for move in game.legal_moves():
        after = game.copy()
        after.play(move)
        assert abs(moves_to_win(cells_of(after)) - here) <= 1, (game.layout(), move)


@pytest.fixture(params=["python", "compiled"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test on the Python search, then on the compiled core (where it was built)."""
    if request.param == "python":
        monkeypatch.setattr(shortest_module, "COMPILED", False)
    elif not shortest_module.COMPILED:
        pytest.skip("gaps._speedups was not built")
    return str(request.param)


@pytest.mark.parametrize("number", range(25))
def test_the_line_is_as_short_as_a_breadth_first_search_of_the_engine_finds(
    number: int, search: str,
) -> None:
    game = scrambled(random.Random(1000 + number), random.Random(number).randint(7, 12))
    result = fewest_moves(game)
    assert result.exact
    assert replayed(game, result.line).placed == result.placed
    assert len(result.line) == result.lower_bound == distances(game, result.placed)[
        game.grid_codes()
    ]


def test_a_won_position_is_reached_in_no_moves() -> None:
    result = fewest_moves(Game.from_layout(WON, "no-redeal"))
    assert (result.status, result.line, result.lower_bound) == ("won", (), 0)


def test_the_shortest_win_of_two_moves_is_those_two() -> None:
    result = fewest_moves(Game.from_layout(WON_IN_TWO, "no-redeal"))
    assert result.line == (Move.parse("QS"), Move.parse("KS"))
    assert result.exact


def test_a_position_with_nothing_to_play_is_lost_in_no_moves() -> None:
    result = fewest_moves(Game.from_layout(DEAD, "no-redeal"))
    assert (result.status, result.placed, result.line, result.exact) == ("lost", 0, (), True)


@pytest.mark.parametrize("number", [2, 7, 12])
def test_a_whole_deal_gets_a_winning_line_no_longer_than_the_solvers_and_a_bound_below_it(
    number: int,
) -> None:
    game = deal(number)
    result = fewest_moves(game, max_nodes=60_000)
    assert result.status == "won"
    assert replayed(game, result.line).is_won()
    assert 0 < result.lower_bound <= len(result.line)
    assert result.lower_bound >= moves_to_win(cells_of(game))


def test_the_shortest_line_to_a_lost_deals_best_count_replays_to_it(search: str) -> None:
    game = deal(173)  # lost
    result = fewest_moves(game)
    assert (result.status, result.exact) == ("lost", True)
    assert replayed(game, result.line).placed == result.placed
    assert len(result.line) == distances(game, result.placed)[game.grid_codes()]


def endgame(number: int, moves_left: int) -> Game:
    """Deal ``number`` with the solver's winning line played but its last ``moves_left``."""
    game = deal(number)
    line = solve(game).line
    return replayed(game, line[:len(line) - moves_left])


def test_an_endgame_is_won_in_fewer_moves_than_the_solvers_line_plays(search: str) -> None:
    game = endgame(2, 60)
    result = fewest_moves(game)
    assert result.exact
    assert len(result.line) == 58
    assert replayed(game, result.line).is_won()


@pytest.mark.parametrize("max_nodes", [400, 800, 1_600])
def test_a_node_budget_leaves_a_bound_below_the_fewest_moves_and_a_line_above(
    max_nodes: int, search: str,
) -> None:
    game = endgame(2, 60)  # 58 moves at the fewest, found after about 2,300 nodes
    result = fewest_moves(game, max_nodes=max_nodes)
    assert (result.status, result.exhausted) == ("won", "nodes")
    assert result.lower_bound <= 58 <= len(result.line)
    assert replayed(game, result.line).is_won()


def test_a_time_budget_runs_out_on_a_clock_that_runs_fast() -> None:
    ticks = count()
    result = fewest_moves(deal(7), time_budget_s=50.0, clock=lambda: float(next(ticks)))
    assert result.exhausted == "time"
    assert not result.exact
    assert result.lower_bound < len(result.line)


def test_a_deal_the_solve_leaves_unknown_has_no_bound_on_its_moves() -> None:
    result = fewest_moves(deal(7), max_nodes=500)
    assert (result.status, result.lower_bound, result.exhausted) == ("unknown", 0, "nodes")
    assert replayed(deal(7), result.line).placed == result.placed


@pytest.mark.parametrize("number", [0, 2])
def test_a_solve_cut_short_before_its_first_move_is_unknown_with_no_line(number: int) -> None:
    result = fewest_moves(deal(number), max_nodes=1)
    assert (result.status, result.line, result.lower_bound) == ("unknown", (), 0)
    assert (result.exhausted, result.exact) == ("nodes", False)


def test_a_result_prints_as_its_constructor() -> None:
    result = fewest_moves(Game.from_layout(WON_IN_TWO, "no-redeal"))
    assert eval(repr(result)) == result


def test_a_result_refuses_a_bound_above_its_line_or_one_that_contradicts_the_budget() -> None:
    with pytest.raises(ValueError, match="lower bound of 3 moves for a line of 0"):
        Shortest("won", 48, (), 3, 10, 0.1)
    with pytest.raises(ValueError, match="shortest exactly when"):
        Shortest("won", 48, (Move.parse("QS"),), 0, 10, 0.1)
    with pytest.raises(ValueError, match="shortest exactly when"):
        Shortest("won", 48, (), 0, 10, 0.1, exhausted="time")
    with pytest.raises(ValueError, match="unknown verdict has a budget that ran out"):
        Shortest("unknown", 30, (), 0, 10, 0.1)
    with pytest.raises(ValueError, match="unknown verdict has a budget that ran out"):
        Shortest("unknown", 30, (Move.parse("QS"),), 1, 10, 0.1, exhausted="time")
