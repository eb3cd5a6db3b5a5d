"""Cards: codes, parsing and printing, and the errors that name the bad input."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gaps.card import DECK, SUIT_SYMBOLS, SUITS, Card
from gaps.errors import GapsError, NotationError


def test_there_is_one_card_per_code_in_code_order() -> None:
    assert len(DECK) == 52
    assert [card.code for card in DECK] == list(range(52))


def test_the_code_is_suit_times_13_plus_rank_minus_1_with_suits_c_d_h_s() -> None:
    assert SUITS == "CDHS"
    assert Card.parse("AC").code == 0
    assert Card.parse("2C").code == 1
    assert Card.parse("KC").code == 12
    assert Card.parse("AD").code == 13
    assert Card.parse("7H").code == 2 * 13 + 6
    assert Card.parse("KS").code == 51


@pytest.mark.parametrize("card", DECK, ids=str)
def test_every_card_prints_and_parses_back_to_itself(card: Card) -> None:
    assert Card.parse(str(card)) is card
    assert Card.from_code(card.code) is card
    assert Card.of(card.rank, card.suit) is card


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("7H", "7H"),
        ("TD", "TD"),
        ("10d", "TD"),
        ("10D", "TD"),
        ("8♣", "8C"),
        ("q♦", "QD"),
        ("10♥", "TH"),
        ("k♠", "KS"),
        (" qs ", "QS"),
        ("2c", "2C"),
        ("ah", "AH"),
    ],
)
def test_input_accepts_10_suit_symbols_lower_case_and_spaces(text: str, printed: str) -> None:
    assert str(Card.parse(text)) == printed


def test_a_ten_prints_as_t_never_as_10() -> None:
    assert str(Card.of(10, "S")) == "TS"


def test_rank_suit_and_symbol_read_the_code() -> None:
    card = Card.parse("JD")
    assert (card.rank, card.suit, card.symbol) == (11, "D", "♦")
    assert [Card.parse(f"9{s}").symbol for s in "CDHS"] == ["♣", "♦", "♥", "♠"]


@pytest.mark.parametrize(
    "text", ["", " ", "7", "H", "7X", "1H", "11H", "0S", "ZZ", "7HH", "10", "T10", "♣8", "1OH"]
)
def test_a_bad_card_raises_a_notation_error_that_names_the_input(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Card.parse(text)
    assert repr(text) in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, GapsError)


@pytest.mark.parametrize(
    "text",
    ["Q\u017f", "\u017fQ", "\ufb01", "\u3000QS", "QS\u3000", "QS\u00a0", "\x1cQS", "\uff31S",
     "Q\uff33", "\u0661\u0660H", "7\u212a"],
    ids=["long s", "long s first", "fi ligature", "ideographic space", "trailing ideographic",
         "no-break space", "file separator", "fullwidth Q", "fullwidth S", "arabic 10", "kelvin"],
)
def test_only_ascii_and_the_four_suit_symbols_make_a_card(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Card.parse(text)
    assert repr(text) in str(caught.value)


def test_a_long_input_is_quoted_cut_short_in_the_message() -> None:
    text = "1" * 5000 + "H"
    with pytest.raises(NotationError, match="5001 characters") as caught:
        Card.parse(text)
    assert repr(text[:40]) in str(caught.value)
    assert len(str(caught.value)) < 300


def test_a_bad_suit_and_a_bad_rank_are_told_apart() -> None:
    with pytest.raises(NotationError, match="suit 'X'"):
        Card.parse("7X")
    with pytest.raises(NotationError, match="rank '1'"):
        Card.parse("1H")


@pytest.mark.parametrize(("rank", "suit"), [(0, "C"), (14, "C"), (5, "X"), (5, "CD"), (5, "")])
def test_card_of_refuses_a_rank_or_suit_out_of_range(rank: int, suit: str) -> None:
    with pytest.raises(NotationError):
        Card.of(rank, suit)


@pytest.mark.parametrize("code", [-1, 52, 100])
def test_card_from_code_refuses_codes_outside_0_to_51(code: int) -> None:
    with pytest.raises(ValueError, match=str(code)):
        Card.from_code(code)


def test_cards_cannot_be_built_directly_or_changed() -> None:
    with pytest.raises(TypeError):
        Card(5)
    card = Card.parse("7H")
    with pytest.raises(AttributeError):
        card.code = 3  # type: ignore[misc]


def test_cards_compare_hash_and_sort_by_code() -> None:
    cards = [Card.parse(text) for text in ("KS", "2C", "7H", "AD")]
    assert [str(card) for card in sorted(cards)] == ["2C", "AD", "7H", "KS"]
    assert Card.parse("7H") == Card.parse("7h")
    assert Card.parse("7H") != Card.parse("7D")
    assert len({Card.parse("7H"), Card.parse("7♥"), Card.parse("7D")}) == 2
    assert Card.parse("7H") != "7H"


def test_copies_and_pickles_of_a_card_are_the_same_card() -> None:
    card = Card.parse("QH")
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card


def test_repr_is_code_that_rebuilds_the_card() -> None:
    card = Card.parse("TD")
    assert repr(card) == "Card.parse('TD')"
    assert eval(repr(card)) is card


@settings(max_examples=150, deadline=None)
@given(
    code=st.integers(0, 51),
    lower=st.booleans(),
    symbol=st.booleans(),
    ten=st.booleans(),
    pad=st.sampled_from(["", " ", "\t", "  "]),
)
def test_any_spelling_of_a_card_parses_to_that_card(
    code: int, lower: bool, symbol: bool, ten: bool, pad: str
) -> None:
    card = Card.from_code(code)
    rank = "10" if ten and card.rank == 10 else str(card)[0]
    suit = card.symbol if symbol else card.suit
    text = pad + rank + suit + pad
    assert Card.parse(text.lower() if lower else text) is card


CARDISH = st.text(
    st.sampled_from("A23456789TJQK10CDHScdhsjqkt♣♦♥♠ \t\n\u3000\u017f\ufb01\u212a\u0661"),
    max_size=5,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(CARDISH, st.text(max_size=6)))
@example("Q\u017f")
@example("1" * 5000 + "H")
def test_any_text_parses_to_a_card_that_round_trips_or_raises_a_notation_error(
    text: str,
) -> None:
    try:
        card = Card.parse(text)
    except NotationError:
        return
    assert Card.parse(str(card)) is card
    # Nothing but ASCII space and case, 10 and the suit symbols was read leniently.
    plain = text.strip(" \t\n\r\f\v").upper().replace("10", "T")
    assert str(card) == plain[:-1] + SUIT_SYMBOLS.get(plain[-1], plain[-1])
