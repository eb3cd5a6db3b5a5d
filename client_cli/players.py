"""Every player's progress, as the match screen lists it: one row a player.

A row is the name (``▸`` before yours, ``[bot]`` after a bot's, ``★`` after the host's in
the lobby), the placed cards (a bar and ``20/48``), the score, the redeals used and the
state (ready, playing, blocked, away, or how and when the game ended). The table is laid
out for the width it is given: the state is never cut and the marks never lost; what
gives way is, in this order, the bar, the score and redeals, then the length of the
names (``carol-who-h…``). ``PlayersPanel`` draws it; with ``columns`` above 1 the rows
are split into columns side by side, so that every row stays on screen.

Every value from the server is ``printable`` text: a name is never markup nor a
control sequence.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rich.console import RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from client_cli.duration import format_ms
from client_cli.layout import PANEL_GUTTER, Panel
from client_cli.palette import DARK, Palette
from client_cli.render import BOT_MARK, printable
from gaps_protocol.messages.views import Progress

#: Columns of the marker before a name (``▸ `` for yours).
MARKER: Final = 2
#: The fewest characters of a name shown before its ellipsis.
LEAST_NAME: Final = 6
#: Widths of the placed cards as ``20/48``, the score and the redeals used.
PLACED: Final = 5
POINTS: Final = 4
REDEALS: Final = 2
#: The bars a row may have, widest first (one character a card at 48).
BARS: Final = (48, 24, 16, 8)
#: Whole names are worth more than a bar: a bar is drawn only beside this much of a name.
NAME_BEFORE_BAR: Final = 12
HEADINGS: Final = ("player", "placed", "pts", "rd", "state")


def ordered(players: Iterable[Progress]) -> list[Progress]:
    """Most cards placed first; then by name."""
    return sorted(players, key=lambda p: (-p.placed, p.name))


def player_state(player: Progress, *, started: bool, palette: Palette = DARK) -> Text:
    """What a player is doing: ready or not (in the lobby), playing, blocked, away, or how
    and when their game ended."""
    if not started:
        return (Text("ready", style=palette.good) if player.ready
                else Text("not ready", style=palette.muted))
    reason = player.end_reason
    if reason == "won":
        return Text(f"won {format_ms(player.finish_ms)}", style=f"bold {palette.good}")
    if reason:
        return Text(printable(f"{reason} {format_ms(player.finish_ms)}"),
                    style=palette.warning)
    if not player.connected:
        return Text("away", style=palette.muted)
    status = printable(player.status)
    return Text(status, style=palette.warning if status == "blocked" else palette.text)


@dataclass(frozen=True)
class Look:
    """Who is who in the table, and how it is coloured."""

    you_id: int | None = None
    host_id: int | None = None
    started: bool = True
    palette: Palette = DARK


def _extras(player: Progress, look: Look) -> Text:
    """What follows a name and is never cut: the bot mark, the host's star."""
    text = Text()
    if player.bot:
        text.append(f" {BOT_MARK}", style=look.palette.bot)
    if player.player_id == look.host_id and not look.started:
        text.append(" ★", style=look.palette.warning)
    return text


def _name(player: Progress, look: Look, width: int) -> Text:
    """The marker, the name (shortened with … to fit ``width``) and its extras."""
    you = player.player_id == look.you_id
    style = Style(color=look.palette.you, bold=True) if you else Style(color=look.palette.text)
    extras = _extras(player, look)
    name = printable(player.name)
    room = width - MARKER - extras.cell_len
    if len(name) > room:
        name = name[:max(0, room - 1)] + "…"
    text = Text("▸ " if you else "  ", style=style)
    text.append(name, style=style)
    text.append_text(extras)
    if not player.connected and look.started:
        text.stylize(Style(color=look.palette.muted))
    return text


def name_room(players: Sequence[Progress], look: Look, characters: int | None = None) -> int:
    """The columns the names take with their marker and extras: whole, or with at most
    ``characters`` of each name."""
    return max((MARKER + min(len(printable(player.name)), characters or 10**6)
                + _extras(player, look).cell_len for player in players), default=MARKER + 4)


def panel_needs(players: Sequence[Progress], look: Look) -> Panel:
    """The rows and widths the layout gives room for."""
    state = _state_width(players, look)
    longest = name_room(players, look)
    return Panel(rows=len(players),
                 least=name_room(players, look, LEAST_NAME) + Format(0, False).fixed(state),
                 natural=longest + 1 + (BARS[-1] + 1 + PLACED) + 1 + POINTS + 1 + REDEALS
                 + 1 + state)


def _state_width(players: Sequence[Progress], look: Look) -> int:
    return max([len(HEADINGS[-1]), *(player_state(p, started=look.started).cell_len
                                     for p in players)])


@dataclass(frozen=True)
class Format:
    """Which columns a row has: a bar of ``bar`` (0: none), the score and redeals."""

    bar: int
    numbers: bool

    @property
    def placed_width(self) -> int:
        """The bar and ``20/48``, or its heading."""
        return max(len(HEADINGS[1]), (self.bar + 1 if self.bar else 0) + PLACED)

    def fixed(self, state: int) -> int:
        """The columns of everything but the name (one between columns)."""
        numbers = 1 + POINTS + 1 + REDEALS if self.numbers else 0
        return 1 + self.placed_width + numbers + 1 + state


def choose_format(width: int, names: Sequence[int], state: int) -> Format:
    """The richest row that fits ``width`` and leaves the names room (``names``: the
    columns they take whole, with ``NAME_BEFORE_BAR`` and with ``LEAST_NAME``
    characters): a wide bar only beside whole names, the narrowest beside
    ``NAME_BEFORE_BAR`` characters, the numbers beside ``LEAST_NAME``."""
    whole, before_bar, least = names
    for bar in BARS:
        row = Format(bar, True)
        if width - row.fixed(state) >= (whole if bar > BARS[-1] else before_bar):
            return row
    numbers = Format(0, True)
    if width - numbers.fixed(state) >= least:
        return numbers
    return Format(0, False)


def players_table(
    players: Iterable[Progress], *, width: int, look: Look = Look(), columns: int = 1,
) -> RenderableType:
    """The players' rows laid out in ``width`` columns of the terminal, in ``columns``
    columns of rows side by side."""
    rows = ordered(players)
    columns = max(1, min(columns, len(rows)))
    share = (width - (columns - 1) * PANEL_GUTTER) // columns
    state = _state_width(rows, look)
    longest = name_room(rows, look)
    row = choose_format(share, (longest, name_room(rows, look, NAME_BEFORE_BAR),
                                name_room(rows, look, LEAST_NAME)), state)
    name = max(MARKER + 1, min(longest, share - row.fixed(state)))
    per_column = math.ceil(len(rows) / columns) if rows else 0
    tables = [_table(rows[start:start + per_column], row, name, state, look)
              for start in range(0, max(1, len(rows)), max(1, per_column))]
    if len(tables) == 1:
        return tables[0]
    grid = Table.grid(padding=(0, PANEL_GUTTER))
    for _ in tables:
        grid.add_column()
    grid.add_row(*tables)
    return grid


def _table(rows: Sequence[Progress], row: Format, name: int, state: int, look: Look) -> Table:
    palette = look.palette
    table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1),
                  collapse_padding=True, header_style=Style(color=palette.label, bold=True))
    table.add_column(HEADINGS[0], width=name, no_wrap=True)
    table.add_column(HEADINGS[1], width=row.placed_width, no_wrap=True, justify="right")
    if row.numbers:
        table.add_column(HEADINGS[2], width=POINTS, no_wrap=True, justify="right")
        table.add_column(HEADINGS[3], width=REDEALS, no_wrap=True, justify="right")
    table.add_column(HEADINGS[4], width=state, no_wrap=True)
    for player in rows:
        placed = player.placed
        cells: list[RenderableType] = [_name(player, look, name)]
        bar = progress_bar(placed, row.bar, palette) if row.bar else Text()
        if row.bar:
            bar.append(" ")
        bar.append(f"{placed:>2}/48", style=palette.text)
        cells.append(bar)
        if row.numbers:
            cells += [Text(printable(player.score), style=palette.text),
                      Text(printable(player.redeals_used), style=palette.text)]
        cells.append(player_state(player, started=look.started, palette=palette))
        table.add_row(*cells)
    return table


def progress_bar(placed: int, width: int, palette: Palette = DARK, total: int = 48) -> Text:
    """``█████░░░░`` for placed cards out of 48, ``width`` wide."""
    filled = round(width * max(0, min(placed, total)) / total)
    bar = Text()
    bar.append("█" * filled, style=palette.good)
    bar.append("░" * (width - filled), style=palette.bar_empty)
    return bar


class PlayersPanel(Widget):
    """The players' rows, laid out for the panel's width (``columns`` of rows)."""

    DEFAULT_CSS = """
    PlayersPanel { width: 100%; height: auto; padding: 0 1; }
    PlayersPanel.framed { border: round $primary-darken-2; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.players: list[Progress] = []
        self.look = Look()
        self.columns = 1

    def show(self, players: Iterable[Progress], look: Look, columns: int) -> None:
        """Draw these rows (if anything changed); lay the panel out again if its height
        changes."""
        players = list(players)
        if (players, look, columns) == (self.players, self.look, self.columns):
            return
        relayout = (len(players), columns) != (len(self.players), self.columns)
        self.players, self.look, self.columns = players, look, columns
        self.refresh(layout=relayout)

    def render(self) -> RenderableType:
        return players_table(self.players, width=self.content_size.width, look=self.look,
                             columns=self.columns)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return 1 + math.ceil(len(self.players) / max(1, min(self.columns,
                                                          len(self.players) or 1)))
