"""``gaps``: the terminal client of Gaps Arena (``python -m client_cli`` works too)."""

from __future__ import annotations

from client_cli.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
