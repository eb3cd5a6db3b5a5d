"""The match screen: a Textual app on a live ``Connection``.

It shows the lobby, the countdown, the board with the server's clock, every player's
progress as it happens, and the final ranking with the revealed seed. Moves are typed
(``8c``, ``2h>3``) or picked on the board with the keyboard or the mouse; the server
answers each one, and a refusal shows its reason on the message line.

Whatever the server says (names, codes, reasons, the heading's tournament name) is drawn
as ``Text`` of ``printable`` characters: never markup, never a control sequence.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from client_cli.config import http_base
from client_cli.connection import ClientError, Connection, ServerRefused
from client_cli.duration import format_duration, format_ms, starts_in
from client_cli.match_state import MatchState, Phase
from client_cli.refusals import error_words
from client_cli.render import (
    action_text,
    append_bot_mark,
    par_text,
    printable,
    printable_text,
    result_words,
    review_words,
)
from client_cli.widgets import (
    COMMAND_LINE_CSS,
    BoardApp,
    BoardView,
    MessageLine,
    command_line,
    players_table,
)
from client_cli.wording import board_words, typed_error
from gaps import NotationError, parse_action

#: From this terminal width on, the players panel goes right of the board, not below.
WIDE_COLUMNS = 128
#: Redraws wait this long, so that a burst of updates makes one redraw.
REDRAW_DELAY_S = 0.05
#: What the title says a match is part of when whoever opened it did not say.
KIND_HEADINGS = {"quick": "quick match", "daily": "daily challenge", "tournament": "tournament"}
#: The result screen asks for the deal's par (in the replay) at once, then again after
#: each of these pauses until it has it: the server solves it after the match, within its
#: budget (10 s by default). Few requests: a replay costs from the player's budget of
#: costly requests, which a rematch needs too.
PAR_RETRIES_S = (1.0, 2.0, 3.0, 5.0, 8.0, 13.0)

SCREEN_CSS = """
Screen { layout: vertical; }
#title { height: 1; padding: 0 1; background: $primary-darken-3; color: $text; }
#main { width: 100%; height: 1fr; layout: vertical; overflow-y: auto; scrollbar-size-vertical: 1; }
#main.wide { layout: horizontal; }
#main.narrow #log { display: none; }
#left { width: auto; height: auto; }
#right { width: 1fr; height: auto; min-height: 5; }
#main.spectator #left { display: none; }
#stats { height: 2; padding: 0 1; }
#players { width: auto; max-width: 100%; height: auto; max-height: 18;
           border: round $primary-darken-2; padding: 0 1; }
#log { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
""" + COMMAND_LINE_CSS


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ServerUpdate(Message):
    """The match state changed (an event, a snapshot, a connection notice)."""


def result_line(reply: Mapping[str, Any]) -> Text:
    """What an ``action_ok`` did, in words: ``8♣ r3c7 → r1c5 · score 3``."""
    kind = reply.get("kind")
    if kind == "redeal":
        text = printable_text(f"Redealt: {reply.get('redeals_left')} redeal(s) left")
    elif kind == "stop":
        text = Text("Stopped: your score stands")
    elif kind == "undo":
        text = Text("Took back ")
        text.append_text(action_text(str(reply.get("card", ""))))
    else:
        text = action_text(str(reply.get("card", reply.get("action", ""))))
        text.append(printable(f"  {reply.get('from')} → {reply.get('to')}"))
    text.append(printable(f" · score {reply.get('score')} · placed {reply.get('placed')}/48"))
    if reply.get("status") == "blocked":
        text.append(" · blocked: r to redeal, s to stop", style="bold #e0c040")
    elif reply.get("status") == "won":
        text.append(" · you won!", style="bold #4fb86b")
    return text


class Rematch(StrEnum):
    """What the player asked for on the ranking screen."""

    NEW_DEAL = "new deal"  # the same options, a new secret seed (rated as the first was)
    SAME_DEAL = "same deal"  # the same options and the revealed seed (unrated)


def rematch_options(state: MatchState, rematch: Rematch) -> dict[str, Any]:
    """The ``create_match`` options of a rematch of ``state``'s match: its rules, seats,
    clock and ranking; a match of a kind that starts by itself (quick, daily, tournament)
    becomes a race for as many as played it."""
    summary = state.summary
    options: dict[str, Any] = {
        "ruleset": state.ruleset.name, "time_limit_s": state.time_limit_s,
        "win_by": summary.get("win_by", "time"), "public": bool(summary.get("public", False)),
        "max_players": int(summary.get("max_players") or max(1, len(state.players))),
    }
    if state.kind != "race":
        options["max_players"] = max(1, len(state.players))
    if rematch is Rematch.SAME_DEAL and state.seed is not None:
        options["seed"] = state.seed
    return options


class RankingScreen(Screen[None]):
    """The final table, the revealed seed and where to get the replay."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q,escape,enter", "app.quit", "quit"),
        Binding("b", "back", "the board"),
        Binding("n", "rematch(False)", "rematch"),
        Binding("d", "rematch(True)", "same deal"),
    ]
    DEFAULT_CSS = """
    RankingScreen { align: center top; padding: 1 2; }
    RankingScreen #ranking { border: round $accent; padding: 0 1; height: auto; }
    RankingScreen #reveal { padding: 1 1; height: auto; }
    """

    def __init__(
        self, state: MatchState, server: str, *, connection: Connection | None = None
    ) -> None:
        """With ``connection``, the deal's par is asked for (``get_replay``) until the
        server has solved it, and shown beside each score."""
        super().__init__()
        self.state = state
        self.server = server
        self.connection = connection
        #: The deal's par (``{"score", "exact"}``) once the server has it.
        self.par: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._table(), id="ranking")
            yield Static(self._reveal(), id="reveal")
        yield Footer()

    def on_mount(self) -> None:
        # A daily challenge's replay is withheld until its day is over: `gaps daily`
        # prints its par from the day's board instead.
        if self.connection is not None and self.state.seed is not None:
            self.run_worker(self._fetch_par(), exit_on_error=False)

    async def _fetch_par(self) -> None:
        """Ask for the replay until it has the par: the server solves it after the end."""
        assert self.connection is not None
        for pause_s in (*PAR_RETRIES_S, None):
            try:
                document = await self.connection.get_replay(self.state.code)
            except (ClientError, ServerRefused):
                return
            par = document.get("match", {}).get("par") if isinstance(document, dict) else None
            if isinstance(par, dict):
                self.par = par
                with contextlib.suppress(NoMatches):
                    self.query_one("#ranking", Static).update(self._table())
                return
            if pause_s is None:
                return  # the server computes no par, or is far behind: the replay has it later
            await asyncio.sleep(pause_s)

    def _table(self) -> Table:
        state = self.state
        table = Table(title=printable_text(f"Match {state.code}: final ranking"), expand=True,
                      title_style="bold", box=None, padding=(0, 1))
        for column, justify in (("#", "right"), ("player", "left"), ("score", "right"),
                                ("par", "right"), ("placed", "right"), ("redeals", "right"),
                                ("moves", "right"), ("result", "left"), ("time", "right")):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        par = printable_text(par_text(self.par), "dim")
        for row in state.ranking or []:
            name = append_bot_mark(printable_text(row.get("name")), row)
            if row.get("player_id") == state.you_id:
                name.stylize("bold #8fd3ff")
                name.append(" (you)", style="dim")
            medal = {1: "bold #e0c040", 2: "bold #c0c0c0", 3: "bold #c08040"}.get(
                int(row.get("rank", 0)), "")
            table.add_row(
                printable_text(row.get("rank"), medal), name, printable_text(row.get("score")),
                par, printable_text(f"{row.get('placed')}/48"),
                printable_text(row.get("redeals_used")), printable_text(row.get("moves_made")),
                printable_text(result_words(row)),
                printable_text(format_ms(row.get("finish_ms"))),
            )
        mine = next((r for r in state.ranking or [] if r.get("player_id") == state.you_id), None)
        if mine is not None and mine.get("review") == "held":
            table.caption = ("Your result is under review (its timing was flagged): it counts on "
                             "no board or rating until an operator clears it.")
        elif mine is not None and review_words(mine):
            table.caption = f"Your result: {review_words(mine)} (docs/fair-play.md)."
        return table

    def _reveal(self) -> Text:
        state = self.state
        code, commitment = printable(state.code), printable(state.commitment)
        text = Text()
        if state.seed is None:  # a daily challenge: secret until its day is over
            text.append("The seed stays secret until the day is over (UTC): ", style="bold")
            text.append("then ")
            text.append(f"gaps replay {code}", style="bold")
            text.append(" gets the replay, to check with ")
            text.append("gaps verify", style="bold")
            text.append(".\n")
            text.append(f"Commitment {commitment}\n", style="dim")
            text.append("\nq quit · b the board (b there brings this back)", style="dim")
            return text
        text.append("Seed ", style="bold")
        text.append(printable(state.seed), style="bold #8fd3ff")
        verified = state.verified_commitment()
        if verified:
            text.append("  ✓ its SHA-256 is the commitment published at the start",
                        style="#4fb86b")
        elif verified is False:
            text.append("  ✗ its SHA-256 is NOT the commitment published at the start",
                        style="bold #ff6b6b")
        text.append(f"\nCommitment {commitment}\n", style="dim")
        text.append("\nReplay: ", style="bold")
        text.append(f"gaps replay {code}", style="bold")
        text.append(f"   (or {http_base(self.server)}/matches/{code}/replay)\n", style="dim")
        text.append("Check every score: ", style="bold")
        text.append(f"gaps verify gaps-replay-{code}.json\n")
        text.append("Par: the best score this deal allowed, solved after the match "
                    "(≥: the solver ran out of budget).\n", style="dim")
        if state.role == "player":
            for same_seed, key in ((False, "n"), (True, "d")):
                offer = state.rematches.get(same_seed)
                if offer is None:
                    continue
                what = "the same deal, unrated" if same_seed else "a new deal"
                by = "You" if offer.get("by_id") == state.you_id else offer.get("by")
                text.append(printable(f"{by} offered a rematch ({what}): match "
                                      f"{offer.get('code')}."), style="bold #4fb86b")
                text.append(f" {key} takes your seat in it.\n", style="bold")
        if state.kind == "tournament":  # the tournament deals the next round itself
            text.append("\nq quit · b the board (b there brings this back)", style="dim")
        else:
            text.append("\nq quit · b the board (b there brings this back) · n rematch (a "
                        "new deal) · d the same deal again (unrated)", style="dim")
        return text

    def refresh_reveal(self) -> None:
        """Draw the seed and the rematches offered again (one came)."""
        with contextlib.suppress(NoMatches):
            self.query_one("#reveal", Static).update(self._reveal())

    def action_back(self) -> None:
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "rematch":
            # The same deal only once its seed is out (a daily's is not, until its day
            # ends); none in a tournament, whose next round comes by itself.
            return (self.state.role == "player" and self.state.kind != "tournament"
                    and (parameters != (True,) or self.state.seed is not None))
        return True

    def action_rematch(self, same_deal: bool) -> None:
        """Close the screen asking for a rematch: ``gaps`` takes a seat in the one offered,
        or creates it (the others are told), and prints its code."""
        app = self.app
        if isinstance(app, MatchApp):
            app.rematch = Rematch.SAME_DEAL if same_deal else Rematch.NEW_DEAL
        app.exit(0)


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
        Binding("q", "close", "quit"),
        Binding("question_mark", "help", "help"),
        Binding("colon,slash", "type", "type", key_display=":"),
        Binding("ctrl+q,ctrl+c", "quit", "quit", key_display="^q"),
    ]

    def __init__(
        self, connection: Connection, snapshot: Mapping[str, Any], *, heading: str | None = None,
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
        summary = snapshot["match"]
        you_id = connection.player.get("id") if connection.player else None
        self.connection = connection
        self.state = MatchState(str(summary["code"]), you_id=you_id)
        if self.state.code not in connection.tracks:
            self.state.apply(snapshot)
        self.connection_note: tuple[str, bool] | None = None
        self._ranking_shown = False
        self._binding_keys: tuple[object, ...] = ()
        self._heights = (-1, -1)
        self._refresh_pending = False
        self._said: Text | None = None
        #: Whether the ranking of a match that ended unseen is being fetched.
        self._fetching = False
        #: What the player asked for on the ranking screen, if anything.
        self.rematch: Rematch | None = None
        #: The rematches offered that the screen has shown: (same seed?, code).
        self._offers_seen: tuple[tuple[bool, str], ...] = ()
        connection.add_listener(self._on_server, replay=self.state.code)

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Container(id="main"):
            with Vertical(id="left"):
                yield BoardView(id="board")
                yield Static(id="stats")
            with Vertical(id="right"):
                yield Static(id="players")
                yield Static(id="log")
        yield MessageLine(id="message")
        yield from command_line()
        yield Footer()

    def on_mount(self) -> None:
        self._layout(self.size.width)
        self.fit(self.size.width, self.size.height)
        self.query_one(BoardView).focus()
        if self.state.role != "player":
            self.query_one(MessageLine).say("Watching: you see every player's progress live.")
        self.set_interval(0.25, self._tick)
        self.refresh_view()
        if self.state.phase is Phase.FINISHED and self.state.ranking is None:
            self._fetching = True
            self.run_worker(self._fetch_ranking(), exit_on_error=False)

    def on_unmount(self) -> None:
        self.connection.remove_listener(self._on_server)

    async def _fetch_ranking(self) -> None:
        """A match that ended before we came: its ranking is in its last event."""
        reply = await self.connection.request(
            "resync", code=self.state.code, since=max(0, self.state.last_seq - 1), retry=True)
        for event in reply.get("events", []):
            if event.get("event") == "match_ended":
                self.state.apply(event)
        self.schedule_refresh()

    def on_resize(self, event: events.Resize) -> None:
        # The event's size: ``self.size`` is not updated yet while it is handled.
        self._layout(event.size.width)
        super().on_resize(event)

    def _layout(self, columns: int) -> None:
        main = self.query_one("#main")
        wide = columns >= WIDE_COLUMNS
        main.set_class(wide, "wide")
        main.set_class(not wide, "narrow")
        main.set_class(self.state.role != "player", "spectator")

    # -- what the server says -------------------------------------------------------------

    def _on_server(self, message: dict[str, Any]) -> None:
        if message.get("type") == "connection":
            if message.get("state") != "gone" or message.get("match") == self.state.code:
                self.connection_note = (str(message.get("detail")),
                                        message.get("state") != "restored")
                self.state.apply(message)
        else:
            match = message.get("match")
            code = match.get("code") if isinstance(match, Mapping) else match
            if code != self.state.code:
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
            with contextlib.suppress(NoMatches):
                self.query_one(MessageLine).say(text, error=error)
        offers = tuple(sorted((same, str(o.get("code"))) for same, o in state.rematches.items()))
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
            screen.refresh_reveal()
        state = self.state
        for same_seed, offer in state.rematches.items():
            if offer.get("by_id") == state.you_id or state.role != "player":
                continue
            key, what = ("d", "the same deal") if same_seed else ("n", "a new deal")
            self.notify(printable(f"{offer.get('by')} offers a rematch ({what}): {key} on the "
                                  f"ranking takes your seat in match {offer.get('code')}"),
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
            if self._said is not None:
                self.query_one(MessageLine).say(self._said)
                self._said = None
            self.refresh_view()

    def refresh_view(self) -> None:
        state = self.state
        board = self.query_one(BoardView)
        own = state.own
        board.waiting = self._waiting_text()
        board.typing = self.can_type()
        board.show(own.game() if own is not None else None)
        self.show_mode()
        # Widgets of a fixed height skip the (costly) layout pass; the others need it only
        # when their height changes.
        self.query_one("#stats", Static).update(self._stats(), layout=False)
        self.query_one("#players", Static).update(players_table(
            state.players.values(), you_id=state.you_id, host_id=state.summary.get("host_id"),
            started=state.phase not in (Phase.LOBBY, Phase.COUNTDOWN),
        ), layout=len(state.players) != self._heights[0])
        log = state.log[-4:]
        self.query_one("#log", Static).update(Text("\n".join(printable(line) for line in log)),
                                              layout=len(log) != self._heights[1])
        self._heights = (len(state.players), len(log))
        self._tick()
        keys = (state.phase, state.playing, state.is_host, own is not None and own.can_undo,
                state.ranking is not None)
        if keys != self._binding_keys:  # the footer is costly to redraw: only on a change
            self._binding_keys = keys
            self.refresh_bindings()
        if state.phase is Phase.FINISHED and state.ranking is not None and not self._ranking_shown:
            self._ranking_shown = True
            self.push_screen(RankingScreen(state, self.connection.url,
                                           connection=self.connection))

    def _waiting_text(self) -> str:
        state = self.state
        if state.phase is Phase.LOBBY and state.kind != "race":
            return "Seated: the match starts by itself in a moment…"
        if state.phase is Phase.LOBBY:
            code = printable(state.code)
            summary = state.summary
            lines = [f"In the lobby of match {code}: others join with  gaps join {code}",
                     printable(f"Seats {len(state.players)}/{summary.get('max_players', '?')}"
                               f" · clock {format_duration(state.time_limit_s)}"
                               f" · {state.ruleset.name} · win by {summary.get('win_by', 'time')}")]
            if state.role == "player":
                ready = bool(state.me and state.me.get("ready"))
                lines.append("You are ready: waiting for the others." if ready
                             else "Press r when you are ready.")
                if state.is_host:
                    lines.append("You are the host: g starts the match with whoever is there.")
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
        state = self.state
        own = state.own
        if own is None:
            return Text("")
        text = Text()
        text.append(f"Score {own.score}", style="bold")
        text.append(f" · placed {own.placed}/48 · redeals left {own.redeals_left}"
                    f" · moves {own.moves_made}")
        me = state.me or {}
        reason = own.end_reason or me.get("end_reason")
        # How the game ended goes on a line of its own: on the board's width it never wraps.
        text.append("\n")
        if reason:
            text.append(printable(f"Finished: {reason} at {format_ms(me.get('finish_ms'))}"),
                        style="bold #4fb86b" if reason == "won" else "bold #e0c040")
            if state.phase is not Phase.FINISHED:
                text.append(" · waiting for the others…", style="dim")
        else:
            status_style = "bold #e0c040" if own.status == "blocked" else ""
            text.append(printable(own.status.capitalize()), style=status_style)
            if own.status == "blocked":
                hint = "r redeals (-5), s stops" if own.redeals_left else "s stops"
                text.append(f": {hint}", style="#e0c040")
        return text

    def _tick(self) -> None:
        with contextlib.suppress(NoMatches):  # the app is closing: nothing to draw on
            self._draw_title()

    def _draw_title(self) -> None:
        state = self.state
        title = Text()
        title.append(f"Gaps Arena {printable(state.code)}", style="bold")
        # The clock first: on a narrow terminal the end of the line is cut off.
        if state.phase is Phase.RUNNING or state.phase is Phase.FINISHED:
            now = state.clock.now_ms()
            left = state.remaining_ms()
            title.append(f"  clock {format_duration(now / 1000)}", style="bold")
            title.append(f" · {format_duration(left / 1000)} left",
                         style="bold #ff6b6b" if left < 60_000 else "")
        elif state.phase is Phase.COUNTDOWN:
            seconds = max(0.0, (state.countdown_ends or 0) - time.monotonic())
            title.append(f"  starting in {seconds:.0f} s", style="bold #e0c040")
            self.query_one(BoardView).waiting = self._waiting_text()
            self.query_one(BoardView).refresh()
        heading = self.heading or KIND_HEADINGS.get(state.kind)
        if heading:
            title.append(f"  {printable(heading)}", style="bold #e0c040")
        if self.next_round_at is not None:
            seconds = (self.next_round_at - self.wall()).total_seconds()
            title.append(f"  next round {starts_in(seconds)}", style="bold #e0c040")
        title.append(printable(f"  ·  {state.ruleset.name} · win by "
                               f"{state.summary.get('win_by', 'time')}"
                               f"{'' if state.summary.get('rated', True) else ' · unrated'}"),
                     style="dim")
        if state.role != "player":
            title.append(f" · watching ({state.spectators} spectating)", style="#8fd3ff")
        self.query_one("#title", Static).update(title, layout=False)

    # -- keys ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        state = self.state
        if action == "ready":  # other kinds of match start by themselves
            return state.role == "player" and state.phase is Phase.LOBBY and state.kind == "race"
        if action == "start":
            return state.phase is Phase.LOBBY and state.is_host and state.kind == "race"
        if action in ("redeal", "undo", "stop", "marks"):
            if not state.playing:
                return False
            if action == "undo":
                return state.own is not None and state.own.can_undo
        if action == "ranking":
            return state.ranking is not None
        if action == "close":  # ``q`` is a Queen while the player plays; ctrl+q always quits
            return not state.playing
        return True

    def can_type(self) -> bool:
        return self.state.playing

    def leave_warning(self) -> str | None:
        state = self.state
        if state.role != "player":
            return None
        if state.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            return "Quitting gives up your seat in this match"
        if state.playing:
            return ("Quitting leaves your seat: your game ends if you stay away past the "
                    "grace period")
        if state.phase is Phase.RUNNING:
            return "Your game is over; the others still play, and the ranking comes after"
        return None

    async def action_close(self) -> None:
        await self.action_quit()

    def action_ranking(self) -> None:
        if self.state.ranking is not None:
            self.push_screen(RankingScreen(self.state, self.connection.url,
                                           connection=self.connection))

    async def action_ready(self) -> None:
        state = self.state
        ready = not bool(state.me and state.me.get("ready"))
        if ready and self._starts_short(state) and not self.confirmed(
                "ready", f"Everyone else is ready: the match starts now with "
                f"{len(state.players)} of {state.summary.get('max_players')} seats taken. "
                "Press r again to start, or wait for the others."):
            return
        try:
            await self.connection.ready(state.code, ready)
        except ClientError as error:
            self.query_one(MessageLine).say(error_words(error), error=True)

    @staticmethod
    def _starts_short(state: MatchState) -> bool:
        """Whether this player's ready would start the match with seats still empty."""
        others_ready = all(player.get("ready") for pid, player in state.players.items()
                           if pid != state.you_id)
        seats = state.summary.get("max_players")
        return others_ready and isinstance(seats, int) and len(state.players) < seats

    def action_redeal(self) -> None:
        own = self.state.own
        # A redeal the rules refuse costs nothing: the server says why at once.
        if own is None or not own.game().can_redeal() or self.confirmed(
                "redeal", f"Redeal ({own.redeals_left} left, -5 points)? Press r again to "
                          "confirm."):
            self.submit("redeal")

    async def action_start(self) -> None:
        try:
            await self.connection.start_match(self.state.code)
        except ClientError as error:
            self.query_one(MessageLine).say(error_words(error), error=True)

    def action_undo(self) -> None:
        self.submit("undo")

    def action_stop(self) -> None:
        if self.confirmed(
                "stop", "Stop now? Your game ends and the score stands: press s again to confirm."):
            self.submit("stop")

    # -- moves -----------------------------------------------------------------------------

    def submit(self, text: str) -> None:
        """Check what the player typed or picked, and send it to the server."""
        words = text.strip().lower()
        line = self.query_one(MessageLine)
        if words in ("?", "help"):
            self.action_help()
            return
        if words in ("quit", "exit"):
            self.exit(0)
            return
        try:
            action = parse_action(text)
        except NotationError as error:
            line.say(typed_error(text, error), error=True)
            return
        state = self.state
        if state.role != "player":
            line.say("Spectators watch: only players act.", error=True)
            return
        if state.phase in (Phase.LOBBY, Phase.COUNTDOWN):
            line.say("The match has not started yet.", error=True)
            return
        if not state.playing:
            line.say("Your game in this match is over.", error=True)
            return
        self.run_worker(self._send(str(action)), group="actions")

    async def _send(self, action: str) -> None:
        line = self.query_one(MessageLine)
        try:
            reply = await self.connection.act(self.state.code, action)
        except ServerRefused as refusal:
            self._said = None  # an older move's news must not cover this
            line.say(f"{board_words(refusal.message)} [{refusal.reason or refusal.code}]",
                     error=True)
            return
        except ClientError as error:
            self._said = None
            line.say(error_words(error), error=True)
            return
        self.state.apply_ack(reply)
        self._said = result_line(reply)  # shown with the next redraw, with the board
        self.schedule_refresh()
