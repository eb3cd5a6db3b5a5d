"""The action journal: appends action rows, committing concurrent appends together.

An action is acknowledged only once its row is committed. Committing each row alone
would cap throughput at one commit latency per action, so ``append`` queues the row and
one writer task commits everything queued in one transaction (group commit). When the
database refuses a batch for what a row holds (a constraint, a bad value), its rows are
committed again one by one, so that only the refused rows fail.

Batches are written through ``Database.write()``: on SQLite they queue for the one
writing connection with every other write of the server.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.models import ActionRecord

_STOP = object()


class Journal:
    """The action rows of every match, appended in the order ``append`` is called.

    :param database: the database, or (until every caller passes one) its engine.
    :param max_batch_rows: the most rows committed in one transaction.
    """

    def __init__(self, database: Database | AsyncEngine, *, max_batch_rows: int = 1000) -> None:
        self._database = database if isinstance(database, Database) else Database.of(database)
        self._max_batch_rows = max_batch_rows
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._closing = False
        self.batches_committed = 0
        self.rows_committed = 0

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write_forever(), name="journal-writer")

    async def close(self) -> None:
        """Commit what is queued, then stop; later appends are refused."""
        if self._writer is not None:
            self._closing = True
            self._queue.put_nowait(_STOP)
            await self._writer
            self._writer = None
            while not self._queue.empty():  # queued after the stop marker: refuse them
                item = self._queue.get_nowait()
                if item is not _STOP and not item[1].done():
                    item[1].set_exception(RuntimeError("the journal is closed"))

    async def append(self, row: dict[str, Any]) -> None:
        """Return once ``row`` is committed; raise the database's error if it was not."""
        if self._writer is None or self._closing:
            raise RuntimeError("the journal is not running")
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((row, done))
        await done

    async def _write_forever(self) -> None:
        stopping = False
        while not stopping:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < self._max_batch_rows:
                batch.append(self._queue.get_nowait())
            if _STOP in batch:
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            if batch:
                await self._commit(batch)

    async def _commit(self, batch: list[tuple[dict[str, Any], asyncio.Future[None]]]) -> None:
        try:
            async with self._database.write() as connection:
                await connection.execute(insert(ActionRecord), [row for row, _ in batch])
        except (IntegrityError, DataError) as error:
            if len(batch) == 1:
                self._fail(batch, error)
            else:  # some row is wrong, not the database: find it, commit the others
                for item in batch:
                    await self._commit([item])
            return
        except Exception as error:  # the waiting actions report it; the writer goes on
            self._fail(batch, error)
            return
        self.batches_committed += 1
        self.rows_committed += len(batch)
        for _, done in batch:
            if not done.done():
                done.set_result(None)

    @staticmethod
    def _fail(batch: list[tuple[dict[str, Any], asyncio.Future[None]]], error: Exception) -> None:
        for _, done in batch:
            if not done.done():
                done.set_exception(error)
