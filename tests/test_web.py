"""The web client (server/web/) in a real headless Chromium against a real server: races
between browsers, the terminal client and WebSocket clients, reloads, lost connections and
actions cut off with them, the keyboard, the token, and the security headers.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from client_cli.screen import MatchApp, RankingScreen
from client_cli.widgets import BoardView
from gaps import Game
from server.app import Server
from server.web import CONTENT_SECURITY_POLICY
from tests.cli_support import driving, gaps
from tests.client import http_get
from tests.races import LONG_FIRST_MOVES, Connect, registered
from tests.web_support import (
    PHONE,
    SUIT_TEXT,
    WEB,
    Wire,
    card_name,
    fetch,
    fits_the_width,
    layout,
    moves_made,
    play_a_move,
    race_alone,
    screenshot,
    shows,
    sign_up,
    walk_to,
)

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB


async def test_pages_are_served_with_a_strict_content_security_policy(server: Server) -> None:
    for path in ("/", "/lobby", "/m/ABCDEF", "/practice", "/t/QQQQQQ", "/web/app.js"):
        assert (await fetch(server.port, path))[0] == 200, path
    status, headers, body = await fetch(server.port, "/m/ABCDEF")
    assert status == 200
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert b"<script>" not in body  # no inline script: only <script src=...>
    for name in ("app.js", "engine.js", "bots.js"):  # and nothing parsed as HTML
        script = (Path(__file__).parent.parent / "server" / "web" / name).read_text()
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", script)
    status, headers, _ = await fetch(server.port, "/web/engine.js")
    assert headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert headers["Cache-Control"] == "no-cache"
    # Revalidating an unchanged file costs a 304 and no body.
    again = await fetch(server.port, "/web/engine.js", **{"If-None-Match": headers["ETag"]})
    assert (again[0], again[2]) == (304, b"")
    assert (await fetch(server.port, "/web/secret.py"))[0] == 404
    # The JSON resources keep their paths.
    assert (await http_get(server.port, "/matches"))[0] == 200
    assert (await http_get(server.port, "/nothing/here/at/all"))[0] == 404


async def test_two_browsers_race_the_same_deal_to_the_end(open_page: Any) -> None:
    ana, bob = await open_page(), await open_page(PHONE)
    await sign_up(ana, "ana")
    await screenshot(ana, "account-desktop")
    await sign_up(bob, "bob")
    await ana.goto("/lobby")
    await ana.select_option("#ruleset", "classic")
    await ana.fill("#countdown", "0")
    await screenshot(ana, "lobby-desktop")
    await ana.click("text=Create match")
    await ana.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    code = ana.url.rsplit("/", 1)[1]
    await bob.goto(f"/m/{code}")
    await bob.click("text=Ready")
    await ana.click("text=Ready")
    await ana.wait_for_selector(".board .cell >> nth=51")
    await bob.wait_for_selector(".board .cell >> nth=51")
    assert await layout(ana) == await layout(bob)  # the same deal
    await fits_the_width(bob)  # a 360 px phone: the whole board, no sideways scrolling
    await ana.wait_for_selector("#clock >> text=/^\\d+:\\d\\d \\/ 10:00$/")  # the server clock
    await play_a_move(ana)
    await bob.wait_for_function(
        "() => document.querySelector('#players').textContent.includes('1/48') "
        "|| [...document.querySelectorAll('#players tr')].some(r => r.cells[5].textContent === '1')"
    )
    await screenshot(ana, "race-desktop")
    await screenshot(bob, "race-phone")
    await ana.keyboard.press("s")  # keyboard play: stop (the dialog is accepted)
    await bob.click("text=Stop (S)")
    for page in (ana, bob):
        await page.wait_for_selector("#ranking")
        await page.wait_for_selector("text=the seed matches the commitment")
    await screenshot(ana, "end-desktop")
    ranking = await ana.inner_text("#ranking")
    assert "ana" in ranking and "bob" in ranking
    await ana.click("text=Replay")
    await ana.wait_for_selector("#replay-step")
    await ana.click("text=End ▶▶")
    # Every action of the first-ranked player, replayed by engine.js from the revealed seed.
    step = re.match(r"Action (\d+)/(\d+)", await ana.inner_text("#replay-step"))
    assert step is not None and step[1] == step[2] and int(step[1]) >= 1
    await screenshot(ana, "replay-desktop")


async def test_a_browser_and_a_websocket_client_race_and_a_reload_resumes(
    open_page: Any, connect: Connect
) -> None:
    (cid,) = await registered(connect, "cid")
    created = await cid.ok("create_match", max_players=2, countdown_s=0, ruleset="addiction")
    code = created["match"]["code"]
    page = await open_page()
    await sign_up(page, "dee")
    await page.goto(f"/m/{code}")
    await page.click("text=Ready")
    await cid.ok("ready", code=code)
    await page.wait_for_selector(".board .cell >> nth=51")
    first = await play_a_move(page, "addiction")
    await page.reload()  # mid-race: hello, join_match, resync
    await page.wait_for_selector(".board .cell >> nth=51")
    assert await layout(page) == first
    await play_a_move(page, "addiction")
    await page.keyboard.press("u")  # undo, with the seq after the reload's
    await shows(page, first)
    progress = await cid.event("progress", match=code, moves_made=2)
    assert progress["name"] == "dee"
    assert (await cid.act(code, "stop"))["type"] == "action_ok"
    await page.click("text=Stop (S)")
    await page.wait_for_selector("#ranking")
    assert "cid" in await page.inner_text("#ranking")


@pytest.mark.usefixtures("config_dir")
async def test_a_browser_and_the_terminal_client_race_each_other(
    open_page: Any, ws_url: str
) -> None:
    page = await open_page()
    await sign_up(page, "web")
    await page.goto("/lobby")
    await page.fill("#countdown", "0")
    await page.click("text=Create match")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    code = page.url.rsplit("/", 1)[1]
    assert await gaps("register", "term", "--server", ws_url) == 0
    terminal_ready = asyncio.Event()
    browser_moved = asyncio.Event()
    terminal_stopped = asyncio.Event()

    async def until(found: Callable[[], Any]) -> None:
        async with asyncio.timeout(15):
            while not found():
                await asyncio.sleep(0.01)

    async def race(app: MatchApp, pilot: Any) -> None:
        await pilot.press("r")  # ready; the browser's ready then deals
        await until(lambda: app.state.me is not None and app.state.me.ready)
        terminal_ready.set()
        await until(lambda: app.state.playing)
        own = app.state.own
        assert own is not None
        move = next(m for m in own.game().legal_moves() if m.card.rank != 2)
        board = app.query_one(BoardView)
        await until(lambda: board.typing)  # the board takes typed moves once drawn running
        await pilot.press(*str(move.card).lower(), "enter")  # a typed move: 7h
        await until(lambda: app.state.own is not None and app.state.own.moves_made == 1)
        await browser_moved.wait()
        await until(lambda: any(p.name == "web" and p.moves_made == 1
                                for p in app.state.players.values()))
        await pilot.press("s", "s")  # stop, confirmed
        terminal_stopped.set()
        await until(lambda: isinstance(app.screen, RankingScreen))
        await pilot.press("q")

    terminal = asyncio.create_task(gaps("join", code, frontend=driving(race)))
    await terminal_ready.wait()
    await page.wait_for_function(  # the lobby says who is ready
        "() => [...document.querySelectorAll('#players tr')].map(r => r.cells[1].textContent)"
        ".join() === 'not ready,ready'"
    )
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")
    await play_a_move(page)
    await page.wait_for_function(
        "() => [...document.querySelectorAll('#players tr')]"
        ".some(r => r.cells[0].textContent.startsWith('term') && r.cells[5].textContent === '1')"
    )
    browser_moved.set()
    await terminal_stopped.wait()
    await page.keyboard.press("s")  # the dialog is accepted
    await page.wait_for_selector("#ranking")
    assert await terminal == 0
    ranking = await page.inner_text("#ranking")
    assert "web" in ranking and "term" in ranking
    await page.wait_for_selector("text=the seed matches the commitment")


async def test_the_token_goes_to_another_device_by_copy_and_paste_and_never_into_a_url(
    open_page: Any,
) -> None:
    laptop, phone = await open_page(), await open_page(PHONE)
    urls: list[str] = []
    for page in (laptop, phone):
        page.on("request", lambda request: urls.append(request.url))
        page.on("websocket", lambda socket: urls.append(socket.url))
        page.on("framenavigated", lambda frame: urls.append(frame.url))
    await laptop.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await sign_up(laptop, "jo")
    token = await laptop.evaluate("localStorage.getItem('gaps.token')")
    await laptop.click("text=Copy token")
    await laptop.wait_for_selector("#status >> text=Token copied")
    assert await laptop.evaluate("navigator.clipboard.readText()") == token
    await phone.goto("/")
    await phone.fill("#token-input", token)  # pasted on the other device
    await phone.click("text=Come back")
    await phone.wait_for_selector("#me")
    assert await phone.inner_text("#me") == "jo"
    await phone.reload()  # the phone keeps it
    await phone.wait_for_selector("#me")
    await phone.click("text=Go to the lobby")
    await phone.wait_for_selector("text=Create a match")
    # A browser with no clipboard for the page (plain http from another machine): the
    # token is shown and selected, for Ctrl+C.
    await phone.goto("/")
    await phone.wait_for_selector("#me")
    await phone.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    await phone.click("text=Copy token")
    await phone.wait_for_selector("#token", state="visible")
    assert await phone.evaluate("getSelection().toString()") == token
    assert len(urls) > 10 and not [url for url in urls if token in url]


async def test_a_race_is_played_with_the_keyboard_alone_and_labelled_for_screen_readers(
    open_page: Any,
) -> None:
    page = await open_page()
    # A known deal with moves to play: a random one can be dealt blocked.
    await race_alone(page, "kim", seed=LONG_FIRST_MOVES)
    # Tab from the top of the page reaches the board; one slot of it is in the Tab order.
    await page.focus("a.brand")
    for _ in range(20):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.classList.contains('cell')"):
            break
    else:
        pytest.fail("Tab never reaches the board")
    assert await page.locator(".board .cell[tabindex='0']").count() == 1
    game = Game.from_layout(await layout(page), "classic")
    played = 0
    while played < 2 and game.legal_moves():
        move = game.legal_moves()[0]
        origin, destination = game.slot_of(move.card), game.destination(move)
        await walk_to(page, origin.index)
        await page.keyboard.press("Enter")  # select the card (one destination: played)
        if move.card.rank == 2:
            await walk_to(page, destination.index)
            await page.keyboard.press("Enter")
        game.play(move)
        await shows(page, game.layout())
        label = await page.get_attribute(f'.board [data-slot="{destination}"]', "aria-label")
        assert label is not None and label.startswith(
            f"{card_name(move.card)}, row {destination.index // 13 + 1}, "
            f"column {destination.index % 13 + 1}"
        )
        gap = await page.get_attribute(f'.board [data-slot="{origin}"]', "aria-label")
        assert gap is not None and re.fullmatch(r"(dead )?gap, row \d, column \d+", gap)
        played += 1
    assert played >= 1 and await moves_made(page) == played
    # Colour is never the only cue: every card shows its suit's symbol, 12 of each.
    faces = await page.eval_on_selector_all(
        ".board .cell:not(.gap)", "cells => cells.map(c => c.textContent.slice(-1))"
    )
    assert sorted(set(faces)) == sorted(SUIT_TEXT) and all(faces.count(s) == 12 for s in SUIT_TEXT)
    # Every control says what it does; every slot is labelled.
    buttons = await page.eval_on_selector_all(
        "main button:not(.cell)", "bs => bs.map(b => b.textContent.trim())"
    )
    assert buttons == ["Redeal (R)", "Stop (S)", "Marks (M)"]
    labels = await page.eval_on_selector_all(
        ".board .cell", "cells => cells.map(c => c.getAttribute('aria-label'))"
    )
    assert all(re.search(r"row \d, column \d+", label) for label in labels)
    await page.keyboard.press("s")  # stop, confirmed
    await page.wait_for_selector("#ranking")


@pytest.mark.parametrize("cut", ["network", "1012"])
async def test_a_dropped_connection_or_a_moved_match_rejoins_by_itself_and_the_race_goes_on(
    open_page: Any, server: Server, cut: str
) -> None:
    page = await open_page()
    await race_alone(page, f"fay{cut}")
    code = page.url.rsplit("/", 1)[1]
    await play_a_move(page)
    for session in list(server.sessions):
        if cut == "network":  # the line drops: no close frame at all
            session.connection.transport.abort()
        else:  # the match moved to another process (docs/protocol.md, Restarts)
            await session.connection.close(1012, f"match {code} moved: reconnect")
    await page.wait_for_selector("#status >> text=Reconnected")
    after = await play_a_move(page)  # hello, join_match, resync: seq 2 is accepted
    await page.reload()
    await page.wait_for_selector(".board .cell >> nth=51")
    await shows(page, after)
    assert await moves_made(page) == 2


@pytest.mark.parametrize("lost", ["request", "reply"])
async def test_an_action_cut_off_with_the_line_is_applied_once_after_the_rejoin(
    open_page: Any, lost: str
) -> None:
    """The line drops with an action on it: before it reaches the server, or after, with
    its reply lost. Either way the rejoin leaves it applied exactly once."""
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await race_alone(page, f"gus{lost}")
    getattr(wire, f"lose_{lost}").add("action")
    before = await layout(page)
    game = Game.from_layout(before, "classic")
    move = next(m for m in game.legal_moves() if m.card.rank != 2)
    await page.click(f'.board [data-slot="{game.slot_of(move.card)}"]')
    game.play(move)
    await page.wait_for_selector("#status >> text=Reconnected")
    await shows(page, game.layout())
    actions = wire.requests("action")
    # Sent again with the same seq only when the server never had it.
    assert [a["seq"] for a in actions] == ([1, 1] if lost == "request" else [1])
    await page.reload()
    await page.wait_for_selector(".board .cell >> nth=51")
    await shows(page, game.layout())
    assert await moves_made(page) == 1
    await play_a_move(page)  # the next action takes the next seq
    assert [a["seq"] for a in wire.requests("action")][-1] == 2


async def test_a_redeal_or_a_stop_asks_first_and_no_changes_nothing(open_page: Any) -> None:
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await race_alone(page, "lou", "addiction")  # a redeal at any time, and undo
    await page.evaluate(  # every confirmation is answered no, and recorded
        "() => { window.asked = []; "
        "window.confirm = (m) => { window.asked.push(m); return false; }; }"
    )
    dealt = await layout(page)
    await page.keyboard.press("r")
    await page.click("text=Stop (S)")
    asked = await page.evaluate("window.asked")
    assert asked[0] == "Redeal? It costs 5 points (3 left)."
    assert asked[1].startswith("Stop now? Your score stands at ")
    assert wire.requests("action") == [] and await layout(page) == dealt
    # An undo asks nothing: it costs no point, and the move can be made again.
    await play_a_move(page, "addiction")
    await page.keyboard.press("u")
    await shows(page, dealt)
    assert len(await page.evaluate("window.asked")) == 2
    await page.evaluate("() => { window.confirm = (m) => { window.asked.push(m); return true; }; }")
    await page.keyboard.press("r")  # yes: redealt
    await page.wait_for_selector("#my-game >> text=redeals left 2")
    sent = [a["action"] for a in wire.requests("action")]
    assert len(sent) == 3 and sent[1:] == ["undo", "redeal"]  # a move, then these


async def test_a_page_loaded_with_no_connection_loads_by_itself_once_one_is_back(
    open_page: Any,
) -> None:
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await sign_up(page, "max")
    wire.dead_lines = 2
    await page.goto("/lobby")  # its connection dies at once, and so does the next one
    await page.wait_for_selector("text=Create a match")
    assert len(wire.routes) == 4  # sign up, two dead, the one that served the lobby
    await page.wait_for_selector("#code")
    assert await page.get_attribute("#status", "class") != "error"


async def test_transient_refusals_are_retried_not_shown_as_dead_ends(open_page: Any) -> None:
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await race_alone(page, "hana")
    wire.refusals["join_match"] = [{
        "code": "match_unavailable", "message": "no process serves this match yet",
        "retry_after_ms": 300,
    }]
    wire.refusals["action"] = [
        {"code": "storage_unavailable", "message": "the action could not be stored"},
        {"code": "rate_limited", "message": "too many requests: wait 200 ms",
         "retry_after_ms": 200},
    ]
    await page.reload()  # join_match is refused once, then served
    await page.wait_for_selector(".board .cell >> nth=51")
    assert len(wire.requests("join_match")) >= 2
    after = await play_a_move(page)  # refused twice, then applied
    assert [a["seq"] for a in wire.requests("action")] == [1, 1, 1]
    assert await moves_made(page) == 1
    assert await page.get_attribute("#status", "class") != "error"
    await page.reload()
    await page.wait_for_selector(".board .cell >> nth=51")
    await shows(page, after)
