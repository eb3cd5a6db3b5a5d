"""server.broker: the in-process publish/subscribe between a match and its watchers."""

from __future__ import annotations

import asyncio

import pytest

from server.broker import Broker, LocalBroker, LocalSubscription, Subscription


async def receive(subscription: Subscription, count: int) -> list[str]:
    return [await asyncio.wait_for(subscription.get(), 1.0) for _ in range(count)]


async def nothing_pending(subscription: Subscription) -> bool:
    try:
        await asyncio.wait_for(subscription.get(), 0.02)
    except TimeoutError:
        return True
    return False


async def test_a_subscriber_receives_what_is_published_on_its_channel() -> None:
    broker = LocalBroker()
    subscription = await broker.subscribe("match:K7QX2M")
    await broker.publish("match:K7QX2M", "hello")
    assert await receive(subscription, 1) == ["hello"]


async def test_every_subscriber_of_a_channel_receives_every_message() -> None:
    broker = LocalBroker()
    subscriptions = [await broker.subscribe("m") for _ in range(5)]
    for text in ("a", "b", "c"):
        await broker.publish("m", text)
    for subscription in subscriptions:
        assert await receive(subscription, 3) == ["a", "b", "c"]


async def test_messages_arrive_in_the_order_they_were_published() -> None:
    broker = LocalBroker()
    subscription = await broker.subscribe("m")
    messages = [f'{{"seq":{n}}}' for n in range(1, 201)]
    for message in messages:
        await broker.publish("m", message)
    assert await receive(subscription, 200) == messages


async def test_concurrent_publishes_arrive_in_the_order_of_the_calls() -> None:
    broker = LocalBroker(max_pending_messages=1000)
    subscription = await broker.subscribe("m")
    numbers = iter(range(1000))

    async def publish_some() -> None:
        for number in numbers:  # shared: each publisher takes the next number
            await broker.publish("m", str(number))
            await asyncio.sleep(0)  # let the other publishers take turns

    await asyncio.gather(*(publish_some() for _ in range(4)))
    assert await receive(subscription, 1000) == [str(n) for n in range(1000)]


async def test_a_subscriber_receives_nothing_from_other_channels() -> None:
    broker = LocalBroker()
    mine = await broker.subscribe("match:A")
    other = await broker.subscribe("match:B")
    await broker.publish("match:B", "for B")
    assert await nothing_pending(mine)
    assert await receive(other, 1) == ["for B"]


async def test_publishing_to_a_channel_nobody_watches_is_harmless() -> None:
    broker = LocalBroker()
    await broker.publish("nobody", "lost")
    assert await nothing_pending(await broker.subscribe("nobody"))


async def test_a_subscriber_receives_only_what_was_published_after_it_subscribed() -> None:
    broker = LocalBroker()
    await broker.publish("m", "before")
    subscription = await broker.subscribe("m")
    await broker.publish("m", "after")
    assert await receive(subscription, 1) == ["after"]
    assert await nothing_pending(subscription)


async def test_get_waits_for_the_next_message() -> None:
    broker = LocalBroker()
    subscription = await broker.subscribe("m")
    waiting = asyncio.create_task(subscription.get())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    await broker.publish("m", "late")
    assert await asyncio.wait_for(waiting, 1.0) == "late"


async def test_a_closed_subscription_receives_no_more_messages() -> None:
    broker = LocalBroker()
    leaving = await broker.subscribe("m")
    staying = await broker.subscribe("m")
    leaving.close()
    await broker.publish("m", "after close")
    assert await nothing_pending(leaving)
    assert await receive(staying, 1) == ["after close"]


async def test_closing_the_last_subscription_forgets_the_channel() -> None:
    broker = LocalBroker()
    subscriptions = [await broker.subscribe(f"match:{n}") for n in range(100)]
    for subscription in subscriptions:
        subscription.close()
    assert not broker._subscribers  # no channel left behind for finished matches


async def test_closing_a_subscription_twice_is_harmless() -> None:
    broker = LocalBroker()
    subscription = await broker.subscribe("m")
    other = await broker.subscribe("m")
    subscription.close()
    subscription.close()
    await broker.publish("m", "x")
    assert await receive(other, 1) == ["x"]


async def test_two_subscriptions_of_one_watcher_each_receive_the_message() -> None:
    broker = LocalBroker()
    first, second = await broker.subscribe("m"), await broker.subscribe("m")
    await broker.publish("m", "x")
    assert await receive(first, 1) == ["x"]
    assert await receive(second, 1) == ["x"]


async def test_a_slow_subscriber_drops_messages_and_counts_them() -> None:
    broker = LocalBroker(max_pending_messages=3)
    slow = await broker.subscribe("m")
    for n in range(10):
        await broker.publish("m", str(n))
    assert slow.dropped == 7
    # It keeps the oldest ones it had room for; the seq gap tells it to resync.
    assert await receive(slow, 3) == ["0", "1", "2"]
    assert await nothing_pending(slow)


async def test_a_slow_subscriber_catches_up_once_it_reads_again() -> None:
    broker = LocalBroker(max_pending_messages=2)
    slow = await broker.subscribe("m")
    for n in range(4):
        await broker.publish("m", str(n))
    assert await receive(slow, 2) == ["0", "1"]
    await broker.publish("m", "4")
    assert await receive(slow, 1) == ["4"]
    assert slow.dropped == 2


async def test_a_slow_subscriber_does_not_block_the_publisher_or_the_others() -> None:
    broker = LocalBroker(max_pending_messages=5)
    slow = await broker.subscribe("m")
    fast = await broker.subscribe("m")
    received: list[str] = []

    async def read_fast() -> None:
        while len(received) < 100:
            received.append(await fast.get())

    reader = asyncio.create_task(read_fast())

    async def publish_all() -> None:
        for n in range(100):
            await broker.publish("m", str(n))
            await asyncio.sleep(0)  # let the fast reader run

    await asyncio.wait_for(publish_all(), 2.0)
    await asyncio.wait_for(reader, 2.0)
    assert received == [str(n) for n in range(100)]
    assert fast.dropped == 0
    assert slow.dropped == 95


async def test_a_subscription_starts_with_nothing_dropped() -> None:
    assert (await LocalBroker().subscribe("m")).dropped == 0


async def test_closing_the_broker_drops_every_subscription() -> None:
    broker = LocalBroker()
    subscription = await broker.subscribe("m")
    await broker.close()
    await broker.publish("m", "after close")
    assert await nothing_pending(subscription)
    subscription.close()  # closing a subscription of a closed broker is harmless


async def test_the_local_broker_and_its_subscriptions_fit_the_broker_interface() -> None:
    broker: Broker = LocalBroker()
    subscription: Subscription = await broker.subscribe("m")
    assert isinstance(subscription, LocalSubscription)
    for name in ("publish", "subscribe", "close"):
        assert callable(getattr(broker, name))
    for name in ("get", "close"):
        assert callable(getattr(subscription, name))


@pytest.mark.parametrize("max_pending", [1, 16])
async def test_the_pending_limit_is_per_subscription(max_pending: int) -> None:
    broker = LocalBroker(max_pending_messages=max_pending)
    first, second = await broker.subscribe("m"), await broker.subscribe("m")
    for n in range(max_pending + 1):
        await broker.publish("m", str(n))
    assert first.dropped == second.dropped == 1
    assert await receive(first, max_pending) == [str(n) for n in range(max_pending)]


async def test_a_listener_gets_what_was_queued_first_then_each_message_as_it_is_published() -> None:
    broker = LocalBroker()
    subscription = await broker.subscribe("m")
    await broker.publish("m", "queued 1")
    await broker.publish("m", "queued 2")
    heard: list[str] = []
    subscription.listen(heard.append)
    assert heard == ["queued 1", "queued 2"]
    await broker.publish("m", "live")
    assert heard == ["queued 1", "queued 2", "live"]  # handed over within publish
    subscription.close()
    await broker.publish("m", "after the close")
    assert heard[-1] == "live"
