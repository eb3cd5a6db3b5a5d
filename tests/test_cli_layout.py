"""client_cli.layout: every player's row on screen at any size, the largest board beside
them, and the board alone in practice."""

from __future__ import annotations

import pytest

from client_cli.board import COMPACT, GEOMETRIES, NORMAL, Geometry
from client_cli.layout import (
    BOARD_FRAME,
    CHROME_LINES,
    STATS_LINES,
    Layout,
    Panel,
    board_alone,
    plan,
)
from client_cli.players import Look, panel_needs
from tests.cli_support import progress

LOOK = Look()


def panel(count: int, name: str = "carol-who-has-a-long-name") -> Panel:
    players = [progress(n, f"{name}{n}", placed=n,
                        end_reason="disconnected" if n == 0 else None, finish_ms=600_000)
               for n in range(count)]
    return panel_needs(players, LOOK)


def lines_used(layout: Layout, needs: Panel, *, board: bool = True) -> int:
    """The lines the main area needs for ``layout``, the log under the players."""
    shown = needs.lines(layout.columns, layout.framed) + layout.log
    own = layout.geometry.height + BOARD_FRAME[1] + STATS_LINES if board else 0
    return max(own, shown) if layout.wide else own + shown


@pytest.mark.parametrize("columns", [80, 100, 128, 160, 200])
@pytest.mark.parametrize("lines", [24, 30, 40, 50])
@pytest.mark.parametrize("players", [1, 2, 4, 8, 16])
def test_every_row_and_the_board_fit_from_80_by_24_on(columns: int, lines: int,
                                                      players: int) -> None:
    needs = panel(players)
    layout = plan(columns, lines, needs)
    assert lines_used(layout, needs) <= lines - CHROME_LINES
    board = layout.geometry.width + BOARD_FRAME[0]
    rows = needs.width(layout.columns, layout.framed)
    assert (board + rows if layout.wide else max(board, rows)) <= columns


def test_a_four_player_race_at_80_by_24_keeps_the_spaced_board_and_a_framed_table() -> None:
    assert plan(80, 24, panel(4)) == Layout(False, NORMAL, 1, True, 0)


def test_sixteen_players_at_80_by_24_take_two_columns_beside_a_closer_board() -> None:
    layout = plan(80, 24, panel(16))
    assert layout.columns == 2 and layout.geometry.spacing == 0


def test_at_60_by_20_four_players_fit_under_the_compact_board() -> None:
    needs = panel(4)
    layout = plan(60, 20, needs)
    assert layout.geometry == COMPACT and lines_used(layout, needs) <= 16


def test_the_board_grows_with_the_terminal() -> None:
    sizes = [(80, 24), (120, 40), (160, 45), (200, 50)]
    widths = [plan(columns, lines, panel(4)).geometry.width for columns, lines in sizes]
    assert widths == sorted(widths) and widths[-1] > 3 * COMPACT.width
    assert plan(200, 50, panel(4)).geometry.tiles


def test_beside_the_board_when_that_costs_the_board_nothing() -> None:
    assert plan(250, 50, panel(4, name="ana")).wide
    assert not plan(130, 40, panel(4)).wide  # below, the board is far larger


def test_a_spectator_has_no_board_and_the_rows_take_the_width() -> None:
    needs = panel(16)
    layout = plan(80, 24, needs, board=False)
    assert not layout.wide and lines_used(layout, needs, board=False) <= 20


def test_too_small_a_terminal_gets_the_compact_board_and_scrolls() -> None:
    layout = plan(50, 12, panel(16))
    assert layout.geometry == COMPACT and not layout.framed


@pytest.mark.parametrize(("columns", "lines"), [(60, 20), (80, 24), (120, 40), (200, 50)])
def test_practice_gets_the_largest_board_its_screen_holds(columns: int, lines: int) -> None:
    geometry = board_alone(columns, lines)
    room = (columns - BOARD_FRAME[0], lines - CHROME_LINES - STATS_LINES - BOARD_FRAME[1])
    assert geometry.width <= room[0] and geometry.height <= room[1]
    bigger: list[Geometry] = [g for g in GEOMETRIES if g > geometry]
    assert all(g.width > room[0] or g.height > room[1] for g in bigger)
