"""Memory benchmark: ``python -m bench.memory`` prints what gaps-server holds per idle
connection, per live match and per stored action, in memory and on disk.

It starts its own gaps-server as ``bench.load`` does (the embedded default, SQLite in a
temporary directory, or ``--database-url``; loopback; rate limits raised; pinned to core
0, its clients on core 1), then grows it in three steps and measures the server process
after each, from ``/proc/PID/smaps_rollup``: its resident size (RSS), its proportional
set size (PSS: each shared page divided among the processes that map it) and its unique
set size (USS: the pages no other process maps, what ending it would give back):

1. ``--connections`` players connect, register and stay idle, in no match;
2. ``--matches`` groups of ``--match-size`` of those players each make a match (created,
   joined, dealt) and stay idle in it;
3. the players of those matches play random legal moves, each as soon as its last one
   is acknowledged, until ``--actions`` are acknowledged. The rows the database then
   holds are counted, and the table that holds them measured with its indexes (SQLite's
   ``dbstat``, PostgreSQL's ``pg_total_relation_size``).

Each figure is a step's growth over what the step added: bytes per idle connection, per
live match (its players' connections are the first step's), per stored action in memory
and on disk. The server's par solvers (child processes) are not counted: they hold no
connection and no match.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import create_async_engine

from bench.flood import LOAD_CORE, SERVER_CORE
from bench.load import (
    MAX_MATCH_SIZE,
    MAX_PLAYERS,
    LoadBenchError,
    Subprocess,
    add_server_options,
    bounded_number,
    counted_failures,
    described,
    errors_line,
    gaps_server_command,
    opened,
    pinned_for_load,
    server_environment,
    server_log_line,
    started,
    storage_errors,
)
from bench.players import Player, SetupRefused, Tally, open_client, race
from server.storage.database import database_url, is_sqlite

#: Long enough for the server to answer what it was sent and its collector to run
#: (its young generation every 50 ms, server/heap.py).
SETTLE_S = 1.0
#: A step that has not done its work in this time has failed.
STEP_TIMEOUT_S = 300.0
#: A pace of one action in this many seconds: players of a dealt match stay idle.
IDLE_INTERVAL_S = 1e9
#: Matches set up at once. All at once, 500 matches' setups on PostgreSQL with durable
#: commits, on a busy machine, met the database's timeouts and were refused
#: ``storage_unavailable`` (50 at once too): a rush this benchmark does not measure.
DEALING_AT_ONCE = 10
#: The rows that ``stored`` counts, and the table (with its indexes) it measures.
ACTIONS_TABLE = "actions"


class MemoryBenchError(LoadBenchError):
    """The memory benchmark could not run."""


@dataclass(frozen=True)
class Memory:
    """A process's memory, in bytes: resident, proportional and unique set sizes."""

    rss: int
    pss: int
    uss: int

    def __sub__(self, other: Memory) -> Memory:
        return Memory(self.rss - other.rss, self.pss - other.pss, self.uss - other.uss)

    def text(self, units: int = 1) -> str:
        """``RSS 18.2 KiB, PSS 18.0 KiB, USS 17.9 KiB``: each size over ``units``."""
        return ", ".join(
            f"{name} {size(value / units)}"
            for name, value in (("RSS", self.rss), ("PSS", self.pss), ("USS", self.uss))
        )


def memory_of(pid: int) -> Memory:
    """Process ``pid``'s memory, from /proc/PID/smaps_rollup (Linux 4.14 and later)."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, value = line.partition(":")
        fields[name] = int(value.split()[0]) * 1024  # kB
    return Memory(fields["Rss"], fields["Pss"], fields["Private_Clean"] + fields["Private_Dirty"])


def size(count: float) -> str:
    """Bytes as people read them: ``97 B``, ``18.2 KiB``, ``85.9 MiB``; negative if so."""
    magnitude = abs(count)
    if magnitude < 1024:
        return f"{count:,.0f} B"
    if magnitude < 2**20:
        return f"{count / 1024:,.1f} KiB"
    return f"{count / 2**20:,.1f} MiB"


@dataclass(frozen=True)
class Stored:
    """The action rows a database holds, and the bytes their table and its indexes take."""

    rows: int
    bytes: int
    how: str  # how the bytes were measured


async def stored_actions(url: str) -> Stored:
    """What the database at SQLAlchemy ``url`` holds of actions (read beside the server:
    SQLite's write-ahead log lets a reader in while it writes)."""
    if is_sqlite(url):
        path = make_url(url).database
        assert path is not None
        return await asyncio.to_thread(_sqlite_actions, path)
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            rows, taken = (
                await connection.execute(
                    text(
                        f"SELECT (SELECT count(*) FROM {ACTIONS_TABLE}), "
                        f"pg_total_relation_size('{ACTIONS_TABLE}')"
                    )
                )
            ).one()
    finally:
        await engine.dispose()
    return Stored(int(rows), int(taken), "PostgreSQL pg_total_relation_size")


def _sqlite_actions(path: str) -> Stored:
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as connection:
        connection.execute("PRAGMA query_only = 1")
        (rows,) = connection.execute(f"SELECT count(*) FROM {ACTIONS_TABLE}").fetchone()
        # Every page of the table's b-tree and of its indexes' (sqlite_schema names them).
        (taken,) = connection.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN "
            "(SELECT name FROM sqlite_schema WHERE tbl_name = ?)",
            (ACTIONS_TABLE,),
        ).fetchone()
    return Stored(int(rows), int(taken), "SQLite dbstat")


async def settled(pid: int) -> Memory:
    """The server's memory once it has had ``SETTLE_S`` to finish what it was sent."""
    await asyncio.sleep(SETTLE_S)
    return memory_of(pid)


async def connect(url: str, count: int, tally: Tally) -> list[Player]:
    """``count`` registered players, idle."""
    everyone: dict[int, Player] = {}

    async def open_one(number: int) -> Player:
        player = Player(await open_client(url), tally, everyone)
        await player.register(f"mem{os.getpid()}-{number}")
        return player

    try:
        return await opened(count, open_one, "player")
    except SetupRefused as refused:
        raise MemoryBenchError(f"the server refused a player: {refused}") from None


class Countdown:
    """Done once ``one`` has been called ``count`` times."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.done = asyncio.Event()

    def one(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.done.set()


async def deal(groups: list[list[Player]], ruleset: str) -> list[asyncio.Task[None]]:
    """Each group's match created, joined and dealt, ``DEALING_AT_ONCE`` groups at a
    time (``race`` at a pace of one action in ``IDLE_INTERVAL_S``: its players then wait,
    idle); the races, to be cancelled."""
    races: list[asyncio.Task[None]] = []
    for first in range(0, len(groups), DEALING_AT_ONCE):
        wave = groups[first : first + DEALING_AT_ONCE]
        dealt = Countdown(len(wave))
        starting = [
            asyncio.create_task(
                race(group, ruleset=ruleset, pace_per_s=1 / IDLE_INTERVAL_S, dealt=dealt.one)
            )
            for group in wave
        ]
        races += starting
        finished = asyncio.create_task(dealt.done.wait())
        await asyncio.wait(
            [finished, *starting], timeout=STEP_TIMEOUT_S, return_when="FIRST_COMPLETED"
        )
        finished.cancel()
        if not dealt.done.is_set():
            await cancelled(races)
            failed = [task.exception() for task in starting if task.done() and not task.cancelled()]
            raise MemoryBenchError(f"the matches were not all dealt: {failed[:1] or 'timed out'}")
    return races


async def play(players: list[Player], tally: Tally) -> None:
    """The players play flat out until ``tally`` has its ``max_actions``, or until every
    game is over; then stop. A lost connection or a reply that never came is counted in
    ``tally`` as an error."""
    playing = [
        asyncio.create_task(counted_failures(player.play(0), tally, lambda: None))
        for player in players
    ]
    began = time.perf_counter()
    while not tally.done() and not all(task.done() for task in playing):
        if time.perf_counter() - began > STEP_TIMEOUT_S:
            await cancelled(playing)
            raise MemoryBenchError(f"{tally.acks:,} actions in {STEP_TIMEOUT_S:g} s")
        await asyncio.sleep(0.05)
    # A player whose game is over waits for its match to end, which it need not.
    await cancelled(playing)


async def cancelled(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def check_arguments(options: argparse.Namespace) -> None:
    """Refuse what the parser alone cannot: raises ``MemoryBenchError`` naming it."""
    seated = options.matches * options.match_size
    if seated > options.connections:
        raise MemoryBenchError(
            f"--matches {options.matches} of --match-size {options.match_size} seat "
            f"{seated:,} players: more than --connections {options.connections:,}"
        )


async def run(options: argparse.Namespace, *, pin: bool) -> None:
    """Starts the server, grows it step by step, prints a line a figure."""
    load_before = os.getloadavg()[0]
    tally = Tally(window_start=0.0, max_actions=options.actions)  # every ack counts
    with tempfile.TemporaryDirectory(prefix="gaps-memorybench-") as temporary:
        directory = Path(temporary)
        url = database_url(options.database_url, data_dir=directory)
        gaps: Subprocess
        async with started(
            gaps_server_command(
                str(directory), database_url=options.database_url, workers=1,
                players=options.connections, server_args=options.server_arg,
                cores=str(SERVER_CORE) if pin else None,
            ),
            log_path=directory / "server.log",
            what="gaps-server",
            environment=server_environment(),
        ) as gaps:  # fmt: skip
            pinned = f", pinned to core {SERVER_CORE}; clients on core {LOAD_CORE}" if pin else ""
            print(
                f"server: {gaps.url} (gaps-server on {described(options.database_url)}{pinned})",
                flush=True,
            )
            baseline = await settled(gaps.pid)
            print(f"baseline: {baseline.text()} (started, no connection)", flush=True)

            players = await connect(gaps.url, options.connections, tally)
            connected = await settled(gaps.pid)
            print(
                f"idle connections: {options.connections:,} registered, in no match: "
                f"{connected.text()}",
                flush=True,
            )
            print(f"per idle connection: {(connected - baseline).text(options.connections)}")

            size_of = options.match_size
            groups = [
                players[start : start + size_of]
                for start in range(0, options.matches * size_of, size_of)
            ]
            races = await deal(groups, options.ruleset)
            live = await settled(gaps.pid)
            await cancelled(races)  # the players stay in their matches
            print(
                f"live matches: {options.matches:,} of {size_of} players, dealt, the "
                f"players idle: {live.text()}",
                flush=True,
            )
            print(f"per live match: {(live - connected).text(options.matches)}")

            before = await stored_actions(url)
            await play([player for group in groups for player in group], tally)
            played = await settled(gaps.pid)
            after = await stored_actions(url)
            rows = after.rows - before.rows
            if rows <= 0:
                raise MemoryBenchError("no action was stored")
            print(
                f"stored actions: {rows:,} rows ({tally.acks:,} acknowledged; "
                f"{rows / (options.matches * size_of):,.1f} a seat): {played.text()}",
                flush=True,
            )
            print(f"per stored action in memory: {(played - live).text(rows)}")
            print(
                f"per stored action on disk: {size((after.bytes - before.bytes) / rows)} "
                f"(the {ACTIONS_TABLE} table and its indexes: {size(before.bytes)} before, "
                f"{size(after.bytes)} after; {after.how})"
            )
            await asyncio.gather(*(player.close() for player in players))
        log_text = gaps.log_path.read_text(errors="replace")
    print(
        f"machine: load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
        f"({os.cpu_count()} cores)"
    )
    print(errors_line(tally.errors))
    print(server_log_line(storage_errors(log_text)), flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.memory", description=__doc__.split("\n\n")[0]
    )
    add = parser.add_argument
    add(
        "--connections",
        type=bounded_number(int, 1, MAX_PLAYERS),
        default=2000,
        help="idle registered players, each on its own connection (default %(default)s)",
    )
    add(
        "--matches",
        type=bounded_number(int, 1, MAX_PLAYERS),
        default=500,
        help="live matches made of those players (default %(default)s)",
    )
    add(
        "--match-size",
        type=bounded_number(int, 1, MAX_MATCH_SIZE),
        default=4,
        help="players a match (default %(default)s)",
    )
    add(
        "--actions",
        type=bounded_number(int, 1, 10**8),
        default=50_000,
        help="actions the matches' players play, then stored (default %(default)s)",
    )
    add_server_options(
        parser,
        database_help="the server's database (a PostgreSQL URL); "
        "default: the embedded SQLite in a temporary directory",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    options = parser.parse_args(argv)
    try:
        check_arguments(options)
    except MemoryBenchError as error:
        parser.error(str(error))
    try:
        pin = pinned_for_load(options, connections=options.connections)
        asyncio.run(run(options, pin=pin))
    except LoadBenchError as error:
        parser.exit(1, f"bench.memory: {error}\n")


if __name__ == "__main__":
    main()
