"""server.storage.database.Database on SQLite: one writer that every write queues for, and
read-only readers that never wait for it (no mocks: a real SQLite file, real connections).

A "slow disk" is a commit that takes a while: an event on the writing engine awaits
before each commit, as a slow fsync would, so that callers pile up behind the writer.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, insert, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.util import await_only

from server.storage.database import SQLITE_BUSY_TIMEOUT_S, Database, create_engine
from server.storage.journal import Journal
from server.storage.matches import Matches
from server.storage.models import ActionRecord, Player
from server.storage.outage import is_outage, until_stored
from server.storage.players import Players
from server.storage.rebuild import rebuild_boards_and_ratings
from server.storage.results import FinishedGame, Results
from tests.test_rebuild import assert_same_rows, derived_rows

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CALLERS = 120
#: How long a slow disk takes to commit.
SLOW_COMMIT_S = 0.004


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "gaps.sqlite3"


@pytest.fixture
async def database(path: Path) -> AsyncIterator[Database]:
    """A migrated SQLite database."""
    opened = Database(f"sqlite+aiosqlite:///{path}")
    await opened.migrate()
    yield opened
    await opened.dispose()


@pytest.fixture
def slow_disk(database: Database) -> Iterator[list[int]]:
    """Makes each commit of the writer wait ``SLOW_COMMIT_S`` first; yields the number of
    connections that were inside a commit at once, sampled at each commit."""
    inside = [0]
    overlaps: list[int] = []

    def commit(_connection: Any) -> None:
        inside[0] += 1
        overlaps.append(inside[0])
        await_only(asyncio.sleep(SLOW_COMMIT_S))  # runs in SQLAlchemy's greenlet
        inside[0] -= 1

    event.listen(database.engine.sync_engine, "commit", commit)
    yield overlaps
    event.remove(database.engine.sync_engine, "commit", commit)


async def names_in_id_order(database: Database) -> list[str]:
    async with database.read() as connection:
        return list((await connection.execute(select(Player.name).order_by(Player.id))).scalars())


# --- one writer ------------------------------------------------------------------------


async def test_concurrent_writes_on_a_slow_disk_each_land_once_in_the_order_asked(
    database: Database, slow_disk: list[int]
) -> None:
    async def write(number: int) -> None:
        async with database.write() as connection:
            # A read before the write: the transaction holds the writer from its BEGIN.
            await connection.execute(select(Player.id).limit(1))
            await connection.execute(
                insert(Player).values(name=f"p{number:04d}", token_hash=f"{number:064x}",
                                      created_at=NOW)
            )

    await asyncio.gather(*(write(number) for number in range(CALLERS)))
    assert await names_in_id_order(database) == [f"p{number:04d}" for number in range(CALLERS)]
    assert max(slow_disk) == 1  # never two commits at once: one writer
    assert len(slow_disk) >= CALLERS


async def test_journal_appends_and_repository_writes_share_the_writer_and_all_land(
    database: Database, slow_disk: list[int]
) -> None:
    players = Players(database)
    matches = Matches(database)
    host = await players.register("host", "h" * 64, NOW)
    match_id = await matches.create(
        code="K7QX2M", ruleset="classic", max_players=2, time_limit_s=600, win_by="time",
        public=False, rated=True, host_id=host.id, status="running", seed=b"\x01" * 10,
        commitment="c" * 64, created_at=NOW,
    )
    journal = Journal(database, max_batch_rows=7)
    journal.start()
    try:
        appends = [
            journal.append({
                "match_id": match_id, "player_id": host.id, "seq": seq, "action": "redeal",
                "kind": "redeal", "t_ms": seq, "score": 0,
            })
            for seq in range(1, CALLERS + 1)
        ]
        registrations = [
            players.register(f"p{number:04d}", f"{number:064x}", NOW) for number in range(CALLERS)
        ]
        await asyncio.gather(*appends, *registrations)
    finally:
        await journal.close()
    async with database.read() as connection:
        seqs = list((await connection.execute(
            select(ActionRecord.seq).order_by(ActionRecord.id))).scalars())
    assert seqs == list(range(1, CALLERS + 1))
    assert await names_in_id_order(database) == ["host"] + [f"p{n:04d}" for n in range(CALLERS)]
    assert max(slow_disk) == 1


async def test_a_caller_cancelled_in_the_queue_does_not_stop_the_writes_behind_it(
    database: Database, slow_disk: list[int]
) -> None:
    players = Players(database)
    waiting = [asyncio.create_task(players.register(f"p{n}", f"{n:064x}", NOW)) for n in range(5)]
    await asyncio.sleep(0)
    waiting[2].cancel()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert isinstance(results[2], asyncio.CancelledError)
    assert await names_in_id_order(database) == ["p0", "p1", "p3", "p4"]


async def test_the_engine_of_create_engine_writes_through_the_same_queue(path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    try:
        assert Database.of(engine).engine is engine
        assert Database.of(engine) is Database.of(engine)
        # One writing connection: a second checkout waits for the first to be returned.
        assert engine.sync_engine.pool.size() == 1
    finally:
        await engine.dispose()


# --- readers ---------------------------------------------------------------------------


async def test_the_database_is_in_wal_mode_and_readers_refuse_writes(database: Database) -> None:
    async with database.read() as connection:
        assert (await connection.execute(text("PRAGMA journal_mode"))).scalar_one() == "wal"
        assert (await connection.execute(text("PRAGMA query_only"))).scalar_one() == 1
        with pytest.raises(OperationalError, match="readonly database"):
            await connection.execute(
                insert(Player).values(name="ana", token_hash="a" * 64, created_at=NOW)
            )
    assert await names_in_id_order(database) == []


async def test_a_read_neither_waits_for_an_open_write_nor_sees_it(database: Database) -> None:
    players = Players(database)
    await players.register("ana", "a" * 64, NOW)
    async with database.write() as connection:
        await connection.execute(
            insert(Player).values(name="bob", token_hash="b" * 64, created_at=NOW)
        )
        found = await asyncio.wait_for(players.named("bob"), timeout=5)
        assert found is None
        assert await asyncio.wait_for(names_in_id_order(database), timeout=5) == ["ana"]
    assert await names_in_id_order(database) == ["ana", "bob"]


async def test_the_busy_timeout_is_the_documented_one_on_every_connection(
    database: Database,
) -> None:
    expected = round(SQLITE_BUSY_TIMEOUT_S * 1000)
    async with database.read() as connection:
        assert (await connection.execute(text("PRAGMA busy_timeout"))).scalar_one() == expected
    async with database.write() as connection:
        assert (await connection.execute(text("PRAGMA busy_timeout"))).scalar_one() == expected


# --- another process writing the same file ------------------------------------------------


def hold_the_file(path: Path, *, held: threading.Event, hold_s: float) -> None:
    """Another connection, as another process would: take the write lock (BEGIN
    IMMEDIATE), write a row, keep the lock ``hold_s``, commit."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(
            "INSERT INTO players (name, token_hash, created_at) VALUES (?, ?, ?)",
            ("other", "o" * 64, "2026-03-01 12:00:00.000000"),
        )
        held.set()
        threading.Event().wait(hold_s)
        connection.execute("COMMIT")
    finally:
        connection.close()


async def test_many_repository_writers_beside_a_foreign_lock_never_see_database_is_locked(
    database: Database, path: Path
) -> None:
    players = Players(database)
    matches = Matches(database)
    results = Results(database)
    ids = [(await players.register(f"p{n}", f"{n:064x}", NOW)).id for n in range(8)]
    held = threading.Event()
    other = threading.Thread(target=hold_the_file, args=(path,),
                             kwargs={"held": held, "hold_s": 1.0})
    other.start()
    try:
        await asyncio.to_thread(held.wait, 5)

        async def play(number: int) -> None:
            seats = ids[number % 4 : number % 4 + 2]
            match_id = await matches.create(
                code=f"M{number:05d}", ruleset="classic", max_players=2, time_limit_s=600,
                win_by="score", public=False, rated=True, host_id=seats[0], status="lobby",
                seed=b"\x01" * 10, commitment="c" * 64, created_at=NOW,
            )
            for player_id in seats:
                await matches.add_player(match_id, player_id, NOW)
            await matches.set_status(match_id, "running", started_at=NOW)
            table = [FinishedGame(player_id, rank, 10 - rank, 1000 * rank, rank == 1)
                     for rank, player_id in enumerate(seats, start=1)]
            for game in table:
                await matches.save_result(match_id, game.player_id, score=game.score,
                                          finish_ms=game.finish_ms, won=game.won)
            await results.finish_match(match_id, NOW, table, ruleset="classic", rated=True)

        await asyncio.gather(*(play(number) for number in range(40)),
                             *(players.register(f"q{n}", f"q{n:063x}", NOW) for n in range(40)))
    finally:
        await asyncio.to_thread(other.join)
    async with database.read() as connection:
        finished = (await connection.execute(
            text("SELECT count(*) FROM matches WHERE status = 'finished'"))).scalar_one()
        rated = (await connection.execute(text("SELECT count(*) FROM rating_history"))).scalar_one()
    assert finished == 40
    assert rated == 80
    assert await players.named("other") is not None


async def test_a_read_then_write_waits_for_a_foreign_writer_instead_of_failing(
    database: Database, path: Path
) -> None:
    """pysqlite's deferred BEGIN would read a snapshot, then fail at once with SQLITE_BUSY
    when it writes after the other connection's commit: BEGIN IMMEDIATE waits, then reads
    the other connection's row."""
    held = threading.Event()
    other = threading.Thread(target=hold_the_file, args=(path,),
                             kwargs={"held": held, "hold_s": 0.5})
    other.start()
    try:
        await asyncio.to_thread(held.wait, 5)
        async with database.write() as connection:
            seen = list((await connection.execute(select(Player.name))).scalars())
            await connection.execute(
                insert(Player).values(name="mine", token_hash="m" * 64, created_at=NOW)
            )
    finally:
        await asyncio.to_thread(other.join)
    assert seen == ["other"]
    assert await names_in_id_order(database) == ["other", "mine"]


async def test_a_foreign_lock_held_past_the_busy_timeout_is_an_outage(path: Path) -> None:
    impatient = Database(f"sqlite+aiosqlite:///{path}", busy_timeout_s=0.1)
    await impatient.migrate()
    held = threading.Event()
    other = threading.Thread(target=hold_the_file, args=(path,),
                             kwargs={"held": held, "hold_s": 1.0})
    other.start()
    try:
        await asyncio.to_thread(held.wait, 5)
        with pytest.raises(OperationalError, match="database is locked") as raised:
            await Players(impatient).register("late", "l" * 64, NOW)
        assert is_outage(raised.value)
    finally:
        await asyncio.to_thread(other.join)
        await impatient.dispose()



async def test_the_database_answers_a_health_check_while_a_write_is_open(
    database: Database,
) -> None:
    async with database.write() as connection:
        await connection.execute(
            insert(Player).values(name="ana", token_hash="a" * 64, created_at=NOW)
        )
        assert await database.answers(timeout_s=2)


async def test_many_matches_ending_at_once_beside_a_writer_load_log_no_storage_error(
    database: Database, path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 18's reproduction at the storage seam: every match ends at the same instant,
    while the journal takes a flood of actions and another connection holds the file for
    a while; nothing is retried, and the boards and ratings equal a rebuild."""
    players = Players(database)
    matches = Matches(database)
    results = Results(database)
    ids = [(await players.register(f"p{n}", f"{n:064x}", NOW)).id for n in range(10)]
    ends = []
    for number in range(60):
        seats = [ids[(number + offset) % len(ids)] for offset in range(1 + number % 4)]
        match_id = await matches.create(
            code=f"E{number:05d}", ruleset="classic", max_players=len(seats), time_limit_s=600,
            win_by="score", public=False, rated=True, host_id=seats[0], status="running",
            seed=b"\x01" * 10, commitment="c" * 64, created_at=NOW, started_at=NOW,
        )
        for player_id in seats:
            await matches.add_player(match_id, player_id, NOW)
        ends.append((match_id, [FinishedGame(player_id, rank, 40 - rank - number % 7,
                                             1000 * (rank + number), rank == 1 and number % 3 == 0)
                                for rank, player_id in enumerate(seats, start=1)]))
    journal = Journal(database)
    journal.start()
    held = threading.Event()
    other = threading.Thread(target=hold_the_file, args=(path,),
                             kwargs={"held": held, "hold_s": 0.5})
    caplog.set_level(logging.WARNING, logger="gaps.storage")

    async def end(match_id: int, table: list[FinishedGame]) -> None:
        for game in table:
            await until_stored(
                lambda game=game: matches.save_result(  # type: ignore[misc]
                    match_id, game.player_id, score=game.score, finish_ms=game.finish_ms,
                    won=game.won, end_reason="won" if game.won else "stopped"),
                what="a seat's end",
            )
        await until_stored(
            lambda: results.finish_match(match_id, NOW, table, ruleset="classic", rated=True),
            what="a match's end",
        )

    other.start()
    try:
        await asyncio.to_thread(held.wait, 5)
        await asyncio.gather(
            *(end(match_id, table) for match_id, table in ends),
            *(journal.append({"match_id": ends[0][0], "player_id": ids[0], "seq": seq,
                              "action": "redeal", "kind": "redeal", "t_ms": seq, "score": 0})
              for seq in range(1, 301)),
        )
    finally:
        await asyncio.to_thread(other.join)
        await journal.close()
    assert [record.getMessage() for record in caplog.records] == []
    async with database.read() as connection:
        statuses = list((await connection.execute(text(
            "SELECT status FROM matches WHERE code LIKE 'E%'"))).scalars())
    assert statuses == ["finished"] * 60
    incremental = await derived_rows(database.engine)
    assert await rebuild_boards_and_ratings(database) == 60
    assert_same_rows(await derived_rows(database.engine), incremental)
