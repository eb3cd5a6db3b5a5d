"""server.storage.daily_entries: the server's secrets and the daily challenge entries, on
real databases."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.storage.daily_entries import AlreadyEntered, DailyEntries
from server.storage.database import Database
from server.storage.matches import Matches
from server.storage.models import DailyEntry, SeatReview
from server.storage.players import Players

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAY = date(2026, 3, 1)
#: The boards of these tests rank the accounts registered before this (all of them, at NOW).
RANKED_BEFORE = NOW + timedelta(hours=1)


@pytest.fixture
def database(migrated_engine: AsyncEngine) -> Database:
    return Database.of(migrated_engine)


async def test_a_secret_is_made_once_and_kept(database: Database) -> None:
    entries = DailyEntries(database)
    first = await entries.secret("daily", b"1" * 32)
    assert first == b"1" * 32
    assert await entries.secret("daily", b"2" * 32) == first
    assert await entries.secret("other", b"3" * 32) == b"3" * 32


async def test_a_secret_another_process_stored_meanwhile_is_the_one_used(
    database: Database,
) -> None:
    entries = DailyEntries(database)
    theirs = await DailyEntries(database).secret("daily", b"1" * 32)
    reads: list[str] = []
    read = entries._secret

    async def missed_first(connection: AsyncConnection, name: str) -> bytes | None:
        reads.append(name)  # the first read ran before the other process's commit
        return None if len(reads) == 1 else await read(connection, name)

    entries._secret = missed_first  # type: ignore[method-assign]
    assert await entries.secret("daily", b"2" * 32) == theirs
    assert reads == ["daily", "daily"]


async def player_and_match(
    database: Database, name: str, *, registered_at: datetime = NOW
) -> tuple[int, int]:
    player = await Players(database).register(name, name[0] * 64, registered_at)
    match_id = await Matches(database).create(
        code=f"D{name.upper()}", ruleset="classic", max_players=1, time_limit_s=1800,
        win_by="score", public=False, rated=True, host_id=player.id, status="running",
        seed=b"\x01" * 10, commitment="c" * 64, created_at=NOW, kind="daily", daily_date=DAY,
    )
    return player.id, match_id


async def test_a_second_entry_of_a_player_for_a_day_and_ruleset_is_refused(
    database: Database,
) -> None:
    entries = DailyEntries(database)
    ana, match_id = await player_and_match(database, "ana")
    assert not await entries.played(ruleset="classic", day=DAY, player_id=ana)
    await entries.enter(ruleset="classic", day=DAY, player_id=ana, match_id=match_id)
    assert await entries.played(ruleset="classic", day=DAY, player_id=ana)
    assert not await entries.played(ruleset="addiction", day=DAY, player_id=ana)
    with pytest.raises(AlreadyEntered, match="classic"):
        await entries.enter(ruleset="classic", day=DAY, player_id=ana, match_id=match_id)


async def test_the_results_list_finished_entries_best_score_then_fastest(
    database: Database,
) -> None:
    entries = DailyEntries(database)
    scores = {"ana": (30, 5000), "bob": (40, 9000), "cyd": (40, 7000), "dan": None}
    for name, result in scores.items():
        player_id, match_id = await player_and_match(database, name)
        await entries.enter(ruleset="classic", day=DAY, player_id=player_id, match_id=match_id)
        if result is not None:
            async with database.write() as connection:
                await connection.execute(
                    update(DailyEntry)
                    .where(DailyEntry.match_id == match_id)
                    .values(score=result[0], finish_ms=result[1])
                )
    found = await entries.results(
        ruleset="classic", day=DAY, registered_before=RANKED_BEFORE, limit=10
    )
    assert [(r.name, r.score, r.finish_ms) for r in found] == [
        ("cyd", 40, 7000), ("bob", 40, 9000), ("ana", 30, 5000)
    ]
    first = await entries.results(
        ruleset="classic", day=DAY, registered_before=RANKED_BEFORE, limit=1
    )
    assert [r.name for r in first] == ["cyd"]


async def test_only_accounts_registered_before_the_given_instant_are_on_the_board(
    database: Database,
) -> None:
    """The daily board ranks the accounts registered before its day began: one made at
    that instant or later is left out (server.daily), to the microsecond, on both backends."""
    entries = DailyEntries(database)
    began = datetime(2026, 3, 1, tzinfo=UTC)
    registered = {"old": began - timedelta(microseconds=1), "new": began, "late": NOW}
    for name, at in registered.items():
        player_id, match_id = await player_and_match(database, name, registered_at=at)
        await entries.enter(ruleset="classic", day=DAY, player_id=player_id, match_id=match_id)
        async with database.write() as connection:
            await connection.execute(
                update(DailyEntry).where(DailyEntry.match_id == match_id).values(
                    score=50 if name == "late" else 10, finish_ms=1000
                )
            )
    ranked = await entries.results(ruleset="classic", day=DAY, registered_before=began, limit=10)
    assert [r.name for r in ranked] == ["old"]
    later = await entries.results(
        ruleset="classic", day=DAY, registered_before=began + timedelta(days=1), limit=10
    )
    assert [r.name for r in later] == ["late", "old", "new"]  # ties: by player id


@pytest.mark.parametrize(("status", "shown"), [("held", False), ("voided", False),
                                               ("suspended", False), ("cleared", True)])
async def test_a_result_that_does_not_count_is_off_the_days_board(
    database: Database, status: str, shown: bool
) -> None:
    entries = DailyEntries(database)
    for name, score in (("ana", 30), ("bob", 40)):
        player_id, match_id = await player_and_match(database, name)
        await entries.enter(ruleset="classic", day=DAY, player_id=player_id, match_id=match_id)
        async with database.write() as connection:
            await connection.execute(
                update(DailyEntry).where(DailyEntry.match_id == match_id).values(
                    score=score, finish_ms=1000
                )
            )
            if name == "bob":
                await connection.execute(insert(SeatReview).values(
                    match_id=match_id, player_id=player_id, status=status, flags="fast",
                    intervals=40, created_at=NOW,
                ))
    found = await entries.results(
        ruleset="classic", day=DAY, registered_before=RANKED_BEFORE, limit=10
    )
    assert [r.name for r in found] == (["bob", "ana"] if shown else ["ana"])
