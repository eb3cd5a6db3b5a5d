"""The 4 x 13 grid drawn as Rich text, at any size: pure functions from a ``gaps.Game`` (and
what the player points at) to lines of ``rich.text.Text``.

A ``Geometry`` says how large: cells 4 or 5 columns wide with a card on one line, or,
in a larger terminal, cards drawn as tiles of 3 or 5 lines (``GEOMETRIES``, smallest
first); rows close together or a blank line apart. Every colour comes from a
``Palette`` (the colour setting), and every mark is drawn in a colour that reads against
what it is drawn on (``client_cli.palette``): a live gap is ``·`` and a dead gap ``✕``,
each on a ground of its own so that the holes of the board are what the eye finds first.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from rich.style import Style
from rich.text import Text

from client_cli.palette import DARK, Palette
from client_cli.render import card_label
from gaps import Game, Slot

ROWS: Final = 4
COLUMNS: Final = 13
#: The width of the row label before the cells (`` 1 ``).
LABEL_WIDTH: Final = 3
#: What marks a cell that is no card.
GAP_MARK: Final = "·"
DEAD_MARK: Final = "✕"
TARGET_MARK: Final = "▼"
#: The colour of the mark on a target (a light ground in both settings).
ON_TARGET: Final = "#121212"


@dataclass(frozen=True, order=True)
class Geometry:
    """How large the board is drawn: ``cell`` columns a slot, ``tile`` lines a card
    (1, or 3 and more: a tile with a face), ``spacing`` blank lines between rows."""

    cell: int
    tile: int
    spacing: int

    @property
    def tiles(self) -> bool:
        """Whether cards are tiles with a face (``cell - 1`` wide, a column between)."""
        return self.tile > 1

    @property
    def width(self) -> int:
        return LABEL_WIDTH + self.cell * COLUMNS

    @property
    def height(self) -> int:
        return 1 + ROWS * self.tile + (ROWS - 1) * self.spacing


#: Every size the board is drawn at, smallest first: 55 to 172 columns, 5 to 24 lines.
GEOMETRIES: Final = (
    Geometry(4, 1, 0), Geometry(4, 1, 1), Geometry(5, 1, 0), Geometry(5, 1, 1),
    Geometry(7, 3, 0), Geometry(7, 3, 1), Geometry(9, 3, 1), Geometry(11, 5, 1),
    Geometry(13, 5, 1),
)
COMPACT: Final = GEOMETRIES[0]
#: The size of a board with a blank line between rows and cells of 5 (an 80 x 24 terminal).
NORMAL: Final = Geometry(5, 1, 1)


def preserved_indices(game: Game) -> set[int]:
    """Flat indices of every card inside its row's preserved sequence."""
    return {
        (row - 1) * COLUMNS + column
        for row, length in enumerate(game.run_lengths(), start=1)
        for column in range(length)
    }


def movable_indices(game: Game) -> set[int]:
    """Flat indices of every card that has a legal move now."""
    if game.is_over():
        return set()
    return {game.slot_of(move.card).index for move in game.legal_moves()}


@dataclass(frozen=True)
class Cell:
    """What one slot shows: its mark (three characters) and its colours."""

    mark: str
    colour: str
    ground: str | None  # None: the screen's background
    bold: bool = False
    underline: bool = False


def cell_look(
    game: Game, slot: Slot, palette: Palette, geometry: Geometry, *,
    preserved: Collection[int] = (), cursor: bool = False, selected: bool = False,
    target: bool = False, movable: bool = False,
) -> Cell:
    """The mark and colours of ``slot``: a card, a gap, a dead gap, a target; the cursor
    swaps its colours."""
    card = game.card_at(slot)
    if target:
        look = Cell(f" {TARGET_MARK} " if card is None else card_label(card), ON_TARGET,
                    palette.target, bold=True)
    elif card is not None:
        ground = (palette.selected if selected
                  else palette.preserved if slot.index in preserved
                  else palette.face if geometry.tiles else None)
        look = Cell(card_label(card), palette.suit(card.suit), ground, bold=True,
                    underline=movable)
    elif game.is_dead_gap(slot):
        look = Cell(f" {DEAD_MARK} ", palette.dead, palette.dead_ground, bold=True)
    else:
        look = Cell(f" {GAP_MARK} ", palette.gap, palette.gap_ground, bold=True)
    if cursor:
        look = Cell(look.mark, look.ground or palette.background, look.colour, look.bold,
                    look.underline)
    return look


def _style(look: Cell, *, mark: bool) -> Style:
    return Style(color=look.colour, bgcolor=look.ground, bold=look.bold and mark,
                 underline=look.underline and mark)


def cell_lines(look: Cell, geometry: Geometry) -> list[Text]:
    """The ``geometry.tile`` lines of one cell, each ``geometry.cell`` wide."""
    if not geometry.tiles:
        inner = f" {look.mark} " if geometry.cell >= 5 else f"{look.mark} "
        text = Text(inner, style=_style(look, mark=False))
        text.stylize(_style(look, mark=True), 1 if geometry.cell >= 5 else 0,
                     4 if geometry.cell >= 5 else 3)
        return [text]
    face = geometry.cell - 1  # the tile, then one column between tiles
    left = (face - 3) // 2
    ground = _style(look, mark=False)
    lines = []
    for line in range(geometry.tile):
        text = Text()
        if line == geometry.tile // 2:
            text.append(" " * left, style=ground)
            text.append(look.mark, style=_style(look, mark=True))
            text.append(" " * (face - 3 - left), style=ground)
        else:
            text.append(" " * face, style=ground)
        text.append(" ")
        lines.append(text)
    return lines


def board_lines(
    game: Game, *, geometry: Geometry = NORMAL, palette: Palette = DARK,
    cursor: int | None = None, selected: int | None = None, targets: Collection[int] = (),
    movable: Collection[int] = (),
) -> list[Text]:
    """The board: a header of column numbers, then each row (``geometry.tile`` lines),
    ``geometry.spacing`` blank lines between rows."""
    preserved = preserved_indices(game)
    label = Style(color=palette.label)
    # Each column's number ends over its cards' rank (``10♥``, `` 8♣``: the label's second
    # character).
    offset = (geometry.cell - 4) // 2 if geometry.tiles else 1 if geometry.cell >= 5 else 0
    header = Text(" " * LABEL_WIDTH + "".join(
        f"{' ' * offset}{column:>2}".ljust(geometry.cell) for column in range(1, COLUMNS + 1)),
        style=label)
    lines = [header]
    for row in range(1, ROWS + 1):
        block = [Text(f"{row:>2} " if line == geometry.tile // 2 else " " * LABEL_WIDTH,
                      style=label) for line in range(geometry.tile)]
        for column in range(1, COLUMNS + 1):
            slot = Slot(row, column)
            look = cell_look(game, slot, palette, geometry, preserved=preserved,
                             cursor=slot.index == cursor, selected=slot.index == selected,
                             target=slot.index in targets, movable=slot.index in movable)
            for line, part in zip(block, cell_lines(look, geometry), strict=True):
                line.append_text(part)
        lines.extend(block)
        if row < ROWS:
            lines.extend(Text("") for _ in range(geometry.spacing))
    return lines


def board_text(game: Game, **options: object) -> Text:
    """``board_lines`` joined into one ``Text``."""
    return Text("\n").join(board_lines(game, **options))  # type: ignore[arg-type]


def slot_at(x: int, y: int, geometry: Geometry = NORMAL) -> Slot | None:
    """The slot under a point of ``board_lines`` (x, y from its top-left), if any."""
    if y < 1 or x < LABEL_WIDTH:
        return None
    block = geometry.tile + geometry.spacing
    row, line = divmod(y - 1, block)
    column = (x - LABEL_WIDTH) // geometry.cell
    if line >= geometry.tile or not (0 <= row < ROWS and 0 <= column < COLUMNS):
        return None
    return Slot(row + 1, column + 1)

