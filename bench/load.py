"""Load benchmark: ``python -m bench.load`` races bot players against a live gaps-server
and, in the same run, a fan-out echo server (the same frames in and out, none of the
server's work), and prints one figure a line, ``cpu ratio: X.XX`` last: the server's CPU
per action over the echo's CPU per round.

``--players`` bots play ``--match-size``-player races with the real protocol: each
connects and registers; in each group one creates a match, the others join it, the host
starts it, and every player plays legal moves chosen at random with the rules engine
(``gaps``) until its game ends (a redeal when blocked and the ruleset allows one, else
``stop``); once the match has ended, the group plays the next one. Each player sends its
next action as soon as the last one is acknowledged (``--pace-per-s 0``, flat out) or, at
a pace, ``1 / pace`` seconds after it sent the last one (at once if the acknowledgement
came later; from a random instant after the deal). The window of ``--seconds`` opens
``--warmup-s`` after every group's first match is dealt (the rush of the first setups,
3,000 players registering and dealing at once, is not the steady pace the window
measures), and closes early after ``--max-actions`` acknowledgements.

Before that, the same number of connections runs the same request and acknowledgement
loop, at the same pace and after the same warm-up, against the fan-out echo
(``bench.echo``): each sends an action-sized frame and waits for it back, while the echo
also sends a progress-sized event to the others of its group of ``--match-size``, all
written as gaps-server writes them. The echo goes first, so that each server is measured
while the other is idle. The players are light clients (``bench.players`` on
``bench.wire``), so that the load generator costs less a frame than what it measures.

By default the command starts its own ``gaps-server``: on the embedded default (SQLite in
a temporary directory) or on ``--database-url``, with ``--workers`` server processes if
the server has that option; loopback only, on a port the system picks, with its rate
limits raised so that they do not cap the figures (the first lines say which). Both
servers run on core 0 and the load on core 1 (``taskset``), when there are both.
``--url`` targets a running gaps-server on this machine instead, with its own limits.

Figures: acknowledged actions a second; the acknowledgements' latency (50th, 95th and
99th percentile, from the action's send to its reply); the delivery latency of each
action's ``progress`` event to the opponents (from the action's send); the servers' memory
per connection (resident size after the players connected and registered, less before,
over the connections); the echo's round trips a second and their percentiles; how busy
each process was over its window (the server, the echo, the load generator: share of one
core, from /proc and ``time.process_time``), with a warning when the load passed 90% of
its core; the server's CPU per action and the echo's per round (microseconds: CPU over
the window, over what was acknowledged in it); the errors (replies by code, connections
lost, replies that never came, and storage errors in the server's log); the ack p99 over
the echo's; and ``cpu ratio:``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import re
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families

from bench.echo import command as echo_command
from bench.flood import (
    LOAD_CORE,
    SERVER_CORE,
    can_pin,
    listening_url,
    loopback_problem,
    percentile,
    stop,
)
from bench.players import (
    DEFAULT_MAX_ACTIONS,
    REPLY_TIMEOUT_S,
    Client,
    Echoer,
    Pacer,
    Player,
    SetupRefused,
    Tally,
    open_client,
    race,
)
from bench.wire import WireClosed, WireError
from gaps import RULESETS
from server.heap import freeze_start_up

T = TypeVar("T")
N = TypeVar("N", int, float)

MAX_SECONDS = 600.0
#: Load before each window opens: long enough for the rush of first setups to drain.
DEFAULT_WARMUP_S = 3.0
MAX_PLAYERS = 10_000
MAX_MATCH_SIZE = 16  # create_match's max_players
MAX_PACE_PER_S = 1000.0
MAX_WORKERS = 64
#: Connections opened and registered at once: well within the listen backlog of an
#: asyncio server (100 by default), so that no handshake waits on a dropped SYN.
CONNECTING_AT_ONCE = 50
START_TIMEOUT_S = 60.0
PROGRESS_EVERY_S = 3.0
#: For the figures to measure the server, not its abuse limits (docs/protocol.md, Limits).
UNLIMITED = 1_000_000
#: A dropped connection keeps its seat this long: no game ends by ``disconnected`` while
#: the benchmark runs (the bench server is stopped long before).
BENCH_GRACE_S = 3600
#: Log entries that are storage failures, by what they say: the server's own refusals
#: and retries, and the database drivers' errors wherever they surface.
STORAGE_MESSAGES = ("storage_unavailable", "storing failed; retrying", "journal append failed")
STORAGE_WORDS = re.compile(
    r"database is locked|OperationalError|sqlite3\.|asyncpg\.|sqlalchemy\.exc\.|DBAPIError"
)


class LoadBenchError(Exception):
    """The benchmark could not run."""


class BadArguments(LoadBenchError):
    """Options that do not make a run, or that the server cannot honour."""


class NotLoopback(BadArguments):
    """A ``--url`` that is not a ws:// URL of this machine."""


class ServerDidNotStart(LoadBenchError):
    """A server subprocess exited, or did not say where it listens, in time."""


def check_loopback(url: str) -> str:
    """``url`` itself if it is ws:// on a loopback address: the load stays on this
    machine."""
    problem = loopback_problem(url, done="measured")
    if problem is not None:
        raise NotLoopback(problem)
    return url


def latency_line(label: str, samples_ms: Sequence[float]) -> str:
    """``label: p50 A ms, p95 B ms, p99 C ms``, or that there was no sample."""
    if not samples_ms:
        return f"{label}: none measured"
    p50, p95, p99 = (percentile(samples_ms, f) for f in (0.5, 0.95, 0.99))
    return f"{label}: p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms"


def memory_line(label: str, before_bytes: int, after_bytes: int, connections: int) -> str:
    """Resident memory per connection: the growth over the connections, in KiB."""
    per_kib = (after_bytes - before_bytes) / connections / 1024
    return (
        f"{label}: {per_kib:,.1f} KiB per connection (RSS {before_bytes / 2**20:,.1f} MiB "
        f"before, {after_bytes / 2**20:,.1f} MiB after {connections:,} connections)"
    )


def errors_line(counts: Counter[str]) -> str:
    """``errors: none``, or each kind with its count, the most frequent first."""
    if not counts:
        return "errors: none"
    kinds = sorted(counts.items(), key=lambda kind: (-kind[1], kind[0]))
    return "errors: " + ", ".join(f"{count:,} {kind}" for kind, count in kinds)


def storage_errors(log_text: str) -> Counter[str]:
    """The storage failures in a gaps-server log (JSON lines, server.logs), counted by
    what they say: ``database is locked``, the message of the entry, or the first error
    named in it. Lines that are not JSON are read as text."""
    found: Counter[str] = Counter()
    for line in log_text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            entry = {"message": line}
        if not isinstance(entry, dict):
            continue
        message = str(entry.get("message", ""))
        text = " ".join(str(value) for value in entry.values())
        words = STORAGE_WORDS.search(text)
        if words is None and message not in STORAGE_MESSAGES:
            continue
        if "database is locked" in text:
            found["database is locked"] += 1
        elif words is not None and message not in STORAGE_MESSAGES:
            found[f"{message}: {words.group(0).rstrip('.')}"] += 1
        else:
            found[message] += 1
    return found


#: The counters of gaps-server's /metrics (docs/operations.md, Metrics) that say a match
#: changed owner while serving, and what this bench calls them.
OWNERSHIP_COUNTERS = {
    "gaps_lease_takeovers_total": "matches taken over",
    "gaps_leases_lost_total": "matches dropped",
}


def ownership_changes(expositions: Iterable[str]) -> Counter[str]:
    """How often a cluster's matches changed owner while serving, from each worker's
    /metrics (the Prometheus text format): leases a worker took over, and matches
    dropped because their lease was lost (a worker too busy to renew in time does
    both)."""
    found: Counter[str] = Counter()
    for text in expositions:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name in OWNERSHIP_COUNTERS:
                    found[OWNERSHIP_COUNTERS[sample.name]] += int(sample.value)
    return found


def scrape(port: int, *, timeout_s: float = 10.0) -> str:
    """The /metrics of the gaps-server serving it on ``port`` (loopback)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout_s) as reply:
        return str(reply.read().decode())


def ownership_line(found: Counter[str]) -> str:
    return (
        f"ownership: {found['matches taken over']:,} matches taken over, "
        f"{found['matches dropped']:,} dropped for a lost lease"
    )


def server_log_line(found: Counter[str] | None) -> str:
    """What the server's log held, or that it was not read."""
    if found is None:
        return "server log: not read (a server given by --url)"
    total = sum(found.values())
    if not total:
        return "server log: no storage error"
    kinds = ", ".join(f"{count:,} {kind!r}" for kind, count in found.most_common())
    return f"server log: {total:,} storage error{'s' if total > 1 else ''} ({kinds})"


def raised_limits(players: int) -> list[str]:
    """gaps-server flags that lift every rate limit out of the way of ``players``
    connections from one address (docs/protocol.md, Limits)."""
    return [
        "--requests-per-s", str(UNLIMITED),
        "--request-burst", str(UNLIMITED),
        "--costly-requests-per-min", str(UNLIMITED),
        "--costly-request-burst", str(UNLIMITED),
        "--costly-requests-per-min-per-ip", str(UNLIMITED),
        "--costly-request-burst-per-ip", str(UNLIMITED),
        "--max-connections-per-ip", str(players + CONNECTING_AT_ONCE),
    ]  # fmt: skip


def check_arguments(options: argparse.Namespace) -> None:
    """Refuse what the parser alone cannot: raises ``BadArguments`` naming the option."""
    if options.url is not None:
        for given, flag in (
            (options.database_url, "--database-url"),
            (options.workers > 1, "--workers"),
            (options.server_arg, "--server-arg"),
        ):
            if given:
                raise BadArguments(f"{flag} is for the server this command starts, not for --url")
        check_loopback(options.url)


def supports_workers() -> bool:
    """Whether this gaps-server takes ``--workers`` (several server processes)."""
    done = subprocess.run(
        [sys.executable, "-m", "server", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return "--workers" in done.stdout


def rss_bytes(pid: int) -> int:
    """The resident set size of process ``pid`` (Linux: /proc/PID/status, VmRSS); 0 for
    one that has exited and waits for its parent (a zombie has no memory, and no VmRSS:
    a server's child caught so failed whole runs)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def described(database_url: str | None) -> str:
    """The database, without its password: ``SQLite in a temporary directory``."""
    if database_url is None:
        return "SQLite in a temporary directory"
    parts = urlsplit(database_url)
    kind = "PostgreSQL" if parts.scheme.startswith("postgres") else parts.scheme
    return f"{kind} at {parts.hostname}:{parts.port}{parts.path}"


def raise_open_files(needed: int) -> None:
    """Lift this process's (and its children's) open-file limit to ``needed`` if it is
    lower and the hard limit allows it; a limit that is too low is an error up front."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise BadArguments(
                f"{needed:,} open files are needed and the hard limit is {hard:,}: "
                "fewer --players, or raise it (ulimit -Hn)"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


# -- the servers -------------------------------------------------------------------------


@dataclass
class Subprocess:
    """A server subprocess: where it listens, its process id, and its log file."""

    url: str
    pid: int
    log_path: Path


@contextlib.asynccontextmanager
async def started(
    command: Sequence[str], *, log_path: Path, what: str, environment: dict[str, str]
) -> AsyncIterator[Subprocess]:
    """Runs ``command`` until the block ends; it must print ``listening on ws://...``."""
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env=environment,
        )
        try:
            url = await listening_url(
                process, log_path, timeout_s=START_TIMEOUT_S, what=what, error=ServerDidNotStart
            )
            yield Subprocess(url, process.pid, log_path)
        finally:
            await stop(process, timeout_s=30)


def _pinned(command: list[str], cores: str | None) -> list[str]:
    # taskset execs the command: the process id stays the server's.
    return command if cores is None else ["taskset", "-c", cores, *command]


def server_environment() -> dict[str, str]:
    """This environment without the settings gaps-server reads from it: the figures are
    of the defaults and the flags given."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_URL", "REDIS_URL") and not name.startswith("GAPS_")
    }


def gaps_server_command(
    data_dir: str,
    *,
    database_url: str | None,
    workers: int,
    players: int,
    server_args: Sequence[str],
    cores: str | None,
    metrics_port: int | None = None,
) -> list[str]:
    """The command line of the bench's own gaps-server (each worker's /metrics from
    ``metrics_port`` on, if given)."""
    # Several workers share one port, so it is chosen here; one server picks its own.
    port = free_port() if workers > 1 else 0
    command = [
        sys.executable, "-m", "server", "serve",
        "--host", "127.0.0.1", "--port", str(port), "--data-dir", data_dir,
        "--log-level", "WARNING", "--grace-s", str(BENCH_GRACE_S),
        *raised_limits(players),
    ]  # fmt: skip
    if database_url is not None:
        command += ["--database-url", database_url]
    if workers > 1:
        command += ["--workers", str(workers)]
    if metrics_port is not None:
        command += ["--metrics-port", str(metrics_port)]
    return _pinned([*command, *server_args], cores)


def free_port() -> int:
    """A loopback port free at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def free_ports_in_a_row(count: int) -> int:
    """The first of ``count`` loopback ports in a row free at the time of asking."""
    while True:
        first = free_port()
        with contextlib.ExitStack() as probes:
            try:
                for port in range(first + 1, first + count):
                    probe = probes.enter_context(socket.socket())
                    probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return first


# -- the phases ------------------------------------------------------------------------


async def counted_failures(work: Awaitable[None], tally: Tally, ready: Callable[[], None]) -> None:
    """Runs ``work``; a lost connection or a reply that never came is counted as an error
    and ends it, as does a refused setup (counted by its code already). Work that ends
    is ``ready``: the window does not wait for it."""
    try:
        await work
    except WireClosed:
        tally.errors["connection_lost"] += 1
    except TimeoutError:
        tally.errors["no_reply"] += 1
    except SetupRefused:
        pass
    finally:
        ready()


class Starters:
    """Opens a tally's window ``warmup_s`` after every job has said it is ready (each its
    own once-only callback), or after ``warmup_s`` from now if none has to."""

    def __init__(self, jobs: int, tally: Tally, seconds: float, *, warmup_s: float = 0.0) -> None:
        self.waiting = jobs
        self.tally, self.seconds, self.warmup_s = tally, seconds, warmup_s
        self.opened = asyncio.Event()
        if not jobs:
            self.open_now()

    def callback(self) -> Callable[[], None]:
        said = False

        def ready() -> None:
            nonlocal said
            if not said:
                said = True
                self.waiting -= 1
                if not self.waiting:
                    self.open_now()

        return ready

    def open_now(self) -> None:
        if not self.opened.is_set():
            self.tally.window_start = time.perf_counter() + self.warmup_s
            self.tally.window_end = self.tally.window_start + self.seconds
            self.opened.set()


async def opened(count: int, open_one: Callable[[int], Awaitable[T]], what: str) -> list[T]:
    """``count`` connections, ``CONNECTING_AT_ONCE`` at a time."""
    at_once = asyncio.Semaphore(CONNECTING_AT_ONCE)

    async def one(number: int) -> T:
        async with at_once:
            try:
                return await open_one(number)
            except (OSError, WireError, WireClosed, TimeoutError) as error:
                raise LoadBenchError(f"{what} {number + 1} could not connect: {error!r}") from None

    return list(await asyncio.gather(*(one(number) for number in range(count))))


def tree_rss_bytes(pid: int) -> int:
    """The resident size of process ``pid`` and of its descendants (server workers)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += rss_bytes(current)
            pending += _children(current)
    return total


@dataclass
class Phase:
    """One phase's figures: the tally over its window, and the server's memory."""

    tally: Tally
    seconds: float
    busy: Busy
    connections: int
    rss_before: int | None = None
    rss_after: int | None = None

    @property
    def rate(self) -> float:
        return self.tally.acks / self.seconds if self.seconds > 0 else 0.0

    @property
    def cpu_per_unit_us(self) -> float | None:
        """The server's CPU (all its processes) over the window, in microseconds, per
        action or round trip acknowledged in it; None if not known."""
        if self.busy.server_cpu_s is None or not self.tally.acks:
            return None
        return self.busy.server_cpu_s / self.tally.acks * 1e6


async def measure(
    label: str,
    clients: Sequence[Client | Echoer],
    jobs: Sequence[Callable[[Callable[[], None]], Awaitable[None]]],
    tally: Tally,
    *,
    server_pid: int | None,
    seconds: float,
    unit: str,
    after_setup: bool,
    warmup_s: float,
) -> tuple[float, Busy]:
    """Runs the ``jobs`` (each given its ``ready`` callback), with the window open for
    ``seconds``, ``warmup_s`` from now, or ``after_setup``, ``warmup_s`` after every job
    has said it is ready (its first match dealt), so that the window measures the races,
    not the rush of the first setups. Then closes every client. Returns the window's
    length (shorter if ``max_actions`` ran out), and how busy the server and the load
    were."""
    starters = Starters(len(jobs) if after_setup else 0, tally, seconds, warmup_s=warmup_s)
    tasks = [
        asyncio.create_task(counted_failures(job(ready), tally, ready))
        for job in jobs
        for ready in [starters.callback()]
    ]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(starters.opened.wait(), START_TIMEOUT_S)
    if not starters.opened.is_set():
        tally.errors["setup_timeout"] += starters.waiting
        starters.open_now()
    reporter = asyncio.create_task(_report_progress(label, tally, unit))
    busy = asyncio.create_task(_busy(server_pid, tally))
    try:
        # Past the window, a request still waits for its reply for REPLY_TIMEOUT_S.
        await asyncio.wait(tasks, timeout=warmup_s + seconds + 2 * REPLY_TIMEOUT_S)
        ended = min(time.perf_counter(), tally.window_end)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        gc.collect()  # the only collections of the load (see ``main``)
        reporter.cancel()
    closing = asyncio.Semaphore(CONNECTING_AT_ONCE * 4)

    async def close(client: Client | Echoer) -> None:
        async with closing:
            await client.close()

    await asyncio.gather(*(close(client) for client in clients))
    if tally.full_at is not None:
        ended = min(ended, tally.full_at)
    return ended - tally.window_start, await busy


#: Past this share of its core, the load generator is what a figure measures.
LOAD_BUSY_LIMIT = 0.90


@dataclass(frozen=True)
class Busy:
    """The CPU that the measured server (all its processes) and the load generator used
    during a window of ``elapsed_s``."""

    elapsed_s: float
    server_cpu_s: float | None  # None: not known (a server given by --url)
    load_cpu_s: float

    @property
    def server(self) -> float | None:
        """The server's share of one core: near 1.0, the server was the bottleneck."""
        return None if self.server_cpu_s is None else self._share(self.server_cpu_s)

    @property
    def load(self) -> float:
        """The load generator's share of one core: near 1.0, it was the bottleneck."""
        return self._share(self.load_cpu_s)

    def _share(self, cpu_s: float) -> float:
        return cpu_s / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def text(self, server: str) -> str:
        """``server 97%, its load 45%`` (``server`` names the server)."""
        share = "unknown" if self.server is None else f"{self.server:.0%}"
        return f"{server} {share}, its load {self.load:.0%}"


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) used so far by process ``pid`` and its descendants
    alive now (Linux: /proc/PID/stat)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
            pending += _children(current)
    return total / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


async def _busy(server_pid: int | None, tally: Tally) -> Busy:
    await asyncio.sleep(max(0.0, tally.window_start - time.perf_counter()))
    began, load = time.perf_counter(), time.process_time()
    server = None if server_pid is None else cpu_seconds(server_pid)
    while not tally.done():
        await asyncio.sleep(0.05)
    return Busy(
        time.perf_counter() - began,
        None if server is None or server_pid is None else cpu_seconds(server_pid) - server,
        time.process_time() - load,
    )


async def _report_progress(label: str, tally: Tally, unit: str) -> None:
    while True:
        await asyncio.sleep(PROGRESS_EVERY_S)
        elapsed = time.perf_counter() - tally.window_start
        if elapsed <= 0:
            print(f"{label}: warming up", file=sys.stderr, flush=True)
            continue
        print(
            f"{label} {elapsed:.0f} s: {tally.acks:,} {unit} ({tally.acks / elapsed:,.0f}/s), "
            f"{sum(tally.errors.values()):,} errors",
            file=sys.stderr,
            flush=True,
        )


def _echo_job(echoer: Echoer, pace_per_s: float) -> Callable[[Callable[[], None]], Awaitable[None]]:
    return lambda _ready: echoer.loop(Pacer(pace_per_s))


def _race_job(
    group: list[Player], ruleset: str, pace_per_s: float
) -> Callable[[Callable[[], None]], Awaitable[None]]:
    return lambda dealt: race(group, ruleset=ruleset, pace_per_s=pace_per_s, dealt=dealt)


async def echo_phase(
    echo: Subprocess,
    *,
    players: int,
    seconds: float,
    warmup_s: float,
    pace_per_s: float,
    max_actions: int,
    label: str = "fan-out echo",
) -> Phase:
    tally = Tally(max_actions=max_actions)
    before = tree_rss_bytes(echo.pid)

    async def open_one(_number: int) -> Echoer:
        return Echoer(await open_client(echo.url), tally)

    echoers = await opened(players, open_one, "echo client")
    await asyncio.sleep(0.5)  # for the server to settle each connection
    after = tree_rss_bytes(echo.pid)
    print(f"{label}: {players:,} connected; {seconds:g} s of round trips...", file=sys.stderr)
    jobs = [_echo_job(echoer, pace_per_s) for echoer in echoers]
    took, busy = await measure(
        label, echoers, jobs, tally, server_pid=echo.pid, seconds=seconds,
        unit="round trips", after_setup=False, warmup_s=warmup_s,
    )  # fmt: skip
    return Phase(tally, took, busy, players, before, after)


async def server_phase(
    url: str,
    pid: int | None,
    *,
    players: int,
    match_size: int,
    ruleset: str,
    seconds: float,
    warmup_s: float,
    pace_per_s: float,
    max_actions: int,
    tally: Tally | None = None,  # bench.scale watches its window; its max_actions holds
) -> Phase:
    tally = Tally(max_actions=max_actions) if tally is None else tally
    before = None if pid is None else tree_rss_bytes(pid)
    everyone: dict[int, Player] = {}
    prefix = f"lb{secrets.token_hex(3)}"

    async def open_one(number: int) -> Player:
        player = Player(await open_client(url), tally, everyone)
        await player.register(f"{prefix}-{number}")
        return player

    try:
        bots = await opened(players, open_one, "player")
    except SetupRefused as refused:
        raise LoadBenchError(f"the server refused a player: {refused}") from None
    await asyncio.sleep(0.5)
    after = None if pid is None else tree_rss_bytes(pid)
    print(
        f"gaps-server: {players:,} players registered; dealing their first matches, "
        f"then {seconds:g} s of races...",
        file=sys.stderr,
        flush=True,
    )
    groups = [bots[start : start + match_size] for start in range(0, players, match_size)]
    jobs = [_race_job(group, ruleset, pace_per_s) for group in groups]
    took, busy = await measure(
        "gaps-server", bots, jobs, tally, server_pid=pid, seconds=seconds, unit="actions",
        after_setup=True, warmup_s=warmup_s,
    )  # fmt: skip
    return Phase(tally, took, busy, players, before, after)


def result_lines(
    served: Phase,
    echoed: Phase,
    log_found: Counter[str] | None,
    *,
    load_averages: tuple[float, float],
) -> list[str]:
    """The figures, one a line, ``cpu ratio:`` last. ``echoed`` is the fan-out echo's
    phase; ``load_averages``: the machine's one-minute load average before and after the
    run, since other work on it skews every figure."""
    tally, echo = served.tally, echoed.tally
    lines = [
        f"actions: {tally.acks:,} in {served.seconds:.1f} s: {served.rate:,.0f} actions/s "
        f"({tally.matches:,} match{'es' if tally.matches != 1 else ''} ended)",
        latency_line("ack latency", tally.acks_ms),
        latency_line("event latency", tally.events_ms)
        + f" ({len(tally.events_ms):,} progress events to opponents)",
    ]
    if served.rss_before is None or served.rss_after is None:
        lines.append("memory: not measured (a server given by --url)")
    else:
        lines.append(memory_line("memory", served.rss_before, served.rss_after, served.connections))
    lines.append(
        f"fan-out echo: {echo.acks:,} round trips in {echoed.seconds:.1f} s: "
        f"{echoed.rate:,.0f} round trips/s, "
        + latency_line("latency", echo.acks_ms).removeprefix("latency: ")
    )
    assert echoed.rss_before is not None and echoed.rss_after is not None
    lines.append(
        memory_line("fan-out echo memory", echoed.rss_before, echoed.rss_after, echoed.connections)
    )
    lines.append(
        "busy (share of a core over each window): "
        f"{served.busy.text('server')}; {echoed.busy.text('fan-out echo')}"
    )
    server_us, echo_us = served.cpu_per_unit_us, echoed.cpu_per_unit_us
    lines.append(f"server CPU per action: {_microseconds(server_us)}")
    lines.append(f"fan-out echo CPU per round: {_microseconds(echo_us)}")
    lines += load_warnings(served.busy, echoed.busy)
    before, after = load_averages
    lines.append(
        f"machine: load average {before:.2f} before, {after:.2f} after ({os.cpu_count()} cores)"
    )
    lines.append(errors_line(tally.errors + echo.errors))
    lines.append(server_log_line(log_found))
    lines.append(f"ack p99 over the fan-out echo's: {_p99_ratio(tally.acks_ms, echo.acks_ms)}")
    ratio = "unknown" if server_us is None or not echo_us else f"{server_us / echo_us:.2f}"
    lines.append(f"cpu ratio: {ratio}")
    return lines


def load_warnings(served: Busy, echoed: Busy) -> list[str]:
    """A line for each window in which the load generator was past ``LOAD_BUSY_LIMIT``
    of its core: that window's figures are the load's limit, not the server's."""
    return [
        f"warning: the load was {busy.load:.0%} busy measuring the {what} (over "
        f"{LOAD_BUSY_LIMIT:.0%}): its figures are the load generator's limit, not the "
        f"{what}'s"
        for what, busy in (("server", served), ("fan-out echo", echoed))
        if busy.load > LOAD_BUSY_LIMIT
    ]


def _microseconds(value: float | None) -> str:
    return "unknown (a server given by --url)" if value is None else f"{value:,.1f} µs"


def _p99_ratio(served_ms: Sequence[float], echoed_ms: Sequence[float]) -> str:
    if not served_ms or not echoed_ms:
        return "unknown"
    return f"{percentile(served_ms, 0.99) / percentile(echoed_ms, 0.99):.2f}"


async def run(options: argparse.Namespace, *, pin: bool) -> None:
    """Starts the servers, measures the echo server then gaps-server, prints the lines."""
    server_cores = echo_cores = None
    if pin:
        echo_cores = str(SERVER_CORE)
        server_cores = str(SERVER_CORE) if options.workers == 1 else f"0-{options.workers - 1}"
    load_before = os.getloadavg()[0]
    pace = "flat out" if not options.pace_per_s else f"{options.pace_per_s:g} actions/s each"
    with tempfile.TemporaryDirectory(prefix="gaps-loadbench-") as temporary:
        directory = Path(temporary)
        async with contextlib.AsyncExitStack() as servers:
            echo = await servers.enter_async_context(
                started(
                    _pinned([sys.executable, "-c", echo_command(options.match_size)], echo_cores),
                    log_path=directory / "echo.log",
                    what="the fan-out echo server",
                    environment=server_environment(),
                )
            )
            gaps: Subprocess | None = None
            # A cluster's take-overs are read from each worker's /metrics.
            metrics_port = (
                free_ports_in_a_row(options.workers)
                if options.url is None and options.workers > 1
                else None
            )
            if options.url is None:
                gaps = await servers.enter_async_context(
                    started(
                        gaps_server_command(
                            str(directory), database_url=options.database_url,
                            workers=options.workers, players=options.players,
                            server_args=options.server_arg, cores=server_cores,
                            metrics_port=metrics_port,
                        ),
                        log_path=directory / "server.log",
                        what="gaps-server",
                        environment=server_environment(),
                    )
                )  # fmt: skip
                workers = f", {options.workers} workers" if options.workers > 1 else ""
                pinned = f", pinned to core {server_cores}" if pin else ""
                print(
                    f"server: {gaps.url} (gaps-server on {described(options.database_url)}"
                    f"{workers}{pinned}; load on core {LOAD_CORE if pin else 'any'})",
                    flush=True,
                )
                print(
                    "limits raised: "
                    + " ".join(raised_limits(options.players))
                    + f" (and --grace-s {BENCH_GRACE_S})",
                    flush=True,
                )
                url = gaps.url
            else:
                url = options.url
                print(f"server: {url} (given by --url; its own limits)", flush=True)
            print(
                f"fan-out echo server: {echo.url} (each frame back, and an event to "
                f"the {options.match_size - 1} others of its group of "
                f"{options.match_size}, written as gaps-server writes them"
                f"{f'; pinned to core {echo_cores}' if pin else ''})",
                flush=True,
            )
            print(
                f"load: {options.players:,} players in {options.match_size}-player "
                f"{options.ruleset} races{_odd_race(options.players, options.match_size)}, "
                f"{pace}, {options.seconds:g} s a server{_warmup(options.warmup_s)}",
                flush=True,
            )
            echoed = await echo_phase(
                echo, players=options.players, seconds=options.seconds,
                warmup_s=options.warmup_s, pace_per_s=options.pace_per_s,
                max_actions=options.max_actions,
            )  # fmt: skip
            served = await server_phase(
                url, None if gaps is None else gaps.pid, players=options.players,
                match_size=options.match_size, ruleset=options.ruleset,
                seconds=options.seconds, warmup_s=options.warmup_s,
                pace_per_s=options.pace_per_s,
                max_actions=options.max_actions,
            )  # fmt: skip
            ownership = (
                None
                if metrics_port is None
                else ownership_changes(
                    await asyncio.gather(
                        *(
                            asyncio.to_thread(scrape, metrics_port + worker)
                            for worker in range(options.workers)
                        )
                    )
                )
            )
        log_text = None if gaps is None else gaps.log_path.read_text(errors="replace")
    log_found = None if log_text is None else storage_errors(log_text)
    lines = result_lines(
        served,
        echoed,
        log_found,
        load_averages=(load_before, os.getloadavg()[0]),
    )
    if ownership is not None:
        lines.insert(-1, ownership_line(ownership))  # the cpu ratio stays last
    for line in lines:
        print(line, flush=True)


def _odd_race(players: int, match_size: int) -> str:
    """The race of the players left over, if ``match_size`` does not divide ``players``."""
    left = players % match_size
    return f" (and one {left}-player race)" if left else ""


def _warmup(warmup_s: float) -> str:
    return f" after a {warmup_s:g} s warm-up" if warmup_s else ""


def bounded_number(kind: Callable[[str], N], low: N, high: N) -> Callable[[str], N]:
    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not in [{low:g}, {high:g}]")
        return value

    return parse


def add_server_options(parser: argparse.ArgumentParser, *, database_help: str) -> None:
    """The options of every benchmark that starts gaps-servers of its own and loads them
    from this process: the matches' ruleset, the servers' database (``database_help``
    says what the benchmark does with it), extra server arguments, and no pinning."""
    add = parser.add_argument
    add(
        "--ruleset",
        choices=sorted(RULESETS),
        default="classic",
        help="of every match (default %(default)s)",
    )
    add("--database-url", help=database_help)
    add(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for each gaps-server started (repeat it; use --server-arg=--x)",
    )
    add("--no-pin", action="store_true", help="leave the servers and the load on any core")


def pinned_for_load(options: argparse.Namespace, *, connections: int) -> bool:
    """Make room for ``connections`` open sockets and, unless ``--no-pin`` (or pinning is
    not possible here), keep this process on the load's core: the servers are started
    with taskset on theirs, and everything else stays here. Whether it is pinned."""
    raise_open_files(connections + 256)
    pin = not options.no_pin and can_pin()
    if pin:
        os.sched_setaffinity(0, {LOAD_CORE})
    return pin


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__.split("\n\n")[0]
    )
    add = parser.add_argument
    add(
        "--players",
        type=bounded_number(int, 1, MAX_PLAYERS),
        default=50,
        help="bot players, each on its own connection (default %(default)s)",
    )
    add(
        "--match-size",
        type=bounded_number(int, 1, MAX_MATCH_SIZE),
        default=4,
        help="players a match (default %(default)s); those left over race together",
    )
    add(
        "--pace-per-s",
        type=bounded_number(float, 0.0, MAX_PACE_PER_S),
        default=0.0,
        help="actions a second per player; 0 (the default): each as soon as the last is "
        "acknowledged",
    )
    add(
        "--seconds",
        type=bounded_number(float, 0.1, MAX_SECONDS),
        default=10.0,
        help="how long each server is measured (default %(default)g)",
    )
    add(
        "--warmup-s",
        type=bounded_number(float, 0.0, MAX_SECONDS),
        default=DEFAULT_WARMUP_S,
        help="how long each server is loaded before its window opens (default %(default)g)",
    )
    add(
        "--max-actions",
        type=bounded_number(int, 1, 10**9),
        default=DEFAULT_MAX_ACTIONS,
        help="a server's window also closes after this many acknowledgements",
    )
    add(
        "--workers",
        type=bounded_number(int, 1, MAX_WORKERS),
        default=1,
        help="server processes of the started server (needs a gaps-server with --workers)",
    )
    add(
        "--url",
        help="a running gaps-server on this machine (ws://127.0.0.1:PORT) "
        "instead of one of its own; raise its rate limits first",
    )
    add_server_options(
        parser,
        database_help="the started server's database (a PostgreSQL URL); "
        "default: the embedded SQLite in a temporary directory",
    )
    return parser  # fmt: skip


@contextlib.contextmanager
def collecting_between_phases() -> Iterator[None]:
    """The load's own collections would pause every player at once, and be counted as
    the server's latency: inside the block it collects between phases only
    (``measure``); after it, the collector is as it was (the caller may be another
    program)."""
    collecting = gc.isenabled()
    freeze_start_up()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    options = parser.parse_args(argv)
    try:
        check_arguments(options)
        if options.workers > 1 and not supports_workers():
            raise BadArguments(
                f"--workers {options.workers}: this gaps-server runs a single process "
                "(it has no --workers option yet)"
            )
    except BadArguments as error:
        parser.error(str(error))
    try:
        pin = pinned_for_load(options, connections=options.players)
        with collecting_between_phases():
            asyncio.run(run(options, pin=pin))
    except LoadBenchError as error:
        parser.exit(1, f"bench.load: {error}\n")


if __name__ == "__main__":
    main()
