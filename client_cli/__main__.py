"""``gaps``: the terminal client (commands come with the client issue)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    sys.exit("gaps: the terminal client is not built yet")


if __name__ == "__main__":
    main()
