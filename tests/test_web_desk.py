"""The tournament director's desk in a real headless Chromium: the tournament page shows
the commitment to the deals and checks every seed revealed against it, crying out at a
tampered one (followed live, and read by a projector with no account); it links to the
exports, which download and parse; the lobby lists ended tournaments behind a filter, and
hosts a tournament of winnable deals."""

from __future__ import annotations

import csv
import io
import random
import re
from pathlib import Path
from typing import Any

from gaps import Seed
from tests.races import Connect, registered
from tests.test_tournament import play_round
from tests.web_support import WEB, Wire, sign_up

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB

#: What a server that changed a deal after committing to it would reveal.
TAMPERED = str(Seed(bytes([9]) * 10))


def tampering_round(number: int) -> Any:
    """A ``Wire.mark`` that swaps round ``number``'s revealed seed for ``TAMPERED``."""

    def mark(message: dict[str, Any]) -> None:
        if message.get("event") == "round_ended" and message.get("round") == number:
            message["seed"] = TAMPERED
        if message.get("event") == "tournament_ended":
            message["seeds"][number - 1] = TAMPERED

    return mark


async def test_the_page_checks_each_revealed_seed_and_cries_out_at_a_tampered_one(
    open_page: Any, connect: Connect
) -> None:
    host, eve = await registered(connect, "host", "eve")
    made = (await host.ok("tournament_create", name="Cup", rounds=2, max_players=1))["tournament"]
    code = made["code"]
    await eve.ok("tournament_join", code=code)
    page = await open_page()
    wire = Wire(mark=tampering_round(2))
    await wire.attach(page)
    await sign_up(page, "projector")
    await page.goto(f"/t/{code}")
    await page.wait_for_selector(f"#deals-status >> text=SHA-256 {made['commitment']}")
    assert await page.inner_text("#deal-seeds") == (
        "Round 1: secret until the round ends\nRound 2: secret until the round ends"
    )
    await host.ok("tournament_start", code=code)
    await play_round(eve, 1, bot_level=None, rng=random.Random(1))
    ended = await eve.event("round_ended", round=1)
    await page.wait_for_selector(f"#deal-seeds >> text={ended['seed']} ✓ matches its commitment")
    assert await page.locator("#deals-alarm").is_hidden()
    await play_round(eve, 2, bot_level=None, rng=random.Random(2))
    await page.wait_for_selector("#deals-alarm >> text=The deals do not match the commitment")
    alarm = await page.inner_text("#deals-alarm")
    assert f"round 2: seed {TAMPERED} hashes to" in alarm
    assert "the revealed seeds hash to" in alarm  # the whole list too, at the end
    assert await page.inner_text("#deal-seeds >> li >> nth=1") == (
        f"Round 2: {TAMPERED} ✗ does not match its commitment"
    )
    assert await page.get_attribute("#status", "class") == "error"


async def test_a_projector_with_no_account_checks_the_seeds_it_reads(
    open_page: Any, connect: Connect
) -> None:
    host, eve = await registered(connect, "host", "eve")
    code = (await host.ok("tournament_create", rounds=1, max_players=1))["tournament"]["code"]
    await eve.ok("tournament_join", code=code)
    await host.ok("tournament_start", code=code)
    await play_round(eve, 1, bot_level=None, rng=random.Random(1))
    final = await eve.event("tournament_ended")
    honest = await open_page()
    await honest.goto(f"/t/{code}")
    await honest.wait_for_selector("#deals-status >> text=Every seed is revealed, and they "
                                   "match it.")
    assert f"{final['seeds'][0]} ✓ matches" in await honest.inner_text("#deal-seeds")
    forged = await open_page()

    async def tamper(route: Any) -> None:
        response = await route.fetch()
        body = await response.json()
        body["tournament"]["seeds"] = [TAMPERED]
        await route.fulfill(response=response, json=body)

    await forged.route(f"**/tournaments/{code}", tamper)
    await forged.goto(f"/t/{code}")
    await forged.wait_for_selector("#deals-alarm >> text=The deals do not match the commitment")
    assert TAMPERED in await forged.inner_text("#deals-alarm")


async def test_the_exports_download_from_the_page_and_the_lobby_lists_ended_tournaments(
    open_page: Any, connect: Connect, tmp_path: Path
) -> None:
    host, eve = await registered(connect, "host", "eve")
    code = (await host.ok("tournament_create", name="Done Cup", rounds=1, max_players=1)
            )["tournament"]["code"]
    await eve.ok("tournament_join", code=code)
    await host.ok("tournament_start", code=code)
    await play_round(eve, 1, bot_level=None, rng=random.Random(3))
    standings = (await eve.event("tournament_ended"))["standings"]
    still_open = (await host.ok("tournament_create", name="Open Cup"))["tournament"]["code"]
    page = await open_page()
    await sign_up(page, "organiser")
    await page.goto(f"/t/{code}")
    await page.wait_for_selector("text=Final standings")
    hrefs = await page.eval_on_selector_all("#exports a", "links => links.map(a => a.pathname)")
    assert hrefs == [f"/tournaments/{code}/{name}" for name in (
        "standings.csv", "standings.json", "rounds.csv", "rounds.json")]  # no start time: no .ics
    async with page.expect_download() as waiting:
        await page.click("#exports >> text=Standings (CSV)")
    download = await waiting.value
    assert download.suggested_filename == f"{code}-standings.csv"
    saved = tmp_path / download.suggested_filename
    await download.save_as(saved)
    rows = list(csv.DictReader(io.StringIO(saved.read_text(encoding="utf-8"), newline="")))
    assert [(r["name"], int(r["total_score"])) for r in rows] == [
        (row["name"], row["total_score"]) for row in standings
    ]
    await page.goto("/lobby")
    await page.wait_for_selector("#tournament-list >> text=Open Cup")
    assert await page.locator("#tournament-list >> text=Done Cup").count() == 0
    await page.select_option("#t-filter", "ended")
    await page.wait_for_selector("#tournament-list >> text=Done Cup")
    assert await page.locator("#tournament-list >> text=Open Cup").count() == 0
    assert await page.get_attribute("#tournament-list a", "href") == f"/t/{code}"
    await page.select_option("#t-filter", "all")
    await page.wait_for_selector("#tournament-list >> text=Open Cup")
    assert await page.locator("#tournament-list >> text=Done Cup").count() == 1
    assert still_open != code


async def test_a_tournament_of_winnable_deals_is_hosted_and_opens_once_they_are_drawn(
    open_page: Any, connect: Connect
) -> None:
    (eve,) = await registered(connect, "eve")
    page = await open_page()
    await sign_up(page, "hostess")
    await page.goto("/lobby")
    await page.fill("#t-name", "Winnable Cup")
    await page.fill("#t-rounds", "2")
    await page.check("#t-winnable")
    await page.click("text=Host tournament")
    await page.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    code = page.url.rsplit("/", 1)[1]
    await page.wait_for_selector("#deals-status >> text=Committed before anyone entered",
                                 timeout=60_000)
    assert "Only deals the solver proved winnable without redeal." in \
        await page.inner_text("#deals-status")
    await page.click("text=Join this tournament")
    view = (await eve.ok("tournament_standings", code=code))["tournament"]
    assert (view["deals"], view["deals_ready"], len(view["round_commitments"])) == (
        "winnable", True, 2)
    assert view["commitment"] in await page.inner_text("#deals-status")
