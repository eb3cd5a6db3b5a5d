"""Tournaments in the duplicate format: every entrant plays the same deals, round by round.

Each round is one match for all entrants at once (the same deal for everyone); the
standings add up each entrant's round scores, ties broken by total time. Rounds start by
themselves one after another. The database holds everything needed to go on after a
restart (``Tournaments.resume``): finished rounds are kept, a round cut short by the
restart goes on in its own match, which the lobby restored (same code, same deal), and
the break between rounds and a scheduled start go on with the time they had left, on
the wall clock. All their SQL is in ``server.storage.tournaments``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from gaps import Ruleset
from server.broker import Broker, BrokerError
from server.errors import ServerError, bots_not_allowed
from server.history import History
from server.lobby import Lobby, new_code
from server.match import Match, MatchOptions, Sleep
from server.protocol import encode
from server.storage.tournaments import (
    UNFINISHED,
    StandingRow,
    StoredTournament,
    TournamentRepository,
)

log = logging.getLogger("gaps.tournament")

PODIUM: Final = 3


def tournament_channel(code: str) -> str:
    """The broker channel of tournament ``code``'s events."""
    return f"tournament:{code}"


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class LiveTournament:
    id: int
    code: str
    name: str
    host_id: int
    ruleset: Ruleset
    rounds: int
    max_players: int
    round_time_limit_s: int
    start_at: datetime | None
    status: str  # open, running, finished
    current_round: int
    entrants: dict[int, str]  # player id -> name, in joining order
    history: History
    round_code: str | None = None  # the match of the round being played
    task: asyncio.Task[None] | None = None
    bots: bool = False  # whether declared bots may enter
    bot_entrants: set[int] = field(default_factory=set)
    #: Entrants the host removed between rounds: player id -> the reason given.
    removed: dict[int, str] = field(default_factory=dict)
    #: A round is dealt or being played (from its deal to its end): nobody is removed.
    playing: bool = False

    @property
    def channel(self) -> str:
        return tournament_channel(self.code)

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "code": self.code,
            "name": self.name,
            "host_id": self.host_id,
            "ruleset": self.ruleset.name,
            "rounds": self.rounds,
            "max_players": self.max_players,
            "round_time_limit_s": self.round_time_limit_s,
            "start_at": self.start_at.isoformat() if self.start_at else None,
            "status": self.status,
            "current_round": self.current_round,
            "round_match": self.round_code,
            "bots": self.bots,
            "entrants": [self.entrant(pid) for pid in self.entrants],
        }

    def entrant(self, player_id: int) -> dict[str, Any]:
        """An entrant as shown: a declared bot or not, removed by the host or not."""
        return {
            "player_id": player_id,
            "name": self.entrants[player_id],
            "bot": player_id in self.bot_entrants,
            "removed": player_id in self.removed,
            "removed_reason": self.removed.get(player_id),
        }

    def seated(self) -> list[tuple[int, str, bool]]:
        """The entrants a round seats (player id, name, declared bot): all but those
        removed, in joining order."""
        return [
            (pid, name, pid in self.bot_entrants)
            for pid, name in self.entrants.items()
            if pid not in self.removed
        ]



@dataclass(frozen=True)
class Resumption:
    """Where a running tournament goes on after a restart: the round it waits for (the
    code of its match, live here or on another process), or the next round to deal after
    a pause."""

    attached: str | None
    next_round: int
    pause_s: float


class Tournaments:
    """Every tournament of this process: the open and running ones in ``live``, each
    running one driven by a task of its own; finished ones are read back when asked.

    ``sleep`` waits out the breaks and scheduled starts, and ``now`` tells the wall clock
    they are measured on (both injectable for tests)."""

    def __init__(
        self,
        *,
        repository: TournamentRepository,
        lobby: Lobby,
        broker: Broker,
        countdown_s: int,
        break_s: float,
        max_history_events: int,
        sleep: Sleep = asyncio.sleep,
        now: Callable[[], datetime] = utc_now,
        poll_s: float = 1.0,
    ) -> None:
        """``poll_s``: how often the end of a round's match is looked for in the
        database, besides the lobby's word when it ends here."""
        self._poll_s = poll_s
        self._repository = repository
        self._lobby = lobby
        self._broker = broker
        self._countdown_s = countdown_s
        self._break_s = break_s
        self._max_history_events = max_history_events
        self._sleep = sleep
        self._now = now
        self.live: dict[str, LiveTournament] = {}
        self._round_ended: dict[int, asyncio.Future[None]] = {}  # match id -> done
        lobby.on_end(self._match_ended)

    # -- requests ------------------------------------------------------------------------

    async def create(
        self,
        host_id: int,
        *,
        name: str,
        ruleset: Ruleset,
        rounds: int,
        max_players: int,
        round_time_limit_s: int,
        start_at: datetime | None,
        bots: bool = False,
    ) -> LiveTournament:
        now = self._now()
        if start_at is not None and start_at <= now:
            raise ServerError("bad_message", "start_at must be in the future", field="start_at")
        code = new_code()
        while code in self.live:
            code = new_code()
        tournament_id = await self._repository.create(
            code=code,
            name=name,
            host_id=host_id,
            ruleset=ruleset.name,
            rounds=rounds,
            max_players=max_players,
            round_time_limit_s=round_time_limit_s,
            start_at=start_at,
            created_at=now,
            bots=bots,
        )
        tournament = LiveTournament(
            tournament_id,
            code,
            name,
            host_id,
            ruleset,
            rounds,
            max_players,
            round_time_limit_s,
            start_at,
            "open",
            0,
            {},
            History(max_events=self._max_history_events),
            bots=bots,
        )
        self.live[code] = tournament
        if start_at is not None:
            tournament.task = asyncio.create_task(self._start_at(tournament))
        return tournament

    async def get(self, code: str) -> LiveTournament:
        """The tournament ``code``: a live one, or a finished one read back from the
        database (they are not kept in memory, but stay visible after a restart)."""
        tournament = self.live.get(code.upper())
        if tournament is not None:
            return tournament
        stored = await self._repository.finished(code.upper())
        if stored is None:
            raise ServerError("no_such_tournament", f"no tournament has code {code!r}")
        return self._loaded(stored)

    def listed(self) -> list[LiveTournament]:
        return [t for t in self.live.values() if t.status in ("open", "running")]

    async def join(
        self, code: str, player_id: int, name: str, *, bot: bool = False
    ) -> LiveTournament:
        tournament = await self.get(code)
        if player_id in tournament.entrants:
            return tournament
        if tournament.status != "open":
            raise ServerError("already_started", f"tournament {tournament.code} has started")
        if bot and not tournament.bots:
            raise bots_not_allowed(
                f"the host of tournament {tournament.code} lets no bot enter",
                refused_by="tournament",
            )
        if len(tournament.seated()) >= tournament.max_players:
            raise ServerError(
                "tournament_full",
                f"tournament {tournament.code} has its {tournament.max_players} players",
            )
        # False: joined from another connection meanwhile, which is as good.
        await self._repository.add_entrant(tournament.id, player_id, at=self._now())
        tournament.entrants[player_id] = name
        if bot:
            tournament.bot_entrants.add(player_id)
        await self._emit(tournament, "entrant_joined", player_id=player_id, name=name, bot=bot)
        return tournament

    async def remove(self, code: str, host_id: int, player: str, reason: str) -> LiveTournament:
        """The host removes entrant ``player`` (a name, in any case) between rounds, for
        ``reason``: stored (a resumed tournament keeps them out), told to every follower
        (``entrant_removed``), never seated again; their finished rounds stay in the
        standings, which show them removed, after everyone still in."""
        tournament = await self.get(code)
        if host_id != tournament.host_id:
            raise ServerError("not_host", f"only the host removes entrants of {tournament.code}")
        if tournament.status == "finished":
            raise ServerError("tournament_finished", f"tournament {tournament.code} is over")
        found = [pid for pid, name in tournament.entrants.items() if name.lower() == player.lower()]
        if not found or found[0] in tournament.removed:
            raise ServerError(
                "not_an_entrant",
                f"{player!r} is not in tournament {tournament.code}",
                player=player,
            )
        if tournament.playing:
            raise ServerError(
                "round_in_play",
                f"round {tournament.current_round} of {tournament.code} is being played: "
                "remove an entrant once it has ended",
                round=tournament.current_round,
            )
        player_id = found[0]
        # Out of the seats at once: a round dealt while this is stored does not seat them.
        tournament.removed[player_id] = reason
        try:
            await self._repository.remove_entrant(
                tournament.id, player_id, reason=reason, at=self._now()
            )
        except BaseException:
            del tournament.removed[player_id]
            raise
        await self._emit(
            tournament,
            "entrant_removed",
            player_id=player_id,
            name=tournament.entrants[player_id],
            reason=reason,
            after_round=tournament.current_round,
        )
        return tournament

    async def start_by(self, code: str, player_id: int) -> LiveTournament:
        tournament = await self.get(code)
        if player_id != tournament.host_id:
            raise ServerError("not_host", f"only the host starts tournament {tournament.code}")
        await self._begin(tournament)
        return tournament

    async def standings(self, code: str) -> dict[str, Any]:
        return await self._view_and_standings(await self.get(code))

    async def resync(self, code: str, since: int) -> dict[str, Any]:
        """The events after ``since`` (``tournament_events``) while the history keeps them
        all; otherwise (or for a ``since`` beyond the last event: the server restarted and
        numbers anew) a ``tournament`` snapshot of the view and standings, with its seq."""
        tournament = await self.get(code)
        last_seq = tournament.history.last_seq
        # A finished tournament read back from the database has no events: a snapshot.
        kept = since <= last_seq and tournament.code in self.live
        events = tournament.history.since(since) if kept else None
        if events is not None:
            return {"type": "tournament_events", "tournament": tournament.code, "events": events}
        snapshot = await self._view_and_standings(tournament)
        return {"type": "tournament", **snapshot, "seq": last_seq}

    async def _view_and_standings(self, tournament: LiveTournament) -> dict[str, Any]:
        """The view as it is now (before the standings are read), and the standings."""
        view = tournament.view()
        return {"tournament": view, "standings": await self._standings(tournament)}

    # -- running --------------------------------------------------------------------------

    async def _start_at(self, tournament: LiveTournament) -> None:
        assert tournament.start_at is not None
        delay = (tournament.start_at - self._now()).total_seconds()
        await self._sleep(max(0.0, delay))
        if tournament.status == "open":
            try:
                await self._begin(tournament)
            except ServerError as error:  # nobody entered: it stays open for the host
                log.warning("tournament not started", extra={"reason": error.message})

    async def _begin(self, tournament: LiveTournament) -> None:
        if tournament.status != "open":
            raise ServerError("already_started", f"tournament {tournament.code} has started")
        if not tournament.seated():
            raise ServerError("bad_message", f"tournament {tournament.code} has no entrants")
        tournament.status = "running"
        await self._repository.update(tournament.id, status="running", started_at=self._now())
        await self._emit(
            tournament,
            "tournament_started",
            rounds=tournament.rounds,
            entrants=[tournament.entrant(pid) for pid in tournament.entrants],
        )
        tournament.task = asyncio.create_task(self._run(tournament, first_round=1))

    async def _run(
        self,
        tournament: LiveTournament,
        *,
        first_round: int,
        attached: str | None = None,
        pause_s: float = 0.0,
    ) -> None:
        """Play the rounds from ``first_round`` on, then finish. After a restart, the
        round ``attached`` is waited for first (it is ``first_round - 1``), or the run
        starts with a pause of ``pause_s`` (what was left of a break)."""
        try:
            if attached is not None:
                await self._close_round(tournament, first_round - 1, attached)
                if first_round <= tournament.rounds:
                    pause_s = self._break_s
            if pause_s > 0:
                await self._sleep(pause_s)
            for number in range(first_round, tournament.rounds + 1):
                if not tournament.seated():  # the host removed everyone
                    break
                await self._play_round(tournament, number)
                if number < tournament.rounds:
                    await self._sleep(self._break_s)
            await self._finish(tournament)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("tournament failed", extra={"tournament": tournament.code})

    async def _play_round(self, tournament: LiveTournament, number: int) -> None:
        tournament.playing = True
        tournament.current_round = number
        await self._repository.update(tournament.id, current_round=number)
        seats = tournament.seated()
        options = MatchOptions(
            ruleset=tournament.ruleset,
            max_players=len(seats),
            time_limit_s=tournament.round_time_limit_s,
            win_by="score",
            public=False,
            countdown_s=self._countdown_s,
            # The tournament let its entrants in: its rounds seat them all.
            bots=any(bot for _, _, bot in seats),
        )
        match = await self._lobby.create(
            tournament.host_id,
            options,
            None,
            seats=seats,
            connected=False,
            kind="tournament",
            tournament_id=tournament.id,
            round_number=number,
        )
        self._attach(tournament, match)
        await self._emit(
            tournament,
            "round_starting",
            round=number,
            match=match.code,
            countdown_ms=self._countdown_s * 1000,
        )
        await match.start()
        await self._close_round(tournament, number, match.code)

    def _attach(self, tournament: LiveTournament, match: Match) -> None:
        """Make ``match`` the round being played, and be told of its end. Called while
        it has not ended (the lobby calls the end listeners once it has)."""
        tournament.round_code = match.code
        self._round_ended[match.id] = asyncio.get_running_loop().create_future()

    async def _close_round(self, tournament: LiveTournament, number: int, code: str) -> None:
        """Wait for the end of round ``number``'s match ``code``, then count it.

        Told at once by the lobby when the match ends here; checked in the database every
        ``poll_s`` besides, since in a cluster the match may end on another process (one
        that took it over from a dead one, or from this one while it was paused)."""
        tournament.round_code = code
        while True:
            stored = await self._repository.round(tournament.id, number)
            if stored is None or stored.code != code or stored.status not in UNFINISHED:
                break
            done = self._round_ended.get(stored.match_id)
            if done is None:
                done = self._round_ended[stored.match_id] = (
                    asyncio.get_running_loop().create_future()
                )
            try:
                await asyncio.wait_for(asyncio.shield(done), self._poll_s)
                break
            except TimeoutError:
                continue
        tournament.playing = False  # between rounds: the host may remove an entrant
        await self._round_ended_event(tournament, number, code)

    async def _round_ended_event(
        self, tournament: LiveTournament, number: int, code: str, *,
        ended_at: datetime | None = None,
    ) -> None:
        """Say that round ``number`` (match ``code``, ended at ``ended_at``: now if not
        said) is over, with the standings and when the next round starts (None after the
        last): the break after the round's end."""
        standings = await self._standings(tournament, record=True)
        next_round_at = None
        if number < tournament.rounds:
            since = ended_at if ended_at is not None else self._now()
            next_round_at = (since + timedelta(seconds=self._break_s)).isoformat(
                timespec="milliseconds"
            )
        await self._emit(
            tournament,
            "round_ended",
            round=number,
            match=code,
            standings=standings,
            next_round_at=next_round_at,
        )

    async def _match_ended(self, match: Match) -> None:
        done = self._round_ended.pop(match.id, None)
        if done is not None and not done.done():
            done.set_result(None)

    async def _finish(self, tournament: LiveTournament) -> None:
        standings = await self._standings(tournament, record=True)
        tournament.status = "finished"
        tournament.round_code = None
        await self._repository.update(tournament.id, status="finished", ended_at=self._now())
        await self._emit(
            tournament,
            "tournament_ended",
            standings=standings,
            podium=[row for row in standings if row["rank"] <= PODIUM and not row["removed"]],
        )

    async def _standings(
        self, tournament: LiveTournament, *, record: bool = False
    ) -> list[dict[str, Any]]:
        """Totals over the finished rounds, as stored: score (higher first), then time
        (less first), the entrants the host removed after everyone still in; with
        ``record``, stored on the entrants' rows too."""
        totals = await self._repository.totals(tournament.id)
        rows: list[dict[str, Any]] = []
        for player_id in tournament.entrants:
            total = totals.get(player_id)
            rows.append(
                {
                    **tournament.entrant(player_id),
                    "total_score": total.score if total else 0,
                    "total_time_ms": total.time_ms if total else 0,
                    "rounds_played": total.rounds if total else 0,
                }
            )
        rows.sort(
            key=lambda r: (r["removed"], -r["total_score"], r["total_time_ms"], r["player_id"])
        )
        for position, row in enumerate(rows, start=1):
            previous = rows[position - 2] if position > 1 else None
            same = previous is not None and (
                previous["removed"],
                previous["total_score"],
                previous["total_time_ms"],
            ) == (row["removed"], row["total_score"], row["total_time_ms"])
            row["rank"] = previous["rank"] if same and previous else position
        if record:
            await self._repository.record_standings(
                tournament.id,
                [
                    StandingRow(
                        row["player_id"],
                        row["total_score"],
                        row["total_time_ms"],
                        row["rounds_played"],
                        row["rank"],
                    )
                    for row in rows
                ],
            )
        return rows

    async def _emit(self, tournament: LiveTournament, event: str, **data: Any) -> None:
        message = {
            "type": "tournament_event",
            "tournament": tournament.code,
            "seq": 0,
            "event": event,
            **data,
        }
        tournament.history.append(message)
        try:
            await self._broker.publish(tournament.channel, encode(message))
        except BrokerError:
            # Kept in the history: followers see the gap and ask tournament_resync.
            log.warning("tournament event not published", extra={"event": event})

    # -- restart ---------------------------------------------------------------------------

    def _loaded(self, stored: StoredTournament) -> LiveTournament:
        return LiveTournament(
            stored.id,
            stored.code,
            stored.name,
            stored.host_id,
            Ruleset.named(stored.ruleset),
            stored.rounds,
            stored.max_players,
            stored.round_time_limit_s,
            stored.start_at,
            stored.status,
            stored.current_round,
            dict(stored.entrants),
            History(max_events=self._max_history_events),
            bots=stored.bots,
            bot_entrants=set(stored.bot_entrants),
            removed=dict(stored.removed),
        )

    async def resume(self) -> None:
        """Load every unfinished tournament and carry on where the last process stopped.

        Call it after ``Lobby.restore``: a round in progress goes on in its match, which
        the lobby restored (same code, same deal: its players join it again), and is
        counted when it ends. A round whose match had ended (while the server was down,
        or at its restore) is counted, and the tournament goes on after what is left of
        the break, on the wall clock since the match ended. A round whose match cannot
        be found (never stored, or not restored) is dealt again, and logged. A scheduled
        start keeps its time. The standings are always summed from the stored results.
        """
        for stored in await self._repository.unfinished():
            tournament = self._loaded(stored)
            self.live[tournament.code] = tournament
            if tournament.status == "running":
                where = await self._resumption(tournament)
                resumed = {
                    "tournament": tournament.code,
                    "round": tournament.current_round,
                    "match": where.attached,
                    "next_round": where.next_round,
                }
                log.info("resuming tournament", extra=resumed)
                tournament.task = asyncio.create_task(
                    self._run(
                        tournament,
                        first_round=where.next_round,
                        attached=where.attached,
                        pause_s=where.pause_s,
                    )
                )
            elif tournament.start_at is not None:
                tournament.task = asyncio.create_task(self._start_at(tournament))

    async def _resumption(self, tournament: LiveTournament) -> Resumption:
        """Where running ``tournament`` goes on: see ``resume``."""
        number = tournament.current_round
        if number == 0:  # stopped between its start and the deal of round 1
            return Resumption(None, 1, 0.0)
        match = self._lobby.round_match(tournament.id, number)
        if match is not None and match.status not in ("finished", "abandoned"):
            # Attached with no await since the status was read: its end is not missed.
            self._attach(tournament, match)
            tournament.playing = True
            return Resumption(match.code, number + 1, 0.0)
        stored = await self._repository.round(tournament.id, number)
        if stored is not None and stored.status in UNFINISHED:
            tournament.playing = True
            # In a cluster, run by another process (or soon: once the lease of the one
            # that died runs out, another takes it over); waited for in the database.
            return Resumption(stored.code, number + 1, 0.0)
        if stored is not None and stored.status == "finished":
            ended_at = stored.ended_at or self._now()
            await self._round_ended_event(tournament, number, stored.code, ended_at=ended_at)
            if number == tournament.rounds:
                return Resumption(None, number + 1, 0.0)
            elapsed_s = (self._now() - ended_at).total_seconds()
            return Resumption(None, number + 1, max(0.0, self._break_s - elapsed_s))
        log.warning(
            "tournament round not found: dealt again",
            extra={"tournament": tournament.code, "round": number},
        )
        if stored is not None:
            await self._repository.abandon_round(stored.match_id, at=self._now())
        return Resumption(None, number, 0.0)

    async def close(self) -> None:
        """Stop running every tournament (a restart, or another process leading now
        resumes them from the database)."""
        tasks = [t.task for t in self.live.values() if t.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.live.clear()
        for done in self._round_ended.values():
            done.cancel()
        self._round_ended.clear()
