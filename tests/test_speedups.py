"""The compiled core (gaps/_speedups.c): the Python search's answers, in the same order."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from itertools import count

import pytest

from gaps import Game, Move
from gaps import frontier as frontier_module
from gaps import shortest as shortest_module
from gaps.board import ALL_PLACED, move_for
from gaps.bound import upper_bound
from gaps.frontier import COMPILED, Plan, best_first, placed_in
from gaps.shortest import moves_to_win, shortest_line
from gaps.solver import Budget, solve
from tests.test_frontier import scrambled
from tests.test_solver import WON_IN_TWO, deal, replayed

needs_core = pytest.mark.skipif(not COMPILED, reason="gaps._speedups was not built")

# A lost deal (30 cards at most) whose search stores about 110,000 positions (24,000 with
# the bound), and won deals that need 180,000 to 960,000 without the bound: more than a
# 6.6 MB table holds (about 100,000); a 1 MB table holds about 15,000.
LOST_DEAL = 84
WON_DEALS = (10, 18, 21)
SMALL_TABLE_MB = 6.6
BOUNDED_TABLE_MB = 1.0


def both(grid: list[int], max_nodes: int) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """The Python and the compiled search's answers and budgets, on fresh equal budgets."""
    answers = []
    for compiled in (False, True):
        budget = Budget(max_nodes=max_nodes)
        answer = best_first(grid, budget, compiled=compiled)
        answers.append((*answer, budget.nodes, budget.exhausted))
    return answers[0], answers[1]


def line_of(plan: Plan) -> tuple[Move, ...]:
    return tuple(move_for(code, to) for code, to in plan)


def test_the_core_is_built_wherever_a_c_compiler_is() -> None:
    if shutil.which("cc") or shutil.which("gcc"):
        assert COMPILED, "scripts/setup should have built gaps/_speedups.c"


@needs_core
def test_both_searches_give_the_same_answer_line_and_count_on_six_hundred_positions() -> None:
    rng = random.Random(1511)
    for _ in range(600):
        game = scrambled(rng, rng.randint(5, 18))
        python, compiled = both(list(game.grid_codes()), max_nodes=rng.choice((30, 300, 3_000)))
        assert python == compiled, game.layout()


@needs_core
@pytest.mark.parametrize("number", range(0, 12, 2))
def test_both_searches_expand_a_whole_deal_in_the_same_order(number: int) -> None:
    python, compiled = both(list(deal(number).grid_codes()), max_nodes=20_000)
    assert python == compiled


@needs_core
@pytest.mark.parametrize("options", [{"bound": False}, {"wins_only": True}], ids=str)
def test_both_searches_agree_without_the_bound_and_when_they_look_for_wins_only(
    options: dict[str, bool],
) -> None:
    rng = random.Random(1512)
    for _ in range(300):
        grid = list(scrambled(rng, rng.randint(5, 18)).grid_codes())
        python = best_first(grid, Budget(max_nodes=3_000), compiled=False, **options)
        assert best_first(grid, Budget(max_nodes=3_000), compiled=True, **options) == python


@needs_core
def test_the_compiled_bound_is_the_python_bound_on_two_thousand_positions() -> None:
    from gaps import _speedups

    rng = random.Random(1513)
    for number in range(2_000):
        game = scrambled(rng, rng.randint(5, 52)) if number % 2 else deal(number)
        key = bytes(255 if code < 0 else code for code in game.grid_codes())
        assert _speedups.upper_bound(key) == upper_bound(key), game.layout()


@needs_core
def test_both_searches_agree_when_every_move_is_expanded_at_once() -> None:
    rng = random.Random(7)
    for _ in range(200):
        grid = list(scrambled(rng, rng.randint(6, 14)).grid_codes())
        python = best_first(grid, Budget(), defer=False, compiled=False)
        assert best_first(grid, Budget(), defer=False, compiled=True) == python


@needs_core
def test_the_compiled_search_reads_the_budgets_clock_like_the_python_one() -> None:
    budgets = []
    for compiled in (False, True):
        ticks = count()

        def clock(ticks: Iterator[int] = ticks) -> float:
            return float(next(ticks))

        budget = Budget(time_budget_s=5.0, clock=clock)
        budgets.append((best_first(list(deal(7).grid_codes()), budget, compiled=compiled),
                        budget.exhausted, budget.nodes))
    assert budgets[0] == budgets[1]
    assert budgets[1][1] == "time"


@needs_core
def test_a_search_leaves_the_budget_counting_its_nodes_and_no_table() -> None:
    budget = Budget(max_nodes=1_000_000)
    budget.nodes, budget.table_bytes = 500, 1_000
    placed, plan, complete, nodes = best_first(list(deal(7).grid_codes()), budget)
    assert (placed, complete) == (ALL_PLACED, True)
    assert (budget.nodes, budget.table_bytes) == (500 + nodes, 1_000)


@needs_core
@pytest.mark.parametrize(("bound", "table_mb", "positions"), [(False, SMALL_TABLE_MB, 110_000),
                                                             (True, BOUNDED_TABLE_MB, 24_000)])
def test_a_narrowed_search_never_proves_a_lost_deal_lost(
    bound: bool, table_mb: float, positions: int
) -> None:
    game = deal(LOST_DEAL)
    exact = best_first(list(game.grid_codes()), Budget(), compiled=True, narrow=False, bound=bound)
    assert exact[0] == 30 and exact[2] and exact[3] > positions
    budget = Budget(max_memory_mb=table_mb, max_nodes=2_000_000)
    placed, plan, complete, nodes = best_first(list(game.grid_codes()), budget, bound=bound)
    assert not complete
    assert budget.exhausted in ("memory", "nodes")
    assert nodes > exact[3]  # it searched on past its table's size
    assert replayed(game, line_of(plan)).placed == placed <= 30


@needs_core
@pytest.mark.parametrize(("number", "bound", "table_mb"),
                         [*((number, False, SMALL_TABLE_MB) for number in WON_DEALS),
                          (18, True, SMALL_TABLE_MB), (21, True, 3.0)])
def test_a_narrowed_search_still_wins_a_deal_its_table_cannot_hold(
    number: int, bound: bool, table_mb: float
) -> None:
    game = deal(number)
    grid = list(game.grid_codes())
    unnarrowed = Budget(max_memory_mb=table_mb)
    assert best_first(grid, unnarrowed, narrow=False, bound=bound)[2] is False
    assert unnarrowed.exhausted == "memory"
    placed, plan, complete, nodes = best_first(grid, Budget(max_memory_mb=table_mb), bound=bound)
    assert (placed, complete) == (ALL_PLACED, True)
    assert replayed(game, line_of(plan)).is_won()


def test_the_python_search_runs_where_the_core_was_not_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(frontier_module, "COMPILED", False)
    monkeypatch.setattr(frontier_module, "_speedups", None)
    game = deal(7)
    placed, plan, complete, nodes = best_first(list(game.grid_codes()), Budget())
    assert (placed, complete) == (ALL_PLACED, True)
    assert replayed(game, line_of(plan)).is_won()
    with pytest.raises(RuntimeError, match="_speedups was not built"):
        best_first(list(game.grid_codes()), Budget(), compiled=True)


@needs_core
def test_a_key_of_the_wrong_size_is_refused_by_its_size() -> None:
    from gaps import _speedups

    with pytest.raises(ValueError, match="not 51"):
        _speedups.best_first(bytes(51), Budget(), True, True, True, False)
    with pytest.raises(ValueError, match="not 51"):
        _speedups.upper_bound(bytes(51))


@needs_core
def test_a_key_that_is_not_a_position_is_refused_by_what_it_holds() -> None:
    from gaps import _speedups

    key = bytes(255 if code < 0 else code for code in deal(7).grid_codes())
    for wrong, card, message in ((6, 5, "byte 6 at cell"),  # the 6 of clubs twice
                                 (13, 5, "byte 13 at cell"),  # an Ace
                                 (52, 5, "byte 52 at cell"),  # no card at all
                                 (255, 5, "4 gaps, not 5")):
        changed = bytearray(key)
        changed[changed.index(card)] = wrong
        with pytest.raises(ValueError, match=message):
            _speedups.best_first(bytes(changed), Budget(), True, True, True, False)
        with pytest.raises(ValueError, match=message):
            _speedups.upper_bound(bytes(changed))


# -- the fewest moves (gaps.shortest) --


def cells_of(grid: list[int] | tuple[int, ...]) -> bytes:
    return bytes(255 if code < 0 else code for code in grid)


@needs_core
def test_both_estimates_of_the_moves_to_win_agree_on_two_thousand_positions() -> None:
    from gaps import _speedups

    rng = random.Random(77)
    for _ in range(2_000):
        cells = cells_of(scrambled(rng, rng.randint(5, 52)).grid_codes())
        assert _speedups.moves_to_win(cells) == moves_to_win(cells), cells


def shortest_both(game_grid: list[int], max_nodes: int) -> list[tuple[object, ...]]:
    """Python's and the compiled search's (line length, lower bound, status) from a grid,
    to the most it places, from the solver's line."""
    found = []
    for compiled in (False, True):
        budget = Budget(max_nodes=10**9)
        placed, witness, complete, _ = best_first(game_grid, budget)
        assert complete
        searched = Budget(max_nodes=max_nodes)
        line, lower_bound, _ = shortest_line(
            game_grid, placed, searched, known=witness, compiled=compiled
        )
        grid = list(game_grid)
        for code, to in line:  # legal: rebuilt move by move from the stored keys
            grid[grid.index(code)], grid[to] = -1, code
        assert placed_in(cells_of(grid)) >= placed
        found.append((len(line), lower_bound, searched.exhausted))
    return found


@needs_core
def test_both_searches_find_lines_of_the_same_fewest_moves_on_scrambled_positions() -> None:
    rng = random.Random(2024)
    for _ in range(100):
        grid = list(scrambled(rng, rng.randint(6, 20)).grid_codes())
        python, compiled = shortest_both(grid, max_nodes=10**9)
        assert python == compiled, grid


@needs_core
@pytest.mark.parametrize(("number", "moves_left"), [(2, 45), (3, 45), (7, 60), (5, 40)])
def test_both_searches_find_the_fewest_moves_of_an_endgame(number: int, moves_left: int) -> None:
    game = deal(number)
    line = solve(game).line
    endgame = replayed(game, line[:len(line) - moves_left])
    python, compiled = shortest_both(list(endgame.grid_codes()), max_nodes=10**9)
    assert python == compiled
    assert python[0] == python[1] <= moves_left


@needs_core
@pytest.mark.parametrize("max_nodes", [1, 50, 400])
def test_a_budget_leaves_both_searches_a_bound_below_the_fewest_moves(max_nodes: int) -> None:
    game = deal(2)
    line = solve(game).line
    endgame = list(replayed(game, line[:len(line) - 60]).grid_codes())  # 58 at the fewest
    for length, lower_bound, exhausted in shortest_both(endgame, max_nodes=max_nodes):
        assert exhausted == "nodes"
        assert lower_bound <= 58 <= length


def test_the_python_fewest_moves_run_where_the_core_was_not_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(frontier_module, "COMPILED", False)
    monkeypatch.setattr(frontier_module, "_speedups", None)
    monkeypatch.setattr(shortest_module, "COMPILED", False)
    monkeypatch.setattr(shortest_module, "_speedups", None)
    game = Game.from_layout(WON_IN_TWO, "no-redeal")
    result = shortest_module.fewest_moves(game)
    assert (len(result.line), result.exact) == (2, True)
    with pytest.raises(RuntimeError, match="_speedups was not built"):
        shortest_line(list(game.grid_codes()), 48, Budget(), known=[], compiled=True)


@needs_core
def test_the_compiled_fewest_moves_refuse_a_target_or_length_out_of_range() -> None:
    from gaps import _speedups

    key = cells_of(deal(7).grid_codes())
    with pytest.raises(ValueError, match="not 49 and 10"):
        _speedups.fewest_moves(key, Budget(), 49, 10)
    with pytest.raises(ValueError, match="not 48 and 256"):
        _speedups.fewest_moves(key, Budget(), 48, 256)
    with pytest.raises(ValueError, match="not 51"):
        _speedups.moves_to_win(bytes(51))


@needs_core
def test_the_compiled_fewest_moves_stop_at_nine_tenths_of_the_memory_budget() -> None:
    game = deal(2)
    line = solve(game).line
    endgame = list(replayed(game, line[:len(line) - 80]).grid_codes())  # 72,000 positions
    placed, witness, _, _ = best_first(endgame, Budget())
    budget = Budget(max_memory_mb=2.0)
    plan, lower_bound, met = shortest_line(endgame, placed, budget, known=witness, compiled=True)
    assert budget.exhausted == "memory"
    assert lower_bound < len(plan) == len(witness)
    # about 60 bytes a position: the search stopped near 1.8 MB, not 2
    assert 20_000 < met < 1.8e6 / 44
