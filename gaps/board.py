"""The compact board that the bots, the hint and the solver search on, and its constants.

``Board`` is a position as flat lists with fast moves and take-backs; ``Board.moves()``
gives the *onward* moves only, and no sequence of onward moves comes back to a position
it has left, so a player that makes only onward moves (every bot, and anyone following
the hint) never goes round in circles, whatever it remembers.

A move is onward unless it is one of these two, both legal:

* a 2 taken out of column 1 while a sequence hangs on it (it only loses placed cards);
* a lone 2 moved from column 1 of its row to the column-1 gap of a row of higher
  ``shuffle_rank`` without placing anything there (that row's column 2 does not hold
  its 3): between two such rows, only the move to the row of lower rank is onward.

Why no onward sequence repeats a position:

1. No onward move lowers the placed count. A placed card other than a 2 has its
   predecessor on its left, so it can only go where it is; a 2 leaves column 1 only
   alone (its row loses that one card), and the row it joins gains at least that one.
2. So a cycle of onward moves places nothing, and in it only 2s move, between column-1
   cells. A card other than a 2 that moves in a cycle goes right of the card one rank
   below, somewhere else than where it started, and comes back there: so that card
   moved too, and so on down to the 2 of the suit. That 2 moved and came back, and a 2
   only ever moves into column 1, so it stood in column 1 all along; the 3 of its suit
   then moved too, right of it, into column 2 of its row: that places the 3, which no
   move of a cycle does.
3. While only 2s move between column-1 cells, every other cell stays as it is, so a
   row's ``shuffle_rank`` (it reads column 2 and the row number) stays too, and every
   such move lowers the sum of the ranks of the rows with a 2 in column 1: it cannot
   come back to where it started.

The order is a preference as well as a tie-break: a 2 is drawn to a row whose column 2
is a gap (its 3 can follow at once) and away from a row whose column 2 holds a 3 (that
3's own 2 can then come). Over 2,000 deals of classic, no-redeal and Addiction, the search
bot scores as much with onward moves only as it did with every 2-shuffle, within the
noise (docs/bots.md, "Before and after onward moves").
"""

from __future__ import annotations

import random
from typing import Final

from gaps.game import GAP, Game
from gaps.move import AUTO_MOVES, TWO_MOVES, Move

__all__ = [
    "ALL_PLACED", "CELLS", "COLUMNS", "KING", "ROW_STARTS", "TWOS", "Board", "Plan", "move_for",
    "run_end", "shuffle_rank",
]

COLUMNS: Final = 13
CELLS: Final = 52
KING: Final = 12  # code % 13 of a King
THREE: Final = 2  # code % 13 of a 3
TWOS: Final = (1, 14, 27, 40)
ROW_STARTS: Final = (0, 13, 26, 39)
ALL_PLACED: Final = 48

Plan = list[tuple[int, int]]  # moves as (card code, destination index)

# Zobrist keys: a position's key is the XOR of one random number per (card, slot).
_zobrist_rng = random.Random(0x6A95)
_ZOBRIST: Final = [_zobrist_rng.getrandbits(64) for _ in range(CELLS * CELLS)]
del _zobrist_rng


def move_for(code: int, to: int) -> Move:
    """The interned ``Move`` that puts card ``code`` into the gap at index ``to``."""
    return TWO_MOVES[code][to // COLUMNS] if code % 13 == 1 else AUTO_MOVES[code]


def run_end(grid: list[int], start: int) -> int:
    """Index of the slot right after the preserved sequence of the row starting at ``start``."""
    first = grid[start]
    if first == GAP or first % 13 != 1:
        return start
    end = start + 1
    while end - start < COLUMNS - 1 and grid[end] == grid[end - 1] + 1:
        end += 1
    return end


def shuffle_rank(grid: list[int], start: int) -> int:
    """The rank of the row starting at index ``start`` in the shuffle order (0-11).

    A lone 2 moves without gain between column-1 cells only from a row of higher rank to
    one of lower rank. Rows whose column 2 is a gap come first, then rows whose column 2
    holds another card, then rows whose column 2 holds a 3; within each, by row number.
    """
    second = grid[start + 1]
    draw = 0 if second == GAP else 2 if second % 13 == THREE else 1
    return 4 * draw + start // COLUMNS


class Board:
    """A position as flat lists, with fast moves and take-backs, for look-ahead.

    ``ends[row]`` is the index right after the row's preserved sequence, so the placed
    cards are ``sum(ends) - 78``; ``key`` is a Zobrist hash of the grid.
    """

    __slots__ = ("grid", "where", "gaps", "ends", "key")

    def __init__(self, grid: list[int]) -> None:
        self.grid = grid
        self.where = [GAP] * CELLS
        self.gaps: list[int] = []
        key = 0
        for index, code in enumerate(grid):
            if code == GAP:
                self.gaps.append(index)
            else:
                self.where[code] = index
                key ^= _ZOBRIST[code * CELLS + index]
        self.key = key
        self.ends = [run_end(grid, start) for start in ROW_STARTS]

    @staticmethod
    def of(game: Game) -> Board:
        return Board(list(game.grid_codes()))

    @property
    def placed(self) -> int:
        return sum(self.ends) - 78

    def destination(self, move: Move) -> int:
        """The index of the gap that the legal ``move`` fills: the one it names, or the
        slot right of the card one rank below."""
        return move.to_index if move.to_index >= 0 else self.where[move.code - 1] + 1

    def is_onward(self, code: int, to: int) -> bool:
        """Whether the legal move of card ``code`` into the gap at ``to`` is onward."""
        if code % 13 != 1:
            return True
        at = self.where[code]
        if at % COLUMNS:
            return True  # a 2 coming into column 1 places itself
        grid = self.grid
        if grid[at + 1] == code + 1:
            return False  # a sequence hangs on it
        return grid[to + 1] == code + 1 or shuffle_rank(grid, at) > shuffle_rank(grid, to)

    def moves(self) -> Plan:
        """The onward moves, as (card code, destination index).

        A move that extends a preserved sequence is returned alone: only that card can
        ever fill that slot, so filling it at once loses nothing.
        """
        grid, ends = self.grid, self.ends
        found: Plan = []
        for gap in self.gaps:
            if gap % COLUMNS == 0:
                found.extend((two, gap) for two in TWOS if self.is_onward(two, gap))
            else:
                left = grid[gap - 1]
                if left != GAP and left % 13 != KING:
                    if gap == ends[gap // COLUMNS]:
                        return [(left + 1, gap)]
                    found.append((left + 1, gap))
        return found

    def is_blocked(self) -> bool:
        """No legal move. Onward moves are then none either, and only then: a column-1
        gap leaves a 2 outside column 1, which may always come in."""
        grid = self.grid
        for gap in self.gaps:
            if gap % COLUMNS == 0:
                return False
            left = grid[gap - 1]
            if left != GAP and left % 13 != KING:
                return False
        return True

    def score_move(self, code: int, to: int) -> int:
        """How promising a move looks one ply ahead (higher is better)."""
        grid, ends = self.grid, self.ends
        came_from = self.where[code]
        score = 0
        row_to = to // COLUMNS
        if to == ends[row_to]:
            # Extends a preserved sequence (or starts one with a 2), with the cards
            # already standing in line after it.
            gain = 1
            after = to + 1
            while after - row_to * COLUMNS < COLUMNS - 1 and grid[after] == code + gain:
                gain += 1
                after += 1
            score += 100 * gain
        if came_from % COLUMNS == 0:
            score -= 30  # a 2 shuffled between column-1 slots: rarely useful
        elif came_from == ends[came_from // COLUMNS]:
            score += 60  # opens the slot right after a preserved sequence
        else:
            left = grid[came_from - 1]
            if left == GAP or left % 13 == KING:
                score -= 20  # leaves a dead gap
            else:
                score += 5  # leaves a live gap
        if code % 13 == KING and to % COLUMNS != COLUMNS - 1 and grid[to + 1] == GAP:
            score -= 20  # a King kills the gap on its right
        return score

    def play(self, code: int, to: int) -> tuple[int, int, int, int]:
        """Make a legal move; returns what ``take_back`` needs to undo it."""
        grid, where, ends = self.grid, self.where, self.ends
        came_from = where[code]
        grid[to] = code
        grid[came_from] = GAP
        where[code] = to
        gaps = self.gaps
        gaps[gaps.index(to)] = came_from
        self.key ^= _ZOBRIST[code * CELLS + came_from] ^ _ZOBRIST[code * CELLS + to]
        row_from, row_to = came_from // COLUMNS, to // COLUMNS
        old_from, old_to = ends[row_from], ends[row_to]
        if came_from < old_from:  # a lone 2 left column 1
            ends[row_from] = row_from * COLUMNS
        if to == ends[row_to]:
            start = row_to * COLUMNS
            end = to + 1
            while end - start < COLUMNS - 1 and grid[end] == grid[end - 1] + 1:
                end += 1
            ends[row_to] = end
        return code, came_from, old_from, old_to

    def take_back(self, undo: tuple[int, int, int, int]) -> None:
        code, came_from, old_from, old_to = undo
        grid, where = self.grid, self.where
        to = where[code]
        grid[to] = GAP
        grid[came_from] = code
        where[code] = came_from
        gaps = self.gaps
        gaps[gaps.index(came_from)] = to
        self.key ^= _ZOBRIST[code * CELLS + came_from] ^ _ZOBRIST[code * CELLS + to]
        self.ends[to // COLUMNS] = old_to
        self.ends[came_from // COLUMNS] = old_from

    def ordered_moves(self) -> Plan:
        """``moves()`` with the most promising last (a search pops from the end)."""
        found = self.moves()
        if len(found) > 1:
            score = self.score_move
            found.sort(key=lambda move: score(move[0], move[1]))
        return found
