"""An upper bound on the cards any line can still place (docs/solver.md, rule 8).

``upper_bound(cells)`` over-approximates, for every card, the set of cells it can ever
stand in, ignoring when: a 2 can reach column-1 cells that can be emptied; any other
card can reach the cells right of the cells its predecessor can reach, when they can be
emptied; a cell can be emptied when it is a gap or its card can move (reach a cell other
than its own). These sets are a least fixpoint, computed as 52-bit masks. A row can then
hold a preserved sequence of suit s up to rank k only if every card from 2 to k of s can
reach its cell in that row, and the four rows hold four different suits: the bound is the
largest sum over the 24 ways to give the rows their suits.

The searches of ``gaps.frontier`` skip a position whose bound is no more than the best
count already found: nothing after it can place more. ``gaps._speedups`` computes the
same bound in C.
"""

from __future__ import annotations

from itertools import permutations
from typing import Final

__all__ = ["reach", "upper_bound"]

_CELLS: Final = 52
_COLUMNS: Final = 13
_GAP_BYTE: Final = 255
_COLUMN_ONE: Final = sum(1 << (_COLUMNS * row) for row in range(4))
_NOT_COLUMN_ONE: Final = ((1 << _CELLS) - 1) & ~_COLUMN_ONE
_SUITS_TO_ROWS: Final = tuple(permutations(range(4)))


def reach(cells: bytes | bytearray) -> list[int]:
    """For each card code, a 52-bit mask of the cells it may ever stand in (0 for an Ace).

    ``cells`` is a position's 52 cells, row by row: a card code, or 255 for a gap.
    Every cell the card stands in, in any line from ``cells``, is in its mask.
    """
    if len(cells) != _CELLS:
        raise ValueError(f"a position has {_CELLS} cells, not {len(cells)}")
    where = [0] * _CELLS
    gaps = 0
    for cell, code in enumerate(cells):
        if code == _GAP_BYTE:
            gaps |= 1 << cell
        else:
            where[code] = cell
    masks = [0] * _CELLS
    moving = 0  # the cells whose card can move
    while True:
        emptied = gaps | moving
        moves = 0
        for first in range(1, _CELLS, _COLUMNS):
            here = 1 << where[first]
            reached = here | (_COLUMN_ONE & emptied)
            masks[first] = reached
            if reached != here:
                moves |= here
            for code in range(first + 1, first + _COLUMNS - 1):
                here = 1 << where[code]
                reached = here | ((masks[code - 1] << 1) & _NOT_COLUMN_ONE & emptied)
                masks[code] = reached
                if reached != here:
                    moves |= here
        if moves == moving:
            return masks
        moving = moves


def upper_bound(cells: bytes | bytearray) -> int:
    """At least the cards placed in any position reachable from ``cells`` (see ``reach``)."""
    masks = reach(cells)
    runs = []
    for row in range(4):
        lengths = []
        for first in range(1, _CELLS, _COLUMNS):
            length = 0
            while length < _COLUMNS - 1 and masks[first + length] >> (row * _COLUMNS + length) & 1:
                length += 1
            lengths.append(length)
        runs.append(lengths)
    return max(sum(runs[row][suit] for row, suit in enumerate(order))
               for order in _SUITS_TO_ROWS)
