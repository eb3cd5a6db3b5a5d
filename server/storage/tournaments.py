"""The tournaments repository: every query about tournaments, their entrants, their
rounds and the totals their standings add up.

A tournament's rows are ``tournaments`` (one), ``tournament_entries`` (one per
entrant), ``tournament_deals`` (the seed of each round, drawn before anyone entered),
``tournament_announcements`` (what its host said to everyone), and for tables in the
room ``tournament_arbiters``, ``tournament_rounds`` (when each round's play began),
``tournament_tables`` (who played each round at a table) and
``tournament_entered_results`` (the tables' results, kept apart from the server's);
its rounds are the ``matches`` of kind ``tournament`` that name it, with their round
number; the totals of its standings are summed from the results of those rounds that
finished (``match_players``), so that they can always be computed again from what is
stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from gaps import RulesetName
from gaps_protocol.messages.common import Deals, IfEmpty, TournamentStatus
from server.storage.database import Database
from server.storage.models import (
    Match,
    MatchPlayer,
    Player,
    Tournament,
    TournamentAnnouncement,
    TournamentArbiter,
    TournamentDeal,
    TournamentEnteredResult,
    TournamentEntry,
    TournamentRound,
    TournamentTable,
)

#: How many of a tournament's last announcements come back with it.
ANNOUNCEMENTS_READ = 10


def _utc(moment: datetime | None) -> datetime | None:
    """``moment`` with its zone: SQLite keeps none, and the server stores UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class StoredTournament:
    """A tournament as stored: its ``tournaments`` row, and its entrants (player id,
    name) in the order they joined; which of them are declared bots, and which the host
    removed (player id -> reason); the seeds of its rounds, in order (none: still being
    drawn, or stored before deals were committed)."""

    id: int
    code: str
    name: str
    host_id: int
    ruleset: RulesetName
    rounds: int
    max_players: int
    round_time_limit_s: int
    start_at: datetime | None
    status: TournamentStatus
    current_round: int
    entrants: list[tuple[int, str]]
    bots: bool = False  # whether bots may enter
    bot_entrants: frozenset[int] = frozenset()
    removed: dict[int, str] = field(default_factory=dict)
    if_empty: IfEmpty = "cancel"
    cancel_reason: str | None = None
    deals: Deals = "any"
    seeds: tuple[bytes, ...] = ()
    #: The organiser's countdown and break (None: the server's settings).
    countdown_s: int | None = None
    break_s: int | None = None
    late_entry_until_round: int = 0
    paused: bool = False
    #: Its last announcements (text, when), oldest first.
    announcements: tuple[tuple[str, datetime], ...] = ()
    #: The entrants who play at a table from the next round dealt.
    at_table: frozenset[int] = frozenset()
    #: The arbiters the host named (player id, name), in the order named.
    arbiters: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class EnteredRow:
    """A table's result in a round, as entered."""

    player_id: int
    placed: int
    redeals: int
    finish_ms: int
    won: bool
    score: int
    entered_by: int
    entered_at: datetime


@dataclass(frozen=True)
class StoredTables:
    """What a tournament stored of its rounds for tables in the room, by round number:
    when each one's play began and whether it had a match (``online``), who played it
    at a table, and the results entered."""

    started: dict[int, datetime] = field(default_factory=dict)
    online: dict[int, bool] = field(default_factory=dict)
    tables: dict[int, tuple[int, ...]] = field(default_factory=dict)
    entered: dict[int, tuple[EnteredRow, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class RoundResult:
    """One player's result in a finished round: their score and finish time."""

    player_id: int
    score: int
    finish_ms: int


@dataclass(frozen=True)
class StoredRound:
    """The match of one round, as stored: the last one dealt for that round number, with
    its results once it finished."""

    number: int
    match_id: int
    code: str
    status: str
    ended_at: datetime | None
    results: tuple[RoundResult, ...] = ()


@dataclass(frozen=True)
class PlayedSeat:
    """One player's line in a round's match, as the match stored it (its result once
    their game ended; ``rank`` once the match ended)."""

    player_id: int
    name: str
    bot: bool
    score: int
    placed: int
    redeals: int
    won: bool
    end_reason: str | None
    finish_ms: int | None
    rank: int | None


@dataclass(frozen=True)
class PlayedRound:
    """The match last dealt for one round, with every seat's line: what an export of
    the round shows."""

    number: int
    code: str
    status: str
    commitment: str
    par_score: int | None
    par_exact: bool | None
    ended_at: datetime | None
    seats: tuple[PlayedSeat, ...]


@dataclass(frozen=True)
class StandingRow:
    """One entrant's line of the standings, as ``record_standings`` stores it."""

    player_id: int
    total_score: int
    total_time_ms: int
    rounds_played: int
    rank: int


class DealsAlreadyCommitted(Exception):
    """Other seeds than these are committed for the tournament already."""


class TournamentRepository:
    """The tournaments' rows; each method is one transaction."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def create(
        self,
        *,
        code: str,
        name: str,
        host_id: int,
        ruleset: str,
        rounds: int,
        max_players: int,
        round_time_limit_s: int,
        start_at: datetime | None,
        created_at: datetime,
        bots: bool = False,
        if_empty: str = "cancel",
        deals: str = "any",
        seeds: Sequence[bytes] = (),
        countdown_s: int | None = None,
        break_s: int | None = None,
        late_entry_until_round: int = 0,
    ) -> int:
        """Store a new open tournament, before its first round (``bots``: whether
        declared bots may enter; ``if_empty``: what its scheduled start does with nobody
        entered; ``deals``: ``any`` or ``winnable``; ``countdown_s`` and ``break_s``: the
        organiser's, None for the server's; ``late_entry_until_round``: 0 for no late
        entry), with the ``seeds`` of its rounds when they are drawn already; its id."""
        async with self._database.write() as connection:
            tournament_id = (
                await connection.execute(
                    insert(Tournament)
                    .values(
                        code=code,
                        name=name,
                        host_id=host_id,
                        ruleset=ruleset,
                        rounds=rounds,
                        max_players=max_players,
                        round_time_limit_s=round_time_limit_s,
                        start_at=start_at,
                        status="open",
                        current_round=0,
                        created_at=created_at,
                        bots=bots,
                        if_empty=if_empty,
                        deals=deals,
                        countdown_s=countdown_s,
                        break_s=break_s,
                        late_entry_until_round=late_entry_until_round,
                    )
                    .returning(Tournament.id)
                )
            ).scalar_one()
            if seeds:
                await self._insert_deals(connection, tournament_id, seeds)
        return int(tournament_id)

    async def commit_deals(self, tournament_id: int, seeds: Sequence[bytes]) -> None:
        """Store the seeds of the tournament's rounds, in order, once drawn. Run again
        with the same seeds (its answer was lost), it changes nothing; other seeds than
        those stored are refused (``DealsAlreadyCommitted``): a commitment never changes."""
        try:
            async with self._database.write() as connection:
                await self._insert_deals(connection, tournament_id, seeds)
        except IntegrityError:
            stored = await self.deals(tournament_id)
            if stored != tuple(seeds):
                raise DealsAlreadyCommitted(
                    f"tournament {tournament_id} has other deals committed already"
                ) from None

    async def deals(self, tournament_id: int) -> tuple[bytes, ...]:
        """The seeds of the tournament's rounds, in order (none: not drawn yet)."""
        async with self._database.read() as connection:
            rows = await self._deals(connection, [tournament_id])
        return rows.get(tournament_id, ())

    @staticmethod
    async def _insert_deals(
        connection: AsyncConnection, tournament_id: int, seeds: Sequence[bytes]
    ) -> None:
        await connection.execute(
            insert(TournamentDeal),
            [
                {"tournament_id": tournament_id, "round": number, "seed": seed}
                for number, seed in enumerate(seeds, start=1)
            ],
        )

    @staticmethod
    async def _deals(
        connection: AsyncConnection, tournament_ids: Sequence[int]
    ) -> dict[int, tuple[bytes, ...]]:
        found: dict[int, list[bytes]] = {}
        for row in (
            await connection.execute(
                select(TournamentDeal.tournament_id, TournamentDeal.seed)
                .where(TournamentDeal.tournament_id.in_(list(tournament_ids)))
                .order_by(TournamentDeal.tournament_id, TournamentDeal.round)
            )
        ).all():
            found.setdefault(row.tournament_id, []).append(bytes(row.seed))
        return {key: tuple(seeds) for key, seeds in found.items()}

    async def add_entrant(
        self, tournament_id: int, player_id: int, *, at: datetime, position: int | None = None
    ) -> bool:
        """Enter ``player_id``, ``position``-th in the joining order; False if they had
        entered already."""
        try:
            async with self._database.write() as connection:
                await connection.execute(
                    insert(TournamentEntry).values(
                        tournament_id=tournament_id,
                        player_id=player_id,
                        joined_at=at,
                        position=position,
                        total_score=0,
                        total_time_ms=0,
                        rounds_played=0,
                    )
                )
        except IntegrityError:
            return False
        return True

    async def remove_entrant(
        self, tournament_id: int, player_id: int, *, reason: str, at: datetime
    ) -> bool:
        """Mark ``player_id`` removed by the host, with ``reason``: kept out of every
        round dealt from now on, also by a tournament resumed elsewhere; False if they
        had no entry or were removed already."""
        async with self._database.write() as connection:
            removed = await connection.execute(
                update(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    TournamentEntry.player_id == player_id,
                    TournamentEntry.removed_at.is_(None),
                )
                .values(removed_at=at, removed_reason=reason)
            )
        return bool(removed.rowcount)

    async def reinstate_entrant(self, tournament_id: int, player_id: int) -> bool:
        """Take back ``player_id``, whom the host had removed: seated again in every round
        dealt from now on; False if they had no entry or were not removed."""
        async with self._database.write() as connection:
            reinstated = await connection.execute(
                update(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    TournamentEntry.player_id == player_id,
                    TournamentEntry.removed_at.is_not(None),
                )
                .values(removed_at=None, removed_reason=None)
            )
        return bool(reinstated.rowcount)

    async def name_arbiter(self, tournament_id: int, player_id: int, *, at: datetime) -> None:
        """Name ``player_id`` an arbiter of the tournament (again: nothing changes)."""
        try:
            async with self._database.write() as connection:
                await connection.execute(
                    insert(TournamentArbiter).values(
                        tournament_id=tournament_id, player_id=player_id, named_at=at
                    )
                )
        except IntegrityError:
            pass  # named already: the answer of the first write was lost

    async def set_table(self, tournament_id: int, player_id: int, *, at_table: bool) -> None:
        """The entrant plays at a table (``at_table``) or online from the next round."""
        async with self._database.write() as connection:
            await connection.execute(
                update(TournamentEntry)
                .where(
                    TournamentEntry.tournament_id == tournament_id,
                    TournamentEntry.player_id == player_id,
                )
                .values(at_table=at_table)
            )

    async def begin_round(
        self, tournament_id: int, number: int, *, tables: Sequence[int]
    ) -> None:
        """Round ``number`` is dealt next, ``tables`` playing it at a table (dealt again:
        those of the new deal)."""
        async with self._database.write() as connection:
            await connection.execute(
                update(Tournament).where(Tournament.id == tournament_id)
                .values(current_round=number)
            )
            await connection.execute(
                delete(TournamentTable).where(
                    TournamentTable.tournament_id == tournament_id,
                    TournamentTable.round == number,
                )
            )
            if tables:
                await connection.execute(
                    insert(TournamentTable),
                    [{"tournament_id": tournament_id, "round": number, "player_id": p}
                     for p in tables],
                )

    async def start_round(
        self, tournament_id: int, number: int, *, at: datetime, online: bool
    ) -> None:
        """Round ``number``'s play begins ``at`` (a round dealt again: its new start)."""
        async with self._database.write() as connection:
            await connection.execute(
                delete(TournamentRound).where(
                    TournamentRound.tournament_id == tournament_id,
                    TournamentRound.round == number,
                )
            )
            await connection.execute(
                insert(TournamentRound).values(
                    tournament_id=tournament_id, round=number, started_at=at, online=online
                )
            )

    async def enter_result(self, tournament_id: int, number: int, row: EnteredRow) -> None:
        """Keep a table's result in round ``number``, replacing one entered before."""
        async with self._database.write() as connection:
            await connection.execute(
                delete(TournamentEnteredResult).where(
                    TournamentEnteredResult.tournament_id == tournament_id,
                    TournamentEnteredResult.round == number,
                    TournamentEnteredResult.player_id == row.player_id,
                )
            )
            await connection.execute(
                insert(TournamentEnteredResult).values(
                    tournament_id=tournament_id, round=number, player_id=row.player_id,
                    placed=row.placed, redeals=row.redeals, finish_ms=row.finish_ms,
                    won=row.won, score=row.score, entered_by=row.entered_by,
                    entered_at=row.entered_at,
                )
            )

    async def tables(self, tournament_id: int) -> StoredTables:
        """What the tournament stored of its rounds for tables in the room."""
        found = StoredTables()
        async with self._database.read() as connection:
            for row in (
                await connection.execute(
                    select(TournamentRound).where(TournamentRound.tournament_id == tournament_id)
                )
            ).all():
                found.started[row.round] = _utc(row.started_at) or row.started_at
                found.online[row.round] = bool(row.online)
            tables: dict[int, list[int]] = {}
            for table in (
                await connection.execute(
                    select(TournamentTable)
                    .join(TournamentEntry, (TournamentEntry.tournament_id
                                            == TournamentTable.tournament_id)
                          & (TournamentEntry.player_id == TournamentTable.player_id))
                    .where(TournamentTable.tournament_id == tournament_id)
                    # In the joining order, as the rounds seat them.
                    .order_by(TournamentTable.round, TournamentEntry.position,
                              TournamentEntry.joined_at, TournamentTable.player_id)
                )
            ).all():
                tables.setdefault(table.round, []).append(table.player_id)
            entered: dict[int, list[EnteredRow]] = {}
            for result in (
                await connection.execute(
                    select(TournamentEnteredResult)
                    .where(TournamentEnteredResult.tournament_id == tournament_id)
                    .order_by(TournamentEnteredResult.round, TournamentEnteredResult.entered_at,
                              TournamentEnteredResult.player_id)
                )
            ).all():
                entered.setdefault(result.round, []).append(
                    EnteredRow(
                        result.player_id, result.placed, result.redeals, result.finish_ms,
                        bool(result.won), result.score, result.entered_by,
                        _utc(result.entered_at) or result.entered_at,
                    )
                )
        found.tables.update({number: tuple(ids) for number, ids in tables.items()})
        found.entered.update({number: tuple(rows) for number, rows in entered.items()})
        return found

    async def announce(self, tournament_id: int, text: str, *, at: datetime) -> None:
        """Keep what the host said to everyone, at ``at``."""
        async with self._database.write() as connection:
            await connection.execute(
                insert(TournamentAnnouncement).values(
                    tournament_id=tournament_id, text=text, at=at
                )
            )

    async def update(self, tournament_id: int, **values: Any) -> None:
        """Write ``values`` (``status``, ``current_round``, ``started_at``, ...) to the
        tournament's row."""
        async with self._database.write() as connection:
            await connection.execute(
                update(Tournament).where(Tournament.id == tournament_id).values(**values)
            )

    async def ended(self, code: str) -> StoredTournament | None:
        """The finished or cancelled tournament ``code`` (upper case), if there is one."""
        async with self._database.read() as connection:
            found = await self._tournaments(
                connection,
                (Tournament.code == code, Tournament.status.in_(("finished", "cancelled"))),
            )
        return found[0] if found else None

    async def ended_recently(self, *, limit: int) -> list[StoredTournament]:
        """The last ``limit`` tournaments to end (finished or cancelled), newest first."""
        async with self._database.read() as connection:
            ids = (
                await connection.execute(
                    select(Tournament.id)
                    .where(Tournament.status.in_(("finished", "cancelled")))
                    .order_by(Tournament.ended_at.desc(), Tournament.id.desc())
                    .limit(limit)
                )
            ).scalars().all()
            found = await self._tournaments(connection, (Tournament.id.in_(list(ids)),))
        order = {tournament_id: position for position, tournament_id in enumerate(ids)}
        return sorted(found, key=lambda stored: order[stored.id])

    async def unfinished(self) -> list[StoredTournament]:
        """Every tournament open or running, oldest first."""
        async with self._database.read() as connection:
            return await self._tournaments(
                connection, (Tournament.status.in_(("open", "running")),)
            )

    async def _tournaments(
        self, connection: AsyncConnection, where: Sequence[Any]
    ) -> list[StoredTournament]:
        rows = (
            await connection.execute(
                select(Tournament.__table__).where(*where).order_by(Tournament.id)
            )
        ).all()
        entrants: dict[int, list[tuple[int, str]]] = {}
        bots: dict[int, set[int]] = {}
        removed: dict[int, dict[int, str]] = {}
        at_table: dict[int, set[int]] = {}
        for entry in (
            await connection.execute(
                select(
                    TournamentEntry.tournament_id,
                    TournamentEntry.removed_at,
                    TournamentEntry.removed_reason,
                    TournamentEntry.at_table,
                    Player.id,
                    Player.name,
                    Player.bot,
                )
                .join(Player, Player.id == TournamentEntry.player_id)
                .where(TournamentEntry.tournament_id.in_([row.id for row in rows]))
                # Entries stored before positions were kept have none: by their time.
                .order_by(TournamentEntry.position, TournamentEntry.joined_at, Player.id)
            )
        ).all():
            entrants.setdefault(entry.tournament_id, []).append((entry.id, entry.name))
            if entry.bot:
                bots.setdefault(entry.tournament_id, set()).add(entry.id)
            if entry.removed_at is not None:
                removed.setdefault(entry.tournament_id, {})[entry.id] = entry.removed_reason or ""
            if entry.at_table:
                at_table.setdefault(entry.tournament_id, set()).add(entry.id)
        arbiters: dict[int, list[tuple[int, str]]] = {}
        for arbiter in (
            await connection.execute(
                select(TournamentArbiter.tournament_id, Player.id, Player.name)
                .join(Player, Player.id == TournamentArbiter.player_id)
                .where(TournamentArbiter.tournament_id.in_([row.id for row in rows]))
                .order_by(TournamentArbiter.named_at, Player.id)
            )
        ).all():
            arbiters.setdefault(arbiter.tournament_id, []).append((arbiter.id, arbiter.name))
        seeds = await self._deals(connection, [row.id for row in rows])
        announcements = await self._announcements(connection, [row.id for row in rows])
        return [
            StoredTournament(
                id=row.id,
                code=row.code,
                name=row.name,
                host_id=row.host_id,
                ruleset=row.ruleset,
                rounds=row.rounds,
                max_players=row.max_players,
                round_time_limit_s=row.round_time_limit_s,
                start_at=_utc(row.start_at),
                status=row.status,
                current_round=row.current_round,
                entrants=entrants.get(row.id, []),
                bots=row.bots,
                bot_entrants=frozenset(bots.get(row.id, ())),
                removed=removed.get(row.id, {}),
                if_empty=row.if_empty,
                cancel_reason=row.cancel_reason,
                deals=row.deals,
                seeds=seeds.get(row.id, ()),
                countdown_s=row.countdown_s,
                break_s=row.break_s,
                late_entry_until_round=row.late_entry_until_round,
                paused=bool(row.paused),
                announcements=announcements.get(row.id, ()),
                at_table=frozenset(at_table.get(row.id, ())),
                arbiters=tuple(arbiters.get(row.id, ())),
            )
            for row in rows
        ]

    @staticmethod
    async def _announcements(
        connection: AsyncConnection, tournament_ids: Sequence[int]
    ) -> dict[int, tuple[tuple[str, datetime], ...]]:
        """The last ``ANNOUNCEMENTS_READ`` announcements of each tournament, oldest first."""
        found: dict[int, list[tuple[str, datetime]]] = {}
        for row in (
            await connection.execute(
                select(
                    TournamentAnnouncement.tournament_id,
                    TournamentAnnouncement.text,
                    TournamentAnnouncement.at,
                )
                .where(TournamentAnnouncement.tournament_id.in_(list(tournament_ids)))
                .order_by(TournamentAnnouncement.tournament_id, TournamentAnnouncement.id)
            )
        ).all():
            found.setdefault(row.tournament_id, []).append((row.text, _utc(row.at) or row.at))
        return {key: tuple(said[-ANNOUNCEMENTS_READ:]) for key, said in found.items()}

    async def rounds(
        self, tournament_id: int, number: int | None = None
    ) -> list[StoredRound]:
        """The match last dealt for each round (or only round ``number``), by round
        number, with the results of those that finished."""
        where = [Match.tournament_id == tournament_id]
        if number is not None:
            where.append(Match.round == number)
        async with self._database.read() as connection:
            matches = (
                await connection.execute(
                    select(Match.id, Match.round, Match.code, Match.status, Match.ended_at)
                    .where(*where)
                    .order_by(Match.round, Match.id)
                )
            ).all()
            last = {row.round: row for row in matches}  # the last dealt of each round
            finished = [row.id for row in last.values() if row.status == "finished"]
            results: dict[int, list[RoundResult]] = {}
            if finished:
                for row in (
                    await connection.execute(
                        select(
                            MatchPlayer.match_id,
                            MatchPlayer.player_id,
                            MatchPlayer.score,
                            MatchPlayer.finish_ms,
                        )
                        .where(MatchPlayer.match_id.in_(finished))
                        .order_by(MatchPlayer.match_id, MatchPlayer.player_id)
                    )
                ).all():
                    results.setdefault(row.match_id, []).append(
                        RoundResult(row.player_id, int(row.score or 0), int(row.finish_ms or 0))
                    )
        return [
            StoredRound(
                number=int(row.round),
                match_id=row.id,
                code=row.code,
                status=row.status,
                ended_at=_utc(row.ended_at),
                results=tuple(results.get(row.id, ())),
            )
            for _, row in sorted(last.items())
        ]

    async def played(self, tournament_id: int) -> list[PlayedRound]:
        """The match last dealt for each round, by round number, with each seat's line
        as the match stored it: the rounds' export (server/exports.py)."""
        async with self._database.read() as connection:
            matches = (
                await connection.execute(
                    select(
                        Match.id, Match.round, Match.code, Match.status, Match.commitment,
                        Match.par_score, Match.par_exact, Match.ended_at,
                    )
                    .where(Match.tournament_id == tournament_id)
                    .order_by(Match.round, Match.id)
                )
            ).all()
            last = {row.round: row for row in matches}  # the last dealt of each round
            seats: dict[int, list[PlayedSeat]] = {}
            for row in (
                await connection.execute(
                    select(
                        MatchPlayer.match_id, MatchPlayer.player_id, MatchPlayer.score,
                        MatchPlayer.placed, MatchPlayer.redeals, MatchPlayer.won,
                        MatchPlayer.end_reason, MatchPlayer.finish_ms, MatchPlayer.rank,
                        Player.name, Player.bot,
                    )
                    .join(Player, Player.id == MatchPlayer.player_id)
                    .where(MatchPlayer.match_id.in_([row.id for row in last.values()]))
                    .order_by(
                        MatchPlayer.match_id, MatchPlayer.rank.nulls_last(), MatchPlayer.player_id
                    )
                )
            ).all():
                seats.setdefault(row.match_id, []).append(
                    PlayedSeat(
                        player_id=row.player_id,
                        name=row.name,
                        bot=bool(row.bot),
                        score=int(row.score or 0),
                        placed=int(row.placed or 0),
                        redeals=int(row.redeals or 0),
                        won=bool(row.won),
                        end_reason=row.end_reason,
                        finish_ms=row.finish_ms,
                        rank=row.rank,
                    )
                )
        return [
            PlayedRound(
                number=int(number),
                code=row.code,
                status=row.status,
                commitment=row.commitment,
                par_score=row.par_score,
                par_exact=row.par_exact,
                ended_at=_utc(row.ended_at),
                seats=tuple(seats.get(row.id, ())),
            )
            for number, row in sorted(last.items())
        ]

    async def record_standings(self, tournament_id: int, rows: Sequence[StandingRow]) -> None:
        """Store the standings on the entrants' rows, in player id order (two
        transactions writing the same rows never wait on each other in a cycle)."""
        async with self._database.write() as connection:
            for row in sorted(rows, key=lambda row: row.player_id):
                await connection.execute(
                    update(TournamentEntry)
                    .where(
                        TournamentEntry.tournament_id == tournament_id,
                        TournamentEntry.player_id == row.player_id,
                    )
                    .values(
                        total_score=row.total_score,
                        total_time_ms=row.total_time_ms,
                        rounds_played=row.rounds_played,
                        rank=row.rank,
                    )
                )
