"""What the web client's browser tests share (tests/test_web*.py): Debian's headless
``chromium`` driven by Playwright, a fresh browser profile per page, and helpers that read
the board, play a move, or stand between the page and the server (``Wire``).

A test module takes the fixtures (tests/web_fixtures.py) with ``pytest_plugins =
["tests.web_fixtures"]`` and marks itself ``pytestmark = WEB``: skipped, saying why, when
``/usr/bin/chromium`` is missing, and run on SQLite only (these tests are about the
browser; the storage tests cover PostgreSQL). Set ``GAPS_WEB_SCREENSHOTS=docs/web`` to
write the screenshots of docs/web.md while they run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gaps import Game, Seed

CHROMIUM = "/usr/bin/chromium"
playwright_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")
#: The marks of every browser test module.
WEB = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (Debian's chromium package)"
    ),
    pytest.mark.parametrize("database_url", ["sqlite"], indirect=True),
]
SCREENSHOTS = os.environ.get("GAPS_WEB_SCREENSHOTS")
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
NARROW = {"width": 320, "height": 640}  # the narrowest phone the pages are made for
UHD = {"width": 3840, "height": 2160}  # a 4K projector
RANK_TEXT = {"10": "T"}
SUIT_TEXT = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
PRACTICE = "#practice-board"


async def screenshot(page: Any, name: str, *, full_page: bool = True) -> None:
    """Write ``name``.png for docs/web.md, when GAPS_WEB_SCREENSHOTS names a folder."""
    if SCREENSHOTS:
        if full_page:  # from the top: a sticky status line is drawn where it sits
            await page.evaluate("window.scrollTo(0, 0)")
        await page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=full_page)


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
    hold a request back (the server is slow) until ``release()``, mark what the server
    says, or say more."""

    def __init__(self, mark: Callable[[Message], None] = lambda _: None) -> None:
        self.sent: list[Message] = []
        self.refusals: dict[str, list[Message]] = {}  # per request type, in turn
        # Replies made from the request, in the server's place (per request type, in turn).
        self.answers: dict[str, list[Callable[[Message], Message]]] = {}
        self.lose_request: set[str] = set()  # the next request of these types, and the line
        self.lose_reply: set[str] = set()  # the reply to the next of these, and the line
        self.mark = mark  # changes each message from the server in place
        self.dead_lines = 0  # how many of the next connections close at once, unserved
        self.hold: set[str] = set()  # requests of these types wait for ``release()``
        self._held: list[tuple[Any, str | bytes]] = []
        self.routes: list[Any] = []
        self._losing: int | None = None

    async def attach(self, page: Any) -> None:
        await page.route_web_socket(re.compile(r"^ws://[^/]+/$"), self._route)

    def requests(self, kind: str) -> list[Message]:
        return [message for message in self.sent if message.get("type") == kind]

    def release(self) -> None:
        """Let the requests held back go on to the server, and hold no more."""
        self.hold.clear()
        for server_side, raw in self._held:
            server_side.send(raw)
        self._held.clear()

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
            elif kind in self.hold:
                self._held.append((server_side, raw))
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


async def marked_http(page: Any, mark: Callable[[Message], None]) -> None:
    """Pass the page's reads of the JSON resources through ``mark``."""

    async def handle(route: Any) -> None:
        response = await route.fetch()
        body = await response.json()
        mark(body)
        await route.fulfill(response=response, json=body)

    for pattern in ("**/leaderboards/**", "**/ratings/**", "**/matches/*/replay"):
        await page.route(pattern, handle)


async def race_alone(
    page: Any,
    name: str,
    ruleset: str = "classic",
    *,
    seed: Seed | None = None,
    signed_up: bool = False,
) -> None:
    """Sign up as ``name`` (unless ``signed_up`` already), create a match of one seat
    from the lobby (dealt from ``seed`` if given), start it."""
    if not signed_up:
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


def card_name(card: Any) -> str:
    """A card as the board labels it for screen readers: "10 of hearts", and an ace or a
    face card with the letter it shows first: "J, jack of hearts"."""
    ranks = ["ace", *map(str, range(2, 11)), "jack", "queen", "king"]
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    name = f"{ranks[card.rank - 1]} of {suits[str(card)[-1]]}"
    return name if 2 <= card.rank <= 10 else f"{'A23456789TJQK'[card.rank - 1]}, {name}"


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


def marking_removed(removed: dict[str, str]) -> Callable[[Message], None]:
    """A ``Wire.mark`` saying of each entrant and standing whose name ``removed`` holds
    that the host removed them, with its reason (docs/protocol.md, tournament_remove)."""

    def change(value: dict[str, Any]) -> None:
        plain = "type" not in value and "event" not in value
        if plain and "player_id" in value and value.get("name") in removed:
            value["removed"] = True
            value["removed_reason"] = removed[value["name"]]

    return marking_each_dict(change)


AXE = Path(__file__).parent / "data" / "axe-core" / "axe.min.js"
#: Text that only a bug puts on a page: a missing value printed as it is.
NOT_FOR_PEOPLE = re.compile(r"\bnull\b|\bundefined\b|\bNaN\b|\[object |\btrue\b|\bfalse\b")


async def accessibility_violations(page: Any) -> list[str]:
    """What axe-core (tests/data/axe-core) finds wrong on the page as it is now, one line
    per rule and element: every rule of WCAG 2.x A and AA and axe's best practices, and
    that each control's accessible name holds the text it shows (a card "J♥" is read
    "J, jack of hearts"). The script is evaluated through the DevTools protocol, which
    the page's Content-Security-Policy does not govern: the page itself stays strict."""
    if not await page.evaluate("typeof window.axe === 'object'"):
        await page.evaluate(AXE.read_text() + "\n;0")
    found: list[str] = await page.evaluate(
        """async () => {
          const result = await axe.run(document, {
            resultTypes: ['violations'],
            // Experimental, so off by default: a control's name holds its visible text.
            rules: {'label-content-name-mismatch': {enabled: true}},
          });
          return result.violations.flatMap((rule) => rule.nodes.map((node) =>
            `${rule.id} (${rule.impact}): ${node.target.join(' ')}: ${node.failureSummary}`));
        }"""
    )
    return found


async def overflow(page: Any) -> int:
    """How many pixels the page is wider than its viewport (0: no sideways scrolling)."""
    width: int = await page.evaluate("document.documentElement.scrollWidth")
    return max(0, width - page.viewport_size["width"])


async def in_view(page: Any, selector: str) -> bool:
    """Whether the element ``selector`` is wholly inside the viewport as the page is."""
    box = await page.locator(selector).bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= 0 and box["x"] >= 0 and (
        box["y"] + box["height"] <= size["height"] and box["x"] + box["width"] <= size["width"]
    )
