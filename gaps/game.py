"""The game: a position, the moves it allows, and every rule that changes it.

The grid is a flat list of 52 card codes in row-major order (index = (row-1)*13 +
column-1), with ``GAP`` (-1) for a gap; ``Card``, ``Slot`` and ``Move`` are its public
face. Status (blocked, won, lost) is derived from the position, never stored, so it
cannot go stale. An illegal action raises ``IllegalAction`` before anything changes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Final, Literal, TypeAlias

from gaps.card import DECK, Card
from gaps.errors import IllegalAction, NotationError
from gaps.move import AUTO_MOVES, REDEAL, TWO_MOVES, Action, Move, Redeal, Stop, Undo
from gaps.notation import SPACE, quoted
from gaps.ruleset import Keep, NewGaps, RedealWhen, Ruleset, Start, UndoPolicy
from gaps.seed import Seed
from gaps.shuffle import shuffle, stream_label
from gaps.slot import COLUMNS, ROWS, Slot

#: How a game stands (``Game.result``): ``blocked`` means a redeal or a stop is due.
GameResult: TypeAlias = Literal["won", "lost", "stopped", "blocked", "playing"]


GAP: Final = -1
CELLS: Final = ROWS * COLUMNS
KING_RANK_INDEX: Final = 12  # code % 13 of a King
TWO_RANK_INDEX: Final = 1  # code % 13 of a 2
ACE_CODES: Final = (0, 13, 26, 39)
TWO_CODES: Final = (1, 14, 27, 40)
#: What separates the cells of a layout line.
_CELL_SPACE: Final = re.compile(r"[ \t\r\f\v]+")
#: The codes of the 48 cards in play (2-K of each suit), in order.
_IN_PLAY: Final = [code for code in range(52) if code not in ACE_CODES]

#: Points, as ruled: 1 per placed card, -5 per redeal, +10 for a win with no redeal.
POINTS_PER_PLACED_CARD: Final = 1
POINTS_PER_REDEAL: Final = -5
BONUS_WIN_WITHOUT_REDEAL: Final = 10


# What ``random_playout`` may play into the gap at index ``gap`` when ``code`` is on its
# left: ``_FILLERS[gap][code]``, a tuple of (card code, gap, Move). A left of ``GAP``
# (-1) reads the last entry; a column-1 gap reads the cell before it (the row above's
# last, or the grid's last for index 0) and takes any 2, whatever that cell holds.
_FILLERS: Final = tuple(
    tuple(
        tuple((two, gap, TWO_MOVES[two][gap // COLUMNS]) for two in TWO_CODES)
        if gap % COLUMNS == 0
        else ()
        if left == 52 or left % 13 == KING_RANK_INDEX
        else ((left + 1, gap, AUTO_MOVES[left + 1]),)
        for left in range(53)
    )
    for gap in range(CELLS)
)


def dealt_grid(seed: Seed, ruleset: Ruleset) -> list[int]:
    """The starting grid of ``seed`` under ``ruleset``: shuffled deck, Aces removed."""
    deck = list(range(52))
    shuffle(deck, seed.data, stream_label(0))
    grid = deck
    for ace in ACE_CODES:
        grid[grid.index(ace)] = GAP
    if ruleset.start is Start.TWOS_TO_COLUMN_ONE:
        twos_in_deal_order = [code for code in grid if code % 13 == TWO_RANK_INDEX]
        for row, two in enumerate(twos_in_deal_order):
            here, there = grid.index(two), row * COLUMNS
            grid[here], grid[there] = grid[there], grid[here]
    return grid


class Game:
    """One player's game of Gaps: ``Game(seed, "classic")`` deals and is ready to play."""

    __slots__ = (
        "seed", "ruleset", "redeals_used", "moves_made", "stopped",
        "_grid", "_where", "_gaps", "_undo", "_undoable", "_placed", "_blocked",
    )

    def __init__(self, seed: Seed, ruleset: Ruleset | str = "classic") -> None:
        self.seed = seed
        self.ruleset = ruleset if isinstance(ruleset, Ruleset) else Ruleset.named(ruleset)
        self.redeals_used = 0
        self.moves_made = 0
        self.stopped = False
        self._set_grid(dealt_grid(seed, self.ruleset))
        # (card code, index it came from) for each move since the last redeal, kept only
        # when the ruleset has undo: elsewhere it would grow with every move for nothing.
        self._undo: list[tuple[int, int]] = []
        self._undoable = self.ruleset.undo is not UndoPolicy.NONE

    def _set_grid(self, grid: list[int]) -> None:
        # Sorting the indices by card code puts the 4 gaps (-1) first, in index order,
        # then the 48 cards 2-K in code order: ``where`` needs only the Aces put back.
        self._grid = grid
        self._placed = -1
        self._blocked: bool | None = None
        order = sorted(range(CELLS), key=grid.__getitem__)
        self._gaps = order[:4]
        self._where = [
            GAP, *order[4:16], GAP, *order[16:28], GAP, *order[28:40], GAP, *order[40:]
        ]

    @classmethod
    def restore(
        cls,
        seed: Seed,
        ruleset: Ruleset | str,
        grid: Iterable[int],
        *,
        redeals_used: int = 0,
        moves_made: int = 0,
        stopped: bool = False,
        undo: Iterable[tuple[int, int]] = (),
    ) -> Game:
        """A game in any position: ``grid`` holds 52 card codes row-major, ``GAP`` for gaps.

        ``undo`` lists (card code, index it came from) for the moves undo may take back,
        oldest first; only a ruleset with undo has them. Raises ``NotationError`` for a
        grid that is not 48 cards and 4 gaps, ``ValueError`` for counts out of range or
        an undo list that does not lead back, move by move, through legal moves.
        """
        cells = list(grid)
        check_grid(cells)
        game = cls.__new__(cls)
        game.seed = seed
        game.ruleset = ruleset if isinstance(ruleset, Ruleset) else Ruleset.named(ruleset)
        if not 0 <= redeals_used <= game.ruleset.redeals:
            raise ValueError(
                f"{redeals_used} redeals used is not in 0..{game.ruleset.redeals} ({game.ruleset})"
            )
        if moves_made < 0:
            raise ValueError(f"{moves_made} moves made is negative")
        game.redeals_used = redeals_used
        game.moves_made = moves_made
        game.stopped = stopped
        game._undoable = game.ruleset.undo is not UndoPolicy.NONE
        game._undo = [(code, index) for code, index in undo]
        if game._undo and not game._undoable:
            raise ValueError(f"{game.ruleset} has no undo, but an undo list was given")
        _check_undo(cells, game._undo)
        game._set_grid(cells)
        return game

    @classmethod
    def from_layout(
        cls,
        layout: str,
        ruleset: Ruleset | str = "classic",
        *,
        seed: Seed | None = None,
        redeals_used: int = 0,
    ) -> Game:
        """A game in a given position: four lines of 13 cells, ``--`` for a gap.

        Meant for tests, puzzles and analysis; ``layout()`` prints this form. Lines end
        at line feeds, cells are apart by ASCII space (notation is ASCII, see ``notation``).
        """
        rows = [
            _CELL_SPACE.split(line.strip(SPACE))
            for line in layout.split("\n")
            if line.strip(SPACE)
        ]
        if len(rows) != ROWS or any(len(row) != COLUMNS for row in rows):
            shown = quoted(layout, max_chars=200)  # a whole layout, not a megabyte
            raise NotationError(f"a layout needs {ROWS} rows of {COLUMNS} cells, got {shown}")
        grid = [GAP if cell == "--" else Card.parse(cell).code for row in rows for cell in row]
        return cls.restore(
            seed if seed is not None else Seed(b"layout"), ruleset, grid, redeals_used=redeals_used
        )

    # -- reading the position ------------------------------------------------------

    def card_at(self, slot: Slot) -> Card | None:
        code = self._grid[slot.index]
        return None if code == GAP else DECK[code]

    def slot_of(self, card: Card) -> Slot:
        index = self._where[card.code]
        if index == GAP:
            raise IllegalAction("not_in_play", f"{card} is an Ace: Aces are not in play")
        return Slot.from_index(index)

    def gaps(self) -> list[Slot]:
        return [Slot.from_index(index) for index in sorted(self._gaps)]

    def grid_codes(self) -> tuple[int, ...]:
        """The grid as card codes in row-major order, ``GAP`` for a gap."""
        return tuple(self._grid)

    def is_dead_gap(self, slot: Slot) -> bool:
        """Whether ``slot`` is a gap that no card can fill: right of a King or a gap."""
        index = slot.index
        if self._grid[index] != GAP or index % COLUMNS == 0:
            return False
        left = self._grid[index - 1]
        return left == GAP or left % 13 == KING_RANK_INDEX

    def run_lengths(self) -> list[int]:
        """Per row, the length of its preserved sequence: 2, 3, 4... of one suit from column 1."""
        return [_run_length(self._grid, start) for start in _ROW_STARTS]

    def preserved_sequences(self) -> list[list[Card]]:
        """Per row, the cards of its preserved sequence, left to right."""
        grid = self._grid
        return [
            [DECK[grid[row * COLUMNS + i]] for i in range(length)]
            for row, length in enumerate(self.run_lengths())
        ]

    def placed_per_row(self) -> list[int]:
        return self.run_lengths()

    @property
    def placed(self) -> int:
        """Correctly placed cards: those inside their row's preserved sequence (0-48)."""
        # Kept until the grid changes: the server reads it about ten times an action.
        placed = self._placed
        if placed < 0:
            placed = self._placed = sum(self.run_lengths())
        return placed

    @property
    def score(self) -> int:
        """Derived from the layout and the redeal count, as ruled (-15..58)."""
        placed = self.placed
        bonus = BONUS_WIN_WITHOUT_REDEAL if placed == 48 and self.redeals_used == 0 else 0
        return placed * POINTS_PER_PLACED_CARD + self.redeals_used * POINTS_PER_REDEAL + bonus

    @property
    def redeals_left(self) -> int:
        return self.ruleset.redeals - self.redeals_used

    def is_blocked(self) -> bool:
        """No legal move exists."""
        # Kept until the grid changes, as ``placed``: the server asks about ten times an
        # action (every deadline of a match looks at every seat's game).
        blocked = self._blocked
        if blocked is None:
            blocked = self._blocked = self._no_move_left()
        return blocked

    def _no_move_left(self) -> bool:
        grid = self._grid
        for gap in self._gaps:
            if gap % COLUMNS == 0:
                return False  # a 2 can always go to a column-1 gap (some 2 is elsewhere)
            left = grid[gap - 1]
            if left != GAP and left % 13 != KING_RANK_INDEX:
                return False
        return True

    def is_won(self) -> bool:
        return self.placed == 48

    def is_lost(self) -> bool:
        """Blocked, not won, and no redeal left."""
        return self.redeals_left == 0 and self.is_blocked() and not self.is_won()

    def is_over(self) -> bool:
        """Won, lost or stopped: no action is accepted any more."""
        return self.stopped or (self.is_blocked() and (self.redeals_left == 0 or self.is_won()))

    def result(self) -> GameResult:
        """``won``, ``lost``, ``stopped``, ``blocked`` (a redeal or stop is due) or ``playing``."""
        if self.is_won():
            return "won"
        if self.stopped:
            return "stopped"
        if self.is_blocked():
            return "lost" if self.redeals_left == 0 else "blocked"
        return "playing"

    def can_redeal(self) -> bool:
        try:
            self._check_redeal()
        except IllegalAction:
            return False
        return True

    def can_undo(self) -> bool:
        return self.ruleset.undo is not UndoPolicy.NONE and bool(self._undo) and not self.is_over()

    # -- moves ----------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Every legal move: each non-2 card in its auto form, each 2 with its row."""
        if self.stopped:
            return []
        grid = self._grid
        moves: list[Move] = []
        for gap in self._gaps:
            if gap % COLUMNS == 0:
                row = gap // COLUMNS
                for two in TWO_CODES:
                    moves.append(TWO_MOVES[two][row])
            else:
                left = grid[gap - 1]
                if left != GAP and left % 13 != KING_RANK_INDEX:
                    moves.append(AUTO_MOVES[left + 1])
        return moves

    def is_legal(self, move: Move) -> bool:
        return not self.stopped and self._destination(move) >= 0

    def destination(self, move: Move) -> Slot:
        """Where ``move`` puts its card; raises ``IllegalAction`` if it is not legal."""
        if self.is_over():
            raise IllegalAction("game_over", f"{move}: the game is over ({self.result()})")
        index = self._destination(move)
        if index < 0:
            self._refuse(move)
        return Slot.from_index(index)

    def _destination(self, move: Move) -> int:
        """The index ``move`` fills, or -1 when it is not legal."""
        code = move.code
        grid = self._grid
        if code % 13 == TWO_RANK_INDEX:
            to = move.to_index
            return to if to >= 0 and to % COLUMNS == 0 and grid[to] == GAP else -1
        if code % 13 == 0:
            return -1
        target = self._where[code - 1] + 1
        if target % COLUMNS == 0 or grid[target] != GAP:
            return -1
        if move.to_index >= 0 and move.to_index != target:
            return -1
        return target

    def play(self, move: Move) -> None:
        """Make ``move``, or raise ``IllegalAction`` and change nothing."""
        # The hot path of the server and the bots: flat checks, no allocation.
        code = move.code
        grid = self._grid
        if self.stopped:
            self._refuse(move)
        if code % 13 == TWO_RANK_INDEX:
            to = move.to_index
            if to < 0 or to % COLUMNS != 0 or grid[to] != GAP:
                self._refuse(move)
        else:
            if code % 13 == 0:
                self._refuse(move)
            to = self._where[code - 1] + 1
            if to % COLUMNS == 0 or grid[to] != GAP or (move.to_index >= 0 and move.to_index != to):
                self._refuse(move)
        where = self._where
        came_from = where[code]
        grid[to] = code
        grid[came_from] = GAP
        where[code] = to
        gaps = self._gaps
        gaps[gaps.index(to)] = came_from
        self._placed = -1
        self._blocked = None
        self.moves_made += 1
        if self._undoable:
            self._undo.append((code, came_from))

    def _refuse(self, move: Move) -> None:
        """Raise the ``IllegalAction`` that says why ``move`` is not legal."""
        card = move.card
        if self.is_over():
            raise IllegalAction("game_over", f"{move}: the game is over ({self.result()})")
        if card.rank == 1:
            raise IllegalAction("not_in_play", f"{move}: Aces are not in play")
        grid = self._grid
        if move.to is None:
            if card.rank == 2:
                raise IllegalAction("row_required", f"{move}: name the row for a 2, like {card}>1")
            left_card = DECK[card.code - 1]
            left_index = self._where[left_card.code]
            if left_index % COLUMNS == COLUMNS - 1:
                raise IllegalAction(
                    "not_a_gap",
                    f"{move}: {left_card} stands in column 13, so {card} has no slot to go to",
                )
            right = Slot.from_index(left_index + 1)
            raise IllegalAction(
                "not_a_gap",
                f"{move}: the slot right of {left_card} ({right}) holds "
                f"{DECK[grid[right.index]]}, not a gap",
            )
        to = move.to
        occupant = grid[to.index]
        if occupant != GAP:
            raise IllegalAction("not_a_gap", f"{move}: {to} holds {DECK[occupant]}, not a gap")
        if to.column == 1:
            raise IllegalAction("wrong_card", f"{move}: the gap at {to} takes only a 2")
        left = grid[to.index - 1]
        if left == GAP:
            raise IllegalAction("dead_gap", f"{move}: the gap at {to} is dead (a gap on its left)")
        if left % 13 == KING_RANK_INDEX:
            raise IllegalAction(
                "dead_gap", f"{move}: the gap at {to} is dead (right of {DECK[left]})"
            )
        raise IllegalAction(
            "wrong_card", f"{move}: the gap at {to} takes {DECK[left + 1]}, not {card}"
        )

    def random_playout(
        self, rng: random.Random, *, redeal: bool = True, max_moves: int = 100_000
    ) -> list[Action]:
        """Play uniformly random legal moves until over (or blocked, if not ``redeal``).

        When blocked with a redeal left, redeals if ``redeal``, else returns; returns too
        after ``max_moves`` moves (redeals not counted). Returns the actions made, which
        replay to the same game. The loop inlines ``legal_moves`` and ``play``: it is what
        the games/s figure of ``python -m gaps.bench`` measures. Tests replay its actions
        through ``play`` to hold it to the same rules.
        """
        if self.stopped:
            return []
        grid, where, gaps = self._grid, self._where, self._gaps
        undo = self._undo
        undoable = self._undoable
        fillers = _FILLERS
        random_bits = rng.getrandbits
        actions: list[Action] = []
        record = actions.append
        redeals = 0
        while True:
            for _ in range(max_moves - len(actions) + redeals):
                # A game always has exactly 4 gaps.
                g0, g1, g2, g3 = gaps
                candidates = (
                    fillers[g0][grid[g0 - 1]] + fillers[g1][grid[g1 - 1]]
                    + fillers[g2][grid[g2 - 1]] + fillers[g3][grid[g3 - 1]]
                )
                if not candidates:
                    break
                # Scaling 24 random bits is uniform to within 2**-24, and twice as
                # fast as int(rng.random() * n).
                code, to, move = candidates[random_bits(24) * len(candidates) >> 24]
                came_from = where[code]
                grid[to] = code
                grid[came_from] = GAP
                where[code] = to
                gaps[gaps.index(to)] = came_from
                if undoable:
                    undo.append((code, came_from))
                record(move)
            else:
                break  # max_moves made
            # The loop moved cards behind the caches' back: ``is_won`` must count again.
            self._placed = -1
            self._blocked = None
            if not (redeal and self.redeals_left > 0 and not self.is_won()):
                break
            self._deal_again()
            grid, where, gaps = self._grid, self._where, self._gaps
            undo = self._undo
            record(REDEAL)
            redeals += 1
        self.moves_made += len(actions) - redeals
        self._placed = -1
        self._blocked = None
        return actions

    # -- redeal, undo, stop -----------------------------------------------------------

    def _check_redeal(self) -> None:
        ruleset = self.ruleset
        if self.is_over():
            raise IllegalAction("game_over", f"redeal: the game is over ({self.result()})")
        if ruleset.redeal_when is RedealWhen.NEVER:
            raise IllegalAction("redeal_not_allowed", f"redeal: {ruleset} has no redeals")
        if self.redeals_left <= 0:
            raise IllegalAction(
                "no_redeals_left", f"redeal: all {ruleset.redeals} redeals of {ruleset} are used"
            )
        if ruleset.redeal_when is RedealWhen.BLOCKED and not self.is_blocked():
            raise IllegalAction(
                "redeal_not_allowed", f"redeal: {ruleset} allows a redeal only when blocked"
            )

    def redeal(self) -> None:
        """Collect, shuffle and deal again what the ruleset does not keep."""
        self._check_redeal()
        self._deal_again()

    def _deal_again(self) -> None:
        self._set_grid(redealt_grid(self._grid, self.ruleset, self.seed, self.redeals_used + 1))
        self.redeals_used += 1
        self._undo.clear()

    def undo(self) -> None:
        """Take back the last move since the last redeal, where the ruleset allows it."""
        if self.ruleset.undo is UndoPolicy.NONE:
            raise IllegalAction("undo_not_allowed", f"undo: {self.ruleset} has no undo")
        if self.is_over():
            raise IllegalAction("game_over", f"undo: the game is over ({self.result()})")
        if not self._undo:
            raise IllegalAction(
                "nothing_to_undo", "undo: no move since the start or the last redeal"
            )
        code, came_from = self._undo.pop()
        grid, where, gaps = self._grid, self._where, self._gaps
        now = where[code]
        grid[now] = GAP
        grid[came_from] = code
        where[code] = came_from
        gaps[gaps.index(came_from)] = now
        self._placed = -1
        self._blocked = None

    def stop(self) -> None:
        """End the game now: the score stands."""
        if self.is_over():
            raise IllegalAction("game_over", f"stop: the game is over ({self.result()})")
        self.stopped = True

    def push(self, action: Action) -> None:
        """Apply any action: a ``Move``, ``Redeal()``, ``Undo()`` or ``Stop()``."""
        if isinstance(action, Move):
            self.play(action)
        elif isinstance(action, Redeal):
            self.redeal()
        elif isinstance(action, Undo):
            self.undo()
        elif isinstance(action, Stop):
            self.stop()
        else:
            raise TypeError(f"not an action: {action!r}")

    # -- copies, text and bytes ---------------------------------------------------------

    def copy(self) -> Game:
        game = Game.__new__(Game)
        game.seed = self.seed
        game.ruleset = self.ruleset
        game.redeals_used = self.redeals_used
        game.moves_made = self.moves_made
        game.stopped = self.stopped
        game._grid = self._grid.copy()
        game._placed = self._placed
        game._blocked = self._blocked
        game._where = self._where.copy()
        game._gaps = self._gaps.copy()
        game._undo = self._undo.copy()
        game._undoable = self._undoable
        return game

    def undo_stack(self) -> list[tuple[Card, Slot]]:
        """The moves undo would take back, oldest first: (card, the slot it came from)."""
        return [(DECK[code], Slot.from_index(index)) for code, index in self._undo]

    def layout(self) -> str:
        """The grid as four lines of 13 cells, ``--`` for a gap (``from_layout`` reads it)."""
        grid = self._grid
        return "\n".join(
            " ".join(
                "--" if code == GAP else str(DECK[code]) for code in grid[start : start + COLUMNS]
            )
            for start in range(0, CELLS, COLUMNS)
        )

    def __str__(self) -> str:
        return self.layout()

    def __repr__(self) -> str:
        return (
            f"<Game {self.ruleset} seed={self.seed} redeals_used={self.redeals_used} "
            f"score={self.score} {self.result()}>"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.state_key() == other.state_key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def state_key(self) -> tuple[object, ...]:
        """Everything that decides what can happen next, for equality and search tables."""
        return (
            self.seed, self.ruleset.name, self.redeals_used, self.stopped,
            tuple(self._grid), tuple(self._undo),
        )


def _names(codes: Iterable[int]) -> str:
    return " ".join(str(DECK[code]) for code in codes) or "none"


def check_grid(grid: Iterable[int]) -> None:
    """Raise ``NotationError`` unless ``grid`` holds the 48 non-Ace cards once and 4 gaps."""
    cells = list(grid)
    if len(cells) != CELLS:
        raise NotationError(f"a grid has {CELLS} cells, not {len(cells)}")
    strange = [
        cell for cell in cells if not isinstance(cell, int) or not GAP <= cell < 52
    ]
    if strange:
        raise NotationError(
            f"a grid cell is a card code 0..51 or {GAP} for a gap, not {strange[0]!r}"
        )
    cards = [code for code in cells if code != GAP]
    if sorted(cards) != _IN_PLAY:
        missing = sorted(set(_IN_PLAY) - set(cards))
        aces = [code for code in cards if code in ACE_CODES]
        doubled = sorted({code for code in cards if cards.count(code) > 1})
        raise NotationError(
            f"a grid holds the 48 cards 2-K once each and 4 gaps: "
            f"missing {_names(missing)}; doubled {_names(doubled)}; Aces {_names(aces)}"
        )


def _check_undo(grid: list[int], undo: list[tuple[int, int]]) -> None:
    """Raise ``ValueError`` unless taking back ``undo`` from ``grid`` undoes legal moves."""
    cells = grid.copy()
    for code, came_from in reversed(undo):
        if not 0 <= code < 52 or code in ACE_CODES or not 0 <= came_from < CELLS:
            raise ValueError(f"undo entry {(code, came_from)} names no card or no slot")
        if cells[came_from] != GAP:
            raise ValueError(
                f"undo entry {DECK[code]} from {Slot.from_index(came_from)}: that slot is no gap"
            )
        now = cells.index(code)
        legal = (
            now % COLUMNS == 0
            if code % 13 == TWO_RANK_INDEX
            else now % COLUMNS != 0 and cells[now - 1] == code - 1
        )
        # The position before the move: the card back where it came from.
        cells[now], cells[came_from] = GAP, code
        if not legal:
            raise ValueError(
                f"undo entry {DECK[code]} from {Slot.from_index(came_from)}: "
                f"moving it to {Slot.from_index(now)} was not a legal move"
            )


# A cell of a redeal's template that the shuffled cards fill.
_DEALT: Final = -2
_IN_PLAY_SET: Final = frozenset(_IN_PLAY)
_DECK_SET: Final = frozenset(range(52))
_ROW_STARTS: Final = range(0, CELLS, COLUMNS)


def _run_length(grid: list[int], start: int) -> int:
    """The length of the preserved sequence of the row starting at index ``start``."""
    first = grid[start]
    if first == GAP or first % 13 != TWO_RANK_INDEX:
        return 0
    length = 1
    while length < COLUMNS - 1 and grid[start + length] == first + length:
        length += 1
    return length


def _row_template(grid: list[int], start: int, ruleset: Ruleset) -> list[int]:
    """Row ``start`` after a redeal: kept cards, new gaps (``GAP``), ``_DEALT`` to fill."""
    run = _run_length(grid, start)
    if ruleset.keep is Keep.LEFT_RUNS:
        row = grid[start : start + run] + [_DEALT] * (COLUMNS - run)
    elif ruleset.keep is Keep.IN_SUIT_COLUMNS:
        first = grid[start]
        suited = first != GAP and first % 13 == TWO_RANK_INDEX
        row = [
            first + column if suited and grid[start + column] == first + column else _DEALT
            for column in range(COLUMNS - 1)
        ]
        row.append(_DEALT)  # column 13 has no card of its own: its place is the gap's
    else:
        row = [_DEALT] * COLUMNS
    if ruleset.new_gaps is NewGaps.COLUMN_ONE and row[0] == _DEALT:
        row[0] = GAP
    elif ruleset.new_gaps is NewGaps.AFTER_RUN:
        row[run] = GAP
    return row


def redealt_grid(grid: list[int], ruleset: Ruleset, seed: Seed, redeal_number: int) -> list[int]:
    """The grid after redeal number ``redeal_number`` (1, 2, ...) of ``grid``.

    A pure function of the kept cards, the ruleset, the seed and the redeal number:
    the collected cards are put in code order before the shuffle, so two players in the
    same position get the same redeal.
    """
    rows = [_row_template(grid, start, ruleset) for start in _ROW_STARTS]
    with_aces = ruleset.new_gaps is NewGaps.RANDOM  # the Aces, dealt, make the new gaps
    dealt = sorted((_DECK_SET if with_aces else _IN_PLAY_SET).difference(*rows))
    shuffle(dealt, seed.data, stream_label(redeal_number))
    if with_aces:
        for ace in ACE_CODES:
            dealt[dealt.index(ace)] = GAP
    taken = 0
    for row in rows:
        count = row.count(_DEALT)
        first = row.index(_DEALT) if count else COLUMNS
        if first + count == COLUMNS:  # the usual row: its dealt cells close it
            row[first:] = dealt[taken : taken + count]
        else:
            cards = iter(dealt[taken : taken + count])
            row[:] = [next(cards) if cell == _DEALT else cell for cell in row]
        taken += count
    return [*rows[0], *rows[1], *rows[2], *rows[3]]
