"""server.storage.matches: a match's row, seats and stored actions, on real databases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.matches import Matches
from server.storage.models import ActionRecord
from server.storage.players import PlayerRecord, Players

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
