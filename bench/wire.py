"""A light WebSocket client for the load benchmark: the load generator must cost less a
frame than the servers it measures, or its own limit is what gets measured.

websockets' asyncio client wakes a reader task, goes through its frame assembler and
resolves a future for every frame it receives; here a frame costs a slice of the bytes
read and one call. The connection is an ``asyncio.Protocol``: ``send`` writes one masked
text frame at once, and each text frame received is handed to the ``on_frame`` given to
``listen`` as bytes (the JSON parser takes bytes), timed when its bytes were read.

Only what the servers of this project send is understood: unfragmented, unmasked frames
without extensions (they run without compression). Pings are answered, a close is
echoed; anything else is a ``WireError``, and a lost connection is ``WireClosed``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import random
import struct
import time
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

from websockets.speedups import apply_mask
from websockets.utils import accept_key

__all__ = ["Wire", "WireClosed", "WireError", "open_wire"]

TEXT: Final = 0x1
CLOSE: Final = 0x8
PING: Final = 0x9
PONG: Final = 0xA
FIN: Final = 0x80
MASKED: Final = 0x80
END_OF_HEAD: Final = b"\r\n\r\n"
MAX_HEAD_BYTES: Final = 16 * 1024
CLOSE_WAIT_S: Final = 2.0


class WireError(Exception):
    """The server answered something this client does not speak."""


class WireClosed(Exception):
    """The connection was closed or lost."""


class Wire(asyncio.Protocol):
    """One client connection: once it is open, ``listen`` says where its frames go."""

    def __init__(self, host: str, path: str) -> None:
        self.url = f"ws://{host}{path}"
        self._on_frame: Callable[[bytes, float], None] = self._keep
        self._on_closed: Callable[[WireClosed], None] = self._keep_closed
        self._early: list[tuple[bytes, float]] = []  # frames before ``listen``
        self._closed: WireClosed | None = None
        self._key = base64.b64encode(os.urandom(16)).decode()
        self._request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {self._key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        self._transport: asyncio.Transport | None = None
        self._head = bytearray()  # the handshake's answer, until it is whole
        self._rest = b""  # the start of a frame not yet whole
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.lost: asyncio.Future[None] = loop.create_future()

    # -- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        transport.write(self._request)

    def data_received(self, data: bytes) -> None:
        arrived = time.perf_counter()
        if not self.opened.done():
            data = self._handshake(data)
        if self._rest:
            data = self._rest + data
        self._rest = data[self._frames(data, arrived) :]

    def connection_lost(self, exc: Exception | None) -> None:
        closed = WireClosed(f"connection lost: {exc!r}" if exc else "connection closed")
        if not self.opened.done():
            self.opened.set_exception(closed)
        if not self.lost.done():
            self.lost.set_result(None)
        self._on_closed(closed)

    def listen(
        self, on_frame: Callable[[bytes, float], None], on_closed: Callable[[WireClosed], None]
    ) -> None:
        """From now on, each text frame's payload goes to ``on_frame`` with the
        ``time.perf_counter`` of its arrival (those that came with the handshake's answer
        first), and the connection's end to ``on_closed``."""
        self._on_frame, self._on_closed = on_frame, on_closed
        early, self._early = self._early, []
        for payload, arrived in early:
            on_frame(payload, arrived)
        if self._closed is not None:
            on_closed(self._closed)

    def _keep(self, payload: bytes, arrived: float) -> None:
        self._early.append((payload, arrived))

    def _keep_closed(self, closed: WireClosed) -> None:
        self._closed = closed

    # -- sending -----------------------------------------------------------------------

    def send(self, payload: bytes) -> None:
        """Writes ``payload`` (UTF-8 JSON) as one text frame."""
        self._write(TEXT, payload)

    async def close(self) -> None:
        """Sends a close frame, waits a moment for the server's, then drops the
        connection."""
        if self._transport is None or self._transport.is_closing():
            return
        self._write(CLOSE, struct.pack("!H", 1000))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.lost), CLOSE_WAIT_S)
        self._transport.abort()

    def abort(self) -> None:
        """Drops the connection at once, without a closing handshake."""
        if self._transport is not None:
            self._transport.abort()

    def _write(self, opcode: int, payload: bytes) -> None:
        if self._transport is None or self._transport.is_closing():
            raise WireClosed("connection closed")
        length = len(payload)
        if length < 126:
            head = bytes((FIN | opcode, MASKED | length))
        elif length < 1 << 16:
            head = struct.pack("!BBH", FIN | opcode, MASKED | 126, length)
        else:
            head = struct.pack("!BBQ", FIN | opcode, MASKED | 127, length)
        # A client masks its frames (RFC 6455, 5.3); a pseudo-random key is enough here.
        mask = random.randbytes(4)
        self._transport.write(head + mask + apply_mask(payload, mask))

    # -- receiving ---------------------------------------------------------------------

    def _handshake(self, data: bytes) -> bytes:
        """Takes the handshake's answer from ``data``; returns what follows it."""
        self._head += data
        end = self._head.find(END_OF_HEAD)
        if end < 0:
            if len(self._head) > MAX_HEAD_BYTES:
                self._fail(WireError("the handshake's answer has no end"))
            return b""
        head, rest = bytes(self._head[:end]), bytes(self._head[end + len(END_OF_HEAD) :])
        self._head.clear()
        lines = head.decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        fields = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:])
        }
        if len(status) < 2 or status[1] != "101":
            self._fail(WireError(f"the server refused the upgrade: {lines[0]!r}"))
        elif fields.get("sec-websocket-accept") != accept_key(self._key):
            self._fail(WireError("the server's Sec-WebSocket-Accept does not match"))
        elif "sec-websocket-extensions" in fields:
            self._fail(WireError(f"an extension this client does not speak: {fields}"))
        else:
            self.opened.set_result(None)
            return rest
        return b""

    def _frames(self, data: bytes, arrived: float) -> int:
        """Hands over every whole frame in ``data``; returns where the first one that is
        not whole starts."""
        start, end = 0, len(data)
        while end - start >= 2:
            first, second = data[start], data[start + 1]
            length, at = second & 0x7F, start + 2
            if length == 126:
                if end - at < 2:
                    break
                (length,) = struct.unpack_from("!H", data, at)
                at += 2
            elif length == 127:
                if end - at < 8:
                    break
                (length,) = struct.unpack_from("!Q", data, at)
                at += 8
            if end - at < length:
                break
            payload, start = data[at : at + length], at + length
            opcode = first & 0x0F
            if first & FIN and not second & MASKED and opcode == TEXT:
                self._on_frame(payload, arrived)
            elif opcode == PING:
                self._write(PONG, payload)
            elif opcode == CLOSE:
                with contextlib.suppress(WireClosed):
                    self._write(CLOSE, payload[:2])
                if self._transport is not None:
                    self._transport.close()
                return end
            elif opcode != PONG:
                self._fail(WireError(f"a frame this client does not speak: {first:#x} {second:#x}"))
                return end
        return start

    def _fail(self, error: WireError) -> None:
        if not self.opened.done():
            self.opened.set_exception(error)
        self.abort()


async def open_wire(url: str, *, timeout_s: float) -> Wire:
    """A connection to the WebSocket server at ``url`` (ws://HOST:PORT/PATH), its
    handshake done. Raises ``OSError``, ``WireError``, ``WireClosed`` or ``TimeoutError``."""
    parts = urlsplit(url)
    if parts.scheme != "ws" or parts.hostname is None or parts.port is None:
        raise WireError(f"{url!r}: only ws://HOST:PORT URLs")
    host, port = parts.hostname, parts.port
    async with asyncio.timeout(timeout_s):
        transport, wire = await asyncio.get_running_loop().create_connection(
            lambda: Wire(f"{host}:{port}", parts.path or "/"), host, port
        )
        try:
            await wire.opened
        except BaseException:
            transport.abort()
            raise
    return wire
