"""The host's desk on the tournament page, in a real headless Chromium: announcements
shown to every follower (and to one who comes later), a pause and a resume, reinstating a
removed entrant, and a cancel with a reason while a round is being played."""

from __future__ import annotations

import re
from typing import Any

from tests.races import Connect, registered
from tests.web_support import WEB, sign_up

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB


async def hosted(page: Any, name: str) -> str:
    """A tournament of two rounds hosted from the lobby page by ``name``: its code."""
    await sign_up(page, name)
    await page.goto("/lobby")
    await page.fill("#t-name", "Evening Cup")
    await page.fill("#t-rounds", "2")
    await page.click("text=Host tournament")
    await page.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    return str(page.url.rsplit("/", 1)[1])


async def test_the_host_announces_reinstates_pauses_and_cancels_from_the_page(
    open_page: Any, connect: Connect
) -> None:
    eve, bob = await registered(connect, "eve", "bob")
    page = await open_page()
    code = await hosted(page, "hostess")
    for client in (eve, bob):
        await client.ok("tournament_join", code=code)

    # Text is taken as typed or refused saying why, never folded (docs/protocol.md).
    await page.fill("#announce-text", "Coffee  first")
    await page.click("#announce-form >> text=Announce")
    await page.wait_for_selector("text=The announcement holds two spaces in a row.")
    await page.fill("#announce-text", "Coffee first")
    await page.click("#announce-form >> text=Announce")
    await page.wait_for_selector("#announcements >> text=Coffee first")
    said = await eve.event("tournament_announcement")
    assert said["text"] == "Coffee first"
    projector = await open_page()
    await projector.goto(f"/t/{code}")  # no account: read over HTTP
    await projector.wait_for_selector("#announcements >> text=Coffee first")

    await page.click("text=Remove >> nth=1")
    await page.fill("#remove-reason", "phone")
    await page.click("text=Confirm removal")
    await page.click("[aria-label='Reinstate bob']")
    await page.wait_for_selector("#tournament-actions >> text=Start now")
    back = await eve.event("entrant_reinstated")
    assert back["name"] == "bob"

    await page.click("text=Start now")
    await page.click("#pause")
    await page.wait_for_selector("#round >> text=paused by the host")
    assert (await eve.event("tournament_paused"))["round_in_play"] is True
    await page.click("#resume")
    await eve.event("tournament_resumed")
    await page.wait_for_selector("#pause")

    await page.click("#cancel-tournament")
    await page.fill("#cancel-reason", "the hall closes")
    await page.click("text=Confirm the cancel")
    await page.wait_for_selector("#round >> text=Cancelled: the hall closes")
    cancelled = await bob.event("tournament_cancelled")
    assert (cancelled["reason"], cancelled["abandoned_round"]) == ("the hall closes", 1)
    assert await page.locator("#host-desk button").count() == 0
