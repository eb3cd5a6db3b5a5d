"""client_cli.par: a deal's par and each score's gap to it, saying when par is a bound."""

from __future__ import annotations

import pytest

from client_cli.par import gap_words, par_text, par_words

EXACT = {"score": 58, "exact": True}
BOUND = {"score": 31, "exact": False}


def test_par_is_its_score_when_exact_a_lower_bound_when_not_and_dots_until_known() -> None:
    assert par_text(EXACT) == "58"
    assert par_text(BOUND) == "≥31"
    assert par_text(None) == "…"
    for odd in ("58", {"score": "58", "exact": True}, {"score": True, "exact": True},
                {"score": 58}):
        assert par_text(odd) == "?"


def test_par_in_words_says_when_it_is_only_a_lower_bound() -> None:
    assert par_words(EXACT) == "par 58"
    assert par_words(BOUND) == ("par at least 31 (a lower bound: the solver ran out of "
                                "budget)")
    assert par_words(None) == "par not solved yet"
    assert par_words({"score": "x"}) == "par unknown"


@pytest.mark.parametrize(("score", "par", "words", "short"), [
    (55, EXACT, "3 below par", "3 below"),
    (58, EXACT, "at par", "at par"),
    (60, EXACT, "2 above par", "2 above"),  # a server that breaks its word: said as it is
    (28, BOUND, "at least 3 below par", "≥3 below"),
    (31, BOUND, "maybe at par", "maybe par"),
])
def test_the_gap_to_par_in_words(score: int, par: dict[str, object], words: str,
                                 short: str) -> None:
    assert gap_words(score, par) == words
    assert gap_words(score, par, short=True) == short


def test_no_gap_while_par_or_the_score_is_not_known() -> None:
    assert gap_words(30, None) is None and gap_words(None, EXACT) is None
    assert gap_words(True, EXACT) is None
