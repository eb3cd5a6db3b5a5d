"""Textual widgets shared by the match screen and practice: the board and the message line.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from client_cli.board import COLUMNS, NORMAL, ROWS, Geometry, board_text, movable_indices, slot_at
from client_cli.layout import BOARD_FRAME
from client_cli.palette import DARK, Palette
from client_cli.render import printable
from client_cli.selection import point
from gaps import Game

#: Characters that start typing a move (a rank) when the board has the focus.
RANK_KEYS = frozenset("23456789tjqk1TJQK")


class BoardView(Widget, can_focus=True):
    """The 4 x 13 grid, drawn at ``geometry``. Arrows move the cursor, Enter or a click
    picks a card, then a highlighted gap; typing a rank starts a typed move (when
    ``typing`` is on). A suggestion (a hint) is played by Enter."""

    DEFAULT_CSS = """
    BoardView { padding: 0 1; border: round $primary-darken-2; }
    BoardView:focus { border: round $accent; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1, 0)", "cursor", key_display="↑↓←→"),
        Binding("down", "cursor(1, 0)", "down", show=False),
        Binding("left", "cursor(0, -1)", "left", show=False),
        Binding("right", "cursor(0, 1)", "right", show=False),
        # One of the three Enters works at a time, and the footer shows that one.
        Binding("enter,space", "take_suggestion", "play the hint", key_display="⏎"),
        Binding("enter,space", "pick", "pick", key_display="⏎"),
        Binding("enter", "send_typed", "play it", key_display="⏎"),
        Binding("escape", "clear", "let go", key_display="esc"),
        Binding("escape", "drop_typed", "drop it", key_display="esc"),
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

    class Over(Message):
        """The player pointed at the board of a game that is over."""

    class Refused(Message):
        """A key that is no command now and starts no move was pressed on the board."""

        def __init__(self, character: str, typing: bool) -> None:
            super().__init__()
            self.character = character
            self.typing = typing

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.game: Game | None = None
        self.waiting = "waiting for the deal…"
        self.cursor = 0
        self.selected: int | None = None
        self.targets: frozenset[int] = frozenset()
        #: An action Enter plays (a hint), until the cursor moves or the position changes.
        self.suggestion: str | None = None
        self.typed = ""
        #: Whether a rank key starts a typed move (off once there is nothing to play).
        self.typing = True
        #: Whether every card that can move now is marked.
        self.marks = False
        self.geometry = NORMAL
        self.palette: Palette = DARK
        self._keys: tuple[object, ...] = ()
        #: What the board drew last: it is drawn again only when that changes.
        self._drawn: tuple[object, ...] = ()
        self._size_styles()

    def set_geometry(self, geometry: Geometry) -> None:
        """Draw the board at ``geometry`` from now on."""
        if geometry != self.geometry:
            self.geometry = geometry
            self._size_styles()
            self.refresh(layout=True)

    def _size_styles(self) -> None:
        self.styles.width = self.geometry.width + BOARD_FRAME[0]
        self.styles.height = self.geometry.height + BOARD_FRAME[1]

    def show(self, game: Game | None) -> None:
        """Draw ``game``; a selection (and a suggestion) survives unless the position
        changed."""
        before = self.game.grid_codes() if self.game is not None else None
        after = game.grid_codes() if game is not None else None
        self.game = game
        if before != after:
            self.selected, self.targets, self.suggestion = None, frozenset(), None
        self._draw()

    def render(self) -> RenderableType:
        if self.game is None:
            return Text(self.waiting, style=Style(color=self.palette.text, italic=True))
        return board_text(self.game, geometry=self.geometry, palette=self.palette,
                          cursor=self.cursor if self.has_focus else None,
                          selected=self.selected, targets=self.targets,
                          movable=movable_indices(self.game) if self.marks else ())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("send_typed", "drop_typed"):
            return bool(self.typed)
        if self.typed:  # every key goes into the move: only Enter and Esc mean more
            return False
        if action == "take_suggestion":
            return self.suggestion is not None
        if action == "pick":
            return self.game is not None and self.suggestion is None
        if action == "clear":  # shown only when there is something to let go
            return self.selected is not None or self.suggestion is not None
        return self.game is not None

    def toggle_marks(self) -> None:
        self.marks = not self.marks
        self._draw()

    def suggest(self, action: str, selected: int | None = None, target: int | None = None
                ) -> None:
        """Offer ``action`` (a hint): Enter plays it. A move is shown too: its card
        selected, its destination marked, the cursor on it."""
        self.suggestion = action
        if selected is not None and target is not None:
            self.selected, self.targets, self.cursor = selected, frozenset({target}), target
        self._draw()

    def _draw(self) -> None:
        """Redraw if what is drawn changed; the footer too when the keys that work change."""
        game = self.game
        drawn = (None if game is None else (tuple(game.grid_codes()), game.is_over()),
                 self.waiting if game is None else "", self.cursor if self.has_focus else None,
                 self.selected, self.targets, self.marks, self.palette, self.geometry)
        if drawn != self._drawn:
            self._drawn = drawn
            self.refresh()
        keys = (self.game is not None, self.selected is not None, self.suggestion is not None,
                bool(self.typed))
        if keys != self._keys:
            self._keys = keys
            self.refresh_bindings()

    def on_focus(self) -> None:
        self._draw()

    def on_blur(self) -> None:
        self._draw()

    def action_cursor(self, rows: int, columns: int) -> None:
        row, column = divmod(self.cursor, COLUMNS)
        self.cursor = (row + rows) % ROWS * COLUMNS + (column + columns) % COLUMNS
        self.suggestion = None  # the player looks elsewhere: Enter picks again
        self._draw()

    def action_clear(self) -> None:
        self.selected, self.targets, self.suggestion = None, frozenset(), None
        self._draw()

    def action_pick(self) -> None:
        self.point_at(self.cursor)

    def action_take_suggestion(self) -> None:
        if self.suggestion is not None:
            action, self.suggestion = self.suggestion, None
            self._draw()
            self.post_message(self.Picked(action))

    def action_send_typed(self) -> None:
        self._finish_typing(send=True)

    def action_drop_typed(self) -> None:
        self._finish_typing(send=False)

    def point_at(self, index: int) -> None:
        if self.game is None:
            return
        if self.game.is_over():
            self.post_message(self.Over())
            return
        pick = point(self.game, index, self.selected)
        self.selected, self.targets, self.suggestion = pick.selected, pick.targets, None
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
        slot = slot_at(offset.x, offset.y, self.geometry)
        if slot is not None:
            self.focus()
            self.cursor = slot.index
            self.point_at(slot.index)

    def _finish_typing(self, *, send: bool) -> None:
        typed, self.typed = self.typed, ""
        self.post_message(self.Typing(""))
        if send and typed:
            self.post_message(self.Typed(typed))
        self._draw()

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
                self._finish_typing(send=True)
            elif event.key == "escape":
                self._finish_typing(send=False)
            elif event.key == "backspace":
                self.typed = typed[:-1]
                self.post_message(self.Typing(self.typed))
                if not self.typed:
                    self._draw()
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
            self._draw()  # the footer: only Enter and Esc work now
        elif event.is_printable and event.character is not None:
            self.post_message(self.Refused(event.character, self.typing))
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
        return f"{shown!r} does nothing now: ? lists the keys, ctrl+q quits"
    return (f"{shown!r} is not a key here: a move starts with its rank (8c, 10h, 2h>3), "
            "or type : then any command; ? lists the keys")


class MessageLine(Static):
    """One line telling the player what just happened (errors in their colour).

    A message belongs to the situation it was said in (``situation``, the app's: the
    match's phase, whether you play, ...): once that changes, it no longer applies and
    the app clears it."""

    DEFAULT_CSS = """
    MessageLine { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    text: str | Text = ""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.situation: Hashable = None

    def say(self, text: str | Text, *, palette: Palette = DARK, error: bool = False,
            situation: Hashable = None) -> None:
        """Show ``text``; a ``str`` is shown as it is (it may hold the server's words: a
        refusal's message, a name), never as markup."""
        if isinstance(text, str):
            text = Text(printable(text), style=Style(color=palette.error, bold=True) if error
                        else Style(color=palette.text))
        self.text, self.situation = text, situation
        self.update(text, layout=False)

    def clear(self) -> None:
        self.text, self.situation = "", None
        self.update("", layout=False)
