"""The tournaments repository on PostgreSQL and SQLite: tournaments and their entrants,
the seeds committed for their rounds, their rounds' matches, and the totals of their
standings summed from stored results."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Seed
from server.lobby import new_code
from server.storage.database import Database
from server.storage.models import TournamentEntry
from server.storage.players import PlayerRecord
from server.storage.store import Store
from server.storage.tournaments import (
    DealsAlreadyCommitted,
    RoundResult,
    StandingRow,
    TournamentRepository,
)
from tests.lobbies import new_player

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def store(migrated_engine: AsyncEngine) -> Store:
    return Store(migrated_engine)


@pytest.fixture
def repository(migrated_engine: AsyncEngine) -> TournamentRepository:
    return TournamentRepository(Database.of(migrated_engine))


async def created(repository: TournamentRepository, host: PlayerRecord, code: str) -> int:
    return await repository.create(
        code=code,
        name="Cup",
        host_id=host.id,
        ruleset="classic",
        rounds=3,
        max_players=8,
        round_time_limit_s=600,
        start_at=NOW + timedelta(hours=1),
        created_at=NOW,
    )


async def round_match(
    store: Store,
    tournament_id: int,
    number: int,
    results: dict[PlayerRecord, tuple[int, int]],
    *,
    status: str,
) -> int:
    """A match of round ``number`` with ``status``, each player's (score, finish_ms)."""
    seed = Seed.generate()
    match_id = await store.matches.create(
        code=new_code(),
        ruleset="classic",
        max_players=len(results),
        time_limit_s=600,
        win_by="score",
        public=False,
        rated=True,
        host_id=next(iter(results)).id,
        status="lobby",
        seed=seed.data,
        commitment=seed.commitment,
        created_at=NOW,
        kind="tournament",
        tournament_id=tournament_id,
        round=number,
    )
    for player, (score, finish_ms) in results.items():
        await store.matches.add_player(match_id, player.id, NOW)
        await store.matches.save_result(
            match_id, player.id, score=score, finish_ms=finish_ms, end_reason="stopped"
        )
    await store.matches.set_status(match_id, status, started_at=NOW)
    return match_id


async def test_a_tournament_comes_back_unfinished_with_its_entrants_in_joining_order(
    store: Store, repository: TournamentRepository
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    tournament_id = await created(repository, ana, "Q4M2ZK")
    assert await repository.add_entrant(tournament_id, bob.id, at=NOW)
    assert await repository.add_entrant(tournament_id, ana.id, at=NOW + timedelta(seconds=1))
    [stored] = await repository.unfinished()
    assert (stored.id, stored.code, stored.status, stored.current_round) == (
        tournament_id, "Q4M2ZK", "open", 0
    )
    assert stored.start_at == NOW + timedelta(hours=1)  # with its zone, on SQLite too
    assert stored.entrants == [(bob.id, "bob"), (ana.id, "ana")]
    assert (stored.if_empty, stored.cancel_reason) == ("cancel", None)
    assert await repository.ended("Q4M2ZK") is None  # not while it is open


async def test_entering_a_tournament_twice_is_refused_and_changes_nothing(
    store: Store, repository: TournamentRepository
) -> None:
    ana = await new_player(store, "ana")
    tournament_id = await created(repository, ana, "Q4M2ZK")
    assert await repository.add_entrant(tournament_id, ana.id, at=NOW)
    assert not await repository.add_entrant(tournament_id, ana.id, at=NOW + timedelta(hours=1))
    [stored] = await repository.unfinished()
    assert stored.entrants == [(ana.id, "ana")]


async def test_a_finished_tournament_is_found_by_its_code_and_no_longer_unfinished(
    store: Store, repository: TournamentRepository
) -> None:
    ana = await new_player(store, "ana")
    tournament_id = await created(repository, ana, "Q4M2ZK")
    await repository.add_entrant(tournament_id, ana.id, at=NOW)
    await repository.update(tournament_id, status="finished", current_round=3, ended_at=NOW)
    assert await repository.unfinished() == []
    found = await repository.ended("Q4M2ZK")
    assert found is not None and (found.status, found.current_round) == ("finished", 3)
    assert found.entrants == [(ana.id, "ana")]
    assert await repository.ended("ZZZZZZ") is None


async def test_a_cancelled_tournament_keeps_its_reason_and_what_it_would_do_if_empty(
    store: Store, repository: TournamentRepository
) -> None:
    ana = await new_player(store, "ana")
    waiting = await repository.create(
        code="WAIT22", name="Cup", host_id=ana.id, ruleset="classic", rounds=1, max_players=2,
        round_time_limit_s=60, start_at=NOW, created_at=NOW, if_empty="wait",
    )
    cancelled = await created(repository, ana, "GONE22")
    await repository.update(
        cancelled, status="cancelled", cancel_reason="nobody entered", ended_at=NOW
    )
    [open_one] = await repository.unfinished()
    assert (open_one.id, open_one.if_empty) == (waiting, "wait")
    found = await repository.ended("GONE22")
    assert found is not None and (found.status, found.cancel_reason) == (
        "cancelled", "nobody entered"
    )


async def test_rounds_are_their_last_dealt_matches_with_the_results_of_the_finished(
    store: Store, repository: TournamentRepository
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    tournament_id = await created(repository, ana, "Q4M2ZK")
    other_id = await created(repository, ana, "OTHER2")
    assert await repository.rounds(tournament_id) == []
    await round_match(store, tournament_id, 1, {ana: (20, 5000), bob: (31, 7000)},
                      status="finished")
    await round_match(store, tournament_id, 2, {ana: (9, 1000), bob: (4, 2000)},
                      status="abandoned")
    second = await round_match(store, tournament_id, 2, {ana: (12, 3000), bob: (10, 4000)},
                               status="finished")
    third = await round_match(store, tournament_id, 3, {ana: (40, 100), bob: (40, 100)},
                              status="running")
    await round_match(store, other_id, 1, {ana: (50, 1)}, status="finished")
    rounds = await repository.rounds(tournament_id)
    assert [(r.number, r.status) for r in rounds] == [
        (1, "finished"), (2, "finished"), (3, "running")
    ]
    assert rounds[1].match_id == second and rounds[2].match_id == third
    assert set(rounds[0].results) == {
        RoundResult(ana.id, 20, 5000), RoundResult(bob.id, 31, 7000)
    }
    assert rounds[2].results == ()  # not finished: not counted yet
    [only_third] = await repository.rounds(tournament_id, 3)
    assert only_third.match_id == third


async def test_recorded_standings_are_stored_on_the_entrants_rows(
    store: Store, repository: TournamentRepository, migrated_engine: AsyncEngine
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    tournament_id = await created(repository, ana, "Q4M2ZK")
    for player in (ana, bob):
        await repository.add_entrant(tournament_id, player.id, at=NOW)
    await repository.record_standings(
        tournament_id,
        [StandingRow(bob.id, 41, 11000, 2, 1), StandingRow(ana.id, 32, 8000, 2, 2)],
    )
    async with migrated_engine.connect() as connection:
        rows = (
            await connection.execute(
                select(
                    TournamentEntry.player_id,
                    TournamentEntry.total_score,
                    TournamentEntry.total_time_ms,
                    TournamentEntry.rounds_played,
                    TournamentEntry.rank,
                ).order_by(TournamentEntry.rank)
            )
        ).all()
    assert [tuple(row) for row in rows] == [(bob.id, 41, 11000, 2, 1), (ana.id, 32, 8000, 2, 2)]


async def test_the_seeds_of_the_rounds_come_back_in_order_and_a_commitment_never_changes(
    store: Store, repository: TournamentRepository
) -> None:
    ana = await new_player(store, "ana")
    seeds = [Seed.generate().data for _ in range(3)]
    committed = await repository.create(
        code="DEAL22", name="Cup", host_id=ana.id, ruleset="classic", rounds=3, max_players=2,
        round_time_limit_s=60, start_at=None, created_at=NOW, seeds=seeds,
    )
    drawing = await repository.create(
        code="WINN22", name="Cup", host_id=ana.id, ruleset="classic", rounds=3, max_players=2,
        round_time_limit_s=60, start_at=None, created_at=NOW, deals="winnable",
    )
    found = {stored.code: stored for stored in await repository.unfinished()}
    assert (found["DEAL22"].deals, found["DEAL22"].seeds) == ("any", tuple(seeds))
    assert (found["WINN22"].deals, found["WINN22"].seeds) == ("winnable", ())
    drawn = [Seed.generate().data for _ in range(3)]
    await repository.commit_deals(drawing, drawn)
    await repository.commit_deals(drawing, drawn)  # again (its answer was lost): the same
    assert await repository.deals(drawing) == tuple(drawn)
    with pytest.raises(DealsAlreadyCommitted):
        await repository.commit_deals(drawing, seeds)
    with pytest.raises(DealsAlreadyCommitted):
        await repository.commit_deals(committed, drawn)
    assert await repository.deals(committed) == tuple(seeds)
    await repository.update(committed, status="finished", ended_at=NOW)
    ended = await repository.ended("DEAL22")
    assert ended is not None and ended.seeds == tuple(seeds)


async def test_the_rounds_played_give_each_seat_as_its_match_stored_it(
    store: Store, repository: TournamentRepository
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    tournament_id = await created(repository, ana, "Q4M2ZK")
    await round_match(store, tournament_id, 1, {ana: (9, 1000)}, status="abandoned")
    first = await round_match(
        store, tournament_id, 1, {ana: (20, 5000), bob: (31, 7000)}, status="finished"
    )
    await store.matches.save_par(first, score=48, exact=True)
    await round_match(store, tournament_id, 2, {ana: (3, 100), bob: (4, 200)}, status="running")
    played = await repository.played(tournament_id)
    assert [(r.number, r.status, r.par_score, r.par_exact) for r in played] == [
        (1, "finished", 48, True), (2, "running", None, None)
    ]
    replay = await store.matches.replay(played[0].code)
    assert replay is not None and played[0].commitment == replay["match"]["commitment"]
    assert {seat.name: (seat.score, seat.finish_ms) for seat in played[0].seats} == {
        "ana": (20, 5000), "bob": (31, 7000)
    }
    assert {seat.player_id for seat in played[1].seats} == {ana.id, bob.id}
    assert await repository.played(await created(repository, ana, "EMPTY2")) == []
