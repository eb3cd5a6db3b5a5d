"""server.outbox: a connection's frames in order, written at once while the socket takes
them; behind a client that does not read, replies wait, events past the bound are
dropped, and a client silent past the send timeout is dropped. Real websockets
connections on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as websocket_connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from server.outbox import Dropped, Outbox

#: Frames of about 20 KB: a few of them fill a small receive buffer and the write limit.
BIG = "x" * 20_000


@asynccontextmanager
async def pair(
    *, write_limit: int = 16 * 1024, slow: bool = False
) -> AsyncIterator[tuple[ServerConnection, ClientConnection]]:
    """A server connection and its client; ``slow``: the client's receive buffer is tiny
    and it holds at most one unread message, so unread frames back up into the server."""
    accepted: asyncio.Future[ServerConnection] = asyncio.get_running_loop().create_future()
    finished = asyncio.Event()

    async def handler(connection: ServerConnection) -> None:
        accepted.set_result(connection)
        await finished.wait()

    async with serve(
        handler, "127.0.0.1", 0, write_limit=write_limit, compression=None, close_timeout=0.5
    ) as server:
        port = server.sockets[0].getsockname()[1]
        sock = socket.socket()
        if slow:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        client = await websocket_connect(
            f"ws://127.0.0.1:{port}",
            sock=sock,
            max_queue=1 if slow else 16,
            compression=None,
            close_timeout=0.5,  # a backed-up connection does not close cleanly
        )
        try:
            yield await accepted, client
        finally:
            finished.set()
            await client.close()


async def received(client: ClientConnection, count: int) -> list[str]:
    return [str(await asyncio.wait_for(client.recv(), 10)) for _ in range(count)]


async def backed_up(outbox: Outbox) -> None:
    """Post big events until one has to wait: the client reads none of them."""
    while not outbox.waiting:
        outbox.post(BIG)
        await asyncio.sleep(0)


async def test_replies_and_events_arrive_in_the_order_they_were_given() -> None:
    async with pair() as (connection, client):
        outbox = Outbox(connection, send_timeout_s=5, max_pending_events=10)
        await outbox.send("reply 1")
        outbox.post("event 1")
        outbox.post("event 2")
        await outbox.send("reply 2")
        assert await received(client, 4) == ["reply 1", "event 1", "event 2", "reply 2"]
        assert outbox.dropped == 0


async def test_a_frame_the_socket_takes_is_written_within_the_call() -> None:
    async with pair() as (connection, client):
        outbox = Outbox(connection, send_timeout_s=5, max_pending_events=10)
        before = connection.transport.get_write_buffer_size()
        outbox.post(json.dumps({"event": "progress"}))
        assert connection.transport.get_write_buffer_size() == before  # gone to the socket
        assert await received(client, 1) == ['{"event": "progress"}']


async def test_behind_a_slow_reader_replies_wait_and_events_past_the_bound_drop() -> None:
    async with pair(slow=True) as (connection, client):
        outbox = Outbox(connection, send_timeout_s=10, max_pending_events=3)
        await backed_up(outbox)
        for number in range(5):
            outbox.post(f"late event {number}")  # two wait behind the big one, three drop
        reply = asyncio.ensure_future(outbox.send("the reply"))
        await asyncio.sleep(0.05)
        assert not reply.done()  # it waits behind what the client has not read
        assert (outbox.dropped, outbox.waiting) == (3, 4)
        frames: list[str] = []
        while "the reply" not in frames:
            frames.append(str(await asyncio.wait_for(client.recv(), 10)))
        await asyncio.wait_for(reply, 10)
        late = [frame for frame in frames if frame != BIG]
        assert late == ["late event 0", "late event 1", "the reply"]
        assert outbox.waiting == 0


async def test_a_client_that_does_not_read_past_the_send_timeout_is_dropped() -> None:
    async with pair(slow=True) as (connection, _client):
        outbox = Outbox(connection, send_timeout_s=0.3, max_pending_events=100)
        await backed_up(outbox)
        with pytest.raises(Dropped):
            await asyncio.wait_for(outbox.send("never read"), 10)
        outbox.post("an event after the drop")  # ignored, never raises
        with pytest.raises(Dropped):
            await outbox.send("another reply")


async def test_closing_fails_a_waiting_reply_and_every_later_one() -> None:
    async with pair(slow=True) as (connection, _client):
        outbox = Outbox(connection, send_timeout_s=10, max_pending_events=100)
        await backed_up(outbox)
        reply = asyncio.ensure_future(outbox.send("waiting"))
        await asyncio.sleep(0.05)
        outbox.close()
        with pytest.raises(ConnectionClosed):
            await reply
        with pytest.raises(ConnectionClosed):
            await outbox.send("later")


async def test_events_posted_while_a_request_is_answered_come_after_its_reply() -> None:
    async with pair() as (connection, client):
        outbox = Outbox(connection, send_timeout_s=5, max_pending_events=2)
        outbox.hold()
        outbox.post("event 1 (the request's own)")
        outbox.post("event 2")
        outbox.post("event 3")  # past the bound: dropped
        await outbox.send("the reply")
        outbox.release()
        outbox.post("event 4")
        assert await received(client, 4) == [
            "the reply",
            "event 1 (the request's own)",
            "event 2",
            "event 4",
        ]
        assert outbox.dropped == 1


async def test_a_reply_and_the_events_held_for_it_leave_in_one_write() -> None:
    async with pair() as (connection, client):
        outbox = Outbox(connection, send_timeout_s=5, max_pending_events=10)
        transport = connection.transport
        writes: list[bytes | bytearray | memoryview] = []
        write = transport.write

        def counted(data: bytes | bytearray | memoryview) -> None:
            writes.append(data)
            write(data)

        transport.write = counted  # type: ignore[method-assign]
        outbox.hold()
        outbox.post("event 1 (the request's own)")
        outbox.post("event 2")
        await outbox.send("the reply")
        outbox.release()
        assert len(writes) == 1
        assert await received(client, 3) == [
            "the reply", "event 1 (the request's own)", "event 2",
        ]
