"""Tables in the room on the tournament page, in a real headless Chromium against the
real server: the host seats an entrant at a table, opens the round's deal sheet at
/sheet/CODE/N, enters the table's result from the page, and sees it marked entered in
the standings."""

from __future__ import annotations

import re
from typing import Any

from gaps import Seed
from gaps.dealsheet import DealSheet, parse_layout
from tests.races import Connect, registered
from tests.test_web_evening import hosted
from tests.web_support import WEB

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB


async def test_the_host_runs_a_table_from_the_page_and_its_deal_sheet(
    open_page: Any, connect: Connect
) -> None:
    ana, cat = await registered(connect, "ana", "cat")
    page = await open_page()
    code = await hosted(page, "hostess")
    for client in (ana, cat):
        await client.ok("tournament_join", code=code)
    await page.wait_for_selector("[aria-label='cat plays at a table']")
    await page.click("[aria-label='cat plays at a table']")
    await page.wait_for_selector("[aria-label='cat plays at a table'][aria-pressed='true']")
    assert (await ana.event("entrant_table"))["at_table"] is True

    await page.click("text=Start now")
    starting = await ana.event("round_starting", round=1)
    assert starting["tables"] == ["cat"]
    await page.click("#deal-sheet-link")
    await page.wait_for_url(re.compile(rf"/sheet/{code}/1$"))
    await page.wait_for_selector("#sheet-layout")
    sheet = await cat.request("tournament_deal_sheet", code=code, round=1)
    assert sheet["code"] == "not_arbiter"  # an entrant at a table gets it from the host
    deal = (await page.text_content("#sheet-deal")) or ""
    seed = re.search(r"Deal (\S+)", deal)
    assert seed is not None
    expected = DealSheet.of(Seed.parse(seed[1]), "classic", code, 1)
    layout = await page.evaluate(
        "() => [...document.querySelectorAll('#sheet-layout tr')].map((r) => r.innerText)")
    assert parse_layout("\n".join(str(row) for row in layout)) == expected.layout

    await page.go_back()
    await page.wait_for_selector("#enter-result")
    await page.select_option("#result-player", "cat")
    await page.fill("#result-placed", "30")
    await page.fill("#result-redeals", "3")
    await page.fill("#result-time", "6:40")
    await page.click("text=Enter the result")
    await page.wait_for_selector("#status >> text=/redeals/")
    await page.fill("#result-redeals", "1")
    await page.click("text=Enter the result")
    entered = await ana.event("result_entered")
    assert (entered["name"], entered["score"], entered["finish_ms"]) == ("cat", 25, 400_000)
    await page.wait_for_selector("#status >> text=Entered: cat, round 1, 25 points.")
