"""Deal sheets: one tournament round's deal on paper, for players at a table in the room.

The rule sheets' competition mode has players "at separate tables or in digital versions
using the same initial deal". A sheet carries that deal: the 4 x 13 layout exactly as
``gaps`` deals it to the players online (``dealt_grid``: the shuffled deck, the Aces taken
out as the four gaps, the 2s already in column 1 under Montana), the deal's share code,
the round, the ruleset, and numbered steps for laying it out from a sorted deck.

``Layout`` and ``parse_layout`` print and read the layout round-trip, as the engine's
other value types do::

    >>> from gaps import Seed
    >>> sheet = DealSheet.of(Seed.derive("club night"), "classic", "Q4M2ZK", 2)
    >>> parse_layout(str(sheet.layout)) == sheet.layout
    True

Only the first deal is shared: a redeal at a table is shuffled at the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from gaps.card import DECK, RANKS, Card
from gaps.errors import NotationError
from gaps.game import GAP, check_grid, dealt_grid
from gaps.notation import SPACE, quoted
from gaps.ruleset import Ruleset, Start
from gaps.seed import Seed
from gaps.slot import COLUMNS, ROWS, Slot

#: How a gap is printed in a text layout (the engine's own layout notation).
GAP_TEXT: Final = "--"
#: What else reads as a gap: the word the PDF and web sheets print in a gap's box.
GAP_WORD: Final = "gap"
#: The suits in the order a sorted deck has them, as symbols.
SUIT_ORDER: Final = "♣♦♥♠"
#: The suits printed in red.
RED_SUITS: Final = frozenset("♦♥")
#: The width of a printed cell: "10♥" is the widest.
_CELL_WIDTH: Final = 3
_CELL_SPACE: Final = re.compile(r"[ \t\r\f\v]+")
_COLUMN_NUMBERS: Final = [str(column) for column in range(1, COLUMNS + 1)]


def rank_text(card: Card) -> str:
    """The rank as people read it on a card: ``2``-``10``, ``J``, ``Q``, ``K``."""
    return "10" if card.rank == 10 else RANKS[card.rank - 1]


def card_text(card: Card) -> str:
    """The card as a sheet prints it: ``10♥``, ``K♠`` (``Card.parse`` reads it back)."""
    return rank_text(card) + card.symbol


@dataclass(frozen=True)
class Layout:
    """A starting position: 52 cells row-major, a ``Card`` or None for a gap.

    ``str(layout)`` prints a numbered grid; ``parse_layout`` reads it back.
    """

    cells: tuple[Card | None, ...]

    def __post_init__(self) -> None:
        check_grid(self.codes())

    @staticmethod
    def from_codes(grid: list[int] | tuple[int, ...]) -> Layout:
        """The layout of an engine grid (card codes, ``GAP`` for a gap)."""
        check_grid(grid)
        return Layout(tuple(None if code == GAP else DECK[code] for code in grid))

    def codes(self) -> tuple[int, ...]:
        """The engine's grid: card codes row-major, ``GAP`` for a gap."""
        return tuple(GAP if cell is None else cell.code for cell in self.cells)

    def rows(self) -> tuple[tuple[Card | None, ...], ...]:
        starts = range(0, ROWS * COLUMNS, COLUMNS)
        return tuple(self.cells[start : start + COLUMNS] for start in starts)

    def gaps(self) -> tuple[Slot, ...]:
        """Where the gaps are, in reading order."""
        cells = enumerate(self.cells)
        return tuple(Slot.from_index(index) for index, cell in cells if cell is None)

    def __str__(self) -> str:
        def line(label: str, texts: list[str]) -> str:
            return "  ".join(f"{text:>{_CELL_WIDTH}}" for text in [label, *texts])

        return "\n".join([
            line("", _COLUMN_NUMBERS),
            *(
                line(str(number), [GAP_TEXT if cell is None else card_text(cell) for cell in row])
                for number, row in enumerate(self.rows(), start=1)
            ),
        ])


def parse_layout(text: str) -> Layout:
    """Read a printed layout: four rows of 13 cells, each a card (``10♥``, ``TH``, ``7h``)
    or a gap (``--`` or ``gap``).

    A row may start with its number (1 to 4, in order) and a line holding just the column
    numbers 1 to 13 may come first, as ``str(Layout)`` prints them. Raises
    ``NotationError`` naming the line or the cell that does not read, or saying which
    cards a layout of 48 cards and 4 gaps lacks or holds twice.
    """
    lines = [line.strip(SPACE) for line in text.split("\n")]
    rows = [_CELL_SPACE.split(line) for line in lines if line]
    if rows and rows[0] == _COLUMN_NUMBERS:
        rows = rows[1:]
    if len(rows) != ROWS:
        raise NotationError(
            f"a layout has {ROWS} rows of {COLUMNS} cells, not {len(rows)}"
            f" row{'' if len(rows) == 1 else 's'}:"
            f" {quoted(text, max_chars=200)}"
        )
    cells: list[Card | None] = []
    for number, row in enumerate(rows, start=1):
        if len(row) == COLUMNS + 1 and row[0] == str(number):
            row = row[1:]
        if len(row) != COLUMNS:
            raise NotationError(
                f"row {number} of a layout has {COLUMNS} cells (after its number {number}),"
                f" not {quoted(' '.join(row), max_chars=80)}"
            )
        cells.extend(_cell(text, Slot(number, column)) for column, text in enumerate(row, start=1))
    try:
        return Layout(tuple(cells))
    except NotationError as error:
        raise NotationError(f"not a layout of a deal: {error}") from None


def _cell(text: str, slot: Slot) -> Card | None:
    if text == GAP_TEXT or (text.isascii() and text.lower() == GAP_WORD):
        return None
    try:
        return Card.parse(text)
    except NotationError as error:
        raise NotationError(f"{slot} of a layout: {error}") from None


@dataclass(frozen=True)
class DealSheet:
    """One round's deal, for a table: ``DealSheet.of(seed, ruleset, tournament, round)``.

    ``str(sheet)`` is the whole sheet as text; the PDF and web sheets draw the same
    parts: ``title``, ``details``, ``layout`` and ``instructions()``.
    """

    tournament: str
    round: int
    seed: Seed
    ruleset: Ruleset
    layout: Layout

    @staticmethod
    def of(seed: Seed, ruleset: Ruleset | str, tournament: str, round: int) -> DealSheet:
        """The sheet of round ``round`` of ``tournament``, whose deal is ``seed``."""
        rules = ruleset if isinstance(ruleset, Ruleset) else Ruleset.named(ruleset)
        code = tournament.strip(SPACE).upper() if tournament.isascii() else ""
        if not code.isalnum():
            raise NotationError(f"{quoted(tournament)} is not a tournament code (like Q4M2ZK)")
        if isinstance(round, bool) or not isinstance(round, int) or round < 1:
            raise ValueError(f"round {round!r} is not a round number 1, 2, ...")
        return DealSheet(code, round, seed, rules, Layout.from_codes(dealt_grid(seed, rules)))

    @property
    def title(self) -> str:
        return f"Tournament {self.tournament} · round {self.round}"

    @property
    def details(self) -> tuple[str, ...]:
        """The lines under the title: the deal's code and the ruleset."""
        return (
            f"Deal {self.seed} · ruleset {self.ruleset.name}",
            self.ruleset.description,
        )

    def instructions(self) -> tuple[str, ...]:
        """How to lay the deal out from a sorted deck, step by step.

        Laying it row by row, each left to right, from a sorted spread is what a person
        does without mistakes: the next card is always named by the sheet and found at
        once among its suit's cards, and each row grows from the left, gaps included, so
        the places fall into their columns.
        """
        steps = [
            "Take one full deck of 52 cards, without jokers.",
            "Sort it by suit, each suit from the Ace to the King, and spread each suit face"
            " up in a line of its own (" + " ".join(SUIT_ORDER) + "), so that every card"
            " can be seen.",
            "Put the four Aces away: they are not in play, and the layout has four gaps in"
            f" their stead: {_places(self.layout.gaps())}.",
            "Lay the layout out row by row, from row 1 at the top, each row from column 1 on"
            " the left: for each place, take the card the sheet shows from its suit's line"
            " and put it face up there; for a gap, leave the space of one card empty.",
            "Check: the suit lines are empty, each row has 13 places (cards and gaps"
            " together), and every card stands where the sheet shows it.",
        ]
        if self.ruleset.start is Start.TWOS_TO_COLUMN_ONE:
            steps.append(
                "The sheet shows the deal as Montana starts, the 2s already moved to column 1:"
                " lay it out as shown and move nothing before the round starts."
            )
        else:
            steps.append("Move nothing before the round starts.")
        steps.append(
            "Only this first deal is shared with the other players: a redeal, if the rules"
            " allow one, is shuffled at the table."
        )
        return tuple(steps)

    def __str__(self) -> str:
        numbered = [f"{number}. {step}" for number, step in enumerate(self.instructions(), 1)]
        return "\n".join([
            f"Deal sheet: {self.title}",
            *self.details,
            "",
            str(self.layout),
            "",
            "How to lay it out from a sorted deck:",
            *numbered,
        ])


def _places(slots: tuple[Slot, ...]) -> str:
    """``row 1 column 4, row 3 column 2 and row 4 column 13``."""
    names = [f"row {slot.row} column {slot.column}" for slot in slots]
    return ", ".join(names[:-1]) + " and " + names[-1]
