"""Following a tournament as one of its entrants: a match screen for each round.

The entrant's connection gets the tournament's events (docs/protocol.md, Tournaments).
When ``round_starting`` comes, the follower takes the seat the server keeps for them in
that round's match (``join_match``) and opens the match screen on it; between rounds it
prints the round's ranking and the standings in the terminal, and at the end the final
standings and the podium. A screen still open on a finished round closes by itself when
the next round starts.

After a server restart the connection rejoins the round's match and the screen goes on.
A round's match the server no longer has (its rejoin is refused) is reported, its screen
closes, and the follower waits for the next round.

The host's announcements are printed as they come (and notified on an open round's
screen); those made before one follows are printed first, from the view. A pause, a
resume, a reinstated entrant and a late one are said too.

Each round's seed, revealed when the round ends, is checked against the commitment the
server published before anyone entered (client_cli/deals.py), and all of them at the
end: a seed that does not match is said loudly, and ``follow`` ends with exit code 1.

The connection hands over the tournament's events once each and in order, fetching
those it missed (``tournament_resync``, after a gap or a reconnect) so that they are
followed as if they had come live; when the server no longer has them, its snapshot (the
view and the standings) tells where the tournament is.

What the server says (names, codes, the tournament's name) is printed and notified as
``printable`` text, never as markup: a name like ``[link=...]`` or ``ESC[2J`` shows as
typed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.text import Text
from textual.app import App

from client_cli.connection import (
    ClientError,
    Connection,
    Listened,
    ServerRefused,
    expect,
    plain,
)
from client_cli.deals import alarm, deals_report, revealed_line
from client_cli.duration import starts_in
from client_cli.interrupt import check_interrupted, handled
from client_cli.match_state import Phase
from client_cli.render import bot_mark, printable, printable_text
from client_cli.screen import MatchApp
from client_cli.tables import (
    entered_line,
    entrant_count,
    local_time,
    podium_text,
    ranking_table,
    standings_line,
    standings_table,
    tournament_end,
    tournament_summary,
)
from gaps_protocol.messages.replies import Standings, Tournament, TournamentEvents
from gaps_protocol.messages.requests import GetStandings, ResyncTournament
from gaps_protocol.times import BadTime, format_time, parse_time

Message = dict[str, Any]
Frontend = Callable[[App[Any]], Awaitable[Any]]

#: Refusals of ``join_match`` that mean the round is over (or gone) already.
ROUND_GONE = frozenset({"match_finished", "no_such_match"})


#: How often the wait between rounds redraws its countdown.
COUNTDOWN_TICK_S = 1.0

Wall = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def next_round_time(event: Mapping[str, Any]) -> datetime | None:
    """When the round after a ``round_ended`` starts (None after the last round, or from
    a server that does not say)."""
    try:
        return parse_time(str(event["next_round_at"]))
    except (KeyError, BadTime):
        return None


class Interrupted(Exception):
    """The entrant quit a round in the middle of their game: stop following."""


class TournamentFollower:
    """Follow tournament ``view`` on ``connection`` (already entered) until it ends."""

    def __init__(
        self, connection: Connection, view: Mapping[str, Any], *, frontend: Frontend,
        out: Console, now: Wall = utc_now, tick_s: float = COUNTDOWN_TICK_S,
    ) -> None:
        """``now`` is the wall clock the countdown to the next round reads, redrawn every
        ``tick_s``."""
        self.connection = connection
        self.now = now
        self.tick_s = tick_s
        #: When the next round starts, from the last ``round_ended`` (None: not known).
        self.next_round_at: datetime | None = None
        self.view: dict[str, Any] = dict(view)
        self.code = str(view["code"])
        self.frontend = frontend
        self.out = out
        self.you_id = connection.player.get("id") if connection.player else None
        self.you_name = str(connection.player.get("name") or "") if connection.player else ""
        self.app: MatchApp | None = None
        self.played: set[str] = set()
        #: The ``join_match`` of each round, sent as soon as the round is announced: the
        #: seat must be taken within the server's grace period, even while the screen of
        #: the round before is still closing.
        self.joins: dict[str, asyncio.Task[Message]] = {}
        self.queue: asyncio.Queue[Message] = asyncio.Queue()
        self.final: Message | None = None
        #: The last round whose standings were printed.
        self.standings_shown = 0
        #: Round matches the server no longer has (a rejoin refused), with why.
        self.gone: dict[str, str] = {}
        #: What did not match the commitment to the deals, said as it came.
        self.mismatches: list[str] = []
        #: The host's announcements printed, by (at, text).
        self.announced: set[tuple[Any, Any]] = set()

    # -- what the server says ----------------------------------------------------------

    def _on_message(self, typed: Listened) -> None:
        message = plain(typed)
        kind = message.get("type")
        if kind == "tournament_event" and message.get("tournament") == self.code:
            if message.get("event") == "round_starting":
                self.next_round_at = None
                if self._online(message.get("match"), message.get("tables")):
                    self._join_soon(str(message.get("match")))
            elif message.get("event") == "round_ended":
                self.next_round_at = next_round_time(message)
            elif message.get("event") == "tournament_paused":
                self.next_round_at = None
            elif message.get("event") == "tournament_resumed":
                self.next_round_at = next_round_time(message)
            self._tell_screen(message)
            self.queue.put_nowait(message)
        elif kind == "tournament" and message.get("tournament", {}).get("code") == self.code:
            self.queue.put_nowait(message)  # a resync's snapshot: events were lost
        elif kind == "connection" and message.get("state") == "gone" and message.get("match"):
            code = str(message["match"])
            self.gone[code] = str(message.get("detail"))
            if self.app is not None and self.app.state.code == code:
                self.app.exit()  # (its own screen says so too)
        elif kind == "connection" and (message.get("state") == "failed" or (
                message.get("state") == "gone" and message.get("tournament") == self.code)):
            self.queue.put_nowait(message)

    def _tell_screen(self, event: Message) -> None:
        """News for the screen open on a round (if any)."""
        app = self.app
        if app is None:
            return
        name = event.get("event")
        rounds = self.view.get("rounds")
        if name == "round_starting" and event.get("match") != app.state.code:
            app.exit()  # a finished round's screen gives way to the next round's
        elif name == "round_ended":
            app.next_round_at = self.next_round_at  # the title counts down to it
            then = ""
            if self.next_round_at is not None:
                then = f"\nRound {int(event.get('round') or 0) + 1}/{rounds} starts at " \
                       f"{local_time(format_time(self.next_round_at))}"
            app.notify(f"Standings: {standings_line(event.get('standings', []))}{then}",
                       title=printable(f"Round {event.get('round')}/{rounds} is over"),
                       timeout=30, markup=False)
        elif name == "tournament_announcement":
            app.notify(printable(str(event.get("text"))), title="The host says",
                       timeout=30, markup=False)
        elif name == "tournament_paused":
            app.notify("The next round waits for the host to resume the tournament",
                       title="Paused", timeout=30, markup=False)
        elif name == "tournament_ended":
            app.notify(f"{standings_line(event.get('podium', []), limit=3)}\n"
                       "ctrl+q shows the final standings", title="The tournament is over",
                       timeout=60, markup=False)

    def _join_soon(self, code: str) -> asyncio.Task[Message]:
        task = self.joins.get(code)
        if task is None:
            task = self.joins[code] = asyncio.create_task(self.connection.join_match(code))
        return task

    # -- following -----------------------------------------------------------------------

    async def run(self) -> Message:
        """Play every round; returns the ``tournament_ended`` event (or, for a tournament
        that had ended already, a standings reply). Raises ``Interrupted`` when the
        entrant quits a round in the middle of their game."""
        # The events that came right behind the join's reply, before this listener: first.
        self.connection.add_listener(self._on_message, replay_tournament=self.code)
        try:
            await self._catch_up(self.view)
            while self.final is None:
                await self._handle(await self._next())
            return self.final
        finally:
            self.connection.remove_listener(self._on_message)
            for task in self.joins.values():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def _next(self) -> Message:
        check_interrupted()
        if not self.queue.empty():
            return self.queue.get_nowait()
        with self.out.status(self.waiting_for(), spinner="dots") as status:
            while True:  # the line is redrawn each tick: it counts down to the next round
                try:
                    return await asyncio.wait_for(self.queue.get(), self.tick_s)
                except TimeoutError:
                    status.update(self.waiting_for())

    def waiting_for(self) -> Text:
        """What the follower waits for, as the status line says it now."""
        view = self.view
        if view.get("status") == "open":
            start_at = view.get("start_at")
            if start_at and parse_time(start_at) <= self.now():
                return Text("The start time has passed: it starts with its first entrant "
                            "(Ctrl-C stops following)…")
            if start_at:
                return printable_text(f"Waiting for the start at {local_time(start_at)} "
                                      "(Ctrl-C stops following)…")
            return Text("Waiting for the host to start it (Ctrl-C stops following)…")
        if view.get("paused") and not view.get("round_match"):
            return Text("Paused: the next round waits for the host to resume it "
                        "(Ctrl-C stops following)…")
        if self.next_round_at is not None:
            number = int(view.get("current_round") or 0) + 1
            seconds = (self.next_round_at - self.now()).total_seconds()
            return printable_text(f"Round {number}/{view.get('rounds')} starts "
                                  f"{starts_in(seconds)} (Ctrl-C stops following)…")
        return Text("Waiting for the next round (Ctrl-C stops following)…")

    async def _catch_up(self, view: Mapping[str, Any],
                        standings: list[Message] | None = None) -> None:
        """Where a fresh view (and the standings of a snapshot, if any) say the tournament
        is: the standings not printed yet, a round to join, or its end."""
        self.view = dict(view)
        for announcement in view.get("announcements") or []:
            self._announce(announcement)
        self._check_deals()
        if view.get("status") == "finished":
            rows = standings if standings is not None else await self._standings()
            self.final = tournament_end(rows)
            return
        if view.get("status") == "cancelled":
            self.final = {"event": "tournament_cancelled", "reason": view.get("cancel_reason")}
            return
        if standings:
            self._show_standings(standings, max(int(r.get("rounds_played") or 0)
                                                for r in standings))
        if view.get("status") == "running" and self._online(
                view.get("round_match"), view.get("round_tables")):
            await self._play_round(int(view.get("current_round") or 0), str(view["round_match"]))

    def _online(self, match: Any, tables: Any) -> bool:
        """Whether this player plays the round online: it has a match, and they are not
        at a table in the room (docs/tables.md)."""
        at_tables = {str(name).lower() for name in tables or []}
        return bool(match) and self.you_name.lower() not in at_tables

    def _announce(self, announcement: Mapping[str, Any]) -> None:
        """Print one of the host's announcements (once)."""
        key = (announcement.get("at"), announcement.get("text"))
        if key in self.announced:
            return
        self.announced.add(key)
        self.out.print(announcement_text(announcement))

    def _check_deals(self) -> None:
        """Say any revealed seed of the view that does not match the commitment (once)."""
        new = [m for m in deals_report(self.view).mismatches if m not in self.mismatches]
        if new:
            self.mismatches.extend(new)
            self.out.print(alarm(new))

    def _revealed(self, number: int, seed: Any) -> None:
        """Round ``number``'s seed, revealed by its ``round_ended``: said, and checked."""
        if not isinstance(seed, str):
            return
        seeds = self.view.get("seeds")
        if isinstance(seeds, list) and 1 <= number <= len(seeds):
            seeds[number - 1] = seed
        line, mismatch = revealed_line(self.view, number, seed)
        self.out.print(line)
        if mismatch is not None and mismatch not in self.mismatches:
            self.mismatches.append(mismatch)
            self.out.print(alarm([mismatch]))

    async def _standings(self) -> list[Message]:
        reply = expect(await self.connection.request(GetStandings(code=self.code), retry=True),
                       Standings, "tournament_standings")
        return [plain(row) for row in reply.standings]

    def _show_standings(self, rows: list[Message], number: int) -> None:
        """The standings after round ``number``, unless printed already (or none played)."""
        if number <= self.standings_shown:
            return
        self.standings_shown = number
        title = f"Standings after round {number}/{self.view.get('rounds')}"
        self.out.print(standings_table(rows, you=self.you_id, title=title))

    async def _handle(self, message: Message) -> None:
        kind = message.get("type")
        if kind == "connection":
            raise ClientError(str(message.get("detail")))
        if kind == "tournament":
            await self._catch_up(message["tournament"], message.get("standings"))
            return
        name = message.get("event")
        out = self.out
        if name == "entrant_joined":
            count = entrant_count(self.view)
            entrants = self.view.setdefault("entrants", [])
            entrants.append({"player_id": message.get("player_id"), "name": message.get("name"),
                             "bot": message.get("bot") is True})
            self.view["entrant_count"] = count + 1
            late = f", late: plays from round {message.get('from_round')}" \
                if message.get("late") else ""
            out.print(Text.assemble("  + ", (printable(message.get("name")), "bold"), printable(
                f"{bot_mark(message)} entered "
                f"({entrant_count(self.view)}/{self.view.get('max_players')}{late})"
            )))
        elif name == "entrant_reinstated":
            for entrant in self.view.get("entrants", []):
                if entrant.get("player_id") == message.get("player_id"):
                    entrant.update(removed=False, removed_reason=None)
            self.view["entrant_count"] = entrant_count(self.view) + 1
            out.print(Text.assemble("  + ", (printable(message.get("name")), "bold"), printable(
                f" is back (the host reinstated them): plays from round "
                f"{message.get('from_round')}")))
        elif name == "tournament_announcement":
            self._announce(message)
        elif name == "tournament_paused":
            self.view["paused"] = True
            when = "once this round ends" if message.get("round_in_play") else "now"
            out.print(Text(f"The host paused the tournament {when}: the next round waits "
                           "for them to resume it.", style="bold #e0c040"))
        elif name == "tournament_resumed":
            self.view["paused"] = False
            out.print(Text("The host resumed the tournament.", style="bold #4fb86b"))
        elif name == "entrant_removed":
            count = entrant_count(self.view)
            for entrant in self.view.get("entrants", []):
                if entrant.get("player_id") == message.get("player_id"):
                    entrant.update(removed=True, removed_reason=message.get("reason"))
            self.view["entrant_count"] = max(0, count - 1)
            out.print(Text.assemble("  − ", (printable(message.get("name")), "bold"), printable(
                f" was removed by the host: {message.get('reason')}"
            ), style="#ff6b6b"))
        elif name == "tournament_started":
            self.view["status"] = "running"
            names = ", ".join(f"{e.get('name')}{bot_mark(e)}"
                              for e in message.get("entrants", []))
            out.print(Text.assemble(("Tournament started", "bold #4fb86b"), printable(
                f": {message.get('rounds')} round(s), entrants {names}.")))
        elif name == "round_starting":
            self.view.update(current_round=message.get("round"), round_match=message.get("match"))
            if self._online(message.get("match"), message.get("tables")):
                await self._play_round(int(message.get("round") or 0), str(message.get("match")))
            else:
                out.print(printable_text(
                    f"Round {message.get('round')}/{self.view.get('rounds')} is starting: "
                    "you play it at a table in the room; the host or an arbiter enters your "
                    "result.", "bold"))
        elif name == "entrant_table":
            where = "at a table in the room" if message.get("at_table") else "online"
            out.print(printable_text(f"  {message.get('name')} plays {where} from round "
                                     f"{message.get('from_round')}."))
        elif name == "arbiter_named":
            out.print(printable_text(f"  {message.get('name')} is an arbiter of the tournament."))
        elif name == "result_entered":
            replaced = " (replacing the one entered before)" if message.get("replaced") else ""
            out.print(Text.assemble(entered_line(message), printable(replaced)))
            if message.get("standings"):
                number = int(message.get("round") or 0)
                self.out.print(standings_table(
                    list(message["standings"]), you=self.you_id,
                    title=f"Standings with the result entered for round {number}"))
        elif name == "round_ended":
            self.view["round_match"] = None
            self._show_standings(list(message.get("standings", [])),
                                 int(message.get("round") or 0))
            self._revealed(int(message.get("round") or 0), message.get("seed"))
        elif name == "deals_committed":
            self.view.update(deals_ready=True, commitment=message.get("commitment"),
                             round_commitments=message.get("round_commitments"),
                             seeds=message.get("seeds"))
            out.print(deals_report(self.view).line)
        elif name == "tournament_ended":
            self.view["status"] = "finished"
            if isinstance(message.get("seeds"), list):  # the whole list, revealed
                self.view["seeds"] = message["seeds"]
            self._check_deals()
            self.final = message
        elif name == "tournament_cancelled":
            self.view.update(status="cancelled", cancel_reason=message.get("reason"))
            self.final = message

    async def _play_round(self, number: int, code: str) -> None:
        if code in self.played:
            return
        self.played.add(code)
        rounds = self.view.get("rounds")
        self.out.print(printable_text(f"Round {number}/{rounds} (match {code}) is starting.",
                                      "bold"))
        try:
            snapshot = await self._join_soon(code)
        except ServerRefused as refusal:
            if refusal.code not in ROUND_GONE:
                raise
            self.out.print(printable_text(f"Round {number} is over already: {refusal}"))
            return
        if code in self.gone:  # lost in a restart before its screen opened
            self._round_gone(number, code, self.gone[code])
            return
        app = MatchApp(self.connection, snapshot,
                       heading=f"{self.view.get('name')} · round {number}/{rounds}",
                       wall=self.now)
        self.app = app
        try:
            await self.frontend(app)
        finally:
            self.app = None
        state = app.state
        if state.phase is not Phase.FINISHED and self.connection.failure is not None:
            raise ClientError(self.connection.failure)
        if state.phase is not Phase.FINISHED and (code in self.gone or state.gone is not None):
            self._round_gone(number, code, self.gone.get(code) or str(state.gone))
        elif state.phase is Phase.FINISHED and state.ranking is not None:
            self.connection.forget(code)
            self.out.print(ranking_table(state.ranking, state.you_id,
                                         title=f"Round {number}/{rounds} (match {code})",
                                         par=state.par))
        elif state.phase is not Phase.FINISHED and (
                state.playing or state.phase in (Phase.LOBBY, Phase.COUNTDOWN)):
            raise Interrupted(f"left round {number} of tournament {self.code} during your "
                              "game: it ends after the server's grace period. "
                              f"`gaps tournament join {self.code}` follows the tournament again")
        else:
            self.out.print(Text(f"Your game of round {number} is over; the others are still "
                                "playing."))

    def _round_gone(self, number: int, code: str, why: str) -> None:
        self.connection.forget(code)
        self.out.print(printable_text(
            f"Round {number}'s match {code} is gone ({why}); waiting for the next round.",
            "bold #e0c040"))


def announcement_text(announcement: Mapping[str, Any]) -> Text:
    """``The host says (2026-11-29 19:05:00 (CET)): Coffee first``, the text as typed
    (never markup)."""
    at = announcement.get("at")
    when = f" ({local_time(at)})" if at else ""
    return Text.assemble(("The host says", "bold #e0c040"),
                         printable(f"{when}: {announcement.get('text')}"))


def print_final(out: Console, final: Mapping[str, Any], view: Mapping[str, Any],
                you: str | int | None) -> None:
    if final.get("event") == "tournament_cancelled":
        out.print(printable_text(f"Tournament {view.get('name')} ({view.get('code')}) is "
                                 f"cancelled: {final.get('reason') or 'by the host'}.", "bold"))
        return
    out.print(standings_table(final.get("standings", []), you=you,
                              title=f"{view.get('name')} ({view.get('code')}): final standings"))
    podium = list(final.get("podium", []))
    if podium:
        out.print(podium_text(podium, you=you))


def intro(view: Mapping[str, Any]) -> Text:
    """``Tournament Cup (Q4M2ZK): classic, 3 rounds of 10:00, 2/16 entrants.``"""
    return Text.assemble("Tournament ", (printable(view.get("name")), "bold"), " (",
                         (printable(view.get("code")), "bold"), f"): {tournament_summary(view)}.")


async def follow(
    connection: Connection, view: Mapping[str, Any], *, frontend: Frontend, out: Console,
) -> int:
    """Follow until the end and print the final standings; Ctrl-C (a cancel) stops
    following quietly. Returns the exit code."""
    you = connection.player.get("id") if connection.player else None
    follower = TournamentFollower(connection, view, frontend=frontend, out=out)
    try:
        final = await follower.run()
    except asyncio.CancelledError:  # Ctrl-C
        handled()
        out.print(printable_text(f"Stopped following tournament {follower.code}; `gaps "
                                 f"tournament join {follower.code}` follows it again."))
        return 0
    except Interrupted as quit_:
        out.print(printable_text(f"You {quit_}."))
        return 1 if follower.mismatches else 0
    print_final(out, final, follower.view, you)
    out.print(deals_report(follower.view).line)
    if follower.mismatches:
        out.print(alarm(follower.mismatches))
        return 1
    return 0


async def deals_committed(connection: Connection, code: str) -> Message:
    """Wait until the winnable deals of tournament ``code`` (created on ``connection``)
    are committed: their ``deals_committed`` event (its ``commitment``,
    ``round_commitments`` and ``seeds``). Raises ``ClientError`` if the tournament is
    cancelled instead (no deal could be proven) or the connection fails."""
    done: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

    def listen(typed: Listened) -> None:
        if done.done():
            return
        message = plain(typed)
        kind, event = message.get("type"), message.get("event")
        if kind == "tournament_event" and message.get("tournament") == code:
            if event == "deals_committed":
                done.set_result(message)
            elif event == "tournament_cancelled":
                done.set_exception(ClientError(f"tournament {code} was cancelled: "
                                               f"{message.get('reason')}"))
        elif kind == "tournament" and message.get("tournament", {}).get("code") == code:
            view = message["tournament"]  # a snapshot
            if view.get("deals_ready"):
                done.set_result(view)
        elif kind == "connection" and message.get("state") == "failed":
            done.set_exception(ClientError(str(message.get("detail"))))

    connection.add_listener(listen, replay_tournament=code)
    try:
        # The events so far too: the deals may have been committed before the connection
        # followed the tournament.
        caught_up = await connection.request(ResyncTournament(code=code, since=0))
        # Its events, or the snapshot that stands for them.
        events: list[Listened] = (
            list(caught_up.events) if isinstance(caught_up, TournamentEvents)
            else [expect(caught_up, Tournament, "tournament_resync")])
        for message in events:
            listen(message)
        return await done
    finally:
        connection.remove_listener(listen)


async def close_quietly(connection: Connection) -> None:
    with contextlib.suppress(Exception):
        await connection.close()
