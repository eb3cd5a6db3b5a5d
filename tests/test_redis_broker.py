"""The Redis broker against a real Redis: fan-out between brokers, and a race through it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from server.app import Server
from server.config import Settings
from server.redis_broker import RedisBroker
from tests.client import Client


async def test_a_message_published_on_one_broker_reaches_subscribers_of_another(
    redis_url: str,
) -> None:
    first = await RedisBroker.connect(redis_url)
    second = await RedisBroker.connect(redis_url)
    try:
        here = await first.subscribe("match:ONE")
        there = await second.subscribe("match:ONE")
        elsewhere = await second.subscribe("match:TWO")
        for number in range(3):
            await first.publish("match:ONE", f"event {number}")
        for subscription in (here, there):
            received = [await asyncio.wait_for(subscription.get(), 5) for _ in range(3)]
            assert received == ["event 0", "event 1", "event 2"]
        await second.publish("match:TWO", "only two")
        assert await asyncio.wait_for(elsewhere.get(), 5) == "only two"
    finally:
        await first.close()
        await second.close()


async def test_a_closed_subscription_receives_nothing_more(redis_url: str) -> None:
    broker = await RedisBroker.connect(redis_url)
    try:
        kept = await broker.subscribe("match:X")
        dropped = await broker.subscribe("match:X")
        dropped.close()
        await broker.publish("match:X", "hello")
        assert await asyncio.wait_for(kept.get(), 5) == "hello"
        kept.close()
        await asyncio.sleep(0.05)
        await broker.publish("match:X", "nobody listens")
        assert dropped._queue.empty() and kept._queue.empty()
    finally:
        await broker.close()


async def test_a_race_runs_with_its_events_through_redis(
    settings: Settings, redis_url: str
) -> None:
    server = Server(replace(settings, redis_url=redis_url))
    await server.start()
    clients: list[Client] = []
    try:
        assert isinstance(server.broker, RedisBroker)
        url = f"ws://127.0.0.1:{server.port}"
        for name in ("ana", "bob"):
            client = await Client.connect(url)
            await client.register(name)
            clients.append(client)
        ana, bob = clients
        code = (await ana.ok("create_match", countdown_s=0, seed="AAAA-BBBB-CCCC-DDDD"))["match"][
            "code"
        ]
        await bob.ok("join_match", code=code)
        for client in clients:
            await client.ok("ready", code=code)
        started: list[dict[str, Any]] = [await c.event("started") for c in clients]
        assert started[0] == started[1]
        await ana.act(code, "3H")
        progress = await bob.event("progress", player_id=ana.player_id)
        assert progress["moves_made"] == 1
        for client in clients:
            await client.act(code, "stop")
        ended = await bob.event("match_ended")
        assert ended["seed"] == "AAAA-BBBB-CCCC-DDDD"
        seqs = [event["seq"] for event in bob.events]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    finally:
        for client in clients:
            await client.close()
        await server.close()
