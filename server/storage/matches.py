"""The matches repository: a match's row, its seats, and reading its actions back.

(Actions are written by ``server.storage.journal``, which batches them.)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final, cast

from sqlalchemy import (
    Table,
    and_,
    bindparam,
    delete,
    false,
    func,
    insert,
    or_,
    select,
    update,
)

from server.storage.counting import with_reviews
from server.storage.database import Database
from server.storage.models import ActionRecord, Match, MatchPlayer, Player, SeatReview

#: Every code a match can have.
STORED_CODE: Final = re.compile(r"[A-Z0-9]{1,8}")

# A match's single-row writes, built once: building a statement took about a third of
# the CPU one such write costs (docs/benchmarks.md), and a match makes about ten.
# The columns set or inserted are the keys of the parameters given.
_MATCHES: Final = cast(Table, Match.__table__)
_SEATS: Final = cast(Table, MatchPlayer.__table__)
_INSERT_MATCH: Final = insert(_MATCHES).returning(_MATCHES.c.id)
_INSERT_SEAT: Final = insert(_SEATS)
_UPDATE_MATCH: Final = update(_MATCHES).where(_MATCHES.c.id == bindparam("at_match_id"))
_ONE_SEAT: Final = and_(
    _SEATS.c.match_id == bindparam("at_match_id"), _SEATS.c.player_id == bindparam("at_player_id")
)
#: Sets the columns named by its parameters' keys on the seat ``at_match_id``,
#: ``at_player_id`` (given a list of parameters, on each of theirs).
UPDATE_SEAT: Final = update(_SEATS).where(_ONE_SEAT)
_DELETE_SEAT: Final = delete(_SEATS).where(_ONE_SEAT)


def _check_columns(table: Table, values: Mapping[str, Any]) -> None:
    """A prebuilt statement would silently drop a key that is no column."""
    if not values:
        raise ValueError(f"no column of {table.name} to set")
    unknown = sorted(values.keys() - table.c.keys())
    if unknown:
        raise ValueError(f"{table.name} has no column {', '.join(map(repr, unknown))}")


@dataclass(frozen=True)
class StoredMatch:
    """A match as stored: its ``matches`` row, its ``match_players`` rows (with the
    player's ``name``) and its ``actions`` rows (by player, then seq)."""

    match: Any
    seats: list[Any]
    actions: list[Any]


@dataclass(frozen=True)
class Unsolved:
    """A finished match whose par is still to compute: what the solver needs, and the
    best score a player recorded in it (``None`` without seats), which par is never below."""

    id: int
    code: str
    seed: bytes
    ruleset: str
    best_score: int | None


@dataclass(frozen=True)
class StoredPar:
    """A deal's par as stored: ``score``, exact or (``exact`` False) a lower bound."""

    score: int
    exact: bool


class Matches:
    """The ``matches`` and ``match_players`` tables, and ``actions`` for reading."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def create(self, **values: Any) -> int:
        """Store a new match row of ``values``; return its id."""
        _check_columns(_MATCHES, values)
        async with self._database.write() as connection:
            result = await connection.execute(_INSERT_MATCH, values)
            return int(result.scalar_one())

    async def add_player(self, match_id: int, player_id: int, now: datetime) -> None:
        async with self._database.write_alone() as connection:
            await connection.execute(
                _INSERT_SEAT,
                {
                    "match_id": match_id,
                    "player_id": player_id,
                    "joined_at": now,
                    "score": 0,
                    "placed": 0,
                    "redeals": 0,
                    "moves": 0,
                    "won": False,
                },
            )

    async def remove_player(self, match_id: int, player_id: int) -> None:
        async with self._database.write_alone() as connection:
            await connection.execute(
                _DELETE_SEAT, {"at_match_id": match_id, "at_player_id": player_id}
            )

    async def set_status(self, match_id: int, status: str, **times: datetime) -> None:
        await self._update_match(match_id, status=status, **times)

    async def set_ready(self, match_id: int, player_id: int, ready: bool) -> None:
        await self._update_seat(match_id, player_id, ready=ready)

    async def set_host(self, match_id: int, host_id: int) -> None:
        await self._update_match(match_id, host_id=host_id)

    async def save_result(self, match_id: int, player_id: int, **result: Any) -> None:
        """Store a seat's game as it ended (score, finish time, end reason, ...)."""
        await self._update_seat(match_id, player_id, **result)

    async def _update_match(self, match_id: int, **values: Any) -> None:
        _check_columns(_MATCHES, values)
        async with self._database.write_alone() as connection:
            await connection.execute(_UPDATE_MATCH, {"at_match_id": match_id, **values})

    async def _update_seat(self, match_id: int, player_id: int, **values: Any) -> None:
        _check_columns(_SEATS, values)
        async with self._database.write_alone() as connection:
            await connection.execute(
                UPDATE_SEAT, {"at_match_id": match_id, "at_player_id": player_id, **values}
            )

    async def unfinished(
        self, *, kinds: Sequence[str], ids: Collection[int] | None = None
    ) -> list[StoredMatch]:
        """Every match of these kinds still in its lobby or running (of ``ids`` only, if
        given), with its seats (in the order they were taken, names included) and every
        stored action, for a restart or a take-over to restore them."""
        if ids is not None and not ids:
            return []
        async with self._database.read() as connection:
            query = select(Match.__table__).where(
                Match.status.in_(("lobby", "running")), Match.kind.in_(kinds)
            )
            if ids is not None:
                query = query.where(Match.id.in_(sorted(ids)))
            matches = (await connection.execute(query.order_by(Match.id))).all()
            ids = [match.id for match in matches]
            seats: dict[int, list[Any]] = {}
            for seat in (
                await connection.execute(
                    select(MatchPlayer.__table__, Player.name, Player.bot)
                    .join(Player, Player.id == MatchPlayer.player_id)
                    .where(MatchPlayer.match_id.in_(ids))
                    .order_by(MatchPlayer.joined_at, MatchPlayer.player_id)
                )
            ).all():
                seats.setdefault(seat.match_id, []).append(seat)
            actions: dict[int, list[Any]] = {}
            for action in (
                await connection.execute(
                    select(ActionRecord.__table__)
                    .where(ActionRecord.match_id.in_(ids))
                    .order_by(ActionRecord.match_id, ActionRecord.player_id, ActionRecord.seq)
                )
            ).all():
                actions.setdefault(action.match_id, []).append(action)
        return [
            StoredMatch(match, seats.get(match.id, []), actions.get(match.id, []))
            for match in matches
        ]

    async def status_of(self, code: str) -> str | None:
        """The stored status of match ``code`` (``lobby``, ``running``, ``finished``,
        ``abandoned``), or None if no match has this code."""
        if STORED_CODE.fullmatch(code) is None:
            return None
        async with self._database.read() as connection:
            status = (
                await connection.execute(select(Match.status).where(Match.code == code))
            ).scalar_one_or_none()
        return None if status is None else str(status)

    async def replay(self, code: str) -> dict[str, Any] | None:
        """The stored match ``code`` with its results and every action (seed included)."""
        if STORED_CODE.fullmatch(code) is None:
            return None
        async with self._database.read() as connection:
            match = (
                await connection.execute(select(Match.__table__).where(Match.code == code))
            ).first()
            if match is None:
                return None
            players = (
                await connection.execute(
                    with_reviews(
                        select(
                            MatchPlayer.__table__,
                            Player.name,
                            Player.bot,
                            SeatReview.status.label("review"),
                        ).join(Player, Player.id == MatchPlayer.player_id)
                    )
                    .where(MatchPlayer.match_id == match.id)
                    .order_by(MatchPlayer.rank.nulls_last(), MatchPlayer.player_id)
                )
            ).all()
            actions = (
                await connection.execute(
                    select(ActionRecord.__table__)
                    .where(ActionRecord.match_id == match.id)
                    .order_by(ActionRecord.player_id, ActionRecord.seq)
                )
            ).all()
        return {
            "match": match._asdict(),
            "players": [row._asdict() for row in players],
            "actions": [row._asdict() for row in actions],
        }

    async def unsolved(self, *, ids: Collection[int] | None = None) -> list[Unsolved]:
        """Every finished match (of ``ids`` only, if given) whose par is not stored yet,
        oldest first."""
        if ids is not None and not ids:
            return []
        best = (
            select(func.max(MatchPlayer.score))
            .where(MatchPlayer.match_id == Match.id)
            .scalar_subquery()
        )
        query = select(Match.id, Match.code, Match.seed, Match.ruleset, best).where(
            Match.status == "finished", Match.par_score.is_(None)
        )
        if ids is not None:
            query = query.where(Match.id.in_(sorted(ids)))
        async with self._database.read() as connection:
            rows = (await connection.execute(query.order_by(Match.id))).all()
        return [Unsolved(row[0], row[1], bytes(row[2]), row[3], row[4]) for row in rows]

    async def save_par(self, match_id: int, *, score: int, exact: bool) -> bool:
        """Store match ``match_id``'s par, unless what is stored already is as good: an
        exact par, or a lower bound at least ``score`` when this one is not exact either.
        Returns whether it was stored (two processes may solve the same match)."""
        weaker = Match.par_exact == false()
        if not exact:
            weaker = and_(weaker, Match.par_score < score)
        better = or_(Match.par_score.is_(None), weaker)
        async with self._database.write() as connection:
            result = await connection.execute(
                update(Match)
                .where(Match.id == match_id, better)
                .values(par_score=score, par_exact=exact)
            )
            return bool(result.rowcount)

    async def daily_par(self, *, ruleset: str, day: date) -> StoredPar | None:
        """The par of the day's ``ruleset`` challenge, from its matches solved so far: an
        exact one if any, else the highest lower bound (each already at least its player's
        score); ``None`` before any is solved."""
        async with self._database.read() as connection:
            row = (
                await connection.execute(
                    select(Match.par_score, Match.par_exact)
                    .where(
                        Match.kind == "daily",
                        Match.ruleset == ruleset,
                        Match.daily_date == day,
                        Match.par_score.is_not(None),
                    )
                    .order_by(Match.par_exact.desc(), Match.par_score.desc())
                    .limit(1)
                )
            ).first()
        if row is None or row[0] is None:
            return None
        return StoredPar(row[0], bool(row[1]))
