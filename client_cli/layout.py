"""Where the match screen puts things in a terminal of a given size: pure arithmetic.

The screen is, top to bottom: the title, the main area, the message line, the input line
and the footer (one line each). The main area holds your board (with your numbers under
it) and the players panel: beside the board when the terminal is wide enough for both
without shrinking the board, otherwise under it. ``plan`` picks

* the largest board (``client_cli.board.GEOMETRIES``) that leaves room for every player's
  row: the whole panel is always on screen, from 80 x 24 on, whatever the number of
  players; when one column of rows does not fit under even the smallest board, the panel
  drops its frame, then lays its rows out in two columns or more; the panel goes beside
  the board when the board is as large there as under it;
* whether there is room left under the panel for the latest events (the log).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from client_cli.board import COMPACT, GEOMETRIES, Geometry

#: Lines of the title, the message line, the input line and the footer.
CHROME_LINES: Final = 4
#: Columns and lines the board's frame (border and padding) takes around it.
BOARD_FRAME: Final = (4, 2)
#: Lines of your numbers under the board.
STATS_LINES: Final = 2
#: Columns and lines the players panel's frame takes; columns without it (padding).
PANEL_FRAME: Final = (4, 2)
PANEL_PADDING: Final = 2
#: Columns between two columns of players' rows.
PANEL_GUTTER: Final = 3
#: The widest the players panel needs to be beside the board.
PANEL_MOST: Final = 72
#: Lines the log takes at most, and at least to be worth showing.
LOG_MOST: Final = 6
LOG_LEAST: Final = 2


@dataclass(frozen=True)
class Layout:
    """How the main area is laid out."""

    wide: bool  # the players panel beside the board (else under it)
    geometry: Geometry  # the board's size
    columns: int  # columns of players' rows in the panel
    framed: bool  # whether the panel has its border
    log: int  # lines for the latest events (0: none)


@dataclass(frozen=True)
class Panel:
    """What the players panel needs: its rows, and widths from ``client_cli.players``."""

    rows: int
    least: int  # the narrowest a row can be (short names, no bar)
    natural: int  # a row with every name whole and a bar

    def lines(self, columns: int, framed: bool) -> int:
        return (PANEL_FRAME[1] if framed else 0) + 1 + math.ceil(self.rows / columns)

    def width(self, columns: int, framed: bool) -> int:
        """The least width of the panel with ``columns`` columns of rows."""
        return (columns * self.least + (columns - 1) * PANEL_GUTTER
                + (PANEL_FRAME[0] if framed else PANEL_PADDING))


#: The panel's arrangements, the most comfortable first.
ARRANGEMENTS: Final = ((1, True), (1, False), (2, True), (2, False), (3, False), (4, False))


def plan(columns: int, lines: int, panel: Panel, *, board: bool = True) -> Layout:
    """The layout of a ``columns`` x ``lines`` terminal for ``panel`` (with your board and
    numbers, unless ``board`` is false: a spectator's screen)."""
    main = lines - CHROME_LINES
    stats = STATS_LINES if board else 0
    narrow = _narrow(columns, main, stats, panel)
    if not board:
        return narrow
    wide = _wide(columns, main, stats, panel)
    if wide is not None and wide.geometry >= narrow.geometry:
        return wide
    return narrow


def _narrow(columns: int, main: int, stats: int, panel: Panel) -> Layout:
    for count, framed in ARRANGEMENTS:
        if panel.width(count, framed) > columns:
            continue
        used = panel.lines(count, framed)
        geometry = _largest(columns - BOARD_FRAME[0], main - used - stats - BOARD_FRAME[1])
        if geometry is not None:
            room = main - used - stats - geometry.height - BOARD_FRAME[1]
            return Layout(False, geometry, count, framed, _log(room))
    # Not even the smallest board fits beside every row: the main area scrolls.
    count = max((count for count, framed in ARRANGEMENTS
                 if not framed and panel.width(count, framed) <= columns), default=1)
    return Layout(False, COMPACT, count, False, 0)


def _wide(columns: int, main: int, stats: int, panel: Panel) -> Layout | None:
    for framed in (True, False):
        if panel.lines(1, framed) > main:
            continue
        width = min(max(panel.natural + PANEL_FRAME[0], panel.width(1, framed)), PANEL_MOST)
        geometry = _largest(columns - width - BOARD_FRAME[0], main - stats - BOARD_FRAME[1])
        if geometry is not None:
            return Layout(True, geometry, 1, framed, _log(main - panel.lines(1, framed)))
    return None


def _largest(columns: int, lines: int) -> Geometry | None:
    fitting = [geometry for geometry in GEOMETRIES
               if geometry.width <= columns and geometry.height <= lines]
    return fitting[-1] if fitting else None


def _log(room: int) -> int:
    return min(room, LOG_MOST) if room >= LOG_LEAST else 0


def board_alone(columns: int, lines: int) -> Geometry:
    """The largest board a screen with the board and your numbers only holds (practice)."""
    return _largest(columns - BOARD_FRAME[0],
                    lines - CHROME_LINES - STATS_LINES - BOARD_FRAME[1]) or COMPACT
