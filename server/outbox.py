"""The frames one connection sends, in order: replies and the events it follows.

A frame the socket can take now (the connection open, its write buffer below the
high-water mark) is written at once, from the caller: for an event, from inside the
broker's ``publish``, with no queue, no task switch and no timer. Otherwise the frame
waits in the outbox, behind what waits already, and one writer task sends what waits,
each send bounded by ``send_timeout_s``: a client that leaves its frames unread that long
is dropped. While frames wait, a reply waits its turn (nothing is lost); an event past
``max_pending_events`` waiting is dropped, as a broker drops what a slow subscriber cannot
take, and the client sees the gap in the event numbers and resyncs.

While a request is answered (``hold`` ... ``release``), events are held back and sent
after its reply: a reply tells the last event it reflects (a snapshot's ``seq``), so an
event that its own request caused never reaches the client before it.

Written at once, a frame goes through websockets' Sans-I/O protocol
(``protocol.send_text``, ``protocol.data_to_send``) to the connection's transport, as
``ServerConnection.send`` does, without its ``send_context`` (a context manager and an
``await`` for every frame): a fifth of the server's time went into forwarding each event
to each watcher (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Final

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

__all__ = ["Dropped", "Outbox"]

log = logging.getLogger("gaps.server")

#: The bytes a text frame adds to its payload, at most (header and length).
MAX_FRAME_OVERHEAD_BYTES: Final = 10


class Dropped(Exception):
    """The client stopped reading: its connection was dropped."""


class Outbox:
    """The outgoing frames of ``connection``.

    :param send_timeout_s: how long one send may wait for the client to read.
    :param max_pending_events: events waiting past which an event is dropped.
    :param address: the client's, for the log.
    """

    def __init__(
        self,
        connection: ServerConnection,
        *,
        send_timeout_s: float,
        max_pending_events: int,
        address: str = "",
    ) -> None:
        self._connection = connection
        self._send_timeout_s = send_timeout_s
        self._max_pending_events = max_pending_events
        self._address = address
        # Each waiting frame, with the future of the reply that waits for it (None: an event).
        self._waiting: deque[tuple[str, asyncio.Future[None] | None]] = deque()
        self._events_waiting = 0
        self._writer: asyncio.Task[None] | None = None
        self._failed: BaseException | None = None
        self._held: list[str] | None = None  # events held back while a request is answered
        #: Events dropped because too many waited.
        self.dropped = 0

    @property
    def waiting(self) -> int:
        """Frames waiting for the socket to take them."""
        return len(self._waiting)

    async def send(self, frame: str, *, apart: bool = False) -> None:
        """Send a reply: return once it is written (or buffered by the transport).
        Raises ``ConnectionClosed`` when the connection is closed, ``Dropped`` when the
        client was dropped for not reading. A reply sent ``apart`` (to a read answered
        while another request is being answered) leaves the events held back for that
        other request's reply where they are."""
        if self._failed is not None:
            raise self._failed
        if not self._waiting:
            # The events the request caused, held back for the reply, go in its write:
            # one system call where each frame took its own.
            held = None if apart else self._held
            if held and self._fits([frame, *held]):
                self._write([frame, *held])
                held.clear()
                return
            if self._fits([frame]):
                self._write([frame])
                return
        written = asyncio.get_running_loop().create_future()
        self._wait(frame, written)
        await written

    def post(self, frame: str) -> None:
        """Send an event, now or once what waits is sent; never raises (a failed
        connection is ended by its reader)."""
        if self._failed is not None:
            return
        if self._held is not None:
            if len(self._held) >= self._max_pending_events:
                self.dropped += 1
            else:
                self._held.append(frame)
        elif not self._waiting and self._fits([frame]):
            self._write([frame])
        elif self._events_waiting >= self._max_pending_events:
            self.dropped += 1
        else:
            self._events_waiting += 1
            self._wait(frame, None)

    def hold(self) -> None:
        """Hold events back until ``release``: a request is being answered."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Send the events held back, in order (the reply has been sent)."""
        held, self._held = self._held, None
        for frame in held or ():
            self.post(frame)

    def close(self) -> None:
        """Stop the writer; what still waits is not sent."""
        if self._writer is not None:
            self._writer.cancel()
        self._fail(ConnectionClosed(None, None))

    def _fits(self, frames: list[str]) -> bool:
        """Whether ``frames`` can be written now without passing the high-water mark."""
        transport = self._connection.transport
        # A str's UTF-8 takes at most 4 bytes a character.
        size = sum(MAX_FRAME_OVERHEAD_BYTES + 4 * len(frame) for frame in frames)
        return (
            self._connection.protocol.state is State.OPEN
            and transport.get_write_buffer_size() + size <= transport.get_write_buffer_limits()[1]
        )

    def _write(self, frames: list[str]) -> None:
        """Write ``frames`` in one call of the transport (one system call when it is idle)."""
        protocol = self._connection.protocol
        for frame in frames:
            protocol.send_text(frame.encode())
        # An empty chunk would ask for a half-close, which comes only after a close frame.
        data = b"".join(protocol.data_to_send())
        if data:
            self._connection.transport.write(data)

    def _wait(self, frame: str, written: asyncio.Future[None] | None) -> None:
        self._waiting.append((frame, written))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_waiting())

    async def _write_waiting(self) -> None:
        try:
            while self._waiting:
                frame, written = self._waiting[0]
                async with asyncio.timeout(self._send_timeout_s):
                    await self._connection.send(frame)
                self._waiting.popleft()
                if written is None:
                    self._events_waiting -= 1
                elif not written.done():
                    written.set_result(None)
        except TimeoutError:
            log.warning("dropped a client that does not read", extra={"address": self._address})
            self._connection.transport.abort()
            self._fail(Dropped())
        except ConnectionClosed as closed:
            self._fail(closed)
        finally:
            self._writer = None

    def _fail(self, error: BaseException) -> None:
        """Fail every reply that waits with ``error``, and every later send."""
        self._failed = self._failed or error
        while self._waiting:
            _, written = self._waiting.popleft()
            if written is not None and not written.done():
                written.set_exception(self._failed)
        self._events_waiting = 0
