"""client_cli.board: the grid at every size, its marks and colours, and where cells are."""

from __future__ import annotations

import pytest
from rich.style import Style

from client_cli.board import (
    COMPACT,
    DEAD_MARK,
    GAP_MARK,
    GEOMETRIES,
    LABEL_WIDTH,
    NORMAL,
    TARGET_MARK,
    Geometry,
    board_lines,
    movable_indices,
    preserved_indices,
    slot_at,
)
from client_cli.palette import DARK, LIGHT
from gaps import Game, Seed, Slot
from tests.cli_support import EVERY_CELL, at

KNOWN = Seed.parse("AAAA-BBBB-CCCC-DDDD")
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_every_geometry_draws_its_size_and_finds_each_cell_back(geometry: Geometry) -> None:
    lines = board_lines(Game(KNOWN, "classic"), geometry=geometry)
    assert len(lines) == geometry.height
    assert max(len(line.plain) for line in lines) == geometry.width
    for index in range(52):
        slot = Slot.from_index(index)
        x = LABEL_WIDTH + (slot.column - 1) * geometry.cell + 1
        y = 1 + (slot.row - 1) * (geometry.tile + geometry.spacing) + geometry.tile // 2
        assert slot_at(x, y, geometry) == slot
        label = lines[y].plain[x - 1:x - 1 + geometry.cell]
        assert label.strip() in lines[y].plain  # the card is drawn where it is found
    assert slot_at(1, 1, geometry) is None and slot_at(10, 0, geometry) is None
    if geometry.spacing:
        assert slot_at(LABEL_WIDTH + 1, 1 + geometry.tile, geometry) is None  # between rows


def test_the_geometries_grow_from_the_compact_board_to_tiles() -> None:
    assert GEOMETRIES[0] is COMPACT and (COMPACT.width, COMPACT.height) == (55, 5)
    assert (NORMAL.width, NORMAL.height) == (68, 8)
    assert list(GEOMETRIES) == sorted(GEOMETRIES, key=lambda g: (g.width, g.height))
    assert GEOMETRIES[-1].tiles and GEOMETRIES[-1].width > 150


def test_a_compact_board_is_13_cells_of_4_and_its_rows_close_together() -> None:
    lines = board_lines(Game(KNOWN, "classic"), geometry=COMPACT)
    assert len(lines) == 5
    assert lines[1].plain.startswith(" 1  3♣  8♣ ")
    assert lines[0].plain.startswith("    1   2   3")  # each number over its cards' rank


def test_the_board_shows_gaps_dead_gaps_targets_and_preserved_sequences() -> None:
    game = Game.from_layout(EVERY_CELL)
    assert preserved_indices(game) == {0, 1, 2} | set(range(13, 25))
    lines = board_lines(game, cursor=0, targets={at("r1c4")})
    row_one = lines[1].plain
    assert TARGET_MARK in row_one and DEAD_MARK in row_one  # r1c4 the target; r1c6 dead
    assert GAP_MARK in lines[7].plain  # r4c10: a live gap
    styles = " ".join(str(span.style) for span in lines[1].spans)
    assert DARK.preserved in styles and DARK.dead_ground in styles
    assert f"{DARK.preserved} on {DARK.black_suit}" in styles  # the cursor: colours swapped


def test_marks_underline_exactly_the_cards_that_can_move() -> None:
    game = Game(KNOWN, "classic")
    movable = movable_indices(game)
    assert movable == {game.slot_of(move.card).index for move in game.legal_moves()}
    line = board_lines(game, movable=movable)[1]
    underlined = {(span.start - LABEL_WIDTH) // NORMAL.cell for span in line.spans
                  if isinstance(span.style, Style) and span.style.underline}
    assert underlined == {index for index in movable if index < 13}


def test_tiles_have_a_face_and_the_light_setting_its_own_colours() -> None:
    game = Game.from_layout(EVERY_CELL)
    tiles = GEOMETRIES[-1]
    lines = board_lines(game, geometry=tiles, palette=LIGHT)
    faces = " ".join(str(span.style) for line in lines for span in line.spans)
    assert f"on {LIGHT.face}" in faces and f"on {LIGHT.gap_ground}" in faces
    assert DARK.face not in faces
