"""The broker over Redis pub/sub, linking server processes.

The only module that uses asyncio-redis (unmaintained since 2020): swapping the client
library means rewriting this file alone.
"""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import asyncio_redis

from server.broker import LocalSubscription

log = logging.getLogger("gaps.broker")


class RedisBroker:
    """Publishes to Redis; one subscriber connection feeds every local subscription."""

    def __init__(self, *, max_pending_messages: int = 1024) -> None:
        self._max_pending_messages = max_pending_messages
        self._subscribers: dict[str, set[LocalSubscription]] = {}
        self._publisher: asyncio_redis.Pool | None = None
        self._connection: asyncio_redis.Connection | None = None
        self._subscription: asyncio_redis.protocol.Subscription | None = None
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, url: str, *, max_pending_messages: int = 1024) -> RedisBroker:
        broker = cls(max_pending_messages=max_pending_messages)
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 6379
        db = int(parts.path.strip("/") or 0)
        password = parts.password
        broker._publisher = await asyncio_redis.Pool.create(
            host=host, port=port, db=db, password=password, poolsize=4
        )
        broker._connection = await asyncio_redis.Connection.create(
            host=host, port=port, db=db, password=password
        )
        broker._subscription = await broker._connection.start_subscribe()
        broker._reader = asyncio.create_task(broker._read(), name="redis-broker-reader")
        return broker

    async def publish(self, channel: str, message: str) -> None:
        assert self._publisher is not None
        await self._publisher.publish(channel, message)

    async def subscribe(self, channel: str) -> LocalSubscription:
        subscription = LocalSubscription(
            self._unsubscribe, channel, max_pending_messages=self._max_pending_messages
        )
        async with self._lock:
            subscribers = self._subscribers.setdefault(channel, set())
            subscribers.add(subscription)
            if len(subscribers) == 1:
                assert self._subscription is not None
                await self._subscription.subscribe([channel])
        return subscription

    def _unsubscribe(self, channel: str, subscription: LocalSubscription) -> None:
        subscribers = self._subscribers.get(channel)
        if subscribers is None:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del self._subscribers[channel]
            asyncio.get_running_loop().create_task(self._unsubscribe_remote(channel))

    async def _unsubscribe_remote(self, channel: str) -> None:
        async with self._lock:
            if channel not in self._subscribers and self._subscription is not None:
                await self._subscription.unsubscribe([channel])

    async def _read(self) -> None:
        assert self._subscription is not None
        while True:
            reply = await self._subscription.next_published()
            for subscription in tuple(self._subscribers.get(reply.channel, ())):
                subscription.deliver(reply.value)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._connection is not None:
            self._connection.close()
        if self._publisher is not None:
            self._publisher.close()
        self._subscribers.clear()
