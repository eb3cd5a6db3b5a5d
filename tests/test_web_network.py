"""The web client's connection: what a page load costs the player (docs/web.md, "Costly
requests"), a connection that stalls without closing, and an action that waits for its
reply (docs/web.md, "The connection").
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gaps import Game
from server.app import Server
from tests.proxy import TcpProxy
from tests.races import LONG_FIRST_MOVES, Connect, registered, start_race, stop_all
from tests.web_support import (
    DESKTOP,
    NARROW,
    WEB,
    Wire,
    in_view,
    layout,
    moves_made,
    play_a_move,
    race_alone,
    screenshot,
    shows,
    sign_up,
)

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB

#: The requests docs/protocol.md counts as costly, besides every HTTP read of JSON.
COSTLY = {
    "register", "hello", "create_match", "rematch", "tournament_create", "get_replay",
    "leaderboard", "rating", "daily_board", "tournament_standings",
}
JSON_READS = re.compile(r"/(leaderboards|ratings|matches|daily|tournaments)(/|$|\?)")


async def costly_requests(page: Any, wire: Wire, load: Any) -> list[str]:
    """The costly requests the page makes while ``load()`` loads it, and for 300 ms more."""
    reads: list[str] = []
    listener = lambda request: reads.append(request.url) if JSON_READS.search(request.url) else None  # noqa: E731
    page.on("request", listener)
    before = len(wire.sent)
    await load()
    await page.wait_for_timeout(300)
    page.remove_listener("request", listener)
    sent = [m["type"] for m in wire.sent[before:] if m.get("type") in COSTLY]
    return sent + [re.sub(r"^http://[^/]+", "", url) for url in reads]


async def test_a_page_load_spends_one_costly_request(open_page: Any, connect: Connect) -> None:
    cid, dee = await registered(connect, "cid", "dee")
    finished = await start_race([cid, dee])
    await stop_all([cid, dee], finished)
    running = (await dee.ok("create_match", max_players=1, countdown_s=0))["match"]["code"]
    await dee.ok("ready", code=running)
    tournament = (await cid.ok("tournament_create", rounds=1))["tournament"]["code"]
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await sign_up(page, "ana")
    waiting = (await cid.ok("create_match", max_players=2))["match"]["code"]

    def visit(path: str, shown: str) -> Any:
        async def load() -> None:
            await page.goto(path)
            await page.wait_for_selector(shown)

        return load

    pages = {
        "/": "#me",
        "/lobby": "#tournaments p, #tournaments li",
        f"/m/{waiting}": "text=Invite:",
        f"/watch/{running}": "#players >> text=dee",
        f"/replay/{finished}": "#replay-step",
        f"/t/{tournament}": "text=Join this tournament",
        "/boards": "#leaderboard >> text=cid",
        "/boards?by=rating": "#leaderboard >> text=cid",
        "/player/cid": "#rating-history >> text=classic",
        "/today": "#daily-board",
    }
    spent = {path: await costly_requests(page, wire, visit(path, shown))
             for path, shown in pages.items()}
    counts = {path: len(requests) for path, requests in spent.items()}
    assert counts == dict.fromkeys(pages, 1), spent
    assert await costly_requests(page, wire, visit("/practice", "#practice-board")) == []
    # A changed filter reads the board, and nothing else.
    await page.goto("/boards")
    await page.wait_for_selector("#leaderboard >> text=cid")
    assert await costly_requests(page, wire, lambda: page.select_option("#period", "month")) == [
        "/leaderboards/classic?by=score&period=month&limit=20&kind=people"
    ]
    # A tournament with no account: its public standings, one read each time.
    projector = await open_page()
    assert await costly_requests(projector, Wire(), lambda: projector.goto(f"/t/{tournament}")) == [
        f"/tournaments/{tournament}"
    ]


@pytest.fixture
async def proxy(server: Server) -> AsyncIterator[TcpProxy]:
    """A TCP proxy between the browser and the server, that the test can stall."""
    between = TcpProxy("127.0.0.1", server.port)
    await between.start()
    yield between
    between.resume()
    await between.close()


@pytest.mark.grace_s(60)  # the seat stays while the page is cut off
@pytest.mark.parametrize("viewport", ["desktop", "phone"])
async def test_a_stalled_connection_is_noticed_within_10_s_and_the_move_made_meanwhile_goes_through(
    open_page: Any, proxy: TcpProxy, viewport: str
) -> None:
    """The network stops forwarding, with no close to tell: the heartbeat notices within
    10 s of the page's clock (Playwright's fake clock: no real waiting), says so over the
    board, and the move made meanwhile waits, shown, then is applied once back."""
    page = await open_page(NARROW if viewport == "phone" else DESKTOP, port=proxy.port)
    await page.clock.install()
    await race_alone(page, f"sal{viewport}", seed=LONG_FIRST_MOVES)
    before = await layout(page)
    game = Game.from_layout(before, "classic")
    move = next(m for m in game.legal_moves() if m.card.rank != 2)
    await page.evaluate(  # when the page says so, by its own clock
        """() => new MutationObserver(() => {
             if (document.getElementById('status').textContent.includes('stalled'))
               window.noticedAt ??= performance.now();
           }).observe(document.getElementById('status'), {childList: true, subtree: true})"""
    )
    proxy.stall()
    stalled_at = await page.evaluate("performance.now()")
    await page.click(f'.board [data-slot="{game.slot_of(move.card)}"]')
    await page.wait_for_selector(".board .cell.pending")  # sent: waiting for its reply
    for _ in range(12):
        await page.clock.run_for(1000)
        if await page.evaluate("window.noticedAt !== undefined"):
            break
    noticed_after_ms = await page.evaluate("window.noticedAt") - stalled_at
    assert noticed_after_ms <= 10_000
    assert await in_view(page, "#status")  # where the player looks
    await screenshot(page, f"stalled-{viewport}", full_page=False)
    pending = await page.inner_text("#pending")
    assert pending.startswith("Waiting for the server to confirm your last action: ")
    assert pending.endswith("(it is sent again once the connection is back).")
    assert await layout(page) == before  # not applied: the server has not said so
    proxy.resume()
    await page.clock.resume()
    await page.wait_for_selector("#status >> text=Reconnected")
    game.play(move)
    await shows(page, game.layout())
    await page.wait_for_selector("#pending", state="hidden")
    assert await moves_made(page) == 1
    await page.reload()  # the server has it, once
    await page.wait_for_selector(".board .cell >> nth=51")
    await shows(page, game.layout())
    assert await moves_made(page) == 1


async def test_a_move_made_while_one_waits_is_said_not_dropped(open_page: Any) -> None:
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await race_alone(page, "tia", seed=LONG_FIRST_MOVES)
    wire.hold.add("action")  # the server takes its time over the first action
    game = Game.from_layout(await layout(page), "classic")
    first, second = [m for m in game.legal_moves() if m.card.rank != 2][:2]
    await page.click(f'.board [data-slot="{game.slot_of(first.card)}"]')
    mark = ".board .cell.pending[aria-label$='waiting for the server']"
    assert await page.get_attribute(mark, "data-slot") == str(game.slot_of(first.card))
    await page.wait_for_selector("#pending >> text=Waiting for the server to confirm")
    await page.click(f'.board [data-slot="{game.slot_of(second.card)}"]')
    await page.wait_for_selector("#status >> text=Waiting for the server to confirm your last")
    assert len(wire.requests("action")) == 1  # the second move was said, not sent
    wire.release()
    game.play(first)
    await shows(page, game.layout())
    assert await page.locator(".board .cell.pending").count() == 0
    assert await page.is_hidden("#pending")
    await play_a_move(page)  # the next one goes, with the next seq
    assert [a["seq"] for a in wire.requests("action")] == [1, 2]
