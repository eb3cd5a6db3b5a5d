"""What the match screen and practice share: a board, the input line, the message line,
the footer, the help, the colours, and the keys.

A key means one thing on a screen: letters are commands only when no move is being typed
(then every key goes into the move, and the footer shows only Enter and Esc), ``q`` is a
Queen and never quits (ctrl+q quits). The footer lists only the keys that work now.
A message belongs to the situation it was said in and goes away once that changes; a
question ("press again to ...") goes away when its time to answer is over.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Input, Static

from client_cli.board import COMPACT
from client_cli.footer import KeyFooter
from client_cli.help import HelpScreen
from client_cli.layout import BOARD_FRAME
from client_cli.palette import (
    DARK,
    ON_DARK_BAR,
    ON_WARNING_BAR,
    OTHER,
    PALETTES,
    TITLE_TEXT,
    Palette,
    palette_named,
    theme_of,
)
from client_cli.render import printable
from client_cli.widgets import BoardView, MessageLine, refused_key
from client_cli.wording import board_words
from gaps_protocol.text import BadText, check_text

#: The narrowest terminal the whole board fits in (compact).
MIN_COLUMNS = COMPACT.width + BOARD_FRAME[0]

#: The title bar, and the command line's look: a mode label, then the input. Each text
#: on its ground reads in both colour settings (tests/test_cli_palette.py).
BOARD_APP_CSS = f"""
#title {{ height: 1; padding: 0 1; background: $primary-darken-3; color: {TITLE_TEXT}; }}
#commandline {{ height: 1; margin: 0 1; }}
#mode {{ width: auto; padding: 0 1; margin-right: 1; text-style: bold; }}
#mode.board {{ background: $primary-darken-2; color: {ON_DARK_BAR}; }}
#mode.move, #mode.command {{ background: $warning-darken-2; color: {ON_WARNING_BAR}; }}
#mode.view {{ background: $panel; color: $foreground; }}
#command {{ width: 1fr; }}
#command > .input--placeholder {{ color: $gaps-muted; }}
"""
#: What each mode of typing is called, and what typing does in it.
MODES = {
    "board": ("BOARD", "arrows + Enter pick a card · a rank starts a move · : for commands"),
    "move": ("MOVE", ""),
    "command": ("COMMAND", "a move (8c, 2h>3) or redeal / undo / stop; Esc: back to the board"),
    "view": ("VIEW", "no move to play now · ? for the keys"),
}
#: Modes in which printable keys are typed, not commands.
TYPING_MODES = frozenset({"move", "command"})


def command_line() -> ComposeResult:
    """The mode label and the input line, as both apps put them under the board."""
    with Horizontal(id="commandline"):
        yield Static(id="mode")
        yield Input(placeholder=MODES["board"][1], id="command", compact=True)


def single_characters(bindings: Iterable[BindingType]) -> frozenset[str]:
    """The actions bound to printable characters only: typing takes those keys."""
    actions = set()
    for binding in bindings:
        if isinstance(binding, Binding) and all(
                len(key) == 1 or key in ("question_mark", "colon", "slash")
                for key in binding.key.split(",")):
            actions.add(binding.action)
    return frozenset(actions)


class BoardApp(App[int]):
    """What the match screen and practice share: moves from the board or the input line.

    A subclass says what ``submit`` does with a move's text, whether moves can be typed on
    the board now (``can_type``), what quitting now would cost (``leave_warning``), what
    its messages belong to (``situation``), how it lays itself out (``lay_out``) and what
    a click on a finished game says (``over_words``).
    """

    #: ctrl+p: every command by name (help, marks, screenshot, colours, quit, keys).
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save_screen", "screenshot", show=False),
        Binding("escape", "leave_input", "back to the board", key_display="esc"),
    ]
    #: How long a second press confirms a key that costs something (stop, redeal, quit).
    CONFIRM_S = 3.0
    #: The actions the footer keeps longest when short of room (help always first).
    FOOTER_KEEP: ClassVar[tuple[str, ...]] = ("quit",)

    def __init__(self) -> None:
        super().__init__()
        #: Which confirmable action was pressed once, and when.
        self._armed: tuple[str, float] = ("", 0.0)
        self._too_narrow = False
        self._mode = ""
        self.palette: Palette = DARK
        #: Called with the colour setting when the player switches it.
        self.remember_colours: Callable[[str], None] | None = None
        self._typed_keys = single_characters(type(self).BINDINGS)
        #: What ``put`` showed last in each widget.
        self._shown: dict[str, Text] = {}
        for palette in PALETTES.values():
            self.register_theme(theme_of(palette))
        self.theme = self.palette.theme

    # -- what a subclass says ------------------------------------------------------------

    def submit(self, text: str) -> None:
        """Act on ``text``, typed or picked (taken by the rule for text, ``submit_typed``)."""
        raise NotImplementedError

    def can_type(self) -> bool:
        """Whether a rank key on the board starts a typed move now."""
        return True

    def leave_warning(self) -> str | None:
        """What quitting now would cost, if anything (then quitting asks to press again)."""
        return None

    def situation(self) -> Hashable:
        """What the messages shown now are about; a message goes once this changes."""
        return None

    def over_words(self) -> str:
        """What a pick on a finished game says."""
        return "This game is over."

    def unavailable(self, character: str) -> str | None:
        """Why a key of this screen does nothing now (``r`` with no redeal left), if it is
        one of its keys."""
        return None

    def lay_out(self, columns: int, lines: int) -> None:
        """Lay the screen out for a terminal of ``columns`` x ``lines``."""

    def refresh_view(self) -> None:
        """Draw everything again."""

    def footer(self) -> KeyFooter:
        return KeyFooter(self.FOOTER_KEEP)

    def put(self, selector: str, content: Text, *, layout: bool = False) -> None:
        """Show ``content`` in the ``Static`` at ``selector``, unless it shows it already
        (an update costs a redraw; with ``layout``, a layout pass too)."""
        widget = self.query_one(selector, Static)
        if self._shown.get(selector) != content:
            self._shown[selector] = content
            widget.update(content, layout=layout)

    # -- colours -------------------------------------------------------------------------

    def use_colours(self, name: str | None,
                    remember: Callable[[str], None] | None = None) -> None:
        """Draw in colour setting ``name`` (``dark``, ``light``); ``remember`` keeps the
        setting when the player switches it."""
        self.palette = palette_named(name)
        self.theme = self.palette.theme
        if remember is not None:
            self.remember_colours = remember
        if self.is_running:
            self.query_one(BoardView).palette = self.palette
            self.query_one(MessageLine).clear()  # drawn in the other setting's colours
            self.refresh_view()
            self.colours_changed()

    def colours_changed(self) -> None:
        """Draw again in the new colours what ``refresh_view`` does not draw."""

    def action_switch_colours(self) -> None:
        name = OTHER[self.palette.name]
        self.use_colours(name)
        if self.remember_colours is not None:
            self.remember_colours(name)

    # -- messages --------------------------------------------------------------------------

    def say(self, text: str | Text, *, error: bool = False) -> None:
        """Tell the player ``text`` on the message line, until the situation changes."""
        self.query_one(MessageLine).say(text, palette=self.palette, error=error,
                                        situation=self.situation())

    def expire_message(self) -> None:
        """Clear the message line if what it says belongs to another situation."""
        line = self.query_one(MessageLine)
        if line.text and line.situation != self.situation():
            line.clear()

    def confirmed(self, action: str, question: str, *, now: float | None = None) -> bool:
        """Whether ``action`` was pressed twice within ``CONFIRM_S``; the first press shows
        ``question``, which goes when its time is over."""
        now = time.monotonic() if now is None else now
        armed, when = self._armed
        if armed == action and now - when <= self.CONFIRM_S:
            self._armed = ("", 0.0)
            self.query_one(MessageLine).clear()
            return True
        self._armed = (action, now)
        self.say(Text(question, style=Style(color=self.palette.warning, bold=True)))
        self.set_timer(self.CONFIRM_S, lambda: self._disarm((action, now), question))
        return False

    def _disarm(self, armed: tuple[str, float], question: str) -> None:
        if self._armed != armed:
            return
        self._armed = ("", 0.0)
        with contextlib.suppress(NoMatches):  # the app is closing: nothing to clear
            line = self.query_one(MessageLine)
            if isinstance(line.text, Text) and line.text.plain == question:
                line.clear()

    # -- size --------------------------------------------------------------------------------

    def fit(self, columns: int, lines: int) -> None:
        """Lay out for the terminal; say so when even the compact board is cut, and stop
        saying it once the terminal is wide enough."""
        self.lay_out(columns, lines)
        board = self.query_one(BoardView)
        board.typing = self.can_type()
        too_narrow = columns < MIN_COLUMNS
        warning = f"The terminal is {columns} columns wide: the board needs {MIN_COLUMNS}."
        line = self.query_one(MessageLine)
        if too_narrow:
            if not self._too_narrow or (isinstance(line.text, Text)
                                        and line.text.plain.startswith("The terminal is ")):
                self.say(warning, error=True)
        elif self._too_narrow and isinstance(line.text, Text) \
                and line.text.plain.startswith("The terminal is "):
            line.clear()
        self._too_narrow = too_narrow

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: ``self.size`` is not updated yet while it is handled.
        self.fit(event.size.width, event.size.height)

    # -- the board and the input line ------------------------------------------------------

    @on(BoardView.Picked)
    def _picked(self, message: BoardView.Picked) -> None:
        self.submit(message.action)

    @on(BoardView.Note)
    def _note(self, message: BoardView.Note) -> None:
        self.say(board_words(message.text))

    @on(BoardView.Over)
    def _over(self) -> None:
        self.say(self.over_words())

    @on(BoardView.Refused)
    def _refused(self, message: BoardView.Refused) -> None:
        self.say(self.unavailable(message.character)
                 or refused_key(message.character, typing=message.typing))

    @on(BoardView.Typing)
    def _typing(self, message: BoardView.Typing) -> None:
        self.query_one("#command", Input).value = message.text
        self.show_mode()

    def on_descendant_focus(self) -> None:
        self.show_mode()

    def on_descendant_blur(self) -> None:
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
        """Say which mode typing is in, in the one place that says it (``#mode``); the
        footer changes with it."""
        if not self.on_board():
            return  # (focus moves on another screen: the ranking, the help)
        mode = self.mode()
        if mode == self._mode:
            return
        self._mode = mode
        label, placeholder = MODES[mode]
        shown = self.query_one("#mode", Static)
        for other in MODES:
            shown.set_class(other == mode, other)
        shown.update(label)
        self.query_one("#command", Input).placeholder = placeholder
        self.refresh_bindings()

    def on_board(self) -> bool:
        """Whether the board's screen is the one shown (not the ranking, the help, ...)."""
        stack = self.screen_stack
        return bool(stack) and stack[-1] is self.default_screen

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.on_board():
            return False  # the keys of the board's screen: another screen has its own
        if action == "leave_input":
            return self.mode() == "command"
        if action in self._typed_keys and self.mode() in TYPING_MODES:
            return False  # the key goes into what is typed
        return True

    @on(BoardView.Typed)
    def _typed(self, message: BoardView.Typed) -> None:
        self.submit_typed(message.text)

    @on(Input.Submitted, "#command")
    def _submitted(self, message: Input.Submitted) -> None:
        text = message.value
        message.input.value = ""
        self.query_one(BoardView).focus()
        if text:
            self.submit_typed(text)

    def submit_typed(self, text: str) -> None:
        """Submit what the player typed if the protocol's one rule for text takes it
        (``gaps_protocol.text``); else say why, as the server would: nothing is stripped."""
        try:
            self.submit(check_text(text))
        except BadText as error:
            self.say(printable(str(error)), error=True)

    def action_leave_input(self) -> None:
        self.query_one("#command", Input).value = ""
        self.query_one(BoardView).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.palette))

    def action_type(self) -> None:
        self.query_one("#command", Input).focus()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            # Two colour settings only (below), and one screenshot: ours says where it went.
            if command.title not in ("Theme", "Screenshot"):
                yield command
        yield SystemCommand("Help", "The keys and the notation (?)", self.action_help)
        yield SystemCommand("Marks", "Mark every card that can move now (m)", self.action_marks)
        yield SystemCommand("Screenshot", "Save the screen as an SVG file here (ctrl+s)",
                            self.action_save_screen)
        other = OTHER[self.palette.name]
        yield SystemCommand(f"Colours: {other}", f"Draw in {other} colours (kept for next "
                            "time)", self.action_switch_colours)

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
        self.say("Marked: every card that can move now is underlined (m again: no marks)."
                 if board.marks else "No marks (m marks the cards that can move now).")

    async def action_quit(self) -> None:
        warning = self.leave_warning()
        if warning is None or self.confirmed("quit", f"Press ctrl+q again to quit: {warning}."):
            self.exit(0)
