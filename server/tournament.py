"""Tournaments: one actor each (``server.actor``) around ``server.tournamentcore``.

A ``Tournament`` is the only owner of one tournament's state in the cluster (it runs on
the leader: server/leadership.py). Joins, removals, starts, scheduled starts, rounds,
breaks and the end go through its mailbox one at a time, each stored before the state
changes, so that two players joining at once cannot both take the last place. What the
core asks for besides is done here: a round's match is created through the lobby, dealt
the round's committed seed (then ``RoundDealt`` is said and the match started), the
round's match is looked for in the database (its end may come on another process of the
cluster) or, when it ends here, at once, and winnable deals are drawn by the solver in
child processes (``server.deals``), then committed.

Every tournament's seeds are drawn when it is created, from the operating system's
secure random source (``Seed.generate``), and stored with it; a tournament of ``deals:
"winnable"`` is stored without them and draws them next, off the players' path: its
creation is answered at once, with ``deals_ready`` false, and ``deals_committed`` is
said once they are drawn, stored and committed to.

``Tournaments`` is the directory of this process's live tournaments: it creates them,
rebuilds the unfinished ones from the database when this process starts leading
(``resume``), reads finished and cancelled ones back from the database, and routes each
request to its tournament's actor. All their SQL is in ``server.storage.tournaments``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

import msgspec

from gaps import Ruleset, Seed
from gaps_protocol.messages.events import TournamentEvent, event_name
from gaps_protocol.messages.replies import DealSheet, Standings, TournamentEvents
from gaps_protocol.messages.replies import Tournament as TournamentReply
from gaps_protocol.messages.views import TournamentView
from server import tournamentcommands as commands
from server import tournamentcore as core
from server import tournamentrestore as restore
from server import tournamentstate as states
from server import tournamentviews as views
from server.actor import Actor
from server.broker import Broker
from server.clock import Cancel, Clock, datetime_of, ms_of
from server.deals import DealProver, NoWinnableDeal
from server.errors import ServerError
from server.lobby import Lobby, new_code
from server.match import Match, MatchOptions
from server.outages import Outage
from server.storage.outage import is_outage, until_stored
from server.storage.tournaments import (
    EnteredRow,
    StandingRow,
    StoredRound,
    StoredTournament,
    TournamentRepository,
)
from server.tournamentstate import TournamentOptions, TournamentState

log = logging.getLogger("gaps.tournament")

#: How many ended tournaments ``tournament_list`` gives, newest first.
ENDED_LISTED = 50
#: How long a draw of winnable deals that failed (a solving process died) or whose
#: commitment could not be stored waits before it is tried again, at most.
DRAW_RETRY_MAX_S: Final = 30.0


def tournament_channel(code: str) -> str:
    """The broker channel of tournament ``code``'s events."""
    return f"tournament:{code}"


class Tournament(Actor[TournamentState, commands.Command, TournamentEvent]):
    """The actor of one tournament."""

    def __init__(
        self,
        state: TournamentState,
        *,
        repository: TournamentRepository,
        lobby: Lobby,
        broker: Broker,
        clock: Clock,
        prover: DealProver,
        max_history_events: int,
        on_closed: Callable[[Tournament], None],
        outage: Outage | None = None,
    ) -> None:
        self._repository = repository
        self._lobby = lobby
        self._prover = prover
        self._on_closed = on_closed
        super().__init__(
            state,
            clock=clock,
            broker=broker,
            channel=tournament_channel(state.code),
            max_history_events=max_history_events,
            name=f"tournament {state.code}",
            outage=outage,
        )

    @property
    def code(self) -> str:
        return self._state.code

    @property
    def id(self) -> int:
        return self._state.id

    # -- what others ask ------------------------------------------------------------------

    async def join(self, player_id: int, name: str, *, bot: bool) -> TournamentReply:
        return await self.ask(commands.Join(player_id, name, bot))  # type: ignore[no-any-return]

    async def remove(self, host_id: int, player: str, reason: str) -> TournamentReply:
        return await self.ask(commands.Remove(host_id, player, reason))  # type: ignore[no-any-return]

    async def start_by(self, player_id: int) -> TournamentReply:
        return await self.ask(commands.Start(player_id))  # type: ignore[no-any-return]

    async def steer(self, command: commands.Command) -> TournamentReply | Standings:
        """One of the host's commands (reinstate, cancel, pause, resume, announce, enter
        a table's result: ``standings``)."""
        return await self.ask(command)  # type: ignore[no-any-return]

    async def standings(self) -> Standings:
        return await self.read(lambda state, _now: with_standings(state))

    async def deal_sheet(self, player_id: int, number: int) -> DealSheet:
        return await self.read(lambda state, now: core.deal_sheet(state, player_id, number, now))

    async def resync(self, since: int) -> TournamentEvents | TournamentReply:
        """The events after ``since`` (``tournament_events``) while the history keeps
        them all; otherwise (or for a ``since`` beyond the last event: the server
        restarted and numbers anew) a ``tournament`` snapshot with its seq."""

        def answer(state: TournamentState, _now: int) -> TournamentEvents | TournamentReply:
            events = self.history.since(since)
            if events is not None:
                return TournamentEvents(
                    id=None, tournament=state.code, events=events,
                )
            return snapshot(state, seq=self.history.last_seq)

        return await self.read(answer)

    def round_may_have_ended(self) -> None:
        """The match of a round ended on this process: look at once."""
        self.tell(commands.CheckRound())

    # -- the core and its effects ---------------------------------------------------------

    def _core(self, state: TournamentState, command: commands.Command, now: int) -> commands.Step:
        return core.handle(state, command, now)

    def _tick(self) -> commands.Command:
        return commands.Tick()

    def _deadline(self, state: TournamentState) -> int | None:
        return core.next_deadline(state)

    def _answer(self, reply: commands.Reply) -> Any:
        if isinstance(reply, commands.Entered):
            return TournamentReply(
                id=None, tournament=views.view(self._state), seq=self.history.last_seq
            )
        if isinstance(reply, commands.Viewed):
            return TournamentReply(id=None, tournament=views.view(self._state))
        if isinstance(reply, commands.Standing):
            return with_standings(self._state)
        return reply

    def _after(self, step: commands.Step) -> None:
        for event in step.events:
            name = event_name(event)
            if name in LOGGED_EVENTS:
                log.info(
                    LOGGED_EVENTS[name],
                    extra={"tournament": self.code, **_loggable(event)},
                )
        if step.deal is not None:
            self.spawn(self._deal(step.deal))
        if step.look is not None:
            self.spawn(self._look(step.look))
        if step.draw is not None:
            self.spawn(self._draw(step.draw))
        if step.abandon is not None:
            self.spawn(self._abandon(step.abandon))
        if step.closed:
            self._on_closed(self)

    async def _store(self, write: states.Write) -> None:
        repository, tournament_id = self._repository, self.id
        match write:
            case states.EntrantAdded(player_id=player_id, at=at, position=position):
                await repository.add_entrant(
                    tournament_id, player_id, at=datetime_of(at), position=position
                )
            case states.EntrantRemoved(player_id=player_id, reason=reason, at=at):
                await repository.remove_entrant(
                    tournament_id, player_id, reason=reason, at=datetime_of(at)
                )
            case states.TournamentStarted(at=at):
                await repository.update(tournament_id, status="running", started_at=datetime_of(at))
            case states.RoundBegun(number=number, tables=tables):
                await repository.begin_round(tournament_id, number, tables=tables)
            case states.RoundStarted(number=number, at=at, online=online):
                await repository.start_round(
                    tournament_id, number, at=datetime_of(at), online=online
                )
            case states.ArbiterNamed(player_id=player_id, at=at):
                await repository.name_arbiter(tournament_id, player_id, at=datetime_of(at))
            case states.TableSet(player_id=player_id, at_table=at_table):
                await repository.set_table(tournament_id, player_id, at_table=at_table)
            case states.ResultEntered(number=number, result=result):
                await repository.enter_result(
                    tournament_id,
                    number,
                    EnteredRow(
                        result.player_id, result.placed, result.redeals, result.finish_ms,
                        result.won, result.score, result.by, datetime_of(result.at),
                    ),
                )
            case states.StandingsRecorded(rows=rows):
                await repository.record_standings(
                    tournament_id,
                    [
                        StandingRow(
                            row.player_id,
                            row.total_score,
                            row.total_time_ms,
                            row.rounds_played,
                            row.rank,
                        )
                        for row in rows
                    ],
                )
            case states.TournamentFinished(at=at):
                await repository.update(tournament_id, status="finished", ended_at=datetime_of(at))
            case states.TournamentCancelled(reason=reason, at=at, current_round=counted):
                await repository.update(
                    tournament_id,
                    status="cancelled",
                    cancel_reason=reason,
                    ended_at=datetime_of(at),
                    current_round=counted,
                )
            case states.DealsCommitted(seeds=seeds):
                await repository.commit_deals(tournament_id, seeds)
            case states.EntrantReinstated(player_id=player_id):
                await repository.reinstate_entrant(tournament_id, player_id)
            case states.PauseSet(paused=paused):
                await repository.update(tournament_id, paused=paused)
            case states.AnnouncementMade(text=text, at=at):
                await repository.announce(tournament_id, text, at=datetime_of(at))

    async def _deal(self, deal: commands.DealRound) -> None:
        """Create round ``deal.number``'s match (retried through outages: the round must
        be dealt), say so, then start it."""
        state = self._state
        options = state.options
        match_options = MatchOptions(
            ruleset=Ruleset.named(options.ruleset),
            max_players=len(deal.seats),
            time_limit_s=options.round_time_limit_s,
            win_by="score",
            public=False,
            countdown_s=options.countdown_s,
            # The tournament let its entrants in: its rounds seat them all.
            bots=any(bot for _, _, bot in deal.seats),
        )
        # The committed seed: chosen by nobody, and secret until the round ends, so the
        # round is rated like any match of a fresh seed.
        seed = None if deal.seed is None else Seed(deal.seed)
        match: Match = await until_stored(
            lambda: self._lobby.create(
                state.host_id,
                match_options,
                seed,
                rated=True,
                seats=list(deal.seats),
                connected=False,
                kind="tournament",
                tournament_id=state.id,
                round_number=deal.number,
            ),
            what=f"round {deal.number} of tournament {self.code}",
            sleep=self._clock.sleep,
            outage=self._outage,
        )
        await self.ask(commands.RoundDealt(deal.number, match.code))
        if self._state.over:  # cancelled while the match was being created
            await match.abandon()
        else:
            await match.start()

    async def _abandon(self, code: str) -> None:
        """Give up the match of the round being played when the host cancelled. A match
        another process runs (after a change of leader) ends by itself, not counted."""
        match = self._lobby.matches.get(code)
        if match is not None:
            await match.abandon()

    async def _draw(self, draw: commands.DrawDeals) -> None:
        """Draw ``draw.count`` winnable deals (again after a solving process died), then
        say so, ``DealsDrawn`` (or ``NoDeals`` when none could be proven), again until
        it is stored."""
        delay_s = 1.0
        command: commands.DealsDrawn | commands.NoDeals
        while True:
            try:
                seeds = await self._prover.draw(draw.count, draw.ruleset)
                command = commands.DealsDrawn(tuple(seed.data for seed in seeds))
                break
            except NoWinnableDeal as error:
                log.error("no winnable deals", extra={"tournament": self.code,
                                                      "error": str(error)})
                command = commands.NoDeals(f"the server could not draw winnable deals: {error}")
                break
            except Exception as error:
                log.warning("winnable deals not drawn; retrying",
                            extra={"tournament": self.code, "error": repr(error)[:300],
                                   "retry_in_s": delay_s})
            await self._clock.sleep(delay_s)
            delay_s = min(DRAW_RETRY_MAX_S, delay_s * 2)
        delay_s = 0.05
        while True:
            try:
                await self.ask(command)
                return
            except ServerError as refused:
                if refused.code != "storage_unavailable":
                    raise
            await self._clock.sleep(delay_s)
            delay_s = min(DRAW_RETRY_MAX_S, delay_s * 2)

    async def _look(self, look: commands.LookForRound) -> None:
        """Whether round ``look.number``'s match has ended, from the database."""
        try:
            found = await self._repository.rounds(self.id, look.number)
        except Exception as error:
            # Looked for again after a while; an outage is logged once (server.outages).
            if self._outage is not None and is_outage(error):
                self._outage.failed(f"looking for round {look.number} of {self.code}", error)
                log.debug("tournament round not looked for", extra={"error": repr(error)[:300]})
            else:
                log.warning("tournament round not looked for", extra={"error": repr(error)[:300]})
            self.tell(commands.RoundRunning(look.number))
            return
        stored = found[0] if found else None
        if stored is None or stored.code != look.code or stored.status in ("lobby", "running"):
            self.tell(commands.RoundRunning(look.number))
        elif stored.status == "abandoned":
            log.warning(
                "tournament round lost: dealt again",
                extra={"tournament": self.code, "round": look.number, "match": look.code},
            )
            self.tell(commands.RoundLost(look.number, look.code))
        else:
            self.tell(round_ended(stored, default_ended_at=self._clock.now_ms()))


#: The log line of each tournament event an operator wants to see.
LOGGED_EVENTS = {
    "deals_committed": "tournament deals committed",
    "tournament_started": "tournament started",
    "round_starting": "tournament round dealt",
    "round_ended": "tournament round ended",
    "tournament_ended": "tournament finished",
    "tournament_cancelled": "tournament cancelled",
    "tournament_paused": "tournament paused",
    "tournament_resumed": "tournament resumed",
    "entrant_reinstated": "tournament entrant reinstated",
    "arbiter_named": "tournament arbiter named",
    "entrant_table": "tournament entrant seated at a table",
    "result_entered": "tournament table result entered",
}


def _loggable(event: TournamentEvent) -> dict[str, Any]:
    """The short fields of an event, for its log line: the round and its match, the
    reason of a cancel, how many entrants start, when the next round is dealt, and the
    commitment of its deals, the podium of a tournament over (not the whole standings)."""
    data = msgspec.to_builtins(event)
    fields = {
        k: v
        for k, v in data.items()
        if k in ("round", "match", "reason", "rounds", "next_round_at", "commitment",
                 "abandoned_round", "after_round", "player_id", "from_round", "at_table",
                 "score", "replaced")
    }
    if "entrants" in data:
        fields["entrants"] = len(data["entrants"])
    if "podium" in data:
        fields["podium"] = [
            {key: row.get(key) for key in ("rank", "player_id", "name", "total_score")}
            for row in data["podium"]
        ]
    return fields


def round_ended(stored: StoredRound, *, default_ended_at: int) -> commands.RoundEnded:
    """The core's word for a round whose match finished."""
    return commands.RoundEnded(
        stored.number,
        stored.code,
        tuple(states.RoundScore(r.player_id, r.score, r.finish_ms) for r in stored.results),
        ms_of(stored.ended_at) if stored.ended_at is not None else default_ended_at,
    )


def with_standings(state: TournamentState) -> Standings:
    """The view, the standings, and every result entered for a table (by round)."""
    return Standings(
        id=None,
        tournament=views.view(state),
        standings=views.standings(state),
        entered_results=views.entered_results(state),
    )


def snapshot(state: TournamentState, *, seq: int) -> TournamentReply:
    """``tournament_resync``'s snapshot: the view with its standings, as of event ``seq``."""
    return TournamentReply(
        id=None,
        tournament=views.view(state),
        seq=seq,
        standings=views.standings(state),
        entered_results=views.entered_results(state),
    )


class Tournaments:
    """This process's live tournaments (on the cluster's leader), by code.

    :param prover: draws the deals of ``deals: "winnable"`` tournaments.
    :param countdown_s: each round's countdown; ``break_s``: the pause between rounds.
    :param check_s: how often a round's match is looked for in the database, besides
        the lobby's word when it ends here.
    :param retain_s: how long a tournament over stays live (late resyncs) before it is
        read back from the database instead.
    """

    def __init__(
        self,
        *,
        repository: TournamentRepository,
        lobby: Lobby,
        broker: Broker,
        clock: Clock,
        prover: DealProver,
        countdown_s: int,
        break_s: float,
        max_history_events: int,
        check_s: float = 1.0,
        retain_s: float = 600.0,
        outage: Outage | None = None,
    ) -> None:
        self._outage = outage
        self._repository = repository
        self._lobby = lobby
        self._prover = prover
        self._broker = broker
        self._clock = clock
        self._countdown_s = countdown_s
        self._break_s = break_s
        self._max_history_events = max_history_events
        self._check_ms = round(check_s * 1000)
        self._retain_s = retain_s
        self.live: dict[str, Tournament] = {}
        self._retirements: dict[str, Cancel] = {}
        self._retiring: set[asyncio.Task[None]] = set()
        lobby.on_end(self._match_ended)

    # -- requests --------------------------------------------------------------------------

    async def create(
        self,
        host_id: int,
        *,
        name: str,
        ruleset: Ruleset,
        rounds: int,
        max_players: int,
        round_time_limit_s: int,
        start_at_ms: int | None,
        bots: bool = False,
        if_empty: str = "cancel",
        deals: str = "any",
        countdown_s: int | None = None,
        break_s: int | None = None,
        late_entry_until_round: int = 0,
    ) -> TournamentReply:
        """A new open tournament; its view (``deals_ready`` false while its winnable
        deals are drawn). ``countdown_s`` and ``break_s``: the organiser's (None: the
        server's settings)."""
        now = self._clock.now_ms()
        if start_at_ms is not None and start_at_ms <= now:
            raise ServerError("bad_message", "start_at must be in the future", field="start_at")
        if late_entry_until_round > rounds:
            raise ServerError(
                "bad_message",
                f"late_entry_until_round must be at most the {rounds} rounds, "
                f"got {late_entry_until_round}",
                field="late_entry_until_round",
            )
        code = new_code()
        while code in self.live:
            code = new_code()
        options = self._options(
            name=name,
            ruleset=ruleset.name,
            rounds=rounds,
            max_players=max_players,
            round_time_limit_s=round_time_limit_s,
            start_at=start_at_ms,
            bots=bots,
            if_empty=if_empty,
            deals=deals,
            countdown_s=countdown_s,
            break_s=break_s,
            late_entry_until_round=late_entry_until_round,
        )
        seeds = () if deals == "winnable" else tuple(Seed.generate().data for _ in range(rounds))
        tournament_id = await self._repository.create(
            code=code,
            name=name,
            host_id=host_id,
            ruleset=ruleset.name,
            rounds=rounds,
            max_players=max_players,
            round_time_limit_s=round_time_limit_s,
            start_at=None if start_at_ms is None else datetime_of(start_at_ms),
            created_at=datetime_of(now),
            bots=bots,
            if_empty=if_empty,
            deals=deals,
            seeds=seeds,
            countdown_s=countdown_s,
            break_s=break_s,
            late_entry_until_round=late_entry_until_round,
        )
        state = states.new_tournament(
            tournament_id=tournament_id,
            code=code,
            host_id=host_id,
            options=options,
            check_ms=self._check_ms,
            seeds=seeds,
        )
        tournament = self._live(state)
        log.info("tournament created", extra={"tournament": code, "host": host_id})
        return TournamentReply(id=None, tournament=views.view(tournament.state))

    def _options(
        self, *, countdown_s: int | None, break_s: int | None, **chosen: Any
    ) -> TournamentOptions:
        """The options chosen; the server's countdown and break where none was."""
        return TournamentOptions(
            countdown_s=self._countdown_s if countdown_s is None else countdown_s,
            break_s=self._break_s if break_s is None else float(break_s),
            **chosen,
        )

    def _live(self, state: TournamentState) -> Tournament:
        tournament = Tournament(
            state,
            repository=self._repository,
            lobby=self._lobby,
            broker=self._broker,
            clock=self._clock,
            prover=self._prover,
            max_history_events=self._max_history_events,
            on_closed=self._closed,
            outage=self._outage,
        )
        self.live[state.code] = tournament
        # Whatever is due (a scheduled start passed while nobody led) is applied now.
        tournament.tell(commands.Tick())
        return tournament

    async def find(self, code: str) -> Tournament | TournamentState:
        """The live tournament ``code``, or the state of an ended one read back from the
        database (finished and cancelled ones stay visible)."""
        code = code.upper()
        tournament = self.live.get(code)
        if tournament is not None:
            return tournament
        stored = await self._repository.ended(code)
        if stored is None:
            raise ServerError("no_such_tournament", f"no tournament has code {code!r}")
        return await self._rebuilt(stored)

    async def _actor(self, code: str) -> Tournament:
        """The live tournament ``code``; an ended one refuses what it is asked."""
        found = await self.find(code)
        if isinstance(found, Tournament):
            return found
        core.require_open(found)  # raises: it has ended
        raise AssertionError("an ended tournament was taken for an open one")

    async def join(self, code: str, player_id: int, name: str, *, bot: bool) -> TournamentReply:
        """Enter tournament ``code``, or follow it again (an entrant); an ended one is
        followed again by its entrants only."""
        found = await self.find(code)
        if isinstance(found, Tournament):
            return await found.join(player_id, name, bot=bot)
        entrant = found.entrant(player_id)
        if entrant is None or entrant.removed:
            core.require_open(found)  # raises: it has ended
        return TournamentReply(id=None, tournament=views.view(found), seq=0)

    async def remove(self, code: str, host_id: int, player: str, reason: str) -> TournamentReply:
        found = await self.find(code)
        if not isinstance(found, Tournament):
            raise ServerError(
                "tournament_finished", f"tournament {found.code} is over", status=found.status
            )
        return await found.remove(host_id, player, reason)

    async def start_by(self, code: str, player_id: int) -> TournamentReply:
        return await (await self._actor(code)).start_by(player_id)

    async def steer(self, code: str, command: commands.Command) -> TournamentReply | Standings:
        """The host's ``command`` to tournament ``code``; an ended one refuses it."""
        return await (await self._actor(code)).steer(command)

    async def standings(self, code: str) -> Standings:
        found = await self.find(code)
        if isinstance(found, Tournament):
            return await found.standings()
        return with_standings(found)

    async def deal_sheet(self, code: str, player_id: int, number: int) -> DealSheet:
        """Round ``number``'s deal sheet, for the host or an arbiter of ``code``."""
        found = await self.find(code)
        if isinstance(found, Tournament):
            return await found.deal_sheet(player_id, number)
        return core.deal_sheet(found, player_id, number, self._clock.now_ms())

    async def resync(self, code: str, since: int) -> TournamentEvents | TournamentReply:
        found = await self.find(code)
        if isinstance(found, Tournament):
            return await found.resync(since)
        # An ended tournament read back from the database has no events: a snapshot.
        return snapshot(found, seq=0)

    async def code_of(self, code: str) -> str:
        """The code of tournament ``code`` as stored (upper case), if it exists."""
        found = await self.find(code)
        return found.code

    async def listed(self, which: str = "active") -> list[TournamentView]:
        """The views of the ``active`` tournaments (open and running, oldest first), of
        the ``ended`` ones (finished and cancelled, newest first, the last
        ``ENDED_LISTED``), or of ``all`` (the active, then the ended)."""
        shown = []
        if which in ("active", "all"):
            shown = [
                views.view(t.state)
                for t in self.live.values()
                if t.state.status in ("open", "running")
            ]
        if which in ("ended", "all"):
            for stored in await self._repository.ended_recently(limit=ENDED_LISTED):
                live = self.live.get(stored.code)
                state = live.state if live is not None else await self._rebuilt(stored)
                shown.append(views.view(state))
        return shown

    # -- rounds and ends --------------------------------------------------------------------

    async def _match_ended(self, match: Match) -> None:
        if match.tournament_id is None:
            return
        for tournament in self.live.values():
            if tournament.id == match.tournament_id:
                tournament.round_may_have_ended()

    def _closed(self, tournament: Tournament) -> None:
        """A tournament over stays live a while (late resyncs), then is read back."""
        self._retirements[tournament.code] = self._clock.call_later(
            self._retain_s, lambda: self._retire(tournament)
        )

    def _retire(self, tournament: Tournament) -> None:
        self._retirements.pop(tournament.code, None)
        if self.live.get(tournament.code) is tournament:
            del self.live[tournament.code]
        task = asyncio.ensure_future(tournament.shutdown())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    # -- restart ---------------------------------------------------------------------------

    async def _rebuilt(self, stored: StoredTournament) -> TournamentState:
        rounds = await self._repository.rounds(stored.id)
        tables = await self._repository.tables(stored.id)
        return restore.rebuild(
            tournament_id=stored.id,
            code=stored.code,
            host_id=stored.host_id,
            options=self._options(
                name=stored.name,
                ruleset=stored.ruleset,
                rounds=stored.rounds,
                max_players=stored.max_players,
                round_time_limit_s=stored.round_time_limit_s,
                start_at=None if stored.start_at is None else ms_of(stored.start_at),
                bots=stored.bots,
                if_empty=stored.if_empty,
                deals=stored.deals,
                countdown_s=stored.countdown_s,
                break_s=stored.break_s,
                late_entry_until_round=stored.late_entry_until_round,
            ),
            status=stored.status,
            current_round=stored.current_round,
            entrants=[
                states.Entrant(
                    player_id,
                    name,
                    player_id in stored.bot_entrants,
                    stored.removed.get(player_id),
                    player_id in stored.at_table,
                )
                for player_id, name in stored.entrants
            ],
            rounds=[
                restore.StoredRound(
                    number=r.number,
                    code=r.code,
                    status=r.status,
                    ended_at=None if r.ended_at is None else ms_of(r.ended_at),
                    scores=tuple(
                        states.RoundScore(x.player_id, x.score, x.finish_ms) for x in r.results
                    ),
                )
                for r in rounds
            ],
            cancel_reason=stored.cancel_reason,
            now=self._clock.now_ms(),
            check_ms=self._check_ms,
            seeds=stored.seeds,
            paused=stored.paused,
            announcements=[
                states.Announcement(text, ms_of(at)) for text, at in stored.announcements
            ],
            arbiters=stored.arbiters,
            tables=restore.StoredTables(
                started={n: ms_of(at) for n, at in tables.started.items()},
                online=tables.online,
                tables=tables.tables,
                entered={
                    n: tuple(
                        states.EnteredResult(
                            r.player_id, r.placed, r.redeals, r.finish_ms, r.won, r.score,
                            r.entered_by, ms_of(r.entered_at),
                        )
                        for r in rows
                    )
                    for n, rows in tables.entered.items()
                },
            ),
        )

    async def resume(self) -> None:
        """Rebuild every unfinished tournament from the database and carry on where the
        last process stopped (``tournamentrestore.rebuild``). Call it after
        ``Lobby.restore``: a round in progress goes on in its match, which the lobby
        restored (or another process runs), and is counted when it ends."""
        for stored in await self._repository.unfinished():
            if stored.code in self.live:
                continue
            state = await self._rebuilt(stored)
            log.info(
                "resuming tournament",
                extra={"tournament": state.code, "round": state.current_round},
            )
            if state.status == "running" and state.current_round < stored.current_round:
                # Down between storing the round's number and storing its match (or the
                # match could not be taken back): the round is dealt again.
                log.warning(
                    "tournament round not found: dealt again",
                    extra={"tournament": state.code, "round": stored.current_round},
                )
            self._live(state)

    async def close(self) -> None:
        """Stop every tournament's actor (a restart, or another process leading now
        resumes them from the database)."""
        for cancel in self._retirements.values():
            cancel()
        self._retirements.clear()
        tournaments = list(self.live.values())
        self.live.clear()
        for tournament in tournaments:
            await tournament.shutdown()
