"""Matches sharing players that end at the same instant: each end is stored (retried as
the match retries it), and the boards and ratings are what a rebuild from the stored
results gives."""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Seed
from gaps.ranking import WIN_BY, Finish, rank
from server.storage.outage import until_stored
from server.storage.rebuild import rebuild_boards_and_ratings
from server.storage.results import FinishedGame
from server.storage.store import Store
from tests.test_rebuild import Derived, assert_same_rows, derived_rows

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

#: Thirty matches of two to four players among twelve end at once: each player is in about
#: seven of them, so their ends contend for the same rows; a second round folds onto the
#: first's ratings. (Each end costs tens of milliseconds of PostgreSQL: more matches add
#: time, not cases; sixty among twenty, tried, met no contention these do not.)
PLAYERS = 12
MATCHES_PER_ROUND = 30
ROUNDS = 2
STARTED_AT = datetime(2026, 11, 30, 12, tzinfo=UTC)
RETRIED = "storing failed; retrying"
#: What a retry of a match end may be for, with the database up: contention. PostgreSQL
#: gave up one transaction of a deadlock or of a serialization failure, endings held
#: every pooled connection for longer than the pool waits for one, or (on a machine busy
#: enough) a statement ran past its deadline (server/storage/database.py).
CONTENTION = (
    "deadlock detected", "could not serialize access", "QueuePool limit", "statement timeout"
)


@pytest.fixture
def engine(migrated_engine: AsyncEngine) -> AsyncEngine:
    if migrated_engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time: no two endings interleave")
    return migrated_engine


@dataclass(frozen=True)
class Planned:
    """A match to set up: its players' results, drawn before anything runs concurrently
    (so that the same seed plans the same matches)."""

    code: str
    win_by: str
    finishes: list[Finish]


@dataclass(frozen=True)
class Ending:
    match_id: int
    table: list[FinishedGame]


def plan(rng: random.Random, players: list[int], number: int) -> Planned:
    finishes = []
    for player_id in rng.sample(players, rng.randint(2, 4)):
        won = rng.random() < 0.15
        finish_ms = rng.randrange(1_000, 600_000)
        finishes.append(
            Finish(
                player_id=player_id,
                won=won,
                score=58 if won else rng.randrange(0, 48),
                finish_ms=finish_ms,
                score_ms=rng.randrange(0, finish_ms + 1),
            )
        )
    return Planned(f"E{number:07d}", rng.choice(WIN_BY), finishes)


async def set_up(store: Store, planned: Planned) -> Ending:
    """A running rated match whose every game has ended, stored as the server stores it;
    the table its end is stored with."""
    seed = Seed.generate()
    match_id = await store.matches.create(
        code=planned.code,
        ruleset="classic",
        max_players=len(planned.finishes),
        time_limit_s=600,
        win_by=planned.win_by,
        public=False,
        rated=True,
        host_id=planned.finishes[0].player_id,
        status="running",
        seed=seed.data,
        commitment=seed.commitment,
        created_at=STARTED_AT,
        started_at=STARTED_AT,
        kind="race",
    )
    for finish in planned.finishes:
        await store.matches.add_player(match_id, finish.player_id, STARTED_AT)
        await store.matches.save_result(
            match_id,
            finish.player_id,
            score=finish.score,
            placed=min(finish.score, 48),
            redeals=0,
            moves=finish.score,
            won=finish.won,
            end_reason="won" if finish.won else "stopped",
            finish_ms=finish.finish_ms,
            score_ms=finish.score_ms,
        )
    table = [
        FinishedGame(f.player_id, position, f.score, f.finish_ms, f.won)
        for position, f in rank(planned.finishes, planned.win_by)
    ]
    return Ending(match_id, table)


#: How many matches are set up at once: fewer than the pool's connections. The setups are
#: not what these tests check, and a hundred at once could wait past the pool's timeout
#: on a busy machine (their ends, which are checked, are stored all at once).
SETUPS_AT_ONCE = 8


async def set_up_a_few_at_once(store: Store, planned: list[Planned]) -> list[Ending]:
    room = asyncio.Semaphore(SETUPS_AT_ONCE)

    async def one(match: Planned) -> Ending:
        async with room:
            return await set_up(store, match)

    return list(await asyncio.gather(*(one(match) for match in planned)))


async def end_at_once(store: Store, endings: list[Ending], ended_at: datetime) -> None:
    """Every match's end stored at once, each retried as ``Match`` retries it."""

    async def end(ending: Ending) -> None:
        await until_stored(
            lambda: store.results.finish_match(
                ending.match_id, ended_at, ending.table, ruleset="classic", rated=True
            ),
            what=f"the end of match {ending.match_id}",
        )

    await asyncio.gather(*(end(ending) for ending in endings))


def untimed(rows: Derived) -> Derived:
    """The rows without the rating times (the end times of the matches last folded)."""
    return Derived(
        rows.boards,
        {key: values[:-1] for key, values in rows.ratings.items()},
        {key: values[:-1] for key, values in rows.changes.items()},
    )


async def test_matches_sharing_players_ending_at_once_are_stored_and_fold_as_a_rebuild_does(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="gaps.storage")  # each retry: DEBUG
    store = Store(engine)
    players = [
        (await store.players.register(f"p{n}", f"{n:064x}", STARTED_AT)).id for n in range(PLAYERS)
    ]
    rng = random.Random(17)
    games_of = dict.fromkeys(players, 0)
    for round_number in range(ROUNDS):
        planned = [
            plan(rng, players, round_number * MATCHES_PER_ROUND + n)
            for n in range(MATCHES_PER_ROUND)
        ]
        for match in planned:
            for finish in match.finishes:
                games_of[finish.player_id] += 1
        endings = await set_up_a_few_at_once(store, planned)
        # No exception reaches the caller: a failure that is not retried fails the test.
        await end_at_once(store, endings, STARTED_AT + timedelta(minutes=10 * (round_number + 1)))
    retries = [record for record in caplog.records if record.getMessage() == RETRIED]
    assert all(any(c in getattr(r, "error", "") for c in CONTENTION) for r in retries), retries
    incremental = await derived_rows(engine)
    # No update was lost: every player was rated once per match.
    assert {player_id: values[0] for (player_id, _), values in incremental.ratings.items()} == (
        games_of
    )
    # Matches ending at the same instant are rated one after another as they lock their
    # players' rows; each stores an end after its players' last rating, so the rebuild,
    # in the order of the stored ends, rates them in that same order.
    assert await rebuild_boards_and_ratings(engine) == ROUNDS * MATCHES_PER_ROUND

    assert_same_rows(untimed(await derived_rows(engine)), untimed(incremental))


async def stored_in_turn(engine: AsyncEngine, endings: list[tuple[Ending, datetime]]) -> None:
    store = Store(engine)
    for ending, ended_at in endings:
        await store.results.finish_match(
            ending.match_id, ended_at, ending.table, ruleset="classic", rated=True
        )


async def two_matches_of_two_players(engine: AsyncEngine) -> tuple[Ending, Ending]:
    """Two matches of the same two players: each wins one."""
    store = Store(engine)
    ana, bob = [
        (await store.players.register(name, name * 32, STARTED_AT)).id for name in ("ab", "cd")
    ]
    won, lost = Finish(ana, True, 58, 90_000, 80_000), Finish(bob, False, 30, 95_000, 60_000)
    first = await set_up(store, Planned("FIRST", "time", [won, lost]))
    second = await set_up(
        store,
        Planned(
            "SECOND",
            "time",
            [Finish(ana, False, 20, 70_000, 50_000), Finish(bob, True, 58, 65_000, 65_000)],
        ),
    )
    return first, second


async def test_two_matches_ending_at_one_instant_stored_last_one_first_rebuild_the_same(
    migrated_engine: AsyncEngine,
) -> None:
    first, second = await two_matches_of_two_players(migrated_engine)
    ended_at = STARTED_AT + timedelta(minutes=5)
    await stored_in_turn(migrated_engine, [(second, ended_at), (first, ended_at)])
    incremental = await derived_rows(migrated_engine)

    await rebuild_boards_and_ratings(migrated_engine)

    assert_same_rows(await derived_rows(migrated_engine), incremental)


async def test_a_match_end_stored_after_a_later_one_rebuilds_the_same(
    migrated_engine: AsyncEngine,
) -> None:
    """As when the first end is retried through an outage while the second commits."""
    first, second = await two_matches_of_two_players(migrated_engine)
    await stored_in_turn(
        migrated_engine,
        [
            (second, STARTED_AT + timedelta(minutes=5, seconds=1)),
            (first, STARTED_AT + timedelta(minutes=5)),
        ],
    )
    incremental = await derived_rows(migrated_engine)

    await rebuild_boards_and_ratings(migrated_engine)

    assert_same_rows(await derived_rows(migrated_engine), incremental)
