"""``gaps``: the terminal client of Gaps Arena (``python -m client_cli`` works too)."""

from __future__ import annotations

import sys
from typing import Final

#: The modules of the ``client`` extra (pyproject.toml): a server's install lacks them.
CLIENT_EXTRA: Final = frozenset({"textual", "rich", "platformdirs", "reportlab"})


def main(argv: list[str] | None = None) -> None:
    try:
        from client_cli.cli import main as run
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in CLIENT_EXTRA:
            raise
        sys.exit(
            f"gaps: {missing} is missing: this install holds the server only; the "
            "terminal client needs: pip install 'gaps-arena[client]'"
        )
    run(argv)


if __name__ == "__main__":
    main()
