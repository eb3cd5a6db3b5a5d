"""client_cli.results: who won, and a ranking laid out for its width with the gap to par."""

from __future__ import annotations

import io

import pytest
from msgspec.structs import replace
from rich.console import Console

from client_cli.results import headline, par_line, ranking_table
from gaps_protocol.messages.common import Par
from gaps_protocol.messages.views import RankedProgress
from tests.cli_support import ranked

ROWS = [
    ranked(1, 8, "bob", score=20, placed=20, moves_made=31, end_reason="stopped",
           finish_ms=240_800),
    ranked(2, 10, "dave-the-bot-of-the-night", bot=True, score=33, placed=33, moves_made=40,
           end_reason="lost", finish_ms=200_000),
    ranked(3, 7, "me", end_reason="time", finish_ms=300_000, review="held"),
]
EXACT = Par(score=36, exact=True)
BOUND = Par(score=33, exact=False)


def drawn(width: int, par: Par | None, *, fetching: bool = False) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, record=True)
    console.print(ranking_table(ROWS, width=width, you_id=7, par=par, fetching=fetching))
    return [line.rstrip() for line in console.export_text().splitlines()]


@pytest.mark.parametrize("width", [56, 76, 120, 196])
def test_the_ranking_fits_and_keeps_the_gap_to_par_and_the_result(width: int) -> None:
    lines = drawn(width, BOUND)
    assert all(len(line) <= width for line in lines) and len(lines) == 4
    text = "\n".join(lines)
    assert "[bot]" in text and "me (you)" in text
    assert "stopped" in text and "time · under review" in text
    assert ("≥13 below" if width < 70 else "at least 13 below par") in text
    assert ("maybe par" if width < 70 else "maybe at par") in text


def test_a_wide_ranking_has_every_column_and_whole_names() -> None:
    header, *rows = drawn(196, EXACT)
    assert header.split() == ["#", "player", "score", "to", "par", "placed", "redeals",
                              "moves", "result", "time"]
    assert "dave-the-bot-of-the-night [bot]" in rows[1] and "16 below par" in rows[0]


def test_a_narrow_ranking_drops_the_least_needed_columns_first() -> None:
    header = drawn(56, EXACT)[0].split()
    assert header[:5] == ["#", "player", "score", "to", "par"] and "result" in header
    assert "moves" not in header and "redeals" not in header


def test_while_par_is_solved_the_gap_says_so() -> None:
    assert "…" in drawn(100, None, fetching=True)[1]
    assert "?" in drawn(100, None)[1]


@pytest.mark.parametrize(("rows", "words"), [
    (ROWS, "bob wins (score 20)."),
    ([replace(ROWS[2], rank=1, end_reason="won", finish_ms=200_000)],
     "You win! (won in 3:20.0)"),
    ([replace(ROWS[0], rank=1), replace(ROWS[1], rank=1)],
     "Bob and dave-the-bot-of-the-night share first place (score 20)."),
    ([replace(ROWS[2], rank=1), replace(ROWS[0], rank=1)],
     "You and bob share first place (score 0)."),
    ([], "The match is over."),
])
def test_the_headline_names_the_winner(rows: list[RankedProgress], words: str) -> None:
    assert headline(rows, 7) == words


def test_the_par_line_says_when_par_is_a_lower_bound() -> None:
    assert par_line(EXACT, fetching=False).startswith("Par 36: the best score this deal")
    assert par_line(BOUND, fetching=False) == ("Par: at least 33 (a lower bound: the solver "
                                               "ran out of budget).")
    assert par_line(None, fetching=True) == "Par: the server is solving this deal…"
    assert par_line(None, fetching=False).startswith("Par: not known")
