"""The match screen, driven by Textual's Pilot against a real server.

Two players race on their own screens: moves typed, picked with the keyboard and
clicked with the mouse, a refusal shown with the server's reason, a stop, a win, and
the final ranking with the revealed seed on both screens. A spectator watches live. What a
hostile server says (names, codes, refusals) is drawn as typed, never as markup.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import os
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_textual_snapshot import SVGImageExtension
from rich.console import Console
from syrupy.assertion import SnapshotAssertion
from textual.app import App
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Input, Static

from client_cli import screen
from client_cli.connection import Connection
from client_cli.match_state import Phase
from client_cli.render import CELL_WIDTH, LABEL_WIDTH, card_label
from client_cli.screen import WIDE_COLUMNS, MatchApp, RankingScreen
from client_cli.widgets import BoardView, HelpScreen, MessageLine
from gaps import Card, Game, Move, Seed, Slot
from tests.cli_support import (
    HOSTILE,
    ME,
    SHOWN,
    Hostile,
    assert_inert,
    lobby,
    racing,
    seated,
)

SIZE = (134, 24)


@functools.cache
def winning_line() -> tuple[str, tuple[str, ...]]:
    for number in range(10_000):
        seed = Seed(number.to_bytes(10, "big"))
        game = Game(seed, "classic")
        actions = game.random_playout(random.Random(number))
        if game.is_won():
            return str(seed), tuple(str(action) for action in actions)
    raise AssertionError("no winning random game in 10,000 deals")


async def until(pilot: Pilot[Any], found: Callable[[], Any], timeout: float = 10) -> None:
    """Let the app run until ``found()`` is true (the server answers asynchronously)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not found():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.002)  # the app runs in this loop: let it work


async def account(url: str, name: str) -> Connection:
    connection = await Connection.open(url)
    await connection.register(f"{name}-{random.randrange(10**6)}")
    return connection


def message(app: MatchApp) -> str:
    text = app.query_one(MessageLine).text
    return text if isinstance(text, str) else text.plain


async def play(app: MatchApp, pilot: Pilot[Any], line: tuple[str, ...], start: int,
               stop: int) -> None:
    """Submit ``line[start:stop]`` as fast as one can type: the screen sends them in order,
    each once the previous one is acknowledged."""
    for number in range(start, stop):
        app.submit(line[number])
    await until(pilot, lambda: app.state.own is not None and app.state.own.last_seq == stop)


def cell_offset(slot: Slot) -> tuple[int, int]:
    """Where a slot is drawn inside the board widget (1 border + 1 padding on the left)."""
    return (2 + LABEL_WIDTH + (slot.column - 1) * CELL_WIDTH + 2, 1 + 1 + (slot.row - 1) * 2)


def screen_text(app: App[Any]) -> str:
    """What the screen shows, as plain text (as ``export_screenshot`` renders it), with
    what the app holds drawn now rather than at its next (debounced) redraw."""
    if isinstance(app, MatchApp) and app.screen is app.default_screen:
        app.refresh_view()
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(),
                      record=True, force_terminal=True)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text()


async def test_two_players_race_on_their_screens_and_both_see_the_ranking(
    ws_url: str, tmp_path: Path
) -> None:
    seed, line = winning_line()
    ana, bob = await account(ws_url, "ana"), await account(ws_url, "bob")
    created = await ana.create_match(max_players=2, countdown_s=0, seed=seed, win_by="time")
    code = created["match"]["code"]
    joined = await bob.join_match(code)
    ana_app, bob_app = MatchApp(ana, created), MatchApp(bob, joined)
    try:
        async with ana_app.run_test(size=SIZE) as ana_pilot, \
                bob_app.run_test(size=SIZE) as bob_pilot:
            await ana_pilot.pause()
            assert ana_app.state.phase is Phase.LOBBY
            assert f"gaps join {code}" in screen_text(ana_app)
            await ana_pilot.press("r")
            await until(bob_pilot, lambda: bob_app.state.players[ana.player["id"]]["ready"])
            await bob_pilot.press("r")
            await until(ana_pilot, lambda: ana_app.state.playing)
            await until(bob_pilot, lambda: bob_app.state.playing)
            await ana_pilot.pause()
            assert "clock" in screen_text(ana_app)

            # bob types a move the rules refuse: the server's reason shows, nothing crashes
            game = bob_app.state.own.game()
            stuck = next(card for card in map(Card.from_code, range(52))
                         if card.rank > 2 and not game.is_legal(Move(card)))
            await bob_pilot.press(*str(stuck).lower(), "enter")
            await until(bob_pilot, lambda: "[not_a_gap]" in message(bob_app))
            assert f"{card_label(stuck).strip()}: the slot right of" in message(bob_app)

            # bob moves by keyboard: the cursor to the card, Enter, Enter on its gap
            first = Move.parse(line[0])
            here = game.slot_of(first.card)
            board = bob_app.query_one(BoardView)
            board.focus()
            board.cursor = (here.index - 13) % 52 if here.column == 13 else here.index + 1
            await bob_pilot.press("down" if here.column == 13 else "left")
            assert board.cursor == here.index
            await bob_pilot.press("enter")
            assert board.selected == here.index and len(board.targets) >= 1
            await bob_pilot.press("enter")
            await until(bob_pilot, lambda: bob_app.state.own.moves_made == 1)

            # then with the mouse: a card, then its highlighted gap
            game = bob_app.state.own.game()
            second = Move.parse(line[1])
            await bob_pilot.click(BoardView, offset=cell_offset(game.slot_of(second.card)))
            [target] = bob_app.query_one(BoardView).targets
            await bob_pilot.click(BoardView, offset=cell_offset(Slot.from_index(target)))
            await until(bob_pilot, lambda: bob_app.state.own.moves_made == 2)

            # ana types her first move, then plays most of the winning line
            await ana_pilot.press(*line[0].lower(), "enter")
            await until(ana_pilot, lambda: ana_app.state.own.last_seq == 1)
            middle = len(line) * 2 // 3
            await play(ana_app, ana_pilot, line, 1, middle)
            await until(ana_pilot, lambda: ana_app.state.players[bob.player["id"]]["placed"]
                        == bob_app.state.own.placed)
            board = ana_app.query_one(BoardView)
            next_card = Move.parse(line[middle]).card
            board.focus()
            ana_app.refresh_view()  # draw now what the last acks brought
            board.point_at(ana_app.state.own.game().slot_of(next_card).index)
            await ana_pilot.pause()
            assert board.targets  # its destination is highlighted
            ana_app.query_one(MessageLine).say(f"{next_card} selected: Enter or a click on ▼")
            await ana_pilot.resize_terminal(134, 17)
            await ana_pilot.pause()
            screenshot = ana_app.export_screenshot(title=f"gaps join {code}")
            assert screenshot.startswith("<svg")
            if os.environ.get("GAPS_SCREENSHOT"):  # regenerates docs/match-screen.svg
                Path(os.environ["GAPS_SCREENSHOT"]).write_text(screenshot)
            await ana_pilot.press("escape")

            # bob stops (s twice); ana sees it live in her players panel
            await bob_pilot.press("s")
            assert "press s again" in message(bob_app)
            await bob_pilot.press("s")
            await until(ana_pilot, lambda: ana_app.state.players[bob.player["id"]]["finished"])
            await ana_pilot.pause()
            assert "stopped" in screen_text(ana_app)

            await play(ana_app, ana_pilot, line, middle, len(line))
            assert ana_app.state.own.status == "won"

            for app, pilot in ((ana_app, ana_pilot), (bob_app, bob_pilot)):
                await until(pilot, lambda a=app: isinstance(a.screen, RankingScreen))
                await pilot.pause()
                text = screen_text(app)
                assert "final ranking" in text and seed in text
                assert f"gaps replay {code}" in text and "commitment" in text
                ranking = app.state.ranking or []
                assert [row["name"] for row in ranking] == [ana.player["name"],
                                                            bob.player["name"]]
                assert ranking[0]["end_reason"] == "won" and ranking[0]["rank"] == 1
            ana_app.save_screenshot("ranking.svg", path=str(tmp_path))
            assert (tmp_path / "ranking.svg").read_text().startswith("<svg")
            await ana_pilot.press("q")
    finally:
        await ana.close()
        await bob.close()


@pytest.mark.par(par_workers=1, par_max_nodes=200_000, par_time_budget_s=30)
async def test_the_ranking_shows_the_deals_par_once_the_server_has_solved_it(
    ws_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(screen, "PAR_RETRIES_S", (0.05,) * 1200)
    ana = await account(ws_url, "ana")
    # Deal 25 without redeal: the server's solver wins it at once, par 58 exact.
    created = await ana.create_match(max_players=1, countdown_s=0, seed="AAAA-AAAA-AAAA-AAAZ",
                                     ruleset="no-redeal")
    app = MatchApp(ana, created)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("r")
            await until(pilot, lambda: app.state.playing)
            await pilot.press("s", "s")
            await until(pilot, lambda: isinstance(app.screen, RankingScreen))
            ranking = app.screen
            assert isinstance(ranking, RankingScreen)
            await until(pilot, lambda: ranking.par is not None, timeout=60)
            await pilot.pause()
            assert ranking.par == {"score": 58, "exact": True}
            [row] = [line for line in screen_text(app).splitlines() if "(you)" in line]
            after_name = row.split("(you)")[1].split()
            assert after_name[:2] == ["0", "58"]  # the score, then the par beside it
            await pilot.press("q")
    finally:
        await ana.close()


async def test_a_spectator_watches_live_and_the_host_starts_the_match(ws_url: str) -> None:
    ana, bob, eve = [await account(ws_url, name) for name in ("ana", "bob", "eve")]
    created = await ana.create_match(max_players=3, countdown_s=0)
    code = created["match"]["code"]
    await bob.join_match(code)
    watching = await eve.join_match(code, role="spectator")
    host_app, eve_app = MatchApp(ana, created), MatchApp(eve, watching)
    try:
        async with host_app.run_test(size=SIZE) as host, eve_app.run_test(size=SIZE) as watcher:
            await until(host, lambda: len(host_app.state.players) == 2)
            await host.press("question_mark")
            assert isinstance(host_app.screen, HelpScreen)
            await host.press("escape")
            assert not isinstance(host_app.screen, HelpScreen)
            await host.press("g")  # the host starts with whoever is there, ready or not
            await until(host, lambda: host_app.state.playing)
            await until(watcher, lambda: eve_app.state.phase is Phase.RUNNING)
            assert eve_app.state.own is None and eve_app.state.role == "spectator"
            eve_app.submit("stop")
            assert "Spectators watch" in message(eve_app)

            # the spectator's connection drops; it comes back by itself and catches up
            assert eve._socket is not None
            eve._socket.transport.abort()
            await until(watcher, lambda: "reconnecting" in message(eve_app))
            assert host_app.state.own is not None  # the host has not moved: bob's deal too
            move = host_app.state.own.game().legal_moves()[0]
            await bob.act(code, str(move))
            await until(watcher, lambda: eve_app.state.players[bob.player["id"]]["moves_made"] == 1)
            await until(watcher, lambda: "reconnected" in message(eve_app))

            await bob.act(code, "stop")
            await host.press("s", "s")
            await until(watcher, lambda: isinstance(eve_app.screen, RankingScreen))
            await watcher.pause()
            assert "final ranking" in screen_text(eve_app)
    finally:
        for connection in (ana, bob, eve):
            await connection.close()



async def test_what_a_hostile_server_says_is_drawn_as_typed() -> None:
    """Names, codes, scores, reasons, a refusal, the seed and the heading (a tournament's
    name): each on the screen with its control and bidi characters replaced and its
    markup as typed. Short ones where a column would cut a long one short."""
    code, name, later = "\x1b[2J[b]K7", "\u202e[b]bo\x1b[2J", "\x1b]0;[i]cy"
    shown_code, shown_name, shown_later = "\ufffd[2J[b]K7", "\ufffd[b]bo\ufffd[2J", "\ufffd]0;[i]cy"
    ended = {"type": "event", "match": code, "seq": 2, "event": "match_ended", "t_ms": 1000,
             "seed": HOSTILE, "commitment": "[b]c\u202e", "ranking": [
                 {**seated(8, name, score="[i]9"), "rank": 1, "moves_made": "[u]3",
                  "end_reason": "\u202e[b]gone", "finish_ms": 1000},
                 {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0, "end_reason": "stopped",
                  "finish_ms": 1000}]}
    async with Hostile({
        "join_match": [lobby(code, seated(8, name, score="[i]9"), win_by="[b]x\x1b[2J")],
        "ready": [{"type": "error", "code": "bad_message", "message": HOSTILE}],
    }) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match("K7QX2M"),
                           heading=f"{HOSTILE} · round 1/3")
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                assert_inert(screen_text(app), f"Gaps Arena {shown_code}  {SHOWN} · round 1/3",
                             "win by [b]x\ufffd[2J", f"  {shown_name}", "[i]9",
                             f"In the lobby of match {shown_code}")
                await pilot.press("r")  # refused, in the server's words
                await until(pilot, lambda: message(app) == SHOWN)
                await hostile.push({"type": "event", "match": code, "seq": 1,
                                    "event": "player_joined", "player": seated(9, later)})
                await until(pilot, lambda: 9 in app.state.players)
                assert_inert(screen_text(app), SHOWN, f"{shown_later} joined",
                             f"  {shown_later}")
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                await pilot.pause()
                assert_inert(screen_text(app), f"Match {shown_code}: final ranking", shown_name,
                             "[i]9", "[u]3", "\ufffd[b]gone", f"Seed {SHOWN}",
                             "Commitment [b]c\ufffd", f"gaps replay {shown_code}")
        finally:
            await connection.close()


async def test_a_bot_is_marked_bot_in_the_players_table_the_log_and_the_ranking() -> None:
    """Issue 13: a seat with ``bot: true`` shows ``[bot]`` beside its name; a person's
    (the field absent or false) does not."""
    code = "K7QX2M"
    ended = {"type": "event", "match": code, "seq": 2, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": None, "ranking": [
                 {**seated(8, "robo", bot=True), "rank": 1, "moves_made": 3,
                  "end_reason": "stopped", "finish_ms": 1000},
                 {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0, "end_reason": "stopped",
                  "finish_ms": 1000},
                 {**seated(9, "cy", bot=False), "rank": 3, "moves_made": 0,
                  "end_reason": "stopped", "finish_ms": 1000}]}
    async with Hostile({"join_match": [lobby(code, seated(8, "robo", bot=True))]}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                assert "robo [bot]" in screen_text(app)
                await hostile.push({"type": "event", "match": code, "seq": 1,
                                    "event": "player_joined", "player": seated(9, "cy", bot=False)})
                await until(pilot, lambda: 9 in app.state.players)
                await pilot.pause(0.2)  # the redraw, and the table's new height laid out
                shown = screen_text(app)
                assert "cy joined" in shown and shown.count("[bot]") == 1
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                await pilot.pause()
                shown = screen_text(app)
                assert "robo [bot]" in shown and shown.count("[bot]") == 1
        finally:
            await connection.close()


async def test_a_result_held_for_review_is_marked_and_its_player_told_why() -> None:
    """Issue 16: the player sees that a flagged result is under review."""
    code = "K7QX2M"
    ended = {"type": "event", "match": code, "seq": 1, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": None, "ranking": [
                 {**seated(ME["id"], "me"), "rank": 1, "moves_made": 40,
                  "end_reason": "stopped", "finish_ms": 1000, "review": "held"},
                 {**seated(9, "cy"), "rank": 2, "moves_made": 0, "end_reason": "stopped",
                  "finish_ms": 1000, "review": None}]}
    async with Hostile({"join_match": [lobby(code)]}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause()
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                await pilot.pause()
                shown = screen_text(app)
                assert "stopped · under review" in shown
                assert "Your result is under review" in shown
                assert shown.count("under review") == 2  # cy's plain result says nothing
        finally:
            await connection.close()


async def test_the_screen_says_the_server_restarted_and_closes_when_its_match_is_gone() -> None:
    code = "K7QX2M"
    async with Hostile({"join_match": [lobby(code)], "resync": [
            {"type": "events", "match": code, "events": []}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t", reconnect_for_s=10)
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                await hostile.drop(1001)
                await until(pilot, lambda: message(app) == f"reconnected to {hostile.url}")
                await until(pilot, lambda: "back in the match" in screen_text(app))
                assert_inert(screen_text(app),
                             "connection lost: the server is restarting; reconnecting",
                             "connection restored: back in the match")
                hostile.answers["join_match"] = [{
                    "type": "error", "code": "no_such_match",
                    "message": f"no live match has code '{code}'"}]
                await hostile.drop(1001)
                await until(pilot, lambda: not app.is_running)
            assert app.state.gone == (f"match {code} is gone: cannot rejoin match {code}: "
                                      f"no live match has code '{code}'")
        finally:
            await connection.close()


async def test_a_match_that_ended_while_the_server_was_down_shows_its_ranking() -> None:
    """The restarted server ended the match at restore (its time limit passed): the
    rejoin's snapshot says it is over, and its ranking is fetched from its last event."""
    code = "K7QX2M"
    ended = {"type": "event", "match": code, "seq": 5, "event": "match_ended", "t_ms": 600_000,
             "seed": "AAAA-BBBB-CCCC-DDDD", "commitment": "c", "ranking": [
                 {**seated(ME["id"], "me"), "rank": 1, "moves_made": 0, "end_reason": "time",
                  "finish_ms": 600_000}]}
    over = lobby(code, status="finished", started_at="2026-01-01T00:00:00+00:00",
                 t_ms=600_000) | {"seq": 5}
    async with Hostile({"join_match": [lobby(code) | {"seq": 9}]}, once={"resync": [
            {"type": "events", "match": code, "events": []}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t", reconnect_for_s=10)
        try:
            app = MatchApp(connection, await connection.join_match(code))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause()
                hostile.answers["join_match"] = [over]
                hostile.answers["resync"] = [{"type": "events", "match": code,
                                              "events": [ended]}]
                await hostile.drop(1001)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen))
                assert app.state.ranking is not None and app.state.ranking[0]["end_reason"] \
                    == "time"
                assert [r["since"] for r in hostile.sent("resync")] == [5, 4]
        finally:
            await connection.close()


# -- any terminal size, keys that never surprise (issue 13) --------------------------------

#: The terminal sizes every screen is tried at: the smallest usable, the classic, a laptop's
#: half screen, a wide one.
SIZES = [(60, 20), (80, 24), (120, 40), (200, 50)]
DEAL = "AAAA-BBBB-CCCC-DDDD"
BOB = seated(8, "bob", placed=20, score=20, status="stopped", finished=True,
             end_reason="stopped", finish_ms=240_800, moves_made=31)
CAROL = seated(9, "carol-who-has-a-long-name", placed=12, score=12, status="playing",
               moves_made=15)


def dealt(ruleset: str = "classic") -> Game:
    return Game(Seed.parse(DEAL), ruleset)


@contextlib.asynccontextmanager
async def race(
    size: tuple[int, int], *, game: Game | None = None, heading: str | None = None,
    answers: dict[str, list[dict[str, Any]]] | None = None, snapshot: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[MatchApp, Pilot[Any], Hostile]]:
    """A match screen on a scripted server: ``ME`` racing bob (stopped at 4:00.8) and
    carol, the clock frozen at 1:01 so that every drawing is the same."""
    snapshot = snapshot or racing("K7QX2M", game or dealt(), BOB, CAROL)
    async with Hostile({"join_match": [snapshot], **(answers or {})}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match("K7QX2M"), heading=heading)
            app.state.clock.freeze(61_000)
            async with app.run_test(size=size) as pilot:
                await pilot.pause()
                yield app, pilot, hostile
        finally:
            await connection.close()


def board_fits(app: App[Any]) -> bool:
    """Whether all 13 columns of the board are on screen: its right border is drawn."""
    board = app.query_one(BoardView)
    text_width = LABEL_WIDTH + board.cell_width * 13
    top = next(line for line in screen_text(app).splitlines() if "╭" in line)
    return "╮" in top[top.index("╭"):] and board.region.x + 4 + text_width <= app.size.width


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_race_screen_shows_the_whole_board_and_every_state_at_any_size(
    size: tuple[int, int],
) -> None:
    async with race(size) as (app, pilot, _):
        text = screen_text(app)
        assert board_fits(app)
        assert app.query_one(BoardView).cell_width == (CELL_WIDTH if size[0] >= 76 else 4)
        assert app.query_one("#main").has_class("wide") is (size[0] >= WIDE_COLUMNS)
        assert "stopped 4:00.8" in text  # bug 8: the state is never cut
        assert "clock 1:01" in text
        board = app.query_one(BoardView)
        board.cursor = 12  # column 13, where the cursor went off screen (bug 2)
        await pilot.press("right", "left")
        assert board.cursor == 12
        assert app.size.width >= 60 or "the board needs" in message(app)


async def test_the_layout_follows_each_resize_at_once_in_both_directions() -> None:
    """Bug 1: the layout was one resize behind (``on_resize`` read the old size)."""
    async with race((150, 40)) as (app, pilot, _):
        main, board = app.query_one("#main"), app.query_one(BoardView)
        assert main.has_class("wide")
        for size, wide, width in (((110, 40), False, CELL_WIDTH), ((150, 40), True, CELL_WIDTH),
                                  ((60, 20), False, 4), ((200, 50), True, CELL_WIDTH),
                                  ((80, 24), False, CELL_WIDTH), ((60, 20), False, 4)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert (main.has_class("wide"), board.cell_width) == (wide, width), size
            assert board.spaced is (size[1] >= 24)
            assert board_fits(app), size
            assert "p…" not in screen_text(app)


async def test_a_terminal_too_narrow_for_the_board_says_so() -> None:
    async with race((50, 20)) as (app, _, _):
        assert message(app) == "The terminal is 50 columns wide: the board needs 59."


async def test_the_help_fits_an_80_by_24_terminal_without_scrolling() -> None:
    async with race((80, 24)) as (app, pilot, _):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one(VerticalScroll)
        assert scroll.max_scroll_y == 0 and "Score: +1 per placed card" in screen_text(app)


async def test_after_the_ranking_b_shows_the_board_and_q_still_quits() -> None:
    """Bug 3: ``q`` typed a Queen on the board once the match was over."""
    ended = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "match_ended",
             "t_ms": 300_000, "seed": DEAL, "commitment": "c0ffee", "ranking": [
                 {**BOB, "rank": 1}, {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0,
                                      "end_reason": "time", "finish_ms": 300_000}]}
    async with race((80, 24)) as (app, pilot, hostile):
        await hostile.push(ended)
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        await pilot.press("b")
        assert app.screen is app.default_screen
        await pilot.pause()
        assert "b ranking" in screen_text(app).replace("  ", " ")  # the footer says how back
        await pilot.press("b")
        assert isinstance(app.screen, RankingScreen)
        await pilot.press("b", "q")
        await until(pilot, lambda: not app.is_running)
        assert app.query_one("#command", Input).value == ""


async def test_keys_on_the_board_never_act_unasked() -> None:
    """Bug 4: a key that is no command says so; ``r`` (a redeal costs 5 points) and quitting
    ask first; ctrl+c quits as ctrl+q does; a rank (``q`` too) starts a typed move."""
    async with race((80, 24), game=dealt("addiction")) as (app, pilot, hostile):
        await pilot.press("z")
        assert message(app).startswith("'z' is not a key here")
        await pilot.press("r")
        assert "Press r again to confirm" in message(app)
        await pilot.press("escape")  # let go: a press later is a first press again
        await pilot.press("q")
        assert app.query_one("#command", Input).value == "q"
        await pilot.press("escape")
        assert app.query_one("#command", Input).value == ""
        await pilot.press("ctrl+q")
        assert "Quitting leaves your seat" in message(app) and app.is_running
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running)
        assert hostile.sent("action") == []


async def test_one_place_says_which_mode_typing_is_in_and_the_footer_the_keys() -> None:
    async with race((80, 24)) as (app, pilot, _):
        def mode() -> str:
            return str(app.query_one("#mode", Static).render())

        assert mode() == "BOARD" and "↑↓←→ cursor" in screen_text(app)
        assert "esc let go" not in screen_text(app)  # nothing to let go yet
        await pilot.press("8")
        assert mode() == "MOVE"
        await pilot.press("escape", "colon")
        assert mode() == "COMMAND"
        await pilot.press("escape")
        assert mode() == "BOARD"
        board = app.query_one(BoardView)
        board.point_at(board.game.slot_of(Card.parse("4D")).index if board.game else 0)
        await pilot.pause()
        assert "esc let go" in screen_text(app)


async def test_a_redeal_asks_first_and_goes_on_the_second_press() -> None:
    game = dealt("addiction")
    ack = {"type": "action_ok", "match": "K7QX2M", "seq": 1, "kind": "redeal", "t_ms": 62_000,
           "grid": game.layout().splitlines(), "score": -5, "placed": 0, "redeals_used": 1,
           "redeals_left": game.redeals_left - 1, "moves_made": 1, "status": "playing",
           "can_undo": False}
    async with race((80, 24), game=game, answers={"action": [ack]}) as (app, pilot, hostile):
        await pilot.press("r")
        assert hostile.sent("action") == []
        await pilot.press("r")
        await until(pilot, lambda: len(hostile.sent("action")) == 1)
        assert hostile.sent("action")[0]["action"] == "redeal"


async def test_in_the_lobby_r_asks_before_starting_with_empty_seats() -> None:
    """Bug 5: ``r`` alone started a 4-seat match at once; the lobby shows seats and clock."""
    ready = {"type": "ok"}
    async with race((80, 24), snapshot=lobby("K7QX2M", max_players=4),
                    answers={"ready": [ready]}) as (app, pilot, hostile):
        assert "Seats 1/4 · clock 10:00 · classic · win by time" in screen_text(app)
        await pilot.press("r")
        assert "starts now with 1 of 4 seats taken" in message(app)
        assert hostile.sent("ready") == []
        await pilot.press("r")
        await until(pilot, lambda: len(hostile.sent("ready")) == 1)


async def test_a_refusal_speaks_the_board_notation() -> None:
    """Bug 7: ``TH``, ``9H`` and a card already in place, as the board names them."""
    refusals = [{"type": "error", "code": "illegal_action", "reason": "not_a_gap",
                 "message": "TH: 9H stands in column 13, so TH has no slot to go to"}]
    async with race((80, 24), answers={"action": refusals}) as (app, pilot, _):
        await pilot.press("1", "0", "h", "enter")
        await until(pilot, lambda: "[not_a_gap]" in message(app))
        assert message(app) == "10♥ has no slot: 9♥ ends its row, in column 13 [not_a_gap]"
        await pilot.press("s", "t", "o", "p", "enter")  # s asks to stop; "top" is no move
        await pilot.press("colon", *"stop now", "enter")
        assert message(app) == "'stop now' is not an action: type stop alone"


async def test_a_game_over_while_others_play_says_so_and_quitting_asks() -> None:
    """Bug 6 (the screen's half) and bug 8: how the game ended has a line of its own, the
    title keeps "quick match" after a rejoin (bug 9), and quitting says the ranking
    comes later."""
    game = dealt()
    game.stop()
    me = {**ME, "end_reason": "stopped", "finish_ms": 240_800}
    snapshot = racing("K7QX2M", game, BOB, CAROL, kind="quick")
    snapshot["players"][0].update(end_reason=me["end_reason"], finish_ms=me["finish_ms"],
                                  finished=True)
    async with race((120, 40), snapshot=snapshot) as (app, pilot, _):
        text = screen_text(app)
        assert "Finished: stopped at 4:00.8 · waiting for the others…" in text
        assert "quick match" in text
        await pilot.press("q")
        assert "the others still play" in message(app) and app.is_running
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)


def test_the_docs_key_table_is_the_screens_bindings() -> None:
    """Every key docs/client.md lists for the match screen is bound, and every key bound
    (the screen's, the board's Enter and Esc) is in the docs."""
    docs = (Path(__file__).parent.parent / "docs" / "client.md").read_text()
    table = docs.split("### Keys", 1)[1].split("\n\n", 2)[1]
    documented = {key for line in table.splitlines()[2:]
                  for key in line.split("|")[1].strip().strip("`").split("` `")}
    names = {"question_mark": "?", "colon": ":", "slash": "/", "enter": "Enter",
             "escape": "Esc"}
    bound = {names.get(key, key) for binding in MatchApp.BINDINGS if isinstance(binding, Binding)
             for key in binding.key.split(",")}
    board = {names.get(key, key) for binding in BoardView.BINDINGS
             if isinstance(binding, Binding) for key in binding.key.split(",")}
    assert documented == bound | {"Enter", "Esc"}, (documented, bound)
    assert {"Enter", "Esc", "up", "down", "left", "right"} <= board


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_race_and_result_screens_look_as_they_did(
    size: tuple[int, int], snapshot: SnapshotAssertion,
) -> None:
    """SVG snapshots (pytest-textual-snapshot's format): a layout change fails here;
    ``pytest --snapshot-update`` accepts it after a look at the SVGs."""
    svg = snapshot.use_extension(SVGImageExtension)
    ended = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "match_ended",
             "t_ms": 300_000, "seed": DEAL, "commitment": Seed.parse(DEAL).commitment,
             "ranking": [{**BOB, "rank": 1}, {**CAROL, "rank": 2, "end_reason": "time",
                                              "finish_ms": 300_000},
                         {**seated(ME["id"], "me"), "rank": 3, "end_reason": "time",
                          "finish_ms": 300_000}]}
    async with race(size) as (app, pilot, hostile):
        board = app.query_one(BoardView)
        board.cursor = 12
        board.point_at(board.game.slot_of(Card.parse("4D")).index if board.game else 0)
        await pilot.pause()
        assert svg(name="race") == app.export_screenshot(title="race")
        # The ranking names the server's address: one that is the same on every run.
        app.connection.url = "ws://gaps.example.org:8765"
        await hostile.push(ended)
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        # The footer draws its keys a moment after the screen: on a loaded machine, after
        # the first pause.
        await until(pilot, lambda: "^p" in screen_text(app))
        await pilot.pause()
        assert svg(name="ranking") == app.export_screenshot(title="ranking")


def test_an_undo_says_which_card_it_took_back_in_the_boards_notation() -> None:
    line = screen.result_line({"kind": "undo", "card": "TS", "from": "r1c6", "to": "r2c3",
                               "score": 3, "placed": 3, "status": "playing"})
    assert line.plain == "Took back 10♠ · score 3 · placed 3/48"
