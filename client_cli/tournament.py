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
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeAlias

from msgspec.structs import replace
from rich.console import Console
from rich.text import Text
from textual.app import App

from client_cli.connection import (
    ClientError,
    Connection,
    ConnectionNotice,
    Listened,
    ServerRefused,
    expect,
)
from client_cli.deals import alarm, deals_report, revealed_line
from client_cli.duration import starts_in
from client_cli.interrupt import check_interrupted, handled
from client_cli.match_state import Phase
from client_cli.render import bot_mark, printable, printable_text
from client_cli.screen import MatchApp
from client_cli.tables import (
    Outcome,
    entered_line,
    local_time,
    podium_text,
    ranking_table,
    standings_line,
    standings_table,
    tournament_end,
    tournament_summary,
)
from gaps_protocol.messages import TournamentEvent
from gaps_protocol.messages.events import (
    ArbiterNamed,
    DealsCommitted,
    EntrantJoined,
    EntrantReinstated,
    EntrantRemoved,
    EntrantTable,
    ResultEntered,
    RoundEnded,
    RoundStarting,
    TournamentAnnouncement,
    TournamentCancelled,
    TournamentEnded,
    TournamentPaused,
    TournamentResumed,
    TournamentStarted,
)
from gaps_protocol.messages.replies import Joined, Standings, Tournament, TournamentEvents
from gaps_protocol.messages.requests import GetStandings, ResyncTournament
from gaps_protocol.messages.views import Announcement, Entrant, StandingsRow, TournamentView
from gaps_protocol.times import BadTime, format_time, parse_time

Frontend = Callable[[App[Any]], Awaitable[Any]]
#: What the follower handles, in order: the tournament's events, a resync's snapshot
#: (the events it stands for were lost), and the connection failing (or the tournament
#: gone from it).
News: TypeAlias = TournamentEvent | Tournament | ConnectionNotice

#: Refusals of ``join_match`` that mean the round is over (or gone) already.
ROUND_GONE = frozenset({"match_finished", "no_such_match"})


#: How often the wait between rounds redraws its countdown.
COUNTDOWN_TICK_S = 1.0

Wall = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def next_round_time(next_round_at: str | None) -> datetime | None:
    """When the round after a ``round_ended`` starts, from its ``next_round_at`` (None
    after the last round, while paused, or from a time that is not one)."""
    if next_round_at is None:
        return None
    try:
        return parse_time(next_round_at)
    except BadTime:
        return None


class Interrupted(Exception):
    """The entrant quit a round in the middle of their game: stop following."""


class TournamentFollower:
    """Follow tournament ``view`` on ``connection`` (already entered) until it ends."""

    def __init__(
        self, connection: Connection, view: TournamentView, *, frontend: Frontend,
        out: Console, now: Wall = utc_now, tick_s: float = COUNTDOWN_TICK_S,
    ) -> None:
        """``now`` is the wall clock the countdown to the next round reads, redrawn every
        ``tick_s``."""
        self.connection = connection
        self.now = now
        self.tick_s = tick_s
        #: When the next round starts, from the last ``round_ended`` (None: not known).
        self.next_round_at: datetime | None = None
        #: The tournament as its last view said, kept up to date by its events.
        self.view = view
        self.code = view.code
        self.frontend = frontend
        self.out = out
        player = connection.player
        self.you_id = player.id if player is not None else None
        self.you_name = player.name if player is not None else ""
        self.app: MatchApp | None = None
        self.played: set[str] = set()
        #: The ``join_match`` of each round, sent as soon as the round is announced: the
        #: seat must be taken within the server's grace period, even while the screen of
        #: the round before is still closing.
        self.joins: dict[str, asyncio.Task[Joined]] = {}
        self.queue: asyncio.Queue[News] = asyncio.Queue()
        self.final: Outcome | None = None
        #: The last round whose standings were printed.
        self.standings_shown = 0
        #: Round matches the server no longer has (a rejoin refused), with why.
        self.gone: dict[str, str] = {}
        #: What did not match the commitment to the deals, said as it came.
        self.mismatches: list[str] = []
        #: The host's announcements printed, by (at, text).
        self.announced: set[tuple[str, str]] = set()

    # -- what the server says ----------------------------------------------------------

    def _on_message(self, message: Listened) -> None:
        if isinstance(message, TournamentEvent) and message.tournament == self.code:
            if isinstance(message, RoundStarting):
                self.next_round_at = None
                if message.match is not None and self._online(message.match, message.tables):
                    self._join_soon(message.match)
            elif isinstance(message, RoundEnded | TournamentResumed):
                self.next_round_at = next_round_time(message.next_round_at)
            elif isinstance(message, TournamentPaused):
                self.next_round_at = None
            self._tell_screen(message)
            self.queue.put_nowait(message)
        elif isinstance(message, Tournament) and message.tournament.code == self.code:
            self.queue.put_nowait(message)  # a resync's snapshot: events were lost
        elif isinstance(message, ConnectionNotice) and message.state == "gone" \
                and message.match:
            code = message.match
            self.gone[code] = message.detail
            if self.app is not None and self.app.state.code == code:
                self.app.exit()  # (its own screen says so too)
        elif isinstance(message, ConnectionNotice) and (message.state == "failed" or (
                message.state == "gone" and message.tournament == self.code)):
            self.queue.put_nowait(message)

    def _tell_screen(self, event: TournamentEvent) -> None:
        """News for the screen open on a round (if any)."""
        app = self.app
        if app is None:
            return
        rounds = self.view.rounds
        if isinstance(event, RoundStarting) and event.match != app.state.code:
            app.exit()  # a finished round's screen gives way to the next round's
        elif isinstance(event, RoundEnded):
            app.next_round_at = self.next_round_at  # the title counts down to it
            then = ""
            if self.next_round_at is not None:
                then = f"\nRound {event.round + 1}/{rounds} starts at " \
                       f"{local_time(format_time(self.next_round_at))}"
            app.notify(f"Standings: {standings_line(event.standings)}{then}",
                       title=printable(f"Round {event.round}/{rounds} is over"),
                       timeout=30, markup=False)
        elif isinstance(event, TournamentAnnouncement):
            app.notify(printable(event.text), title="The host says",
                       timeout=30, markup=False)
        elif isinstance(event, TournamentPaused):
            app.notify("The next round waits for the host to resume the tournament",
                       title="Paused", timeout=30, markup=False)
        elif isinstance(event, TournamentEnded):
            app.notify(f"{standings_line(event.podium, limit=3)}\n"
                       "ctrl+q shows the final standings", title="The tournament is over",
                       timeout=60, markup=False)

    def _join_soon(self, code: str) -> asyncio.Task[Joined]:
        task = self.joins.get(code)
        if task is None:
            task = self.joins[code] = asyncio.create_task(self.connection.join_match(code))
        return task

    # -- following -----------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Play every round; returns how the tournament ended: its final standings and
        podium, or why it was cancelled. Raises ``Interrupted`` when the entrant quits a
        round in the middle of their game."""
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

    async def _next(self) -> News:
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
        if view.status == "open":
            start_at = view.start_at
            if start_at and parse_time(start_at) <= self.now():
                return Text("The start time has passed: it starts with its first entrant "
                            "(Ctrl-C stops following)…")
            if start_at:
                return printable_text(f"Waiting for the start at {local_time(start_at)} "
                                      "(Ctrl-C stops following)…")
            return Text("Waiting for the host to start it (Ctrl-C stops following)…")
        if view.paused and not view.round_match:
            return Text("Paused: the next round waits for the host to resume it "
                        "(Ctrl-C stops following)…")
        if self.next_round_at is not None:
            number = view.current_round + 1
            seconds = (self.next_round_at - self.now()).total_seconds()
            return printable_text(f"Round {number}/{view.rounds} starts "
                                  f"{starts_in(seconds)} (Ctrl-C stops following)…")
        return Text("Waiting for the next round (Ctrl-C stops following)…")

    async def _catch_up(self, view: TournamentView,
                        standings: Sequence[StandingsRow] | None = None) -> None:
        """Where a fresh view (and the standings of a snapshot, if any) say the tournament
        is: the standings not printed yet, a round to join, or its end."""
        self.view = view
        for announcement in view.announcements:
            self._announce(announcement)
        self._check_deals()
        if view.status == "finished":
            rows = standings if standings is not None else await self._standings()
            self.final = tournament_end(rows)
            return
        if view.status == "cancelled":
            self.final = Outcome(cancelled=True, reason=view.cancel_reason)
            return
        if standings:
            self._show_standings(standings, max(r.rounds_played for r in standings))
        if view.status == "running" and view.round_match is not None and self._online(
                view.round_match, view.round_tables):
            await self._play_round(view.current_round, view.round_match)

    def _online(self, match: str | None, tables: Sequence[str]) -> bool:
        """Whether this player plays the round online: it has a match, and they are not
        at a table in the room (docs/tables.md)."""
        at_tables = {name.lower() for name in tables}
        return bool(match) and self.you_name.lower() not in at_tables

    def _announce(self, announcement: Announcement | TournamentAnnouncement) -> None:
        """Print one of the host's announcements (once)."""
        key = (announcement.at, announcement.text)
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

    def _revealed(self, number: int, seed: str | None) -> None:
        """Round ``number``'s seed, revealed by its ``round_ended``: said, and checked."""
        if seed is None:
            return
        seeds = list(self.view.seeds)
        if 1 <= number <= len(seeds):
            seeds[number - 1] = seed
            self.view = replace(self.view, seeds=seeds)
        line, mismatch = revealed_line(self.view, number, seed)
        self.out.print(line)
        if mismatch is not None and mismatch not in self.mismatches:
            self.mismatches.append(mismatch)
            self.out.print(alarm([mismatch]))

    async def _standings(self) -> list[StandingsRow]:
        reply = expect(await self.connection.request(GetStandings(code=self.code), retry=True),
                       Standings, "tournament_standings")
        return list(reply.standings)

    def _show_standings(self, rows: Sequence[StandingsRow], number: int) -> None:
        """The standings after round ``number``, unless printed already (or none played)."""
        if number <= self.standings_shown:
            return
        self.standings_shown = number
        title = f"Standings after round {number}/{self.view.rounds}"
        self.out.print(standings_table(rows, you=self.you_id, title=title))

    def _entrants(self, player_id: int, **changes: Any) -> list[Entrant]:
        """The view's entrants, entrant ``player_id``'s members changed so."""
        return [replace(entrant, **changes) if entrant.player_id == player_id else entrant
                for entrant in self.view.entrants]

    async def _handle(self, message: News) -> None:
        if isinstance(message, ConnectionNotice):
            raise ClientError(message.detail)
        if isinstance(message, Tournament):
            standings = message.standings
            await self._catch_up(message.tournament,
                                 standings if isinstance(standings, list) else None)
            return
        out, view = self.out, self.view
        if isinstance(message, EntrantJoined):
            entrant = Entrant(player_id=message.player_id, name=message.name, bot=message.bot,
                              removed=False, removed_reason=None, at_table=False)
            self.view = replace(view, entrants=[*view.entrants, entrant],
                                entrant_count=view.entrant_count + 1)
            late = f", late: plays from round {message.from_round}" \
                if message.late is True else ""
            out.print(Text.assemble("  + ", (printable(message.name), "bold"), printable(
                f"{bot_mark(message)} entered "
                f"({self.view.entrant_count}/{view.max_players}{late})"
            )))
        elif isinstance(message, EntrantReinstated):
            self.view = replace(view, entrants=self._entrants(
                message.player_id, removed=False, removed_reason=None),
                entrant_count=view.entrant_count + 1)
            out.print(Text.assemble("  + ", (printable(message.name), "bold"), printable(
                f" is back (the host reinstated them): plays from round "
                f"{message.from_round}")))
        elif isinstance(message, TournamentAnnouncement):
            self._announce(message)
        elif isinstance(message, TournamentPaused):
            self.view = replace(view, paused=True)
            when = "once this round ends" if message.round_in_play else "now"
            out.print(Text(f"The host paused the tournament {when}: the next round waits "
                           "for them to resume it.", style="bold #e0c040"))
        elif isinstance(message, TournamentResumed):
            self.view = replace(view, paused=False)
            out.print(Text("The host resumed the tournament.", style="bold #4fb86b"))
        elif isinstance(message, EntrantRemoved):
            self.view = replace(view, entrants=self._entrants(
                message.player_id, removed=True, removed_reason=message.reason),
                entrant_count=max(0, view.entrant_count - 1))
            out.print(Text.assemble("  − ", (printable(message.name), "bold"), printable(
                f" was removed by the host: {message.reason}"
            ), style="#ff6b6b"))
        elif isinstance(message, TournamentStarted):
            self.view = replace(view, status="running")
            names = ", ".join(f"{e.name}{bot_mark(e)}" for e in message.entrants)
            out.print(Text.assemble(("Tournament started", "bold #4fb86b"), printable(
                f": {message.rounds} round(s), entrants {names}.")))
        elif isinstance(message, RoundStarting):
            self.view = replace(view, current_round=message.round, round_match=message.match)
            if message.match is not None and self._online(message.match, message.tables):
                await self._play_round(message.round, message.match)
            else:
                out.print(printable_text(
                    f"Round {message.round}/{view.rounds} is starting: "
                    "you play it at a table in the room; the host or an arbiter enters your "
                    "result.", "bold"))
        elif isinstance(message, EntrantTable):
            where = "at a table in the room" if message.at_table else "online"
            out.print(printable_text(f"  {message.name} plays {where} from round "
                                     f"{message.from_round}."))
        elif isinstance(message, ArbiterNamed):
            out.print(printable_text(f"  {message.name} is an arbiter of the tournament."))
        elif isinstance(message, ResultEntered):
            replaced = " (replacing the one entered before)" if message.replaced else ""
            out.print(Text.assemble(entered_line(message), printable(replaced)))
            if message.standings:
                self.out.print(standings_table(
                    message.standings, you=self.you_id,
                    title=f"Standings with the result entered for round {message.round}"))
        elif isinstance(message, RoundEnded):
            self.view = replace(view, round_match=None)
            self._show_standings(message.standings, message.round)
            self._revealed(message.round, message.seed)
        elif isinstance(message, DealsCommitted):
            self.view = replace(view, deals_ready=True, commitment=message.commitment,
                                round_commitments=message.round_commitments,
                                seeds=message.seeds)
            out.print(deals_report(self.view).line)
        elif isinstance(message, TournamentEnded):
            # The whole list of seeds, revealed.
            self.view = replace(view, status="finished", seeds=message.seeds)
            self._check_deals()
            self.final = Outcome.of(message)
        elif isinstance(message, TournamentCancelled):
            self.view = replace(view, status="cancelled", cancel_reason=message.reason)
            self.final = Outcome.of(message)

    async def _play_round(self, number: int, code: str) -> None:
        if code in self.played:
            return
        self.played.add(code)
        rounds = self.view.rounds
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
                       heading=f"{self.view.name} · round {number}/{rounds}",
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


def announcement_text(announcement: Announcement | TournamentAnnouncement) -> Text:
    """``The host says (2026-11-29 19:05:00 (CET)): Coffee first``, the text as typed
    (never markup)."""
    at = announcement.at
    when = f" ({local_time(at)})" if at else ""
    return Text.assemble(("The host says", "bold #e0c040"),
                         printable(f"{when}: {announcement.text}"))


def print_final(out: Console, final: Outcome, view: TournamentView,
                you: str | int | None) -> None:
    if final.cancelled:
        out.print(printable_text(f"Tournament {view.name} ({view.code}) is "
                                 f"cancelled: {final.reason or 'by the host'}.", "bold"))
        return
    out.print(standings_table(final.standings, you=you,
                              title=f"{view.name} ({view.code}): final standings"))
    if final.podium:
        out.print(podium_text(final.podium, you=you))


def intro(view: TournamentView) -> Text:
    """``Tournament Cup (Q4M2ZK): classic, 3 rounds of 10:00, 2/16 entrants.``"""
    return Text.assemble("Tournament ", (printable(view.name), "bold"), " (",
                         (printable(view.code), "bold"), f"): {tournament_summary(view)}.")


async def follow(
    connection: Connection, view: TournamentView, *, frontend: Frontend, out: Console,
) -> int:
    """Follow until the end and print the final standings; Ctrl-C (a cancel) stops
    following quietly. Returns the exit code."""
    you = connection.player.id if connection.player else None
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


async def deals_committed(connection: Connection, view: TournamentView) -> TournamentView:
    """Wait until the winnable deals of tournament ``view`` (created on ``connection``)
    are committed: the view with them (its ``commitment``, ``round_commitments`` and
    ``seeds``, from their ``deals_committed`` event). Raises ``ClientError`` if the
    tournament is cancelled instead (no deal could be proven) or the connection fails."""
    code = view.code
    done: asyncio.Future[TournamentView] = asyncio.get_running_loop().create_future()

    def listen(message: Listened) -> None:
        if done.done():
            return
        if isinstance(message, DealsCommitted | TournamentCancelled) \
                and message.tournament == code:
            if isinstance(message, DealsCommitted):
                done.set_result(replace(view, deals_ready=True, commitment=message.commitment,
                                        round_commitments=message.round_commitments,
                                        seeds=message.seeds))
            else:
                done.set_exception(ClientError(f"tournament {code} was cancelled: "
                                               f"{message.reason}"))
        elif isinstance(message, Tournament) and message.tournament.code == code:
            if message.tournament.deals_ready:  # a snapshot
                done.set_result(message.tournament)
        elif isinstance(message, ConnectionNotice) and message.state == "failed":
            done.set_exception(ClientError(message.detail))

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
