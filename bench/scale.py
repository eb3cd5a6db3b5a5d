"""Scale benchmark: ``python -m bench.scale`` runs ``bench.load``'s races at one action a
second per player for a series of player counts, and prints a table row a count: how
the server's CPU per action grows with the players, which resource saturates first,
and at how many players per core a host should add a process.

For each count in ``--players`` (100, 1000, 3000, 6000 and 10000 by default) it starts a
fresh gaps-server as ``bench.load`` does (the embedded default in a temporary directory,
or ``--database-url``, the same database for every count; pinned to core 0, the load on
core 1) with its ``/metrics`` served, and runs ``bench.load``'s server phase at
``--pace-per-s``: the players register, race in 4-player matches and play for
``--seconds`` after a ``--warmup-s`` warm-up. Over that window it reads:

- the actions acknowledged a second, against those offered (players x pace);
- the server's CPU per action (/proc: user and system time over the acknowledged
  actions) and the share of it spent in the kernel: mostly the sockets' system calls
  (reads, writes, epoll);
- how busy the server's core and the load's core were (share of one core), and how long
  the server's threads waited, runnable, for their core (/proc/PID/task/TID/schedstat:
  the time other work on the machine took from the server);
- the acknowledgements' latency (p50, p99);
- the journal's group commits (the server's ``/metrics``: ``gaps_commit_latency_seconds``
  and ``gaps_actions_committed``): commits a second, rows a commit, and the share of
  the window spent committing, which nears 100% when the commits are what limits it (on
  SQLite a commit runs in the server's process: its waits for the one writer, and for
  the process's core, count too); ``unknown`` when the server did not answer
  ``/metrics`` within ``SCRAPE_TIMEOUT_S``;
- the bytes written to storage an action: the server's own (/proc/PID/io: SQLite's
  write-ahead log and pages) and, on PostgreSQL, its write-ahead log (``pg_stat_wal``);
- the frames waiting for clients that do not read fast enough, as the window closes;
- on PostgreSQL on this machine, the database's CPU per action (the postmaster and all
  its processes, from /proc);
- errors: refused or unanswered requests, storage errors in the server's log;
- the machine's one-minute load average as the window closes (other work on the
  machine takes the server's core from it).

Then, from the series: where the CPU per action is least and how it grows, what was
past 90% at each count that fell behind, the errors by kind, the counts that could not
be set up, and the players one core serves.
A single process uses no Redis (it carries a cluster's events between processes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bench.flood import LOAD_CORE, SERVER_CORE, percentile
from bench.load import (
    DEFAULT_WARMUP_S,
    MAX_PACE_PER_S,
    MAX_PLAYERS,
    MAX_SECONDS,
    LoadBenchError,
    Phase,
    add_server_options,
    bounded_number,
    collecting_between_phases,
    cpu_seconds,
    described,
    errors_line,
    free_port,
    gaps_server_command,
    pinned_for_load,
    scrape,
    server_environment,
    server_phase,
    started,
    storage_errors,
)
from bench.memory import size
from bench.players import DEFAULT_MAX_ACTIONS, Tally
from server.storage.database import database_url, is_sqlite

DEFAULT_PLAYERS = (100, 1000, 3000, 6000, 10000)
MATCH_SIZE = 4
#: Past this share of its core, a process is what limits the figures.
SATURATED = 0.90
#: A count kept up if it served at least this share of the actions offered.
KEPT_UP = 0.95
#: The share of a core a host should plan a process for: room for bursts, the matches'
#: ends and the collector's pauses.
HEADROOM = 0.70
#: Issue 12's latency target at one action a second: p99 of the acknowledgements.
P99_TARGET_MS = 50.0
#: How long a window's edge waits for the server's /metrics.
SCRAPE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Journal:
    """What the server's ``/metrics`` said at one instant: its journal's group commits so
    far (their time, their count, the rows they stored) and the frames waiting for
    clients that do not read fast enough."""

    commit_s: float
    commits: int
    rows: int
    frames_waiting: int


@dataclass(frozen=True)
class Reading:
    """What a window's edge read: the server's CPU by kind and the bytes it has written
    to storage (SQLite's pages and log), its journal (None: the server did not answer
    ``/metrics`` in time), PostgreSQL's CPU (None: not on this machine, or SQLite) and
    the write-ahead log it has written (None: SQLite), and the machine's one-minute load
    average."""

    at: float  # time.perf_counter
    user_s: float
    system_s: float
    waiting_s: float  # runnable, its threads waited for a core this long so far
    written_bytes: int
    journal: Journal | None
    database_cpu_s: float | None
    wal_bytes: int | None
    load_average: float


def process_times(pid: int) -> tuple[float, float]:
    """Process ``pid``'s user and system CPU seconds (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def waiting_seconds(pid: int) -> float:
    """How long the threads of process ``pid`` alive now have waited, runnable, for a
    core so far (/proc/PID/task/TID/schedstat, its second field): the time other work on
    the machine took from them."""
    waited_ns = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            waited_ns += int((task / "schedstat").read_text().split()[1])
    return waited_ns / 1e9


def written_bytes(pid: int) -> int:
    """What process ``pid`` has had written to storage so far (/proc/PID/io)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    raise LoadBenchError(f"no write_bytes for process {pid}")


def metric_values(exposition: str) -> dict[str, float]:
    """Each sample of a Prometheus text exposition without labels, by name."""
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if not sample.labels
    }


class Postgres:
    """The PostgreSQL server of ``url`` as seen from outside: its CPU (the postmaster
    and all its processes, if it runs on this machine) and the write-ahead log it has
    written (``pg_stat_wal``, PostgreSQL 14 and later)."""

    def __init__(self, url: str) -> None:
        self.engine = create_async_engine(url)
        self.pid: int | None = None

    async def start(self) -> None:
        async with self.engine.connect() as connection:
            backend = int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())
        with contextlib.suppress(OSError):  # not on this machine, or not ours to read
            for line in Path(f"/proc/{backend}/status").read_text().splitlines():
                if line.startswith("PPid:"):
                    self.pid = int(line.split()[1])

    async def read(self) -> tuple[float | None, int]:
        """Its CPU seconds so far (None: not known) and its WAL bytes."""
        async with self.engine.connect() as connection:
            wal = int(
                (await connection.execute(text("SELECT wal_bytes FROM pg_stat_wal"))).scalar_one()
            )
        return (None if self.pid is None else cpu_seconds(self.pid)), wal

    async def close(self) -> None:
        await self.engine.dispose()


async def read(pid: int, metrics_port: int, postgres: Postgres | None) -> Reading:
    user_s, system_s = process_times(pid)
    waiting_s = waiting_seconds(pid)
    written = written_bytes(pid)
    database_cpu_s, wal_bytes = (None, None) if postgres is None else await postgres.read()
    at = time.perf_counter()
    try:
        values = metric_values(
            await asyncio.to_thread(scrape, metrics_port, timeout_s=SCRAPE_TIMEOUT_S)
        )
    except OSError:  # a starved server answers its /metrics after its players, or never
        journal = None
    else:
        journal = Journal(
            commit_s=values["gaps_commit_latency_seconds_sum"],
            commits=int(values["gaps_commit_latency_seconds_count"]),
            rows=int(values["gaps_actions_committed_total"]),
            frames_waiting=int(values["gaps_outbox_frames_waiting"]),
        )
    return Reading(
        at, user_s, system_s, waiting_s, written, journal, database_cpu_s, wal_bytes,
        os.getloadavg()[0],
    )  # fmt: skip


async def watch(
    tally: Tally, pid: int, metrics_port: int, postgres: Postgres | None
) -> tuple[Reading, Reading]:
    """Readings as ``tally``'s window opens and as it closes."""
    while math.isinf(tally.window_start):
        await asyncio.sleep(0.05)
    await asyncio.sleep(max(0.0, tally.window_start - time.perf_counter()))
    first = await read(pid, metrics_port, postgres)
    while not tally.done():
        await asyncio.sleep(0.05)
    return first, await read(pid, metrics_port, postgres)


@dataclass(frozen=True)
class Row:
    """One player count's figures."""

    players: int
    pace_per_s: float
    phase: Phase
    first: Reading
    last: Reading
    storage_errors: int

    @property
    def offered(self) -> float:
        return self.players * self.pace_per_s

    @property
    def kept_up(self) -> bool:
        return self.phase.rate >= KEPT_UP * self.offered

    @property
    def elapsed_s(self) -> float:
        return self.last.at - self.first.at

    @property
    def cpu_per_action_us(self) -> float | None:
        return self.phase.cpu_per_unit_us

    @property
    def kernel_share(self) -> float | None:
        user = self.last.user_s - self.first.user_s
        system = self.last.system_s - self.first.system_s
        return system / (user + system) if user + system > 0 else None

    @property
    def commits(self) -> tuple[int, int, float] | None:
        """The window's commits, the rows they stored and the time they took; None if
        an edge has no reading of the journal."""
        first, last = self.first.journal, self.last.journal
        if first is None or last is None:
            return None
        return last.commits - first.commits, last.rows - first.rows, last.commit_s - first.commit_s

    @property
    def committing(self) -> float | None:
        """The share of the window the journal spent committing (a commit counts when it
        ends: with commits of a second, one begun before the window can put it past 1)."""
        if self.commits is None or self.elapsed_s <= 0:
            return None
        return self.commits[2] / self.elapsed_s

    @property
    def database_cpu_per_action_us(self) -> float | None:
        if self.first.database_cpu_s is None or self.last.database_cpu_s is None:
            return None
        if not self.phase.tally.acks:
            return None
        spent = self.last.database_cpu_s - self.first.database_cpu_s
        return spent / self.phase.tally.acks * 1e6

    @property
    def waiting(self) -> float:
        """The share of the window the server's threads waited, runnable, for a core
        (summed over its threads: two waiting all along make 200%)."""
        waited = self.last.waiting_s - self.first.waiting_s
        return waited / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def written_per_action(self) -> float | None:
        """Bytes written to storage an action: the server's own (SQLite's pages and
        log) and PostgreSQL's write-ahead log."""
        if not self.phase.tally.acks:
            return None
        written = self.last.written_bytes - self.first.written_bytes
        if self.first.wal_bytes is not None and self.last.wal_bytes is not None:
            written += self.last.wal_bytes - self.first.wal_bytes
        return written / self.phase.tally.acks

    @property
    def errors(self) -> int:
        return sum(self.phase.tally.errors.values()) + self.storage_errors

    def saturated(self) -> list[str]:
        """What was past ``SATURATED`` of its capacity in this count's window."""
        found = []
        busy = self.phase.busy
        if busy.server is not None and busy.server > SATURATED:
            found.append(f"the server's core ({busy.server:.0%} busy)")
        if self.committing is not None and self.committing > SATURATED:
            found.append(f"the journal's commits ({self.committing:.0%} of the time committing)")
        if busy.load > SATURATED:
            found.append(f"the load's core ({busy.load:.0%} busy: its figures are the load's)")
        return found


HEADER = (
    "| players | offered actions/s | actions/s | server CPU per action | in the kernel "
    "| server core busy | server waiting for it | load core busy | ack p50 / p99 | commits/s "
    "| rows a commit | committing | written per action | database CPU per action "
    "| frames waiting | errors | load average |"
)


def table_row(row: Row) -> str:
    acks_ms = row.phase.tally.acks_ms
    latency = (
        f"{percentile(acks_ms, 0.5):,.1f} / {percentile(acks_ms, 0.99):,.1f} ms"
        if acks_ms
        else "none"
    )
    commit_cells = ["unknown"] * 3
    if row.commits is not None and row.committing is not None:
        commits, rows, _seconds = row.commits
        commit_cells = [
            f"{commits / row.elapsed_s:,.0f}",
            f"{rows / commits:,.1f}" if commits else "none",
            f"{row.committing:.0%}",
        ]
    server = row.phase.busy.server
    journal = row.last.journal
    cells = [
        f"{row.players:,}",
        f"{row.offered:,.0f}",
        f"{row.phase.rate:,.0f}",
        _microseconds(row.cpu_per_action_us),
        "unknown" if row.kernel_share is None else f"{row.kernel_share:.0%}",
        "unknown" if server is None else f"{server:.0%}",
        f"{row.waiting:.0%}",
        f"{row.phase.busy.load:.0%}",
        latency,
        *commit_cells,
        "unknown" if row.written_per_action is None else size(row.written_per_action),
        _microseconds(row.database_cpu_per_action_us, absent="in the server (SQLite)"),
        "unknown" if journal is None else f"{journal.frames_waiting:,}",
        f"{row.errors:,}",
        f"{row.last.load_average:.1f}",
    ]
    return "| " + " | ".join(cells) + " |"


def _microseconds(value: float | None, *, absent: str = "unknown") -> str:
    return absent if value is None else f"{value:,.1f} µs"


def conclusions(rows: Sequence[Row]) -> list[str]:
    """What the series says, a line each: the CPU per action's growth, each count that
    fell behind or had something past ``SATURATED`` (with how busy the server's core
    was: on a shared machine other work takes its share), and the players a core
    serves."""
    lines = []
    measured = [row for row in rows if row.cpu_per_action_us is not None]
    if measured:
        least = min(measured, key=lambda row: row.cpu_per_action_us or 0.0)
        last = measured[-1]
        assert least.cpu_per_action_us is not None and last.cpu_per_action_us is not None
        growth = last.cpu_per_action_us / least.cpu_per_action_us
        lines.append(
            f"cpu per action: least at {least.players:,} players "
            f"({least.cpu_per_action_us:,.1f} µs); at {last.players:,} players "
            f"{last.cpu_per_action_us:,.1f} µs ({growth:.2f}x the least)"
        )
    for row in rows:
        limits = row.saturated()
        if row.kept_up and not limits:
            continue
        busy = row.phase.busy
        server = "unknown" if busy.server is None else f"{busy.server:.0%}"
        lines.append(
            f"at {row.players:,} players: served {row.phase.rate:,.0f} of "
            f"{row.offered:,.0f} actions/s{'' if row.kept_up else ' (fell behind)'}; "
            f"past {SATURATED:.0%}: {', '.join(limits) or 'nothing'}; server core {server} "
            f"busy, its threads waiting for a core {row.waiting:.0%} of the window, machine "
            f"load average {row.last.load_average:.1f}"
        )
    for row in rows:
        if row.errors:
            found = row.phase.tally.errors.copy()
            if row.storage_errors:
                found["storage errors in the server's log"] += row.storage_errors
            lines.append(f"at {row.players:,} players, {errors_line(found)}")
    if rows and all(row.kept_up and not row.saturated() for row in rows):
        lines.append(f"every count kept up, with nothing past {SATURATED:.0%}")
    lines.append(players_per_core(rows))
    return lines


def players_per_core(rows: Sequence[Row]) -> str:
    """The players one core serves at the series' pace. The CPU per action of each count
    says how many players a whole core would serve at that cost; the basis is the
    largest count that fits in what it says (the CPU per action measured nearest to a
    full core, whether or not the machine gave the server its core)."""
    fitting = [
        row
        for row in rows
        if row.cpu_per_action_us and row.players <= _whole_core(row, row.cpu_per_action_us)
    ]
    if not fitting:
        return "players per core: unknown (no count's CPU per action fits one core)"
    basis = fitting[-1]
    assert basis.cpu_per_action_us is not None
    whole = _whole_core(basis, basis.cpu_per_action_us)
    within_target = [
        row.players
        for row in rows
        if row.kept_up and row.phase.tally.acks_ms
        and percentile(row.phase.tally.acks_ms, 0.99) < P99_TARGET_MS
    ]  # fmt: skip
    target = (
        f"; the largest count that kept up with an ack p99 under {P99_TARGET_MS:g} ms: "
        f"{max(within_target):,}"
        if within_target
        else f"; no count kept up with an ack p99 under {P99_TARGET_MS:g} ms"
    )
    return (
        f"players per core: a whole core serves about {whole:,.0f} players at "
        f"{basis.pace_per_s:g} action/s ({basis.cpu_per_action_us:,.1f} µs an action at "
        f"{basis.players:,} players); add a process past about {HEADROOM * whole:,.0f} "
        f"players per core ({HEADROOM:.0%} busy){target}"
    )


def _whole_core(row: Row, cpu_per_action_us: float) -> float:
    return 1e6 / cpu_per_action_us / row.pace_per_s


async def one_count(options: argparse.Namespace, players: int, *, pin: bool) -> Row:
    """A fresh server, ``players`` racing at the pace, and the window's figures."""
    with tempfile.TemporaryDirectory(prefix="gaps-scalebench-") as temporary:
        directory = Path(temporary)
        url = database_url(options.database_url, data_dir=directory)
        postgres = None if is_sqlite(url) else Postgres(url)
        metrics_port = free_port()
        async with started(
            gaps_server_command(
                str(directory), database_url=options.database_url, workers=1,
                players=players, server_args=options.server_arg,
                cores=str(SERVER_CORE) if pin else None, metrics_port=metrics_port,
            ),
            log_path=directory / "server.log",
            what="gaps-server",
            environment=server_environment(),
        ) as gaps:  # fmt: skip
            tally = Tally(max_actions=DEFAULT_MAX_ACTIONS)
            if postgres is not None:
                await postgres.start()
            watching = asyncio.create_task(watch(tally, gaps.pid, metrics_port, postgres))
            try:
                phase = await server_phase(
                    gaps.url, gaps.pid, players=players, match_size=MATCH_SIZE,
                    ruleset=options.ruleset, seconds=options.seconds,
                    warmup_s=options.warmup_s, pace_per_s=options.pace_per_s,
                    max_actions=DEFAULT_MAX_ACTIONS, tally=tally,
                )  # fmt: skip
                first, last = await watching
            finally:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
                if postgres is not None:
                    await postgres.close()
        found = storage_errors(gaps.log_path.read_text(errors="replace"))
    return Row(players, options.pace_per_s, phase, first, last, sum(found.values()))


async def run(options: argparse.Namespace, *, pin: bool) -> None:
    load_before = os.getloadavg()[0]
    pinned = f", pinned to core {SERVER_CORE}; load on core {LOAD_CORE}" if pin else ""
    print(
        f"server: gaps-server on {described(options.database_url)}, a fresh one a count{pinned}",
        flush=True,
    )
    print(
        f"load: {MATCH_SIZE}-player {options.ruleset} races at {options.pace_per_s:g} "
        f"action/s a player, {options.seconds:g} s a count after a {options.warmup_s:g} s "
        "warm-up",
        flush=True,
    )
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|", flush=True)
    rows, failed = [], []
    for players in options.players:
        try:
            row = await one_count(options, players, pin=pin)
        except LoadBenchError as error:  # the next count may still run
            failed.append(f"at {players:,} players: not measured: {error}")
            continue
        rows.append(row)
        print(table_row(row), flush=True)
    for line in failed + conclusions(rows):
        print(line)
    print(
        f"machine: load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
        f"({os.cpu_count()} cores)",
        flush=True,
    )


def player_counts(text_given: str) -> list[int]:
    """``100,1000,3000``: player counts, each within bench.load's bounds."""
    one = bounded_number(int, 1, MAX_PLAYERS)
    counts = [one(part.strip()) for part in text_given.split(",") if part.strip()]
    if not counts:
        raise argparse.ArgumentTypeError(f"{text_given!r} names no player count")
    return counts


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale", description=__doc__.split("\n\n")[0]
    )
    add = parser.add_argument
    add(
        "--players",
        type=player_counts,
        default=list(DEFAULT_PLAYERS),
        help="player counts, comma-separated (default "
        + ",".join(str(count) for count in DEFAULT_PLAYERS)
        + ")",
    )
    add(
        "--pace-per-s",
        type=bounded_number(float, 0.001, MAX_PACE_PER_S),
        default=1.0,
        help="actions a second per player (default %(default)g)",
    )
    add(
        "--seconds",
        type=bounded_number(float, 0.1, MAX_SECONDS),
        default=10.0,
        help="each count's window (default %(default)g)",
    )
    add(
        "--warmup-s",
        type=bounded_number(float, 0.0, MAX_SECONDS),
        default=DEFAULT_WARMUP_S,
        help="each count's load before its window opens (default %(default)g)",
    )
    add_server_options(
        parser,
        database_help="the servers' database (a PostgreSQL URL), the same for every count; "
        "default: the embedded SQLite in a temporary directory, fresh for each count",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    options = parser.parse_args(argv)
    try:
        pin = pinned_for_load(options, connections=max(options.players))
        with collecting_between_phases():
            asyncio.run(run(options, pin=pin))
    except LoadBenchError as error:
        parser.exit(1, f"bench.scale: {error}\n")


if __name__ == "__main__":
    main()
