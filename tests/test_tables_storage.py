"""Tables in the room as stored (server/storage/tournaments.py, migration 0014), on both
backends: entrants at tables, arbiters, when each round's play began, who played it at
a table, and the tables' entered results, kept apart and replaced when entered again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from server.storage.store import Store
from server.storage.tournaments import EnteredRow
from tests.lobbies import new_player
from tests.test_tournament import store  # noqa: F401 (fixture)

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
