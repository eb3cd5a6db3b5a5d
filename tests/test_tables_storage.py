"""Tables in the room as stored (server/storage/tournaments.py, migration 0014), on both
backends: entrants at tables, arbiters, when each round's play began, who played it at
a table, and the tables' entered results, kept apart and replaced when entered again;
and a tournament with a round of tables only, going on after a restart."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest

from gaps import Ruleset
from server.storage.store import Store
from server.storage.tournaments import EnteredRow
from server.tournamentcommands import EnterResult, NameArbiter, SetTable
from tests.fake_clock import FakeClock
from tests.lobbies import new_player
from tests.test_tournament import (  # noqa: F401 (fixtures)
    Process,
    broker,
    journal,
    processes,
    store,
    until,
)

pytestmark = pytest.mark.both_backends

AT = datetime(2026, 12, 4, 19, 0, tzinfo=UTC)


async def test_tables_arbiters_round_starts_and_entered_results_are_stored_and_read_back(
    store: Store,  # noqa: F811
) -> None:
    host, arb, ana, cat, dan = [
        await new_player(store, name) for name in ("host", "arb", "ana", "cat", "dan")
    ]
    repository = store.tournaments
    tournament_id = await repository.create(
        code="TBL123", name="Club night", host_id=host.id, ruleset="classic", rounds=2,
        max_players=4, round_time_limit_s=600, start_at=None, created_at=AT,
    )
    for position, player in enumerate((ana, cat, dan), start=1):
        await repository.add_entrant(tournament_id, player.id, at=AT, position=position)
    await repository.set_table(tournament_id, cat.id, at_table=True)
    await repository.set_table(tournament_id, dan.id, at_table=True)
    await repository.set_table(tournament_id, dan.id, at_table=False)
    await repository.name_arbiter(tournament_id, arb.id, at=AT)
    await repository.name_arbiter(tournament_id, arb.id, at=AT)  # its answer was lost

    [stored] = await repository.unfinished()
    assert stored.at_table == frozenset({cat.id})
    assert stored.arbiters == ((arb.id, "arb"),)

    # Round 1 dealt, lost, dealt again: the second deal's tables and start hold.
    await repository.begin_round(tournament_id, 1, tables=[cat.id, dan.id])
    await repository.start_round(tournament_id, 1, at=AT, online=True)
    await repository.begin_round(tournament_id, 1, tables=[cat.id])
    later = AT + timedelta(minutes=1)
    await repository.start_round(tournament_id, 1, at=later, online=True)
    await repository.begin_round(tournament_id, 2, tables=[ana.id, cat.id])
    await repository.start_round(tournament_id, 2, at=later, online=False)
    first = EnteredRow(cat.id, 30, 1, 40_000, False, 25, arb.id, later)
    await repository.enter_result(tournament_id, 1, first)
    again = EnteredRow(cat.id, 48, 0, 50_000, True, 58, host.id, later + timedelta(seconds=5))
    await repository.enter_result(tournament_id, 1, again)
    await repository.enter_result(
        tournament_id, 2, EnteredRow(ana.id, 3, 0, 600_000, False, 3, arb.id, later)
    )

    tables = await repository.tables(tournament_id)
    assert tables.started == {1: later, 2: later}
    assert tables.online == {1: True, 2: False}
    assert tables.tables == {1: (cat.id,), 2: (ana.id, cat.id)}  # in the joining order
    assert tables.entered == {
        1: (again,),
        2: (EnteredRow(ana.id, 3, 0, 600_000, False, 3, arb.id, later),),
    }
    [stored] = await repository.unfinished()
    assert stored.current_round == 2


async def test_a_round_of_tables_only_and_its_entered_result_survive_a_restart(
    processes: Callable[[], Awaitable[Process]], store: Store, clock: FakeClock,  # noqa: F811
) -> None:
    first = await processes()
    host, arb, ana, cat = [await new_player(store, n) for n in ("host", "arb", "ana", "cat")]
    created = await first.tournaments.create(
        host.id, name="Cup", ruleset=Ruleset.named("classic"), rounds=2, max_players=4,
        round_time_limit_s=600, start_at_ms=None, countdown_s=5, break_s=30,
    )
    code = created.tournament.code
    for player in (ana, cat):
        await first.tournaments.join(code, player.id, player.name, bot=False)
    steer = first.tournaments.steer
    await steer(code, NameArbiter(host.id, arb.id, "arb"))
    for name in ("ana", "cat"):
        await steer(code, SetTable(arb.id, name, True))
    await first.tournaments.start_by(code, host.id)
    await until(lambda: first.live(code).state.playing)
    clock.advance(5)  # the countdown: the round's play begins
    await steer(code, EnterResult(arb.id, 1, "cat", 20, 0, 90_000, False))
    sheet = await first.tournaments.deal_sheet(code, arb.id, 1)
    await first.crash()

    second = await processes()
    state = second.live(code).state
    assert state.arbiters == ((arb.id, "arb"),)
    assert [(e.name, e.at_table) for e in state.entrants] == [("ana", True), ("cat", True)]
    [round_] = state.rounds
    assert (round_.match, round_.tables) == (None, (ana.id, cat.id))
    assert [(r.player_id, r.score, r.by) for r in round_.entered] == [(cat.id, 20, arb.id)]
    assert await second.tournaments.deal_sheet(code, host.id, 1) == sheet
    clock.advance(600)  # its time limit, from its stored start: counted
    await until(lambda: second.live(code).state.rounds[0].counted)
    rows = (await second.tournaments.standings(code)).standings
    assert [(r.name, r.total_score, r.entered) for r in rows] == [
        ("cat", 20, True), ("ana", 0, False)]
