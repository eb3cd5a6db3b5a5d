"""The database: which one (Postgres or the embedded SQLite file), how it is written and
read, and its migrations.

Every repository goes through one :class:`Database`: ``database.write()`` for a
transaction that writes, ``database.read()`` for one that only reads.

On PostgreSQL both are transactions of one pooled engine: the database serializes
writers row by row itself.

SQLite has one writer: the file takes one write transaction at a time, and a second
connection that wants to write waits for the lock (its busy timeout) and then fails with
"database is locked". So the server writes through exactly one connection, and its write
transactions queue for it in the order they asked (``write()``), the action journal
included. Each write transaction begins ``IMMEDIATE``: it takes the file's write lock
before it reads, where pysqlite's deferred ``BEGIN`` would take it at the first write and
fail at once, without waiting, if another process wrote meanwhile. Reads go to a pool of
other connections that cannot write (``PRAGMA query_only``) and, in WAL mode, read the
last committed state without waiting for the writer.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Final

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from server.storage.outage import is_outage

log = logging.getLogger("gaps.storage")

# The repository's top-level migrations/ directory, which pyproject.toml installs as this
# package: found the same way in an editable install and in a wheel.
MIGRATIONS_PACKAGE = "server.storage.migrations"

#: How long one statement may take on PostgreSQL before it is given up (the server cancels
#: it, and the driver stops waiting for an answer: a stalled server is an outage too).
STATEMENT_TIMEOUT_S: Final = 3.0

#: How long a request may wait for a pooled PostgreSQL connection, and a new connection
#: may take to open, before the database counts as unavailable.
POOL_TIMEOUT_S: Final = 2.0
CONNECT_TIMEOUT_S: Final = 3.0

#: How long an SQLite connection waits for a lock another connection holds, in seconds.
#:
#: The server's own writes never wait on each other: they queue for its one writing
#: connection. What the writer can wait for is another process writing the same file
#: (``gaps-server migrate`` or ``rebuild-boards`` run beside a live server, an ``sqlite3``
#: shell), and what a reader can wait for is WAL recovery after a crash. Five seconds
#: outlasts such a transaction or a recovery on a loaded two-core host, and is the bound
#: a request waits for the database on PostgreSQL too (docs/storage.md); a foreign lock
#: held longer is reported as an outage ("database is locked"),
#: which the ending path of a match retries and a mover is told about, instead of every
#: write of the server freezing behind it unseen.
SQLITE_BUSY_TIMEOUT_S: Final = 5.0

#: SQLite connections that serve reads, beside the one that writes.
SQLITE_READ_CONNECTIONS: Final = 4

#: The advisory lock that migrations take on PostgreSQL (:func:`hold_migration_lock`): any
#: number no other user of the database takes (server/storage/leader.py takes another).
MIGRATION_LOCK_KEY: Final = 0x6A704D

#: How long a migration waits for a table that another transaction holds, in seconds.
MIGRATION_LOCK_TIMEOUT_S: Final = 5.0

#: PostgreSQL's SQLSTATE for a lock not granted within ``lock_timeout``.
LOCK_NOT_AVAILABLE: Final = "55P03"

_DATABASES: weakref.WeakKeyDictionary[AsyncEngine, Database] = weakref.WeakKeyDictionary()


def database_url(configured: str | None, *, data_dir: Path) -> str:
    """The SQLAlchemy URL: ``configured`` (postgres:// forms get asyncpg), or else the
    embedded SQLite file in ``data_dir``."""
    if not configured:
        return f"sqlite+aiosqlite:///{data_dir / 'gaps.sqlite3'}"
    url = make_url(configured)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+asyncpg")
    elif url.drivername == "sqlite":
        url = url.set(drivername="sqlite+aiosqlite")
    return url.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


class Database:
    """One database, written through ``write()`` and read through ``read()``.

    ``engine`` is the engine migrations, health checks and tests use;
    on SQLite it is the one writing connection (a pool of one), so that even a caller
    using it directly cannot write beside the queue. Disposing of it disposes of the
    read connections too.

    :param url: a SQLAlchemy URL, as :func:`database_url` gives.
    :param pool_size: PostgreSQL: the pooled connections (as many again may overflow).
    :param statement_timeout_s: PostgreSQL: how long one statement may take (None: as
        long as it takes, for the operator's batch commands); waiting for a pooled or a
        new connection is bounded too (``POOL_TIMEOUT_S``, ``CONNECT_TIMEOUT_S``).
    :param idle_in_transaction_timeout_s: PostgreSQL: how long a transaction may stay
        idle between two statements before the database ends its session, and its locks
        with it (None: as long as it takes). A server holding leases sets its lease's
        time: a process paused or stuck mid-transaction (a journal commit holds its lease
        rows ``FOR SHARE``) must not keep another from taking its matches over once its
        leases run out.
    :param busy_timeout_s: SQLite: see :data:`SQLITE_BUSY_TIMEOUT_S`.
    :param read_connections: SQLite: the pooled read-only connections.
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S,
        read_connections: int = SQLITE_READ_CONNECTIONS,
        statement_timeout_s: float | None = STATEMENT_TIMEOUT_S,
        idle_in_transaction_timeout_s: float | None = None,
    ) -> None:
        self.url = url
        self.is_sqlite = is_sqlite(url)
        self._write_lock: asyncio.Lock | None = None
        if not self.is_sqlite:
            self.engine = create_async_engine(
                url,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                pool_timeout=POOL_TIMEOUT_S,
                connect_args=_deadlines(statement_timeout_s, idle_in_transaction_timeout_s),
            )
            self._read_engine = self.engine
        else:
            self._write_lock = asyncio.Lock()
            database = make_url(url).database
            in_memory = not database or database == ":memory:"
            if database and not in_memory:
                Path(database).parent.mkdir(parents=True, exist_ok=True)
            busy_timeout_ms = round(busy_timeout_s * 1000)
            # One connection, never given back to a second writer: the queue is the pool.
            # (An in-memory database is one connection anyway: SQLAlchemy's StaticPool.)
            one = {} if in_memory else {"pool_size": 1, "max_overflow": 0}
            self.engine = create_async_engine(url, **one)
            _on_sqlite(self.engine, begin="BEGIN IMMEDIATE", busy_timeout_ms=busy_timeout_ms)
            if in_memory:  # a second connection would open another, empty database
                self._read_engine = self.engine
            else:
                self._read_engine = create_async_engine(
                    url, pool_size=read_connections, max_overflow=0
                )
                _on_sqlite(
                    self._read_engine,
                    begin="BEGIN",
                    busy_timeout_ms=busy_timeout_ms,
                    read_only=True,
                )
                event.listen(self.engine.sync_engine, "engine_disposed", self._dispose_readers)
        _DATABASES[self.engine] = self

    @classmethod
    def of(cls, engine: AsyncEngine) -> Database:
        """The database ``engine`` writes (the one :func:`create_engine` made it for, or
        one around an engine made elsewhere, whose every connection may write)."""
        found = _DATABASES.get(engine)
        if found is None:
            found = cls.__new__(cls)
            found.url = engine.url.render_as_string(hide_password=False)
            found.is_sqlite = engine.dialect.name == "sqlite"
            found.engine = found._read_engine = engine
            found._write_lock = asyncio.Lock() if found.is_sqlite else None
            _DATABASES[engine] = found
        return found

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A transaction that may write, committed when the block ends (rolled back if it
        raises). On SQLite, write transactions run one at a time, in the order asked.

        Never open a second ``write()`` (nor use ``engine``) inside one: on SQLite it would
        wait for the one that holds the writer, forever."""
        if self._write_lock is None:
            async with self.engine.begin() as connection:
                yield connection
            return
        async with self._write_lock, self.engine.begin() as connection:
            yield connection

    @asynccontextmanager
    async def write_alone(self) -> AsyncIterator[AsyncConnection]:
        """For one statement that needs no transaction around it (it is atomic alone):
        on PostgreSQL it runs in autocommit, committed as it runs, without the ``BEGIN``
        and ``COMMIT`` round trips of ``write``. A match's step that waits for its write
        holds the match's other players that long (docs/benchmarks.md). On SQLite it is a
        ``write``: the one writer's queue is the same.

        One statement only: a second would commit on its own, not with the first."""
        if self._write_lock is not None:
            async with self.write() as connection:
                yield connection
            return
        async with self.engine.connect() as connection:
            yield await connection.execution_options(isolation_level="AUTOCOMMIT")

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A transaction that only reads (one snapshot); on SQLite its connection
        refuses writes and never waits for the writer."""
        async with self._read_engine.connect() as connection:
            yield connection

    async def migrate(self) -> None:
        """Bring the database to the newest migration (on PostgreSQL through a connection
        of its own, with no statement deadline: a migration may take long)."""
        if self.is_sqlite:
            await migrate(self.engine)
            return
        engine = create_async_engine(self.url, poolclass=NullPool)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    async def dispose(self) -> None:
        """Close every connection (the read-only ones included)."""
        await self.engine.dispose()

    async def answers(self, *, timeout_s: float) -> bool:
        """Whether the database answers a trivial query within ``timeout_s`` (on a read
        connection: on SQLite, a health check does not queue behind the writes)."""
        try:
            async with asyncio.timeout(timeout_s), self.read() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as error:
            if is_outage(error):
                return False
            raise
        return True

    def _dispose_readers(self, _engine: Any) -> None:
        # Called inside the writer's dispose(), in SQLAlchemy's greenlet: the sync
        # dispose of the read pool may await there.
        if self._read_engine is not self.engine:
            self._read_engine.sync_engine.dispose()


def _deadlines(
    statement_timeout_s: float | None, idle_in_transaction_timeout_s: float | None
) -> dict[str, Any]:
    """asyncpg's connection arguments for a statement deadline: the server cancels a
    statement past it (``statement_timeout``), and the driver stops waiting a moment later
    (``command_timeout``: a stalled server cancels nothing); and for a transaction left
    idle (``idle_in_transaction_session_timeout``: the server ends its session)."""
    deadlines: dict[str, Any] = {"timeout": CONNECT_TIMEOUT_S}
    settings: dict[str, str] = {}
    if statement_timeout_s is not None:
        settings["statement_timeout"] = str(round(statement_timeout_s * 1000))
        deadlines["command_timeout"] = statement_timeout_s + 0.5
    if idle_in_transaction_timeout_s is not None:
        settings["idle_in_transaction_session_timeout"] = str(
            round(idle_in_transaction_timeout_s * 1000)
        )
    if settings:
        deadlines["server_settings"] = settings
    return deadlines


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """The engine of a new :class:`Database` of ``url`` (``Database.of`` finds it back)."""
    return Database(url, pool_size=pool_size).engine


def _on_sqlite(
    engine: AsyncEngine, *, begin: str, busy_timeout_ms: int, read_only: bool = False
) -> None:
    def connected(dbapi_connection: Any, _record: Any) -> None:
        # pysqlite's own transaction handling would BEGIN (deferred) at the first write
        # only: the driver is told to leave transactions alone, and ``begin`` says how.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
        else:
            cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    def began(connection: Connection) -> None:
        connection.exec_driver_sql(begin)

    event.listen(engine.sync_engine, "connect", connected)
    event.listen(engine.sync_engine, "begin", began)


def migrations_dir() -> Path:
    """The directory of the alembic scripts (env.py, versions/): in a source checkout,
    the one beside this code (an editable install made from another checkout of the
    repository maps the package to that checkout's migrations, which may be older);
    else the installed package's."""
    beside = Path(__file__).resolve().parents[2] / "migrations"
    if (beside / "env.py").is_file() and (beside / "versions").is_dir():
        return beside
    location = resources.files(MIGRATIONS_PACKAGE)
    if not isinstance(location, Path):
        # alembic reads its scripts from a directory: a zipped install cannot migrate.
        raise RuntimeError(f"{MIGRATIONS_PACKAGE} is not a directory on disk: {location!r}")
    return location


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


class MigrationBlocked(Exception):
    """A migration waited too long for a table that another transaction holds."""


async def migrate(engine: AsyncEngine) -> None:
    """Bring the database to the newest migration (one process at a time: see
    :func:`hold_migration_lock`). Raises :class:`MigrationBlocked` when a table it
    changes stays held by another transaction (nothing is changed then: try again)."""
    try:
        async with Database.of(engine).write() as connection:
            ahead = await connection.run_sync(_upgrade)
    except DBAPIError as error:
        if getattr(error.orig, "sqlstate", None) != LOCK_NOT_AVAILABLE:
            raise
        raise MigrationBlocked(
            f"the migration waited {MIGRATION_LOCK_TIMEOUT_S:g} s for a table that another "
            "transaction holds (a long query, a pg_dump?) and changed nothing: run it again "
            "once that transaction ends"
        ) from error
    if ahead:
        log.warning(
            "the database is at a revision this release does not know (a newer release "
            "migrated it): not migrated, served as it is",
            extra={"revision": ahead},
        )


def _upgrade(connection: Connection) -> list[str]:
    """Upgrade to the newest migration, unless the database is at a revision this
    release does not know: a newer release migrated it, and this one runs beside it
    during a rolling upgrade or after a roll-back (docs/operations.md says which
    changes it tolerates). Returns those revisions then, untouched."""
    hold_migration_lock(connection)  # before the revision is read (env.py takes it again)
    config = alembic_config(connection)
    script = ScriptDirectory.from_config(config)
    unknown = [
        revision
        for revision in MigrationContext.configure(connection).get_current_heads()
        if not _known(script, revision)
    ]
    if not unknown:
        command.upgrade(config, "head")
    return unknown


def _known(script: ScriptDirectory, revision: str) -> bool:
    try:
        script.get_revision(revision)
    except CommandError:
        return False
    return True


def hold_migration_lock(connection: Connection) -> None:
    """Serialize migrations on PostgreSQL: wait for, and hold until ``connection``'s
    transaction ends, an advisory lock that every migration takes before it reads the
    database's revision. Of replicas that start at once, one migrates; each of the
    others then finds the revision it would reach and has nothing left to do.

    The wait for the lock and the migration have no statement deadline (a migration may
    take long); a table the migration changes is waited for ``MIGRATION_LOCK_TIMEOUT_S``
    at most, since every query of the live replicas on that table queues behind the
    waiting migration. On SQLite the one writer already runs one migration at a time."""
    if connection.dialect.name != "postgresql":
        return
    connection.execute(text("SET LOCAL statement_timeout = 0"))
    connection.execute(text("SET LOCAL lock_timeout = 0"))
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    timeout_ms = round(MIGRATION_LOCK_TIMEOUT_S * 1000)
    connection.execute(text(f"SET LOCAL lock_timeout = {timeout_ms}"))

