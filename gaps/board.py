"""The compact board that the bots, the hint and the solver search on, and its constants.

``Board`` is a position as flat lists, with fast moves and take-backs and a Zobrist key,
for look-ahead; the constants name the grid's shape and the card codes the searches
test. A leaf of the rules engine's search modules: it imports only the game and moves.
"""

from __future__ import annotations

import random
from typing import Final

from gaps.game import GAP, Game
from gaps.move import AUTO_MOVES, TWO_MOVES, Move

__all__ = [
    "ALL_PLACED", "CELLS", "COLUMNS", "KING", "ROW_STARTS", "TWOS", "Board", "Plan", "move_for",
    "run_end",
]

COLUMNS: Final = 13
CELLS: Final = 52
KING: Final = 12  # code % 13 of a King
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

    def moves(self) -> Plan:
        """The legal moves worth trying, as (card code, destination index).

        A move that extends a preserved sequence is returned alone: only that card can
        ever fill that slot, so filling it at once loses nothing. Left out, because they
        only lose placed cards: a 2 leaving column 1 with a sequence hanging on it.
        """
        grid, where, ends = self.grid, self.where, self.ends
        found: Plan = []
        for gap in self.gaps:
            if gap % COLUMNS == 0:
                for two in TWOS:
                    at = where[two]
                    if at % COLUMNS == 0 and grid[at + 1] == two + 1:
                        continue
                    found.append((two, gap))
            else:
                left = grid[gap - 1]
                if left != GAP and left % 13 != KING:
                    if gap == ends[gap // COLUMNS]:
                        return [(left + 1, gap)]
                    found.append((left + 1, gap))
        return found

    def is_blocked(self) -> bool:
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
