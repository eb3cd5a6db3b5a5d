"""The help screen: the keys and the notation, on one 80 x 24 screen without scrolling."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from client_cli.board import DEAD_MARK, GAP_MARK, ON_TARGET, TARGET_MARK
from client_cli.palette import DARK, Palette


def _section(title: str, rows: list[tuple[str | Text, str | Text]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.title = title
    table.title_justify = "left"
    table.title_style = "bold"
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for key, meaning in rows:
        table.add_row(key, meaning)
    return table


def help_text(palette: Palette = DARK) -> Group:
    """The keys and the notation, as the help screen shows them (it fits 80 x 24)."""
    target = Text(f" {TARGET_MARK} ", style=Style(color=ON_TARGET, bgcolor=palette.target))
    run = Text(" 2♣  3♣ ", style=Style(color=palette.black_suit, bgcolor=palette.preserved))
    gap = Text(f" {GAP_MARK} ", style=Style(color=palette.gap, bgcolor=palette.gap_ground))
    dead = Text(f" {DEAD_MARK} ", style=Style(color=palette.dead, bgcolor=palette.dead_ground))
    return Group(
        _section("Moving", [
            ("8c", "type a card and Enter: the 8♣ goes right of the 7♣"),
            ("2h>3, 8c>r2c6", "a 2 needs its row; any card may name its slot"),
            ("arrows, Enter", Text.assemble("on a card selects it; then Enter (or a click) on a ",
                                            target, " gap plays it")),
            ("Enter on a gap", "plays the one card that fits it"),
            ("Esc", "lets go of the selection, or of a typed move"),
            ("2-9, 10, t j q k", "on the board: starts typing a move (only while you play)"),
            (": or /", "the input line: moves and commands (redeal, undo, stop)"),
        ]),
        _section("Keys", [
            ("r", "redeal (-5 points, press twice); in the lobby: ready"),
            ("u / s", "undo (rulesets with undo; in practice, always) / stop (press twice)"),
            ("h / m", "a hint (practice: Enter plays it) / mark the cards that can move"),
            ("n / g", "practice: a new deal / the host starts the match (lobby)"),
            ("b", "after a match: the ranking, and back to the board"),
            ("? / ctrl+q", "this help / quit (press twice while your seat counts)"),
        ]),
        _section("The board", [
            (run, "a preserved sequence: placed cards, +1 point each"),
            (Text.assemble(gap, " ", dead),
             "a gap, a dead gap (right of a King or of another gap)"),
        ]),
        Text("Score: +1 per placed card, -5 per redeal, +10 for a win without a redeal. "
             "ctrl+p: every command, colours too.", style=Style(color=palette.muted)),
    )


class HelpScreen(ModalScreen[None]):
    """The keys and notation; any of Esc, q, ? closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 84; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,enter", "dismiss", "close"),
    ]

    def __init__(self, palette: Palette = DARK) -> None:
        super().__init__()
        self.palette = palette

    def compose(self) -> Any:
        with VerticalScroll():
            yield Static(help_text(self.palette))
