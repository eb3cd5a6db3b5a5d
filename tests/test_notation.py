"""What every notation shares: ASCII space, short decimal numbers, refusals that quote."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps.errors import NotationError
from gaps.notation import QUOTED_CHARS, SPACE, number, quoted


def test_space_is_the_six_ascii_whitespace_characters_and_nothing_else() -> None:
    assert sorted(SPACE) == sorted(" \t\n\r\f\v")
    assert all(c.isspace() for c in SPACE)
    assert not any(c in SPACE for c in "\x1c\x1d\x1e\x1f\x85\u00a0\u3000")


def test_short_text_is_quoted_whole() -> None:
    assert quoted("7X") == "'7X'"
    assert quoted("a" * QUOTED_CHARS) == repr("a" * QUOTED_CHARS)


def test_long_text_is_quoted_cut_short_with_its_length() -> None:
    text = "r" + "1" * 5000 + "c1"
    assert quoted(text) == repr(text[:QUOTED_CHARS]) + "... (5003 characters)"
    assert quoted(text, max_chars=3) == "'r11'... (5003 characters)"


@pytest.mark.parametrize(("digits", "high", "value"), [("1", 4, 1), ("4", 4, 4), ("13", 13, 13)])
def test_a_number_in_range_is_read(digits: str, high: int, value: int) -> None:
    assert number(digits, "row", high=high) == value


@pytest.mark.parametrize(
    ("digits", "words"),
    [
        ("0", "row 0 is not in 1..13"),
        ("14", "row 14 is not in 1..13"),
        ("100", "row '100' is not in 1..13"),
        ("1" * 5000, "(5000 characters) is not in 1..13"),
        ("01", "row '01' has a leading zero"),
        ("00", "row '00' has a leading zero"),
        ("", "row '' is not a number"),
        ("-1", "row '-1' is not a number"),
        ("+1", "row '+1' is not a number"),
        (" 1", "row ' 1' is not a number"),
        ("1_0", "row '1_0' is not a number"),
        ("\u0663", "row '\u0663' is not a number"),
        ("\u00b2", "row '\u00b2' is not a number"),
        ("\uff11", "row '\uff11' is not a number"),
    ],
)
def test_anything_else_is_refused_saying_why(digits: str, words: str) -> None:
    with pytest.raises(NotationError) as caught:
        number(digits, "row", high=13)
    assert words in str(caught.value)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=6), st.integers(1, 1000))
def test_any_text_is_the_number_it_spells_or_raises_a_notation_error(
    digits: str, high: int
) -> None:
    try:
        value = number(digits, "row", high=high)
    except NotationError:
        return
    assert str(value) == digits and 1 <= value <= high
