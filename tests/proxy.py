"""A TCP proxy the tests can cut, as a network or a database outage would.

The server under test connects to the proxy instead of the real service; ``cut()``
drops every open connection and refuses new ones until ``restore()``; ``stall()`` keeps
every connection open but forwards nothing (nor does a new one get through) until
``resume()``: a network that silently stops, with no close to notice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from sqlalchemy import make_url

from server.app import Server
from server.config import Settings


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()
        self.port = 0

    async def start(self) -> None:
        """Listen (on the same port as before, after a ``cut``)."""
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        """Refuse new connections and drop the open ones."""
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        await self._server.wait_closed()

    async def restore(self) -> None:
        await self.start()

    def stall(self) -> None:
        """Forward nothing more, in either direction, and drop nothing."""
        self._flowing.clear()

    def resume(self) -> None:
        """Forward again, what was held first."""
        self._flowing.set()

    async def close(self) -> None:
        await self.cut()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            target_reader, target_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, target_writer))
        await asyncio.gather(
            self._pipe(reader, target_writer),
            self._pipe(target_reader, writer),
            return_exceptions=True,
        )
        self._writers.difference_update((writer, target_writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.close()


@contextlib.asynccontextmanager
async def proxied_server(settings: Settings) -> AsyncIterator[tuple[Server, TcpProxy]]:
    """A running server whose PostgreSQL database is behind a proxy the test can cut
    (the test is skipped on SQLite: a file has no outage to simulate)."""
    assert settings.database_url is not None
    if not settings.database_url.startswith("postgresql"):
        pytest.skip("the embedded SQLite file has no outage to simulate")
    url = make_url(settings.database_url)
    assert url.host is not None and url.port is not None
    proxy = TcpProxy(url.host, url.port)
    await proxy.start()
    proxied = url.set(port=proxy.port).render_as_string(hide_password=False)
    server = Server(replace(settings, database_url=proxied))
    await server.start()
    try:
        yield server, proxy
    finally:
        await server.close()
        await proxy.close()
