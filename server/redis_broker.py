"""The broker over Redis pub/sub, linking server processes.

The only module that uses asyncio-redis (unmaintained since 2020): swapping the client
library means rewriting this file alone.

What it guarantees (docs/broker.md tells the whole story):

- A subscription is live when ``subscribe`` returns: Redis has confirmed it, so whatever
  is published after that, through any broker, reaches it.
- Messages published through one broker on one channel arrive in the order of the
  ``publish`` calls: they go out on one connection, each queued for the wire before
  ``publish`` first waits (the commands of one event-loop turn are written together).
- A channel this process publishes (``claim``: it runs the match, tournament or queue)
  reaches this process's own subscribers from ``publish`` itself, in order and before
  it goes to Redis, and the other processes' through Redis: the listening connection is
  not subscribed to it, so Redis sends nothing back (a message of it that still comes,
  sent before Redis took the unsubscription, is not delivered again).
- When either of its two connections (one publishes, one listens) is lost, the broker
  reconnects by itself, waiting ``reconnect_delay_s``, then twice as long after each
  failure up to ``max_reconnect_delay_s``, and subscribes again to every channel that has
  local subscribers and is not its own. Until then ``publish`` raises
  ``BrokerUnavailable`` at once (on a channel of its own, once it has handed the message
  to this process's subscribers), and so does ``subscribe`` (but to a channel of its
  own, which needs no Redis); whatever other processes published meanwhile never
  reaches this broker's subscribers: Redis pub/sub keeps nothing.
  Watchers see the gap in the events' ``seq`` and resync from the match's history.

An outage (a link lost until both are back) is logged once when it begins and once when
it ends (``server.outages``), each failed attempt and refused publish at DEBUG only.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote, unquote, urlsplit

import asyncio_redis

from server.broker import BrokerError, BrokerUnavailable, LocalSubscription
from server.outages import Outage

log = logging.getLogger("gaps.broker")

Sleep = Callable[[float], Awaitable[None]]
Link = Literal["publisher", "listener"]

# What asyncio-redis raises when Redis is out of reach or refuses a command.
_REDIS_ERRORS = (OSError, TimeoutError, asyncio_redis.Error, asyncio_redis.ErrorReply)


class BadRedisUrl(BrokerError, ValueError):
    """A Redis URL this broker cannot use; the message shows it, password hidden."""


@dataclass(frozen=True)
class RedisAddress:
    """Where Redis is and how to log in: ``redis://[:password@]host[:port][/db]``, or
    ``rediss://`` for TLS. ``str()`` prints it back (password included)."""

    host: str = "localhost"
    port: int = 6379
    db: int = 0
    password: str | None = field(default=None, repr=False)
    tls: bool = False

    @classmethod
    def parse(cls, url: str) -> RedisAddress:
        shown = _hide_password(url)
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:
            raise BadRedisUrl(f"redis URL {shown!r}: {error}") from None
        if parts.scheme not in ("redis", "rediss"):
            raise BadRedisUrl(f"redis URL {shown!r}: the scheme must be redis:// or rediss://")
        if parts.query or parts.fragment:
            raise BadRedisUrl(f"redis URL {shown!r}: takes no options after '?' or '#'")
        username = unquote(parts.username or "")
        if username not in ("", "default"):
            raise BadRedisUrl(
                f"redis URL {shown!r}: asyncio-redis logs in as the default user only,"
                f" not {username!r}"
            )
        if port == 0:
            raise BadRedisUrl(f"redis URL {shown!r}: port 0 is no port")
        database = parts.path.removeprefix("/")
        if database and not (database.isascii() and database.isdigit()):
            raise BadRedisUrl(f"redis URL {shown!r}: {database!r} is no database number")
        return cls(
            host=parts.hostname or "localhost",
            port=port or 6379,
            db=int(database or 0),
            password=unquote(parts.password) if parts.password else None,
            tls=parts.scheme == "rediss",
        )

    def __str__(self) -> str:
        return self._url(None if self.password is None else quote(self.password, safe=""))

    @property
    def redacted(self) -> str:
        """The URL with its password hidden, for logs and messages."""
        return self._url(None if self.password is None else "***")

    def _url(self, password: str | None) -> str:
        scheme = "rediss" if self.tls else "redis"
        login = "" if password is None else f":{password}@"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{login}{host}:{self.port}/{self.db}"


def _hide_password(url: str) -> str:
    return re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", url)


class RedisBroker:
    """Publishes to Redis on one connection; a second one, subscribed to every channel
    with local subscribers, feeds them all."""

    def __init__(
        self,
        address: RedisAddress,
        *,
        max_pending_messages: int = 1024,
        reconnect_delay_s: float = 0.1,
        max_reconnect_delay_s: float = 5.0,
        timeout_s: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
        sleep: Sleep = asyncio.sleep,
        outage: Outage | None = None,
    ) -> None:
        """``timeout_s`` bounds connecting and each reply from Redis; ``ssl_context``
        (for ``rediss://`` only) replaces the system's trusted certificates; ``sleep`` is
        how the reconnect waits (tests pass a fake clock's); ``outage`` is told of every
        failure and of the links' return (the server's, which logs each outage once)."""
        if ssl_context is not None and not address.tls:
            raise BadRedisUrl(f"redis URL {address.redacted!r}: an ssl_context needs rediss://")
        self.address = address
        self._max_pending_messages = max_pending_messages
        self._reconnect_delay_s = reconnect_delay_s
        self._max_reconnect_delay_s = max_reconnect_delay_s
        self._timeout_s = timeout_s
        self._ssl = (ssl_context or ssl.create_default_context()) if address.tls else None
        self._sleep = sleep
        self._outage = outage
        self._subscribers: dict[str, set[LocalSubscription]] = {}
        #: The channels this process publishes, each as many times as claimed.
        self._claimed: Counter[str] = Counter()
        self._publisher: _Connection | None = None
        self._listener: _Connection | None = None
        self._reconnecting: dict[Link, asyncio.Task[None]] = {}
        self._closed = False

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        max_pending_messages: int = 1024,
        reconnect_delay_s: float = 0.1,
        max_reconnect_delay_s: float = 5.0,
        timeout_s: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
        sleep: Sleep = asyncio.sleep,
        outage: Outage | None = None,
    ) -> RedisBroker:
        """A broker connected to the Redis at ``url``; raises ``BadRedisUrl`` for a URL it
        cannot use and ``BrokerUnavailable`` when Redis cannot be reached or refuses."""
        broker = cls(
            RedisAddress.parse(url),
            max_pending_messages=max_pending_messages,
            reconnect_delay_s=reconnect_delay_s,
            max_reconnect_delay_s=max_reconnect_delay_s,
            timeout_s=timeout_s,
            ssl_context=ssl_context,
            sleep=sleep,
            outage=outage,
        )
        try:
            broker._publisher = await broker._open_publisher()
            broker._listener = await broker._open_listener()
        except (BrokerError, *_REDIS_ERRORS) as error:
            await broker.close()
            raise BrokerUnavailable(f"Redis at {broker.address.redacted}: {error}") from error
        return broker

    async def ready(self) -> bool:
        """Whether both connections are up (after a reconnect: every channel subscribed
        again) and Redis answers within ``timeout_s``."""
        publisher = self._publisher
        if publisher is None or self._listener is None:
            return False
        try:
            async with asyncio.timeout(self._timeout_s):
                await publisher.ping()
        except _REDIS_ERRORS:
            return False
        return True

    @property
    def backlog(self) -> int:
        """Messages (and pings) published whose answer from Redis is awaited."""
        publisher = self._publisher
        return 0 if publisher is None else publisher.awaited

    async def publish(self, channel: str, message: str) -> int:
        local = 0
        if channel in self._claimed:
            # Ours before Redis takes it: a Redis outage keeps no event from them.
            local = self._deliver_here(channel, message)
        publisher = self._publisher
        if publisher is None:
            raise self._failed(
                BrokerUnavailable(f"cannot publish on {channel}: Redis is out of reach")
            )
        try:
            # No wait before asyncio-redis writes the command: the order of the calls
            # is the order on the wire, then in Redis.
            async with asyncio.timeout(self._timeout_s):
                # Redis counts the connections subscribed: one per listening process.
                delivered: int = await publisher.publish_counted(channel, message)
        except TimeoutError:
            self._drop(publisher)  # a silent Redis is as good as gone: start afresh
            raise self._failed(
                BrokerUnavailable(
                    f"publishing on {channel}: no reply within {self._timeout_s} s"
                    " (the message may still reach some subscribers)"
                )
            ) from None
        except _REDIS_ERRORS as error:
            raise self._failed(
                BrokerUnavailable(
                    f"publishing on {channel}: {error!r} (the message may still reach some"
                    " subscribers)"
                )
            ) from error
        self._answered()
        return delivered + local

    def claim(self, channel: str) -> None:
        self._claimed[channel] += 1
        if self._claimed[channel] == 1 and self._listener is not None:
            self._listener.unlisten(channel)

    def release(self, channel: str) -> None:
        self._claimed[channel] -= 1
        if self._claimed[channel] > 0:
            return
        del self._claimed[channel]
        if channel in self._subscribers and self._listener is not None:
            # Another process may publish it now (the match moved): listen again. The
            # routes close the connections that followed the match here meanwhile.
            self._listener.listen(channel)

    def _failed(self, error: BrokerUnavailable) -> BrokerUnavailable:
        """``error``, told to the outage first (logged at DEBUG: the outage is logged once)."""
        log.debug("redis refused", extra={"error": str(error)})
        if self._outage is not None:
            self._outage.failed("publishing or subscribing", error)
        return error

    def _answered(self) -> None:
        """Redis answered: the outage under way, if any, is over once both links are up."""
        outage = self._outage
        if outage is not None and not outage.up:
            if self._publisher is not None and self._listener is not None:
                outage.recovered()

    async def subscribe(self, channel: str) -> LocalSubscription:
        listener = self._listener
        if listener is None and channel not in self._claimed:
            raise self._failed(
                BrokerUnavailable(f"cannot subscribe to {channel}: Redis is out of reach")
            )
        subscription = LocalSubscription(
            self._unsubscribe, channel, max_pending_messages=self._max_pending_messages
        )
        self._subscribers.setdefault(channel, set()).add(subscription)
        if listener is None or channel in self._claimed:  # None: claimed, as checked above
            return subscription  # fed by ``publish`` itself: live at once
        try:
            async with asyncio.timeout(self._timeout_s):
                # Shielded: the confirmation is shared by every subscriber of the channel.
                live = await asyncio.shield(listener.listen(channel))
        except TimeoutError:
            subscription.close()
            self._drop(listener)
            raise self._failed(
                BrokerUnavailable(
                    f"subscribing to {channel}: no confirmation within {self._timeout_s} s"
                )
            ) from None
        except BaseException:
            subscription.close()
            raise
        if not live:
            subscription.close()
            raise self._failed(
                BrokerUnavailable(f"subscribing to {channel}: the connection to Redis was lost")
            )
        return subscription

    def _unsubscribe(self, channel: str, subscription: LocalSubscription) -> None:
        subscribers = self._subscribers.get(channel)
        if subscribers is None:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del self._subscribers[channel]
            if self._listener is not None:
                self._listener.unlisten(channel)

    def _deliver(self, channel: str, message: str) -> None:
        """A message from Redis: for this process's subscribers, unless it is one this
        process published itself (and delivered already)."""
        if channel not in self._claimed:
            self._deliver_here(channel, message)

    def _deliver_here(self, channel: str, message: str) -> int:
        """Hand ``message`` to this process's subscribers of ``channel``; 1 if it has
        any, else 0 (processes that got it)."""
        subscriptions = self._subscribers.get(channel)
        if not subscriptions:
            return 0
        for subscription in tuple(subscriptions):
            subscription.deliver(message)
        return 1

    # -- connections ---------------------------------------------------------------------

    async def _open(self, *, listens: bool) -> _Connection:
        """A connection, logged in and answering; not yet the broker's."""
        connection = _Connection(self._lost, self._deliver if listens else None)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._timeout_s):
                await loop.create_connection(
                    lambda: connection, self.address.host, self.address.port, ssl=self._ssl
                )
                if self.address.password is not None:
                    await connection.auth(self.address.password)
                if self.address.db and not listens:  # pub/sub ignores the database
                    await connection.select(self.address.db)
                await connection.ping()  # refused here, not silently once subscribed
        except BaseException:
            connection.abort()
            raise
        connection.read_replies()
        return connection

    async def _open_publisher(self) -> _Connection:
        return await self._open(listens=False)

    async def _open_listener(self) -> _Connection:
        """The listening connection, subscribed to every channel with local subscribers."""
        connection = await self._open(listens=True)
        try:
            await connection.start_subscribe()
            confirmations = [
                connection.listen(channel)
                for channel in self._subscribers
                if channel not in self._claimed
            ]
            async with asyncio.timeout(self._timeout_s):
                live = await asyncio.gather(*confirmations)
            if not all(live):
                raise BrokerUnavailable("the connection was lost while subscribing")
        except BaseException:
            connection.abort()
            raise
        for channel in connection.channels:
            # Its last subscriber left while we subscribed, or this process claimed it.
            if channel not in self._subscribers or channel in self._claimed:
                connection.unlisten(channel)
        return connection

    def _lost(self, connection: _Connection) -> None:
        link: Link
        if connection is self._publisher:
            self._publisher, link = None, "publisher"
        elif connection is self._listener:
            self._listener, link = None, "listener"
        else:
            return  # one being opened, or dropped already
        if self._closed:
            return
        log.debug("redis connection lost", extra={"link": link, "redis": self.address.redacted})
        if self._outage is not None:
            self._outage.failed(f"the {link} link to {self.address.redacted}", "connection lost")
        self._reconnecting[link] = asyncio.create_task(
            self._reconnect(link), name=f"redis-broker-{link}"
        )

    def _drop(self, connection: _Connection) -> None:
        self._lost(connection)
        connection.abort()

    async def _reconnect(self, link: Link) -> None:
        delay = self._reconnect_delay_s
        try:
            while True:
                await self._sleep(delay)
                try:
                    if link == "publisher":
                        self._publisher = await self._open_publisher()
                    else:
                        self._listener = await self._open_listener()
                except Exception as error:  # whatever it was, give up only when closed
                    delay = min(delay * 2, self._max_reconnect_delay_s)
                    expected = isinstance(error, (BrokerError, *_REDIS_ERRORS))
                    # Expected while Redis is down: the outage is logged once. Anything
                    # else is a bug, shown with its traceback.
                    log.log(
                        logging.DEBUG if expected else logging.WARNING,
                        "redis out of reach",
                        extra={"link": link, "error": repr(error), "retry_in_s": delay},
                        exc_info=not expected,
                    )
                    if self._outage is not None:
                        self._outage.failed(f"reconnecting the {link} link", error)
                else:
                    log.debug("redis reconnected", extra={"link": link})
                    self._answered()
                    return
        finally:
            del self._reconnecting[link]

    async def close(self) -> None:
        self._closed = True
        tasks = list(self._reconnecting.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        connections = [c for c in (self._publisher, self._listener) if c is not None]
        self._publisher = self._listener = None
        for connection in connections:
            connection.abort()
        if connections:
            await asyncio.wait([c.closed for c in connections], timeout=self._timeout_s)
        self._subscribers.clear()


#: What ``_parse_reply`` returns for a reply whose bytes have not all come yet.
_INCOMPLETE: Any = object()


def _parse_reply(data: bytes, start: int) -> tuple[Any, int]:
    """The RESP2 reply at ``data[start:]``, as asyncio-redis's reader gives it (a status
    as bytes, an error as ``ErrorReply``, an integer, a bulk string as bytes or None, an
    array as a list), and where the next one starts; ``_INCOMPLETE`` if it has not all
    come."""
    end = data.find(b"\r\n", start)
    if end < 0:
        return _INCOMPLETE, start
    kind = data[start]
    line = data[start + 1 : end]
    after = end + 2
    if kind == 0x24:  # $: a bulk string
        length = int(line)
        if length < 0:
            return None, after
        if len(data) < after + length + 2:
            return _INCOMPLETE, start
        return data[after : after + length], after + length + 2
    if kind == 0x3A:  # :
        return int(line), after
    if kind == 0x2A:  # *: an array
        count = int(line)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = _parse_reply(data, after)
            if item is _INCOMPLETE:
                return _INCOMPLETE, start
            items.append(item)
        return items, after
    if kind == 0x2B:  # +
        return line, after
    if kind == 0x2D:  # -
        return asyncio_redis.ErrorReply(line.decode()), after
    raise asyncio_redis.Error(f"not a Redis reply: {data[start : start + 40]!r}")


class _Connection(asyncio_redis.RedisProtocol):  # type: ignore[misc]
    """One connection: asyncio-redis's protocol, told of its own loss and, when it
    listens, of each message and each confirmation of SUBSCRIBE and UNSUBSCRIBE (which
    asyncio-redis throws away, so that its ``subscribe`` returns before Redis has
    subscribed).

    Once logged in (``read_replies``) it reads Redis's replies itself, from each chunk
    received: asyncio-redis's reader awaits a stream for every line of a reply and starts
    a task for every message, which took a quarter of a worker's time in a cluster
    (docs/benchmarks.md). The answers go where asyncio-redis's own reader would put them,
    so that its commands (``ping``) work on as before."""

    def __init__(
        self,
        on_lost: Callable[[_Connection], None],
        on_message: Callable[[str, str], None] | None,
    ) -> None:
        # No password or db here: given them, asyncio-redis would send AUTH and SELECT
        # from a task of its own, possibly after our first command.
        super().__init__()
        self._on_lost = on_lost
        self._on_message = on_message
        self._listening: dict[str, asyncio.Future[bool]] = {}
        # Redis confirms each SUBSCRIBE and UNSUBSCRIBE in the order they were sent.
        self._unconfirmed: deque[tuple[bytes, str, asyncio.Future[bool] | None]] = deque()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Commands written together at the end of the event loop's turn: see _send_command.
        self._outgoing: list[bytes] = []
        self._reads_replies = False
        self._received = b""  # the start of a reply whose end has not come yet

    def read_replies(self) -> None:
        """Read every reply from now on (nothing may be awaited from asyncio-redis's
        reader: it would never come)."""
        self._reads_replies = True

    def data_received(self, data: bytes) -> None:
        if not self._reads_replies:
            super().data_received(data)
            return
        if self._received:
            data = self._received + data
        start = 0
        size = len(data)
        try:
            while start < size:
                reply, after = _parse_reply(data, start)
                if reply is _INCOMPLETE:
                    break
                start = after
                if self._in_pubsub and type(reply) is list:
                    self._published(reply)
                else:
                    self._push_answer(reply)
        except (ValueError, IndexError, asyncio_redis.Error) as error:
            log.error("redis out of step", extra={"error": repr(error)})
            self.abort()  # a fresh connection starts afresh
            return
        self._received = data[start:]

    def _published(self, reply: list[Any]) -> None:
        """A message, or a confirmation of SUBSCRIBE or UNSUBSCRIBE."""
        kind = reply[0]
        if kind == b"message":
            if self._on_message is not None:
                self._on_message(reply[1].decode(), reply[2].decode())
        elif kind in (b"subscribe", b"unsubscribe"):
            self._confirm(kind, reply[1].decode())

    @property
    def channels(self) -> set[str]:
        return set(self._listening)

    @property
    def awaited(self) -> int:
        """Commands sent whose answer has not come."""
        return len(self._queue)

    def listen(self, channel: str) -> asyncio.Future[bool]:
        """Subscribe to ``channel``; the future tells whether Redis confirmed it (False:
        the connection was lost first)."""
        confirmed = self._listening.get(channel)
        if confirmed is None:
            confirmed = asyncio.get_running_loop().create_future()
            self._listening[channel] = confirmed
            self._send(b"subscribe", channel, confirmed)
        return confirmed

    def unlisten(self, channel: str) -> None:
        if self._listening.pop(channel, None) is not None:
            self._send(b"unsubscribe", channel, None)

    def publish_counted(self, channel: str, message: str) -> asyncio.Future[int]:
        """PUBLISH ``message`` on ``channel``; the future gets how many connections Redis
        delivered it to. asyncio-redis's own ``publish`` checks its arguments with
        ``inspect`` and takes its transaction lock on every call, about a third of the
        cost of publishing under load (docs/benchmarks.md); this one queues its answer
        as asyncio-redis's ``_query`` does (replies come in the order of the commands)."""
        if not self.is_connected:
            raise asyncio_redis.NotConnectedError()
        answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue.append(answer)
        self._send_command([b"publish", channel.encode(), message.encode()])
        return answer

    def _send_command(self, args: Iterable[bytes]) -> None:
        # Every command of this connection goes through here (asyncio-redis's included),
        # so their order on the wire is the order of the calls; those of one turn of the
        # event loop are written at once, one system call instead of one each.
        args = list(args)
        if not self._outgoing:
            asyncio.get_running_loop().call_soon(self._write_outgoing)
        self._outgoing.append(b"*%d\r\n" % len(args))
        for arg in args:
            self._outgoing.append(b"$%d\r\n%b\r\n" % (len(arg), arg))

    def _write_outgoing(self) -> None:
        outgoing, self._outgoing = self._outgoing, []
        if self.transport is not None:  # else lost: connection_lost failed the answers
            self.transport.write(b"".join(outgoing))

    def _send(self, command: bytes, channel: str, confirmed: asyncio.Future[bool] | None) -> None:
        if not self.is_connected:
            if confirmed is not None:
                confirmed.set_result(False)
            return
        self._unconfirmed.append((command, channel, confirmed))
        self._send_command([command, self.encode_from_native(channel)])

    def _confirm(self, kind: bytes, channel: str) -> None:
        if not self._unconfirmed:
            # A reply read after the connection was lost (which forgot what it waited
            # for): nothing waits for it any more.
            return
        command, expected, confirmed = self._unconfirmed.popleft()
        if (command, expected) != (kind, channel):
            log.error("redis out of step", extra={"expected": expected, "confirmed": channel})
            self.abort()  # a fresh connection subscribes afresh
        elif confirmed is not None and not confirmed.done():
            confirmed.set_result(True)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        for _command, _channel, confirmed in self._unconfirmed:
            if confirmed is not None and not confirmed.done():
                confirmed.set_result(False)
        self._unconfirmed.clear()
        if not self.closed.done():
            self.closed.set_result(None)
        self._on_lost(self)

    def abort(self) -> None:
        """Close the connection now; ``closed`` is done once it is."""
        if self.transport is not None:
            self.transport.abort()
        elif not self.closed.done():
            self.closed.set_result(None)
