"""Practice: play offline with ``gaps`` alone, with hints and undo.

``PracticeSession`` is the game logic (pure); ``PracticeApp`` puts it on the same board
as the match screen. Every deal shows its share code, so a good deal can be replayed
(``gaps practice --seed CODE``) or raced (``gaps create --seed CODE``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from client_cli.boardapp import BOARD_APP_CSS, BoardApp, command_line
from client_cli.layout import board_alone
from client_cli.palette import DARK, Palette
from client_cli.records import Records
from client_cli.render import action_text
from client_cli.widgets import BoardView, MessageLine
from client_cli.wording import board_words, typed_error
from gaps import (
    Action,
    Game,
    IllegalAction,
    Move,
    NotationError,
    Redeal,
    Ruleset,
    Seed,
    Stop,
    Undo,
    parse_action,
)
from gaps.hint import hint


def suggest(game: Game) -> Action | None:
    """A good next action for ``game`` (the hint every client gives: ``gaps.hint``), or
    None when over."""
    return hint(game.copy())


class PracticeSession:
    """One offline game: every action can be taken back, hints on demand."""

    def __init__(self, seed: Seed | None = None, ruleset: Ruleset | str = "classic") -> None:
        self.seed = seed if seed is not None else Seed.generate()
        self.game = Game(self.seed, ruleset)
        self.history: list[Game] = []
        self.actions: list[str] = []
        #: Whether this deal's end is in the records (once: taking back and ending it
        #: again does not count it twice).
        self.recorded = False

    @property
    def share_code(self) -> str:
        return str(self.seed)

    def play(self, text: str) -> Action:
        """Apply ``text`` (``8c``, ``2h>3``, ``redeal``, ``undo``, ``stop``).

        Raises ``NotationError`` or ``IllegalAction`` (with the engine's reason) and
        changes nothing. ``undo`` takes back the last action, whatever the ruleset.
        """
        action = parse_action(text)
        if isinstance(action, Undo):
            self.undo()
            return action
        before = self.game.copy()
        self.game.push(action)
        self.history.append(before)
        self.actions.append(str(action))
        return action

    def undo(self) -> None:
        if not self.history:
            raise IllegalAction("nothing_to_undo", "undo: nothing to take back")
        self.game = self.history.pop()
        self.actions.pop()

    def hint(self) -> Action | None:
        return suggest(self.game)

    def refusal(self, action: Action) -> str | None:
        """Why the rules refuse ``action`` now, in the board's words, if they do."""
        if isinstance(action, Undo):
            return None if self.history else "Nothing to take back"
        try:
            self.game.copy().push(action)
        except IllegalAction as error:
            return f"{board_words(str(error))} [{error.reason}]"
        return None

    def status_line(self, palette: Palette = DARK) -> Text:
        """The score and counts; how the game ended, as a headline, and what to do next."""
        game = self.game
        text = Text()
        result = game.result()
        if result == "won":
            text.append(f"You won! Score {game.score}", style=Style(color=palette.good,
                                                                    bold=True))
        else:
            text.append(f"Score {game.score}", style=Style(color=palette.text, bold=True))
        text.append(f" · placed {game.placed}/48 · redeals left {game.redeals_left}"
                    f" · moves {game.moves_made}", style=palette.text)
        if result == "won":
            text.append("\nn deals a new game · u takes back the last move", style=palette.text)
        elif result == "blocked":
            text.append(" · blocked", style=Style(color=palette.warning, bold=True))
            text.append("\nr redeals (-5), s stops, u takes back", style=palette.warning)
        elif game.is_over():
            text.append(f" · {result}", style=Style(color=palette.warning, bold=True))
            text.append("\nn deals a new game · u takes back the last move", style=palette.text)
        else:
            text.append(" · playing", style=palette.text)
        return text
class PracticeApp(BoardApp):
    """The practice board: ``PracticeApp(PracticeSession(...)).run()``."""

    TITLE = "Gaps practice"
    CSS = """
    #stats { height: 2; padding: 0 1; }
    """ + BOARD_APP_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("h", "hint", "hint"),
        Binding("u", "undo", "undo"),
        Binding("r", "redeal", "redeal"),
        Binding("s", "stop", "stop"),
        Binding("n", "new", "new deal"),
        Binding("m", "marks", "marks"),
        Binding("question_mark", "help", "help"),
        Binding("colon,slash", "type", "type", key_display=":"),
        Binding("ctrl+q,ctrl+c", "quit", "quit", key_display="^q"),
    ]
    FOOTER_KEEP = ("quit", "send_typed", "drop_typed", "take_suggestion", "hint", "new",
                   "undo", "redeal", "stop", "pick", "clear")
    #: What the keys whose action the rules may refuse would do.
    KEY_ACTIONS: ClassVar[dict[str, Action]] = {"r": Redeal(), "u": Undo(), "s": Stop()}

    def __init__(self, session: PracticeSession, *, records: Records | None = None) -> None:
        """``records``: where finished games count (none: they are not kept)."""
        super().__init__()
        self.session = session
        self.records = records
        self.last_hint: Action | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        yield BoardView(id="board")
        yield Static(id="stats")
        yield MessageLine(id="message")
        yield from command_line()
        yield self.footer()

    def on_mount(self) -> None:
        self.query_one(BoardView).palette = self.palette
        self.fit(self.size.width, self.size.height)
        self.query_one(BoardView).focus()
        self.refresh_view()
        self.say("Practice: nothing is scored. h for a hint, u to take back, ? for help.")

    def lay_out(self, columns: int, lines: int) -> None:
        self.query_one(BoardView).set_geometry(board_alone(columns, lines))

    def situation(self) -> Hashable:
        game = self.session.game
        return (self.session.share_code, game.is_over())

    def refresh_view(self) -> None:
        session, palette = self.session, self.palette
        title = Text()
        title.append("Gaps practice", style="bold")
        title.append(f" · {session.game.ruleset.name} · deal ")
        title.append(session.share_code, style="bold")
        if self.records is not None:
            record = self.records.of(session.game.ruleset.name)
            title.append(f" · your {session.game.ruleset.name} record: {record}")
        self.put("#title", title)
        board = self.query_one(BoardView)
        board.typing = self.can_type()
        board.show(session.game)
        self.show_mode()
        self.put("#stats", session.status_line(palette))
        self.expire_message()
        self.refresh_bindings()

    def submit(self, text: str) -> None:
        if text.lower() in ("?", "help"):
            self.action_help()
            return
        try:
            action = self.session.play(text)
        except NotationError as error:
            self.say(typed_error(text, error), error=True)
            return
        except IllegalAction as error:
            self.say(f"{board_words(str(error))} [{error.reason}]", error=True)
            return
        self.last_hint = None
        self._record()
        self.refresh_view()
        game = self.session.game
        if game.is_won():
            self.say(Text(f"You won! Score {game.score}. n deals a new game.",
                          style=Style(color=self.palette.good, bold=True)))
        elif isinstance(action, Move):
            self.say(action_text(str(action), self.palette))
        else:
            self.say(f"{action}: done")

    def _record(self) -> None:
        """Count the deal in the records once it is over (once per deal)."""
        session, records = self.session, self.records
        if records is None or session.recorded or not session.game.is_over():
            return
        session.recorded = True
        game = session.game
        records.of(game.ruleset.name).add(won=game.is_won(), score=game.score)
        with contextlib.suppress(OSError):  # a nicety: practice goes on without it
            records.save()

    async def action_hint(self) -> None:
        self.say("Thinking…")
        game = self.session.game.copy()
        worker = self.run_worker(lambda: suggest(game), thread=True, exit_on_error=False)
        try:
            hint = await worker.wait()
        except Exception as error:  # a hint is a nicety: never crash for it
            self.say(f"No hint: {error}", error=True)
            return
        self.last_hint = hint
        if hint is None:
            self.say(self.over_words())
            return
        if game.grid_codes() != self.session.game.grid_codes():
            return  # the player moved meanwhile: the hint is for a position gone
        board = self.query_one(BoardView)
        board.focus()
        text = Text("Hint: ", style=self.palette.text)
        if isinstance(hint, Move):
            # On the board too: the card selected, its destination marked; Enter plays it.
            board.suggest(str(hint), game.slot_of(hint.card).index,
                          game.destination(hint).index)
            text.append_text(action_text(str(hint), self.palette))
            text.append("  (Enter plays it)", style=self.palette.muted)
        else:
            board.suggest(str(hint))
            text.append(str(hint), style=Style(color=self.palette.text, bold=True))
            text.append("  (Enter " + {"redeal": "redeals: -5 points", "stop": "stops: your "
                        "score stands"}.get(str(hint), "plays it") + ")",
                        style=self.palette.muted)
        self.say(text)

    def can_type(self) -> bool:
        return not self.session.game.is_over()

    def leave_warning(self) -> str | None:
        return "this game is thrown away" if self._in_game() else None

    def over_words(self) -> str:
        game = self.session.game
        if game.is_won():
            return f"You won this deal (score {game.score}): n deals a new one."
        return (f"This game is over ({game.result()}, score {game.score}): n deals a new "
                "one, u takes back the last action.")

    def unavailable(self, character: str) -> str | None:
        action = self.KEY_ACTIONS.get(character)
        return self.session.refusal(action) if action is not None else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if super().check_action(action, parameters) is False:
            return False
        game = self.session.game
        if action == "redeal":
            return game.can_redeal()
        if action == "undo":
            return bool(self.session.history)
        if action in ("stop", "hint", "marks"):
            return not game.is_over()
        return True

    def _in_game(self) -> bool:
        game = self.session.game
        return not game.is_over() and game.moves_made > 0

    def action_undo(self) -> None:
        self.submit("undo")

    def action_redeal(self) -> None:
        if self.confirmed("redeal", "Press r again to redeal: -5 points (u takes it back)."):
            self.submit("redeal")

    def action_stop(self) -> None:
        if self.confirmed("stop", "Press s again to stop this game (u takes it back)."):
            self.submit("stop")

    def action_new(self) -> None:
        if self._in_game() and not self.confirmed(
                "new", "Press n again for a new deal: this game is thrown away."):
            return
        self.session = PracticeSession(None, self.session.game.ruleset)
        self.refresh_view()
        self.say(f"New deal {self.session.share_code}")
