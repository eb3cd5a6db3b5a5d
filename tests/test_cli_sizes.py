"""The match screen at any terminal size: nothing cut, the board as large as the screen
holds, and SVG snapshots (pytest-textual-snapshot's format) of a 4-player race, the quit
question and the ranking at 60 x 20, 80 x 24 and 200 x 50."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy.assertion import SnapshotAssertion
from textual.app import App
from textual.containers import VerticalScroll

from client_cli.board import COMPACT, Geometry
from client_cli.boardapp import MIN_COLUMNS
from client_cli.help import HelpScreen
from client_cli.layout import plan
from client_cli.players import PlayersPanel, panel_needs
from client_cli.screen import MatchApp, RankingScreen
from client_cli.widgets import BoardView
from gaps import Card, Seed
from tests.cli_support import (
    BOB,
    CAROL,
    DAVE,
    DEAL,
    ME,
    dealt,
    message,
    race,
    racing,
    screen_text,
    seated,
    until,
)

#: The sizes the issue names: the smallest usable, the classic, a wide one.
SIZES = [(60, 20), (80, 24), (200, 50)]
IDS = [f"{w}x{h}" for w, h in SIZES]
#: Every state a row can show, and a bot whose long name must shorten.
STATES = ("stopped 4:00.8", "blocked", "playing")
REPLAY = {"type": "replay", "replay": {
    "match": {"code": "K7QX2M", "ruleset": "classic", "seed": DEAL,
              "par": {"score": 31, "exact": False}},
    "players": []}}
ENDED = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "match_ended",
         "t_ms": 300_000, "seed": DEAL, "commitment": Seed.parse(DEAL).commitment,
         "ranking": [{**BOB, "rank": 1},
                     {**DAVE, "rank": 2, "end_reason": "lost", "finish_ms": 200_000},
                     {**CAROL, "rank": 3, "end_reason": "time", "finish_ms": 300_000},
                     {**seated(ME["id"], "me"), "rank": 4, "end_reason": "time",
                      "finish_ms": 300_000, "moves_made": 0}]}


def four() -> dict[str, Any]:
    return racing("K7QX2M", dealt(), BOB, CAROL, DAVE)


def board_fits(app: App[Any]) -> bool:
    """Whether all 13 columns of the board are on screen: its frame is drawn whole."""
    board = app.query_one(BoardView)
    return board.region.right <= app.size.width and board.region.bottom <= app.size.height


def rows_shown(app: MatchApp) -> list[str]:
    """The players' rows on screen (each has its ``NN/48``; your numbers say "placed")."""
    return [line for line in screen_text(app).splitlines()
            if "/48" in line and "placed " not in line]


@pytest.mark.parametrize("size", [*SIZES, (120, 40), (100, 30)],
                         ids=[*IDS, "120x40", "100x30"])
async def test_a_four_player_race_shows_the_whole_board_and_every_row_and_state(
    size: tuple[int, int],
) -> None:
    async with race(size, snapshot=four(), heading="Friday cup · round 2/3") as (app, pilot, _):
        text = screen_text(app)
        assert board_fits(app)
        assert len(rows_shown(app)) == 4 and all(state in text for state in STATES)
        assert "[bot]" in text and "▸ me" in text
        assert "1:01" in text and "win by time" in text  # the title keeps what matters
        assert app.query_one("#main").max_scroll_y == 0  # nothing off screen
        layout = plan(size[0], size[1], panel_needs(list(app.state.players.values()),
                                                    app._look()))
        assert app.query_one(BoardView).geometry == layout.geometry
        board = app.query_one(BoardView)
        board.cursor = 12  # column 13: the cursor stays on the board
        await pilot.press("right", "left")
        assert board.cursor == 12


@pytest.mark.parametrize("columns", [80, 100, 128, 160, 200])
async def test_a_two_player_race_never_cuts_the_state(columns: int) -> None:
    """Issue 31: in a 2-player race the state was cut ("stopped 4:")."""
    async with race((columns, 24), snapshot=racing("K7QX2M", dealt(), BOB)) as (app, pilot, h):
        assert "stopped 4:00.8" in screen_text(app)
        await h.push({"type": "event", "match": "K7QX2M", "seq": 1, "event": "player_finished",
                      "t_ms": 62_000, **seated(ME["id"], "me", placed=3, score=3,
                                               end_reason="disconnected",
                                               finish_ms=1_000_000, moves_made=4)})
        await until(pilot, lambda: "disconnected 16:40.0" in screen_text(app))


async def test_sixteen_players_at_80_by_24_are_all_on_screen_you_included() -> None:
    """Issue 31: at 80 columns the table hid a player, sometimes yourself."""
    others = [seated(20 + n, f"p{n}-a-longish-name", placed=n + 1, score=n + 1,
                     moves_made=n, status="playing") for n in range(15)]
    async with race((80, 24), snapshot=racing("K7QX2M", dealt(), *others)) as (app, _, _):
        shown = rows_shown(app)
        assert "\n".join(shown).count("/48") == 16 and any("▸ me" in row for row in shown)
        assert app.query_one("#main").max_scroll_y == 0 and board_fits(app)
        assert app.query_one(PlayersPanel).columns == 2


async def test_the_board_grows_with_the_terminal_and_follows_each_resize() -> None:
    async with race((80, 24), snapshot=four()) as (app, pilot, _):
        board = app.query_one(BoardView)
        seen: list[Geometry] = []
        for size in ((60, 20), (120, 40), (200, 50), (80, 24), (200, 50), (60, 20)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            expected = plan(size[0], size[1], panel_needs(list(app.state.players.values()),
                                                          app._look()))
            assert board.geometry == expected.geometry, size
            assert app.query_one("#main").has_class("wide") is expected.wide
            assert board_fits(app) and len(rows_shown(app)) == 4, size
            seen.append(board.geometry)
        assert seen[2].tiles and seen[2].width > 120 and seen[0] == COMPACT


async def test_a_terminal_too_narrow_says_so_until_it_grows() -> None:
    """Issue 31: the 50-column warning stayed after the window grew."""
    async with race((50, 20), snapshot=four()) as (app, pilot, _):
        assert message(app) == f"The terminal is 50 columns wide: the board needs {MIN_COLUMNS}."
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert message(app) == ""


async def test_the_help_fits_an_80_by_24_terminal_without_scrolling() -> None:
    async with race((80, 24)) as (app, pilot, _):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one(VerticalScroll)
        assert scroll.max_scroll_y == 0 and "Score: +1 per placed card" in screen_text(app)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_race_the_quit_question_and_the_ranking_look_as_they_did(
    size: tuple[int, int], snapshot: SnapshotAssertion,
) -> None:
    """SVG snapshots: a layout change fails here; ``pytest --snapshot-update`` accepts it
    after a look at the SVGs (open them in a browser)."""
    svg = snapshot.use_extension(SVGImageExtension)
    async with race(size, snapshot=four(), answers={"get_replay": [REPLAY]},
                    heading="Friday cup · round 2/3") as (app, pilot, hostile):
        board = app.query_one(BoardView)
        board.cursor = 12
        board.point_at(board.game.slot_of(Card.parse("4D")).index if board.game else 0)
        # The message is drawn a moment after the pointer moves (later on a busy machine).
        await until(pilot, lambda: "4♦ has nowhere to go now" in screen_text(app))
        await pilot.pause()
        text = screen_text(app)
        assert len(rows_shown(app)) == 4 and all(state in text for state in STATES)
        assert "? help" in text.splitlines()[-1]
        assert svg(name="race") == app.export_screenshot(title="race")
        if size == (200, 50) and os.environ.get("GAPS_SCREENSHOT"):  # docs/match-screen.svg
            Path(os.environ["GAPS_SCREENSHOT"]).write_text(
                app.export_screenshot(title="gaps join K7QX2M"))

        await pilot.press("escape", "ctrl+q")
        assert message(app).startswith("Press ctrl+q again to quit")
        await pilot.pause()
        assert "Press ctrl+q again" in screen_text(app)
        assert svg(name="quit") == app.export_screenshot(title="quit")

        # The ranking names the server's address: one that is the same on every run.
        app.connection.url = "ws://gaps.example.org:8765"
        await hostile.push(ENDED)
        await until(pilot, lambda: isinstance(app.screen, RankingScreen)
                    and not app.fetching_replay and app.state.replay is not None)
        # The footer draws its keys a moment after the screen.
        await until(pilot, lambda: "q quit" in screen_text(app))
        await pilot.pause()
        text = screen_text(app)
        for name in ("bob", "dave-", "carol-", "me (you)"):
            assert name in text
        assert "below" in text and "[bot]" in text and "q quit" in text
        assert svg(name="ranking") == app.export_screenshot(title="ranking")
