"""The leaderboards' counted index (server.storage.board_counts): a rank read from the
counts is the rank counting every row ahead gives, ties and order included, whatever
results were folded; the rebuild and migration 0015 count what the folds counted."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage import database
from server.storage.board_counts import Doubling, Width
from server.storage.boards import (
    BOARDS,
    COUNTED,
    Board,
    Result,
    around,
    clear,
    record_results,
    recount,
)
from server.storage.models import BoardCount, BoardEntry, Player

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

#: The last day of a month and the first of the next: month and day boards of both.
DAYS = (datetime(2026, 11, 30, 23, 0, tzinfo=UTC), datetime(2026, 12, 1, 1, 0, tzinfo=UTC))
RULESETS = ("classic", "addiction")
PEOPLE, BOTS = 5, 2

#: Scores and times near one another and on the edges of 1,000 ms buckets: ties in a
#: bucket, ties across buckets, and rows that only the player id orders.
RESULTS = st.builds(
    Result,
    player_id=st.integers(0, PEOPLE + BOTS - 1),
    score=st.integers(-2, 3),
    finish_ms=st.sampled_from([0, 999, 1000, 1001, 1999, 2000, 61_000]),
    won=st.booleans(),
)
MATCHES = st.lists(
    st.tuples(
        st.sampled_from(RULESETS),
        st.sampled_from(DAYS),
        st.lists(RESULTS, min_size=1, max_size=4, unique_by=lambda result: result.player_id),
    ),
    min_size=1,
    max_size=12,
)


@pytest.fixture
def engine(migrated_engine: AsyncEngine) -> AsyncEngine:
    return migrated_engine


async def players(engine: AsyncEngine) -> list[int]:
    """The ids of the test's people then bots, made on first use."""
    async with engine.begin() as connection:
        ids = list(
            (await connection.execute(select(Player.id).order_by(Player.id))).scalars()
        )
        for number in range(len(ids), PEOPLE + BOTS):
            ids.append(
                (
                    await connection.execute(
                        insert(Player)
                        .values(
                            name=f"p{number}",
                            token_hash=f"{number:064d}",
                            created_at=DAYS[0],
                            bot=number >= PEOPLE,
                        )
                        .returning(Player.id)
                    )
                ).scalar_one()
            )
    return ids


async def fold(engine: AsyncEngine, matches: Sequence[tuple[str, datetime, list[Result]]]) -> None:
    ids = await players(engine)
    async with engine.begin() as connection:
        await clear(connection)
    for ruleset, ended_at, results in matches:
        async with engine.begin() as connection:
            await record_results(
                connection,
                ruleset=ruleset,
                ended_at=ended_at,
                results=[
                    Result(ids[r.player_id], r.score, r.finish_ms, r.won) for r in results
                ],
            )


def sort_key(board: Board, row: Any) -> tuple[Any, ...]:
    return tuple(-row[name] if descending else row[name] for name, descending in board.key)


async def ranks_by_counting(engine: AsyncEngine, board: Board) -> dict[tuple[Any, ...], int]:
    """Every row's rank, from all the board's rows sorted: (ruleset, period, start, bot,
    player id) -> rank on the board of the player's kind."""
    async with engine.connect() as connection:
        rows = (
            await connection.execute(
                select(BoardEntry.__table__, Player.bot)
                .join(Player, Player.id == BoardEntry.player_id)
                .where(board.on_board())
            )
        ).mappings().all()
    ranks = {}
    for row in rows:
        rivals = [
            other
            for other in rows
            if (other["ruleset"], other["period"], other["period_start"], other["bot"])
            == (row["ruleset"], row["period"], row["period_start"], row["bot"])
        ]
        ahead = sum(1 for other in rivals if sort_key(board, other) < sort_key(board, row))
        where = ("ruleset", "period", "period_start", "bot", "player_id")
        ranks[tuple(row[name] for name in where)] = ahead + 1
    return ranks


async def counts(engine: AsyncEngine) -> set[tuple[Any, ...]]:
    async with engine.connect() as connection:
        rows = await connection.execute(select(BoardCount.__table__).where(BoardCount.rows != 0))
        return {tuple(row) for row in rows}


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(matches=MATCHES)
async def test_a_rank_from_the_counts_is_the_rank_counting_every_row_ahead_gives(
    engine: AsyncEngine, matches: list[tuple[str, datetime, list[Result]]]
) -> None:
    await fold(engine, matches)
    for board in COUNTED:
        expected = await ranks_by_counting(engine, board)
        async with engine.connect() as connection:
            for (ruleset, period, start, bot, player_id), rank in expected.items():
                found = await around(
                    connection,
                    ruleset=ruleset,
                    by=board.name,
                    period=period,
                    day=start,
                    player_id=player_id,
                    neighbours=0,
                    provisional_games=10,
                    kind="bots" if bot else "people",
                )
                assert found["rank"] == rank, (board.name, ruleset, period, start, player_id)
    folded = await counts(engine)
    async with engine.begin() as connection:
        await recount(connection)
    assert await counts(engine) == folded


async def test_migration_0015_counts_what_the_folds_counted_and_its_downgrade_drops_them(
    engine: AsyncEngine,
) -> None:
    ids = range(PEOPLE + BOTS)
    await fold(
        engine,
        [
            (ruleset, day, [Result(p, p % 4 - 1, 997 * p, p % 3 == 0) for p in ids])
            for ruleset in RULESETS
            for day in DAYS
        ]
        + [("classic", DAYS[0], [Result(1, 3, 64_000 + n, True)]) for n in range(40)],
    )
    folded = await counts(engine)
    assert any(row[0] == "wins" and row[6] > 32 for row in folded)  # 41 games: doubled
    for revision in ("0014", "head"):
        async with engine.begin() as connection:
            await connection.run_sync(
                lambda sync, revision=revision: (
                    command.downgrade if revision == "0014" else command.upgrade
                )(database.alembic_config(sync), revision)
            )
    assert await counts(engine) == folded


@given(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1))
def test_a_bucket_holds_the_values_from_its_first_to_its_past(value: int, other: int) -> None:
    for coarse in (Width(1000), Doubling()):
        bucket = coarse.bucket(value)
        first, past = coarse.first(bucket), coarse.past(bucket)
        assert first <= value < past
        assert coarse.bucket(first) == coarse.bucket(past - 1) == bucket < coarse.bucket(past)
        if value < other:
            assert bucket <= coarse.bucket(other)


def test_every_board_of_board_entries_is_counted() -> None:
    assert {board.name for board in COUNTED} == {
        name for name, board in BOARDS.items() if board.table is BoardEntry.__table__
    }


def test_the_days_span_a_month_boundary() -> None:
    assert {day.date().replace(day=1) for day in DAYS} == {date(2026, 11, 1), date(2026, 12, 1)}
