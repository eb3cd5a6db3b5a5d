"""A match's actions queued behind one another are stepped together and their rows
committed at once (``server.actor``), each stored once and answered and said in order."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from sqlalchemy import select

from gaps import Action
from gaps_protocol.messages.events import ProgressMade
from server.errors import ServerError
from server.match import Match as LiveMatch
from server.storage.models import ActionRecord
from tests.test_match import Actor, actor, events_called

__all__ = ["actor"]  # the fixture, used by name


def moves_ahead(match: LiveMatch, player_id: int, count: int) -> list[Action]:
    """The player's next ``count`` legal moves (the first of each position)."""
    seat = match.state.seat(player_id)
    assert seat is not None and seat.game is not None
    game, moves = seat.game.copy(), []
    for _ in range(count):
        move = game.legal_moves()[0]
        game.play(move)
        moves.append(move)
    return moves


async def queued_behind_a_commit(
    actor: Actor, first: tuple[int, int, Action], *behind: tuple[int, int, Action]
) -> list[asyncio.Task[dict[str, object]]]:
    """Plays ``first`` while the journal holds its commit, then ``behind`` (player, seq,
    move each), which wait in the mailbox meanwhile; the tasks of all of them, gate
    still closed."""
    match = actor.match
    actor.journal.gate.clear()
    playing = [asyncio.create_task(match.play(*first))]
    for _ in range(10):  # the actor takes it and waits for its commit
        await asyncio.sleep(0)
    playing += [asyncio.create_task(match.play(*action)) for action in behind]
    for _ in range(10):
        await asyncio.sleep(0)
    assert not any(task.done() for task in playing)
    return playing


async def stored_actions(actor: Actor) -> list[tuple[int, int]]:
    async with actor.store.database.engine.connect() as connection:
        rows = await connection.execute(
            select(ActionRecord.player_id, ActionRecord.seq)
            .where(ActionRecord.match_id == actor.match.id)
            .order_by(ActionRecord.id)
        )
        return [(row.player_id, row.seq) for row in rows]


async def test_actions_queued_behind_a_commit_are_committed_together_and_answered_in_order(
    actor: Actor,
) -> None:
    match, (ana, bob) = actor.match, actor.players
    ana_moves, bob_moves = moves_ahead(match, ana, 2), moves_ahead(match, bob, 2)
    playing = await queued_behind_a_commit(
        actor, (ana, 1, ana_moves[0]), (bob, 1, bob_moves[0]), (ana, 2, ana_moves[1]),
        (bob, 2, bob_moves[1]),
    )  # fmt: skip
    batches = actor.journal.batches_committed
    actor.journal.gate.set()
    acks = await asyncio.gather(*playing)
    assert [(ack.seq, ack.action) for ack in acks] == [
        (1, str(ana_moves[0])), (1, str(bob_moves[0])), (2, str(ana_moves[1])),
        (2, str(bob_moves[1])),
    ]  # fmt: skip
    assert all(ack.duplicate is msgspec.UNSET for ack in acks)
    # The first action's commit, then the three that waited behind it, in one.
    assert actor.journal.batches_committed - batches == 2
    progress = [(e.player_id, e.moves_made) for e in events_called(match, ProgressMade)]
    assert progress == [(ana, 1), (bob, 1), (ana, 2), (bob, 2)]
    assert [event.seq for event in match.history.since(0) or []] == sorted(
        event.seq for event in match.history.since(0) or []
    )
    assert await stored_actions(actor) == [(ana, 1), (bob, 1), (ana, 2), (bob, 2)]


async def test_a_batch_holding_an_action_stored_before_stores_and_answers_each_once(
    actor: Actor,
) -> None:
    match, (ana, bob) = actor.match, actor.players
    [ana_move], bob_moves = moves_ahead(match, ana, 1), moves_ahead(match, bob, 3)
    actor.journal.lose_answer = True  # stored, but the match is not told
    with pytest.raises(ServerError) as refused:
        await match.play(ana, 1, ana_move)
    assert refused.value.code == "storage_unavailable"
    # Sent again, ana's action waits in a batch with bob's next two: its row is refused
    # as stored before, theirs are stored; every one is then answered from the database.
    playing = await queued_behind_a_commit(
        actor, (bob, 1, bob_moves[0]), (ana, 1, ana_move), (bob, 2, bob_moves[1]),
        (bob, 3, bob_moves[2]),
    )  # fmt: skip
    actor.journal.gate.set()
    acks = await asyncio.gather(*playing)
    assert [(ack.seq, ack.action) for ack in acks] == [
        (1, str(bob_moves[0])), (1, str(ana_move)), (2, str(bob_moves[1])),
        (3, str(bob_moves[2])),
    ]  # fmt: skip
    assert acks[1].duplicate is True  # ana's was a resend
    assert match.state.seat(ana).last_seq == 1  # type: ignore[union-attr]
    assert match.state.seat(bob).last_seq == 3  # type: ignore[union-attr]
    assert sorted(await stored_actions(actor)) == [(ana, 1), (bob, 1), (bob, 2), (bob, 3)]
    # And the match goes on from there.
    [next_move] = moves_ahead(match, bob, 1)
    assert (await match.play(bob, 4, next_move)).seq == 4


async def test_a_batch_the_database_refuses_is_refused_action_by_action_and_tried_once(
    actor: Actor, monkeypatch: pytest.MonkeyPatch
) -> None:
    match, (ana, bob) = actor.match, actor.players
    [ana_move], bob_moves = moves_ahead(match, ana, 1), moves_ahead(match, bob, 2)
    tries: list[tuple[int, int]] = []
    append = actor.journal.append

    async def counted(row: dict[str, Any]) -> None:
        tries.append((row["player_id"], row["seq"]))
        await append(row)

    monkeypatch.setattr(actor.journal, "append", counted)
    before = match.state
    playing = await queued_behind_a_commit(
        actor, (ana, 1, ana_move), (bob, 1, bob_moves[0]), (bob, 2, bob_moves[1])
    )
    actor.journal.down = True  # the database goes away while they wait
    actor.journal.gate.set()
    outcomes = await asyncio.gather(*playing, return_exceptions=True)
    assert [getattr(outcome, "code", outcome) for outcome in outcomes] == [
        "storage_unavailable"
    ] * 3
    assert tries == [(ana, 1), (bob, 1), (bob, 2)]  # each tried once, none a second time
    assert match.state is before and events_called(match, ProgressMade) == []
    assert await stored_actions(actor) == []
