"""Flood benchmark: ``python -m bench.flood`` prints a calm client's round trips
with and without another connection flooding the server, one figure a line.

One run, two phases of ``--seconds`` each. A calm client (registered) sends ``ping`` at a
steady ``--pace-hz`` throughout; in the first phase nothing else happens, in the second
another connection (registered under another name) sends cheap requests as fast as it
can without waiting for their replies, reading them as they come. The figure is the calm
client's 99th percentile round trip under the flood over the one without it
(``p99 ratio``); the goal is under 2.

By default the command starts its own ``gaps-server`` (SQLite in a temporary directory,
loopback, a port the system picks), pinned to core 0 with ``taskset`` while the clients
run on core 1, so that the flooder competes with the calm client only inside the server.
``--url`` targets a running server instead; only loopback addresses are accepted. The
flooder stops when the server closes its connection, unless ``--reconnect``.

The calm client is a well-behaved client: it speaks through the client session every
client shares (``bench.players.Client``). The flooder is not: it sends frames raw, on
websockets' client, without waiting for their replies.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import itertools
import json
import math
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from bench.players import Client, Tally, open_client
from bench.wire import WireClosed
from gaps_protocol.messages import Error, encode
from gaps_protocol.messages.replies import Registered
from gaps_protocol.messages.requests import Hello, Ping, Register

SERVER_CORE = 0
LOAD_CORE = 1
#: What the flooder sends, in turn: requests the server answers from memory.
#: Raw on purpose, the one place requests are not written by the one encoder
#: (``gaps_protocol.messages.encode``): the flooder writes as fast as the socket takes
#: frames, past any session, and a template filled with the count costs less than an
#: encoding. Each is a valid request (a test decodes them).
FLOOD_REQUESTS = (
    '{"type":"ping","id":%d}',
    '{"type":"list_matches","id":%d}',
    '{"type":"tournament_list","id":%d}',
)
#: The flooder lets its reader run after this many sends: a send that the socket takes
#: at once does not yield to the event loop.
SENDS_BETWEEN_READS = 8
MAX_SECONDS = 600.0
MAX_PACE_HZ = 1000.0


class FloodBenchError(Exception):
    """The benchmark could not run."""


class NotLoopback(FloodBenchError):
    """A ``--url`` that is not a ws:// URL of this machine."""


class ServerDidNotStart(FloodBenchError):
    """The gaps-server subprocess exited, or did not say where it listens, in time."""


class ClientRefused(FloodBenchError):
    """The server refused to register one of the benchmark's clients."""


def loopback_problem(url: str, *, done: str) -> str | None:
    """Why ``url`` is not a ws:// URL on a loopback address (a benchmark stays on this
    machine), or None; ``done`` says what the benchmark does to it (``flooded``)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "ws":
        return f"{url!r}: only ws:// URLs are {done}"
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            return f"{url!r}: {host!r} is not a loopback address"
    return None


def check_loopback(url: str) -> str:
    """``url`` itself if it is ws:// on a loopback address: the flood stays on this
    machine."""
    problem = loopback_problem(url, done="flooded")
    if problem is not None:
        raise NotLoopback(problem)
    return url


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with at least ``fraction`` of the
    values at or below it."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@dataclass
class Phase:
    """The calm client's round trips during one phase, in milliseconds."""

    label: str
    seconds: float
    pace_hz: float
    round_trips_ms: list[float] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)  # error code -> pings
    unanswered: int = 0  # counted in round_trips_ms at the time they were given up

    def line(self) -> str:
        trips = self.round_trips_ms
        if not trips:
            return f"{self.label}: no ping answered ({self._counts()})"
        return (
            f"{self.label}: p50 {percentile(trips, 0.5):.2f} ms, "
            f"p99 {percentile(trips, 0.99):.2f} ms, max {max(trips):.2f} ms ({self._counts()})"
        )

    def _counts(self) -> str:
        sent = len(self.round_trips_ms) + sum(self.refused.values())
        text = f"{sent} pings at {self.pace_hz:g}/s over {self.seconds:g} s"
        for code, count in sorted(self.refused.items()):
            text += f", {count} refused with {code}"
        if self.unanswered:
            text += f", {self.unanswered} unanswered (counted at the time given up)"
        return text


@dataclass
class FloodReport:
    """What happened to the flooder's requests."""

    sent: int = 0
    served: int = 0
    rate_limited: int = 0
    other_errors: dict[str, int] = field(default_factory=dict)
    flood_s: float = 0.0
    closes: int = 0  # connections the server closed
    close_code: int | None = None  # of the first one
    closed_after_s: float | None = None  # since the flood began
    reconnects: int = 0

    def line(self) -> str:
        answered = self.served + self.rate_limited + sum(self.other_errors.values())
        rate = self.sent / self.flood_s if self.flood_s > 0 else 0.0
        text = (
            f"flooder: {self.sent:,} requests in {self.flood_s:.1f} s ({rate:,.0f}/s): "
            f"{self.served:,} served, {self.rate_limited:,} rate_limited"
        )
        for code, count in sorted(self.other_errors.items()):
            text += f", {count:,} {code}"
        text += f", {max(0, self.sent - answered):,} unanswered; "
        if not self.closes:
            return text + "not closed"
        text += f"closed by the server with {self.close_code} after {self.closed_after_s:.2f} s"
        if self.closes > 1 or self.reconnects:
            text += f" ({self.closes:,} closes, {self.reconnects:,} reconnects)"
        return text


async def registered(url: str, prefix: str) -> tuple[ClientConnection, str]:
    """The flooder's connection (websockets' client: it sends what no session would),
    registered as ``prefix`` and a random suffix, and the player's token. Keepalive pings
    are off: they would be frames the figures do not count."""
    connection = await connect(url, ping_interval=None, close_timeout=2)
    name = f"{prefix}-{secrets.token_hex(3)}"
    await connection.send(encode(Register(id=1, name=name)).decode())
    reply = json.loads(await asyncio.wait_for(connection.recv(), 30))
    if reply.get("type") != "registered":
        await connection.close()
        raise ClientRefused(f"registering {name!r}: {reply}")
    return connection, str(reply["token"])


async def calm_client(url: str) -> Client:
    """The calm client's connection, registered as ``calm`` and a random suffix: a
    well-behaved client, so it speaks through the shared client session
    (``bench.players.Client``)."""
    client = Client(await open_client(url), Tally())
    name = f"calm-{secrets.token_hex(3)}"
    reply = (await client.request(Register(name=name)))[2]
    if not isinstance(reply, Registered):
        await client.close()
        raise ClientRefused(f"registering {name!r}: {reply}")
    return client


class CalmClient:
    """Pings at a steady pace, whatever the replies do, and times each round trip. The
    pings are sent on schedule rather than after the previous reply, so a stalled
    server delays every ping waiting behind it, as it would delay a player."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._sent: dict[int, float] = {}  # ping number -> perf_counter when sent
        self._answered: dict[int, float] = {}  # ping number -> round trip in ms
        self._refused: dict[int, str] = {}  # ping number -> error code

    async def warm_up(self, pings: int) -> None:
        """Round trips that are not counted: the first requests of a connection are
        slower."""
        for _ in range(pings):
            await self.client.request(Ping())

    async def run(
        self, *, start_at: float, phases: Sequence[Phase], reply_timeout_s: float
    ) -> None:
        """Pings from ``start_at`` (``time.monotonic``) through ``phases`` one after the
        other, then fills each phase with its round trips."""
        counts = [max(1, round(phase.seconds * phase.pace_hz)) for phase in phases]
        pings: list[asyncio.Task[None]] = []
        try:
            number, begin = 0, start_at
            for phase, count in zip(phases, counts, strict=True):
                for index in range(count):
                    await asyncio.sleep(max(0.0, begin + index / phase.pace_hz - time.monotonic()))
                    failure = self.client.session.failure
                    if failure is not None:
                        raise FloodBenchError(f"the server closed the calm client: {failure}")
                    number += 1
                    pings.append(asyncio.create_task(self._ping(number)))
                begin += phase.seconds
            await asyncio.wait(pings, timeout=reply_timeout_s)
        finally:
            for ping in pings:
                ping.cancel()
            await asyncio.gather(*pings, return_exceptions=True)
        given_up = time.perf_counter()
        first = 1
        for phase, count in zip(phases, counts, strict=True):
            for number in range(first, first + count):
                if number in self._answered:
                    phase.round_trips_ms.append(self._answered[number])
                elif number in self._refused:
                    code = self._refused[number]
                    phase.refused[code] = phase.refused.get(code, 0) + 1
                else:
                    phase.unanswered += 1
                    phase.round_trips_ms.append((given_up - self._sent[number]) * 1000)
            first += count

    async def _ping(self, number: int) -> None:
        self._sent[number] = time.perf_counter()
        with contextlib.suppress(WireClosed, TimeoutError):  # counted as unanswered
            sent, arrived, reply = await self.client.request(Ping())
            self._sent[number] = sent
            if isinstance(reply, Error):
                self._refused[number] = reply.code
            else:
                self._answered[number] = (arrived - sent) * 1000

    async def close(self) -> None:
        await self.client.close()


class Flooder:
    """Sends requests as fast as the connection takes them, never waiting for a reply;
    a reader task counts the replies so that the socket never fills up with them. With
    ``reconnect``, a connection the server closes is replaced at once (``hello`` with
    the flooder's token), as a determined client would."""

    def __init__(self, url: str, connection: ClientConnection, token: str) -> None:
        self.url = url
        self.connection = connection
        self.token = token
        self.report = FloodReport()
        self._began = 0.0
        self._reader: asyncio.Task[None] | None = None
        self._close_noted = False
        self._closing = False

    async def run(
        self,
        *,
        start_at: float,
        stop_at: float,
        max_requests: int,
        reconnect: bool,
        reply_timeout_s: float,
    ) -> FloodReport:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        self._began = time.monotonic()
        report = self.report
        self._reader = asyncio.create_task(self._read(self.connection))
        with contextlib.suppress(TimeoutError):
            # A send waits while the server does not read: the phase ends anyway.
            async with asyncio.timeout(max(0.0, stop_at - time.monotonic())):
                while report.sent < max_requests:
                    await self._flood(max_requests)
                    if not reconnect or report.sent >= max_requests:
                        break
                    await self._reconnect()
        report.flood_s = time.monotonic() - self._began
        # Replies still in flight: what the server served or refused of the flood.
        deadline = time.monotonic() + reply_timeout_s
        while self._answered() < report.sent and time.monotonic() < deadline:
            if self.connection.state is not State.OPEN:
                self._note_close()
                break
            await asyncio.sleep(0.01)
        await self._drop()
        return report

    async def _flood(self, max_requests: int) -> None:
        """Sends until the server closes the connection (or the caller's time is up)."""
        report = self.report
        requests = itertools.cycle(FLOOD_REQUESTS)
        try:
            while report.sent < max_requests:
                if self.connection.state is not State.OPEN:
                    break
                # Counted before the send, which writes the frame before it first waits:
                # a send cut short by the end of the phase has still sent it.
                report.sent += 1
                await self.connection.send(next(requests) % report.sent)
                if report.sent % SENDS_BETWEEN_READS == 0:
                    await asyncio.sleep(0)
        except ConnectionClosed:
            report.sent -= 1
        self._note_close()

    async def _reconnect(self) -> None:
        await self._drop()
        while True:
            try:
                connection = await connect(self.url, ping_interval=None, close_timeout=2)
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
                continue
            try:
                await connection.send(encode(Hello(token=self.token)).decode())
                reply = json.loads(await asyncio.wait_for(connection.recv(), 10))
            except (ConnectionClosed, TimeoutError):
                connection.transport.abort()
                await asyncio.sleep(0.05)
                continue
            if reply.get("type") == "welcome":
                break
            connection.transport.abort()
            await asyncio.sleep(reply.get("retry_after_ms", 50) / 1000)
        self.report.reconnects += 1
        self.connection, self._close_noted, self._closing = connection, False, False
        self._reader = asyncio.create_task(self._read(connection))

    async def _drop(self) -> None:
        """Closes the current connection, briefly, then cuts it, and lets the reader count
        the replies already received. One the server is closing is cut at once: the end
        of its closing handshake may wait on a server that no longer reads."""
        self._closing = True
        if self.connection.state is State.OPEN:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.connection.close(), 1)
        self.connection.transport.abort()
        if self._reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 1)

    def _note_close(self) -> None:
        """Counts a close the server started, once a connection."""
        if self._closing or self._close_noted or self.connection.state is State.OPEN:
            return
        self._close_noted = True
        report = self.report
        report.closes += 1
        if report.close_code is None:
            received = self.connection.protocol.close_rcvd
            report.close_code = received.code if received is not None else 1006
            report.closed_after_s = time.monotonic() - self._began

    def _answered(self) -> int:
        report = self.report
        return report.served + report.rate_limited + sum(report.other_errors.values())

    async def _read(self, connection: ClientConnection) -> None:
        report = self.report
        with contextlib.suppress(ConnectionClosed):
            async for frame in connection:
                message = json.loads(frame)
                if "id" not in message:
                    continue
                if message.get("type") != "error":
                    report.served += 1
                elif message.get("code") == "rate_limited":
                    report.rate_limited += 1
                else:
                    code = str(message.get("code"))
                    report.other_errors[code] = report.other_errors.get(code, 0) + 1


def flooder_main() -> None:
    """The flooder's process (``python -c``; arguments: URL, max requests, ``reconnect``
    or ``once``, reply timeout in seconds). It connects and registers, prints ``ready``,
    reads the flood's start and stop times (``time.monotonic``, the same clock in every
    process) as a JSON list on stdin, floods, and prints its report as JSON."""
    url, max_requests, reconnect, reply_timeout_s = sys.argv[1:5]

    async def flood() -> None:
        flooder = Flooder(url, *await registered(url, "flood"))
        print("ready", flush=True)
        start_at, stop_at = json.loads(await asyncio.to_thread(sys.stdin.readline))
        report = await flooder.run(
            start_at=start_at,
            stop_at=stop_at,
            max_requests=int(max_requests),
            reconnect=reconnect == "reconnect",
            reply_timeout_s=float(reply_timeout_s),
        )
        print(json.dumps(asdict(report)), flush=True)

    asyncio.run(flood())


async def _line_from(process: asyncio.subprocess.Process, timeout_s: float) -> str:
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), timeout_s)
    except TimeoutError:
        raise FloodBenchError(f"the flooder said nothing for {timeout_s:g} s") from None
    if not line:
        raise FloodBenchError(f"the flooder exited with {await process.wait()}")
    return line.decode()


@contextlib.asynccontextmanager
async def local_server(
    *, server_args: Sequence[str], pin_core: int | None, start_timeout_s: float = 60.0
) -> AsyncIterator[str]:
    """A gaps-server subprocess on the embedded default, SQLite in a temporary
    directory, on a loopback port the system picks (so binding cannot collide); yields
    its URL, stops it on the way out. Database, broker and GAPS_ settings from the
    environment are left out: the figures are of the defaults and ``server_args``."""
    with tempfile.TemporaryDirectory(prefix="gaps-floodbench-") as data_dir:
        command = [
            sys.executable, "-m", "server", "serve",
            "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir,
            "--log-level", "WARNING", *server_args,
        ]  # fmt: skip
        if pin_core is not None:
            command = ["taskset", "-c", str(pin_core), *command]
        environment = {
            name: value
            for name, value in os.environ.items()
            if name not in ("DATABASE_URL", "REDIS_URL") and not name.startswith("GAPS_")
        }
        log_path = Path(data_dir) / "server.log"
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=environment,
            )
            try:
                yield await listening_url(process, log_path, timeout_s=start_timeout_s)
            finally:
                await stop(process)


async def listening_url(
    process: asyncio.subprocess.Process,
    log_path: Path,
    *,
    timeout_s: float,
    what: str = "gaps-server",
    error: type[Exception] = ServerDidNotStart,
) -> str:
    """The ``ws://`` URL ``process`` (a gaps-server or an echo server) says it listens on,
    or ``error`` naming ``what`` if it does not say so within ``timeout_s`` or exits
    (with the tail of its log at ``log_path``)."""
    assert process.stdout is not None
    try:
        async with asyncio.timeout(timeout_s):
            while line := (await process.stdout.readline()).decode():
                found = re.search(r"listening on (ws://\S+)", line)
                if found:
                    return found.group(1)
    except TimeoutError:
        raise error(f"{what} did not say where it listens in {timeout_s:g} s") from None
    await process.wait()
    tail = log_path.read_text(errors="replace")[-2000:]
    raise error(f"{what} exited with {process.returncode}:\n{tail}")


async def stop(process: asyncio.subprocess.Process, *, timeout_s: float = 10.0) -> None:
    """SIGTERM ``process``; SIGKILL it if it has not exited within ``timeout_s``."""
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout_s)
        except TimeoutError:
            process.kill()
            await process.wait()


def can_pin() -> bool:
    """Whether the server and the clients can each have a core of their own."""
    return shutil.which("taskset") is not None and {SERVER_CORE, LOAD_CORE} <= set(
        os.sched_getaffinity(0)
    )


async def measure(
    url: str,
    *,
    seconds: float,
    pace_hz: float,
    max_flood_requests: int,
    reconnect: bool,
    reply_timeout_s: float = 10.0,
) -> tuple[Phase, Phase, FloodReport]:
    """The calm client's phases without and with the flood, and the flood's report."""
    # Its own process: in the calm client's event loop the flood would delay the calm
    # client's reads, and that delay would count against the server.
    flooder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from bench.flood import flooder_main; flooder_main()",
        url, str(max_flood_requests), "reconnect" if reconnect else "once",
        str(reply_timeout_s),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert flooder.stdin is not None
    try:
        calm = CalmClient(await calm_client(url))
        try:
            await calm.warm_up(10)
            if (await _line_from(flooder, 120.0)).strip() != "ready":
                raise FloodBenchError("the flooder did not get ready")
            phases = (
                Phase("calm, no flood", seconds, pace_hz),
                Phase("calm, flood", seconds, pace_hz),
            )
            start_at = time.monotonic() + 0.1
            flooder.stdin.write(f"[{start_at + seconds!r}, {start_at + 2 * seconds!r}]\n".encode())
            await flooder.stdin.drain()
            await calm.run(start_at=start_at, phases=phases, reply_timeout_s=reply_timeout_s)
        finally:
            await calm.close()
        report = FloodReport(**json.loads(await _line_from(flooder, 4 * reply_timeout_s + 30)))
    finally:
        try:
            await asyncio.wait_for(flooder.wait(), 10)
        except TimeoutError:
            flooder.kill()
            await flooder.wait()
    return phases[0], phases[1], report


async def run(
    url: str | None,
    *,
    seconds: float,
    pace_hz: float,
    server_args: Sequence[str],
    pin: bool,
    max_flood_requests: int,
    reconnect: bool,
) -> None:
    began = time.monotonic()
    async with contextlib.AsyncExitStack() as stack:
        if url is None:
            url = await stack.enter_async_context(
                local_server(server_args=server_args, pin_core=SERVER_CORE if pin else None)
            )
            where = "gaps-server on SQLite" + (f", pinned to core {SERVER_CORE}" if pin else "")
        else:
            where = "given by --url"
        clients = f"clients on core {LOAD_CORE}" if pin else "nothing pinned"
        print(f"server: {url} ({where}; {clients})", flush=True)
        print(
            f"{seconds:g} s calm, then {seconds:g} s of flood, pinging at {pace_hz:g}/s...",
            file=sys.stderr,
            flush=True,
        )
        calm, flooded, report = await measure(
            url,
            seconds=seconds,
            pace_hz=pace_hz,
            max_flood_requests=max_flood_requests,
            reconnect=reconnect,
        )
    print(calm.line(), flush=True)
    print(flooded.line(), flush=True)
    if calm.round_trips_ms and flooded.round_trips_ms:
        ratio = percentile(flooded.round_trips_ms, 0.99) / percentile(calm.round_trips_ms, 0.99)
        print(f"p99 ratio: {ratio:.2f} (goal: under 2)", flush=True)
    else:
        print("p99 ratio: none (a phase has no answered ping)", flush=True)
    print(report.line(), flush=True)
    print(f"took {time.monotonic() - began:.1f} s", flush=True)


def _bounded(low: float, high: float) -> Any:
    def parse(text: str) -> float:
        value = float(text)
        if not low < value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not in ({low:g}, {high:g}]")
        return value

    return parse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.flood", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--seconds",
        type=_bounded(0, MAX_SECONDS),
        default=10.0,
        help="length of each phase, calm then flood (default %(default)g)",
    )
    parser.add_argument(
        "--pace-hz",
        type=_bounded(0, MAX_PACE_HZ),
        default=20.0,
        help="the calm client's pings per second (default %(default)g)",
    )
    parser.add_argument(
        "--url", help="a running server on this machine (ws://127.0.0.1:PORT) instead of one's own"
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for the gaps-server started (repeat it; use --server-arg=--x)",
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="leave the server and clients on any core"
    )
    parser.add_argument(
        "--max-flood-requests",
        type=int,
        default=5_000_000,
        help="the flood stops after this many requests, or at the end of its phase",
    )
    parser.add_argument(
        "--reconnect",
        action="store_true",
        help="the flooder comes back (hello with its token) whenever the server closes it",
    )
    options = parser.parse_args(argv)
    if options.url is not None and options.server_arg:
        parser.error("--server-arg is for the server this command starts, not for --url")
    if options.max_flood_requests < 1:
        parser.error("--max-flood-requests must be at least 1")
    try:
        url = None if options.url is None else check_loopback(options.url)
        pin = not options.no_pin and can_pin()
        if pin:
            # The flooder's process inherits it.
            os.sched_setaffinity(0, {LOAD_CORE})
        asyncio.run(
            run(
                url,
                seconds=options.seconds,
                pace_hz=options.pace_hz,
                server_args=options.server_arg,
                pin=pin,
                max_flood_requests=options.max_flood_requests,
                reconnect=options.reconnect,
            )
        )
    except FloodBenchError as error:
        parser.exit(1, f"floodbench: {error}\n")


if __name__ == "__main__":
    main()
