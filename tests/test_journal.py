"""server.storage.journal: group-committed action rows, on real databases (no mocks).

The ``database_url`` fixture (tests/conftest.py) is a fresh empty database on each backend in
turn: a real PostgreSQL started for the session, and an SQLite file.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, insert, select
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage import database
from server.storage.journal import Journal, StoredBefore
from server.storage.models import ActionRecord, Match, Player

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Setup:
    engine: AsyncEngine
    journal: Journal
    match_id: int
    player_ids: list[int]

    def row(self, seq: int, *, player: int = 0, match_id: int | None = None,
            **changes: Any) -> dict[str, Any]:
        """An action row as the match writes it."""
        row: dict[str, Any] = {
            "match_id": self.match_id if match_id is None else match_id,
            "player_id": self.player_ids[player], "seq": seq, "action": "8C", "kind": "move",
            "card": "8C", "from_slot": "r3c7", "to_slot": "r1c5", "t_ms": seq * 10,
            "score": seq % 40,
        }
        row.update(changes)
        return row

    async def stored(self) -> list[tuple[int, int, str, int]]:
        """(player id, seq, action, t_ms) of every committed row."""
        async with self.engine.connect() as connection:
            rows = (await connection.execute(
                select(ActionRecord.player_id, ActionRecord.seq, ActionRecord.action,
                       ActionRecord.t_ms)
                .order_by(ActionRecord.player_id, ActionRecord.seq)
            )).all()
        return [tuple(row) for row in rows]  # type: ignore[misc]


async def migrated_engine(url: str, data_dir: Path) -> tuple[AsyncEngine, int, list[int]]:
    engine = database.create_engine(database.database_url(url, data_dir=data_dir))
    await database.migrate(engine)
    async with engine.begin() as connection:
        player_ids = [
            (await connection.execute(
                insert(Player).values(name=name, token_hash=name * 16, created_at=NOW)
                .returning(Player.id))).scalar_one()
            for name in ("ana", "bob")
        ]
        match_id = (await connection.execute(
            insert(Match).values(
                code="K7QX2M", ruleset="classic", max_players=2, time_limit_s=600,
                win_by="time", public=False, rated=True, host_id=player_ids[0],
                status="running", seed=b"\x01" * 10, commitment="c" * 64, created_at=NOW,
            ).returning(Match.id))).scalar_one()
    return engine, match_id, player_ids


@pytest.fixture
async def setup(database_url: str, tmp_path: Path) -> AsyncIterator[Setup]:
    """A migrated database with two players and a match, and a started journal."""
    engine, match_id, player_ids = await migrated_engine(database_url, tmp_path)
    journal = Journal(engine)
    journal.start()
    yield Setup(engine, journal, match_id, player_ids)
    await journal.close()
    await engine.dispose()


async def test_an_appended_row_is_committed_with_every_column_when_append_returns(
    setup: Setup,
) -> None:
    move = setup.row(3, action="8C>r1c5", kind="move", card="8C", from_slot="r3c7",
                     to_slot="r1c5", t_ms=123_456, score=-5)
    redeal = setup.row(4, action="redeal", kind="redeal", card=None, from_slot=None,
                       to_slot=None)
    await setup.journal.append(move)
    assert await setup.stored() == [(setup.player_ids[0], 3, "8C>r1c5", 123_456)]
    assert (setup.journal.rows_committed, setup.journal.batches_committed) == (1, 1)
    await setup.journal.append(redeal)
    assert (setup.journal.rows_committed, setup.journal.batches_committed) == (2, 2)
    async with setup.engine.connect() as connection:
        rows = (await connection.execute(
            select(ActionRecord.__table__).order_by(ActionRecord.seq))).all()
    stored = [{k: v for k, v in row._asdict().items() if k != "id"} for row in rows]
    assert stored == [move, redeal]


async def test_concurrent_appends_are_committed_in_fewer_batches_than_rows(setup: Setup) -> None:
    rows = [setup.row(seq, player=seq % 2) for seq in range(1, 201)]
    await asyncio.gather(*(setup.journal.append(row) for row in rows))
    assert len(await setup.stored()) == 200
    assert setup.journal.rows_committed == 200
    assert 1 <= setup.journal.batches_committed < 200


async def test_a_batch_holds_at_most_max_batch_rows(setup: Setup) -> None:
    journal = Journal(setup.engine, max_batch_rows=7)
    journal.start()
    try:
        await asyncio.gather(*(journal.append(setup.row(seq)) for seq in range(1, 51)))
    finally:
        await journal.close()
    assert journal.rows_committed == 50
    assert journal.batches_committed >= -(-50 // 7)
    assert len(await setup.stored()) == 50


async def test_a_row_for_an_unknown_match_raises_and_later_appends_still_commit(
    setup: Setup,
) -> None:
    await setup.journal.append(setup.row(1))
    with pytest.raises(IntegrityError):
        await setup.journal.append(setup.row(2, match_id=setup.match_id + 1000))
    assert setup.journal.rows_committed == 1
    await setup.journal.append(setup.row(2))
    for attempt in range(3):
        with pytest.raises(IntegrityError):
            await setup.journal.append(setup.row(3 + attempt, player_id=10_000))
    await asyncio.gather(*(setup.journal.append(setup.row(seq)) for seq in range(3, 23)))
    assert [seq for _, seq, _, _ in await setup.stored()] == list(range(1, 23))
    assert setup.journal.rows_committed == 22


async def test_a_refused_row_fails_alone_and_the_rows_of_its_batch_are_committed(
    setup: Setup,
) -> None:
    good = [setup.row(seq) for seq in range(1, 21)]
    bad = setup.row(21, match_id=setup.match_id + 1000)
    outcomes = await asyncio.gather(
        *(setup.journal.append(row) for row in good[:10] + [bad] + good[10:]),
        return_exceptions=True,
    )
    assert [type(outcome) for outcome in outcomes] == (
        [type(None)] * 10 + [IntegrityError] + [type(None)] * 10
    )
    assert [seq for _, seq, _, _ in await setup.stored()] == list(range(1, 21))
    assert setup.journal.rows_committed == 20


async def test_a_seq_stored_before_is_refused_as_such_and_the_first_row_stands(
    setup: Setup,
) -> None:
    """A row whose key is stored already (an earlier try taken by the database though
    its answer was lost) says so: its writer reads the match again."""
    await setup.journal.append(setup.row(1, action="3H"))
    with pytest.raises(StoredBefore) as before:
        await setup.journal.append(setup.row(1, action="QH"))
    assert (before.value.player_id, before.value.seq) == (setup.player_ids[0], 1)
    await setup.journal.append(setup.row(1, player=1, action="QH"))
    assert await setup.stored() == [(setup.player_ids[0], 1, "3H", 10),
                                    (setup.player_ids[1], 1, "QH", 10)]


async def test_close_commits_the_rows_still_queued_then_refuses_appends(setup: Setup) -> None:
    journal = setup.journal
    pending = [asyncio.create_task(journal.append(setup.row(seq))) for seq in range(1, 31)]
    await asyncio.sleep(0)  # every append has queued its row, none is committed yet
    assert not any(task.done() for task in pending)
    await journal.close()
    assert all(task.done() and task.exception() is None for task in pending)
    assert len(await setup.stored()) == 30
    assert journal.rows_committed == 30
    with pytest.raises(RuntimeError):
        await journal.append(setup.row(31))
    await journal.close()  # closing again is harmless
    assert len(await setup.stored()) == 30


async def test_an_append_racing_with_close_never_hangs(database_url: str, tmp_path: Path) -> None:
    engine, match_id, player_ids = await migrated_engine(database_url, tmp_path)
    journal = Journal(engine)
    journal.start()
    setup = Setup(engine, journal, match_id, player_ids)
    try:
        first = asyncio.create_task(journal.append(setup.row(1)))
        closing = asyncio.create_task(journal.close())
        for _ in range(3):
            await asyncio.sleep(0)  # the writer is now committing row 1, its last batch
        assert not closing.done()
        late = asyncio.create_task(journal.append(setup.row(2)))
        await asyncio.wait_for(closing, 5)
        await first
        # The late row is either committed or refused, but its caller gets an answer.
        finished, _ = await asyncio.wait({late}, timeout=0.5)
        if not finished:
            late.cancel()
            pytest.fail("an append made while close() committed the last batch never returned")
        if isinstance(late.exception(), RuntimeError):
            assert [seq for _, seq, _, _ in await setup.stored()] == [1]
        else:
            assert late.exception() is None
            assert [seq for _, seq, _, _ in await setup.stored()] == [1, 2]
    finally:
        await engine.dispose()


async def test_an_append_before_start_is_refused_and_closing_it_is_harmless() -> None:
    engine = database.create_engine("sqlite+aiosqlite:///:memory:")
    journal = Journal(engine)
    try:
        with pytest.raises(RuntimeError):
            await journal.append({"match_id": 1})
        await journal.close()
    finally:
        await engine.dispose()


async def test_a_cancelled_append_does_not_break_the_writer(setup: Setup) -> None:
    cancelled = asyncio.create_task(setup.journal.append(setup.row(1)))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await setup.journal.append(setup.row(2))
    assert 2 in [seq for _, seq, _, _ in await setup.stored()]


def test_sqlite_keeps_no_leases_so_its_journal_fences_no_row() -> None:
    journal = Journal(database.create_engine("sqlite+aiosqlite://"))
    with pytest.raises(ValueError, match="match 7: SQLite keeps no leases to fence rows with"):
        journal.fence(7, 1)


async def test_on_postgresql_the_writer_keeps_one_connection_until_it_idles_or_fails(
    database_url: str, tmp_path: Path
) -> None:
    engine, match_id, player_ids = await migrated_engine(database_url, tmp_path)
    if engine.dialect.name == "sqlite":
        await engine.dispose()
        pytest.skip("SQLite writes through the one writer's queue, not a kept connection")
    checkouts: list[None] = []
    checkins: asyncio.Queue[None] = asyncio.Queue()
    event.listen(engine.sync_engine.pool, "checkout", lambda *_: checkouts.append(None))
    event.listen(engine.sync_engine.pool, "checkin", lambda *_: checkins.put_nowait(None))
    setup = Setup(engine, Journal(engine, idle_connection_s=600), match_id, player_ids)
    setup.journal.start()
    try:
        for seq in range(1, 4):  # three batches, one after the other: one checkout
            await setup.journal.append(setup.row(seq))
        assert (len(checkouts), checkins.qsize()) == (1, 0)
        with pytest.raises(DBAPIError):  # a failed statement gives it back at once
            await setup.journal.append(setup.row(4, t_ms=2**40))  # past an integer column
        assert (len(checkouts), checkins.qsize()) == (1, 1)
        await setup.journal.append(setup.row(4))
        assert len(checkouts) == 2
    finally:
        await setup.journal.close()
    idle = Journal(engine, idle_connection_s=0.01)
    idle.start()
    try:
        while not checkins.empty():  # the first journal's
            checkins.get_nowait()
        await idle.append(setup.row(5))
        await asyncio.wait_for(checkins.get(), 10)  # idle: back to the pool, unasked
        await idle.append(setup.row(6))
        assert [seq for _, seq, _, _ in await setup.stored()] == [1, 2, 3, 4, 5, 6]
    finally:
        await idle.close()
        await engine.dispose()


def test_a_journal_refuses_an_idle_time_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="idle_connection_s must be above 0, not 0"):
        Journal(database.create_engine("sqlite+aiosqlite://"), idle_connection_s=0)
