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

On PostgreSQL a batch is one statement, committed on its own: the lease rows of its
fenced matches read ``FOR SHARE`` and the rows inserted where the epoch holds, from
arrays (``unnest``), in one round trip.

A row whose key (match, player, seq) the journal holds already fails with
:class:`StoredBefore`: an earlier try of it was committed though its answer was lost (the
database stalled, or restarted, after taking it). Its writer's state is behind the
database's, and reads the match again. As a transaction (``BEGIN``, the fence read, the
insert, ``COMMIT``) it took four, and a row that arrived meanwhile waited for them all.
On SQLite (no leases) a batch is one transaction of the one writer.

On PostgreSQL the writer keeps its connection from one batch to the next: taking it from
the pool for every batch cost a checkout and the pool's ping (a round trip) each time. A
connection idle for ``idle_connection_s`` goes back to the pool, and one whose statement
failed is given back at once, so that the pool's ping checks it before it serves again,
as it did for every batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

from sqlalchemy import insert, select, text, tuple_
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.histogram import Histogram
from server.storage.database import Database
from server.storage.models import ActionRecord

_STOP = object()

#: How long an action may wait for its batch to be stored before it is refused
#: ``storage_unavailable`` (the database stalled, or is too slow to answer).
ACTION_DEADLINE_S: Final = 4.0

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


class StoredBefore(RuntimeError):
    """A row's key (match, player, seq) was stored already: by an earlier try whose
    answer was lost (the database stalled or restarted after taking it). The caller's
    state is behind the database's: it reads the match again."""

    def __init__(self, match_id: int, player_id: int, seq: int) -> None:
        super().__init__(
            f"action {seq} of player {player_id} in match {match_id} was stored already"
        )
        self.match_id = match_id
        self.player_id = player_id
        self.seq = seq


class Journal:
    """The action rows of every match, appended in the order ``append`` is called.

    :param database: the database, or (until every caller passes one) its engine.
    :param max_batch_rows: the most rows committed in one transaction.
    :param idle_connection_s: PostgreSQL: how long the writer keeps its connection with
        nothing to write before it goes back to the pool.
    :param monotonic: the server's monotonic clock (``Clock.monotonic``): each group
        commit's time goes into ``commit_seconds``.
    """

    def __init__(
        self,
        database: Database | AsyncEngine,
        *,
        max_batch_rows: int = 1000,
        idle_connection_s: float = 1.0,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        if idle_connection_s <= 0:
            raise ValueError(f"idle_connection_s must be above 0, not {idle_connection_s}")
        self._database = database if isinstance(database, Database) else Database.of(database)
        self._max_batch_rows = max_batch_rows
        self._idle_connection_s = idle_connection_s
        self._connection: AsyncConnection | None = None  # the writer's, between batches
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._closing = False
        self._fences: dict[int, int] = {}
        self.batches_committed = 0
        self.rows_committed = 0
        self._monotonic = monotonic
        #: The time each group commit took, committed or not (``server.metrics``).
        self.commit_seconds = Histogram()

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
        ``epoch`` (see ``server.storage.leases``; PostgreSQL only: SQLite keeps no leases)."""
        if self._database.is_sqlite:
            raise ValueError(f"match {match_id}: SQLite keeps no leases to fence rows with")
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
        try:
            while not stopping:
                batch = [await self._next()]
                while not self._queue.empty() and len(batch) < self._max_batch_rows:
                    batch.append(self._queue.get_nowait())
                if _STOP in batch:
                    stopping = True
                    batch = [item for item in batch if item is not _STOP]
                if batch:
                    await self._commit(batch)
        finally:
            await self._let_go()

    async def _next(self) -> Any:
        """The next queued item; the connection goes back to the pool if none comes soon."""
        if self._connection is not None and self._queue.empty():
            try:
                async with asyncio.timeout(self._idle_connection_s):
                    return await self._queue.get()
            except TimeoutError:
                await self._let_go()
        return await self._queue.get()

    async def _let_go(self) -> None:
        """Give the writer's connection back to the pool (which pings it before reuse)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):  # a broken one is the pool's to discard
                await connection.close()

    async def _commit(self, batch: list[_Item]) -> None:
        try:
            stored, refused = await self._store(batch)
        except (IntegrityError, DataError) as error:
            if len(batch) == 1:
                row = batch[0][0]
                failure: Exception = error
                if isinstance(error, IntegrityError) and await self._stored_before([row]):
                    failure = StoredBefore(*_key(row))
                self._fail(batch, failure)
            else:  # some row is wrong, not the database: find it, commit the others
                for item in batch:
                    await self._commit([item])
            return
        except Exception as error:  # the waiting actions report it; the writer goes on
            self._fail(batch, error)
            return
        before = await self._stored_before([row for row, _, _ in refused]) if refused else set()
        for row, done, epoch in refused:
            if not done.done():
                if _key(row) in before:
                    done.set_exception(StoredBefore(*_key(row)))
                elif epoch is not None:
                    done.set_exception(LeaseLost(row["match_id"], epoch))
                else:
                    done.set_exception(RuntimeError("an action row was not stored"))
        if stored:
            self.batches_committed += 1
            self.rows_committed += len(stored)
        for _, done, _ in stored:
            if not done.done():
                done.set_result(None)

    async def _store(self, batch: list[_Item]) -> tuple[list[_Item], list[_Item]]:
        """Store ``batch``, timed into ``commit_seconds``: (the rows stored, the fenced
        rows refused)."""
        monotonic = self._monotonic
        began = None if monotonic is None else monotonic()
        try:
            if self._database.is_sqlite:
                await self._store_in_transaction(batch)
                return batch, []
            return await self._store_in_one_statement(batch)
        finally:
            if monotonic is not None and began is not None:
                self.commit_seconds.observe(monotonic() - began)

    async def _store_in_transaction(self, batch: list[_Item]) -> None:
        """Store every row of ``batch`` (SQLite: nothing is fenced there)."""
        async with self._database.write() as connection:
            await connection.execute(insert(ActionRecord), [row for row, _, _ in batch])

    async def _store_in_one_statement(
        self, batch: list[_Item]
    ) -> tuple[list[_Item], list[_Item]]:
        """Store the rows of ``batch`` whose fence holds, in one statement (PostgreSQL):
        (the rows stored, the fenced rows refused)."""
        values: dict[str, Any] = {
            column: [row[column] for row, _, _ in batch] for column in _COLUMNS
        }
        values["epoch"] = [epoch for _, _, epoch in batch]
        values["fenced"] = sorted({row["match_id"] for row, _, epoch in batch if epoch is not None})
        try:
            # The whole of a batch's store is bounded: an action waits for it, and a
            # stalled database must give the mover an answer (storage_unavailable).
            async with asyncio.timeout(ACTION_DEADLINE_S):
                if self._connection is None:
                    connection = await self._database.engine.connect()
                    try:
                        self._connection = await connection.execution_options(
                            isolation_level="AUTOCOMMIT"
                        )
                    except BaseException:
                        await connection.invalidate()
                        raise
                result = await self._connection.execute(_FENCED_INSERT, values)
        except BaseException:
            await self._drop_connection()
            raise
        stored = {tuple(key) for key in result}
        refused = [item for item in batch if _key(item[0]) not in stored]
        return [item for item in batch if _key(item[0]) in stored], refused

    async def _stored_before(self, rows: list[dict[str, Any]]) -> set[tuple[int, int, int]]:
        """The keys of ``rows`` that the journal holds already."""
        keys = [_key(row) for row in rows]
        try:
            async with self._database.read() as connection:
                found = await connection.execute(
                    select(ActionRecord.match_id, ActionRecord.player_id, ActionRecord.seq)
                    .where(tuple_(ActionRecord.match_id, ActionRecord.player_id,
                                  ActionRecord.seq).in_(keys))
                )
                return {tuple(key) for key in found}  # type: ignore[misc]
        except Exception:  # the database is down again: the rows count as refused
            return set()

    async def _drop_connection(self) -> None:
        """Let the writer's connection go after a failure: closed if it can be (the pool
        pings it before reuse), dropped at once if its statement was cut short (a stalled
        server would hold a polite close as long as it stalls)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.invalidate()

    @staticmethod
    def _fail(batch: list[_Item], error: Exception) -> None:
        for _, done, _ in batch:
            if not done.done():
                done.set_exception(error)


#: The columns of an action row, as ``append`` takes them.
_COLUMNS: Final = (
    "match_id", "player_id", "seq", "action", "kind", "card", "from_slot", "to_slot",
    "t_ms", "score",
)  # fmt: skip

# The fence and the insert in one statement (PostgreSQL): the lease rows of the fenced
# matches are read FOR SHARE (a take-over waits for the statement, one committed before
# it is seen), and a row is inserted when it is not fenced or its epoch is the lease's.
# The lease rows are locked in match id order, as every transaction locking several of
# them does (server.storage.leases): no two of them wait on each other.
_FENCED_INSERT: Final = text(
    """
    WITH fence AS MATERIALIZED (
        SELECT match_id, epoch FROM match_leases
        WHERE match_id = ANY(CAST(:fenced AS bigint[]))
        ORDER BY match_id
        FOR SHARE
    )
    INSERT INTO actions
        (match_id, player_id, seq, action, kind, card, from_slot, to_slot, t_ms, score)
    SELECT r.match_id, r.player_id, r.seq, r.action, r.kind, r.card, r.from_slot,
           r.to_slot, r.t_ms, r.score
    FROM unnest(
        CAST(:match_id AS bigint[]), CAST(:player_id AS bigint[]), CAST(:seq AS integer[]),
        CAST(:action AS text[]), CAST(:kind AS text[]), CAST(:card AS text[]),
        CAST(:from_slot AS text[]), CAST(:to_slot AS text[]), CAST(:t_ms AS integer[]),
        CAST(:score AS integer[]), CAST(:epoch AS bigint[])
    ) AS r(match_id, player_id, seq, action, kind, card, from_slot, to_slot, t_ms, score,
           epoch)
    LEFT JOIN fence ON fence.match_id = r.match_id
    WHERE r.epoch IS NULL OR fence.epoch = r.epoch
    ON CONFLICT (match_id, player_id, seq) DO NOTHING
    RETURNING match_id, player_id, seq
    """
)


def _key(row: dict[str, Any]) -> tuple[int, int, int]:
    return row["match_id"], row["player_id"], row["seq"]
