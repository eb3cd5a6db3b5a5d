"""``gaps-server`` (and ``python -m server``): the server's commands (server.command), or,
where only the terminal client was installed, what to install to run a server."""

from __future__ import annotations

import sys
from typing import Final

#: The modules of the ``server`` extra (pyproject.toml): the terminal client's install
#: lacks them.
SERVER_EXTRA: Final = frozenset(
    {
        "sqlalchemy",
        "alembic",
        "asyncpg",
        "aiosqlite",
        "asyncio_redis",
        "openskill",
        "prometheus_client",
    }
)


def main(argv: list[str] | None = None) -> None:
    try:
        from server.command import main as run
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in SERVER_EXTRA:
            raise
        sys.exit(
            f"gaps-server: {missing} is missing: this install holds the terminal client "
            "only; a server needs: pip install 'gaps-arena[server]'"
        )
    run(argv)


if __name__ == "__main__":
    main()
