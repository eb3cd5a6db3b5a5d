"""``gaps-server``: run the match server, or only its database migrations."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from pathlib import Path

from server import logs
from server.app import Server
from server.config import Settings, add_arguments, from_arguments
from server.storage.database import Database, database_url
from server.storage.rebuild import rebuild_boards_and_ratings

log = logging.getLogger("gaps.server")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="gaps-server", description="Gaps Arena match server (WebSocket and HTTP on one port)."
    )
    parser.add_argument(
        "command",
        nargs="?",
        choices=("serve", "migrate", "rebuild-boards"),
        default="serve",
        help="serve (default); migrate: apply the database migrations and exit; "
        "rebuild-boards: recompute the leaderboards and ratings from the stored results",
    )
    add_arguments(parser)
    options = parser.parse_args(argv)
    settings = from_arguments(options)
    logs.configure(settings.log_level)
    if options.command == "migrate":
        asyncio.run(_migrate(settings.database_url, settings.data_dir))
    elif options.command == "rebuild-boards":
        asyncio.run(_rebuild_boards(settings.database_url, settings.data_dir))
    else:
        asyncio.run(_serve(settings))


async def _migrate(url: str | None, data_dir: Path) -> None:
    database = Database(database_url(url, data_dir=data_dir))
    await database.migrate()
    await database.dispose()
    log.info("migrated", extra={"database": "sqlite" if database.is_sqlite else "postgresql"})


async def _rebuild_boards(url: str | None, data_dir: Path) -> None:
    database = Database(database_url(url, data_dir=data_dir))
    await database.migrate()
    folded = await rebuild_boards_and_ratings(database)
    await database.dispose()
    print(f"rebuilt the leaderboards and ratings from {folded} rated matches", flush=True)


async def _serve(settings: Settings) -> None:
    server = Server(settings)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(
        f"gaps-server listening on ws://{settings.host}:{server.port} "
        f"(health: http://{settings.host}:{server.port}/healthz)",
        flush=True,
    )
    await stop.wait()
    log.info("shutting down")
    await server.close()


if __name__ == "__main__":
    main()
