"""The web client's other pages in a real headless Chromium: tournaments (followed live,
hosted and played), practice offline with its hints and bots, the leaderboards, a player's
page and the daily challenge.
"""

from __future__ import annotations

import re
from typing import Any

from gaps import Game, Move, Seed
from gaps.bots import bot_named, play_game
from gaps.hint import hint
from tests.races import Connect, registered
from tests.web_support import (
    PHONE,
    PRACTICE,
    UHD,
    WEB,
    Wire,
    fits_the_width,
    layout,
    marking_bots,
    play_a_move,
    screenshot,
    shows,
    sign_up,
)

pytest_plugins = ["tests.web_support"]
pytestmark = WEB


async def test_a_spectator_and_the_tournament_page_follow_a_live_tournament(
    open_page: Any, connect: Connect
) -> None:
    host, eve = await registered(connect, "host", "eve")
    name = '<img src=x onerror="document.title=1">Cup'
    made = await host.ok("tournament_create", name=name, rounds=1, round_time_limit_s=60)
    code = made["tournament"]["code"]
    await eve.ok("tournament_join", code=code)
    projector, spectator, wall = await open_page(), await open_page(PHONE), await open_page(UHD)
    wire = Wire(mark=marking_bots("eve"))  # as if a bot played eve
    await wire.attach(wall)
    await sign_up(projector, "projector")
    await sign_up(spectator, "watcher")
    await sign_up(wall, "wall")
    await projector.goto(f"/t/{code}")
    await projector.wait_for_selector("text=Waiting to start")
    await wall.goto(f"/t/{code}")  # a 4K projector: large type, nothing to scroll
    await wall.wait_for_selector("text=Waiting to start")
    # A name made of HTML is shown as text, never parsed.
    assert await projector.inner_text("#tournament-name") == name
    assert await projector.locator("#tournament-name img").count() == 0
    await host.ok("tournament_start", code=code)
    starting = await eve.event("round_starting", tournament=code)
    round_code = starting["match"]
    await eve.ok("join_match", code=round_code)
    await eve.event("started", match=round_code)
    await spectator.goto(f"/watch/{round_code}")
    await spectator.wait_for_selector("#players >> text=eve")
    await screenshot(spectator, "watch-phone")
    assert (await eve.act(round_code, "stop"))["type"] == "action_ok"
    await spectator.wait_for_selector("#ranking")
    await projector.wait_for_selector("text=Final standings")
    assert "eve" in await projector.inner_text("#standings")
    assert await projector.locator("#standings .badge-bot").count() == 0  # as the server says
    await wall.wait_for_selector("text=Final standings")
    assert "eve" in await wall.inner_text("#standings")
    assert await wall.locator("#standings .badge-bot").count() == 1
    type_px = await wall.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('#standings td')).fontSize)"
    )
    assert type_px >= 60  # readable across a room
    assert await wall.evaluate("document.documentElement.scrollWidth") <= UHD["width"]
    await screenshot(projector, "tournament-desktop")
    assert await projector.title() == "Gaps Arena"


async def test_a_tournament_is_hosted_joined_and_played_in_the_browser(
    open_page: Any, connect: Connect
) -> None:
    (eve,) = await registered(connect, "eve")
    page = await open_page()
    await sign_up(page, "hostess")
    await page.goto("/lobby")
    await page.fill("#t-name", "Friday Cup")
    await page.select_option("#t-ruleset", "spaces")
    await page.fill("#t-rounds", "1")
    await page.fill("#t-round-time", "120")
    await page.click("text=Host tournament")
    await page.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    code = page.url.rsplit("/", 1)[1]
    view = (await eve.ok("tournament_standings", code=code))["tournament"]
    assert (view["name"], view["ruleset"], view["rounds"], view["round_time_limit_s"]) == (
        "Friday Cup", "spaces", 1, 120)
    await page.click("text=Join this tournament")  # the host plays too
    await page.wait_for_selector("#round >> text=Waiting to start · 1 entrant")
    assert await page.locator("text=Join this tournament").count() == 0
    await eve.ok("tournament_join", code=code)
    await page.wait_for_selector("#round >> text=Waiting to start · 2 entrants")
    await page.click("text=Start now")
    await page.click("text=Play round 1")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    round_code = page.url.rsplit("/", 1)[1]
    await page.wait_for_selector(".board .cell >> nth=51")
    assert (await page.inner_text("#match-info")).startswith("spaces")
    joined = await eve.ok("join_match", code=round_code)  # dealt already
    assert joined["match"]["status"] == "running"
    assert (await eve.act(round_code, "stop"))["type"] == "action_ok"
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")
    await page.goto(f"/t/{code}")
    await page.wait_for_selector("text=Final standings")
    standings = await page.inner_text("#standings")
    assert "hostess" in standings and "eve" in standings


async def test_practice_plays_offline_with_the_javascript_engine(open_page: Any) -> None:
    page = await open_page(PHONE)
    await page.goto("/practice?ruleset=classic&seed=AAAA-AAAA-AAAA-AAAA")
    await page.wait_for_selector(f"{PRACTICE} .cell >> nth=51")
    dealt = await layout(page, PRACTICE)
    assert dealt == Game.from_layout(dealt, "classic").layout()
    assert dealt.startswith("5S 9D QC KC JS 8D -- JC -- 9C 4D 7D 3C")  # docs/rules.md
    assert await page.get_attribute("main a >> text=addiction", "href") == (
        "/practice?ruleset=addiction"
    )
    await page.focus(f'{PRACTICE} [data-slot="r1c1"]')
    await page.keyboard.press("ArrowRight")
    assert await page.evaluate("document.activeElement.dataset.slot") == "r1c2"
    after = await play_a_move(page, board=PRACTICE)
    await page.keyboard.press("m")  # mark every card that can move now
    marked = await page.eval_on_selector_all(
        f"{PRACTICE} .cell.movable", "cells => cells.map(c => c.dataset.slot)"
    )
    game = Game.from_layout(after, "classic")
    assert sorted(marked) == sorted({str(game.slot_of(move.card)) for move in game.legal_moves()})
    await fits_the_width(page)
    await screenshot(page, "practice-phone")
    await page.click("text=Marks (M)")
    assert await page.locator(f"{PRACTICE} .cell.movable").count() == 0
    await page.set_viewport_size(UHD)  # a 4K projector: the board grows to fill it
    await fits_the_width(page)
    cell = await page.locator(f"{PRACTICE} .cell").first.bounding_box()
    assert cell is not None and cell["width"] >= 150
    # The four-colour deck: diamonds blue, clubs green (and kept for the next visit).
    diamond = f"{PRACTICE} .cell.suit-D >> nth=0"
    colour = "c => getComputedStyle(c).color"
    assert await page.eval_on_selector(diamond, colour) == "rgb(204, 0, 0)"
    await page.check("#four-colour")
    await page.reload()
    await page.wait_for_selector(f"{PRACTICE} .cell >> nth=51")
    assert await page.eval_on_selector(diamond, colour) == "rgb(0, 80, 200)"
    club = f"{PRACTICE} .cell.suit-C >> nth=0"
    assert await page.eval_on_selector(club, colour) == "rgb(22, 128, 30)"


async def shows_the_hint(page: Any, game: Game) -> None:
    """Check that the page shows ``hint(game)``: a move's card selected and its slot
    marked (and focused), or a redeal's or a stop's button marked."""
    expected = hint(game)
    if isinstance(expected, Move):
        destination = game.destination(expected)
        await page.wait_for_selector(f'{PRACTICE} [data-slot="{destination}"].hint')
        selected = await page.get_attribute(f"{PRACTICE} .cell.selected", "data-slot")
        assert selected == str(game.slot_of(expected.card))
        assert await page.evaluate("document.activeElement.dataset.slot") == str(destination)
    else:
        await page.wait_for_selector(f'button.hint[data-action="{expected}"]')
    assert (await page.inner_text("#status")).startswith("Hint: ")


async def test_practice_shows_the_python_hint_and_a_bot_plays_what_python_plays(
    open_page: Any,
) -> None:
    page = await open_page()
    await page.goto("/practice?ruleset=classic&seed=AAAA-AAAA-AAAA-AAAA")
    await page.wait_for_selector(f"{PRACTICE} .cell >> nth=51")
    game = Game(Seed.parse("AAAA-AAAA-AAAA-AAAA"), "classic")
    assert await layout(page, PRACTICE) == game.layout()
    await page.keyboard.press("h")
    await shows_the_hint(page, game)
    first = hint(game)
    assert isinstance(first, Move)
    await page.keyboard.press("Enter")  # the hinted slot has the focus: Enter plays there
    game.play(first)
    await shows(page, game.layout(), board=PRACTICE)
    await page.click("text=Hint (H)")
    await shows_the_hint(page, game)
    # A search bot races the same deal at once; it plays what gaps.bots plays.
    await page.select_option("#bot-name", "search")
    assert page.url.endswith("&bot=search")
    twin = Game(Seed.parse("AAAA-AAAA-AAAA-AAAA"), "classic")
    twin_bot = bot_named("search", seed=0)
    await page.click("#bot-step")  # one action, to watch
    twin.push(twin_bot.choose(twin))
    await shows(page, twin.layout(), board="#bot-board")
    await page.select_option("#bot-pace", "0")
    await page.click("#bot-start")  # the rest at once
    await page.wait_for_selector("#bot-start:disabled")
    play_game(twin_bot, twin)
    assert await layout(page, "#bot-board") == twin.layout()
    assert f"Score {twin.score} " in await page.inner_text("#bot-game")
    assert f"bot-search: {twin.score} (final)" in await page.inner_text("#versus")
    assert await page.inner_text("#status") == (
        f"bot-search finished: {twin.result()}, score {twin.score}."
    )
    await screenshot(page, "practice-bot-desktop")


async def test_boards_a_player_page_and_the_daily_challenge(
    open_page: Any, connect: Connect
) -> None:
    gil, hal = await registered(connect, "gil", "hal")
    created = await gil.ok("create_match", max_players=2, countdown_s=0)
    code = created["match"]["code"]
    await hal.ok("join_match", code=code)
    for client in (gil, hal):
        await client.ok("ready", code=code)
    for client in (gil, hal):
        await client.event("started", match=code)
        assert (await client.act(code, "stop"))["type"] == "action_ok"
    await gil.event("match_ended", match=code)
    page = await open_page(PHONE)
    await sign_up(page, "ivy")
    await page.goto("/boards?ruleset=classic&by=score&period=all")
    await page.wait_for_selector("#leaderboard >> text=hal")
    await screenshot(page, "boards-phone")
    await page.click("#leaderboard >> text=gil")
    await page.wait_for_url(re.compile(r"/player/gil$"))
    gil_page = await open_page()  # gil comes back with his token, and finds himself
    await gil_page.goto("/")
    await gil_page.fill("#token-input", gil.token)
    await gil_page.click("text=Come back")
    await gil_page.wait_for_selector("#me")
    await gil_page.goto("/boards?ruleset=classic&by=score&period=all")
    await gil_page.click("text=Around me")
    await gil_page.wait_for_url(re.compile(r"around=1"))
    await gil_page.wait_for_selector("#leaderboard >> text=gil (you)")
    assert "hal" in await gil_page.inner_text("#leaderboard")
    await page.wait_for_selector("h1 >> text=gil")
    assert "classic" in await page.inner_text("main")
    await page.goto("/today")
    await page.click("text=Play classic")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.wait_for_selector(".board .cell >> nth=51")
    assert "classic" in await page.inner_text("#match-info")
