"""The commands of ``gaps-server``: run the match server, or only its database migrations,
a rebuild of the boards, an operator's task (docs/fair-play.md), or a new signing key
(docs/operations.md). ``server.__main__`` starts them once the server's dependencies are
found."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Final

from gaps_protocol.times import format_time
from server import children, logs
from server.app import Server
from server.clock import SystemClock
from server.config import Settings, add_arguments, from_arguments
from server.errors import ServerError
from server.heap import Collector, freeze_start_up
from server.signing import REFRESH_S, SigningKeyError, rotate
from server.storage.database import Database, database_url, is_sqlite
from server.storage.rebuild import rebuild_boards_and_ratings
from server.storage.reviews import Reviews
from server.storage.signing_keys import SigningKeys

#: The operators' subcommands (docs/fair-play.md, "Operators").
OPERATOR_COMMANDS: Final = ("reviews", "review-clear", "review-void", "suspend", "audit-log")

log = logging.getLogger("gaps.server")

#: How long the supervisor of ``--workers`` waits before starting a worker that exited
#: again, in seconds: a worker that cannot start must not be restarted in a busy loop.
WORKER_RESTART_DELAY_S: Final = 1.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="gaps-server", description="Gaps Arena match server (WebSocket and HTTP on one port)."
    )
    parser.add_argument(
        "command",
        nargs="?",
        choices=("serve", "migrate", "rebuild-boards", "rotate-signing-key", *OPERATOR_COMMANDS),
        default="serve",
        help="serve (default); migrate: apply the database migrations and exit; "
        "rebuild-boards: recompute the leaderboards and ratings from the stored results; "
        "rotate-signing-key: make a new key (or --new-key-file's) the one results are "
        "signed with, the old ones kept published (docs/operations.md); "
        "operators (docs/fair-play.md): reviews (the results held for review, with their "
        "timing charts), review-clear and review-void (--match, --player, --reason), "
        "suspend (--player, --reason), audit-log",
    )
    operator = parser.add_argument_group("operators' tasks")
    operator.add_argument("--match", metavar="CODE", help="review-clear, review-void: the match")
    operator.add_argument(
        "--player", metavar="NAME", help="review-clear, review-void, suspend: the player"
    )
    operator.add_argument("--reason", help="review-clear, review-void, suspend: why (required)")
    operator.add_argument(
        "--operator",
        metavar="NAME",
        default=f"console:{getpass.getuser()}",
        help="who decides, as the audit log records it (default %(default)s)",
    )
    parser.add_argument(
        "--new-key-file",
        metavar="FILE",
        type=Path,
        help="rotate-signing-key: the operator's new Ed25519 key (PEM), of which only the "
        "public half is stored; without it, the servers make and keep a new key",
    )
    parser.add_argument(
        "--workers",
        type=_positive,
        default=int(os.environ.get("GAPS_WORKERS") or 1),
        help="serve: processes sharing the one port (SO_REUSEPORT), each a server of the "
        "cluster; above 1 they need REDIS_URL and a PostgreSQL DATABASE_URL, and a port "
        "other than 0 (GAPS_WORKERS; default %(default)s)",
    )
    # Set by the supervisor of --workers for each worker: bind the port shared.
    parser.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
    add_arguments(parser)
    options = parser.parse_args(argv)
    settings = from_arguments(options)
    if options.workers > 1 and options.command == "serve":
        refusal = workers_refusal(settings, options.workers)
        if refusal is not None:
            parser.error(refusal)
    logs.configure(settings.log_level)
    if options.command == "serve" and options.workers > 1:
        worker_argv = list(sys.argv[1:] if argv is None else argv)
        asyncio.run(_supervise(settings, worker_argv, workers=options.workers))
    elif options.command == "migrate":
        asyncio.run(_migrate(settings.database_url, settings.data_dir))
    elif options.command == "rebuild-boards":
        asyncio.run(_rebuild_boards(settings.database_url, settings.data_dir))
    elif options.command == "rotate-signing-key":
        try:
            asyncio.run(
                _rotate_signing_key(settings.database_url, settings.data_dir, options.new_key_file)
            )
        except SigningKeyError as refusal:
            print(f"refused: {refusal}", file=sys.stderr, flush=True)
            sys.exit(1)
    elif options.command in OPERATOR_COMMANDS:
        missing = _missing_operands(options)
        if missing:
            parser.error(f"{options.command} needs {', '.join(missing)}")
        try:
            asyncio.run(_operate(settings.database_url, settings.data_dir, options))
        except ServerError as refusal:
            print(f"refused ({refusal.code}): {refusal.message}", file=sys.stderr, flush=True)
            sys.exit(1)
    else:
        try:
            asyncio.run(_serve(settings, reuse_port=options.reuse_port))
        except SigningKeyError as error:  # the operator's to fix: no traceback
            print(f"gaps-server: cannot sign results: {error}", file=sys.stderr, flush=True)
            sys.exit(1)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def workers_refusal(settings: Settings, workers: int) -> str | None:
    """Why ``workers`` processes cannot serve with ``settings``, or None if they can.

    Processes of one cluster share their matches through PostgreSQL (leases, every
    stored action) and their events through Redis: the embedded SQLite database and
    the in-process broker are one process's."""
    missing = []
    if not settings.database_url or is_sqlite(
        database_url(settings.database_url, data_dir=settings.data_dir)
    ):
        missing.append("a PostgreSQL DATABASE_URL (--database-url)")
    if not settings.redis_url:
        missing.append("REDIS_URL (--redis-url)")
    if missing:
        return (
            f"--workers {workers} needs {' and '.join(missing)}: several processes share "
            "their matches through PostgreSQL and their events through Redis "
            "(docs/operations.md); without them, run one process (--workers 1)"
        )
    if settings.port == 0:
        return f"--workers {workers} needs a fixed --port: with 0 each worker would pick its own"
    return None


async def _migrate(url: str | None, data_dir: Path) -> None:
    database = Database(database_url(url, data_dir=data_dir), statement_timeout_s=None)
    await database.migrate()
    await database.dispose()
    log.info("migrated", extra={"database": "sqlite" if database.is_sqlite else "postgresql"})


async def _rebuild_boards(url: str | None, data_dir: Path) -> None:
    database = Database(database_url(url, data_dir=data_dir), statement_timeout_s=None)
    await database.migrate()
    folded = await rebuild_boards_and_ratings(database)
    await database.dispose()
    print(f"rebuilt the leaderboards and ratings from {folded} rated matches", flush=True)


async def _rotate_signing_key(url: str | None, data_dir: Path, key_file: Path | None) -> None:
    database = Database(database_url(url, data_dir=data_dir))
    await database.migrate()
    keys = SigningKeys(database)
    try:
        before = await keys.current()
        key = await rotate(keys, now=SystemClock().now(), key_file=key_file)
    finally:
        await database.dispose()
    print(f"the current signing key is now {key.key_id}", flush=True)
    if key_file is None:
        print(f"running servers sign with it within {REFRESH_S:.0f} s", flush=True)
    else:
        print(
            f"its private half stays in {key_file}: start every server with "
            f"--signing-key-file {key_file} (GAPS_SIGNING_KEY_FILE)",
            flush=True,
        )
    if before is not None:
        print(
            f"{before.key_id} is retired: still published at /keys, so what it signed "
            "still verifies",
            flush=True,
        )


def _missing_operands(options: argparse.Namespace) -> list[str]:
    """The options the operator's command needs and was not given."""
    needed = {
        "review-clear": ("match", "player", "reason"),
        "review-void": ("match", "player", "reason"),
        "suspend": ("player", "reason"),
    }.get(options.command, ())
    return [f"--{name}" for name in needed if not (getattr(options, name) or "").strip()]


async def _operate(url: str | None, data_dir: Path, options: argparse.Namespace) -> None:
    """An operator's task on the database, printed as text."""
    database = Database(database_url(url, data_dir=data_dir), statement_timeout_s=None)
    await database.migrate()
    reviews = Reviews(database)
    now = SystemClock().now()
    try:
        match options.command:
            case "reviews":
                held = await reviews.held()
                print(f"{len(held)} result(s) held for review")
                for review in held:
                    print(
                        f"\nmatch {review['match_code']} ({review['ruleset']}), player "
                        f"{review['name']}, held at {review['held_at']}: "
                        f"flags {', '.join(review['flags'])}; {review['intervals']} intervals, "
                        f"median {review['median_ms']} ms, spread {review['spread_ratio']}"
                    )
                    print("\n".join(review["chart"]))
            case "review-clear" | "review-void":
                decide = reviews.clear if options.command == "review-clear" else reviews.void
                folded = await decide(
                    code=options.match,
                    name=options.player,
                    operator=options.operator,
                    reason=options.reason.strip(),
                    at=now,
                )
                done = "cleared" if options.command == "review-clear" else "voided"
                print(
                    f"{done} {options.player}'s result in {options.match.upper()}; "
                    f"boards and ratings refolded from {folded} rated matches"
                )
            case "suspend":
                await reviews.suspend(
                    name=options.player,
                    operator=options.operator,
                    reason=options.reason.strip(),
                    at=now,
                )
                print(f"suspended {options.player} from rated play")
            case "audit-log":
                for entry in await reviews.audit_log():
                    print(
                        f"{format_time(entry.at)} {entry.operator} {entry.decision} "
                        f"{entry.target}: {entry.reason}"
                    )
        sys.stdout.flush()
    finally:
        await database.dispose()


async def _serve(settings: Settings, *, reuse_port: bool = False) -> None:
    server = Server(settings)
    await server.start(reuse_port=reuse_port)
    freeze_start_up()
    collecting = asyncio.create_task(
        Collector(clock=server.clock.monotonic, sleep=server.clock.sleep).run(), name="collector"
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    url = f"ws://{settings.host}:{server.port}"
    health = f"http://{settings.host}:{server.port}/healthz"
    metrics_port = server.metrics_port
    metrics = (
        None
        if metrics_port is None
        else f"http://{settings.metrics_host}:{metrics_port}/metrics"
    )
    # The URL is followed by a space in the message: readers match "listening on ws://\S+".
    logs.announce(
        f"gaps-server listening on {url} (health: {health})",
        url=url,
        health=health,
        metrics=metrics,
    )
    await stop.wait()
    log.info("shutting down")
    await server.close()
    collecting.cancel()


async def _supervise(settings: Settings, argv: list[str], *, workers: int) -> None:
    """Migrate once, then run ``workers`` worker processes on the one port (each
    ``gaps-server`` with ``argv``, as one worker binding with SO_REUSEPORT), start again
    any that exits, and on SIGTERM or SIGINT stop them all (SIGTERM: each shuts down
    gracefully) and wait for them."""
    await _migrate(settings.database_url, settings.data_dir)
    # Guarded: a worker gets SIGTERM when the supervisor ends, however it ends.
    command = children.guarded(
        [sys.executable, "-m", "server", *argv, "--workers", "1", "--reuse-port"]
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    running: dict[int, asyncio.subprocess.Process] = {}

    async def keep(number: int) -> None:
        # Each worker's /metrics on a port of its own: Prometheus scrapes each one.
        metrics = (
            ["--metrics-port", str(settings.metrics_port + number - 1)]
            if settings.metrics_port
            else []
        )
        while not stop.is_set():
            process = await asyncio.create_subprocess_exec(*command, *metrics)
            running[number] = process
            log.info("worker started", extra={"worker": number, "pid": process.pid})
            status = await process.wait()
            if stop.is_set():
                return
            log.warning(
                "worker exited: starting it again",
                extra={"worker": number, "pid": process.pid, "status": status},
            )
            try:
                await asyncio.wait_for(stop.wait(), WORKER_RESTART_DELAY_S)
            except TimeoutError:
                pass

    keepers = [asyncio.create_task(keep(number)) for number in range(1, workers + 1)]
    url = f"ws://{settings.host}:{settings.port}"
    logs.announce(f"gaps-server supervising {workers} workers on {url}", url=url, workers=workers)
    await stop.wait()
    log.info("stopping workers")
    for process in running.values():
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
    await asyncio.gather(*keepers)
    log.info("workers stopped")
