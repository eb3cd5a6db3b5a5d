"""Helpers for client tests: run ``gaps`` commands, with or without a screen."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from client_cli.cli import run_async

Script = Callable[[Any, Pilot[Any]], Awaitable[None]]
Frontend = Callable[[App[Any]], Awaitable[None]]


def no_screen() -> Frontend:
    async def frontend(app: App[Any]) -> None:
        raise AssertionError(f"no screen expected, got {app!r}")

    return frontend


def driving(script: Script) -> Frontend:
    """A frontend that runs the app headless and lets ``script`` play it.

    Each running app redirects stdout and stderr; two at once (two players in one test)
    undo that out of order, so the streams of the test are put back after each."""
    streams = sys.stdout, sys.stderr

    async def frontend(app: App[Any]) -> None:
        try:
            async with app.run_test(size=(130, 40)) as pilot:
                await script(app, pilot)
        finally:
            sys.stdout, sys.stderr = streams

    return frontend


async def gaps(*argv: str, frontend: Frontend | None = None) -> int:
    """Run ``gaps ARGV`` in-process; returns its exit code."""
    return await run_async(list(argv), frontend=frontend or no_screen())
