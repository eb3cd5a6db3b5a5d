"""The lobby: seats given up by players gone past the grace period, and the cap on the
matches one player hosts. On the real storage, each backend; the grace period runs on a
fake clock, except through the server (its grace period is 1 s)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import msgspec
import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Stop
from gaps_protocol.messages.events import PlayerLeft
from server.broker import LocalBroker
from server.errors import ServerError
from server.lobby import Lobby, new_code
from server.match import Match
from server.storage.journal import Journal
from server.storage.models import Match as MatchRow
from server.storage.models import Tournament
from server.storage.store import Store
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.lobbies import GRACE_S, Watcher, hosted, new_lobby, new_player, options
from tests.races import registered


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(migrated_engine: AsyncEngine) -> Store:
    return Store(migrated_engine)


@pytest.fixture
def broker() -> LocalBroker:
    return LocalBroker()


@pytest.fixture
async def lobby(store: Store, broker: LocalBroker, clock: FakeClock) -> AsyncIterator[Lobby]:
    lobby = new_lobby(store, broker, clock, max_open_matches_per_player=2)
    yield lobby
    await lobby.close()


async def stored_status(store: Store, match: Match) -> str:
    async with store.database.engine.connect() as connection:
        status: str = (
            await connection.execute(select(MatchRow.status).where(MatchRow.id == match.id))
        ).scalar_one()
    return status


# -- a seat away past the grace period ------------------------------------------------


async def test_a_public_match_whose_host_stays_away_past_the_grace_period_is_given_up(
    lobby: Lobby, store: Store, broker: LocalBroker, clock: FakeClock
) -> None:
    ana = await new_player(store, "ana")
    match = await hosted(lobby, ana)
    watcher = await Watcher.of(broker, match)
    await match.disconnect(ana.id)
    assert clock.wakeups() == 1
    clock.advance(GRACE_S - 0.1)
    await match.snapshot(None)  # whatever the clock woke is done
    assert match.status == "lobby" and match.code in {m.code for m in lobby.open_public_here()}
    clock.advance(0.1)
    left = await watcher.event("player_left")
    assert left["player_id"] == ana.id
    await watcher.event("match_abandoned")
    listed = {m.code for m in lobby.open_public_here()}
    assert match.status == "abandoned" and match.code not in listed
    assert await stored_status(store, match) == "abandoned"


async def test_a_host_away_past_the_grace_period_passes_the_match_to_the_next_seat(
    lobby: Lobby, store: Store, broker: LocalBroker, clock: FakeClock
) -> None:
    ana, bob, cat = [await new_player(store, name) for name in ("ana", "bob", "cat")]
    match = await hosted(lobby, ana, others=[bob, cat])
    watcher = await Watcher.of(broker, match)
    await match.disconnect(ana.id)
    clock.advance(GRACE_S)
    changed = await watcher.event("host_changed")
    assert changed["host_id"] == bob.id == match.host_id
    assert match.players == [bob.id, cat.id]
    assert match.status == "lobby" and match.code in {m.code for m in lobby.open_public_here()}


async def test_a_player_back_within_the_grace_period_keeps_their_seat(
    lobby: Lobby, store: Store, clock: FakeClock
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    match = await hosted(lobby, ana, others=[bob])
    await match.disconnect(bob.id)
    assert clock.wakeups() == 1
    clock.advance(GRACE_S / 2)
    await match.join(bob.id, bob.name)  # a reconnect
    assert clock.wakeups() == 0  # nothing is due any more
    clock.advance(GRACE_S)
    seat = match.state.seat(bob.id)
    assert seat is not None and seat.connections == 1
    assert not any(isinstance(e, PlayerLeft) for e in match.history.since(0) or [])


async def test_a_seat_kept_by_another_connection_is_not_given_up(
    lobby: Lobby, store: Store, clock: FakeClock
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    match = await hosted(lobby, ana, others=[bob])
    await match.join(bob.id, bob.name)  # bob's second connection
    await match.disconnect(bob.id)
    seat = match.state.seat(bob.id)
    assert clock.wakeups() == 0
    assert seat is not None and seat.connections == 1 and seat.away_since is None


async def test_a_seat_away_when_the_match_starts_is_timed_out_by_the_deal_not_freed(
    lobby: Lobby, store: Store, broker: LocalBroker, clock: FakeClock
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    match = await hosted(lobby, ana, others=[bob])
    watcher = await Watcher.of(broker, match)
    await match.disconnect(bob.id)
    clock.advance(GRACE_S / 2)
    await match.start_by(ana.id)
    started = await watcher.event("started")
    assert [player["player_id"] for player in started["players"]] == [ana.id, bob.id]
    clock.advance(GRACE_S / 2)  # the lobby's grace period would be over: bob stays
    await match.snapshot(None)
    assert match.players == [ana.id, bob.id]
    clock.advance(GRACE_S / 2)  # bob's grace period, from the deal
    finished = await watcher.event("player_finished")
    assert (finished["player_id"], finished["end_reason"]) == (bob.id, "disconnected")
    assert bob.id in match.players and match.status == "running"


async def test_leaving_a_lobby_that_has_started_meanwhile_ends_the_game_instead(
    lobby: Lobby, store: Store, broker: LocalBroker
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    match = await hosted(lobby, ana, others=[bob])
    watcher = await Watcher.of(broker, match)
    # Posted in this order: the start is taken first, then the leave.
    await asyncio.gather(match.start_by(ana.id), match.leave(bob.id))
    finished = await watcher.event("player_finished")
    assert (finished["player_id"], finished["end_reason"]) == (bob.id, "left")
    assert bob.id in match.players


# -- how many open matches one player hosts -----------------------------------------------


async def test_a_player_hosting_the_most_open_matches_may_create_no_more(
    lobby: Lobby, store: Store
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    await hosted(lobby, ana)
    await hosted(lobby, ana, public=False)
    with pytest.raises(ServerError) as refused:
        await hosted(lobby, ana)
    assert refused.value.code == "too_many_matches"
    assert "2 open matches" in refused.value.message and refused.value.details == {"limit": 2}
    assert lobby.open_hosted_by(ana.id) == 2
    await hosted(lobby, bob)  # the cap is each player's
    # The server's own matches start at once: they are not the host's to hold open.
    await hosted(lobby, ana, kind="quick")
    await hosted(lobby, ana, kind="daily", daily_date=datetime.now(UTC).date())
    assert lobby.open_hosted_by(ana.id) == 2


async def test_a_started_abandoned_or_handed_over_match_no_longer_counts(
    lobby: Lobby, store: Store
) -> None:
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    started = await hosted(lobby, ana)
    left = await hosted(lobby, ana)
    await started.start_by(ana.id)
    assert lobby.open_hosted_by(ana.id) == 1
    await left.leave(ana.id)
    assert left.status == "abandoned" and lobby.open_hosted_by(ana.id) == 0
    handed = await hosted(lobby, ana, others=[bob])
    await hosted(lobby, bob)
    await handed.leave(ana.id)  # bob hosts it now: his second
    assert (lobby.open_hosted_by(ana.id), lobby.open_hosted_by(bob.id)) == (0, 2)
    with pytest.raises(ServerError) as refused:
        await hosted(lobby, bob)
    assert refused.value.code == "too_many_matches"


async def test_creations_at_once_cannot_pass_the_cap_together(
    store: Store, broker: LocalBroker, clock: FakeClock
) -> None:
    lobby = new_lobby(store, broker, clock, max_open_matches_per_player=1)
    try:
        ana = await new_player(store, "ana")
        made = await asyncio.gather(
            *(hosted(lobby, ana) for _ in range(3)), return_exceptions=True
        )
        matches = [result for result in made if isinstance(result, Match)]
        refusals = [result for result in made if isinstance(result, ServerError)]
        assert len(matches) == 1 and len(lobby.matches) == 1
        assert [error.code for error in refusals] == ["too_many_matches"] * 2
    finally:
        await lobby.close()


# -- through the server --------------------------------------------------------------------


async def test_a_public_match_is_unlisted_once_its_host_has_been_gone_the_grace_period(
    connect: Callable[[], Awaitable[Client]], clock: FakeClock
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    code = (await ana.ok("create_match", max_players=2, public=True))["match"]["code"]
    await bob.ok("join_match", code=code, role="spectator")
    listed = await bob.ok("list_matches")
    assert code in [match["code"] for match in listed["matches"]]
    await ana.close()  # the test server's grace period is 1 s
    await bob.event("presence", player_id=ana.player_id, connected=False)
    clock.advance(1)
    await bob.event("match_abandoned", match=code)
    listed = await bob.ok("list_matches")
    assert code not in [match["code"] for match in listed["matches"]]
    assert (await bob.request("join_match", code=code))["code"] == "match_finished"


async def test_the_host_leaving_a_lobby_of_ready_players_starts_the_match_and_hands_it_on(
    connect: Callable[[], Awaitable[Client]],
) -> None:
    ana, bob, cid = await registered(connect, "ana", "bob", "cid")
    code = (await ana.ok("create_match", max_players=3, countdown_s=0))["match"]["code"]
    for client in (bob, cid):
        await client.ok("join_match", code=code)
        await client.ok("ready", code=code)
    await ana.ok("leave_match", code=code)
    handed = await bob.event("host_changed", match=code)
    assert handed["host_id"] == bob.player_id
    for client in (bob, cid):
        await client.event("started", match=code)
    joined = await cid.ok("join_match", code=code)
    assert joined["match"]["host_id"] == bob.player_id
    assert [p["name"] for p in joined["players"]] == ["bob", "cid"]


@pytest.mark.limits(max_open_matches_per_player=2)
async def test_the_server_refuses_a_third_open_match_from_one_host(
    connect: Callable[[], Awaitable[Client]],
) -> None:
    (ana,) = await registered(connect, "ana")
    for _ in range(2):
        await ana.ok("create_match", public=True)
    refused = await ana.request("create_match", public=True)
    assert (refused["code"], refused["limit"]) == ("too_many_matches", 2)


# -- a restart: shut down, then restored ------------------------------------------------


async def new_tournament(store: Store, host_id: int) -> int:
    async with store.database.engine.begin() as connection:
        tournament_id: int = (
            await connection.execute(
                insert(Tournament)
                .values(
                    code="T" + new_code()[:5], name="cup", host_id=host_id, ruleset="classic",
                    rounds=2, max_players=2, round_time_limit_s=600, status="running",
                    current_round=1, created_at=datetime.now(UTC),
                )
                .returning(Tournament.id)
            )
        ).scalar_one()
    return tournament_id


async def test_a_tournament_round_shut_down_mid_game_is_restored_as_stored(
    store: Store, broker: LocalBroker, clock: FakeClock
) -> None:
    journal = Journal(store.database)
    journal.start()
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    tournament_id = await new_tournament(store, ana.id)
    first = Lobby(
        store=store, journal=journal, broker=broker, grace_s=GRACE_S, max_history_events=512,
        clock=clock,
    )
    try:
        match = await first.create(
            ana.id, options(max_players=2, public=False), None,
            seats=[(ana.id, ana.name, False), (bob.id, bob.name, False)], connected=False,
            kind="tournament", tournament_id=tournament_id, round_number=1,
        )
        assert first.round_match(tournament_id, 1) is match
        assert first.round_match(tournament_id, 2) is None
        await match.join(ana.id, ana.name)
        await match.start()
        await match.snapshot(None)  # dealt
        seat = match.state.seat(ana.id)
        assert seat is not None and seat.game is not None
        ack = await match.play(ana.id, 1, seat.game.legal_moves()[0])
        clock.advance(5)
    finally:
        await first.close()  # nothing is abandoned or ended
    with pytest.raises(ServerError) as refused:
        await match.play(ana.id, 2, Stop())
    assert refused.value.code == "shutting_down"
    assert await stored_status(store, match) == "running"

    second = new_lobby(store, broker, clock)
    try:
        [restored] = await second.restore(default_countdown_s=0)
        assert second.round_match(tournament_id, 1) is restored
        assert (restored.code, restored.kind) == (match.code, "tournament")
        assert restored.status == "running"
        again = await restored.play(ana.id, 1, Stop())
        assert again == msgspec.structs.replace(ack, duplicate=True)
        snapshot = await restored.join(ana.id, ana.name)
        assert snapshot.you.last_seq == 1
        assert snapshot.match.t_ms == 5000  # the match clock ran on, downtime included
    finally:
        await second.close()
        await journal.close()
