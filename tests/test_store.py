"""server.storage.store: the repositories of one database, and the methods callers used
before repositories (delegating to them), on real databases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.journal import Journal
from server.storage.players import NameTaken
from server.storage.results import FinishedGame
from server.storage.store import Store

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


async def test_a_store_of_an_engine_and_a_journal_of_it_write_through_one_database(
    migrated_engine: AsyncEngine,
) -> None:
    store = Store(migrated_engine)
    assert store.database is Database.of(migrated_engine)
    assert store.database.engine is migrated_engine
    assert Store(store.database).database is store.database
    journal = Journal(migrated_engine)
    assert journal._database is store.database


async def test_the_repositories_of_one_store_share_its_database_from_register_to_replay(
    migrated_engine: AsyncEngine,
) -> None:
    store = Store(migrated_engine)
    ana = await store.players.register("ana", "a" * 64, NOW)
    bob = await store.players.register("bob", "b" * 64, NOW)
    try:
        await store.players.register("ANA", "c" * 64, NOW)
    except NameTaken:
        pass
    else:
        raise AssertionError("a name taken in another case was registered")
    assert await store.players.by_token_hash("a" * 64) == ana
    assert await store.players.named("BOB") == bob
    match_id = await store.matches.create(
        code="K7QX2M", ruleset="classic", max_players=2, time_limit_s=600, win_by="score",
        public=False, rated=True, host_id=ana.id, status="lobby", seed=b"\x01" * 10,
        commitment="c" * 64, created_at=NOW,
    )
    for player in (ana, bob):
        await store.matches.add_player(match_id, player.id, NOW)
        await store.matches.set_ready(match_id, player.id, True)
    await store.matches.set_status(match_id, "running", started_at=NOW)
    assert [m.match.id for m in await store.matches.unfinished(kinds=["race"])] == [match_id]
    for player, score in ((ana, 20), (bob, 10)):
        await store.matches.save_result(match_id, player.id, score=score, finish_ms=1000)
    table = [FinishedGame(ana.id, 1, 20, 1000, False), FinishedGame(bob.id, 2, 10, 1000, False)]
    end = await store.results.finish_match(match_id, NOW, table, ruleset="classic", rated=True)
    again = await store.results.finish_match(match_id, NOW, table, ruleset="classic", rated=True)
    assert again == end and [r["player_id"] for r in end.ratings] == [ana.id, bob.id]
    assert await store.matches.unfinished(kinds=["race"]) == []
    replay = await store.matches.replay("K7QX2M")
    assert replay is not None and replay["match"]["status"] == "finished"
    assert (await store.ratings.ordinal(ana.id, "classic") or 0) > (
        await store.ratings.ordinal(bob.id, "classic") or 0
    )
