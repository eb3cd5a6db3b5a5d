"""Messages in the board's notation (issue 13, bug 7): the engine's ``TH`` is the board's
``10♥``, a card already in place says so, and a typed line that is no action says what
may be typed."""

from __future__ import annotations

import pytest

from client_cli.wording import board_words, typed_error
from gaps import NotationError, parse_action


def refused(text: str) -> str:
    with pytest.raises(NotationError) as caught:
        parse_action(text)
    return typed_error(text, caught.value)


def test_card_codes_become_the_boards_labels() -> None:
    assert board_words("8C: the gap at r2c6 takes 5H, not 8C") == \
        "8♣: the gap at r2c6 takes 5♥, not 8♣"
    assert board_words("redeal: classic allows a redeal only when blocked") == \
        "redeal: classic allows a redeal only when blocked"


def test_a_card_whose_left_neighbour_ends_its_row_has_no_slot() -> None:
    assert board_words("TH: 9H stands in column 13, so TH has no slot to go to") == \
        "10♥ has no slot: 9♥ ends its row, in column 13"


def test_a_card_already_right_of_its_neighbour_is_in_place() -> None:
    assert board_words("5S: the slot right of 4S (r1c5) holds 5S, not a gap") == \
        "5♠ is already in place, right of 4♠ (r1c5)"
    assert board_words("8C: the slot right of 7C (r1c5) holds 5S, not a gap") == \
        "8♣: the slot right of 7♣ (r1c5) holds 5♠, not a gap"


def test_words_inside_a_name_are_left_alone() -> None:
    assert board_words("QSX and xAS but 2D.") == "QSX and xAS but 2♦."
    assert board_words("ana\x1b[2J") == "ana\ufffd[2J"


def test_a_command_with_more_words_is_typed_alone() -> None:
    assert refused("stop now") == "'stop now' is not an action: type stop alone"
    assert refused("Redeal please") == "'Redeal please' is not an action: type redeal alone"


def test_a_line_that_is_no_card_says_what_may_be_typed() -> None:
    assert refused("zz") == ("'zz' is not an action: type a card (8c, 10h), a 2 and its row "
                             "(2h>3), a slot (8c>r2c6), redeal, undo, stop")


def test_a_card_with_a_bad_suit_or_slot_keeps_the_engines_reason() -> None:
    assert refused("10w") == "'10w' is not a move: '10w' is not a card: suit 'w' is not one of " \
        "C D H S"
    assert refused("8c>r9c1").endswith("row 9 is not in 1..4")
