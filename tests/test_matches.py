"""server.storage.matches: a match's row, seats and stored actions, on real databases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.matches import Matches, StoredPar
from server.storage.models import ActionRecord, Match, MatchPlayer
from server.storage.players import PlayerRecord, Players

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def database(migrated_engine: AsyncEngine) -> Database:
    return Database.of(migrated_engine)


async def new_match(database: Database, code: str = "K7QX2M", *, kind: str = "race") -> tuple[
    int, list[PlayerRecord]
]:
    players = Players(database)
    ana = await players.named("ana") or await players.register("ana", "a" * 64, NOW)
    bob = await players.named("bob") or await players.register("bob", "b" * 64, NOW)
    match_id = await Matches(database).create(
        code=code, ruleset="classic", max_players=2, time_limit_s=600, win_by="time",
        public=False, rated=True, host_id=ana.id, status="lobby", seed=b"\x01" * 10,
        commitment="c" * 64, created_at=NOW, kind=kind,
    )
    return match_id, [ana, bob]


@pytest.mark.parametrize("code", ["", "k7qx2m", "K7QX2\x00", "K7QX2\ud800", "K" * 9])
async def test_there_is_no_replay_of_a_code_no_match_can_have(
    database: Database, code: str
) -> None:
    await new_match(database)
    assert await Matches(database).replay(code) is None
    assert await Matches(database).replay("K7QX2M") is not None


async def test_an_unfinished_match_comes_back_with_its_seats_in_order_and_its_actions(
    database: Database,
) -> None:
    matches = Matches(database)
    match_id, (ana, bob) = await new_match(database)
    await matches.add_player(match_id, bob.id, NOW)
    await matches.add_player(match_id, ana.id, NOW + timedelta(seconds=1))
    await matches.set_ready(match_id, bob.id, True)
    await matches.set_status(match_id, "running", started_at=NOW)
    async with database.write() as connection:
        await connection.execute(insert(ActionRecord), [
            {"match_id": match_id, "player_id": ana.id, "seq": seq, "action": "redeal",
             "kind": "redeal", "t_ms": seq, "score": 0}
            for seq in (2, 1)
        ])
    [stored] = await matches.unfinished(kinds=["race"])
    assert stored.match.id == match_id and stored.match.status == "running"
    assert [(seat.name, seat.ready) for seat in stored.seats] == [("bob", True), ("ana", False)]
    assert [action.seq for action in stored.actions] == [1, 2]
    assert await matches.unfinished(kinds=["quick"]) == []


async def test_a_finished_or_abandoned_match_is_not_unfinished(database: Database) -> None:
    matches = Matches(database)
    first, _ = await new_match(database, "AAAAAA")
    second, _ = await new_match(database, "BBBBBB")
    await matches.set_status(first, "abandoned", ended_at=NOW)
    await matches.set_status(second, "finished", ended_at=NOW)
    assert await matches.unfinished(kinds=["race"]) == []


async def test_a_seat_left_is_gone_and_a_seats_result_is_stored(database: Database) -> None:
    matches = Matches(database)
    match_id, (ana, bob) = await new_match(database)
    await matches.add_player(match_id, ana.id, NOW)
    await matches.add_player(match_id, bob.id, NOW)
    await matches.remove_player(match_id, bob.id)
    await matches.set_host(match_id, ana.id)
    await matches.save_result(match_id, ana.id, score=12, finish_ms=3400, end_reason="stopped")
    stored = await matches.replay("K7QX2M")
    assert stored is not None
    assert [(p["name"], p["score"], p["finish_ms"], p["end_reason"])
            for p in stored["players"]] == [("ana", 12, 3400, "stopped")]


Rows = list[tuple[Any, ...]]


async def seats_and_matches(database: Database) -> tuple[Rows, Rows]:
    """Every seat (match, player, ready, score, finish_ms) and every match (id, status,
    host, started_at), in id order."""
    async with database.read() as connection:
        seats = (await connection.execute(
            select(
                MatchPlayer.match_id, MatchPlayer.player_id, MatchPlayer.ready,
                MatchPlayer.score, MatchPlayer.finish_ms,
            ).order_by(MatchPlayer.match_id, MatchPlayer.player_id)
        )).all()
        rows = (await connection.execute(
            select(Match.id, Match.status, Match.host_id, Match.started_at).order_by(Match.id)
        )).all()
    return [tuple(seat) for seat in seats], [tuple(row) for row in rows]


def utc(moment: datetime | None) -> datetime | None:
    """As stored, in UTC (SQLite keeps no zone)."""
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


async def test_a_seats_writes_and_the_matchs_change_only_their_own_rows(
    database: Database,
) -> None:
    matches = Matches(database)
    match_id, (ana, bob) = await new_match(database)
    other_id, _ = await new_match(database, "OTHER1")
    for seated in (match_id, other_id):
        await matches.add_player(seated, ana.id, NOW)
        await matches.add_player(seated, bob.id, NOW)
    await matches.set_ready(match_id, bob.id, True)
    await matches.save_result(match_id, ana.id, score=12, finish_ms=3400)
    await matches.remove_player(match_id, bob.id)
    await matches.set_host(match_id, bob.id)
    await matches.set_status(match_id, "running", started_at=NOW)
    seats, rows = await seats_and_matches(database)
    assert seats == [
        (match_id, ana.id, False, 12, 3400),
        (other_id, ana.id, False, 0, None), (other_id, bob.id, False, 0, None),
    ]
    assert [(*row[:3], utc(row[3])) for row in rows] == [
        (match_id, "running", bob.id, NOW), (other_id, "lobby", ana.id, None)
    ]


async def test_a_value_with_a_name_that_is_no_column_is_refused_by_that_name(
    database: Database,
) -> None:
    matches = Matches(database)
    match_id, (ana, _) = await new_match(database)
    await matches.add_player(match_id, ana.id, NOW)
    before = await seats_and_matches(database)
    with pytest.raises(ValueError, match="match_players has no column 'scor'"):
        await matches.save_result(match_id, ana.id, scor=12, finish_ms=3400)
    with pytest.raises(ValueError, match="matches has no column 'ended'"):
        await matches.set_status(match_id, "finished", ended=NOW)
    with pytest.raises(ValueError, match="matches has no column 'rule_set'"):
        await matches.create(code="NEW123", rule_set="classic")
    assert await seats_and_matches(database) == before


async def test_a_finished_match_is_unsolved_with_its_best_score_until_its_par_is_saved(
    database: Database,
) -> None:
    matches = Matches(database)
    match_id, (ana, bob) = await new_match(database)
    await matches.add_player(match_id, ana.id, NOW)
    await matches.add_player(match_id, bob.id, NOW)
    await matches.save_result(match_id, ana.id, score=12)
    await matches.save_result(match_id, bob.id, score=31)
    assert await matches.unsolved() == []  # still in its lobby
    await matches.set_status(match_id, "finished", ended_at=NOW)
    [unsolved] = await matches.unsolved()
    assert (unsolved.id, unsolved.code, unsolved.seed, unsolved.ruleset, unsolved.best_score) == (
        match_id, "K7QX2M", b"\x01" * 10, "classic", 31
    )
    assert await matches.unsolved(ids=[match_id + 1]) == []
    assert await matches.unsolved(ids=[]) == []
    assert await matches.save_par(match_id, score=40, exact=False)
    assert await matches.unsolved() == []
    stored = await matches.replay("K7QX2M")
    assert stored is not None
    assert (stored["match"]["par_score"], stored["match"]["par_exact"]) == (40, False)


async def test_an_abandoned_match_has_no_par_to_compute(database: Database) -> None:
    matches = Matches(database)
    match_id, _ = await new_match(database)
    await matches.set_status(match_id, "abandoned", ended_at=NOW)
    assert await matches.unsolved() == []


async def test_a_stored_par_is_replaced_only_by_a_better_one(database: Database) -> None:
    matches = Matches(database)
    match_id, _ = await new_match(database)
    await matches.set_status(match_id, "finished", ended_at=NOW)

    async def par() -> tuple[int, bool]:
        stored = await matches.replay("K7QX2M")
        assert stored is not None
        return stored["match"]["par_score"], stored["match"]["par_exact"]

    assert await matches.save_par(match_id, score=30, exact=False)
    assert not await matches.save_par(match_id, score=29, exact=False)
    assert await matches.save_par(match_id, score=33, exact=False)
    assert await par() == (33, False)
    assert await matches.save_par(match_id, score=33, exact=True)
    assert not await matches.save_par(match_id, score=45, exact=False)
    assert not await matches.save_par(match_id, score=45, exact=True)
    assert await par() == (33, True)


async def test_the_daily_par_is_an_exact_one_if_any_else_the_highest_bound(
    database: Database,
) -> None:
    matches = Matches(database)
    day = NOW.date()
    ids = []
    for code in ("AAAAAA", "BBBBBB", "CCCCCC"):
        match_id, _ = await new_match(database, code, kind="daily")
        async with database.write() as connection:
            await connection.execute(
                update(Match).where(Match.id == match_id).values(daily_date=day)
            )
        await matches.set_status(match_id, "finished", ended_at=NOW)
        ids.append(match_id)
    assert await matches.daily_par(ruleset="classic", day=day) is None
    await matches.save_par(ids[0], score=20, exact=False)
    await matches.save_par(ids[1], score=25, exact=False)
    assert await matches.daily_par(ruleset="classic", day=day) == StoredPar(25, False)
    await matches.save_par(ids[2], score=27, exact=True)
    assert await matches.daily_par(ruleset="classic", day=day) == StoredPar(27, True)
    assert await matches.daily_par(ruleset="no-redeal", day=day) is None
    assert await matches.daily_par(ruleset="classic", day=day + timedelta(days=1)) is None
