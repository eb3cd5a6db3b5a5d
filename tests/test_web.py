"""The web client (server/web/) in a real headless Chromium against a real server.

Debian's ``chromium`` is driven by Playwright; the tests are skipped, saying why, only
when it is missing. Set ``GAPS_WEB_SCREENSHOTS=docs/web`` to write the screenshots of
docs/web.md while they run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from client_cli.screen import MatchApp, RankingScreen
from client_cli.widgets import BoardView
from gaps import Game, Move, Seed
from gaps.bots import bot_named, play_game
from gaps.hint import hint
from server.app import Server
from server.web import CONTENT_SECURITY_POLICY
from tests.cli_support import driving, gaps
from tests.client import http_get
from tests.races import LONG_FIRST_MOVES, Connect, registered

CHROMIUM = "/usr/bin/chromium"
playwright_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (Debian's chromium package)"
)
SCREENSHOTS = os.environ.get("GAPS_WEB_SCREENSHOTS")
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
UHD = {"width": 3840, "height": 2160}  # a 4K projector
RANK_TEXT = {"10": "T"}
SUIT_TEXT = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
PRACTICE = "#practice-board"


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """SQLite only: these tests are about the browser, the storage tests cover PostgreSQL."""
    yield f"sqlite:///{tmp_path / 'gaps.sqlite3'}"


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
    """``await open_page()`` opens a page in a fresh browser profile (its own storage);
    every page accepts confirmation dialogs and fails the test on a script error."""
    contexts = []
    errors: list[str] = []

    async def new_page(viewport: dict[str, int] = DESKTOP) -> Any:
        context = await browser.new_context(
            viewport=viewport, base_url=f"http://127.0.0.1:{server.port}"
        )
        contexts.append(context)
        page = await context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on(
            "console",
            lambda message: errors.append(message.text) if message.type == "error" else None,
        )
        return page

    yield new_page
    for context in contexts:
        await context.close()
    assert errors == []


async def screenshot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        await page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


async def sign_up(page: Any, name: str) -> None:
    await page.goto("/")
    await page.fill("#name", name)
    await page.click("text=Sign up")
    await page.wait_for_selector("#me")


async def layout(page: Any, board: str = ".board") -> str:
    """The board a page shows (``board`` selects it), in the layout text of docs/rules.md."""
    cells: list[str] = await page.eval_on_selector_all(
        f"{board} .cell",
        "cells => cells.map(c => c.classList.contains('gap') ? '--' : c.textContent)",
    )
    assert len(cells) == 52
    text = [
        cell if cell == "--" else RANK_TEXT.get(cell[:-1], cell[:-1]) + SUIT_TEXT[cell[-1]]
        for cell in cells
    ]
    return "\n".join(" ".join(text[row * 13 : row * 13 + 13]) for row in range(4))


async def play_a_move(page: Any, ruleset: str = "classic", board: str = ".board") -> str:
    """Click one legal move on the board (a card, then its gap); returns the layout after."""
    before = await layout(page, board)
    game = Game.from_layout(before, ruleset)
    move = game.legal_moves()[0]
    destination = game.destination(move)
    await page.click(f'{board} [data-slot="{game.slot_of(move.card)}"]')
    if move.card.rank == 2:  # a 2 may have several gaps: name one
        await page.click(f'{board} [data-slot="{destination}"]')
    game.play(move)
    await shows(page, game.layout(), board=board)
    return game.layout()


async def shows(
    page: Any, expected: str, *, timeout_s: float = 10, board: str = ".board"
) -> None:
    """Wait until the page's board is ``expected`` (a layout), or fail showing the last."""
    seen = ""
    for _ in range(int(timeout_s / 0.05)):
        seen = await layout(page, board)
        if seen == expected:
            return
        await asyncio.sleep(0.05)
    assert seen == expected


async def fetch(port: int, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP GET: the status, the headers and the body."""

    def get() -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    return await asyncio.to_thread(get)


Message = dict[str, Any]


class Wire:
    """A page's WebSocket to the real server, through the test (Playwright's
    ``route_web_socket``): it records what the page sends, and can refuse or answer a
    request in the server's place, lose a request or its reply along with the connection,
    mark what the server says, or say more."""

    def __init__(self, mark: Callable[[Message], None] = lambda _: None) -> None:
        self.sent: list[Message] = []
        self.refusals: dict[str, list[Message]] = {}  # per request type, in turn
        # Replies made from the request, in the server's place (per request type, in turn).
        self.answers: dict[str, list[Callable[[Message], Message]]] = {}
        self.lose_request: set[str] = set()  # the next request of these types, and the line
        self.lose_reply: set[str] = set()  # the reply to the next of these, and the line
        self.mark = mark  # changes each message from the server in place
        self.dead_lines = 0  # how many of the next connections close at once, unserved
        self.routes: list[Any] = []
        self._losing: int | None = None

    async def attach(self, page: Any) -> None:
        await page.route_web_socket(re.compile(r"^ws://[^/]+/$"), self._route)

    def requests(self, kind: str) -> list[Message]:
        return [message for message in self.sent if message.get("type") == kind]

    def say(self, message: Message) -> None:
        """Send ``message`` to the page as if the server had."""
        self.routes[-1].send(json.dumps(message))

    def _route(self, page_side: Any) -> None:
        self.routes.append(page_side)
        if self.dead_lines > 0:
            self.dead_lines -= 1
            asyncio.ensure_future(page_side.close(code=1011, reason="no server"))
            return
        server_side = page_side.connect_to_server()

        def from_page(raw: str | bytes) -> None:
            message = json.loads(raw)
            kind = message.get("type")
            self.sent.append(message)
            if self.refusals.get(kind):
                refusal = self.refusals[kind].pop(0)
                page_side.send(json.dumps({"type": "error", "id": message["id"], **refusal}))
            elif self.answers.get(kind):
                answer = self.answers[kind].pop(0)(message)
                page_side.send(json.dumps({**answer, "id": message["id"]}))
            elif kind in self.lose_request:
                self.lose_request.discard(kind)
                asyncio.ensure_future(page_side.close(code=1001, reason="lost"))
            else:
                if kind in self.lose_reply:
                    self.lose_reply.discard(kind)
                    self._losing = message["id"]
                server_side.send(raw)

        def from_server(raw: str | bytes) -> None:
            message = json.loads(raw)
            if self._losing is not None and message.get("id") == self._losing:
                self._losing = None
                asyncio.ensure_future(page_side.close(code=1001, reason="lost"))
                return
            self.mark(message)
            page_side.send(json.dumps(message))

        page_side.on_message(from_page)
        server_side.on_message(from_server)


def marking_each_dict(change: Callable[[dict[str, Any]], None]) -> Callable[[Message], None]:
    """A ``Wire.mark`` that applies ``change`` to every object in a message, however deep."""

    def mark(value: Any) -> None:
        if isinstance(value, dict):
            change(value)
            for item in value.values():
                mark(item)
        elif isinstance(value, list):
            for item in value:
                mark(item)

    return mark


def marking_bots(*names: str) -> Callable[[Message], None]:
    """A ``Wire.mark`` that says ``bot: true`` of every player entry with one of ``names``."""

    def change(value: dict[str, Any]) -> None:
        if value.get("name") in names:
            value["bot"] = True

    return marking_each_dict(change)


async def race_alone(
    page: Any, name: str, ruleset: str = "classic", *, seed: Seed | None = None
) -> None:
    """Sign up as ``name``, create a match of one seat from the lobby (dealt from
    ``seed`` if given), start it."""
    await sign_up(page, name)
    await page.goto("/lobby")
    await page.select_option("#ruleset", ruleset)
    await page.fill("#max-players", "1")
    await page.fill("#countdown", "0")
    if seed is not None:
        await page.fill("#seed", str(seed))
    await page.click("text=Create match")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")


async def moves_made(page: Any) -> int:
    """How many moves the page says its player has made."""
    found = re.search(r"moves (\d+)", await page.inner_text("#my-game"))
    assert found is not None
    return int(found[1])


async def fits_the_width(page: Any) -> None:
    """Nothing on the page is wider than the viewport: no sideways scrolling."""
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"]
    board = await page.locator(".board").first.bounding_box()
    assert board is not None and board["x"] >= 0
    assert board["x"] + board["width"] <= page.viewport_size["width"]


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
        await until(lambda: app.state.players.get(app.state.you_id or 0, {}).get("ready"))
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
        await until(lambda: any(p.get("name") == "web" and p.get("moves_made") == 1
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


async def marked_http(page: Any, mark: Callable[[Message], None]) -> None:
    """Pass the page's reads of the JSON resources through ``mark``."""

    async def handle(route: Any) -> None:
        response = await route.fetch()
        body = await response.json()
        mark(body)
        await route.fulfill(response=response, json=body)

    for pattern in ("**/leaderboards/**", "**/ratings/**", "**/matches/*/replay"):
        await page.route(pattern, handle)


async def test_bot_players_wear_a_badge_and_a_rematch_offer_links_to_the_new_match(
    open_page: Any, connect: Connect
) -> None:
    """Where the server says ``bot: true`` of a player (here the wire says it of robo),
    the name wears a "bot" badge: seats, ranking, replay, leaderboard, player page."""
    (robo,) = await registered(connect, "robo")
    page = await open_page()
    wire = Wire(mark=marking_bots("robo"))
    await wire.attach(page)
    await marked_http(page, marking_bots("robo"))
    await sign_up(page, "ivo")
    code = (await robo.ok("create_match", max_players=2, countdown_s=0))["match"]["code"]
    await page.goto(f"/m/{code}")
    await page.wait_for_selector("#players >> text=ivo")
    await robo.ok("ready", code=code)
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")
    await robo.event("started", match=code)
    assert (await robo.act(code, "stop"))["type"] == "action_ok"
    robo_row = page.locator("#players tr", has_text="robo")
    await robo_row.locator("text=stopped").wait_for()  # a progress event keeps the badge
    assert await robo_row.locator(".badge-bot").get_attribute("aria-label") == "(a bot)"
    ivo_row = page.locator("#players tr", has_text="ivo")
    assert await ivo_row.locator(".badge-bot").count() == 0  # no bot field: a person
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")
    ranked = page.locator("#ranking tr", has_text="robo")
    assert await ranked.locator(".badge-bot").inner_text() == "bot"
    assert await page.locator("#ranking .badge-bot").count() == 1
    assert await page.locator("#review-notes").count() == 0  # every result counts
    assert "null" not in await page.inner_text("#end")
    # Another player's rematch, on the finished match's stream (docs/protocol.md: a
    # numbered event, ``by`` a player): a link to join it.
    last = max(e["seq"] for e in robo.events if e.get("match") == code)
    wire.say({"type": "event", "match": code, "seq": last + 1, "event": "rematch_offered",
              "code": "QWERTZ", "same_seed": True,
              "by": {"player_id": robo.player_id, "name": "robo"}})
    offer = page.locator("#rematch-offer")
    await offer.locator("a").wait_for()
    assert await offer.inner_text() == "robo offered a rematch on the same deal: join match QWERTZ"
    assert await offer.locator("a").get_attribute("href") == "/m/QWERTZ"
    # An offer outside the numbered events, ``by`` a bare name, is shown as well.
    wire.say({"type": "event", "match": code, "event": "rematch_offered",
              "code": "ASDFGH", "by": "robo"})
    await page.wait_for_selector("#rematch-offer >> text=robo offered a rematch: join match ASDFGH")
    # This page's own rematch on the same deal. The server here has no ``rematch``
    # request: the page creates a match with the same options and the revealed seed.
    await page.click("#end button[data-rematch=same]")
    assert [r["same_seed"] for r in wire.requests("rematch")] == [True]
    await page.wait_for_url(re.compile(r"/m/(?!" + code + r")[A-Z0-9]{6}$"))
    await page.wait_for_selector("#match-info >> text=unrated")
    info = await page.inner_text("#match-info")
    assert info.startswith("classic") and "2 seats" in info
    rematch_code = page.url.rsplit("/", 1)[1]
    assert (await robo.ok("join_match", code=rematch_code, role="spectator"))["match"][
        "rated"] is False
    await page.goto(f"/replay/{code}")
    await page.wait_for_selector("#replay-step")
    options = await page.eval_on_selector_all("#replay-player option", "os => os.map(o => o.text)")
    names = sorted(re.sub(r"^\d+\. | \(-?\d+\)$", "", option) for option in options)
    assert names == ["ivo", "robo [bot]"]
    await page.goto("/boards?ruleset=classic&by=score&period=all")
    await page.wait_for_selector("#leaderboard >> text=ivo")
    board_row = page.locator("#leaderboard tr", has_text="robo")
    assert await board_row.locator(".badge-bot").count() == 1
    assert await page.locator("#leaderboard .badge-bot").count() == 1
    assert "bot" not in await page.inner_text("#leaderboard thead")  # not a figure
    await page.goto("/player/robo")
    await page.wait_for_selector("h1 .badge-bot")
    await page.goto("/player/ivo")
    await page.wait_for_selector("h1 >> text=ivo")
    assert await page.locator("h1 .badge-bot").count() == 0


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


def card_name(card: Any) -> str:
    """A card as the board labels it for screen readers: "10 of hearts"."""
    ranks = ["ace", *map(str, range(2, 11)), "jack", "queen", "king"]
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    return f"{ranks[card.rank - 1]} of {suits[str(card)[-1]]}"


async def walk_to(page: Any, index: int) -> None:
    """Move the focus across the board to the slot ``index`` with the arrow keys."""
    here = int(await page.evaluate(
        "[...document.querySelectorAll('.board .cell')].indexOf(document.activeElement)"))
    assert here >= 0
    for _ in range(abs(index // 13 - here // 13)):
        await page.keyboard.press("ArrowDown" if index > here else "ArrowUp")
    for _ in range(abs(index % 13 - here % 13)):
        await page.keyboard.press("ArrowRight" if index % 13 > here % 13 else "ArrowLeft")
    assert await page.evaluate("document.activeElement.dataset.slot") == engine_slot(index)


def engine_slot(index: int) -> str:
    return f"r{index // 13 + 1}c{index % 13 + 1}"


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
    await page.wait_for_selector("#round >> text=Waiting to start · 1 entrants")
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


def marking_reviews(
    reviews: dict[str, str | None], suspension: list[Any]
) -> Callable[[Message], None]:
    """A ``Wire.mark`` (and HTTP mark) for the fair-play fields of docs/protocol.md: the
    ``review`` of each ranked result whose player ``reviews`` names, and the last of
    ``suspension`` as ``welcome``'s ``suspended``."""

    def change(value: dict[str, Any]) -> None:
        if value.get("type") == "welcome" and suspension:
            value["suspended"] = suspension[-1]
        if "rank" in value and value.get("name") in reviews:
            value["review"] = reviews[value["name"]]

    return marking_each_dict(change)


async def test_a_held_voided_or_suspended_result_says_so_and_a_suspended_account_is_told(
    open_page: Any, connect: Connect
) -> None:
    vic, wes = await registered(connect, "vic", "wes")
    reviews: dict[str, str | None] = {"una": "held", "vic": "suspended", "wes": "cleared"}
    suspension: list[Any] = []
    mark = marking_reviews(reviews, suspension)
    page = await open_page()
    wire = Wire(mark=mark)
    await wire.attach(page)
    await marked_http(page, mark)
    await sign_up(page, "una")
    code = (await vic.ok("create_match", max_players=3, countdown_s=0))["match"]["code"]
    await wes.ok("join_match", code=code)
    await page.goto(f"/m/{code}")
    await page.wait_for_selector("#players >> text=una")
    assert await page.is_hidden("#notice")  # not suspended: no notice
    for client in (vic, wes):
        await client.ok("ready", code=code)
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")
    for client in (vic, wes):
        await client.event("started", match=code)
        assert (await client.act(code, "stop"))["type"] == "action_ok"
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")

    async def marks(where: str) -> dict[str, str]:
        """Each ranked player's review mark on the page ('' for none)."""
        found = {}
        for name in ("una", "vic", "wes"):
            row = page.locator(f"{where} tr", has_text=name)
            shown = row.locator(".review")
            found[name] = await shown.inner_text() if await shown.count() else ""
        return found

    assert await marks("#ranking") == {"una": "under review", "vic": "suspended", "wes": ""}
    notes = (await page.inner_text("#review-notes")).splitlines()
    assert sorted(notes) == [
        "una's result is under review: it is held off the boards and ratings until an "
        "operator reviews it.",
        "vic is suspended from rated play: this result counts on no board and no rating.",
    ]
    # An operator voids una's result and clears the rest: the finished match, loaded
    # again, and its replay say so (the replay document carries ``review`` too).
    reviews.update(una="voided", vic=None, wes="cleared")
    await page.reload()
    await page.wait_for_selector("#ranking")
    assert await marks("#ranking") == {"una": "voided by an operator", "vic": "", "wes": ""}
    await page.goto(f"/replay/{code}")
    await page.wait_for_selector("#replay-step")
    options = await page.eval_on_selector_all("#replay-player option", "os => os.map(o => o.text)")
    assert [o for o in options if "voided" in o] == [
        o for o in options if re.match(r"\d\. una \(-?\d+\) · voided by an operator$", o)
    ] != []
    for index, option in enumerate(options):
        await page.select_option("#replay-player", str(index))
        if "una" in option:
            assert await page.inner_text("#replay-review") == (
                "una's result was voided by an operator: it counts on no board and no rating."
            )
        else:
            assert await page.is_hidden("#replay-review")
    # A suspended account is told as it comes back (``welcome``), the reason as text.
    suspension.append({"since": "2026-12-01T03:00:00+00:00", "reason": "<b>bot-paced</b> play"})
    await page.goto("/lobby")
    await page.wait_for_selector("#notice", state="visible")
    assert await page.inner_text("#notice") == (
        "Rated play is suspended for your account: <b>bot-paced</b> play. "
        "You can still play, but your results count on no board and no rating."
    )
    assert await page.locator("#notice b").count() == 0
    assert await page.get_attribute("#notice", "role") == "status"
    suspension.append(True)  # suspended, no reason given
    await page.reload()
    await page.wait_for_selector("#notice >> text=Rated play is suspended for your account.")
    assert await page.locator("#suspended-reason").count() == 0
    suspension.append(None)
    await page.reload()
    await page.wait_for_selector("text=Create a match")
    assert await page.is_hidden("#notice")


async def test_the_create_forms_let_bots_sit_and_the_boards_switch_between_people_and_bots(
    open_page: Any,
) -> None:
    page = await open_page()
    bots_asked: list[bool] = []  # what the page's create_match said: the match view echoes it

    def echo_bots(message: Message) -> None:
        if isinstance(message.get("match"), dict) and bots_asked:
            message["match"]["bots"] = bots_asked[-1]

    wire = Wire(mark=echo_bots)
    await wire.attach(page)
    boards: list[str] = []
    page.on("request", lambda r: boards.append(r.url) if "/leaderboards/" in r.url else None)
    await sign_up(page, "xan")
    await page.goto("/lobby")
    await page.fill("#countdown", "0")
    bots_asked.append(False)
    await page.click("text=Create match")  # by default, no bot may sit
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.wait_for_selector("#match-info >> text=lobby")
    assert "bots" not in await page.inner_text("#match-info")
    await page.goto("/lobby")
    await page.get_by_label("Bots may sit").check()  # the checkbox is labelled
    bots_asked.append(True)
    await page.click("text=Create match")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.wait_for_selector("#match-info >> text=bots may sit")
    assert [r["bots"] for r in wire.requests("create_match")] == [False, True]
    await page.goto("/lobby")
    await page.wait_for_selector("#tournaments >> text=No tournament")  # loaded: focus stays
    await page.fill("#t-name", "Bots welcome")
    await page.focus("#t-bots")
    await page.keyboard.press("Space")  # by keyboard
    await page.click("text=Host tournament")
    await page.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    assert await page.get_by_label("Bots may enter").count() == 0  # left the lobby
    (created,) = wire.requests("tournament_create")
    assert created["bots"] is True and created["name"] == "Bots welcome"
    # Leaderboards: people's by default, the switch names the kind in the URL and asks it.
    await page.goto("/boards?ruleset=classic&by=score&period=all")
    await page.wait_for_selector("#leaderboard")
    assert "kind=people" in boards[-1]
    switch = page.get_by_role("navigation", name="Whose boards")
    assert await switch.get_by_role("link", name="People").get_attribute("aria-current") == "page"
    assert await switch.get_by_role("link", name="Bots").get_attribute("aria-current") is None
    await switch.get_by_role("link", name="Bots").focus()
    await page.keyboard.press("Enter")
    await page.wait_for_url(re.compile(r"kind=bots"))
    await page.wait_for_selector("h1 >> text=Leaderboards: bots")
    assert "kind=bots" in boards[-1] and "ruleset" not in boards[-1].split("?")[1]
    assert await switch.get_by_role("link", name="Bots").get_attribute("aria-current") == "page"
    await page.select_option("#by", "wins")
    await page.click("text=Show")  # the form keeps the kind
    await page.wait_for_url(re.compile(r"by=wins"))
    assert "kind=bots" in page.url
    await page.wait_for_selector("h1 >> text=Leaderboards: bots")
    assert "kind=bots" in boards[-1] and "by=wins" in boards[-1]
    await switch.get_by_role("link", name="People").click()
    await page.wait_for_url(re.compile(r"kind=people"))
    # The page renders once its board has come: wait for the heading, not the URL.
    await page.wait_for_selector('h1:text-is("Leaderboards")')
    assert "kind=people" in boards[-1]


def marking_removed(removed: dict[str, str]) -> Callable[[Message], None]:
    """A ``Wire.mark`` saying of each entrant and standing whose name ``removed`` holds
    that the host removed them, with its reason (docs/protocol.md, tournament_remove)."""

    def change(value: dict[str, Any]) -> None:
        plain = "type" not in value and "event" not in value
        if plain and "player_id" in value and value.get("name") in removed:
            value["removed"] = True
            value["removed_reason"] = removed[value["name"]]

    return marking_each_dict(change)


async def test_the_host_removes_an_entrant_with_a_reason_that_everyone_sees(
    open_page: Any, connect: Connect
) -> None:
    eve, fay = await registered(connect, "eve", "fay")
    removed: dict[str, str] = {}
    host, wall = await open_page(), await open_page()
    host_wire, wall_wire = Wire(mark=marking_removed(removed)), Wire(mark=marking_removed(removed))
    await host_wire.attach(host)
    await wall_wire.attach(wall)
    await sign_up(host, "hostess")
    await sign_up(wall, "wall")
    await host.goto("/lobby")
    await host.fill("#t-name", "Cup")
    await host.click("text=Host tournament")
    await host.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    code = host.url.rsplit("/", 1)[1]
    for client in (eve, fay):
        await client.ok("tournament_join", code=code)
    await host.wait_for_selector("#round >> text=Waiting to start · 2 entrants")
    await wall.goto(f"/t/{code}")
    await wall.wait_for_selector("#round >> text=Waiting to start · 2 entrants")
    assert await wall.locator("#entrants button").count() == 0  # only the host removes
    # Remove whoever the standings show first: once removed, they come last.
    standing = await eve.ok("tournament_standings", code=code)
    target, other = (s["name"] for s in standing["standings"])
    reason = "<i>left</i> the table"
    # Refused (a round in play, as the server would say): the message is shown.
    host_wire.refusals["tournament_remove"] = [{
        "code": "round_in_play", "message": "round 1 is being played: remove entrants after it",
        "round": 1,
    }]
    await host.get_by_role("button", name=f"Remove {target}").click()
    field = host.get_by_label(f"Why remove {target}? (everyone sees it)")
    assert await field.evaluate("f => f === document.activeElement")  # typed at once
    await host.keyboard.type(reason)
    await host.keyboard.press("Enter")
    await host.wait_for_selector(f"#status.error >> text={target} was not removed: round 1 is")
    assert [(r["code"], r["player"], r["reason"]) for r in host_wire.requests(
        "tournament_remove")] == [(code, target, reason)]
    # Accepted: the reply's view has them removed, and the server's standings too.
    events = await eve.ok("tournament_resync", code=code, since=0)
    last = events["events"][-1]["seq"]
    view = standing["tournament"]
    for entrant in view["entrants"]:
        if entrant["name"] == target:
            entrant.update(removed=True, removed_reason=reason)
    host_wire.answers["tournament_remove"] = [
        lambda _: {"type": "tournament", "tournament": view, "seq": last}]
    removed[target] = reason
    await host.click("text=Confirm removal")
    line = f"{target} was removed by the host: {reason}"
    await host.wait_for_selector("#status >> text=was removed.")
    for page in (host, wall):
        if page is wall:  # every follower is told, the host's page included
            player_id = next(e["player_id"] for e in view["entrants"] if e["name"] == target)
            for wire in (host_wire, wall_wire):
                wire.say({"type": "tournament_event", "tournament": code, "seq": last + 1,
                          "event": "entrant_removed", "player_id": player_id, "name": target,
                          "reason": reason, "after_round": 0})
        await page.wait_for_selector(f"#tournament-log >> text={line}")
        await page.wait_for_function(  # the standings, asked again, show them last
            "name => { const rows = [...document.querySelectorAll('#standings tr')];"
            " return rows.length === 2 && rows[1].textContent.includes(name) }", arg=target)
        assert (await page.locator("#standings tr").nth(0).inner_text()).split("\t")[1] == other
        assert (await page.inner_text("#standings tr.removed td >> nth=1")) == (
            f"{target} · removed: {reason}")
        entries = await page.eval_on_selector_all(
            "#entrants li", "items => items.map(item => item.textContent)")
        assert entries[1] == f"{target} · removed: {reason}"
        assert await page.locator("#tournament-log li").count() == 1  # once, not per telling
        await page.wait_for_selector("#round >> text=Waiting to start · 1 entrants")
        assert await page.locator("#tournament-log i, #standings i, #entrants i").count() == 0
    assert len(wall_wire.requests("tournament_standings")) >= 1
    # The host can remove only who is still in.
    assert await host.locator("#entrants button").count() == 1
    assert await host.get_by_role("button", name=f"Remove {other}").count() == 1
    assert await host.locator("#remove-entrant form").count() == 0
