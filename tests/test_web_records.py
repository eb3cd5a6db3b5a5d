"""What the web pages say of the server's records, in a real headless Chromium: whether
the server's signature holds over a replay (checked in the browser, WebCrypto's Ed25519),
and that a daily attempt by an account newer than the day is unranked, and why."""

from __future__ import annotations

from typing import Any

from server.app import Server
from tests.fake_clock import FakeClock
from tests.races import Connect
from tests.test_signing import race_of_equals
from tests.web_support import WEB, marked_http, marking_each_dict, sign_up

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB


async def test_the_replay_page_checks_the_servers_signature(
    open_page: Any, server: Server, connect: Connect, clock: FakeClock
) -> None:
    code = await race_of_equals(connect, clock)
    page = await open_page()
    await page.goto(f"/replay/{code}")
    await page.wait_for_selector("#signature >> text=✓ Signed by the server")
    assert await page.inner_text("#signature") == (
        f"✓ Signed by the server, key {server.signer.key_id}: this is the replay as the server "
        "published it."
    )

    def later(value: dict[str, Any]) -> None:  # a finish time changed by a millisecond
        if value.get("name") == "bob":
            value["finish_ms"] += 1

    forged = await open_page()
    await marked_http(forged, marking_each_dict(later))
    await forged.goto(f"/replay/{code}")
    await forged.wait_for_selector("#signature >> text=✗")
    assert await forged.inner_text("#signature") == (
        f"✗ The signature does NOT hold: this is not what the server's key "
        f"{server.signer.key_id} signed."
    )


async def test_a_daily_attempt_by_an_account_newer_than_the_day_says_it_is_unranked(
    open_page: Any,
) -> None:
    page = await open_page()
    await sign_up(page, "newt")
    await page.goto("/today")
    rule = await page.inner_text("#daily-ranked")
    assert rule.startswith("Only accounts registered before the day began (midnight UTC)")
    await page.click("text=Play classic")
    await page.wait_for_selector(".board .cell >> nth=51")
    assert "daily challenge" in await page.inner_text("#match-info")
    assert "unranked: an account newer than the day" in await page.inner_text("#match-info")
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")
    assert (await page.inner_text("#unranked")).startswith(
        "Unranked: this account was registered after the day began (midnight UTC), so its "
        "result stays off the day's board."
    )
    await page.goto("/today")
    await page.wait_for_selector("#daily-board >> text=Nobody has played")
    assert "newt" not in await page.inner_text("#daily-board")
