"""The web client under the server's rate limits (docs/protocol.md, Limits): a page whose
read is refused ``rate_limited`` says so and loads by itself once it may. The server's
budgets run on a clock the test moves, so every refusal and every recovery is certain.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from server.app import Server
from server.config import Settings
from tests.fake_clock import FakeClock
from tests.races import Connect, registered
from tests.web_support import WEB

pytest_plugins = ["tests.web_fixtures"]
pytestmark = [
    *WEB,
    pytest.mark.limits(costly_request_burst_per_ip=1, costly_requests_per_min_per_ip=60),
]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def server(settings: Settings, clock: FakeClock) -> AsyncIterator[Server]:
    """The test's server, its request budgets on ``clock``: one costly request, then one
    more each second the test lets pass."""
    running = Server(settings, clock=clock)
    await running.start()
    yield running
    await running.close()


async def test_pages_under_rate_limiting_say_so_and_load_by_themselves(
    open_page: Any, connect: Connect, clock: FakeClock
) -> None:
    await registered(connect, "cid")  # the address's one costly request
    page = await open_page()

    async def refused_then_shown(load: Callable[[], Awaitable[Any]], said: str, shown: str) -> None:
        """``load()`` reads while the address has no request left: refused, the page says
        ``said``; a second later (of the server's clock) its next try is served."""
        await load()
        await page.wait_for_selector(f"#status >> text=Too many requests: {said} in 1 s")
        assert await page.locator(shown).count() == 0
        clock.advance(1)
        await page.wait_for_selector(shown)

    leaderboard = "reading the leaderboard again"
    await refused_then_shown(lambda: page.goto("/boards"), leaderboard,
                             "#leaderboard >> text=Nobody is on this board yet")
    await page.wait_for_selector("#status >> text=Loaded the leaderboard.")
    await refused_then_shown(lambda: page.select_option("#by", "wins"), leaderboard,  # in place
                             "#leaderboard th >> text=Wins")
    await refused_then_shown(lambda: page.goto("/today"), "reading the day's board again",
                             "#daily-board >> text=Nobody has played")  # not an empty board
    await refused_then_shown(lambda: page.goto("/player/cid"), "reading cid's ratings again",
                             "h1 >> text=cid")
    # Signing up, and signing in on the next load: ``register`` and ``hello`` are retried.
    await page.goto("/")
    await page.fill("#name", "ana")
    await refused_then_shown(lambda: page.click("text=Sign up"), "trying again", "#me")
    await refused_then_shown(lambda: page.goto("/lobby"), "trying again", "text=Create a match")
