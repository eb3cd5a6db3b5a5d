"""Practice: play offline with ``gaps`` alone, with hints and undo.

``PracticeSession`` is the game logic (pure); ``PracticeApp`` puts it on the same board
as the match screen. Every deal shows its share code, so a good deal can be replayed
(``gaps practice --seed CODE``) or raced (``gaps create --seed CODE``).
"""

from __future__ import annotations

import contextlib
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Static

from client_cli.records import Records
from client_cli.render import action_text
from client_cli.widgets import COMMAND_LINE_CSS, BoardApp, BoardView, MessageLine, command_line
from client_cli.wording import board_words, typed_error
from gaps import Action, Game, IllegalAction, Move, NotationError, Ruleset, Seed, Undo, parse_action
from gaps.bots import bot_for_level


def suggest(game: Game) -> Action | None:
    """A good next action for ``game`` (the level-3 bot's choice), or None when over."""
    if game.is_over():
        return None
    # A fresh bot on a copy: the bot keeps plans keyed on the position it saw last.
    return bot_for_level(3, seed=0).choose(game.copy())


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

    def status_line(self) -> Text:
        game = self.game
        text = Text()
        text.append(f"Score {game.score}", style="bold")
        text.append(f" · placed {game.placed}/48 · redeals left {game.redeals_left}"
                    f" · moves {game.moves_made} · ")
        result = game.result()
        style = {"won": "bold #4fb86b", "lost": "bold #ff6b6b", "blocked": "bold #e0c040",
                 "stopped": "bold #e0c040"}.get(result, "")
        text.append(result, style=style)
        if result == "blocked":
            text.append("\nBlocked: r redeals (-5), s stops, u takes back", style="#e0c040")
        elif game.is_over():
            text.append("\nGame over: n deals a new game, u takes back", style="dim")
        return text


class PracticeApp(BoardApp):
    """The practice board: ``PracticeApp(PracticeSession(...)).run()``."""

    TITLE = "Gaps practice"
    CSS = """
    #title { height: 1; padding: 0 1; background: $primary-darken-3; }
    #stats { height: 2; padding: 0 1; }
    """ + COMMAND_LINE_CSS
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
        yield Footer()

    def on_mount(self) -> None:
        self.fit(self.size.width, self.size.height)
        self.query_one(BoardView).focus()
        self.query_one(MessageLine).say(
            "Practice: nothing is scored. h for a hint, u to take back, ? for help.")
        self.refresh_view()

    def refresh_view(self) -> None:
        session = self.session
        title = Text()
        title.append("Gaps practice", style="bold")
        title.append(f" · {session.game.ruleset.name} · deal ")
        title.append(session.share_code, style="bold #8fd3ff")
        if self.records is not None:
            record = self.records.of(session.game.ruleset.name)
            title.append(f" · your {session.game.ruleset.name} record: {record}", style="dim")
        self.query_one("#title", Static).update(title, layout=False)
        board = self.query_one(BoardView)
        board.typing = self.can_type()
        board.show(session.game)
        self.show_mode()
        self.query_one("#stats", Static).update(session.status_line(), layout=False)

    def submit(self, text: str) -> None:
        line = self.query_one(MessageLine)
        if text.strip().lower() in ("?", "help"):
            self.action_help()
            return
        try:
            action = self.session.play(text)
        except NotationError as error:
            line.say(typed_error(text, error), error=True)
            return
        except IllegalAction as error:
            line.say(f"{board_words(str(error))} [{error.reason}]", error=True)
            return
        self.last_hint = None
        if isinstance(action, Move):
            line.say(action_text(str(action)))
        else:
            line.say(f"{action}: done")
        if self.session.game.is_won():
            line.say(Text(f"You won! Score {self.session.game.score}. n for a new deal.",
                          style="bold #4fb86b"))
        self._record()
        self.refresh_view()

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
        line = self.query_one(MessageLine)
        line.say("Thinking…")
        game = self.session.game.copy()
        worker = self.run_worker(lambda: suggest(game), thread=True, exit_on_error=False)
        try:
            hint = await worker.wait()
        except Exception as error:  # a hint is a nicety: never crash for it
            line.say(f"No hint: {error}", error=True)
            return
        self.last_hint = hint
        if hint is None:
            line.say("No hint: the game is over.")
            return
        text = Text("Hint: ")
        text.append_text(action_text(str(hint)) if isinstance(hint, Move) else Text(str(hint)))
        if isinstance(hint, Move) and game.grid_codes() == self.session.game.grid_codes():
            # On the board too: the card selected, its destination marked; Enter plays it.
            board = self.query_one(BoardView)
            board.focus()
            board.choose(game.slot_of(hint.card).index, game.destination(hint).index)
            text.append("  (Enter plays it)", style="dim")
        line.say(text)

    def can_type(self) -> bool:
        return not self.session.game.is_over()

    def leave_warning(self) -> str | None:
        return "Quitting throws this game away" if self._in_game() else None

    def _in_game(self) -> bool:
        game = self.session.game
        return not game.is_over() and game.moves_made > 0

    def action_undo(self) -> None:
        self.submit("undo")

    def action_redeal(self) -> None:
        # A redeal the rules refuse costs nothing: the engine says why at once.
        if not self.session.game.can_redeal() or self.confirmed(
                "redeal", "Redeal (-5 points)? Press r again to confirm (u takes it back)."):
            self.submit("redeal")

    def action_stop(self) -> None:
        if self.confirmed("stop", "Stop this game? Press s again to confirm "
                                  "(u takes it back)."):
            self.submit("stop")

    def action_new(self) -> None:
        if self._in_game() and not self.confirmed(
                "new", "A new deal throws this game away: press n again to confirm."):
            return
        self.session = PracticeSession(None, self.session.game.ruleset)
        self.query_one(MessageLine).say(f"New deal {self.session.share_code}")
        self.refresh_view()
