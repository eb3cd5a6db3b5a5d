"""A best-first search of one deal: the most promising stored position first.

``best_first(grid, budget)`` expands every position reachable from ``grid`` by moves
alone, each once, always the stored position that looks most promising next (the newest
among equals). The order is only a heuristic: the search ends at the first win or when
every move of every position was generated, so its answers are exact like ``explore``'s.

Moves come in three tiers (docs/solver.md, "Deferred moves"): a move that extends a
preserved sequence, the ordinary moves, and poor moves (a 2 leaving column 1, a move
leaving a dead gap). A position expands its first tier that has a move and is stored
again for the next tier, which is expanded only when no position has a lower tier left:
a deferred move is searched later, never dropped. With ``bound`` (the default), a
position whose ``gaps.bound.upper_bound`` is no more than the best count found is
skipped, neither stored nor expanded: nothing after it places more.

Positions are stored as their canonical key (rows in sorted order, 255 for a gap),
which is itself a position of the deal up to the order of rows: the search expands
the key and never needs the rows' true order until it rebuilds the line. A row's
placed count and promise depend on the row alone, so they are cached by row.

The same search is compiled in ``gaps._speedups`` (C, built by the install when a compiler
is there): ``best_first`` runs it when it was built, and this module's Python otherwise.
Both expand the same positions in the same order and give the same answers (tests hold
them to it); the Python is the reference.
"""

from __future__ import annotations

import sys
from typing import Protocol

from gaps.board import ALL_PLACED as _ALL_PLACED
from gaps.board import CELLS as _CELLS
from gaps.board import COLUMNS as _COLUMNS
from gaps.board import TWOS as _TWOS
from gaps.bound import upper_bound
from gaps.game import GAP

try:
    from gaps import _speedups
except ImportError:  # not built (no compiler at install): the pure-Python search runs
    _speedups = None  # type: ignore[assignment]

__all__ = [
    "CHECK_EVERY", "COMPILED", "GAP_BYTE", "best_first", "canonical", "cells_of", "keys_to",
    "line_through", "moves_in", "placed_in",
]

#: Whether the compiled core was built and ``best_first`` runs it by default.
COMPILED = _speedups is not None

_STARTS = tuple(range(0, _CELLS, _COLUMNS))
#: A gap's byte in a position's 52 cells (a card's is its code).
GAP_BYTE = 255
#: A search asks its budget whether to go on once every this many positions.
CHECK_EVERY = 1024
#: Bytes a stored position costs beside its key: the dicts' slots and the frontier's
#: (measured with tracemalloc, docs/solver.md).
_ENTRY_OVERHEAD = 164
#: A gap right of a King or of a gap accepts no card; indexed by byte (255: a gap).
_DEAD = [code < 52 and code % 13 == 12 for code in range(255)] + [True]
#: Promises range from -8 (four dead gaps) to 4 x 48 + 44; bucket 0 holds promise -_LOWEST.
_LOWEST = 8
_BUCKETS = 4 * 48 + 44 + _LOWEST + 1
#: The row cache is emptied when it holds this many rows (about 150 bytes each).
_ROW_CACHE_ROWS = 200_000
_FORCED, _ORDINARY, _POOR = 0, 1, 2

Plan = list[tuple[int, int]]
_Move = tuple[int, int, int]  # card, destination row, destination column


def cells_of(grid: list[int]) -> bytes:
    """A grid's 52 cells as the searches store them (``GAP_BYTE`` for a gap), in its
    row order."""
    return bytes(GAP_BYTE if code == GAP else code for code in grid)


def placed_in(cells: bytes | bytearray) -> int:
    """The cards in their row's preserved sequence (2, 3, ... of one suit from column 1)."""
    return sum(_row_value(cells[start:start + _COLUMNS])[0] for start in _STARTS)


def _row_value(row: bytes | bytearray) -> tuple[int, int]:
    """(placed, promise) of one row: promise is 4 x placed, plus the cards standing right of
    their predecessor (sequences in waiting), less 2 x the gaps a King or gap has killed."""
    placed = 0
    first = row[0]
    if first != GAP_BYTE and first % 13 == 1:
        placed = 1
        while placed < _COLUMNS - 1 and row[placed] == row[placed - 1] + 1:
            placed += 1
    pairs = dead = 0
    previous = first
    for here in row[1:]:
        if here == previous + 1:
            pairs += 1
        elif here == GAP_BYTE and _DEAD[previous]:
            dead += 1
        previous = here
    return placed, 4 * placed + pairs - 2 * dead


def canonical(cells: bytes | bytearray) -> bytes:
    """The position's key: its rows in sorted order (rows are interchangeable)."""
    return b"".join(sorted((cells[0:13], cells[13:26], cells[26:39], cells[39:52])))


class _Budget(Protocol):
    """What ``best_first`` needs of ``gaps.solver.Budget`` (kept apart: no import cycle)."""

    max_nodes: int
    max_memory_mb: float
    nodes: int
    table_bytes: int
    exhausted: str | None

    def check(self) -> bool: ...


def _tiers(key: bytes, placed: list[int]) -> tuple[list[_Move], list[_Move], list[_Move]]:
    """The legal moves of ``key`` by tier: extending a sequence, ordinary, poor."""
    tiers: tuple[list[_Move], list[_Move], list[_Move]] = ([], [], [])
    gap = -1
    for _ in range(4):
        gap = key.index(GAP_BYTE, gap + 1)
        row, column = divmod(gap, _COLUMNS)
        if column == 0:
            for two in _TWOS:
                tier = _POOR if key.index(two) % _COLUMNS == 0 else _ORDINARY
                tiers[tier].append((two, row, 0))
            continue
        left = key[gap - 1]
        if _DEAD[left]:
            continue
        code = left + 1
        if placed[row] == column:
            tiers[_FORCED].append((code, row, column))
            continue
        at = key.index(code)
        tier = _POOR if at % _COLUMNS and _DEAD[key[at - 1]] else _ORDINARY
        tiers[tier].append((code, row, column))
    return tiers


def best_first(
    grid: list[int],
    budget: _Budget,
    *,
    defer: bool = True,
    compiled: bool | None = None,
    narrow: bool = True,
    bound: bool = True,
    wins_only: bool = False,
) -> tuple[int, Plan, bool, int]:
    """(most placed, a line placing it, complete, new positions met) from ``grid``.

    The line is a list of (card code, destination index) played from ``grid`` in its
    own row order. ``complete`` is False when ``budget`` ran out before every reachable
    position was expanded (then the count is a lower bound), True after a win or when
    nothing is left to expand. ``defer=False`` expands every move at once (the same
    answers; kept to measure what deferring gains).

    ``compiled`` picks the compiled core (True: it must have been built) or the Python
    (False); by default the compiled one when it was built. The compiled core stores a
    position in about 55 bytes (the Python in about 250), and when its table nears the
    memory budget it *narrows* (with ``narrow``, the default): it keeps the most promising
    waiting positions and their lines, forgets the rest, and searches on until another
    budget runs out. A narrowed search may still find a win (its line is a legal line)
    but never ends ``complete`` without one: it can no longer prove a deal lost.

    ``bound`` skips every position whose upper bound (``gaps.bound``) is no more than the
    best count found when it is met or expanded: the same answers from fewer positions
    (``bound=False`` measures what it gains). With ``wins_only`` it skips every position
    whose bound is below 48 instead: the search then only says whether the deal can be
    won (a win, or ``complete`` without one), and the count is a lower bound.
    """
    start = canonical(cells_of(grid))
    if compiled is None:
        compiled = COMPILED
    if not compiled:
        best, chain, complete, nodes = _best_first(start, budget, defer, bound, wins_only)
    elif _speedups is None:
        raise RuntimeError("the compiled core gaps._speedups was not built")
    else:
        best, chain, complete, nodes = _speedups.best_first(
            start, budget, defer, narrow, bound, wins_only
        )
    return best, line_through(grid, chain[1:]), complete, nodes


def _best_first(
    start: bytes, budget: _Budget, defer: bool, bound: bool, wins_only: bool
) -> tuple[int, list[bytes], bool, int]:
    """The search in Python: (most placed, the stored keys from ``start`` to the position
    placing them, complete, new positions met)."""
    # key -> the key it was reached from (the root: None); the move is found again later.
    parent: dict[bytes, bytes | None] = {start: None}
    # key -> its bound, computed once when the key is stored, read again when it is popped
    bounds: dict[bytes, int] = {start: upper_bound(start) if bound else _ALL_PLACED}
    floor = _ALL_PLACED - 1 if wins_only else -1  # a bound up to this is skipped
    entry_bytes = sys.getsizeof(start) + _ENTRY_OVERHEAD
    tables_before = budget.table_bytes
    best = placed_in(start)
    best_key = start
    # A bucket queue: frontier[tier][promise + _LOWEST] is a stack of keys to expand from
    # that tier, so the pop is the most promising key of the lowest tier, the newest among
    # equals; ``top[tier]`` is at least the highest non-empty bucket.
    frontier: list[list[list[bytes]]] = [[[] for _ in range(_BUCKETS)] for _ in range(3)]
    top = [0, 0, 0]
    waiting = [0, 0, 0]
    promise = sum(_row_value(start[index:index + 13])[1] for index in _STARTS)
    frontier[_FORCED][promise + _LOWEST].append(start)
    top[_FORCED] = promise + _LOWEST
    waiting[_FORCED] = 1
    cache: dict[bytes, tuple[int, int]] = {}
    nodes = 0
    complete = True
    next_check = 0
    join = b"".join
    while best < _ALL_PLACED:
        # Counted like ``explore``: a node is a new position; checked between expansions.
        if budget.nodes >= budget.max_nodes or nodes >= next_check:
            next_check = nodes + CHECK_EVERY
            budget.table_bytes = tables_before + len(parent) * entry_bytes
            if not budget.check():
                complete = False
                break
            if len(cache) > _ROW_CACHE_ROWS:
                cache.clear()
        if waiting[_FORCED]:
            level = _FORCED
        elif waiting[_ORDINARY]:
            level = _ORDINARY
        elif waiting[_POOR]:
            level = _POOR
        else:
            break
        waiting[level] -= 1
        buckets = frontier[level]
        index = top[level]
        while not buckets[index]:
            index -= 1
        top[level] = index
        key = buckets[index].pop()
        # the best count may have risen since this position was stored
        if bounds[key] <= max(floor, best):
            continue
        rows = [key[0:13], key[13:26], key[26:39], key[39:52]]
        values = []
        for row in rows:
            value = cache.get(row)
            if value is None:
                value = cache[row] = _row_value(row)
            values.append(value)
        placed_rows = [value[0] for value in values]
        placed_now = sum(placed_rows)
        promise_now = sum(value[1] for value in values)
        forced, ordinary, poor = _tiers(key, placed_rows)
        if not defer:
            moves, rest = forced + ordinary + poor, None
        elif level == _FORCED and forced:
            # One is enough now: another forced move is still forced in the child.
            moves, rest = forced[:1], _ORDINARY if len(forced) > 1 or ordinary or poor else None
        elif level <= _ORDINARY and (forced or ordinary):
            moves, rest = forced + ordinary, _POOR if poor else None
        else:
            moves, rest = poor, None
        if rest is not None:
            frontier[rest][index].append(key)
            waiting[rest] += 1
            top[rest] = max(top[rest], index)
        for code, row_to, column in moves:
            came_from = key.index(code)
            row_from, column_from = divmod(came_from, _COLUMNS)
            new = rows.copy()
            changed = bytearray(rows[row_to])
            changed[column] = code
            if row_from == row_to:
                changed[column_from] = GAP_BYTE
            else:
                other = bytearray(rows[row_from])
                other[column_from] = GAP_BYTE
                new[row_from] = bytes(other)
            new[row_to] = bytes(changed)
            child = join(sorted(new))
            if child in parent:  # a move already generated is skipped here too
                continue
            # a pruned child is not stored: met again, it is pruned again
            child_bound = upper_bound(child) if bound else _ALL_PLACED
            if child_bound <= max(floor, best):
                continue
            parent[child] = key
            bounds[child] = child_bound
            nodes += 1
            budget.nodes += 1
            placed, promise = placed_now, promise_now
            for index in {row_to, row_from}:
                value = cache.get(new[index])
                if value is None:
                    value = cache[new[index]] = _row_value(new[index])
                placed += value[0] - values[index][0]
                promise += value[1] - values[index][1]
            if placed > best:
                best, best_key = placed, child
                if placed == _ALL_PLACED:
                    break
            promise += _LOWEST
            frontier[_FORCED][promise].append(child)
            waiting[_FORCED] += 1
            if promise > top[_FORCED]:
                top[_FORCED] = promise
    budget.table_bytes = tables_before
    if best == _ALL_PLACED:
        complete = True
    return best, keys_to(best_key, parent), complete, nodes


def keys_to(last: bytes, parent: dict[bytes, bytes | None]) -> list[bytes]:
    """The stored keys from the search's start (whose parent is None) to ``last``."""
    chain: list[bytes] = []
    link: bytes | None = last
    while link is not None:
        chain.append(link)
        link = parent[link]
    chain.reverse()
    return chain


def line_through(grid: list[int], chain: list[bytes]) -> Plan:
    """The moves from ``grid`` (in its row order) through the stored keys of ``chain``.

    Each step is found among the legal moves of the position reached so far, so a chain
    that no legal line follows raises ``AssertionError`` instead of giving a line.
    """
    cells = bytearray(cells_of(grid))
    plan: Plan = []
    for key in chain:
        for code, to in moves_in(cells):
            came_from = cells.index(code)
            cells[to], cells[came_from] = code, GAP_BYTE
            if canonical(cells) == key:
                plan.append((code, to))
                break
            cells[to], cells[came_from] = GAP_BYTE, code
        else:  # pragma: no cover - every stored key was reached by a legal move
            raise AssertionError("no move reaches a stored position")
    return plan


def moves_in(cells: bytes | bytearray) -> Plan:
    """The legal moves of a position's 52 cells (255 for a gap), as (card code, gap)."""
    moves: Plan = []
    for gap in range(_CELLS):
        if cells[gap] != GAP_BYTE:
            continue
        if gap % _COLUMNS == 0:
            moves.extend((two, gap) for two in _TWOS)
        elif not _DEAD[cells[gap - 1]]:
            moves.append((cells[gap - 1] + 1, gap))
    return moves
