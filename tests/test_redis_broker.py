"""The Redis broker against a real Redis: fan-out between brokers, its guarantees (live on
return, publish order, reconnect after a restart), its URLs, and a race through it."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import shutil
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from server.app import Server
from server.broker import BrokerUnavailable, LocalSubscription
from server.config import Settings
from server.redis_broker import BadRedisUrl, RedisAddress, RedisBroker
from tests.client import Client
from tests.services import Redis, free_port


async def until(condition: Callable[[], bool | Awaitable[bool]], *, timeout_s: float = 10) -> None:
    """Wait for ``condition`` to hold, polling; fail after ``timeout_s``."""

    async def holds() -> bool:
        outcome = condition()
        return await outcome if inspect.isawaitable(outcome) else outcome

    async with asyncio.timeout(timeout_s):
        while not await holds():
            await asyncio.sleep(0.01)


async def receive(subscription: LocalSubscription, count: int) -> list[str]:
    return [await asyncio.wait_for(subscription.get(), 5) for _ in range(count)]


@pytest.fixture
def own_redis() -> Iterator[Redis]:
    """A Redis of the test's own, to stop and start again."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = Redis()
    yield server
    server.stop()


@pytest.fixture
async def brokers(own_redis: Redis) -> AsyncIterator[list[RedisBroker]]:
    """Brokers on ``own_redis`` that reconnect quickly; all are closed after the test."""
    made: list[RedisBroker] = []
    yield made
    for broker in made:
        await broker.close()


async def quick_broker(redis: Redis, made: list[RedisBroker], **options: Any) -> RedisBroker:
    options = {"reconnect_delay_s": 0.02, "max_reconnect_delay_s": 0.1, **options}
    broker = await RedisBroker.connect(redis.url, **options)
    made.append(broker)
    return broker


# -- fan-out ---------------------------------------------------------------------------


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
            assert await receive(subscription, 3) == ["event 0", "event 1", "event 2"]
        await second.publish("match:TWO", "only two")
        assert await receive(elsewhere, 1) == ["only two"]
    finally:
        await first.close()
        await second.close()


async def test_a_claimed_channel_reaches_this_process_and_the_other_once_each_in_order(
    redis_url: str,
) -> None:
    """The process that runs a match hands its events to its own subscribers in
    ``publish`` and to the other process's through Redis, which sends it none back."""
    owner = await RedisBroker.connect(redis_url, max_pending_messages=5000)
    other = await RedisBroker.connect(redis_url, max_pending_messages=5000)
    try:
        owner.claim("match:OWNED")
        here = [await owner.subscribe("match:OWNED") for _ in range(2)]
        there = await other.subscribe("match:OWNED")
        numbers = itertools.count()

        async def publish_some() -> None:
            for _ in range(250):
                # The number is taken in the same step as the call: numbers give call order.
                await owner.publish("match:OWNED", str(next(numbers)))

        await asyncio.gather(*(publish_some() for _ in range(4)))
        expected = [str(number) for number in range(1000)]
        assert await receive(there, 1000) == expected
        for subscription in here:
            assert await receive(subscription, 1000) == expected
        # Whatever Redis sent the owner's listening connection before a later message
        # on it has arrived once that message has: nothing came back to deliver twice.
        fence = await owner.subscribe("fence")
        await owner.publish("fence", "after")
        assert await receive(fence, 1) == ["after"]
        assert all(s._queue.empty() for s in (*here, there))
        # Redis counts one listening process on the channel: the other one, not the owner.
        assert await other.publish("match:OWNED", "stale") == 1
        assert await receive(there, 1) == ["stale"]
        await owner.publish("fence", "after stale")
        assert await receive(fence, 1) == ["after stale"]
        assert all(s._queue.empty() for s in here)  # not the owner's: it publishes there
    finally:
        await owner.close()
        await other.close()


async def test_a_released_channel_is_heard_through_redis_again(redis_url: str) -> None:
    """A match that moved to another process: its events come from there now."""
    former = await RedisBroker.connect(redis_url)
    new_owner = await RedisBroker.connect(redis_url)
    try:
        former.claim("match:MOVED")
        subscription = await former.subscribe("match:MOVED")
        await former.publish("match:MOVED", "before")
        former.release("match:MOVED")
        await until(lambda: "match:MOVED" in former._listener.channels)  # type: ignore[union-attr]
        await until(lambda: not former._listener._unconfirmed)  # type: ignore[union-attr]
        new_owner.claim("match:MOVED")
        await new_owner.publish("match:MOVED", "after")
        assert await receive(subscription, 2) == ["before", "after"]
    finally:
        await former.close()
        await new_owner.close()


async def test_a_subscription_is_live_when_subscribe_returns_on_each_of_200_fresh_brokers(
    redis_url: str,
) -> None:
    lost = 0
    for attempt in range(200):
        publisher = await RedisBroker.connect(redis_url)
        listener = await RedisBroker.connect(redis_url)
        try:
            subscription = await listener.subscribe(f"match:FRESH{attempt}")
            await publisher.publish(f"match:FRESH{attempt}", "first")
            try:
                assert await asyncio.wait_for(subscription.get(), 2) == "first"
            except TimeoutError:
                lost += 1
        finally:
            await publisher.close()
            await listener.close()
    assert lost == 0


async def test_concurrent_publishes_on_one_channel_arrive_in_the_order_of_the_calls(
    redis_url: str,
) -> None:
    publisher = await RedisBroker.connect(redis_url)
    listener = await RedisBroker.connect(redis_url, max_pending_messages=5000)
    try:
        subscription = await listener.subscribe("match:ORDER")
        numbers = itertools.count()

        async def publish_some() -> None:
            for _ in range(500):
                # The number is taken in the same step as the call: numbers give call order.
                await publisher.publish("match:ORDER", str(next(numbers)))

        await asyncio.gather(*(publish_some() for _ in range(8)))
        received = [int(message) for message in await receive(subscription, 4000)]
        assert received == list(range(4000))
        assert subscription.dropped == 0
    finally:
        await publisher.close()
        await listener.close()


async def test_publishes_and_a_ping_written_together_each_get_their_own_answer(
    redis_url: str,
) -> None:
    publisher = await RedisBroker.connect(redis_url)
    listener = await RedisBroker.connect(redis_url)
    try:
        subscription = await listener.subscribe("match:HEARD")
        # All started in one turn of the event loop: written to Redis in one go.
        publishes = [
            asyncio.ensure_future(
                publisher.publish("match:HEARD" if number % 2 else "match:UNHEARD", str(number))
            )
            for number in range(40)
        ]
        ping = asyncio.ensure_future(publisher.ready())
        later = asyncio.ensure_future(publisher.publish("match:HEARD", "last"))
        assert await asyncio.gather(*publishes) == [number % 2 for number in range(40)]
        assert await ping is True
        assert await later == 1
        expected = [str(number) for number in range(40) if number % 2] + ["last"]
        assert await receive(subscription, len(expected)) == expected
    finally:
        await publisher.close()
        await listener.close()


async def test_a_closed_subscription_receives_nothing_more(redis_url: str) -> None:
    broker = await RedisBroker.connect(redis_url)
    try:
        kept = await broker.subscribe("match:X")
        dropped = await broker.subscribe("match:X")
        witness = await broker.subscribe("match:W")
        dropped.close()
        await broker.publish("match:X", "hello")
        assert await receive(kept, 1) == ["hello"]
        kept.close()
        await broker.publish("match:X", "nobody listens")
        # One connection each way: once the later message is in, the earlier one would be.
        await broker.publish("match:W", "later")
        assert await receive(witness, 1) == ["later"]
        assert dropped._queue.empty() and kept._queue.empty()
        assert broker._listener is not None and broker._listener.channels == {"match:W"}
    finally:
        await broker.close()


async def test_two_subscribers_of_a_new_channel_at_once_are_both_live(redis_url: str) -> None:
    publisher = await RedisBroker.connect(redis_url)
    listener = await RedisBroker.connect(redis_url)
    try:
        first, second = await asyncio.gather(
            listener.subscribe("match:BOTH"), listener.subscribe("match:BOTH")
        )
        await publisher.publish("match:BOTH", "to both")
        assert await receive(first, 1) == await receive(second, 1) == ["to both"]
    finally:
        await publisher.close()
        await listener.close()


# -- Redis going away ------------------------------------------------------------------


async def test_a_redis_restart_in_the_middle_of_a_stream_loses_only_what_it_missed(
    own_redis: Redis, brokers: list[RedisBroker]
) -> None:
    publisher = await quick_broker(own_redis, brokers)
    listener = await quick_broker(own_redis, brokers)
    subscription = await listener.subscribe("match:RESTART")
    numbers = itertools.count()
    published: list[int] = []
    received: list[int] = []

    async def stream() -> None:
        while True:
            number = next(numbers)
            try:
                await publisher.publish("match:RESTART", str(number))
                published.append(number)
            except BrokerUnavailable:
                pass
            await asyncio.sleep(0.002)  # a pace, so that the stream spans the restart

    async def read() -> None:
        while True:
            received.append(int(await subscription.get()))

    tasks = [asyncio.create_task(stream()), asyncio.create_task(read())]
    try:
        await until(lambda: len(received) >= 20)
        await asyncio.to_thread(own_redis.restart)
        await until(publisher.ready)
        await until(listener.ready)
        cutoff = next(numbers)  # every later publish that succeeds must arrive
        await until(lambda: len([n for n in published if n > cutoff]) >= 20)
        last = published[-1]
        await until(lambda: bool(received) and received[-1] >= last)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert received == sorted(set(received))  # in order, none twice
    assert {n for n in published if cutoff < n <= last} <= set(received)
    assert received[19] < cutoff < received[-1]  # it ran across the restart


async def test_while_redis_is_down_publish_and_subscribe_refuse_and_ready_is_false(
    own_redis: Redis, brokers: list[RedisBroker]
) -> None:
    broker = await quick_broker(own_redis, brokers)
    assert await broker.ready()
    own_redis.halt()
    try:
        await until(lambda: broker._publisher is None and broker._listener is None)
        assert not await broker.ready()
        with pytest.raises(BrokerUnavailable, match="cannot publish on match:DOWN"):
            await broker.publish("match:DOWN", "lost")
        with pytest.raises(BrokerUnavailable, match="cannot subscribe to match:DOWN"):
            await broker.subscribe("match:DOWN")
        assert not broker._subscribers  # the refused subscription left nothing behind
    finally:
        own_redis.resume()
    await until(broker.ready)
    subscription = await broker.subscribe("match:DOWN")
    await broker.publish("match:DOWN", "back")
    assert await receive(subscription, 1) == ["back"]


async def test_while_redis_is_down_a_claimed_channel_still_reaches_this_process(
    own_redis: Redis, brokers: list[RedisBroker]
) -> None:
    broker = await quick_broker(own_redis, brokers)
    broker.claim("match:HERE")
    own_redis.halt()
    try:
        await until(lambda: broker._publisher is None and broker._listener is None)
        subscription = await broker.subscribe("match:HERE")
        with pytest.raises(BrokerUnavailable, match="cannot publish on match:HERE"):
            await broker.publish("match:HERE", "kept here")
        assert await receive(subscription, 1) == ["kept here"]
    finally:
        own_redis.resume()
    await until(broker.ready)
    assert "match:HERE" not in broker._listener.channels  # type: ignore[union-attr]
    await broker.publish("match:HERE", "back")
    assert await receive(subscription, 1) == ["back"]


async def test_after_a_restart_every_channel_with_subscribers_is_subscribed_again(
    own_redis: Redis, brokers: list[RedisBroker]
) -> None:
    publisher = await quick_broker(own_redis, brokers)
    listener = await quick_broker(own_redis, brokers)
    kept = {code: await listener.subscribe(f"match:{code}") for code in ("A", "B", "C")}
    left = await listener.subscribe("match:LEFT")
    own_redis.halt()
    await until(lambda: listener._listener is None)
    left.close()  # its last subscriber goes while Redis is down: not subscribed again
    own_redis.resume()
    await until(listener.ready)
    await until(publisher.ready)
    assert listener._listener is not None
    assert listener._listener.channels == {"match:A", "match:B", "match:C"}
    for code, subscription in kept.items():
        await publisher.publish(f"match:{code}", f"to {code}")
        assert await receive(subscription, 1) == [f"to {code}"]


class FakeSleep:
    """An injected ``sleep`` that records each wait and returns only when woken."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.sleepers: list[asyncio.Future[None]] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        woken = asyncio.get_running_loop().create_future()
        self.sleepers.append(woken)
        await woken

    def wake_all(self) -> None:
        for woken in self.sleepers:
            woken.set_result(None)
        self.sleepers.clear()


async def test_reconnect_waits_double_after_each_failure_up_to_the_maximum(
    own_redis: Redis, brokers: list[RedisBroker]
) -> None:
    clock = FakeSleep()
    broker = await quick_broker(
        own_redis, brokers, reconnect_delay_s=0.5, max_reconnect_delay_s=3.0, sleep=clock
    )
    own_redis.halt()
    for _ in range(5):  # both connections wait, try and fail, in step
        await until(lambda: len(clock.sleepers) == 2)
        clock.wake_all()
    await until(lambda: len(clock.sleepers) == 2)
    own_redis.resume()
    clock.wake_all()
    await until(broker.ready)
    assert clock.waits == [0.5, 0.5, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]
    own_redis.restart()  # a later loss starts again from the first wait
    await until(lambda: len(clock.sleepers) == 2)
    assert clock.waits[-2:] == [0.5, 0.5]
    clock.wake_all()
    await until(broker.ready)


async def test_connecting_to_a_redis_out_of_reach_raises_broker_unavailable() -> None:
    with pytest.raises(BrokerUnavailable, match="Redis at redis://127.0.0.1"):
        await RedisBroker.connect(f"redis://127.0.0.1:{free_port()}/0", timeout_s=2)


# -- logging in ------------------------------------------------------------------------


async def test_a_password_in_the_url_logs_in_and_a_wrong_one_is_refused_unshown() -> None:
    redis = Redis(password="s3cret:/@ word")
    try:
        publisher = await RedisBroker.connect(redis.url)
        listener = await RedisBroker.connect(redis.url)
        try:
            subscription = await listener.subscribe("match:AUTH")
            await publisher.publish("match:AUTH", "signed in")
            assert await receive(subscription, 1) == ["signed in"]
        finally:
            await publisher.close()
            await listener.close()
        wrong = f"redis://:wrong-one@127.0.0.1:{redis.port}/0"
        with pytest.raises(BrokerUnavailable) as refused:
            await RedisBroker.connect(wrong)
        assert "redis://:***@" in str(refused.value) and "wrong-one" not in str(refused.value)
    finally:
        redis.stop()


async def test_a_rediss_url_speaks_tls_and_checks_the_certificate() -> None:
    redis = Redis(tls=True)
    try:
        assert redis.url.startswith("rediss://") and redis.ca_file is not None
        trusted = ssl.create_default_context(cafile=str(redis.ca_file))
        publisher = await RedisBroker.connect(redis.url, ssl_context=trusted)
        listener = await RedisBroker.connect(redis.url, ssl_context=trusted)
        try:
            subscription = await listener.subscribe("match:TLS")
            await publisher.publish("match:TLS", "encrypted")
            assert await receive(subscription, 1) == ["encrypted"]
        finally:
            await publisher.close()
            await listener.close()
        with pytest.raises(BrokerUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
            await RedisBroker.connect(redis.url)  # the system does not trust the test's CA
    finally:
        redis.stop()


# -- URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("redis://127.0.0.1:6380/2", RedisAddress("127.0.0.1", 6380, 2)),
        ("redis://", RedisAddress()),
        ("redis://cache", RedisAddress("cache")),
        ("rediss://cache.example:6390", RedisAddress("cache.example", 6390, tls=True)),
        ("redis://:p%40ss%2Fw%3Ard@cache/1", RedisAddress("cache", db=1, password="p@ss/w:rd")),
        ("redis://default:pw@cache", RedisAddress("cache", password="pw")),
        ("redis://[::1]:7000/3", RedisAddress("::1", 7000, 3)),
    ],
)
def test_a_redis_url_parses_and_prints_back(url: str, address: RedisAddress) -> None:
    assert RedisAddress.parse(url) == address
    assert RedisAddress.parse(str(address)) == address


def test_a_redis_url_hides_its_password_in_messages_and_repr() -> None:
    address = RedisAddress.parse("rediss://:hunter2@cache:6390/1")
    assert address.redacted == "rediss://:***@cache:6390/1"
    assert "hunter2" not in repr(address)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://cache:6379", "scheme must be redis:// or rediss://"),
        ("unix:///run/redis.sock", "scheme must be redis:// or rediss://"),
        ("cache:6379", "scheme must be redis:// or rediss://"),
        ("redis://bob:pw@cache", "default user only, not 'bob'"),
        ("redis://cache/zero", "'zero' is no database number"),
        ("redis://cache/0?ssl_cert_reqs=none", "no options"),
        ("redis://cache:99999", "out of range"),
        ("redis://cache:0", "port 0"),
    ],
)
def test_a_redis_url_the_broker_cannot_use_is_refused(url: str, reason: str) -> None:
    with pytest.raises(BadRedisUrl, match=reason) as refused:
        RedisAddress.parse(url)
    assert "pw" not in str(refused.value)


async def test_an_ssl_context_needs_a_rediss_url() -> None:
    with pytest.raises(BadRedisUrl, match="needs rediss://"):
        await RedisBroker.connect("redis://cache", ssl_context=ssl.create_default_context())


# -- through the server ----------------------------------------------------------------


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
