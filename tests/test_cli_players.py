"""client_cli.players: every row fits the width it is given; the state and the marks are
never cut, the names shorten first."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from client_cli.players import (
    Format,
    Look,
    choose_format,
    panel_needs,
    players_table,
)
from gaps_protocol.messages.views import Progress
from tests.cli_support import progress

BOB = progress(8, "bob", placed=20, score=20, status="stopped", end_reason="stopped",
               finish_ms=240_800)
CAROL = progress(9, "carol-who-has-a-long-name", placed=12, score=12)
DAVE = progress(10, "dave-the-bot-of-the-night", bot=True, placed=33, score=33,
                status="blocked")
ME = progress(7, "me", end_reason="disconnected", finish_ms=61_000)
FOUR = [BOB, CAROL, DAVE, ME]


def drawn(players: list[Progress], width: int, columns: int = 1,
          look: Look | None = None) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(players_table(players, width=width, look=look or Look(you_id=7),
                                columns=columns))
    return [line.rstrip() for line in console.export_text().splitlines()]


@pytest.mark.parametrize("more", [0, 4, 15, 35, 60, 100])
def test_each_row_fits_and_keeps_its_state_and_marks(more: int) -> None:
    width = panel_needs(FOUR, Look(you_id=7)).least + more  # the layout gives no less
    lines = drawn(FOUR, width)
    assert len(lines) == 5 and all(len(line) <= width for line in lines)
    text = "\n".join(lines)
    for state in ("stopped 4:00.8", "blocked", "playing", "disconnected 1:01.0"):
        assert state in text
    assert "[bot]" in text and "▸ me" in text
    assert lines[1].lstrip().startswith("dave")  # most cards placed first


def test_names_shorten_before_anything_else_is_cut() -> None:
    lines = drawn(FOUR, 46)
    assert any("dave-" in line and "… [bot]" in line for line in lines)
    assert any("carol-" in line and "…" in line for line in lines)
    assert any("20/48" in line for line in lines)


def test_a_wide_table_has_whole_names_and_a_bar() -> None:
    text = "\n".join(drawn(FOUR, 100))
    assert "dave-the-bot-of-the-night [bot]" in text and "█" in text and "…" not in text


def test_rows_laid_out_in_columns_stay_whole() -> None:
    many = [progress(n, f"p{n}-longish-name", placed=n) for n in range(16)]
    lines = drawn([*many, ME], 76, columns=2)
    assert len(lines) == 1 + 9  # a heading, then 17 rows in two columns
    assert "\n".join(lines).count("/48") == 17 and all(len(line) <= 76 for line in lines)


def test_the_format_keeps_the_bar_only_beside_whole_names() -> None:
    assert choose_format(120, (20, 14, 8), 14).bar == 48
    assert choose_format(60, (33, 14, 8), 14) == Format(8, True)
    assert choose_format(40, (33, 14, 8), 14) == Format(0, True)
    assert choose_format(34, (33, 14, 8), 14) == Format(0, False)


def test_the_panel_says_how_narrow_and_how_wide_its_rows_can_be() -> None:
    needs = panel_needs(FOUR, Look(you_id=7))
    assert needs.rows == 4
    assert needs.least < needs.natural
    assert needs.least >= len("disconnected 1:01.0")  # the state is never cut


def test_in_the_lobby_the_host_has_a_star_and_states_are_ready_or_not() -> None:
    lobby = [progress(7, "me", ready=True), progress(8, "bob")]
    text = "\n".join(drawn(lobby, 60, look=Look(you_id=7, host_id=7, started=False)))
    assert "▸ me ★" in text and "ready" in text and "not ready" in text
