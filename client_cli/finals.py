"""Every player's final board, drawn from a finished match's replay.

While a match runs, nobody but its player sees a grid: the protocol sends spectators each
player's progress only (docs/protocol.md, ``join_match``). Once the match is over, its
replay has the revealed seed and every action, so each board is replayed here with the
rules engine, as ``gaps verify`` does, and drawn for whoever watched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from client_cli.board import COMPACT, board_lines
from client_cli.palette import DARK, Palette
from client_cli.par import gap_words
from client_cli.render import bot_mark, printable
from gaps import Game, NotationError, Seed
from gaps.replay import replay
from gaps_protocol.messages.common import Par
from gaps_protocol.messages.views import Replay, ReplayPlayer

#: Columns between two boards side by side.
GUTTER: Final = 3
#: Lines a board takes: its title, the board, a blank line.
BOARD_LINES: Final = 1 + COMPACT.height + 1


@dataclass(frozen=True)
class FinalBoard:
    """One player's board at the end, and who they were."""

    entry: ReplayPlayer
    game: Game | None  # None: the replay could not rebuild it
    why: str | None = None


def final_boards(document: Replay) -> list[FinalBoard]:
    """Each player's final board, in the ranking's order; empty when the document's seed
    is not one."""
    try:
        seed = Seed.parse(document.match.seed)
    except NotationError:
        return []
    ruleset = document.match.ruleset
    boards = []
    for entry in sorted(document.players, key=lambda p: (p.rank or 99, p.name)):
        actions = [a.action for a in entry.actions]
        try:
            played = replay(seed, ruleset, actions)
        except (NotationError, ValueError) as error:
            boards.append(FinalBoard(entry, None, str(error)))
            continue
        boards.append(FinalBoard(entry, played.game,
                                 None if played.ok else f"stops at {played.failed_action}"))
    return boards


def board_title(board: FinalBoard, par: Par | None, palette: Palette) -> Text:
    """``1. bob [bot] · 20 · 3 below par``."""
    entry = board.entry
    text = Text(printable(f"{entry.rank}. {entry.name}{bot_mark(entry)}"),
                style=Style(color=palette.text, bold=True))
    text.append(printable(f" · {entry.score}"), style=palette.text)
    gap = gap_words(entry.score, par)
    if gap:
        text.append(f" · {gap}", style=palette.muted)
    return text


class FinalBoards(Widget):
    """Every player's final board, as many side by side as the width holds."""

    DEFAULT_CSS = "FinalBoards { height: auto; padding: 0 1; }"

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.boards: Sequence[FinalBoard] = ()
        self.par: Par | None = None
        self.palette = DARK

    def show(self, boards: Sequence[FinalBoard], par: Par | None, palette: Palette) -> None:
        relayout = len(boards) != len(self.boards)
        self.boards, self.par, self.palette = boards, par, palette
        self.display = bool(boards)
        self.refresh(layout=relayout)

    def _across(self, width: int) -> int:
        return max(1, (width + GUTTER) // (COMPACT.width + GUTTER))

    def render(self) -> RenderableType:
        across = self._across(self.content_size.width)
        grid = Table.grid(padding=(0, GUTTER, 1, 0))
        for _ in range(min(across, len(self.boards)) or 1):
            grid.add_column(width=COMPACT.width)
        cells: list[RenderableType] = []
        for board in self.boards:
            title = board_title(board, self.par, self.palette)
            if board.game is None:
                cells.append(Group(title, Text(f"(no board: {board.why})",
                                               style=self.palette.muted)))
                continue
            lines = board_lines(board.game, geometry=COMPACT, palette=self.palette)
            cells.append(Group(title, *lines))
        for start in range(0, len(cells), across):
            grid.add_row(*cells[start:start + across])
        return grid

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        rows = math.ceil(len(self.boards) / self._across(width)) if self.boards else 0
        return rows * BOARD_LINES
