"""Slots of the 4 x 13 grid: ``Slot(2, 5)`` prints as ``r2c5``."""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from gaps.errors import NotationError
from gaps.notation import number, quoted

ROWS: Final = 4
COLUMNS: Final = 13

# re.ASCII: \s is ASCII whitespace only.
_SLOT_TEXT = re.compile(r"\s*[rR]([0-9]+)\s*[cC]([0-9]+)\s*", re.ASCII)


class Slot(NamedTuple):
    """A place on the grid, ``row`` 1-4 and ``column`` 1-13 (counted from the left)."""

    row: int
    column: int

    @staticmethod
    def parse(text: str) -> Slot:
        """Parse ``r2c5`` (ASCII case and surrounding space ignored, no leading zeros)."""
        match = _SLOT_TEXT.fullmatch(text)
        if match is None:
            raise NotationError(
                f"{quoted(text)} is not a slot: expected r<row>c<column>, like r2c5"
            )
        try:
            row = number(match[1], "row", high=ROWS)
            column = number(match[2], "column", high=COLUMNS)
        except NotationError as error:
            raise NotationError(f"{quoted(text)} is not a slot: {error}") from None
        return Slot(row, column)

    @staticmethod
    def checked(row: int, column: int) -> Slot:
        if not 1 <= row <= ROWS:
            raise NotationError(f"row {row} is not in 1..{ROWS}")
        if not 1 <= column <= COLUMNS:
            raise NotationError(f"column {column} is not in 1..{COLUMNS}")
        return Slot(row, column)

    @staticmethod
    def from_index(index: int) -> Slot:
        """The slot at ``index`` in row-major order (0 is r1c1, 51 is r4c13)."""
        if not 0 <= index < ROWS * COLUMNS:
            raise ValueError(f"slot index {index} is not in 0..51")
        return Slot(index // COLUMNS + 1, index % COLUMNS + 1)

    # Shadows ``tuple.index`` on purpose: the engine's flat grid index is what callers need.
    @property
    def index(self) -> int:  # type: ignore[override]
        return (self.row - 1) * COLUMNS + self.column - 1

    def __str__(self) -> str:
        return f"r{self.row}c{self.column}"
