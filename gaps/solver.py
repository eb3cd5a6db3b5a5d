"""An exact solver for one deal: can it be won, and how many cards can it place at most?

``solve(game)`` searches every position reachable from ``game`` by moves alone (no
redeal) and returns a ``Verdict``: ``won`` with a winning line, ``lost`` with the most
cards any line places and a line that places them, or ``unknown`` with the best line
found so far when a node, time or memory budget ran out. ``unknown`` is the only answer
a budget can cause: a verdict of ``won`` or ``lost`` is always exact.

The search (docs/solver.md proves each rule):

* depth-first, each position expanded once: a transposition table holds every position
  seen, keyed on the grid with its rows sorted (rows are interchangeable: permuting
  them maps legal moves to legal moves and keeps the placed count);
* dead gaps (right of a King or of a gap) generate no move;
* the most promising move first, and the search ends at the first win.

``solve`` runs the best-first search of ``gaps.frontier`` by default (same rules, a
different order: it finds wins sooner; it also skips the positions that ``gaps.bound``
proves cannot place more than the best found) or this depth-first one. ``explore`` is the
depth-first search with hooks for ``gaps.par``: it also collects the positions a redeal
may be taken from.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from gaps.board import ALL_PLACED, CELLS, COLUMNS, KING, TWOS, Plan, move_for, run_end
from gaps.frontier import CHECK_EVERY, GAP_BYTE, best_first, cells_of
from gaps.game import GAP, Game
from gaps.move import Move

__all__ = ["Budget", "Exploration", "Verdict", "explore", "solve"]

#: The search orders ``solve`` offers.
ORDERS: Final = ("best-first", "depth-first")
#: Default budgets of ``solve``.
MAX_NODES: Final = 2_000_000
TIME_BUDGET_S: Final = 60.0
MAX_MEMORY_MB: Final = 200.0
#: Bytes a transposition-table entry costs beside its key: the set's slot and spare room.
_ENTRY_OVERHEAD: Final = 48

class Budget:
    """Limits shared by one or more searches: nodes, seconds and table memory.

    ``clock`` returns seconds (``time.monotonic`` by default; tests pass a fake one).
    ``exhausted`` names the first limit that ran out (``nodes``, ``time``, ``memory``),
    or is None.
    """

    __slots__ = ("max_nodes", "time_budget_s", "max_memory_mb", "clock", "start", "nodes",
                 "table_bytes", "exhausted")

    def __init__(
        self,
        *,
        max_nodes: int = MAX_NODES,
        time_budget_s: float = TIME_BUDGET_S,
        max_memory_mb: float = MAX_MEMORY_MB,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_nodes < 1:
            raise ValueError(f"max_nodes must be at least 1, not {max_nodes}")
        if time_budget_s <= 0:
            raise ValueError(f"time_budget_s must be above 0, not {time_budget_s}")
        if max_memory_mb <= 0:
            raise ValueError(f"max_memory_mb must be above 0, not {max_memory_mb}")
        self.max_nodes = max_nodes
        self.time_budget_s = time_budget_s
        self.max_memory_mb = max_memory_mb
        self.clock = clock
        self.start = clock()
        self.nodes = 0
        self.table_bytes = 0  # estimated bytes of the live transposition tables
        self.exhausted: str | None = None

    def seconds(self) -> float:
        return self.clock() - self.start

    def check(self) -> bool:
        """Whether the search may go on; sets ``exhausted`` when it may not."""
        if self.exhausted is not None:
            return False
        if self.nodes >= self.max_nodes:
            self.exhausted = "nodes"
        elif self.clock() - self.start >= self.time_budget_s:
            self.exhausted = "time"
        elif self.table_bytes >= self.max_memory_mb * 1_000_000:
            self.exhausted = "memory"
        return self.exhausted is None


@dataclass(frozen=True)
class Verdict:
    """What ``solve`` found for one deal, without redeal.

    ``status`` is ``won`` (``line`` wins), ``lost`` (no line wins; ``placed`` is the most
    any line places and ``line`` places it) or ``unknown`` (a budget ran out: ``placed``
    is a lower bound, reached by ``line``; ``exhausted`` names the budget). ``placed``
    counts all correctly placed cards at the end of ``line``, played from the position
    solved.
    """

    status: str
    placed: int
    line: tuple[Move, ...]
    nodes: int
    seconds: float
    exhausted: str | None = None

    def __post_init__(self) -> None:
        if self.status not in ("won", "lost", "unknown"):
            raise ValueError(f"a verdict is won, lost or unknown, not {self.status!r}")
        if (self.status == "unknown") != (self.exhausted is not None):
            raise ValueError("a verdict is unknown exactly when a budget is exhausted")

    @property
    def exact(self) -> bool:
        return self.status != "unknown"

    def __str__(self) -> str:
        bound = "" if self.exact else f" (at least; {self.exhausted} budget ran out)"
        return (
            f"{self.status}: {self.placed} placed{bound} in {len(self.line)} moves, "
            f"{self.nodes} nodes, {self.seconds:.3f} s"
        )


@dataclass
class Exploration:
    """What ``explore`` found: the best position of the deal and where a redeal may start.

    ``redeal_from`` maps a caller's signature of a position to (grid, line reaching it)
    for the first position seen with that signature; ``complete`` is False when the
    budget stopped the search before every reachable position was expanded.
    """

    placed: int
    line: Plan
    complete: bool
    nodes: int
    redeal_from: dict[object, tuple[list[int], Plan]] = field(default_factory=dict)


def explore(
    grid: list[int],
    budget: Budget,
    *,
    canonical: bool = True,
    signature: Callable[[list[int]], object] | None = None,
    blocked_only: bool = True,
) -> Exploration:
    """Search every position reachable from ``grid`` by moves, within ``budget``.

    ``canonical`` keys the table on rows in sorted order; only a caller that needs
    positions apart by their row order (a redeal depends on it) passes False. With a
    ``signature``, each position a redeal may start from (only blocked ones if
    ``blocked_only``) is recorded under its signature.
    The search stops at the first win. ``grid`` is left as it was.
    """
    # One loop with the moves made, keyed and taken back inline, and a position already
    # seen rejected before the rest of its move is made (about 3% less CPU per node).
    grid = list(grid)
    where = [GAP] * CELLS
    gaps: list[int] = []
    for index, code in enumerate(grid):
        if code == GAP:
            gaps.append(index)
        else:
            where[code] = index
    cells = bytearray(cells_of(grid))
    # Each row's bytes, kept up to date for the two rows a move touches.
    rows = [bytes(cells[start:start + COLUMNS]) for start in range(0, CELLS, COLUMNS)]
    ends = [run_end(grid, start) for start in range(0, CELLS, COLUMNS)]
    row_of = [index // COLUMNS for index in range(CELLS)]
    column_of = [index % COLUMNS for index in range(CELLS)]
    rank_of = [code % 13 for code in range(CELLS)]
    join = b"".join

    def is_dead(code: int) -> bool:
        return code == GAP or rank_of[code] == KING

    def moves() -> Plan:
        # Most promising last: the search pops from the end.
        found: list[tuple[int, int, int]] = []
        for gap in gaps:
            if column_of[gap] == 0:
                for two in TWOS:
                    at = where[two]
                    # A 2 heading a preserved sequence leaves it broken: tried last.
                    if column_of[at]:
                        found.append((1, two, gap))
                    elif ends[row_of[at]] > at + 1:
                        found.append((-2, two, gap))
                    else:
                        found.append((-1, two, gap))
                continue
            left = grid[gap - 1]
            if is_dead(left):
                continue  # a dead gap
            code = left + 1
            if gap == ends[row_of[gap]]:
                found.append((4, code, gap))
                continue
            came_from = where[code]
            if came_from == ends[row_of[came_from]]:
                rank = 3  # opens the slot after a preserved sequence
            elif column_of[came_from] and is_dead(grid[came_from - 1]):
                rank = 0  # leaves a dead gap
            else:
                rank = 2
            found.append((rank, code, gap))
        found.sort()
        return [(code, gap) for _, code, gap in found]

    def key() -> bytes:
        return join(sorted(rows)) if canonical else bytes(cells)

    first = key()
    seen = {first}
    entry_bytes = sys.getsizeof(first) + _ENTRY_OVERHEAD
    budget.table_bytes += entry_bytes
    tables_before = budget.table_bytes - entry_bytes
    placed = sum(ends) - 78  # ends are 0, 13, 26, 39 for empty rows
    best = placed
    best_line: Plan = []
    result = Exploration(best, best_line, complete=True, nodes=0)
    path: Plan = []
    # What taking a move back restores: card, its old index, the two rows' old ends and bytes.
    undos: list[tuple[int, int, int, int, bytes, bytes]] = []
    children = moves()
    if signature is not None and (not children or not blocked_only):
        result.redeal_from[signature(grid)] = (grid.copy(), [])
    stack = [children]
    nodes = 0
    won = best == ALL_PLACED
    max_nodes = budget.max_nodes
    while stack and not won:
        pending = stack[-1]
        if not pending:
            stack.pop()
            if undos:
                code, came_from, old_from, old_to, row_from_was, row_to_was = undos.pop()
                path.pop()
                to = where[code]
                grid[to] = GAP
                grid[came_from] = code
                cells[to] = GAP_BYTE
                cells[came_from] = code
                where[code] = came_from
                gaps[gaps.index(came_from)] = to
                row_to, row_from = row_of[to], row_of[came_from]
                ends[row_to] = old_to
                ends[row_from] = old_from
                rows[row_to] = row_to_was
                rows[row_from] = row_from_was
            continue
        if budget.nodes >= max_nodes or nodes % CHECK_EVERY == 0:
            budget.table_bytes = tables_before + len(seen) * entry_bytes
            if not budget.check():
                result.complete = False
                break
        code, to = pending.pop()
        # Make the move on cells and rows only; the rest follows if the position is new.
        came_from = where[code]
        row_from, row_to = row_of[came_from], row_of[to]
        cells[to] = code
        cells[came_from] = GAP_BYTE
        row_to_was, row_from_was = rows[row_to], rows[row_from]
        if canonical:
            start = row_to * COLUMNS
            rows[row_to] = bytes(cells[start:start + COLUMNS])
            if row_from != row_to:
                start = row_from * COLUMNS
                rows[row_from] = bytes(cells[start:start + COLUMNS])
            position = join(sorted(rows))
        else:
            position = bytes(cells)
        if position in seen:
            cells[to] = GAP_BYTE
            cells[came_from] = code
            rows[row_to] = row_to_was
            rows[row_from] = row_from_was
            continue
        seen.add(position)
        grid[to] = code
        grid[came_from] = GAP
        where[code] = to
        gaps[gaps.index(to)] = came_from
        old_from, old_to = ends[row_from], ends[row_to]
        if came_from < old_from:  # a 2 left column 1: its row's sequence is gone
            ends[row_from] = row_from * COLUMNS
        if to == ends[row_to]:
            start = row_to * COLUMNS
            end = to + 1
            while end - start < COLUMNS - 1 and grid[end] == grid[end - 1] + 1:
                end += 1
            ends[row_to] = end
        placed = sum(ends) - 78
        nodes += 1
        budget.nodes += 1
        path.append((code, to))
        undos.append((code, came_from, old_from, old_to, row_from_was, row_to_was))
        children = moves()
        if placed > best:
            best, best_line = placed, path.copy()
            won = placed == ALL_PLACED
        if signature is not None and (not children or not blocked_only):
            mark = signature(grid)
            if mark not in result.redeal_from:
                result.redeal_from[mark] = (grid.copy(), path.copy())
        stack.append(children)
    budget.table_bytes = tables_before  # this search's table is garbage from now on
    if won:
        result.complete = True  # nothing beats a win: the answer is exact
    result.placed, result.line, result.nodes = best, best_line, nodes
    return result


def solve(
    game: Game,
    *,
    max_nodes: int = MAX_NODES,
    time_budget_s: float = TIME_BUDGET_S,
    max_memory_mb: float = MAX_MEMORY_MB,
    clock: Callable[[], float] = time.monotonic,
    order: str = "best-first",
) -> Verdict:
    """Decide whether ``game``'s current deal can be won by moves alone (no redeal).

    Returns ``won`` with a winning line, ``lost`` with the most cards placeable and a line
    placing them, or ``unknown`` with the best line found when ``max_nodes`` positions,
    ``time_budget_s`` seconds or about ``max_memory_mb`` MB of table ran out. The lines
    are witnesses, not the shortest ones. ``game`` is left as it was.

    ``order`` is ``best-first`` (``gaps.frontier``: finds wins sooner, stores about
    twice the bytes per position) or ``depth-first`` (``explore``). Both give the same
    verdict and count whenever both finish.
    """
    if order not in ORDERS:
        raise ValueError(f"order is one of {', '.join(ORDERS)}, not {order!r}")
    budget = Budget(
        max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb,
        clock=clock,
    )
    grid = list(game.grid_codes())
    if order == "best-first":
        placed, plan, complete, nodes = best_first(grid, budget)
    else:
        found = explore(grid, budget)
        placed, plan, complete, nodes = found.placed, found.line, found.complete, found.nodes
    if placed == ALL_PLACED:
        status = "won"
    elif complete:
        status = "lost"
    else:
        status = "unknown"
    return Verdict(
        status=status,
        placed=placed,
        line=tuple(move_for(code, to) for code, to in plan),
        nodes=nodes,
        seconds=round(budget.seconds(), 6),
        exhausted=None if status != "unknown" else budget.exhausted,
    )
