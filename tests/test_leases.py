"""server.storage.leases: a cluster's leases on matches, the journal's epoch fence, and
lobbies that take matches over from one another. On a real PostgreSQL (leases are a
cluster's, and a cluster's database is PostgreSQL); time on a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Stop
from server.broker import LocalBroker
from server.errors import ServerError
from server.lobby import Lobby
from server.match import Match
from server.storage.database import Database
from server.storage.database import database_url as sqlalchemy_url
from server.storage.journal import Journal, LeaseLost
from server.storage.leases import LeasesUnsupported, LeaseTaken, MatchLeases
from server.storage.models import ActionRecord
from server.storage.players import PlayerRecord
from server.storage.store import Store
from tests.fake_clock import FakeClock
from tests.lobbies import hosted, new_lobby, new_player

#: The tests that need a database: PostgreSQL only, of the two backends.
on_postgres = pytest.mark.parametrize("database_url", ["postgres"], indirect=True)

LEASE_S = 4.0
#: "Now" for the repository's tests: after the matches they store were created (by the
#: wall clock) by more than a lease, so that those left without a lease may be taken.
T0 = datetime.now(UTC) + timedelta(hours=1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(migrated_engine: AsyncEngine) -> Store:
    return Store(migrated_engine)


@pytest.fixture
async def journals(store: Store) -> AsyncIterator[list[Journal]]:
    """Journals made with ``journal_of``, each closed after the test."""
    made: list[Journal] = []
    yield made
    for journal in made:
        await journal.close()


def leases_of(store: Store, owner: str) -> MatchLeases:
    return MatchLeases(store.database, owner=owner, lease_s=LEASE_S)


def started_journal(store: Store, journals: list[Journal]) -> Journal:
    journal = Journal(store.database)
    journal.start()
    journals.append(journal)
    return journal


def leased_lobby(
    store: Store,
    clock: FakeClock,
    owner: str,
    journals: list[Journal],
    *,
    leases: MatchLeases | None = None,
) -> Lobby:
    """A process's lobby: its own journal and leases (``owner``'s, unless given), on the
    shared database."""
    return Lobby(
        store=store,
        journal=started_journal(store, journals),
        broker=LocalBroker(),
        grace_s=30.0,
        max_history_events=512,
        clock=clock,
        leases=leases or leases_of(store, owner),
    )


async def unleased_matches(store: Store, clock: FakeClock, count: int) -> list[Match]:
    """``count`` matches in their lobby, left a lease ago by a process that kept no
    leases (or died before it claimed them)."""
    lobby = new_lobby(store, LocalBroker(), clock)
    matches = []
    for number in range(count):
        host = await new_player(store, f"host{number}")
        matches.append(await hosted(lobby, host))
    await lobby.close()
    clock.advance(LEASE_S + 1)
    return matches


async def stored_actions(store: Store, match_id: int) -> int:
    async with store.database.read() as connection:
        return int(
            (
                await connection.execute(
                    select(func.count()).where(ActionRecord.match_id == match_id)
                )
            ).scalar_one()
        )


async def dealt_solo(lobby: Lobby, player: PlayerRecord) -> Match:
    """A running match of ``player`` alone, dealt."""
    match = await hosted(lobby, player, public=False)
    await match.start()
    await match.snapshot(None)
    return match


def first_move(match: Match, player: PlayerRecord) -> Any:
    seat = match.state.seat(player.id)
    assert seat is not None and seat.game is not None
    return seat.game.legal_moves()[0]


def row(match_id: int, player_id: int, seq: int) -> dict[str, Any]:
    return {
        "match_id": match_id, "player_id": player_id, "seq": seq, "action": "stop",
        "kind": "stop", "card": None, "from_slot": None, "to_slot": None, "t_ms": seq,
        "score": 0,
    }


# -- the repository -------------------------------------------------------------------


@on_postgres
async def test_of_two_processes_taking_over_at_once_each_match_goes_to_exactly_one(
    store: Store, clock: FakeClock
) -> None:
    matches = await unleased_matches(store, clock, 6)
    first, second = leases_of(store, "first"), leases_of(store, "second")
    taken = await asyncio.gather(
        first.take_over(kinds=["race"], now=T0), second.take_over(kinds=["race"], now=T0)
    )
    assert not taken[0].keys() & taken[1].keys()
    assert taken[0].keys() | taken[1].keys() == {match.id for match in matches}
    assert set(taken[0].values()) | set(taken[1].values()) == {1}


@on_postgres
async def test_a_lease_is_taken_over_only_once_run_out_and_then_with_its_epoch_raised(
    store: Store, clock: FakeClock
) -> None:
    [match] = await unleased_matches(store, clock, 1)
    first, second = leases_of(store, "first"), leases_of(store, "second")
    assert await first.take_over(kinds=["race"], now=T0) == {match.id: 1}
    almost = T0 + timedelta(seconds=LEASE_S - 0.1)
    assert await second.take_over(kinds=["race"], now=almost) == {}
    assert await first.renew({match.id: 1}, almost) == {match.id}
    past = almost + timedelta(seconds=LEASE_S + 0.1)
    assert await second.take_over(kinds=["race"], now=past) == {match.id: 2}
    assert await first.renew({match.id: 1}, past) == set()
    assert await first.owners([match.id]) == {match.id: ("second", 2)}


@on_postgres
async def test_a_released_lease_is_taken_over_at_once(
    store: Store, clock: FakeClock
) -> None:
    [match] = await unleased_matches(store, clock, 1)
    first, second = leases_of(store, "first"), leases_of(store, "second")
    assert await first.take_over(kinds=["race"], now=T0) == {match.id: 1}
    await first.release({match.id: 1})
    assert await second.take_over(kinds=["race"], now=T0) == {match.id: 2}


async def test_leases_are_refused_on_sqlite(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'gaps.sqlite3'}")
    try:
        with pytest.raises(LeasesUnsupported, match="need PostgreSQL"):
            MatchLeases(database, owner="one", lease_s=LEASE_S)
    finally:
        await database.dispose()


# -- the journal's fence --------------------------------------------------------------


@on_postgres
async def test_the_journal_refuses_rows_fenced_by_a_lost_epoch_and_stores_the_rest_of_the_batch(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    lost, kept = await unleased_matches(store, clock, 2)
    ana = await new_player(store, "ana")
    first, second = leases_of(store, "first"), leases_of(store, "second")
    assert await first.take_over(kinds=["race"], now=T0) == {lost.id: 1, kept.id: 1}
    journal = started_journal(store, journals)
    journal.fence(lost.id, 1)
    journal.fence(kept.id, 1)
    await first.release({lost.id: 1})
    assert await second.take_over(kinds=["race"], now=T0) == {lost.id: 2}
    await first.renew({kept.id: 1}, T0)  # still first's
    # Queued together: one batch, one transaction.
    refused, stored = await asyncio.gather(
        journal.append(row(lost.id, ana.id, 1)),
        journal.append(row(kept.id, ana.id, 1)),
        return_exceptions=True,
    )
    assert isinstance(refused, LeaseLost) and refused.match_id == lost.id
    assert "no longer this process's" in str(refused)
    assert stored is None
    assert journal.batches_committed == 1
    assert (await stored_actions(store, lost.id), await stored_actions(store, kept.id)) == (0, 1)


@on_postgres
async def test_an_unfenced_row_is_stored_whatever_the_leases(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    [match] = await unleased_matches(store, clock, 1)
    ana = await new_player(store, "ana")
    await journals_append(started_journal(store, journals), row(match.id, ana.id, 1))
    assert await stored_actions(store, match.id) == 1


async def journals_append(journal: Journal, action: dict[str, Any]) -> None:
    await journal.append(action)


# -- lobbies taking matches over ------------------------------------------------------


@on_postgres
async def test_a_lobby_past_its_lease_cannot_store_actions_and_drops_the_match_taken_over(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    ana = await new_player(store, "ana")
    paused = leased_lobby(store, clock, "paused", journals)
    other = leased_lobby(store, clock, "other", journals)
    try:
        match = await dealt_solo(paused, ana)
        assert paused.epochs == {match.id: 1}
        ack = await match.play(ana.id, 1, first_move(match, ana))
        clock.advance(LEASE_S + 1)  # the owner did not renew: paused past its lease

        [taken] = await other.restore(default_countdown_s=0)
        assert (taken.code, other.epochs) == (match.code, {match.id: 2})
        with pytest.raises(ServerError) as refused:
            await match.play(ana.id, 2, Stop())
        assert refused.value.code == "storage_unavailable"
        assert await stored_actions(store, match.id) == 1
        assert await taken.play(ana.id, 1, Stop()) == msgspec.structs.replace(ack, duplicate=True)
        await taken.play(ana.id, 2, Stop())
        assert await stored_actions(store, match.id) == 2

        assert await paused.keep_leases() == []
        assert paused.matches == {} and paused.epochs == {}
    finally:
        await paused.close()
        await other.close()


@on_postgres
async def test_a_lobby_keeping_its_leases_keeps_its_matches(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    ana = await new_player(store, "ana")
    owner = leased_lobby(store, clock, "owner", journals)
    other = leased_lobby(store, clock, "other", journals)
    try:
        match = await dealt_solo(owner, ana)
        for _ in range(3):
            clock.advance(LEASE_S - 1)
            assert await owner.keep_leases() == []
            assert await other.keep_leases() == []
        await match.play(ana.id, 1, first_move(match, ana))
        assert owner.matches == {match.code: match} and other.matches == {}
    finally:
        await owner.close()
        await other.close()


@on_postgres
async def test_a_lobby_shut_down_leaves_its_matches_to_another_at_once(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    ana = await new_player(store, "ana")
    first = leased_lobby(store, clock, "first", journals)
    second = leased_lobby(store, clock, "second", journals)
    try:
        match = await dealt_solo(first, ana)
        await first.close()
        [taken] = await second.keep_leases()
        assert taken.code == match.code and second.epochs == {match.id: 2}
    finally:
        await second.close()


@on_postgres
async def test_two_lobbies_restoring_at_once_restore_each_unfinished_match_once(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    matches = await unleased_matches(store, clock, 8)
    first = leased_lobby(store, clock, "first", journals)
    second = leased_lobby(store, clock, "second", journals)
    try:
        restored = await asyncio.gather(
            first.restore(default_countdown_s=0), second.restore(default_countdown_s=0)
        )
        codes = [match.code for lobby_restored in restored for match in lobby_restored]
        assert sorted(codes) == sorted(match.code for match in matches)
    finally:
        await first.close()
        await second.close()


@on_postgres
async def test_a_match_stored_moments_ago_without_its_lease_yet_is_left_to_its_creator(
    store: Store, clock: FakeClock
) -> None:
    lobby = new_lobby(store, LocalBroker(), clock)
    match = await hosted(lobby, await new_player(store, "ana"))
    await lobby.close()
    other = leases_of(store, "other")
    now = datetime.fromtimestamp(clock.now_ms() / 1000, UTC)
    assert await other.take_over(kinds=["race"], now=now) == {}
    later = now + timedelta(seconds=LEASE_S + 1)
    assert await other.take_over(kinds=["race"], now=later) == {match.id: 1}


@on_postgres
async def test_a_creator_claiming_a_lease_that_a_take_over_took_first_is_told_so(
    store: Store, clock: FakeClock
) -> None:
    lobby = new_lobby(store, LocalBroker(), clock)  # keeps no leases: stores, never claims
    match = await hosted(lobby, await new_player(store, "ana"))
    await lobby.close()
    assert await leases_of(store, "other").take_over(kinds=["race"], now=T0) == {match.id: 1}
    with pytest.raises(LeaseTaken, match=f"match {match.id} was taken over before its creator"):
        await leases_of(store, "creator").claim(match.id, T0)


class OvertakenLeases(MatchLeases):
    """A creator's leases on an overloaded server: another process takes each match it
    creates over before it claims the lease (the creation took longer than a lease)."""

    async def claim(self, match_id: int, now: datetime) -> int:
        other = MatchLeases(self._database, owner="other", lease_s=self.lease_s)
        assert match_id in await other.take_over(kinds=["race"], now=T0)
        return await super().claim(match_id, now)


@on_postgres
async def test_a_match_taken_over_before_its_creation_was_done_is_refused_as_unavailable(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    slow = OvertakenLeases(store.database, owner="slow", lease_s=LEASE_S)
    lobby = leased_lobby(store, clock, "slow", journals, leases=slow)
    try:
        with pytest.raises(ServerError, match="taken over before its creation was done") as refused:
            await hosted(lobby, await new_player(store, "ana"))
        assert refused.value.code == "match_unavailable"
        assert refused.value.details.keys() == {"retry_after_ms"}
        assert lobby.matches == {}
    finally:
        await lobby.close()


@on_postgres
async def test_a_lobby_late_to_renew_does_not_take_its_own_matches_over(
    store: Store, clock: FakeClock, journals: list[Journal]
) -> None:
    ana = await new_player(store, "ana")
    owner = leased_lobby(store, clock, "owner", journals)
    try:
        match = await dealt_solo(owner, ana)
        clock.advance(LEASE_S + 1)  # overloaded: its renewal comes after the lease ran out
        assert await owner.restore(default_countdown_s=0) == []
        assert owner.epochs == {match.id: 1}  # not taken over from itself: same epoch
        await match.play(ana.id, 1, first_move(match, ana))
        assert await owner.keep_leases() == []
        assert owner.matches == {match.code: match}
        assert await stored_actions(store, match.id) == 1
    finally:
        await owner.close()


@on_postgres
async def test_a_match_its_process_is_still_creating_is_left_to_it_however_late(
    store: Store, clock: FakeClock
) -> None:
    lobby = new_lobby(store, LocalBroker(), clock)  # keeps no leases: stores, never claims
    match = await hosted(lobby, await new_player(store, "ana"))
    await lobby.close()
    mine = leases_of(store, "mine")
    assert await mine.take_over(kinds=["race"], now=T0, creating={match.code}) == {}
    assert await mine.take_over(kinds=["race"], now=T0) == {match.id: 1}


async def lock_waits(store: Store) -> int:
    """How many statements of this database wait for a lock now."""
    async with store.database.read() as connection:
        return int((await connection.execute(text(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ))).scalar_one())


@on_postgres
@pytest.mark.parametrize("locker", ["renewal", "release", "journal commit"])
async def test_a_transaction_locking_several_leases_takes_them_in_match_id_order(
    store: Store, clock: FakeClock, journals: list[Journal], locker: str
) -> None:
    """As a take-over does: so that a renewal (or a release, or a commit of actions) and a
    take-over never each hold a lease row the other waits for, a deadlock PostgreSQL
    would break by failing one of them."""
    matches = await unleased_matches(store, clock, 3)
    ana = await new_player(store, "ana")
    first, _, last = sorted(match.id for match in matches)
    owner = leases_of(store, "owner")
    held = await owner.take_over(kinds=["race"], now=T0)
    # The lowest lease's latest row version now lies after the others' on its page:
    # a plan that scans the table meets the last match's row before it.
    assert await owner.renew({first: held[first]}, T0) == {first}
    async with store.database.engine.connect() as taker:
        await taker.begin()  # another process taking over, in match id order
        await taker.execute(text(
            "SELECT 1 FROM match_leases WHERE match_id = :id FOR UPDATE"), {"id": first})
        if locker == "journal commit":
            journal = started_journal(store, journals)
            for match_id in (last, first):
                journal.fence(match_id, held[match_id])
            # Queued together: one batch, one transaction, fencing both matches.
            locking = asyncio.ensure_future(asyncio.gather(
                *(journal.append(row(match_id, ana.id, 1)) for match_id in (last, first))))
        elif locker == "renewal":
            locking = asyncio.ensure_future(owner.renew(held, T0))
        else:
            locking = asyncio.ensure_future(owner.release(held))
        while await lock_waits(store) == 0:  # it waits for the first match's row...
            assert not locking.done(), locking
            await asyncio.sleep(0.01)
        # ...holding no other: the taker goes on to the last match's row at once.
        await taker.execute(text(
            "UPDATE match_leases SET expires_at = expires_at WHERE match_id = :id"),
            {"id": last})
        await taker.commit()
    await locking


@on_postgres
async def test_a_lease_locked_by_a_process_stalled_mid_transaction_is_taken_over_all_the_same(
    store: Store, clock: FakeClock, migrated_database_url: str, tmp_path: Path
) -> None:
    """A process paused (SIGSTOP) between two statements of a journal commit holds its
    lease rows ``FOR SHARE``: its session ends once idle past its lease's time (as the
    server sets it), and its locks with it, so that a take-over does not wait for it to
    wake."""
    [match] = await unleased_matches(store, clock, 1)
    stalled_database = Database(
        sqlalchemy_url(migrated_database_url, data_dir=tmp_path),
        idle_in_transaction_timeout_s=0.2,
    )
    stalled = leases_of(Store(stalled_database.engine), "stalled")
    held = await stalled.take_over(kinds=["race"], now=T0)
    try:
        async with stalled_database.engine.connect() as connection:
            await connection.begin()
            await connection.execute(text(
                "SELECT 1 FROM match_leases WHERE match_id = :id FOR SHARE"), {"id": match.id})
            # ...and stops here, its lease running out.
            past = T0 + timedelta(seconds=LEASE_S + 1)
            taken = await leases_of(store, "taker").take_over(kinds=["race"], now=past)
            assert taken == {match.id: held[match.id] + 1}
            with pytest.raises(DBAPIError):
                await connection.execute(text("SELECT 1"))
    finally:
        await stalled_database.engine.dispose()
