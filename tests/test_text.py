"""The one rule for text on the wire (gaps_protocol.text): taken as sent or refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gaps_protocol.text import BadText, check_text, text_problem

TAKEN = ["8C", "2H > 3", "K7QX2M", "café night", "Friday's cup", "ünïcode", "8♣"]
REFUSED = {
    "": "is empty",
    " 8C": "begins with a space",
    "8C ": "ends with a space",
    "a  b": "holds two spaces in a row",
    "a\u00a0b": "holds U+00A0 NO-BREAK SPACE at character 2: the only space is U+0020 SPACE",
    "\u3000cup": "holds U+3000 IDEOGRAPHIC SPACE at character 1: the only space is U+0020 SPACE",
    "a\tb": "holds U+0009 at character 2, which is not printable",
    "a\u0085": "holds U+0085 at character 2, which is not printable",
    "a\u2028b": "holds U+2028 LINE SEPARATOR at character 2, which is not printable",
    "x\u200by": "holds U+200B ZERO WIDTH SPACE at character 2, which is not printable",
    "evil\u202e": "holds U+202E RIGHT-TO-LEFT OVERRIDE at character 5, which is not printable",
    "\ue000": "holds U+E000 at character 1, which is not printable",
}


@pytest.mark.parametrize("text", TAKEN)
def test_printable_text_with_single_inner_spaces_is_taken_as_sent(text: str) -> None:
    assert text_problem(text) is None
    assert check_text(text) == text


@pytest.mark.parametrize(("text", "problem"), REFUSED.items())
def test_every_refusal_says_why_naming_the_character(text: str, problem: str) -> None:
    assert text_problem(text) == problem
    with pytest.raises(BadText, match="^" + repr(text).replace("\\", "\\\\") + " "):
        check_text(text)


@given(st.text())
def test_a_taken_text_has_nothing_a_strip_or_fold_would_change(text: str) -> None:
    if text_problem(text) is None:
        assert text == text.strip(" ")
        assert "  " not in text
        assert all(char == " " or char.isprintable() for char in text)
