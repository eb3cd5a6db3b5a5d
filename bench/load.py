"""Load benchmark: ``python -m bench.load`` races bot players
against a live gaps-server and, in the same run, a bare websockets echo server, and
prints one figure a line, ``ratio: X.XX`` last.

``--players`` bots, all on one event loop, play ``--match-size``-player races with the
real protocol: each connects and registers; in each group one creates a match, the
others join it, the host starts it, and every player plays legal moves chosen at random
with the rules engine (``gaps``) until its game ends (a redeal when blocked and the
ruleset allows one, else ``stop``); once the match has ended, the group plays the next
one. Each player sends its next action as soon as the last one is acknowledged
(``--pace-per-s 0``, flat out) or, at a pace, ``1 / pace`` seconds after it sent the last
one (at once if the acknowledgement came later; from a random instant after the deal).
The window of ``--seconds`` opens ``--warmup-s`` after every group's first match is dealt
(the rush of the first setups, 3,000 players registering and dealing at once, is not the
steady pace the window measures), and closes early after ``--max-actions``
acknowledgements; the echo server gets the same warm-up.

Before that, the same number of connections runs the same request and acknowledgement
loop, at the same pace, against a bare websockets echo server that the command starts:
an action-sized request, then its echo. The echo goes first, so that each server is
measured while the other is idle. With ``--fan-out``, a third server is measured the
same way: a fan-out echo, which sends each frame back to its sender and a progress-sized
event to the others of its group of ``--match-size``, written as gaps-server writes them:
the frames of one action in a race without any of the server's own work, so that its
round trips over the echo's are the most any server on this transport could reach.

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
over the connections); how busy each side's core was; the echo round trips a second and
their percentiles; the errors (replies by code, connections lost, replies that never
came, and storage errors in the server's log); and ``ratio:``, the actions a second over
the echo's round trips a second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import ipaddress
import itertools
import json
import math
import os
import random
import re
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bench.flood import LOAD_CORE, SERVER_CORE, can_pin, listening_url, percentile, stop
from gaps import RULESETS, Game, Seed
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
DEFAULT_MAX_ACTIONS = 10_000_000
#: Connections opened and registered at once: well within the listen backlog of an
#: asyncio server (100 by default), so that no handshake waits on a dropped SYN.
CONNECTING_AT_ONCE = 50
REPLY_TIMEOUT_S = 30.0
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


class SetupRefused(LoadBenchError):
    """The server refused a request that a race cannot do without (register, create,
    join, start)."""


def check_loopback(url: str) -> str:
    """``url`` itself if it is ws:// on a loopback address: the load stays on this
    machine."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "ws":
        raise NotLoopback(f"{url!r}: only ws:// URLs are measured")
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise NotLoopback(f"{url!r}: {host!r} is not a loopback address")
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
    if options.fan_out and options.match_size < 2:
        raise BadArguments("--fan-out needs --match-size 2 or more: a match of one has no event")


def supports_workers() -> bool:
    """Whether this gaps-server takes ``--workers`` (several server processes)."""
    done = subprocess.run(
        [sys.executable, "-m", "server", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return "--workers" in done.stdout


def rss_bytes(pid: int) -> int:
    """The resident set size of process ``pid`` (Linux: /proc/PID/status, VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise LoadBenchError(f"no VmRSS for process {pid}")


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


def _environment() -> dict[str, str]:
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


def echo_main(group_size: int = 1) -> None:
    """The echo server's process (``python -c``): sends every frame back, with the
    websockets settings gaps-server uses (no compression, its frame limit),
    on a loopback port the system picks, which it prints.

    With ``group_size`` above 1, the fan-out echo: connections make groups of
    ``group_size`` in the order they arrive, and each frame is also sent, as a
    progress-sized event, to the others of its group, all written as gaps-server writes
    (``server.outbox``). These are the frames of one action in a race, less every bit of
    the server's own work: the most any server on this transport could serve."""
    from websockets.asyncio.server import ServerConnection, serve

    from server import protocol
    from server.outbox import Outbox

    groups: list[list[Outbox]] = []

    async def echo(connection: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in connection:
                await connection.send(frame)

    async def fan_out(connection: ServerConnection) -> None:
        outbox = Outbox(connection, send_timeout_s=REPLY_TIMEOUT_S, max_pending_events=1000)
        if not groups or len(groups[-1]) == group_size:
            groups.append([])
        group = groups[-1]
        group.append(outbox)
        with contextlib.suppress(ConnectionClosed):
            async for frame in connection:
                await outbox.send(str(frame))
                for other in group:
                    if other is not outbox:
                        other.post(FAN_OUT_EVENT)
        group.remove(outbox)

    async def main() -> None:
        async with serve(
            echo if group_size == 1 else fan_out,
            "127.0.0.1",
            0,
            max_size=protocol.MAX_READ_BYTES,
            compression=None,
        ) as server:
            port = server.sockets[0].getsockname()[1]
            print(f"echo server listening on ws://127.0.0.1:{port}", flush=True)
            terminated = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminated.set)
            await terminated.wait()

    asyncio.run(main())


#: What the fan-out echo sends the others of a group: a progress event as gaps-server
#: writes it (docs/protocol.md), with no ``id``, so that the players take it for an event.
FAN_OUT_EVENT = json.dumps(
    {
        "type": "event", "match": "K7QX2M", "seq": 107, "event": "progress", "t_ms": 41250,
        "player_id": 1021, "name": "bench-3f9a2c1d", "bot": False, "ready": True,
        "connected": True, "placed": 17, "score": 17, "redeals_used": 1, "moves_made": 63,
        "status": "playing", "finished": False, "won": False, "end_reason": None,
        "finish_ms": None,
    },
    separators=(",", ":"),
)  # fmt: skip


# -- the players -------------------------------------------------------------------------


@dataclass
class Tally:
    """What the players of one phase measured; samples are kept only inside the window."""

    window_start: float = math.inf  # time.perf_counter; inf until the window opens
    window_end: float = math.inf
    acks: int = 0
    acks_ms: list[float] = field(default_factory=list)
    events_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    matches: int = 0  # ended, whoever ended them
    max_actions: int = DEFAULT_MAX_ACTIONS
    full_at: float | None = None  # when the max_actions-th acknowledgement arrived

    def in_window(self, instant: float) -> bool:
        return self.window_start <= instant <= self.window_end

    def done(self) -> bool:
        return time.perf_counter() >= self.window_end or self.acks >= self.max_actions

    def acknowledged(self, sent: float, arrived: float) -> None:
        if self.in_window(arrived):
            self.acks += 1
            self.acks_ms.append((arrived - sent) * 1000)
            if self.acks == self.max_actions:
                self.full_at = arrived


class Pacer:
    """When a player may send next: at once when flat out (``pace_per_s`` 0), else
    ``1 / pace_per_s`` after its previous send, from a random offset so that the players
    do not send in step."""

    def __init__(
        self,
        pace_per_s: float,
        *,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        offset: float | None = None,  # a share of the interval; random if None
    ) -> None:
        self.interval_s = 1 / pace_per_s if pace_per_s else 0.0
        self._clock, self._sleep = clock, sleep
        share = random.random() if offset is None else offset
        self._next = clock() + share * self.interval_s

    async def wait(self) -> None:
        """Returns when the player may send; a late player sends at once, and its next
        turn is one interval later: it never sends a burst to catch up."""
        if not self.interval_s:
            return
        now = self._clock()
        if self._next > now:
            await self._sleep(self._next - now)
            now = self._next
        self._next = now + self.interval_s


class Client:
    """One connection: requests with an ``id`` wait for the reply carrying it, timed on
    arrival by the reader task; other frames (events) go to ``on_event``."""

    def __init__(self, connection: ClientConnection, tally: Tally) -> None:
        self.connection = connection
        self.tally = tally
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[tuple[float, dict[str, Any]]]] = {}
        self._reader = asyncio.create_task(self._read())

    async def request(self, message: dict[str, Any]) -> tuple[float, float, dict[str, Any]]:
        """Sends ``message`` with a fresh ``id``; its send time, the reply's arrival time
        (``time.perf_counter``) and the reply. Raises ``ConnectionClosed`` or
        ``TimeoutError``."""
        number = next(self._ids)
        waiting = asyncio.get_running_loop().create_future()
        self._waiting[number] = waiting
        try:
            sent = time.perf_counter()
            await self.connection.send(json.dumps({**message, "id": number}))
            # Not wait_for: on Python 3.11 it wraps each wait in a task of its own, a
            # cost the load generator's one core can ill afford.
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                arrived, reply = await waiting
        finally:
            self._waiting.pop(number, None)
        return sent, arrived, reply

    def on_event(self, message: dict[str, Any], arrived: float) -> None:
        """An event (a frame that answers no request); ignored here."""

    async def _read(self) -> None:
        closed = ConnectionClosed(None, None)
        try:
            async for frame in self.connection:
                arrived = time.perf_counter()
                message = json.loads(frame)
                waiting = self._waiting.get(message.get("id"))
                if waiting is not None:
                    if not waiting.done():
                        waiting.set_result((arrived, message))
                else:
                    self.on_event(message, arrived)
        except ConnectionClosed as error:
            closed = error
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(closed)

    async def close(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.connection.close(), 2)
        self.connection.transport.abort()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


async def open_connection(url: str) -> ClientConnection:
    """A connection without keepalive pings: they would be frames the figures do not
    count."""
    return await connect(url, ping_interval=None, close_timeout=2, open_timeout=REPLY_TIMEOUT_S)


class Player(Client):
    """A bot player: registered under a random name, it plays the games of its group's
    matches and times the ``progress`` events of its opponents' actions."""

    def __init__(
        self, connection: ClientConnection, tally: Tally, players: dict[int, Player]
    ) -> None:
        super().__init__(connection, tally)
        self.players = players  # every bot of the run, by player id
        self.player_id = 0
        self.code = ""  # the match it plays now
        self.game: Game | None = None
        self.ruleset = "classic"
        self.dealt = asyncio.Event()
        self.ended = asyncio.Event()
        self.sent_at: dict[tuple[int, int], float] = {}  # (moves, redeals) after -> send
        self.seq = 0

    async def register(self, name: str) -> None:
        reply = await self.setup({"type": "register", "name": name})
        self.player_id = int(reply["player"]["id"])
        self.players[self.player_id] = self

    async def setup(self, message: dict[str, Any]) -> dict[str, Any]:
        """A request the race needs answered; a refusal raises ``SetupRefused``."""
        reply = (await self.request(message))[2]
        if reply.get("type") == "error":
            self.tally.errors[str(reply.get("code"))] += 1
            raise SetupRefused(f"{message['type']}: {reply}")
        return reply

    def watch(self, code: str) -> None:
        self.code, self.game, self.seq = code, None, 0
        self.dealt.clear()
        self.ended.clear()
        self.sent_at.clear()

    def on_event(self, message: dict[str, Any], arrived: float) -> None:
        if message.get("type") != "event" or message.get("match") != self.code:
            return
        name = message.get("event")
        if name == "progress":
            sender = self.players.get(message.get("player_id", 0))
            if sender is None or sender is self or sender.code != self.code:
                return
            sent = sender.sent_at.get((message["moves_made"], message["redeals_used"]))
            if sent is not None and self.tally.in_window(arrived):
                self.tally.events_ms.append((arrived - sent) * 1000)
        elif name == "started":
            self.ruleset = str(message["ruleset"])
            self.game = _game_from(message["grid"], self.ruleset)
            self.dealt.set()
        elif name == "match_ended":
            self.ended.set()

    async def play(self, pace_per_s: float) -> None:
        """Plays the dealt game until it ends or the window closes, then waits for the
        match to end."""
        await self._until_done(self.dealt.wait())
        # From the deal: at a pace, the first action comes at a random instant of the
        # first interval, as the players of a match do not all act at the deal.
        pacer = Pacer(pace_per_s)
        while self.game is not None and not self.game.is_over() and not self.tally.done():
            await pacer.wait()
            if not await self._act(self.game):
                await self.setup({"type": "leave_match", "code": self.code})
                break
        await self._until_done(self.ended.wait())

    async def _act(self, game: Game) -> bool:
        """One action; False if the server refused it for good (the game is then given
        up)."""
        moves = game.legal_moves()
        if moves:
            chosen = random.choice(moves)
            action = str(chosen)
            game.play(chosen)
            self.sent_at[(game.moves_made, game.redeals_used)] = time.perf_counter()
        elif game.can_redeal():
            action = "redeal"
            self.sent_at[(game.moves_made, game.redeals_used + 1)] = time.perf_counter()
        else:
            action = "stop"
            game.stop()
        self.seq += 1
        message = {"type": "action", "code": self.code, "seq": self.seq, "action": action}
        for _attempt in range(3):
            sent, arrived, reply = await self.request(message)
            if reply.get("type") == "action_ok":
                self.tally.acknowledged(sent, arrived)
                if action == "redeal":
                    self.game = _game_from(
                        reply["grid"], self.ruleset, redeals_used=reply["redeals_used"],
                        moves_made=reply["moves_made"],
                    )  # fmt: skip
                return True
            code = str(reply.get("code"))
            self.tally.errors[code] += 1
            if code not in ("storage_unavailable", "rate_limited"):
                return False
            await asyncio.sleep(reply.get("retry_after_ms", 50) / 1000)
        return False

    async def _until_done(self, waited: Awaitable[Any]) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waited, max(0.0, self.tally.window_end - time.perf_counter()))


def _game_from(
    grid: Iterable[str], ruleset: str, *, redeals_used: int = 0, moves_made: int = 0
) -> Game:
    """The game a player sees: the grid the server sent (its seed stays secret)."""
    shown = Game.from_layout("\n".join(grid), ruleset)
    return Game.restore(
        Seed(b"unknown"), ruleset, shown.grid_codes(),
        redeals_used=redeals_used, moves_made=moves_made,
    )  # fmt: skip


class Echoer(Client):
    """The same request loop against the echo server: an action-sized request, then the
    wait for its echo."""

    async def loop(self, pacer: Pacer) -> None:
        for seq in itertools.count(1):
            if self.tally.done():
                break
            await pacer.wait()
            message = {"type": "action", "code": "K7QX2M", "seq": seq, "action": "8C>r2c6"}
            sent, arrived, _echo = await self.request(message)
            self.tally.acknowledged(sent, arrived)


async def race(
    group: list[Player], *, ruleset: str, pace_per_s: float, dealt: Callable[[], None]
) -> None:
    """The group's matches, one after the other, until the window closes: the first
    player creates each, the others join, the first starts it, all play. ``dealt`` is
    called once the first match has started."""
    host, tally = group[0], group[0].tally
    while not tally.done():
        created = await host.setup(
            {"type": "create_match", "ruleset": ruleset, "max_players": len(group),
             "countdown_s": 0}
        )  # fmt: skip
        code = str(created["match"]["code"])
        for player in group:
            player.watch(code)
        await asyncio.gather(
            *(player.setup({"type": "join_match", "code": code}) for player in group[1:])
        )
        await host.setup({"type": "start_match", "code": code})
        dealt()
        await asyncio.gather(*(player.play(pace_per_s) for player in group))
        if all(player.ended.is_set() for player in group):
            tally.matches += 1


async def counted_failures(work: Awaitable[None], tally: Tally, ready: Callable[[], None]) -> None:
    """Runs ``work``; a lost connection or a reply that never came is counted as an error
    and ends it, as does a refused setup (counted by its code already). Work that ends
    is ``ready``: the window does not wait for it."""
    try:
        await work
    except ConnectionClosed:
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
            except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError) as error:
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


async def measure(
    label: str,
    clients: Sequence[Client],
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

    async def close(client: Client) -> None:
        async with closing:
            await client.close()

    await asyncio.gather(*(close(client) for client in clients))
    if tally.full_at is not None:
        ended = min(ended, tally.full_at)
    return ended - tally.window_start, await busy


@dataclass(frozen=True)
class Busy:
    """The share of one core that the server (all its processes) and the load generator
    used during a window: near 1.0, that side was the bottleneck."""

    server: float | None  # None: not known (a server given by --url)
    load: float

    def text(self) -> str:
        server = "unknown" if self.server is None else f"{self.server:.0%}"
        return f"cores busy: server {server}, load {self.load:.0%}"


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
    elapsed = time.perf_counter() - began
    return Busy(
        None
        if server is None or server_pid is None
        else (cpu_seconds(server_pid) - server) / elapsed,
        (time.process_time() - load) / elapsed,
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
    label: str = "echo",
) -> Phase:
    tally = Tally(max_actions=max_actions)
    before = tree_rss_bytes(echo.pid)

    async def open_one(_number: int) -> Echoer:
        return Echoer(await open_connection(echo.url), tally)

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
) -> Phase:
    tally = Tally(max_actions=max_actions)
    before = None if pid is None else tree_rss_bytes(pid)
    everyone: dict[int, Player] = {}
    prefix = f"lb{secrets.token_hex(3)}"

    async def open_one(number: int) -> Player:
        player = Player(await open_connection(url), tally, everyone)
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
    fanned: Phase | None = None,
) -> list[str]:
    """The figures, one a line, ``ratio:`` last. ``load_averages``: the machine's one-minute
    load average before and after the run, since other work on it skews every figure;
    ``fanned``: the fan-out echo's phase, if it ran."""
    tally, echo = served.tally, echoed.tally
    lines = [
        f"actions: {tally.acks:,} in {served.seconds:.1f} s: {served.rate:,.0f} actions/s "
        f"({tally.matches:,} match{'es' if tally.matches != 1 else ''} ended; "
        f"{served.busy.text()})",
        latency_line("ack latency", tally.acks_ms),
        latency_line("event latency", tally.events_ms)
        + f" ({len(tally.events_ms):,} progress events to opponents)",
    ]
    if served.rss_before is None or served.rss_after is None:
        lines.append("memory: not measured (a server given by --url)")
    else:
        lines.append(memory_line("memory", served.rss_before, served.rss_after, served.connections))
    lines.append(
        f"echo: {echo.acks:,} round trips in {echoed.seconds:.1f} s: "
        f"{echoed.rate:,.0f} round trips/s, "
        + latency_line("latency", echo.acks_ms).removeprefix("latency: ")
        + f" ({echoed.busy.text()})"
    )
    assert echoed.rss_before is not None and echoed.rss_after is not None
    lines.append(
        memory_line("echo memory", echoed.rss_before, echoed.rss_after, echoed.connections)
    )
    if fanned is not None:
        ceiling = fanned.rate / echoed.rate if echoed.rate else 0.0
        lines.append(
            f"fan-out echo: {fanned.tally.acks:,} round trips in {fanned.seconds:.1f} s: "
            f"{fanned.rate:,.0f} round trips/s, "
            + latency_line("latency", fanned.tally.acks_ms).removeprefix("latency: ")
            + f" ({fanned.busy.text()}); over echo: {ceiling:.2f}"
        )
    before, after = load_averages
    lines.append(
        f"machine: load average {before:.2f} before, {after:.2f} after ({os.cpu_count()} cores)"
    )
    lines.append(
        errors_line(tally.errors + echo.errors + (fanned.tally.errors if fanned else Counter()))
    )
    lines.append(server_log_line(log_found))
    ratio = served.rate / echoed.rate if echoed.rate else 0.0
    lines.append(f"ratio: {ratio:.2f}")
    return lines


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
                    _pinned([sys.executable, "-c", ECHO_COMMAND], echo_cores),
                    log_path=directory / "echo.log",
                    what="the echo server",
                    environment=_environment(),
                )
            )
            fan_out: Subprocess | None = None
            if options.fan_out:
                fan_out = await servers.enter_async_context(
                    started(
                        _pinned(
                            [sys.executable, "-c", FAN_OUT_COMMAND.format(options.match_size)],
                            echo_cores,
                        ),
                        log_path=directory / "fan-out.log",
                        what="the fan-out echo server",
                        environment=_environment(),
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
                        environment=_environment(),
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
                f"echo server: {echo.url} (websockets echo"
                f"{f', pinned to core {echo_cores}' if pin else ''})",
                flush=True,
            )
            if fan_out is not None:
                print(
                    f"fan-out echo server: {fan_out.url} (each frame back, and an event to "
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
            fanned = None
            if fan_out is not None:
                fanned = await echo_phase(
                    fan_out, players=options.players, seconds=options.seconds,
                    warmup_s=options.warmup_s, pace_per_s=options.pace_per_s,
                    max_actions=options.max_actions, label="fan-out echo",
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
        fanned=fanned,
    )
    if ownership is not None:
        lines.insert(-1, ownership_line(ownership))  # ratio stays last
    for line in lines:
        print(line, flush=True)


def _odd_race(players: int, match_size: int) -> str:
    """The race of the players left over, if ``match_size`` does not divide ``players``."""
    left = players % match_size
    return f" (and one {left}-player race)" if left else ""


def _warmup(warmup_s: float) -> str:
    return f" after a {warmup_s:g} s warm-up" if warmup_s else ""


ECHO_COMMAND = "from bench.load import echo_main; echo_main()"
FAN_OUT_COMMAND = "from bench.load import echo_main; echo_main({})"


def _number(kind: Callable[[str], N], low: N, high: N) -> Callable[[str], N]:
    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not in [{low:g}, {high:g}]")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__.split("\n\n")[0]
    )
    add = parser.add_argument
    add(
        "--players",
        type=_number(int, 1, MAX_PLAYERS),
        default=50,
        help="bot players, each on its own connection (default %(default)s)",
    )
    add(
        "--match-size",
        type=_number(int, 1, MAX_MATCH_SIZE),
        default=4,
        help="players a match (default %(default)s); those left over race together",
    )
    add(
        "--pace-per-s",
        type=_number(float, 0.0, MAX_PACE_PER_S),
        default=0.0,
        help="actions a second per player; 0 (the default): each as soon as the last is "
        "acknowledged",
    )
    add(
        "--seconds",
        type=_number(float, 0.1, MAX_SECONDS),
        default=10.0,
        help="how long each server is measured (default %(default)g)",
    )
    add(
        "--warmup-s",
        type=_number(float, 0.0, MAX_SECONDS),
        default=DEFAULT_WARMUP_S,
        help="how long each server is loaded before its window opens (default %(default)g)",
    )
    add(
        "--max-actions",
        type=_number(int, 1, 10**9),
        default=DEFAULT_MAX_ACTIONS,
        help="a server's window also closes after this many acknowledgements",
    )
    add(
        "--ruleset",
        choices=sorted(RULESETS),
        default="classic",
        help="of every match (default %(default)s)",
    )
    add(
        "--database-url",
        help="the started server's database (a PostgreSQL URL); "
        "default: the embedded SQLite in a temporary directory",
    )
    add(
        "--workers",
        type=_number(int, 1, MAX_WORKERS),
        default=1,
        help="server processes of the started server (needs a gaps-server with --workers)",
    )
    add(
        "--url",
        help="a running gaps-server on this machine (ws://127.0.0.1:PORT) "
        "instead of one of its own; raise its rate limits first",
    )
    add(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for the gaps-server started (repeat it; use --server-arg=--x)",
    )
    add(
        "--fan-out",
        action="store_true",
        help="also measure a fan-out echo: each frame back to its sender and an event to "
        "the others of its --match-size group, the transport's share of an action",
    )
    add("--no-pin", action="store_true", help="leave the servers and the load on any core")
    return parser  # fmt: skip


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
        raise_open_files(options.players + 256)
        pin = not options.no_pin and can_pin()
        if pin:
            # The servers are started with taskset; everything else stays on this core.
            os.sched_setaffinity(0, {LOAD_CORE})
        # The load's own collections would pause every player at once, and be counted
        # as the server's latency: it collects between phases only (``measure``).
        collecting = gc.isenabled()
        freeze_start_up()
        gc.disable()
        try:
            asyncio.run(run(options, pin=pin))
        finally:  # main() may run inside another program: its collector is as it was
            gc.unfreeze()
            if collecting:
                gc.enable()
    except LoadBenchError as error:
        parser.exit(1, f"bench.load: {error}\n")


if __name__ == "__main__":
    main()
