"""Every kind of page the web client shows, checked as a person and a screen reader would
meet it: axe-core finds no violation, no value is printed raw ("null", "true"), nothing
is wider than a 320 px phone, and during a race the status line is in sight, over the
board, on a desktop and on a phone.
"""

from __future__ import annotations

from typing import Any

from server.app import Server
from tests.races import LONG_FIRST_MOVES, Connect, registered, start_race, stop_all
from tests.web_support import (
    DESKTOP,
    NARROW,
    NOT_FOR_PEOPLE,
    WEB,
    accessibility_violations,
    in_view,
    overflow,
    play_a_move,
    race_alone,
    sign_up,
)

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB

async def looks_right(page: Any, kind: str) -> None:
    """The page as it is, at 1280 and at 320 px: no axe violation, nothing raw, and no
    sideways scrolling."""
    text = await page.inner_text("body")
    assert not NOT_FOR_PEOPLE.search(text), (kind, NOT_FOR_PEOPLE.findall(text))
    for viewport in (DESKTOP, NARROW):
        await page.set_viewport_size(viewport)
        assert await overflow(page) == 0, (kind, viewport)
        assert await accessibility_violations(page) == [], (kind, viewport)
    await page.set_viewport_size(DESKTOP)


async def test_every_kind_of_page_is_accessible_and_fits_a_phone(
    open_page: Any, connect: Connect, server: Server
) -> None:
    cid, dee = await registered(connect, "cid", "dee")
    # Rated results for the boards and a player page; a public match and a tournament
    # for the lobby; a match running without the browser's player.
    await stop_all([cid, dee], await start_race([cid, dee]))
    public = (await cid.ok("create_match", max_players=3, public=True))["match"]["code"]
    made = await cid.ok("tournament_create", name="Friday Cup", rounds=1)
    tournament = made["tournament"]["code"]
    await dee.ok("tournament_join", code=tournament)
    elsewhere = (await dee.ok("create_match", max_players=1, countdown_s=0))["match"]["code"]
    await dee.ok("ready", code=elsewhere)
    await dee.event("started", match=elsewhere)

    page = await open_page()
    await page.goto("/")
    await page.wait_for_selector("#name")
    # axe runs, and sees a fault: a button with no name.
    await page.evaluate("document.getElementById('main').append(document.createElement('button'))")
    assert [v for v in await accessibility_violations(page) if v.startswith("button-name")]
    await page.evaluate("document.querySelector('#main > button').remove()")
    await looks_right(page, "sign up")
    await sign_up(page, "ana")
    await looks_right(page, "account")
    await page.goto("/lobby")
    await page.wait_for_selector("#tournaments li")
    await looks_right(page, "lobby")
    await page.fill("#countdown", "0")
    await page.click("text=Create match")
    await page.wait_for_selector("text=Invite:")
    await looks_right(page, "a match's lobby, for its host")
    await page.goto(f"/m/{public}")
    await page.wait_for_selector("#players >> text=ana")
    await looks_right(page, "a match's lobby, for a player")

    await race_alone(page, "ana", seed=LONG_FIRST_MOVES, signed_up=True)
    await play_a_move(page)
    await looks_right(page, "a race")
    code = page.url.rsplit("/", 1)[1]
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")
    await page.wait_for_selector("text=the seed matches the commitment")
    await looks_right(page, "the end of a race")
    await page.goto(f"/replay/{code}")
    await page.wait_for_selector("#replay-step")
    await page.click("text=End ▶▶")
    await looks_right(page, "a replay")
    await page.goto(f"/watch/{elsewhere}")
    await page.wait_for_selector("#players >> text=dee")
    await looks_right(page, "a spectator")
    await page.goto(f"/m/{elsewhere}")
    await page.wait_for_selector("#refused")
    assert await page.get_attribute("#main a", "href") == f"/watch/{elsewhere}"
    await looks_right(page, "a match one is not in")
    await page.goto(f"/t/{tournament}")
    await page.wait_for_selector("text=Join this tournament")
    await looks_right(page, "a tournament")
    for board in ("score", "time", "wins", "rating"):
        await page.goto(f"/boards?ruleset=classic&by={board}")
        await page.wait_for_selector("#leaderboard tbody tr")  # nobody won: no time board
        await looks_right(page, f"the {board} leaderboard")
    await page.goto("/player/cid")
    await page.wait_for_selector("#rating-history >> text=classic")
    await looks_right(page, "a player")
    await page.goto("/today")
    await page.wait_for_selector("#daily-board")
    await looks_right(page, "the daily challenge")
    await page.goto("/practice?ruleset=classic&seed=AAAA-AAAA-AAAA-AAAA")
    await page.wait_for_selector("#practice-board .cell >> nth=51")
    await looks_right(page, "practice")

    projector = await open_page()  # nobody signed in
    await projector.goto(f"/t/{tournament}")
    await projector.wait_for_selector("#entrants >> text=dee")
    await looks_right(projector, "a tournament on a projector")


async def test_the_status_line_is_over_the_board_during_a_race(open_page: Any) -> None:
    for viewport in (DESKTOP, NARROW):
        page = await open_page(viewport)
        await race_alone(page, f"eva{viewport['width']}", seed=LONG_FIRST_MOVES)
        await page.keyboard.press("m")  # marks: the status line says so
        await page.wait_for_selector("#status >> text=Marked")
        assert await in_view(page, "#status"), viewport
        status = await page.locator("#status").bounding_box()
        board = await page.locator(".board").bounding_box()
        assert status is not None and board is not None
        assert status["y"] + status["height"] <= board["y"] + 1  # over the board
        # Scrolled so the board starts at the top, the line stays in sight, over it.
        await page.locator(".board").evaluate("board => board.scrollIntoView({block: 'start'})")
        assert await in_view(page, "#status"), viewport
