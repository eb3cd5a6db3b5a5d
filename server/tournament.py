"""Tournaments in the duplicate format: every entrant plays the same deals, round by round.

Each round is one match for all entrants at once (the same deal for everyone); the
standings add up each entrant's round scores, ties broken by total time. Rounds start by
themselves one after another. The database holds everything needed to go on after a
restart: finished rounds are kept, and a round cut short by the restart is dealt again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from gaps import Ruleset
from server.broker import Broker, BrokerError
from server.errors import ServerError
from server.history import History
from server.lobby import Lobby, new_code
from server.match import Match, MatchOptions
from server.protocol import encode
from server.storage.models import Match as MatchRow
from server.storage.models import MatchPlayer, Player, Tournament, TournamentEntry
from server.storage.store import Store

log = logging.getLogger("gaps.tournament")

PODIUM: Final = 3


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
    round_match: Match | None = None
    task: asyncio.Task[None] | None = None

    @property
    def channel(self) -> str:
        return f"tournament:{self.code}"

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
            "round_match": self.round_match.code if self.round_match else None,
            "entrants": [{"player_id": pid, "name": name} for pid, name in self.entrants.items()],
        }


class Tournaments:
    def __init__(
        self,
        *,
        store: Store,
        lobby: Lobby,
        broker: Broker,
        countdown_s: int,
        break_s: float,
        max_history_events: int,
    ) -> None:
        self._store = store
        self._lobby = lobby
        self._broker = broker
        self._countdown_s = countdown_s
        self._break_s = break_s
        self._max_history_events = max_history_events
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
    ) -> LiveTournament:
        now = datetime.now(UTC)
        if start_at is not None and start_at <= now:
            raise ServerError("bad_message", "start_at must be in the future", field="start_at")
        code = new_code()
        while code in self.live:
            code = new_code()
        async with self._store.engine.begin() as connection:
            tournament_id = (
                await connection.execute(
                    insert(Tournament)
                    .values(
                        code=code,
                        name=name,
                        host_id=host_id,
                        ruleset=ruleset.name,
                        rounds=rounds,
                        max_players=max_players,
                        round_time_limit_s=round_time_limit_s,
                        start_at=start_at,
                        status="open",
                        current_round=0,
                        created_at=now,
                    )
                    .returning(Tournament.id)
                )
            ).scalar_one()
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
        async with self._store.engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(Tournament.__table__).where(
                        Tournament.code == code.upper(), Tournament.status == "finished"
                    )
                )
            ).all()
            loaded = await self._loaded(connection, rows)
        if not loaded:
            raise ServerError("no_such_tournament", f"no tournament has code {code!r}")
        return loaded[0]

    def listed(self) -> list[LiveTournament]:
        return [t for t in self.live.values() if t.status in ("open", "running")]

    async def join(self, code: str, player_id: int, name: str) -> LiveTournament:
        tournament = await self.get(code)
        if player_id in tournament.entrants:
            return tournament
        if tournament.status != "open":
            raise ServerError("already_started", f"tournament {tournament.code} has started")
        if len(tournament.entrants) >= tournament.max_players:
            raise ServerError(
                "tournament_full",
                f"tournament {tournament.code} has its {tournament.max_players} players",
            )
        try:
            async with self._store.engine.begin() as connection:
                await connection.execute(
                    insert(TournamentEntry).values(
                        tournament_id=tournament.id,
                        player_id=player_id,
                        joined_at=datetime.now(UTC),
                        total_score=0,
                        total_time_ms=0,
                        rounds_played=0,
                    )
                )
        except IntegrityError:
            pass  # joined from another connection meanwhile
        tournament.entrants[player_id] = name
        await self._emit(tournament, "entrant_joined", player_id=player_id, name=name)
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
        delay = (tournament.start_at - datetime.now(UTC)).total_seconds()
        await asyncio.sleep(max(0.0, delay))
        if tournament.status == "open":
            await self._begin(tournament)

    async def _begin(self, tournament: LiveTournament) -> None:
        if tournament.status != "open":
            raise ServerError("already_started", f"tournament {tournament.code} has started")
        if not tournament.entrants:
            raise ServerError("bad_message", f"tournament {tournament.code} has no entrants")
        tournament.status = "running"
        await self._save(tournament, status="running", started_at=datetime.now(UTC))
        await self._emit(
            tournament,
            "tournament_started",
            rounds=tournament.rounds,
            entrants=[{"player_id": p, "name": n} for p, n in tournament.entrants.items()],
        )
        tournament.task = asyncio.create_task(self._run(tournament, first_round=1))

    async def _run(self, tournament: LiveTournament, *, first_round: int) -> None:
        try:
            for number in range(first_round, tournament.rounds + 1):
                await self._play_round(tournament, number)
                if number < tournament.rounds:
                    await asyncio.sleep(self._break_s)
            await self._finish(tournament)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("tournament failed", extra={"tournament": tournament.code})

    async def _play_round(self, tournament: LiveTournament, number: int) -> None:
        tournament.current_round = number
        await self._save(tournament, current_round=number)
        options = MatchOptions(
            ruleset=tournament.ruleset,
            max_players=len(tournament.entrants),
            time_limit_s=tournament.round_time_limit_s,
            win_by="score",
            public=False,
            countdown_s=self._countdown_s,
        )
        match = await self._lobby.create(
            tournament.host_id,
            options,
            None,
            seats=list(tournament.entrants.items()),
            connected=False,
            kind="tournament",
            tournament_id=tournament.id,
            round_number=number,
        )
        tournament.round_match = match
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._round_ended[match.id] = done
        await self._emit(
            tournament,
            "round_starting",
            round=number,
            match=match.code,
            countdown_ms=self._countdown_s * 1000,
        )
        await match.start()
        await done
        standings = await self._standings(tournament, record=True)
        await self._emit(
            tournament, "round_ended", round=number, match=match.code, standings=standings
        )

    async def _match_ended(self, match: Match) -> None:
        done = self._round_ended.pop(match.id, None)
        if done is not None and not done.done():
            done.set_result(None)

    async def _finish(self, tournament: LiveTournament) -> None:
        standings = await self._standings(tournament, record=True)
        tournament.status = "finished"
        tournament.round_match = None
        await self._save(tournament, status="finished", ended_at=datetime.now(UTC))
        await self._emit(
            tournament,
            "tournament_ended",
            standings=standings,
            podium=[row for row in standings if row["rank"] <= PODIUM],
        )

    async def _standings(
        self, tournament: LiveTournament, *, record: bool = False
    ) -> list[dict[str, Any]]:
        """Totals over the finished rounds: score (higher first), then time (less first)."""
        async with self._store.engine.begin() as connection:
            totals = {
                row.player_id: row
                for row in (
                    await connection.execute(
                        select(
                            MatchPlayer.player_id,
                            func.sum(MatchPlayer.score).label("score"),
                            func.sum(MatchPlayer.finish_ms).label("time_ms"),
                            func.count().label("rounds"),
                        )
                        .join(MatchRow, MatchRow.id == MatchPlayer.match_id)
                        .where(
                            MatchRow.tournament_id == tournament.id, MatchRow.status == "finished"
                        )
                        .group_by(MatchPlayer.player_id)
                    )
                ).all()
            }
            names = dict(
                (
                    await connection.execute(
                        select(Player.id, Player.name).where(
                            Player.id.in_(list(tournament.entrants))
                        )
                    )
                ).all()
            )
            rows: list[dict[str, Any]] = []
            for player_id in tournament.entrants:
                total = totals.get(player_id)
                rows.append(
                    {
                        "player_id": player_id,
                        "name": names.get(player_id, "?"),
                        "total_score": int(total.score) if total else 0,
                        "total_time_ms": int(total.time_ms or 0) if total else 0,
                        "rounds_played": int(total.rounds) if total else 0,
                    }
                )
            rows.sort(key=lambda r: (-r["total_score"], r["total_time_ms"], r["player_id"]))
            for position, row in enumerate(rows, start=1):
                previous = rows[position - 2] if position > 1 else None
                same = previous is not None and (
                    previous["total_score"],
                    previous["total_time_ms"],
                ) == (row["total_score"], row["total_time_ms"])
                row["rank"] = previous["rank"] if same and previous else position
            if record:
                for row in rows:
                    await connection.execute(
                        update(TournamentEntry)
                        .where(
                            TournamentEntry.tournament_id == tournament.id,
                            TournamentEntry.player_id == row["player_id"],
                        )
                        .values(
                            total_score=row["total_score"],
                            total_time_ms=row["total_time_ms"],
                            rounds_played=row["rounds_played"],
                            rank=row["rank"],
                        )
                    )
        return rows

    async def _save(self, tournament: LiveTournament, **values: Any) -> None:
        """Write ``values`` to the tournament's row."""
        async with self._store.engine.begin() as connection:
            await connection.execute(
                update(Tournament).where(Tournament.id == tournament.id).values(**values)
            )

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

    async def _loaded(
        self, connection: AsyncConnection, rows: Sequence[Row[Any]]
    ) -> list[LiveTournament]:
        """The tournaments of these rows of ``tournaments``, with their entrants."""
        entrants: dict[int, dict[int, str]] = {}
        for entry in (
            await connection.execute(
                select(TournamentEntry.tournament_id, Player.id, Player.name)
                .join(Player, Player.id == TournamentEntry.player_id)
                .where(TournamentEntry.tournament_id.in_([row.id for row in rows]))
                .order_by(TournamentEntry.joined_at, Player.id)
            )
        ).all():
            entrants.setdefault(entry.tournament_id, {})[entry.id] = entry.name
        tournaments = []
        for row in rows:
            start_at = row.start_at
            if start_at is not None and start_at.tzinfo is None:
                start_at = start_at.replace(tzinfo=UTC)
            tournaments.append(
                LiveTournament(
                    row.id,
                    row.code,
                    row.name,
                    row.host_id,
                    Ruleset.named(row.ruleset),
                    row.rounds,
                    row.max_players,
                    row.round_time_limit_s,
                    start_at,
                    row.status,
                    row.current_round,
                    entrants.get(row.id, {}),
                    History(max_events=self._max_history_events),
                )
            )
        return tournaments

    async def resume(self) -> None:
        """Load every unfinished tournament and carry on where the last process stopped."""
        async with self._store.engine.begin() as connection:
            rows = (
                await connection.execute(
                    select(Tournament.__table__).where(Tournament.status.in_(("open", "running")))
                )
            ).all()
            tournaments = await self._loaded(connection, rows)
            # A round match still unfinished died with the old process: give it up.
            await connection.execute(
                update(MatchRow)
                .where(
                    MatchRow.tournament_id.in_([row.id for row in rows]),
                    MatchRow.status.in_(("lobby", "countdown", "running")),
                )
                .values(status="abandoned", ended_at=datetime.now(UTC))
            )
            finished_rounds = dict(
                (
                    await connection.execute(
                        select(MatchRow.tournament_id, func.max(MatchRow.round))
                        .where(
                            MatchRow.tournament_id.in_([row.id for row in rows]),
                            MatchRow.status == "finished",
                        )
                        .group_by(MatchRow.tournament_id)
                    )
                ).all()
            )
        for tournament in tournaments:
            self.live[tournament.code] = tournament
            if tournament.status == "running":
                next_round = (finished_rounds.get(tournament.id) or 0) + 1
                resumed = {"tournament": tournament.code, "round": next_round}
                log.info("resuming tournament", extra=resumed)
                tournament.task = asyncio.create_task(self._run(tournament, first_round=next_round))
            elif tournament.start_at is not None:
                tournament.task = asyncio.create_task(self._start_at(tournament))

    async def close(self) -> None:
        tasks = [t.task for t in self.live.values() if t.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
