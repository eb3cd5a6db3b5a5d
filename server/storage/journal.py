"""The action journal: appends action rows, committing concurrent appends together.

An action is acknowledged only once its row is committed. Committing each row alone
would cap throughput at one commit latency per action, so ``append`` queues the row and
one writer task commits everything queued in one transaction (group commit). When the
database refuses a batch for what a row holds (a constraint, a bad value), its rows are
committed again one by one, so that only the refused rows fail.

Batches are written through ``Database.write()``: on SQLite they queue for the one
writing connection with every other write of the server.

In a cluster, a match's rows are fenced (``fence``): each is stored only if the match's
lease still has the epoch this process took the match with, read in the transaction that
stores the row. A row whose epoch is gone fails with :class:`LeaseLost` and is not
stored; the other rows of its batch are.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.leases import lease_epochs
from server.storage.models import ActionRecord

_STOP = object()

#: A queued row, the future its caller waits on, and the epoch it is fenced by (if any).
_Item = tuple[dict[str, Any], "asyncio.Future[None]", int | None]


class LeaseLost(RuntimeError):
    """A row was not stored: its match was taken over by another process."""

    def __init__(self, match_id: int, epoch: int) -> None:
        super().__init__(
            f"match {match_id} is no longer this process's (its lease moved on from "
            f"epoch {epoch}): the row was not stored"
        )
        self.match_id = match_id
        self.epoch = epoch


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
        self._fences: dict[int, int] = {}
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

    def fence(self, match_id: int, epoch: int) -> None:
        """Store the rows of ``match_id`` appended from now on only while its lease has
        ``epoch`` (see ``server.storage.leases``)."""
        self._fences[match_id] = epoch

    def unfence(self, match_id: int) -> None:
        """Forget the fence of ``match_id`` (a match this process no longer runs)."""
        self._fences.pop(match_id, None)

    async def append(self, row: dict[str, Any]) -> None:
        """Return once ``row`` is committed; raise the database's error if it was not,
        or :class:`LeaseLost` if its match is fenced and its lease has moved on."""
        if self._writer is None or self._closing:
            raise RuntimeError("the journal is not running")
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((row, done, self._fences.get(row["match_id"])))
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

    async def _commit(self, batch: list[_Item]) -> None:
        whole, refused = batch, []
        try:
            async with self._database.write() as connection:
                fenced = {row["match_id"] for row, _, epoch in batch if epoch is not None}
                if fenced:
                    current = await lease_epochs(connection, fenced)
                    refused = [item for item in batch if _refused(item, current)]
                    batch = [item for item in batch if not _refused(item, current)]
                if batch:
                    await connection.execute(insert(ActionRecord), [row for row, _, _ in batch])
        except (IntegrityError, DataError) as error:
            if len(whole) == 1:
                self._fail(whole, error)
            else:  # some row is wrong, not the database: find it, commit the others
                for item in whole:
                    await self._commit([item])
            return
        except Exception as error:  # the waiting actions report it; the writer goes on
            self._fail(whole, error)
            return
        for row, done, epoch in refused:
            if not done.done():
                assert epoch is not None
                done.set_exception(LeaseLost(row["match_id"], epoch))
        if batch:
            self.batches_committed += 1
            self.rows_committed += len(batch)
        for _, done, _ in batch:
            if not done.done():
                done.set_result(None)

    @staticmethod
    def _fail(batch: list[_Item], error: Exception) -> None:
        for _, done, _ in batch:
            if not done.done():
                done.set_exception(error)


def _refused(item: _Item, current: dict[int, int]) -> bool:
    """Whether ``item`` is fenced by an epoch its match's lease no longer has."""
    row, _, epoch = item
    return epoch is not None and current.get(row["match_id"]) != epoch
