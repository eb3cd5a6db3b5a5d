"""client_cli.render: cards with suit symbols and colours, the grid, where cells are, and
the server's text as inert ``Text``."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from client_cli.render import (
    CELL_WIDTH,
    COMPACT_CELL_WIDTH,
    LABEL_WIDTH,
    action_text,
    append_bot_mark,
    board_lines,
    board_size,
    bot_mark,
    card_label,
    is_bot,
    movable_indices,
    par_text,
    preserved_indices,
    printable_text,
    slot_at,
)
from gaps import Card, Game, Move, Seed, Slot

KNOWN = Seed.parse("AAAA-BBBB-CCCC-DDDD")


def at(text: str) -> int:
    return Slot.parse(text).index


def test_cards_read_with_symbols_and_red_hearts_and_diamonds() -> None:
    assert card_label(Card.parse("TH")) == "10♥"
    assert card_label(Card.parse("8C")) == " 8♣"
    text = action_text("2H>3")
    assert text.plain == "2♥ → row 3"
    assert "ff5f5f" in str(text.spans[0].style)
    assert action_text("8c").plain == "8♣"


def test_a_card_sent_to_column_1_is_echoed_with_its_slot() -> None:
    """Bug 7 of issue 13: ``8c>r1c1`` was echoed ``8C>1``."""
    assert action_text(str(Move.parse("8c>r1c1"))).plain == "8♣ → r1c1"
    assert action_text("8C>r2c6").plain == "8♣ → r2c6"


def test_a_compact_board_is_13_cells_of_4_and_its_rows_close_together() -> None:
    game = Game(Seed.parse("AAAA-BBBB-CCCC-DDDD"), "classic")
    lines = board_lines(game, width=COMPACT_CELL_WIDTH, spaced=False)
    assert len(lines) == 5 and board_size(width=COMPACT_CELL_WIDTH, spaced=False) == (55, 5)
    assert {len(line.plain) for line in lines} == {LABEL_WIDTH + 13 * COMPACT_CELL_WIDTH}
    assert lines[1].plain.startswith(" 1  3♣  8♣ ")
    slot = slot_at(LABEL_WIDTH + 12 * COMPACT_CELL_WIDTH, 4, width=COMPACT_CELL_WIDTH,
                   spaced=False)
    assert slot is not None and (slot.row, slot.column) == (4, 13)


def test_marks_underline_exactly_the_cards_that_can_move() -> None:
    game = Game(Seed.parse("AAAA-BBBB-CCCC-DDDD"), "classic")
    movable = movable_indices(game)
    assert movable == {game.slot_of(move.card).index for move in game.legal_moves()}
    line = board_lines(game, movable=movable)[1]
    underlined = {(span.start - LABEL_WIDTH) // CELL_WIDTH for span in line.spans
                  if "underline" in str(span.style)}
    assert underlined == {index for index in movable if index < 13}


def test_the_board_shows_gaps_dead_gaps_and_preserved_sequences() -> None:
    game = Game.from_layout("""
        2C 3C 4C -- KH -- 5S 6S 7S 8S 9S TS JS
        2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
        3H 4H 5H 6H 7H 8H 9H TH JH QH 2H 2S 3S
        KC QC JC TC 9C 8C 7C 6C 5C -- 4S QS KS
    """)
    assert preserved_indices(game) == {0, 1, 2} | set(range(13, 25))
    lines = board_lines(game, cursor=0, selected=None, targets={at("r1c4")})
    assert len(lines) == 8  # header, 4 rows, 3 blank lines between
    row_one = lines[1].plain
    assert len(row_one) == LABEL_WIDTH + 13 * CELL_WIDTH
    assert "▼" in row_one and "✕" in row_one  # the target gap; the dead gap right of KH
    assert "·" in lines[7].plain  # r4c10: a live gap
    styles = " ".join(str(span.style) for span in lines[1].spans)
    assert "1d4d2b" in styles and "reverse" in styles


def test_every_cell_is_found_back_from_where_it_is_drawn() -> None:
    for index in range(52):
        slot = Slot.from_index(index)
        x = LABEL_WIDTH + (slot.column - 1) * CELL_WIDTH + 2
        y = 1 + (slot.row - 1) * 2
        assert slot_at(x, y) == slot
    assert slot_at(1, 1) is None and slot_at(10, 0) is None and slot_at(10, 2) is None


def test_text_is_rich_text() -> None:
    assert isinstance(board_lines(Game(KNOWN, "classic"))[0], Text)


def test_printable_text_prints_a_servers_text_as_typed_never_as_markup() -> None:
    hostile = "ana\x1b[2J\u202e[bold]x[/bold] [link=http://x]y[/link] :smile:"
    text = printable_text(hostile, "dim")
    assert text.plain == "ana\ufffd[2J\ufffd[bold]x[/bold] [link=http://x]y[/link] :smile:"
    assert text.style == "dim" and text.spans == []  # no bold, no link: markup is not read
    console = Console(file=io.StringIO(), width=200, force_terminal=True, color_system=None)
    console.print(text)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert printed == f"{text.plain}\n"  # no control sequence, no hyperlink, no emoji


def test_par_is_its_score_when_exact_a_lower_bound_when_not_and_dots_until_known() -> None:
    assert par_text({"score": 58, "exact": True}) == "58"
    assert par_text({"score": 31, "exact": False}) == "≥31"
    assert par_text(None) == "…"
    for odd in ("58", {"score": "58", "exact": True}, {"score": True, "exact": True},
                {"score": 58}):
        assert par_text(odd) == "?"


def test_only_an_entry_that_says_bot_true_is_a_bots_and_gets_the_mark() -> None:
    assert is_bot({"name": "robo", "bot": True})
    for person in ({"name": "ana"}, {"name": "ana", "bot": False}, {"bot": "yes"}, None, "bot"):
        assert not is_bot(person) and bot_mark(person) == ""
    assert bot_mark({"bot": True}) == " [bot]"
    assert append_bot_mark(Text("robo"), {"bot": True}).plain == "robo [bot]"
    assert append_bot_mark(Text("ana"), {}).plain == "ana"
