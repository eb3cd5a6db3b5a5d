"""The reviews repository: results held by timing flags, operators' decisions on them and
on accounts, and the audit log of those decisions (docs/fair-play.md).

A result counts on the boards and ratings unless its seat has a review whose status is
not ``cleared`` (``server.storage.counting``). The fold as each match ends
(``Results.finish_match``) and the rebuild (``server.storage.rebuild``) both skip those
seats, so a decision that changes what counts (clear, void) refolds the boards and
ratings in its own transaction: they are then exactly what a rebuild gives.

The audit log is append-only: this module only inserts into it and reads it, and the
database refuses UPDATE and DELETE on it (migration 0008's triggers).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from gaps_protocol.times import format_time
from server.errors import ServerError
from server.fairplay import TimingRules, chart, judge
from server.storage.counting import CLEARED, HELD, SUSPENDED, VOIDED, with_reviews
from server.storage.database import Database
from server.storage.models import (
    ActionRecord,
    AuditEntry,
    Match,
    MatchPlayer,
    Player,
    SeatReview,
    Suspension,
)
from server.storage.rebuild import refold

#: The most rows one listing returns.
MAX_LISTED: Final = 100


async def review_seats(
    connection: AsyncConnection,
    *,
    match_id: int,
    player_ids: Sequence[int],
    bots: Collection[int] = (),
    at: datetime,
    rules: TimingRules,
) -> dict[int, str]:
    """In the caller's transaction (the match's end): hold the results of ``player_ids``
    in ``match_id`` that the timing ``rules`` flag, and mark those of players suspended
    at ``at``; returns the status of each seat that does not count. Declared ``bots``
    are not judged by their timing (they play as software, on boards of their own: the
    flags are the net for a program registered as a person), only marked if suspended."""
    suspended = set(
        (
            await connection.execute(
                select(Suspension.player_id).where(
                    Suspension.player_id.in_(player_ids), Suspension.since <= at
                )
            )
        ).scalars()
    )
    times = await _times_of(connection, match_id, player_ids)
    statuses = {}
    reviews = []
    for player_id in sorted(player_ids):
        verdict = judge(times.get(player_id, []), rules)
        if player_id in suspended:
            status = SUSPENDED
        elif verdict.flagged and player_id not in bots:
            status = HELD
        else:
            continue
        statuses[player_id] = status
        reviews.append(
            {
                "match_id": match_id,
                "player_id": player_id,
                "status": status,
                "flags": ",".join(verdict.flags),
                "intervals": verdict.intervals,
                "median_ms": verdict.median_ms,
                "spread_ratio": verdict.spread_ratio,
                "created_at": at,
            }
        )
    if reviews:
        # One statement for all the seats (the end of a match holds its players' rows).
        await connection.execute(insert(SeatReview), reviews)
    return statuses


async def statuses_of(connection: AsyncConnection, match_id: int) -> dict[int, str]:
    """The status of every reviewed seat of ``match_id``."""
    rows = await connection.execute(
        select(SeatReview.player_id, SeatReview.status).where(SeatReview.match_id == match_id)
    )
    return {row.player_id: row.status for row in rows}


async def _times_of(
    connection: AsyncConnection, match_id: int, player_ids: Sequence[int]
) -> dict[int, list[int]]:
    rows = await connection.execute(
        select(ActionRecord.player_id, ActionRecord.t_ms)
        .where(ActionRecord.match_id == match_id, ActionRecord.player_id.in_(player_ids))
        .order_by(ActionRecord.player_id, ActionRecord.seq)
    )
    times: dict[int, list[int]] = {}
    for row in rows:
        times.setdefault(row.player_id, []).append(row.t_ms)
    return times


@dataclass(frozen=True)
class Decision:
    """One entry of the audit log."""

    at: datetime
    operator: str
    decision: str
    target: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "at": format_time(self.at),
            "operator": self.operator,
            "decision": self.decision,
            "target": self.target,
            "reason": self.reason,
        }


class Reviews:
    """Held results, operators' decisions and the audit log."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def held(self, *, limit: int = MAX_LISTED) -> list[dict[str, Any]]:
        """The results held for review, oldest first, each with its timing chart."""
        async with self._database.read() as connection:
            rows = (
                await connection.execute(
                    select(SeatReview.__table__, Match.code, Match.ruleset, Player.name)
                    .join(Match, Match.id == SeatReview.match_id)
                    .join(Player, Player.id == SeatReview.player_id)
                    .where(SeatReview.status == HELD)
                    .order_by(SeatReview.created_at, SeatReview.match_id, SeatReview.player_id)
                    .limit(min(limit, MAX_LISTED))
                )
            ).all()
            listed = []
            for row in rows:
                times = (await _times_of(connection, row.match_id, [row.player_id])).get(
                    row.player_id, []
                )
                listed.append(
                    {
                        "match_code": row.code,
                        "ruleset": row.ruleset,
                        "player_id": row.player_id,
                        "name": row.name,
                        "flags": row.flags.split(",") if row.flags else [],
                        "intervals": row.intervals,
                        "median_ms": row.median_ms,
                        "spread_ratio": row.spread_ratio,
                        "held_at": format_time(row.created_at),
                        "chart": chart(times),
                    }
                )
        return listed

    async def clear(self, *, code: str, name: str, operator: str, reason: str, at: datetime) -> int:
        """Let a held result count from now on; returns the matches refolded."""
        return await self._decide(
            code=code, name=name, operator=operator, reason=reason, at=at, decision="clear"
        )

    async def void(self, *, code: str, name: str, operator: str, reason: str, at: datetime) -> int:
        """Take a result off the boards and ratings for good, as if it never counted;
        returns the matches refolded."""
        return await self._decide(
            code=code, name=name, operator=operator, reason=reason, at=at, decision="void"
        )

    async def _decide(
        self, *, code: str, name: str, operator: str, reason: str, at: datetime, decision: str
    ) -> int:
        async with self._database.write() as connection:
            seat = (
                await connection.execute(
                    with_reviews(
                        select(
                            MatchPlayer.match_id,
                            MatchPlayer.player_id,
                            Player.name,
                            SeatReview.status,
                        )
                        .join(Match, Match.id == MatchPlayer.match_id)
                        .join(Player, Player.id == MatchPlayer.player_id)
                    ).where(
                        Match.code == code.upper(),
                        func.lower(Player.name) == name.lower(),
                        Match.status == "finished",
                        Match.rated.is_(True),
                    )
                )
            ).first()
            if seat is None:
                raise ServerError(
                    "no_such_result",
                    f"{name} has no result in a finished rated match {code.upper()}",
                )
            if decision == "clear" and seat.status != HELD:
                raise ServerError(
                    "already_decided",
                    f"{seat.name}'s result in {code.upper()} is not held "
                    f"({seat.status or 'it counts'}): only a held result is cleared",
                )
            if decision == "void" and seat.status == VOIDED:
                raise ServerError(
                    "already_decided",
                    f"{seat.name}'s result in {code.upper()} is voided already",
                )
            name = seat.name  # as registered, whatever the case it was asked in
            status = CLEARED if decision == "clear" else VOIDED
            if seat.status is None:
                await connection.execute(
                    insert(SeatReview).values(
                        match_id=seat.match_id,
                        player_id=seat.player_id,
                        status=status,
                        flags="",
                        intervals=0,
                        created_at=at,
                        decided_at=at,
                    )
                )
            else:
                await connection.execute(
                    update(SeatReview)
                    .where(
                        SeatReview.match_id == seat.match_id,
                        SeatReview.player_id == seat.player_id,
                    )
                    .values(status=status, decided_at=at)
                )
            await _log(
                connection,
                at=at,
                operator=operator,
                decision=decision,
                target=f"match {code.upper()} player {name}",
                reason=reason,
            )
            return await refold(connection)

    async def suspend(self, *, name: str, operator: str, reason: str, at: datetime) -> None:
        """Suspend an account from rated play: its results of matches ending from ``at``
        on do not count."""
        async with self._database.write() as connection:
            player = (
                await connection.execute(
                    select(Player.id, Player.name).where(func.lower(Player.name) == name.lower())
                )
            ).first()
            if player is None:
                raise ServerError("no_such_player", f"no player is named {name!r}")
            player_id, name = player.id, player.name
            known = (
                await connection.execute(
                    select(Suspension.since).where(Suspension.player_id == player_id)
                )
            ).scalar_one_or_none()
            if known is not None:
                raise ServerError(
                    "already_decided", f"{name} is suspended already, since {format_time(known)}"
                )
            await connection.execute(
                insert(Suspension).values(player_id=player_id, since=at, reason=reason)
            )
            await _log(
                connection,
                at=at,
                operator=operator,
                decision="suspend",
                target=f"player {name}",
                reason=reason,
            )

    async def suspension_of(self, player_id: int) -> dict[str, Any] | None:
        """The player's suspension from rated play (``since``, ``reason``), if any."""
        async with self._database.read() as connection:
            row = (
                await connection.execute(
                    select(Suspension.since, Suspension.reason).where(
                        Suspension.player_id == player_id
                    )
                )
            ).first()
        if row is None:
            return None
        return {"since": format_time(row.since), "reason": row.reason}

    async def audit_log(self, *, limit: int = MAX_LISTED) -> list[Decision]:
        """The latest decisions, newest first."""
        async with self._database.read() as connection:
            rows = (
                await connection.execute(
                    select(AuditEntry.__table__)
                    .order_by(AuditEntry.id.desc())
                    .limit(min(limit, MAX_LISTED))
                )
            ).all()
        return [
            Decision(_utc(row.at), row.operator, row.decision, row.target, row.reason)
            for row in rows
        ]

    async def statuses(self, match_id: int) -> dict[int, str]:
        """The status of every reviewed seat of a match."""
        async with self._database.read() as connection:
            return await statuses_of(connection, match_id)


async def _log(
    connection: AsyncConnection,
    *,
    at: datetime,
    operator: str,
    decision: str,
    target: str,
    reason: str,
) -> None:
    await connection.execute(
        insert(AuditEntry).values(
            at=at, operator=operator, decision=decision, target=target, reason=reason
        )
    )


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
