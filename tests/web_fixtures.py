"""The browser fixtures of the web client's tests (tests/test_web*.py take them with
``pytest_plugins = ["tests.web_fixtures"]``): one headless Chromium per module, and a page
in a fresh browser profile per call of ``open_page``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.app import Server
from tests.web_support import CHROMIUM, DESKTOP, playwright_api

#: What the browser says of a response the page expects and handles: the server's "not
#: now" (docs/protocol.md, Limits).
EXPECTED_CONSOLE = ("Failed to load resource: the server responded with a status of 429",)


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    async with playwright_api.async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
            ],
        )
        yield launched
        await launched.close()


@pytest.fixture
async def open_page(browser: Any, server: Server) -> AsyncIterator[Any]:
    """``await open_page()`` opens a page in a fresh browser profile (its own storage),
    on the test's server (or on ``port``: a proxy in front of it); every page accepts
    confirmation dialogs and fails the test on a script error (or any error the console
    shows but a 429 the page answers by waiting)."""
    contexts = []
    errors: list[str] = []

    async def new_page(viewport: dict[str, int] = DESKTOP, port: int | None = None) -> Any:
        context = await browser.new_context(
            viewport=viewport, base_url=f"http://127.0.0.1:{port or server.port}"
        )
        contexts.append(context)
        page = await context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if (
            message.type == "error" and not message.text.startswith(EXPECTED_CONSOLE)
        ) else None)
        return page

    yield new_page
    for context in contexts:
        await context.close()
    assert errors == []
