"""The match screen: a Textual app on a live ``Connection``.

It shows the lobby, the countdown, the board with the server's clock, every player's
progress as it happens, and the final ranking with the revealed seed (``results``).
Moves are typed (``8c``, ``2h>3``) or picked on the board with the keyboard or the mouse;
the server answers each one, and a refusal shows its reason on the message line. The
screen is laid out for the terminal's size (``layout``): every player's row is on it.
A spectator sees each player's progress live and, once the match is over, every final
board, replayed from the match's replay (``finals``).

Whatever the server says (names, codes, reasons, the heading's tournament name) is drawn
as ``Text`` of ``printable`` characters: never markup, never a control sequence.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar, Final

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import Static

from client_cli.boardapp import BOARD_APP_CSS, BoardApp, command_line
from client_cli.connection import (
    ClientError,
    Connection,
    ConnectionNotice,
    Listened,
    ServerRefused,
    expect,
    match_of,
)
from client_cli.duration import format_duration, format_ms, starts_in
from client_cli.finals import FinalBoards, final_boards
from client_cli.layout import Layout, plan
from client_cli.match_state import MatchState, Phase
from client_cli.palette import DARK, TITLE_ALERT, TITLE_HEADING, TITLE_WATCHING, Palette
from client_cli.players import Look, PlayersPanel, panel_needs
from client_cli.refusals import error_words
from client_cli.render import action_text, printable
from client_cli.results import RankingScreen, Rematch, headline, rematch_options
from client_cli.widgets import BoardView, MessageLine
from client_cli.wording import board_words, typed_error
from gaps import IllegalAction, NotationError, Redeal, parse_action
from gaps.ruleset import UndoPolicy
from gaps_protocol import MatchSnapshot
from gaps_protocol.messages.events import MatchEnded
from gaps_protocol.messages.replies import ActionOk, Events
from gaps_protocol.messages.requests import Resync

__all__ = ["MatchApp", "RankingScreen", "Rematch", "rematch_options", "result_line"]

#: Redraws wait this long, so that a burst of updates makes one redraw.
REDRAW_DELAY_S = 0.05
#: What the title says a match is part of when whoever opened it did not say.
KIND_HEADINGS = {"quick": "quick match", "daily": "daily challenge", "tournament": "tournament"}
#: The screen asks for the finished match's replay (its boards, and the deal's par) at
#: once, then again after each of these pauses until it has the par: the server solves it
#: after the match, within its budget (10 s by default). Few requests: a replay costs
#: from the player's budget of costly requests, which a rematch needs too.
PAR_RETRIES_S = (1.0, 2.0, 3.0, 5.0, 8.0, 13.0)
#: The shortest a tournament's name is cut to in the title before it is left out.
LEAST_HEADING: Final = 8

SCREEN_CSS = """
Screen { layout: vertical; }
#main { width: 100%; height: 1fr; layout: vertical; overflow-y: auto; scrollbar-size-vertical: 1; }
#main.wide { layout: horizontal; }
#left { width: auto; height: auto; }
#main.spectator #left { width: 100%; }
#right { width: 1fr; height: auto; }
#main.spectator #board, #main.spectator #stats { display: none; }
#stats { height: 2; padding: 0 1; }
#boards { display: none; }
#log { height: auto; padding: 0 1; }
""" + BOARD_APP_CSS


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ServerUpdate(Message):
    """The match state changed (an event, a snapshot, a connection notice)."""


def result_line(reply: ActionOk, colours: Palette = DARK) -> Text:
    """What an ``action_ok`` did, in words: ``8♣ r3c7 → r1c5 · score 3``."""
    card = reply.card if isinstance(reply.card, str) else None
    if reply.kind == "redeal":
        text = Text(printable(f"Redealt: {reply.redeals_left} redeal(s) left"))
    elif reply.kind == "stop":
        text = Text("Stopped: your score stands")
    elif reply.kind == "undo":
        text = Text("Took back ")
        text.append_text(action_text(card or "", colours))
    else:
        text = action_text(card if card is not None else reply.action, colours)
        start = reply.from_ if isinstance(reply.from_, str) else None
        end = reply.to if isinstance(reply.to, str) else None
        text.append(printable(f"  {start} → {end}"))
    text.append(printable(f" · score {reply.score} · placed {reply.placed}/48"))
    text.stylize(colours.text)
    if reply.status == "blocked":
        text.append(" · blocked: r to redeal, s to stop",
                    style=Style(color=colours.warning, bold=True))
    elif reply.status == "won":
        text.append(" · you won!", style=Style(color=colours.good, bold=True))
    return text


@dataclass(frozen=True)
class TitlePart:
    """A piece of the title, and a shorter form for a narrow terminal (None: dropped)."""

    text: str
    style: Style
    short: str | None = ""  # "": the same


def fit_title(parts: list[TitlePart], heading: TitlePart | None, width: int, *,
              heading_at: int = 0) -> Text:
    """The title in ``width`` columns: the parts, then shorter forms of them one by one,
    the ``heading`` (what the match is part of, put before part ``heading_at``) cut with
    … before it is left out."""
    stages = [[part.text for part in parts]]
    for index, part in enumerate(parts):
        if part.short != "":
            stages.append([*stages[-1][:index], part.short or "", *stages[-1][index + 1:]])
    whole = heading.text if heading else ""
    for forms in stages:  # the heading whole, with as few parts shortened as can be
        if len(whole) <= width - sum(len(form) for form in forms):
            return _assemble(parts, forms, heading, whole, heading_at)
    for forms in stages[1:]:  # then cut, once the least needed part has given way
        room = width - sum(len(form) for form in forms)
        if room >= LEAST_HEADING:
            return _assemble(parts, forms, heading, whole[:room - 1] + "…", heading_at)
    return _assemble(parts, stages[-1], heading, "", heading_at)


def _assemble(parts: list[TitlePart], forms: list[str], heading: TitlePart | None,
              shown: str, heading_at: int) -> Text:
    text = Text()
    for index, (part, form) in enumerate(zip(parts, forms, strict=True)):
        if index == heading_at and heading is not None:
            text.append(shown, style=heading.style)
        text.append(form, style=part.style)
    return text


class MatchApp(BoardApp):
    """A match, live: ``MatchApp(connection, snapshot).run_async()``."""

    TITLE = "Gaps Arena"
    CSS = SCREEN_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "ready", "ready"),
        Binding("r", "redeal", "redeal"),
        Binding("g", "start", "start now"),
        Binding("u", "undo", "undo"),
        Binding("s", "stop", "stop"),
        Binding("m", "marks", "marks"),
        Binding("b", "ranking", "ranking"),
        Binding("question_mark", "help", "help"),
        Binding("colon,slash", "type", "type", key_display=":"),
        Binding("ctrl+q,ctrl+c", "quit", "quit", key_display="^q"),
    ]
    FOOTER_KEEP = ("quit", "ready", "start", "send_typed", "drop_typed", "ranking", "pick",
                   "redeal", "stop", "undo", "take_suggestion", "clear", "type", "marks",
                   "leave_input")

    def __init__(
        self, connection: Connection, snapshot: MatchSnapshot, *, heading: str | None = None,
        wall: Callable[[], datetime] = _utc_now,
    ) -> None:
        """``heading`` says what the match is part of (``Cup · round 1/3``, ``quick match``);
        ``wall`` is the clock the countdown to a tournament's next round reads."""
        super().__init__()
        self.heading = heading
        self.wall = wall
        #: When a tournament's next round starts, once this round is over (the title
        #: counts down to it).
        self.next_round_at: datetime | None = None
        you_id = connection.player.id if connection.player else None
        self.connection = connection
        self.state = MatchState(snapshot.match.code, you_id=you_id)
        if self.state.code not in connection.tracks:
            self.state.apply(snapshot)
        self.connection_note: tuple[str, bool] | None = None
        self._ranking_shown = False
        self._binding_keys: tuple[object, ...] = ()
        self._refresh_pending = False
        self._said: Text | None = None
        #: Whether the ranking of a match that ended unseen is being fetched.
        self._fetching = False
        #: Whether the finished match's replay (boards, par) is being asked for.
        self.fetching_replay = False
        #: What the player asked for on the ranking screen, if anything.
        self.rematch: Rematch | None = None
        #: The rematches offered that the screen has shown: (same seed?, code).
        self._offers_seen: tuple[tuple[bool, str], ...] = ()
        self._layout: Layout | None = None
        self._layout_for: tuple[object, ...] = ()
        connection.add_listener(self._on_server, replay=self.state.code)

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Container(id="main"):
            with Vertical(id="left"):
                yield BoardView(id="board")
                yield Static(id="stats")
                yield FinalBoards(id="boards")
            with Vertical(id="right"):
                yield PlayersPanel(id="players")
                yield Static(id="log")
        yield MessageLine(id="message")
        yield from command_line()
        yield self.footer()

    def on_mount(self) -> None:
        self.query_one(BoardView).palette = self.palette
        self.fit(self.size.width, self.size.height)
        self.query_one(BoardView).focus()
        self.set_interval(0.25, self._tick)
        self.refresh_view()
        if self.state.role != "player":
            self.say("Watching: every player's progress, live; their boards come at the end.")
        if self.state.phase is Phase.FINISHED and self.state.ranking is None:
            self._fetching = True
            self.run_worker(self._fetch_ranking(), exit_on_error=False)

    def on_unmount(self) -> None:
        self.connection.remove_listener(self._on_server)

    async def _fetch_ranking(self) -> None:
        """A match that ended before we came: its ranking is in its last event."""
        reply = expect(await self.connection.request(
            Resync(code=self.state.code, since=max(0, self.state.last_seq - 1)), retry=True),
            Events, "resync")
        for event in reply.events:
            if isinstance(event, MatchEnded):
                self.state.apply(event)
        self.schedule_refresh()

    async def _fetch_replay(self) -> None:
        """Ask for the replay until it has the par: the server solves it after the end.
        The first one already has every board."""
        state = self.state
        try:
            for pause_s in (*PAR_RETRIES_S, None):
                try:
                    document = await self.connection.get_replay(state.code)
                except (ClientError, ServerRefused):
                    return
                state.replay = document
                self._show_replay()
                if state.par is not None or pause_s is None:
                    return  # the par is in, or the server is far behind: later, `gaps replay`
                await asyncio.sleep(pause_s)
        finally:
            self.fetching_replay = False
            self._show_replay()

    def _show_replay(self) -> None:
        if not self.is_running or not self.screen_stack:
            return  # the app is closing
        screen = self.screen
        if isinstance(screen, RankingScreen):
            screen.redraw(fetching=self.fetching_replay)
        if self.state.role != "player" and self.state.replay is not None:
            with contextlib.suppress(NoMatches):
                self.query_one(FinalBoards).show(final_boards(self.state.replay),
                                                 self.state.par, self.palette)

    def lay_out(self, columns: int, lines: int) -> None:
        state = self.state
        look = self._look()
        players = list(state.players.values())
        key = (columns, lines, panel_needs(players, look), state.role)
        if key == self._layout_for:
            return
        self._layout_for = key
        layout = self._layout = plan(columns, lines, key[2], board=state.role == "player")
        main = self.query_one("#main")
        main.set_class(layout.wide, "wide")
        main.set_class(state.role != "player", "spectator")
        self.query_one(BoardView).set_geometry(layout.geometry)
        panel = self.query_one(PlayersPanel)
        panel.set_class(layout.framed, "framed")
        panel.show(players, look, layout.columns)
        log = self.query_one("#log", Static)
        log.display = layout.log > 0
        log.styles.max_height = max(1, layout.log)

    def _look(self) -> Look:
        state = self.state
        return Look(you_id=state.you_id, host_id=state.host_id,
                    started=state.phase not in (Phase.LOBBY, Phase.COUNTDOWN),
                    palette=self.palette)

    # -- what the server says -------------------------------------------------------------

    def _on_server(self, message: Listened) -> None:
        if isinstance(message, ConnectionNotice):
            if message.state != "gone" or message.match == self.state.code:
                self.connection_note = (message.detail, message.state != "restored")
                self.state.apply(message)
        else:
            if match_of(message) != self.state.code:
                return
            self.state.apply(message)
        self.post_message(ServerUpdate())

    def on_server_update(self, _: ServerUpdate) -> None:
        state = self.state
        if state.gone is not None and state.phase is not Phase.FINISHED:
            # Nothing more can happen here: whoever opened the screen says why.
            self.exit()
            return
        if self.connection_note is not None:
            text, error = self.connection_note
            self.connection_note = None
            self.say(text, error=error)
        offers = tuple(sorted((same, o.code) for same, o in state.rematches.items()))
        if offers != self._offers_seen:
            self._offers_seen = offers
            self._tell_offers()
        if state.phase is Phase.FINISHED and state.ranking is None and not self._fetching:
            # A snapshot of a match that ended meanwhile (while the server was down, say):
            # its ranking is in its last event.
            self._fetching = True
            self.run_worker(self._fetch_ranking(), exit_on_error=False)
        self.schedule_refresh()

    def _tell_offers(self) -> None:
        """A rematch was offered: the ranking shows it, and a notice says how to accept."""
        screen = self.screen
        if isinstance(screen, RankingScreen):
            screen.redraw()
        state = self.state
        for same_seed, offer in state.rematches.items():
            if offer.by.player_id == state.you_id or state.role != "player":
                continue
            key, what = ("d", "the same deal") if same_seed else ("n", "a new deal")
            self.notify(printable(f"{offer.by.name} offers a rematch ({what}): {key} on the "
                                  f"ranking takes your seat in match {offer.code}"),
                        title="Rematch", timeout=30, markup=False)

    # -- drawing ---------------------------------------------------------------------------

    def schedule_refresh(self) -> None:
        """Redraw soon: a burst of events and acks makes one redraw, not one each."""
        if not self._refresh_pending:
            self._refresh_pending = True
            self.set_timer(REDRAW_DELAY_S, self._redraw)

    def _redraw(self) -> None:
        self._refresh_pending = False
        with contextlib.suppress(NoMatches):  # the app is closing: nothing to draw on
            self.refresh_view()
            if self._said is not None:
                self.say(self._said)
                self._said = None

    def situation(self) -> Hashable:
        state = self.state
        return (state.phase, state.playing, state.ranking is not None)

    def refresh_view(self) -> None:
        state = self.state
        board = self.query_one(BoardView)
        own = state.own
        board.waiting = self._waiting_text()
        board.typing = self.can_type()
        board.show(own.game() if own is not None else None)
        self.lay_out(self.size.width, self.size.height)
        self.show_mode()
        self.put("#stats", self._stats())
        self.query_one(PlayersPanel).show(state.players.values(), self._look(),
                                          self._layout.columns if self._layout else 1)
        shown = self._layout.log if self._layout else 0
        log = state.log[-shown:] if shown else []
        self.put("#log", Text("\n".join(printable(line) for line in log),
                              style=self.palette.muted), layout=True)
        self._tick()
        self.expire_message()
        keys = (state.phase, state.playing, state.is_host, own is not None and own.can_undo,
                own is not None and own.game().can_redeal(), state.ranking is not None)
        if keys != self._binding_keys:  # the footer is costly to redraw: only on a change
            self._binding_keys = keys
            self.refresh_bindings()
        if state.phase is Phase.FINISHED and state.ranking is not None and not self._ranking_shown:
            self._ranking_shown = True
            if state.seed is not None:  # a daily's replay is withheld until its day is over
                self.fetching_replay = True
                self.run_worker(self._fetch_replay(), exit_on_error=False)
            self.action_ranking()

    def _waiting_text(self) -> str:
        state = self.state
        if state.phase is Phase.LOBBY and state.kind != "race":
            return "Seated: the match starts by itself in a moment…"
        if state.phase is Phase.LOBBY:
            code = printable(state.code)
            summary = state.summary
            seats = summary.max_players if summary is not None else "?"
            win_by = summary.win_by if summary is not None else "time"
            # Lines of at most 55 columns: the smallest board's room holds them.
            lines = [f"Lobby: others join with  gaps join {code}",
                     printable(f"Seats {len(state.players)}/{seats}"
                               f" · clock {format_duration(state.time_limit_s)}"
                               f" · {state.ruleset.name} · win by {win_by}")]
            if state.role == "player":
                ready = bool(state.me and state.me.ready)
                lines.append("You are ready: waiting for the others." if ready
                             else "Press r when you are ready.")
                if state.is_host:
                    lines.append("You host it: g starts it with whoever is there.")
            return "\n".join(lines)
        if state.phase is Phase.COUNTDOWN:
            left = max(0.0, (state.countdown_ends or 0) - time.monotonic())
            return f"Get ready: the cards are dealt in {left:.0f} s…"
        if state.phase is Phase.ABANDONED:
            return "This match was abandoned: everyone left the lobby."
        if state.phase is Phase.FINISHED:
            return "This match is over."
        return "waiting for the deal…"

    def _stats(self) -> Text:
        state, palette = self.state, self.palette
        own = state.own
        if own is None:
            return Text("")
        text = Text(style=palette.text)
        text.append(f"Score {own.score}", style="bold")
        text.append(f" · placed {own.placed}/48 · redeals left {own.redeals_left}"
                    f" · moves {own.moves_made}")
        me = state.me
        finish_ms = me.finish_ms if me is not None else None
        reason = own.end_reason or (me.end_reason if me is not None else None)
        # How the game ended goes on a line of its own: on the board's width it never wraps.
        text.append("\n")
        if state.phase is Phase.FINISHED and state.ranking:
            text.append(headline(state.ranking, state.you_id),
                        style=Style(color=palette.good, bold=True))
            text.append(" · b: the ranking")
        elif reason == "won":
            text.append(f"You won in {format_ms(finish_ms)}!",
                        style=Style(color=palette.good, bold=True))
            text.append(" · waiting for the others…")
        elif reason:
            text.append(printable(f"Finished: {reason} at {format_ms(finish_ms)}"),
                        style=Style(color=palette.warning, bold=True))
            text.append(" · waiting for the others…")
        else:
            blocked = own.status == "blocked"
            text.append(printable(own.status.capitalize()),
                        style=Style(color=palette.warning, bold=True) if blocked else "")
            if blocked:
                hint = "r redeals (-5), s stops" if own.redeals_left else "s stops"
                text.append(f": {hint}", style=palette.warning)
        return text

    def _tick(self) -> None:
        with contextlib.suppress(NoMatches):  # the app is closing: nothing to draw on
            self._draw_title()

    def _draw_title(self) -> None:
        state = self.state
        bold, plain = Style(bold=True), Style()
        heading_style = Style(color=TITLE_HEADING, bold=True)
        parts = [TitlePart("Gaps Arena ", bold, short=None),
                 TitlePart(printable(state.code), bold)]
        if state.phase is Phase.RUNNING or state.phase is Phase.FINISHED:
            now = format_duration(state.clock.now_ms() / 1000)
            left_ms = state.remaining_ms()
            parts.append(TitlePart(f"  clock {now}", bold, short=f"  {now}"))
            parts.append(TitlePart(f" · {format_duration(left_ms / 1000)} left",
                                   Style(color=TITLE_ALERT, bold=True) if left_ms < 60_000
                                   else plain))
        elif state.phase is Phase.COUNTDOWN:
            seconds = max(0.0, (state.countdown_ends or 0) - time.monotonic())
            parts.append(TitlePart(f"  starting in {seconds:.0f} s", heading_style))
            board = self.query_one(BoardView)
            board.waiting = self._waiting_text()
            board.refresh()
        heading_at = len(parts)
        if self.next_round_at is not None:
            seconds = (self.next_round_at - self.wall()).total_seconds()
            parts.append(TitlePart(f"  next round {starts_in(seconds)}", heading_style,
                                   short=f"  next {starts_in(seconds)}"))
        summary = state.summary
        win_by = printable(summary.win_by if summary is not None else "time")
        unrated = "" if summary is None or summary.rated else " · unrated"
        parts.append(TitlePart(f"  ·  {state.ruleset.name} · win by {win_by}{unrated}",
                               plain, short=f" · {state.ruleset.name} · win by {win_by}"
                                            f"{unrated}"))
        if state.role != "player":
            parts.append(TitlePart(f" · watching ({state.spectators} spectating)",
                                   Style(color=TITLE_WATCHING), short=" · watching"))
        heading = self.heading or KIND_HEADINGS.get(state.kind)
        shown = TitlePart(f"  {printable(heading)}", heading_style) if heading else None
        self.put("#title", fit_title(parts, shown, max(1, self.size.width - 2),
                                     heading_at=heading_at))

    # -- keys ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if super().check_action(action, parameters) is False:
            return False
        state = self.state
        if action == "ready":  # other kinds of match start by themselves
            return state.role == "player" and state.phase is Phase.LOBBY and state.kind == "race"
        if action == "start":
            return state.phase is Phase.LOBBY and state.is_host and state.kind == "race"
        if action in ("redeal", "undo", "stop", "marks"):
            if not state.playing or state.own is None:
                return False
            if action == "undo":
                return state.own.can_undo
            if action == "redeal":
                return state.own.game().can_redeal()
        if action == "ranking":
            return state.ranking is not None
        return True

    def unavailable(self, character: str) -> str | None:
        state = self.state
        own = state.own
        if character == "r" and state.playing and own is not None:
            try:
                own.game().copy().push(Redeal())
            except IllegalAction as error:
                return f"No redeal: {board_words(str(error))} [{error.reason}]"
        if character == "u" and state.playing:
            if state.ruleset.undo is UndoPolicy.NONE:
                return f"No undo in {state.ruleset.name} (docs/rules.md)."
            return "Nothing to take back now."
        if character in "rg" and state.phase is Phase.LOBBY and state.kind != "race":
            return "This match starts by itself: nothing to press."
        if character == "g" and state.phase is Phase.LOBBY:
            return "Only the host starts the match (g); r says you are ready."
        if character == "b" and state.phase is not Phase.FINISHED:
            return "The ranking comes once every game has ended."
        return None

    def can_type(self) -> bool:
        return self.state.playing

    def leave_warning(self) -> str | None:
        state = self.state
        if state.role != "player":
            return None
        if state.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            return "it gives up your seat in this match"
        if state.playing:
            return "your game ends unless you come back soon"
        if state.phase is Phase.RUNNING:
            return "the others still play; the ranking comes after"
        return None

    def over_words(self) -> str:
        state = self.state
        me = state.me
        reason = ((state.own.end_reason if state.own else None)
                  or (me.end_reason if me is not None else None) or "over")
        if state.phase is Phase.FINISHED:
            return "The match is over: b shows the ranking."
        return f"Your game is over ({reason}): waiting for the others."

    def action_ranking(self) -> None:
        if self.state.ranking is not None:
            self.push_screen(RankingScreen(self.state, self.connection.url,
                                           fetching=self.fetching_replay),
                             callback=self._ranking_closed)

    def _ranking_closed(self, rematch: Rematch | None) -> None:
        if rematch is not None:
            self.rematch = rematch
            self.exit(0)
            return
        self.call_after_refresh(self._back_on_board)

    def colours_changed(self) -> None:
        self._show_replay()

    def _back_on_board(self) -> None:
        """The board's screen again: draw what came while the ranking was shown."""
        with contextlib.suppress(NoMatches):
            self.refresh_view()
            self._show_replay()

    async def action_ready(self) -> None:
        state = self.state
        ready = not bool(state.me and state.me.ready)
        seats = state.summary.max_players if state.summary is not None else None
        if ready and self._starts_short(state) and not self.confirmed(
                "ready", f"Press r again to start now with {len(state.players)} of "
                f"{seats} seats taken (the others are ready)."):
            return
        try:
            await self.connection.ready(state.code, ready)
        except ClientError as error:
            self.say(error_words(error), error=True)

    @staticmethod
    def _starts_short(state: MatchState) -> bool:
        """Whether this player's ready would start the match with seats still empty."""
        others_ready = all(player.ready for pid, player in state.players.items()
                           if pid != state.you_id)
        if state.summary is None:
            return False
        return others_ready and len(state.players) < state.summary.max_players

    def action_redeal(self) -> None:
        own = self.state.own
        if own is not None and self.confirmed(
                "redeal", f"Press r again to redeal: -5 points ({own.redeals_left} left)."):
            self.submit("redeal")

    async def action_start(self) -> None:
        try:
            await self.connection.start_match(self.state.code)
        except ClientError as error:
            self.say(error_words(error), error=True)

    def action_undo(self) -> None:
        self.submit("undo")

    def action_stop(self) -> None:
        if self.confirmed("stop", "Press s again to stop: your game ends, your score stands."):
            self.submit("stop")

    # -- moves -----------------------------------------------------------------------------

    def submit(self, text: str) -> None:
        """Check what the player typed or picked, and send it to the server."""
        words = text.lower()
        if words in ("?", "help"):
            self.action_help()
            return
        if words in ("quit", "exit"):
            self.exit(0)
            return
        try:
            action = parse_action(text)
        except NotationError as error:
            self.say(typed_error(text, error), error=True)
            return
        state = self.state
        if state.role != "player":
            self.say("Spectators watch: only players act.", error=True)
            return
        if state.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            self.say("The match has not started yet.", error=True)
            return
        if not state.playing:
            self.say(self.over_words(), error=True)
            return
        self.run_worker(self._send(str(action)), group="actions")

    async def _send(self, action: str) -> None:
        try:
            reply = await self.connection.act(self.state.code, action)
        except ServerRefused as refusal:
            self._said = None  # an older move's news must not cover this
            self.say(f"{board_words(refusal.message)} [{refusal.reason or refusal.code}]"
                     if refusal.code == "illegal_action" else error_words(refusal), error=True)
            return
        except ClientError as error:
            self._said = None
            self.say(error_words(error), error=True)
            return
        self.state.apply_ack(reply)
        self._said = result_line(reply, self.palette)  # shown with the next redraw
        self.schedule_refresh()

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        self._tick()
