"""The web client's other pages in a real headless Chromium: tournaments (followed live,
hosted and played), practice offline with its hints and bots, the leaderboards, a player's
page and the daily challenge.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from gaps import Game, Move, Seed
from gaps.bots import bot_named, play_game
from gaps.hint import hint
from server.app import Server
from tests.fake_clock import FakeClock
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
    race_alone,
    screenshot,
    shows,
    sign_up,
)

PUBLIC_REFRESH_MS = 10_000  # tournament.js: how often a projector with no account reads

pytest_plugins = ["tests.web_fixtures"]
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
    await page.click("#back-to-tournament")  # the round's end leads back
    await page.wait_for_url(re.compile(f"/t/{code}$"))
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
    # Named columns, times as minutes and seconds: no field name, no raw milliseconds.
    headings = await page.eval_on_selector_all("#leaderboard th", "hs => hs.map(h => h.innerText)")
    assert headings == ["Rank", "Player", "Best score", "Its time", "Games"]
    assert re.fullmatch(r"\d+:\d\d", await page.inner_text("#leaderboard tbody td:nth-child(4)"))
    await page.select_option("#by", "rating")
    await page.wait_for_selector("#leaderboard th >> text=Skill (μ ± σ)")
    assert await page.is_disabled("#period")  # a rating counts all time
    rating = await page.inner_text("#leaderboard tbody td:nth-child(3)")
    assert re.fullmatch(r"-?\d+\.\d \(provisional\)", rating)
    skill = await page.inner_text("#leaderboard tbody td:nth-child(4)")
    assert re.fullmatch(r"\d+\.\d ± \d+\.\d", skill)
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
    when = await page.inner_text("#rating-history tbody td:first-child")
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d", when)  # for people
    await page.goto("/today")
    await page.click("text=Play classic")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.wait_for_selector(".board .cell >> nth=51")
    assert "classic" in await page.inner_text("#match-info")


async def test_quick_match_seats_the_browser_with_another_player(
    open_page: Any, connect: Connect
) -> None:
    (quinn,) = await registered(connect, "quinn")
    page = await open_page()
    await sign_up(page, "rae")
    await page.goto("/lobby")
    await page.select_option("#quick-ruleset", "spaces")
    await page.click("#quick-find")
    await page.wait_for_selector("#quick-status >> text=Waiting for players of close rating")
    await page.click("#quick-cancel")  # leaves the queue
    await page.wait_for_selector("#quick-status >> text=Left the queue.")
    await page.click("#quick-find")
    await page.wait_for_selector("#quick-cancel")
    await quinn.ok("quick_match", ruleset="spaces")
    code = (await quinn.event("matched"))["match"]["code"]
    await page.wait_for_url(re.compile(f"/m/{code}$"))  # seated: to the race
    await page.wait_for_selector(".board .cell >> nth=51")
    assert (await page.inner_text("#match-info")).startswith("spaces · quick match · fastest win")


async def test_join_by_code_takes_a_code_or_a_link_and_refuses_spaces_around_saying_why(
    open_page: Any, connect: Connect
) -> None:
    (cid,) = await registered(connect, "cid")
    code = (await cid.ok("create_match", max_players=3))["match"]["code"]
    page = await open_page()
    await sign_up(page, "joe")
    await page.goto("/lobby")
    await page.fill("#code", f"  {code}")  # the one rule for text: never stripped
    await page.click("#main button >> text=Join")
    await page.wait_for_selector("#status.error >> text=The code begins with a space.")
    for pasted in (f"http://elsewhere.example/m/{code}", code.lower()):
        await page.goto("/lobby")
        await page.fill("#code", pasted)
        await page.click("#main button >> text=Join")
        await page.wait_for_url(re.compile(f"/m/{code}$"))
        await page.wait_for_selector("#players >> text=joe")
    await page.goto("/lobby")
    await page.fill("#code", "K7QX")
    await page.click("#main button >> text=Join")
    await page.wait_for_selector("#status.error >> text=A match code is 6 letters or digits")
    assert page.url.endswith("/lobby")


async def test_a_game_the_server_ends_says_how_and_takes_no_more_moves(
    open_page: Any, connect: Connect, server: Server, clock: FakeClock
) -> None:
    """Ended from outside its play: by the time limit, or after too long without a
    connection (the test server's grace is 1 s). Never "playing" after that."""
    page = await open_page()
    await sign_up(page, "una")
    await page.goto("/lobby")
    await page.fill("#max-players", "1")
    await page.fill("#time-limit", "1")
    await page.fill("#countdown", "0")
    await page.click("text=Create match")
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")
    clock.advance(1)  # the time limit
    await page.wait_for_selector("#ranking")
    assert (await page.inner_text("#my-game")).endswith(" · ended: time is up")
    assert "ended: time is up" in await page.inner_text("#ranking")
    # A connection lost for longer than the grace: the race goes on without this game.
    (cid,) = await registered(connect, "cid")
    code = (await cid.ok("create_match", max_players=2, countdown_s=0))["match"]["code"]
    wire = Wire()
    await wire.attach(page)
    await page.goto(f"/m/{code}")
    await page.click("text=Ready")
    await cid.ok("ready", code=code)
    await page.wait_for_selector(".board .cell >> nth=51")
    wire.dead_lines = 2  # back after 0.5 + 1 + 2 s: past the grace
    for session in list(server.sessions):
        if session.player is not None and session.player.name == "una":
            session.connection.transport.abort()
    await cid.event("presence", match=code, connected=False)
    clock.advance(1)  # the grace period
    await cid.event("player_finished", match=code, end_reason="disconnected")
    await page.wait_for_selector("#status >> text=Reconnected")
    await page.wait_for_selector("#my-game >> text=ended: disconnected too long")
    assert await page.is_disabled("button[data-action=stop]")
    assert await page.is_disabled("button[data-action=redeal]")
    before = await layout(page)
    game = Game.from_layout(before, "classic")
    move = next(m for m in game.legal_moves() if m.card.rank != 2)
    await page.click(f'.board [data-slot="{game.slot_of(move.card)}"]')
    assert await layout(page) == before and wire.requests("action") == []
    row = page.locator("#players tr", has_text="una")
    assert "ended: disconnected too long" in await row.inner_text()
    assert (await cid.act(code, "stop"))["type"] == "action_ok"
    await page.wait_for_selector("#ranking")


def a_deal_with_a_dead_gap() -> Seed:
    """A classic deal dealt with a gap right of a king (nothing can ever fill it)."""
    for number in range(1000):
        seed = Seed(number.to_bytes(16, "big"))
        game = Game(seed, "classic")
        if any(game.is_dead_gap(slot) for slot in game.gaps()):
            return seed
    raise AssertionError("no deal of the first 1000 has a dead gap")


async def test_dead_gaps_differ_from_live_ones_in_shape_not_only_in_shade(
    open_page: Any,
) -> None:
    seed = a_deal_with_a_dead_gap()
    game = Game(seed, "classic")
    page = await open_page()
    await page.goto(f"/practice?ruleset=classic&seed={seed}")
    await page.wait_for_selector(f"{PRACTICE} .cell >> nth=51")
    looks = await page.eval_on_selector_all(
        f"{PRACTICE} .cell.gap",
        """cells => cells.map(c => [c.dataset.slot, c.getAttribute('aria-label').split(',')[0],
             getComputedStyle(c, '::after').content, getComputedStyle(c).borderTopStyle,
             getComputedStyle(c).backgroundImage.startsWith('repeating-linear-gradient')])""",
    )
    dead = {str(slot) for slot in game.gaps() if game.is_dead_gap(slot)}
    assert dead and {str(slot) for slot in game.gaps()} == {slot for slot, *_ in looks}
    for slot, label, mark, border, hatched in looks:
        if slot in dead:
            assert (label, mark, border, hatched) == ("dead gap", '"✕"', "solid", True)
        else:
            assert (label, mark, border, hatched) == ("gap", "none", "dashed", False)


async def test_a_projector_with_no_account_reads_the_standings_again_by_itself(
    open_page: Any, connect: Connect
) -> None:
    host, eve = await registered(connect, "host", "eve")
    code = (await host.ok("tournament_create", name="Hall Cup", rounds=1))["tournament"]["code"]
    projector = await open_page()  # nobody signs in on it
    await projector.clock.install()
    await projector.goto(f"/t/{code}")
    await projector.wait_for_selector("#round >> text=Waiting to start · 0 entrants")
    assert await projector.get_attribute("#tournament-actions a", "href") == "/"
    assert (await projector.inner_text("#updated")).startswith("Updated at ")
    await eve.ok("tournament_join", code=code)
    assert await projector.locator("#entrants >> text=eve").count() == 0
    await projector.clock.run_for(PUBLIC_REFRESH_MS)  # no real waiting
    await projector.wait_for_selector("#entrants >> text=eve")
    await projector.wait_for_selector("#round >> text=Waiting to start · 1 entrant")
    await screenshot(projector, "tournament-public-desktop")


@pytest.mark.par(par_workers=1, par_max_nodes=200_000, par_time_budget_s=30)
async def test_the_end_screen_and_the_replay_show_the_par_and_the_gap_to_it(
    open_page: Any,
) -> None:
    # Deal 25 without redeal: the server's solver wins it at once, par 58 exact.
    seed = Seed.parse("AAAA-AAAA-AAAA-AAAZ")
    page = await open_page()
    await race_alone(page, "pat", "no-redeal", seed=seed)
    below = 58 - Game(seed, "no-redeal").score
    await page.keyboard.press("s")  # stops at once: the score as dealt
    await page.wait_for_selector("#ranking")
    said = f"Par 58: the best score this deal allows. You: {below} below par."
    await page.wait_for_selector(f"#par >> text={said}", timeout=60_000)
    assert await page.inner_text("#ranking .to-par") == f"{below} below par"
    await screenshot(page, "end-par-desktop")
    await page.click("text=Replay")
    await page.wait_for_selector("#replay-step")
    assert await page.inner_text("#par") == (
        f"Par 58: the best score this deal allows. pat: {below} below par."
    )


@pytest.mark.par(par_workers=1, par_max_nodes=1, par_time_budget_s=30)
async def test_a_daily_challenge_says_when_its_replay_opens_and_its_par_is_a_lower_bound(
    open_page: Any, clock: FakeClock
) -> None:
    page = await open_page()
    await sign_up(page, "dai")
    clock.advance(24 * 3600)  # registered the day before: ranked (tests/test_web_records.py)
    await page.goto("/today")
    await page.click("text=Play classic")
    await page.wait_for_selector(".board .cell >> nth=51")
    score = Game.from_layout(await layout(page), "classic").score
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")
    # No replay link that would fail: when it opens, instead.
    assert await page.locator("#next a[href^='/replay/']").count() == 0
    opens = await page.inner_text("#replay-opens")
    assert re.fullmatch(r"The replay and the seed are secret until the day is over: they open "
                        r"at \d\d:\d\d your time \(midnight UTC\)\.", opens)
    await page.wait_for_selector("#par >> text=Par: at least", timeout=60_000)
    par = await page.inner_text("#par")
    bound = int(re.search(r"at least (\d+)\.", par)[1])  # type: ignore[index]
    gap = "at par or below it" if bound == score else f"at least {bound - score} below par"
    assert par.endswith(f"so {bound} is a lower bound. You: {gap}.")
    await page.goto("/today")
    await page.wait_for_selector("#daily-board >> text=dai (you)")
    assert (await page.inner_text("#par")).startswith(f"Par: at least {bound}.")
    assert await page.inner_text("#daily-board tr.me td:nth-child(4)") == gap
