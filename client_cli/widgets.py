"""Textual widgets shared by the match screen and practice: the board, the players
panel, the message line, and the help screen.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Input, Static

from client_cli.duration import format_ms
from client_cli.render import (
    CELL_WIDTH,
    COLUMNS,
    COMPACT_CELL_WIDTH,
    ROWS,
    append_bot_mark,
    board_size,
    board_text,
    movable_indices,
    printable,
    printable_text,
    progress_bar,
    slot_at,
)
from client_cli.selection import point
from client_cli.wording import board_words
from gaps import Game

#: Characters that start typing a move (a rank) when the board has the focus.
RANK_KEYS = frozenset("23456789tjqk1TJQK")
#: Columns the board's border and padding take around its text.
BOARD_FRAME_WIDTH = 4
#: Lines the board's border takes around its text.
BOARD_FRAME_HEIGHT = 2
#: The narrowest terminal the whole board fits in (compact).
MIN_COLUMNS = board_size(width=COMPACT_CELL_WIDTH)[0] + BOARD_FRAME_WIDTH
#: Lines under which the board's rows lose the blank line between them.
SPACED_LINES = 24


class BoardView(Widget, can_focus=True):
    """The 4 x 13 grid. Arrows move the cursor, Enter or a click picks a card, then a
    highlighted gap; typing a rank starts a typed move (when ``typing`` is on).

    ``fit`` sizes it for a terminal: cells 5 wide, or 4 in a narrow one, rows apart, or
    together in a short one, so that all 13 columns stay on screen from ``MIN_COLUMNS`` on.
    """

    DEFAULT_CSS = """
    BoardView { padding: 0 1; border: round $primary-darken-2; }
    BoardView:focus { border: round $accent; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1, 0)", "cursor", key_display="↑↓←→"),
        Binding("down", "cursor(1, 0)", "down", show=False),
        Binding("left", "cursor(0, -1)", "left", show=False),
        Binding("right", "cursor(0, 1)", "right", show=False),
        Binding("enter,space", "pick", "pick", key_display="⏎"),
        Binding("escape", "clear", "let go", key_display="esc"),
    ]

    class Picked(Message):
        """The player chose a move on the board."""

        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    class Typing(Message):
        """What the player is typing on the board so far (empty: no longer typing)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Typed(Message):
        """The player typed a move on the board and pressed Enter."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Note(Message):
        """Something to tell the player (why a pick did nothing)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.game: Game | None = None
        self.waiting = "waiting for the deal…"
        self.cursor = 0
        self.selected: int | None = None
        self.targets: frozenset[int] = frozenset()
        self.typed = ""
        #: Whether a rank key starts a typed move (off once there is nothing to play).
        self.typing = True
        #: Whether every card that can move now is marked.
        self.marks = False
        self.cell_width = CELL_WIDTH
        self.spaced = True
        self._keys = (False, False)
        self._size_styles()

    def fit(self, columns: int, lines: int) -> None:
        """Size the board for a terminal of ``columns`` x ``lines``."""
        width = CELL_WIDTH if columns >= board_size()[0] + BOARD_FRAME_WIDTH else \
            COMPACT_CELL_WIDTH
        spaced = lines >= SPACED_LINES
        if (width, spaced) != (self.cell_width, self.spaced):
            self.cell_width, self.spaced = width, spaced
            self._size_styles()
            self.refresh(layout=True)

    def _size_styles(self) -> None:
        columns, lines = board_size(width=self.cell_width, spaced=self.spaced)
        self.styles.width = columns + BOARD_FRAME_WIDTH
        self.styles.height = lines + BOARD_FRAME_HEIGHT

    def show(self, game: Game | None) -> None:
        """Draw ``game``; a selection survives unless the position changed."""
        before = self.game.grid_codes() if self.game is not None else None
        after = game.grid_codes() if game is not None else None
        self.game = game
        if before != after:
            self.selected, self.targets = None, frozenset()
        self._draw()

    def render(self) -> RenderableType:
        if self.game is None:
            return Text(self.waiting, style="dim italic")
        return board_text(self.game, cursor=self.cursor if self.has_focus else None,
                          selected=self.selected, targets=self.targets,
                          movable=movable_indices(self.game) if self.marks else (),
                          width=self.cell_width, spaced=self.spaced)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear":  # shown only when there is something to let go
            return self.selected is not None
        return self.game is not None

    def toggle_marks(self) -> None:
        self.marks = not self.marks
        self.refresh()

    def choose(self, selected: int, target: int) -> None:
        """Select the card at ``selected`` with the one destination ``target``, the cursor
        on it (a hint shows its move so: Enter plays it)."""
        self.selected, self.targets, self.cursor = selected, frozenset({target}), target
        self._draw()

    def _draw(self) -> None:
        """Redraw; the footer too when the keys that work change (Esc lets go of a card)."""
        self.refresh()
        keys = (self.game is not None, self.selected is not None)
        if keys != self._keys:
            self._keys = keys
            self.refresh_bindings()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_cursor(self, rows: int, columns: int) -> None:
        row, column = divmod(self.cursor, COLUMNS)
        self.cursor = (row + rows) % ROWS * COLUMNS + (column + columns) % COLUMNS
        self.refresh()

    def action_clear(self) -> None:
        self.selected, self.targets = None, frozenset()
        self._draw()

    def action_pick(self) -> None:
        self.point_at(self.cursor)

    def point_at(self, index: int) -> None:
        if self.game is None:
            return
        pick = point(self.game, index, self.selected)
        self.selected, self.targets = pick.selected, pick.targets
        if pick.targets:
            self.cursor = min(pick.targets)  # Enter again plays the first destination
        self._draw()
        if pick.action is not None:
            self.post_message(self.Picked(pick.action))
        if pick.message is not None:
            self.post_message(self.Note(pick.message))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        slot = slot_at(offset.x, offset.y, width=self.cell_width, spaced=self.spaced)
        if slot is not None:
            self.focus()
            self.cursor = slot.index
            self.point_at(slot.index)

    def on_key(self, event: events.Key) -> None:
        """Typing a rank starts a typed move; until Enter or Esc every key goes into it.

        Otherwise a key that is a command now (``r``, ``s``, ...) is that command, never
        the start of a move; any other character is refused with a note, so that the Enter
        after it does not act on the cursor's cell unasked. The board keeps the focus while
        the player types, so no key can slip past a change of focus however fast they come.
        """
        typed = self.typed
        if typed:
            if event.key == "enter":
                self.typed = ""
                self.post_message(self.Typing(""))
                self.post_message(self.Typed(typed))
            elif event.key == "escape":
                self.typed = ""
                self.post_message(self.Typing(""))
            elif event.key == "backspace":
                self.typed = typed[:-1]
                self.post_message(self.Typing(self.typed))
            elif event.is_printable and event.character is not None:
                self.typed = typed + event.character
                self.post_message(self.Typing(self.typed))
            else:
                return
        elif self._is_command(event.key):
            return
        elif event.character is not None and event.character in RANK_KEYS and self.typing:
            self.typed = event.character
            self.post_message(self.Typing(self.typed))
        elif event.is_printable and event.character is not None:
            self.post_message(self.Note(refused_key(event.character, typing=self.typing)))
        else:
            return
        event.stop()
        event.prevent_default()

    def _is_command(self, key: str) -> bool:
        active = self.screen.active_bindings.get(key)
        return active is not None and active.enabled


def refused_key(character: str, *, typing: bool) -> str:
    """Why a key did nothing on the board."""
    shown = printable(character)
    if not typing:
        return f"{shown!r} does nothing now: no move can be played; ? lists the keys"
    return (f"{shown!r} is not a key here: a move starts with its rank (8c, 10h, 2h>3), "
            "or type : then any command; ? lists the keys")


class MessageLine(Static):
    """One line telling the player what just happened (errors in red)."""

    DEFAULT_CSS = "MessageLine { height: 1; padding: 0 1; }"

    text: str | Text = ""

    def say(self, text: str | Text, *, error: bool = False) -> None:
        """Show ``text``; a ``str`` is shown as it is (it may hold the server's words: a
        refusal's message, a name), never as markup."""
        if isinstance(text, str):
            text = printable_text(text, style="bold #ff6b6b" if error else "#c8c8c8")
        self.text = text
        self.update(text, layout=False)


def players_table(
    players: Iterable[Mapping[str, Any]], *, you_id: int | None, host_id: int | None,
    started: bool,
) -> Table:
    """Every player's progress: name, placed/48 bar, score, redeals, state. Every value
    from the server is a ``printable_text`` cell: a name is never markup nor a control
    sequence."""
    ordered = sorted(players, key=lambda p: (-int(p.get("placed", 0)), str(p.get("name"))))
    states = [player_state(player, started=started) for player in ordered]
    # As wide as what it holds: a wide terminal leaves no gap between a name and its bar.
    # Every column but the name has its width, so the state ("stopped 4:00.8") is never
    # cut: a narrow terminal shortens the names (the only column Rich may shrink).
    table = Table(box=None, padding=(0, 1), show_edge=False)
    table.add_column("player", overflow="ellipsis", min_width=8)
    table.add_column("placed", no_wrap=True, width=14)
    table.add_column("pts", justify="right", no_wrap=True, width=4)
    table.add_column("rd", justify="right", no_wrap=True, width=2)
    table.add_column("state", no_wrap=True,
                     width=max([len("state"), *(state.cell_len for state in states)]))
    for player, state in zip(ordered, states, strict=True):
        you = player.get("player_id") == you_id
        name = Text()
        name.append("▸ " if you else "  ", style="bold #8fd3ff")
        name.append(printable(player.get("name")), style="bold #8fd3ff" if you else "")
        append_bot_mark(name, player)
        if player.get("player_id") == host_id and not started:
            name.append(" ★", style="#e0c040")
        if not player.get("connected", True):
            name.stylize("dim")
        placed = int(player.get("placed", 0))
        bar = progress_bar(placed, width=8)
        bar.append(f" {placed:>2}/48")
        table.add_row(name, bar, printable_text(player.get("score", 0)),
                      printable_text(player.get("redeals_used", 0)), state)
    return table


def player_state(player: Mapping[str, Any], *, started: bool) -> Text:
    if not started:
        return Text("ready", style="#4fb86b") if player.get("ready") else Text("not ready", "dim")
    reason = player.get("end_reason")
    if reason == "won":
        return Text(f"won {format_ms(player.get('finish_ms'))}", style="bold #4fb86b")
    if reason:
        return printable_text(f"{reason} {format_ms(player.get('finish_ms'))}", "#d0a040")
    if not player.get("connected", True):
        return Text("away", style="dim")
    status = printable(player.get("status", "playing"))
    return Text(status, style="#e0c040" if status == "blocked" else "")


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


def help_text() -> Group:
    """The keys and the notation, as the help screen shows them (it fits 80 x 24)."""
    target = Text(" ▼ ", style="black on #e0c040")
    run = Text(" 2♣  3♣ ", style="on #1d4d2b")
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
            ("h / m", "a hint (practice) / mark every card that can move now"),
            ("n", "practice: a new deal (press twice while a game is on)"),
            ("b / q", "after a match: the ranking or the board / quit"),
            ("? / ctrl+q", "this help / quit (press twice while your seat counts)"),
        ]),
        _section("The board", [
            (run, "a preserved sequence: placed cards, +1 point each"),
            ("·  ✕", Text.assemble("a gap, a ", ("dead gap", "#b05050"),
                                   ": right of a King or of another gap")),
        ]),
        Text("Score: +1 per placed card, -5 per redeal, +10 for a win without a redeal.",
             style="dim"),
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

    def compose(self) -> Any:
        with VerticalScroll():
            yield Static(help_text())


#: The command line's look: a mode label, then the input.
COMMAND_LINE_CSS = """
#commandline { height: 1; margin: 0 1; }
#mode { width: auto; padding: 0 1; margin-right: 1; text-style: bold; }
#mode.board { background: $primary-darken-2; }
#mode.move, #mode.command { background: $warning-darken-2; }
#mode.view { background: $panel; }
#command { width: 1fr; }
"""
#: What each mode of typing is called, and what typing does in it.
MODES = {
    "board": ("BOARD", "arrows + Enter pick a card · a rank starts a move · : for commands"),
    "move": ("MOVE", ""),
    "command": ("COMMAND", "a move (8c, 2h>3) or redeal / undo / stop; Esc: back to the board"),
    "view": ("VIEW", "no move to play now · ? for the keys"),
}


def command_line() -> ComposeResult:
    """The mode label and the input line, as both apps put them under the board."""
    with Horizontal(id="commandline"):
        yield Static(id="mode")
        yield Input(placeholder=MODES["board"][1], id="command", compact=True)


class BoardApp(App[int]):
    """What the match screen and practice share: moves from the board or the input line.

    A subclass says what ``submit`` does with a move's text, whether moves can be typed on
    the board now (``can_type``) and what quitting now would cost (``leave_warning``); the
    board, the input line (``#command``), the message line, the help, the marks, the
    confirmation of a costly quit and fitting the board to the terminal are wired here.
    """

    #: ctrl+p: every command by name (help, marks, screenshot, quit, theme, keys).
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save_screen", "screenshot", show=False),
    ]
    #: How long a second press confirms a key that costs something (stop, redeal, quit).
    CONFIRM_S = 3.0

    def __init__(self) -> None:
        super().__init__()
        #: Which confirmable action was pressed once, and when.
        self._armed: tuple[str, float] = ("", 0.0)
        self._too_narrow = False

    def submit(self, text: str) -> None:
        raise NotImplementedError

    def can_type(self) -> bool:
        """Whether a rank key on the board starts a typed move now."""
        return True

    def leave_warning(self) -> str | None:
        """What quitting now would cost, if anything (then quitting asks to press again)."""
        return None

    def confirmed(self, action: str, question: str, *, now: float | None = None) -> bool:
        """Whether ``action`` was pressed twice within ``CONFIRM_S``; the first press shows
        ``question``."""
        now = time.monotonic() if now is None else now
        armed, when = self._armed
        if armed == action and now - when <= self.CONFIRM_S:
            self._armed = ("", 0.0)
            return True
        self._armed = (action, now)
        self.query_one(MessageLine).say(Text(question, style="bold #e0c040"))
        return False

    def fit(self, columns: int, lines: int) -> None:
        """Size the board for the terminal; say so when even the compact board is cut."""
        board = self.query_one(BoardView)
        board.fit(columns, lines)
        board.typing = self.can_type()
        too_narrow = columns < MIN_COLUMNS
        if too_narrow and not self._too_narrow:
            self.query_one(MessageLine).say(
                f"The terminal is {columns} columns wide: the board needs {MIN_COLUMNS}.",
                error=True)
        self._too_narrow = too_narrow

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: ``self.size`` is not updated yet while it is handled.
        self.fit(event.size.width, event.size.height)

    @on(BoardView.Picked)
    def _picked(self, message: BoardView.Picked) -> None:
        self.submit(message.action)

    @on(BoardView.Note)
    def _note(self, message: BoardView.Note) -> None:
        self.query_one(MessageLine).say(board_words(message.text))

    @on(BoardView.Typing)
    def _typing(self, message: BoardView.Typing) -> None:
        self.query_one("#command", Input).value = message.text
        self.show_mode()

    def on_descendant_focus(self) -> None:
        self.show_mode()

    def mode(self) -> str:
        """Which mode typing is in: ``board``, ``move`` (a move typed on the board),
        ``command`` (the input line) or ``view`` (nothing to play)."""
        if self.query_one("#command", Input).has_focus:
            return "command"
        board = self.query_one(BoardView)
        if board.typed:
            return "move"
        return "board" if self.can_type() else "view"

    def show_mode(self) -> None:
        """Say which mode typing is in, in the one place that says it (``#mode``)."""
        mode = self.mode()
        label, placeholder = MODES[mode]
        shown = self.query_one("#mode", Static)
        for other in MODES:
            shown.set_class(other == mode, other)
        shown.update(label)
        self.query_one("#command", Input).placeholder = placeholder

    @on(BoardView.Typed)
    def _typed(self, message: BoardView.Typed) -> None:
        self.submit(message.text)

    @on(Input.Submitted, "#command")
    def _submitted(self, message: Input.Submitted) -> None:
        text = message.value.strip()
        message.input.value = ""
        self.query_one(BoardView).focus()
        if text:
            self.submit(text)

    def on_key(self, event: events.Key) -> None:
        command = self.query_one("#command", Input)
        if event.key == "escape" and command.has_focus:
            command.value = ""
            self.query_one(BoardView).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_type(self) -> None:
        self.query_one("#command", Input).focus()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "The keys and the notation (?)", self.action_help)
        yield SystemCommand("Marks", "Mark every card that can move now (m)", self.action_marks)
        yield SystemCommand("Screenshot", "Save the screen as an SVG file here (ctrl+s)",
                            self.action_save_screen)

    def action_save_screen(self) -> None:
        """Save the screen as an SVG file in the working directory, and say where."""
        # A notification: it shows over any screen (the ranking's has no message line).
        try:
            path = self.save_screenshot(path=".")
        except OSError as error:
            self.notify(f"No screenshot: {error}", severity="error", markup=False)
            return
        self.notify(f"Screenshot saved: {path}", markup=False)

    def action_marks(self) -> None:
        board = self.query_one(BoardView)
        board.toggle_marks()
        self.query_one(MessageLine).say(
            "Marked: every card that can move now is underlined (m again: no marks)."
            if board.marks else "No marks (m marks the cards that can move now).")

    async def action_quit(self) -> None:
        warning = self.leave_warning()
        if warning is None or self.confirmed("quit", f"{warning}: press again to quit."):
            self.exit(0)
