"""The relay between nodes, on one in-process broker that two relays share (two nodes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.broker import LocalBroker
from server.errors import ServerError
from server.relay import NodeTimeout, NodeUnreachable, Relay
from server.relaymessages import Command, JoinMatch, Matched, OpenPublic, Play, TournamentCode


@pytest.fixture
async def nodes() -> AsyncIterator[tuple[Relay, Relay]]:
    broker = LocalBroker()
    first, second = Relay(broker, node="a", timeout_s=0.5), Relay(broker, node="b", timeout_s=0.5)
    await first.start()
    await second.start()
    yield first, second
    await first.close()
    await second.close()


async def test_a_call_is_answered_by_the_other_nodes_service_with_the_callers_name(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def echo(command: Command, caller: str) -> Any:
        assert command == Play(code="ABCDEF", epoch=3, player_id=7, seq=2, action="7H>2")
        return {"method": command.method, "caller": caller}

    second.serve("match", echo)
    play = Play(code="ABCDEF", epoch=3, player_id=7, seq=2, action="7H>2")
    assert await first.call("b", play) == {"method": "play", "caller": "a"}


async def test_a_refusal_travels_with_its_code_message_and_details(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def refuse(command: Command, caller: str) -> Any:
        raise ServerError("match_full", "match ABCDEF has its 2 players", limit=2)

    second.serve("match", refuse)
    with pytest.raises(ServerError) as refused:
        await first.call("b", JoinMatch(code="ABCDEF", epoch=1, player_id=1, name="ana"))
    assert refused.value.code == "match_full"
    assert refused.value.message == "match ABCDEF has its 2 players"
    assert refused.value.details == {"limit": 2}


async def test_a_failure_of_the_handler_becomes_the_refusal_given_or_an_internal_error(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def broken(command: Command, caller: str) -> Any:
        raise KeyError(command.method)

    second.serve("sessions", broken)
    with pytest.raises(ServerError) as failed:
        await first.call("b", Matched(player_id=1, code="ABCDEF"))
    assert failed.value.code == "internal_error"
    third = Relay(LocalBroker(), node="c", refusal=lambda error: ServerError(
        "storage_unavailable", f"down: {error!r}"))
    third.serve("sessions", broken)
    with pytest.raises(ServerError) as refused:
        # To itself: no broker, the same rules.
        await third.call("c", Matched(player_id=1, code="ABCDEF"))
    assert refused.value.code == "storage_unavailable" and "KeyError" in refused.value.message


async def test_a_node_nobody_listens_for_is_unreachable_at_once(
    nodes: tuple[Relay, Relay],
) -> None:
    first, _ = nodes
    with pytest.raises(NodeUnreachable, match="node gone is not listening"):
        await first.call("gone", OpenPublic())
    assert not await first.listening("gone") and await first.listening("b")


async def test_a_node_that_does_not_answer_in_time_times_out(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def stuck(command: Command, caller: str) -> Any:
        await asyncio.Event().wait()

    second.serve("leader", stuck)
    with pytest.raises(NodeTimeout, match="did not answer leader.tournament_code"):
        await first.call("b", TournamentCode(code="ABCDEF"), timeout_s=0.05)


async def test_requests_from_one_node_start_in_the_order_they_were_sent(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes
    started: list[int] = []

    async def record(command: Command, caller: str) -> Any:
        assert isinstance(command, Play)
        started.append(command.seq)
        await asyncio.sleep(0.01 * (5 - command.seq))  # later ones finish first
        return command.seq

    second.serve("match", record)
    plays = (Play(code="ABCDEF", epoch=1, player_id=1, seq=n, action="R") for n in range(1, 5))
    answers = await asyncio.gather(*(first.call("b", play) for play in plays))
    assert answers == [1, 2, 3, 4] and started == [1, 2, 3, 4]


async def test_an_unknown_service_is_an_internal_error(nodes: tuple[Relay, Relay]) -> None:
    first, _ = nodes
    with pytest.raises(ServerError, match="no service 'leader'"):
        await first.call("b", TournamentCode(code="ABCDEF"))


async def test_a_message_that_is_no_relay_message_is_logged_and_dropped(
    nodes: tuple[Relay, Relay], caplog: pytest.LogCaptureFixture
) -> None:
    first, second = nodes
    broker = first._broker  # noqa: SLF001 - the one both nodes listen through

    async def opened(command: Command, caller: str) -> Any:
        return []

    second.serve("match", opened)
    await broker.publish("node:b", '{"kind": "call", "request": 1}')
    await broker.publish("node:b", "not json")
    assert await first.call("b", OpenPublic()) == []
    dropped = [r for r in caplog.records if r.getMessage() == "relay message dropped"]
    assert len(dropped) == 2
