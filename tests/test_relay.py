"""The relay between nodes, on one in-process broker that two relays share (two nodes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.broker import LocalBroker
from server.errors import ServerError
from server.relay import NodeTimeout, NodeUnreachable, Relay


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

    async def echo(method: str, args: dict[str, Any], caller: str) -> Any:
        return {"method": method, "args": args, "caller": caller}

    second.serve("echo", echo)
    assert await first.call("b", "echo", "say", {"x": 1}) == {
        "method": "say", "args": {"x": 1}, "caller": "a"
    }


async def test_a_refusal_travels_with_its_code_message_and_details(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def refuse(method: str, args: dict[str, Any], caller: str) -> Any:
        raise ServerError("match_full", "match ABCDEF has its 2 players", limit=2)

    second.serve("match", refuse)
    with pytest.raises(ServerError) as refused:
        await first.call("b", "match", "join", {})
    assert refused.value.code == "match_full"
    assert refused.value.message == "match ABCDEF has its 2 players"
    assert refused.value.details == {"limit": 2}


async def test_a_failure_of_the_handler_becomes_the_refusal_given_or_an_internal_error(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def broken(method: str, args: dict[str, Any], caller: str) -> Any:
        raise KeyError(method)

    second.serve("broken", broken)
    with pytest.raises(ServerError) as failed:
        await first.call("b", "broken", "x", {})
    assert failed.value.code == "internal_error"
    third = Relay(LocalBroker(), node="c", refusal=lambda error: ServerError(
        "storage_unavailable", f"down: {error!r}"))
    third.serve("broken", broken)
    with pytest.raises(ServerError) as refused:
        await third.call("c", "broken", "x", {})  # to itself: no broker, the same rules
    assert refused.value.code == "storage_unavailable" and "KeyError" in refused.value.message


async def test_a_node_nobody_listens_for_is_unreachable_at_once(
    nodes: tuple[Relay, Relay],
) -> None:
    first, _ = nodes
    with pytest.raises(NodeUnreachable, match="node gone is not listening"):
        await first.call("gone", "match", "play", {})
    assert not await first.listening("gone") and await first.listening("b")


async def test_a_node_that_does_not_answer_in_time_times_out(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes

    async def stuck(method: str, args: dict[str, Any], caller: str) -> Any:
        await asyncio.Event().wait()

    second.serve("stuck", stuck)
    with pytest.raises(NodeTimeout, match="did not answer stuck.wait"):
        await first.call("b", "stuck", "wait", {}, timeout_s=0.05)


async def test_requests_from_one_node_start_in_the_order_they_were_sent(
    nodes: tuple[Relay, Relay],
) -> None:
    first, second = nodes
    started: list[int] = []

    async def record(method: str, args: dict[str, Any], caller: str) -> Any:
        started.append(args["n"])
        await asyncio.sleep(0.01 * (5 - args["n"]))  # later ones finish first
        return args["n"]

    second.serve("record", record)
    answers = await asyncio.gather(*(first.call("b", "record", "n", {"n": n}) for n in range(5)))
    assert answers == list(range(5)) and started == list(range(5))


async def test_an_unknown_service_is_an_internal_error(nodes: tuple[Relay, Relay]) -> None:
    first, _ = nodes
    with pytest.raises(ServerError, match="no service 'nothing'"):
        await first.call("b", "nothing", "x", {})
