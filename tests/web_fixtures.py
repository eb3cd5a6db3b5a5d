"""The browser fixtures of the web client's tests (tests/test_web*.py take them with
``pytest_plugins = ["tests.web_fixtures"]``): one headless Chromium per test process (an
xdist worker), and a page in a fresh browser profile per call of ``open_page``.

The browser lives on the session's event loop (pyproject.toml: the fixtures' and the tests'
default loop scope is the session), so every test of every module drives the same one:
launching Chromium costs a second or more, a fresh profile (a browser context) nothing
worth counting, and the contexts keep the tests apart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from server.app import Server
from tests.frame_check import FrameLog
from tests.web_support import CHROMIUM, DESKTOP, playwright_api

#: What the browser says of a response the page expects and handles: the server's "not
#: now" (docs/protocol.md, Limits).
EXPECTED_CONSOLE = ("Failed to load resource: the server responded with a status of 429",)


#: Chromium's options: no sandbox (the tests may run as root), nothing it would do besides
#: showing the pages.
CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


class Chromium:
    """The test process's headless Chromium, launched when first asked for, and again if
    it has died since: one crash fails the test it happens in, not every later one."""

    def __init__(self, playwright: Any) -> None:
        self._playwright = playwright
        self._browser: Any = None

    async def browser(self) -> Any:
        if self._browser is None or not self._browser.is_connected():
            self._browser = await self._playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_ARGS)
            )
        return self._browser

    async def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            await self._browser.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium() -> AsyncIterator[Chromium]:
    async with playwright_api.async_playwright() as playwright:
        launcher = Chromium(playwright)
        yield launcher
        await launcher.close()


@pytest.fixture
async def open_page(chromium: Chromium, server: Server) -> AsyncIterator[Any]:
    """``await open_page()`` opens a page in a fresh browser profile (its own storage),
    on the test's server (or on ``port``: a proxy in front of it); every page accepts
    confirmation dialogs and fails the test on a script error (or any error the console
    shows but a 429 the page answers by waiting), and on a WebSocket frame sent or received
    that the published protocol refuses (tests/frame_check.py)."""
    browser = await chromium.browser()
    contexts = []
    errors: list[str] = []
    frames = FrameLog()

    async def new_page(viewport: dict[str, int] = DESKTOP, port: int | None = None) -> Any:
        context = await browser.new_context(
            viewport=viewport, base_url=f"http://127.0.0.1:{port or server.port}"
        )
        contexts.append(context)
        page = await context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        frames.watch(page)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if (
            message.type == "error" and not message.text.startswith(EXPECTED_CONSOLE)
        ) else None)
        return page

    yield new_page
    for context in contexts:
        await context.close()
    assert errors == []
    assert frames.mismatches == []
