"""The fewest moves to a deal's best result: an A* search over the positions of one deal.

``fewest_moves(game)`` decides the deal first (the best-first search of ``gaps.frontier``,
as ``gaps.solver.solve`` does): its verdict says what the best result is (48 placed for a
won deal, the exact maximum for a lost one) and gives a line reaching it. Then the line's
tails are shortened, and an A* search from the deal looks for a shorter line to that
result. It ends with the shortest line (``exact``), or, when a budget runs out, with the
shortest line found and a lower bound: no line reaching the result has fewer moves.

The search (docs/solver.md, "Fewest moves", proves each rule):

* positions keyed on the grid with its rows sorted, as in ``gaps.frontier``: swapping rows
  maps lines to lines of the same length;
* ``moves_to_win(cells)``, an admissible and consistent estimate of the moves left to a
  win: the cards off their cell in the won layout, plus one for each cycle of cards
  standing on each other's cells, the fewest over the 24 ways to give the rows their suits;
  for a lost deal's count the estimate is 1 until the count is reached;
* a position whose ``gaps.bound.upper_bound`` is below the result, or whose estimate says
  it cannot beat the best line known, is not stored.
"""

from __future__ import annotations

import heapq
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import permutations
from typing import Final

from gaps.board import ALL_PLACED, CELLS, COLUMNS, move_for
from gaps.bound import upper_bound
from gaps.frontier import (
    CHECK_EVERY,
    COMPILED,
    GAP_BYTE,
    best_first,
    canonical,
    cells_of,
    keys_to,
    line_through,
    moves_in,
    placed_in,
)
from gaps.game import GAP, Game
from gaps.move import Move
from gaps.solver import MAX_MEMORY_MB, MAX_NODES, TIME_BUDGET_S, Budget

try:
    from gaps import _speedups
except ImportError:  # not built (no compiler at install): the pure-Python search runs
    _speedups = None  # type: ignore[assignment]

__all__ = ["Shortest", "fewest_moves", "moves_to_win", "shorten_tails", "shortest_line"]

#: Tails of this many moves, twice as many, ... are shortened first (``shorten_tails``),
#: each within this share of the budget left.
_TAIL_STEP: Final = 20
_TAIL_SHARE: Final = 8
#: The compiled search counts moves in a byte: it takes known lines below this.
_COMPILED_LONGEST: Final = 256

#: Bytes a stored position costs beside its key: two dicts' slots, the closed set's and a
#: heap entry (tracemalloc: 221 bytes a position in all, the key's 85 included).
_ENTRY_OVERHEAD: Final = 140
_SUITS_TO_ROWS: Final = tuple(permutations(range(4)))
#: A card's column in the won layout (rank 2 in column 1); None for an Ace (not dealt).
_HOME_COLUMN: Final = tuple(None if code % 13 == 0 else code % 13 - 1 for code in range(CELLS))


def moves_to_win(cells: bytes | bytearray) -> int:
    """At least the moves any line from ``cells`` needs to win (0 for a won position).

    ``cells`` is a position's 52 cells, row by row: a card code, or 255 for a gap. For
    each way to give the rows their suits, every card off its cell must move at least once,
    and a cycle of cards each standing on the next one's cell costs one move more (its
    first card to move cannot go home): the fewest over the 24 ways.
    """
    if len(cells) != CELLS:
        raise ValueError(f"a position has {CELLS} cells, not {len(cells)}")
    where = [0] * CELLS
    for cell, code in enumerate(cells):
        if code != GAP_BYTE:
            where[code] = cell
    # home[suit][row]: the cards of the suit on their cell if the suit gets the row
    home = [[0, 0, 0, 0] for _ in range(4)]
    for code in range(CELLS):
        column = _HOME_COLUMN[code]
        if column is not None and where[code] % COLUMNS == column:
            home[code // 13][where[code] // COLUMNS] += 1
    ranked = sorted(
        (ALL_PLACED - home[0][a] - home[1][b] - home[2][c] - home[3][d], (a, b, c, d))
        for a, b, c, d in _SUITS_TO_ROWS
    )
    best = ALL_PLACED * 2
    for off_home, rows in ranked:
        if off_home >= best:
            break  # cycles only add: no later assignment does better
        best = min(best, off_home + _cycles(cells, where, rows))
    return best


def _cycles(cells: bytes | bytearray, where: list[int], rows: tuple[int, ...]) -> int:
    """The cycles of cards each standing on the next one's home cell, suits in ``rows``.

    A card points at the card on its home cell: each card has one home cell and each cell
    one card, so the cards off home form chains (ending at a gap) and cycles.
    """
    visited = bytearray(CELLS)
    cycles = 0
    for first in range(CELLS):
        column = _HOME_COLUMN[first]
        if column is None or visited[first]:
            continue
        code = first
        while True:
            visited[code] = 1
            home = rows[code // 13] * COLUMNS + (code % 13) - 1
            if where[code] == home:
                break  # at home: no pointer
            standing = cells[home]
            if standing == first:
                cycles += 1
                break
            if standing == GAP_BYTE or visited[standing]:
                break  # a chain, or one met already (it holds no cycle through ``first``)
            code = standing
    return cycles


@dataclass(frozen=True)
class Shortest:
    """What ``fewest_moves`` found for one deal, without redeal.

    ``status`` and ``placed`` are the solver's verdict (``won``, ``lost`` or ``unknown``,
    see ``gaps.solver.Verdict``); ``line`` places ``placed`` cards and is the shortest line
    found to do so. ``lower_bound``: no line placing ``placed`` has fewer moves. ``exact``
    (no budget ran out) when ``len(line) == lower_bound``; otherwise ``exhausted`` names the
    budget. When the verdict itself is ``unknown`` the best count is not known, nor its
    fewest moves: ``lower_bound`` is 0.
    """

    status: str
    placed: int
    line: tuple[Move, ...]
    lower_bound: int
    nodes: int
    seconds: float
    exhausted: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.lower_bound <= len(self.line):
            raise ValueError(
                f"a lower bound of {self.lower_bound} moves for a line of {len(self.line)}"
            )
        if self.status == "unknown":
            if self.exhausted is None or self.lower_bound:
                raise ValueError(
                    "an unknown verdict has a budget that ran out and no bound on its moves"
                )
        elif (self.exhausted is None) != (self.lower_bound == len(self.line)):
            raise ValueError("a line is the shortest exactly when no budget ran out")

    @property
    def exact(self) -> bool:
        return self.exhausted is None

    def __str__(self) -> str:
        if self.exact:
            moves = f"fewest {len(self.line)} moves (exact)"
        else:
            moves = (
                f"a line of {len(self.line)} moves, at least {self.lower_bound} "
                f"({self.exhausted} budget ran out)"
            )
        return (
            f"{self.status}: {self.placed} placed: {moves}, {self.nodes} nodes, "
            f"{self.seconds:.3f} s"
        )


def fewest_moves(
    game: Game,
    *,
    max_nodes: int = MAX_NODES,
    time_budget_s: float = TIME_BUDGET_S,
    max_memory_mb: float = MAX_MEMORY_MB,
    clock: Callable[[], float] = time.monotonic,
) -> Shortest:
    """The fewest moves from ``game``'s position to the most cards its deal can place.

    One budget (``max_nodes`` positions, ``time_budget_s`` seconds by ``clock``, about
    ``max_memory_mb`` MB of tables) covers both searches: the solve, which finds the best
    count and a line, then the search for a shorter line. ``game`` is left as it was.
    """
    budget = Budget(
        max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb,
        clock=clock,
    )
    grid = list(game.grid_codes())
    placed, witness, complete, nodes = best_first(grid, budget)
    if not complete:
        return Shortest(
            status="unknown", placed=placed, line=_moves(witness), lower_bound=0,
            nodes=nodes, seconds=round(budget.seconds(), 6), exhausted=budget.exhausted,
        )
    shortened, searched = shorten_tails(grid, placed, witness, budget)
    plan, lower_bound, nodes_from_start = shortest_line(grid, placed, budget, known=shortened)
    searched += nodes_from_start
    return Shortest(
        status="won" if placed == ALL_PLACED else "lost",
        placed=placed,
        line=_moves(plan),
        lower_bound=lower_bound,
        nodes=nodes + searched,
        seconds=round(budget.seconds(), 6),
        exhausted=None if lower_bound == len(plan) else budget.exhausted,
    )


def shorten_tails(
    grid: list[int], target: int, plan: list[tuple[int, int]], budget: Budget
) -> tuple[list[tuple[int, int]], int]:
    """(``plan`` with its last moves replaced by the fewest that do as much, new positions
    met): the tails of ``_TAIL_STEP``, 2 x ``_TAIL_STEP``, ... moves, each searched within a
    ``_TAIL_SHARE`` of the nodes and seconds ``budget`` has left, while each ends.

    A shorter known line lets the search from the deal skip every position that cannot
    beat it, and the fewest moves of a tail are cheap to find: its positions are near the
    goal, where the estimate is close (docs/solver.md, "Fewest moves").
    """
    nodes = 0
    moves_left = _TAIL_STEP
    while moves_left < len(plan):
        nodes_left = budget.max_nodes - budget.nodes
        seconds_left = budget.time_budget_s - budget.seconds()
        if nodes_left < _TAIL_SHARE or seconds_left <= 0:
            break
        part = Budget(
            max_nodes=nodes_left // _TAIL_SHARE, time_budget_s=seconds_left / _TAIL_SHARE,
            max_memory_mb=budget.max_memory_mb, clock=budget.clock,
        )
        split = len(plan) - moves_left
        tail, _, met = shortest_line(
            _played(grid, plan[:split]), target, part, known=plan[split:]
        )
        nodes += met
        budget.nodes += met
        if part.exhausted is not None:
            break  # a longer tail would cost more still
        plan = plan[:split] + tail
        moves_left += _TAIL_STEP
    return plan, nodes


def _played(grid: list[int], plan: list[tuple[int, int]]) -> list[int]:
    """``grid`` after the moves of ``plan``."""
    grid = list(grid)
    for code, to in plan:
        grid[grid.index(code)] = GAP
        grid[to] = code
    return grid


def _moves(plan: list[tuple[int, int]]) -> tuple[Move, ...]:
    return tuple(move_for(code, to) for code, to in plan)


def shortest_line(
    grid: list[int],
    target: int,
    budget: Budget,
    *,
    known: list[tuple[int, int]],
    compiled: bool | None = None,
) -> tuple[list[tuple[int, int]], int, int]:
    """(line, lower bound, new positions met): the fewest moves from ``grid`` to a position
    placing at least ``target`` cards, which ``known`` (a line) does.

    The line is ``known`` unless a shorter one was found; the lower bound equals its length
    when it is the shortest (the search ended), and is otherwise the least estimated length
    of the lines still waiting when ``budget`` ran out. ``target`` must be the most ``grid``
    can place for the estimate of a lost deal's count to be all there is to it.

    ``compiled`` picks the compiled core (True: it must have been built, and ``known``
    must be shorter than the 256 moves it counts up to) or the Python (False); by default
    the compiled one when it can. Both find lines of the same length.
    """
    start = canonical(cells_of(grid))
    longest = len(known)  # only lines shorter than this are looked for
    if compiled is None:
        compiled = COMPILED and longest < _COMPILED_LONGEST
    if compiled:
        if _speedups is None:
            raise RuntimeError("the compiled core gaps._speedups was not built")
        keys, lower_bound, met = _speedups.fewest_moves(start, budget, target, longest)
        if keys is None:
            return known, lower_bound, met
        return line_through(grid, keys[1:]), lower_bound, met
    estimate = moves_to_win if target == ALL_PLACED else _short_of(target)
    start_estimate = estimate(start)
    if start_estimate >= longest:
        return known, longest, 0
    parent: dict[bytes, bytes | None] = {start: None}
    moves: dict[bytes, int] = {start: 0}
    closed: set[bytes] = set()
    # (estimated length, -moves made, key): the least estimate first, the deepest among equals
    waiting = [(start_estimate, 0, start)]
    entry_bytes = sys.getsizeof(start) + _ENTRY_OVERHEAD
    tables_before = budget.table_bytes
    nodes = 0
    next_check = 0
    found: bytes | None = None
    while waiting:
        if budget.nodes >= budget.max_nodes or nodes >= next_check:
            next_check = nodes + CHECK_EVERY
            budget.table_bytes = tables_before + len(parent) * entry_bytes
            if not budget.check():
                break
        _, negative_made, key = heapq.heappop(waiting)
        if key in closed:
            continue  # an entry left behind when a shorter line reached the key
        if placed_in(key) >= target:
            found = key
            break
        closed.add(key)
        made = 1 - negative_made  # the children's moves
        for child in _children(key):
            if child in closed or moves.get(child, longest) <= made:
                continue
            child_estimate = estimate(child)
            if made + child_estimate >= longest or upper_bound(child) < target:
                continue  # cannot beat the known line, or never places the target
            if child not in moves:
                nodes += 1
                budget.nodes += 1
            moves[child] = made
            parent[child] = key
            heapq.heappush(waiting, (made + child_estimate, -made, child))
    budget.table_bytes = tables_before
    if found is None:
        while waiting and waiting[0][2] in closed:
            heapq.heappop(waiting)
        if not waiting:
            return known, longest, nodes  # every shorter line was ruled out
        # The estimates are consistent: every line still to be found is at least this long.
        return known, waiting[0][0], nodes
    line = line_through(grid, keys_to(found, parent)[1:])
    return line, len(line), nodes


def _short_of(target: int) -> Callable[[bytes], int]:
    """The estimate for a count below a win: one move while the count is not reached."""

    def estimate(cells: bytes) -> int:
        return 0 if placed_in(cells) >= target else 1

    return estimate


def _children(key: bytes) -> list[bytes]:
    """The canonical keys of the positions one legal move from ``key``."""
    children = []
    cells = bytearray(key)
    for code, gap in moves_in(key):
        came_from = key.index(code)
        cells[gap], cells[came_from] = code, GAP_BYTE
        children.append(canonical(cells))
        cells[gap], cells[came_from] = GAP_BYTE, code
    return children
