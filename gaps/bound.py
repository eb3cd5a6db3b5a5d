"""An upper bound on the cards any line can still place (docs/solver.md, rule 8).

``reach(cells)`` over-approximates, for every card, the set of cells it can ever stand
in, ignoring when: a 2 can reach the column-1 cells that can be emptied; any other card
the cells right of the cells its predecessor can reach, when they can be emptied; a cell
can be emptied when it is a gap or its card can move (reach a cell other than its own).
These sets are a least fixpoint, computed as 52-bit masks. A row can then hold a
preserved sequence of suit s up to rank k only if every card from 2 to k of s can reach
its cell in that row, that is (by the definition of the sets) only if each of those
cells can be emptied or already holds that card; the four rows hold four different
suits. ``upper_bound(cells)`` is the largest sum over the 24 ways to give the rows their
suits.

The searches of ``gaps.frontier`` skip a position whose bound is no more than the best
count already found: nothing after it can place more. ``gaps._speedups`` computes the
same bound in C.
"""

from __future__ import annotations

from itertools import permutations
from typing import Final

from gaps.board import CELLS as _CELLS
from gaps.board import COLUMNS as _COLUMNS
from gaps.board import TWOS as _TWOS

__all__ = ["reach", "upper_bound"]

_GAP_BYTE: Final = 255
_COLUMN_ONE: Final = sum(1 << (_COLUMNS * row) for row in range(4))
_NOT_COLUMN_ONE: Final = ((1 << _CELLS) - 1) & ~_COLUMN_ONE
_SUITS_TO_ROWS: Final = tuple(permutations(range(4)))


def reach(cells: bytes | bytearray) -> list[int]:
    """For each card code, a 52-bit mask of the cells it may ever stand in (0 for an Ace).

    ``cells`` is a position's 52 cells, row by row: a card code, or 255 for a gap.
    Every cell the card stands in, in any line from ``cells``, is in its mask.
    """
    where, emptied = _emptied(cells)
    masks = [0] * _CELLS
    for first in _TWOS:
        reached = masks[first] = 1 << where[first] | (_COLUMN_ONE & emptied)
        for code in range(first + 1, first + _COLUMNS - 1):
            reached = masks[code] = 1 << where[code] | ((reached << 1) & _NOT_COLUMN_ONE & emptied)
    return masks


def upper_bound(cells: bytes | bytearray) -> int:
    """At least the cards placed in any position reachable from ``cells`` (see ``reach``)."""
    where, emptied = _emptied(cells)
    runs = []
    for row in range(4):
        start = row * _COLUMNS
        lengths = []
        for first in _TWOS:
            length = 0
            # the cell of the card of rank length + 2 can be emptied, or holds that card
            while length < _COLUMNS - 1 and (emptied >> (start + length) & 1
                                             or where[first + length] == start + length):
                length += 1
            lengths.append(length)
        runs.append(lengths)
    first_row, second_row, third_row, fourth_row = runs
    return max(first_row[a] + second_row[b] + third_row[c] + fourth_row[d]
               for a, b, c, d in _SUITS_TO_ROWS)


def _emptied(cells: bytes | bytearray) -> tuple[bytearray, int]:
    """(each card's cell, the mask of the cells that can be emptied): the fixpoint."""
    if len(cells) != _CELLS:
        raise ValueError(f"a position has {_CELLS} cells, not {len(cells)}")
    where = bytearray(_CELLS)
    gaps = 0
    for cell, code in enumerate(cells):
        if code == _GAP_BYTE:
            gaps |= 1 << cell
        else:
            where[code] = cell
    # The cells whose card can move, from below: the cards with a legal move now are in
    # the least fixpoint, so starting from them reaches it in fewer passes.
    moving = 0
    for cell in range(_CELLS):
        if cells[cell] != _GAP_BYTE:
            continue
        if cell % _COLUMNS == 0:
            for two in _TWOS:
                moving |= 1 << where[two]
        else:
            left = cells[cell - 1]
            if left != _GAP_BYTE and left % 13 != 12:
                moving |= 1 << where[left + 1]
    while True:
        # A card found to move empties its cell for the cards after it in the same pass
        # (still from below); a pass that finds nothing new saw the final cells, so it
        # is the fixpoint.
        before = moving
        for first in _TWOS:
            here = 1 << where[first]
            reached = here | (_COLUMN_ONE & (gaps | moving))
            if reached != here:
                moving |= here
            for code in range(first + 1, first + _COLUMNS - 1):
                here = 1 << where[code]
                reached = here | ((reached << 1) & _NOT_COLUMN_ONE & (gaps | moving))
                if reached != here:
                    moving |= here
        if moving == before:
            return where, gaps | moving
