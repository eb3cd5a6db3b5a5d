"""The broker: publish/subscribe of match events between the match and its watchers.

Every fan-out goes through this small interface so that server processes can be linked
through Redis (server/redis_broker.py) instead of this in-process implementation.
docs/broker.md says what each one guarantees.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Protocol


class BrokerError(Exception):
    """What a broker raises."""


class BrokerUnavailable(BrokerError):
    """The broker cannot reach what links the server processes (Redis) right now; the
    message was not published, or the subscription not made."""


class Subscription(Protocol):
    async def get(self) -> str:
        """The next message; a subscriber too slow to keep up misses some (and resyncs)."""

    def listen(self, deliver: Callable[[str], None]) -> None:
        """Hand every message to ``deliver`` as it is published (those queued first)
        instead of queueing it for ``get``; ``deliver`` must not raise, and bounds what
        it keeps itself."""

    def close(self) -> None: ...


class Broker(Protocol):
    async def publish(self, channel: str, message: str) -> int:
        """Hand ``message`` to the channel's subscribers; how many server processes
        listen on the channel (0: nobody got it). Messages published through one broker
        on one channel arrive in the order of these calls; raises ``BrokerUnavailable``
        when they cannot be handed over."""

    async def subscribe(self, channel: str) -> Subscription:
        """Deliver the channel's messages published from now on: the subscription is
        live when this returns. Raises ``BrokerUnavailable`` when it cannot be made."""

    def claim(self, channel: str) -> None:
        """This process publishes ``channel`` (it runs the match, tournament or queue
        whose events go there), until ``release``: its own subscribers get each message
        from ``publish`` itself, in order, and only the other processes' through what
        links them; a message of the channel coming back that way is not delivered again."""

    def release(self, channel: str) -> None:
        """This process no longer publishes ``channel`` (claimed as many times)."""

    async def ready(self) -> bool:
        """Whether messages published now reach other server processes."""

    @property
    def backlog(self) -> int:
        """Messages published and not yet taken by what links the processes (0: none)."""

    async def close(self) -> None: ...


class LocalSubscription:
    """A queue of one subscriber's messages, bounded: a subscriber too slow to keep up
    loses messages rather than holding up the others."""

    def __init__(
        self,
        on_close: Callable[[str, LocalSubscription], None],
        channel: str,
        *,
        max_pending_messages: int,
    ) -> None:
        self._on_close = on_close
        self._channel = channel
        self._queue: asyncio.Queue[str] = asyncio.Queue(maxsize=max_pending_messages)
        self._listener: Callable[[str], None] | None = None
        self.dropped = 0

    def deliver(self, message: str) -> None:
        if self._listener is not None:
            self._listener(message)
            return
        try:
            self._queue.put_nowait(message)
        except asyncio.QueueFull:
            self.dropped += 1  # the client sees a gap in seq and asks for a resync

    async def get(self) -> str:
        return await self._queue.get()

    def listen(self, deliver: Callable[[str], None]) -> None:
        while not self._queue.empty():
            deliver(self._queue.get_nowait())
        self._listener = deliver

    def close(self) -> None:
        self._on_close(self._channel, self)


class LocalBroker:
    """In-process broker: one server process, messages handed over in memory."""

    def __init__(self, *, max_pending_messages: int = 1024) -> None:
        self._subscribers: defaultdict[str, set[LocalSubscription]] = defaultdict(set)
        self._max_pending_messages = max_pending_messages

    async def publish(self, channel: str, message: str) -> int:
        subscriptions = tuple(self._subscribers.get(channel, ()))
        for subscription in subscriptions:
            subscription.deliver(message)
        return 1 if subscriptions else 0

    async def subscribe(self, channel: str) -> LocalSubscription:
        subscription = LocalSubscription(
            self._unsubscribe, channel, max_pending_messages=self._max_pending_messages
        )
        self._subscribers[channel].add(subscription)
        return subscription

    def _unsubscribe(self, channel: str, subscription: LocalSubscription) -> None:
        subscribers = self._subscribers.get(channel)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._subscribers[channel]

    def claim(self, channel: str) -> None:
        """Nothing to do: every message is handed over in ``publish``."""

    def release(self, channel: str) -> None:
        """Nothing to do: every message is handed over in ``publish``."""

    async def ready(self) -> bool:
        return True

    @property
    def backlog(self) -> int:
        return 0  # handed over in the call

    async def close(self) -> None:
        self._subscribers.clear()
