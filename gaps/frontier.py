"""A best-first search of one deal: the position with the most placed cards first.

``best_first(grid, budget)`` expands every position reachable from ``grid`` by moves
alone, each once, always the stored position with the most placed cards next (the
newest among equals). The order is only a heuristic: the search ends at the first win
or when every position was expanded, so its answers are exact like ``explore``'s. It
finds wins far sooner than a depth-first search, which backtracks only near the bottom
of a line that went wrong early (docs/solver.md, "Search order").

Positions are stored as their canonical key (rows in sorted order, 255 for a gap),
which is itself a position of the deal up to the order of rows: the search expands
the key and never needs the rows' true order until it rebuilds the line.
"""

from __future__ import annotations

import heapq
import sys
from typing import Protocol

from gaps.game import GAP

__all__ = ["best_first", "placed_in"]

_COLUMNS = 13
_STARTS = (0, 13, 26, 39)
_GAP_BYTE = 255
_TWOS = (1, 14, 27, 40)
_ALL_PLACED = 48
_CHECK_EVERY = 1024
#: Bytes a stored position costs beside its key: the dict's slot, the (parent, card)
#: pair, and the heap entry with its priority.
_ENTRY_OVERHEAD = 200
#: A gap right of a King or of a gap accepts no card; indexed by byte (255: a gap).
_DEAD = [code < 52 and code % 13 == 12 for code in range(255)] + [True]

Plan = list[tuple[int, int]]


def placed_in(cells: bytes | bytearray) -> int:
    """The cards in their row's preserved sequence (2, 3, ... of one suit from column 1)."""
    placed = 0
    for start in _STARTS:
        first = cells[start]
        if first == _GAP_BYTE or first % 13 != 1:
            continue
        end = start + 1
        while end - start < _COLUMNS - 1 and cells[end] == cells[end - 1] + 1:
            end += 1
        placed += end - start
    return placed


def _promise(cells: bytes, placed: int) -> int:
    """How promising a position looks: placed cards first, then cards already right of
    their predecessor (a sequence in waiting), less the gaps a King has killed."""
    pairs = 0
    dead = 0
    for start in _STARTS:
        previous = cells[start]
        for index in range(start + 1, start + _COLUMNS):
            here = cells[index]
            if here == previous + 1:
                pairs += 1
            elif here == _GAP_BYTE and _DEAD[previous]:
                dead += 1
            previous = here
    # Weights measured on deals 0-19 (docs/solver.md): placed alone won fewer.
    return 4 * placed + pairs - 2 * dead


def _canonical(cells: bytearray) -> bytes:
    return b"".join(sorted((cells[0:13], cells[13:26], cells[26:39], cells[39:52])))


def _children(key: bytes) -> list[tuple[int, bytes]]:
    """(card moved, canonical key of the result) for each legal move from ``key``."""
    where = [0] * 52
    gaps = []
    for index, code in enumerate(key):
        if code == _GAP_BYTE:
            gaps.append(index)
        else:
            where[code] = index
    found = []
    for gap in gaps:
        if gap % _COLUMNS == 0:
            movers: tuple[int, ...] = _TWOS
        else:
            left = key[gap - 1]
            if _DEAD[left]:
                continue
            movers = (left + 1,)
        for code in movers:
            cells = bytearray(key)
            cells[gap] = code
            cells[where[code]] = _GAP_BYTE
            found.append((code, _canonical(cells)))
    return found


class _Budget(Protocol):
    """What ``best_first`` needs of ``gaps.solver.Budget`` (kept apart: no import cycle)."""

    max_nodes: int
    nodes: int
    table_bytes: int

    def check(self) -> bool: ...


def best_first(grid: list[int], budget: _Budget) -> tuple[int, Plan, bool, int]:
    """(most placed, a line placing it, complete, new positions met) from ``grid``.

    The line is a list of (card code, destination index) played from ``grid`` in its
    own row order. ``complete`` is False when ``budget`` ran out before every reachable
    position was expanded (then the count is a lower bound), True after a win or when
    nothing is left to expand.
    """
    start = _canonical(bytearray(_GAP_BYTE if code == GAP else code for code in grid))
    # key -> (parent key, card moved to reach it); the root's parent is None.
    parent: dict[bytes, tuple[bytes | None, int]] = {start: (None, -1)}
    entry_bytes = sys.getsizeof(start) + _ENTRY_OVERHEAD
    tables_before = budget.table_bytes
    best = placed_in(start)
    best_key = start
    # Priority: most placed first, then the newest (a depth-first flavour among equals).
    counter = 0
    heap: list[tuple[int, int, bytes]] = [(-best, 0, start)]
    nodes = 0
    complete = True
    next_check = 0
    while heap and best < _ALL_PLACED:
        # Counted like ``explore``: a node is a new position; checked between expansions.
        if budget.nodes >= budget.max_nodes or nodes >= next_check:
            next_check = nodes + _CHECK_EVERY
            budget.table_bytes = tables_before + len(parent) * entry_bytes
            if not budget.check():
                complete = False
                break
        key = heapq.heappop(heap)[2]
        for code, child in _children(key):
            if child in parent:
                continue
            parent[child] = (key, code)
            nodes += 1
            budget.nodes += 1
            placed = placed_in(child)
            if placed > best:
                best, best_key = placed, child
                if placed == _ALL_PLACED:
                    break
            counter -= 1
            heapq.heappush(heap, (-_promise(child, placed), counter, child))
    budget.table_bytes = tables_before
    if best == _ALL_PLACED:
        complete = True
    return best, _line(grid, parent, best_key), complete, nodes


def _line(grid: list[int], parent: dict[bytes, tuple[bytes | None, int]], end: bytes) -> Plan:
    """The moves from ``grid`` (in its row order) through the stored chain to ``end``."""
    chain: list[tuple[int, bytes]] = []
    key: bytes | None = end
    while key is not None:
        before, code = parent[key]
        if before is not None:
            chain.append((code, key))
        key = before
    chain.reverse()
    cells = bytearray(_GAP_BYTE if code == GAP else code for code in grid)
    plan: Plan = []
    for code, key in chain:
        came_from = cells.index(code)
        if code % 13 != 1:
            targets = [cells.index(code - 1) + 1]
        else:
            targets = [index for index in _STARTS if cells[index] == _GAP_BYTE]
        for to in targets:
            cells[to], cells[came_from] = code, _GAP_BYTE
            if _canonical(cells) == key:
                plan.append((code, to))
                break
            cells[to], cells[came_from] = _GAP_BYTE, code
        else:  # pragma: no cover - every stored key was reached by a legal move
            raise AssertionError(f"no move of card {code} reaches a stored position")
    return plan
