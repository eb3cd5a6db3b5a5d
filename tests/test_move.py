"""Actions and their text: ``8C``, ``2H>3``, ``8C>r2c6``, ``redeal``, ``undo``, ``stop``."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gaps.card import DECK, SUIT_SYMBOLS, Card
from gaps.errors import NotationError
from gaps.move import (
    AUTO_MOVES,
    REDEAL,
    STOP,
    TWO_MOVES,
    UNDO,
    Move,
    Redeal,
    Stop,
    Undo,
    parse_action,
)
from gaps.slot import Slot


def test_a_card_alone_is_a_move_into_its_only_possible_gap() -> None:
    move = Move.parse("8C")
    assert move.card == Card.parse("8C")
    assert move.to is None
    assert move.to_index == -1
    assert str(move) == "8C"


def test_a_2_with_a_row_number_goes_to_column_1_of_that_row() -> None:
    move = Move.parse("2H>3")
    assert move.card == Card.parse("2H")
    assert move.to == Slot(3, 1)
    assert str(move) == "2H>3"


def test_a_card_with_a_named_slot_goes_there() -> None:
    move = Move.parse("8C>r2c6")
    assert move.to == Slot(2, 6)
    assert move.to_index == Slot(2, 6).index
    assert str(move) == "8C>r2c6"


def test_a_named_slot_in_column_1_prints_as_a_row_number() -> None:
    assert str(Move.parse("2H>r3c1")) == "2H>3"
    assert Move.parse("2H>r3c1") == Move.parse("2H>3")
    assert str(Move(Card.parse("9S"), Slot(4, 1))) == "9S>4"


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("  8c > R2C6 ", "8C>r2c6"),
        ("10♣>r2c6", "TC>r2c6"),
        ("2h>3", "2H>3"),
        ("2♠ > 4", "2S>4"),
        ("qd", "QD"),
    ],
)
def test_moves_parse_leniently_and_print_one_way(text: str, printed: str) -> None:
    assert str(Move.parse(text)) == printed
    assert str(Move.parse(printed)) == printed


@pytest.mark.parametrize(
    "text",
    ["", " ", ">3", "2H>", "2H>5", "2H>0", "2H>²", "2H>٣", "8C>r9c1", "8C>r1c14", "XX", "8C>x",
     "8C>r2c6>r1c1", "8C>>3", "1H>2"],
)
def test_bad_move_text_raises_a_notation_error_that_names_it(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Move.parse(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    "text", ["2H>" + "1" * 5000, "2H>03", "8C>r02c6", "2H>" + "0" * 4000 + "3", "2H>-3", "2H>+3"]
)
def test_a_row_number_is_short_ascii_digits_with_no_leading_zero(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Move.parse(text)
    assert repr(text[:40]) in str(caught.value)
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(
    "text",
    ["\u3000stop", "stop\u3000", "\uff33\uff34\uff2f\uff30", "\u017ftop", "2H>\u3000 3",
     "2H\u2003>3", "\u00a08C"],
)
def test_actions_are_ascii_words_and_moves_with_ascii_space(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        parse_action(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(("text", "action"), [
    ("redeal", REDEAL), ("REDEAL", REDEAL), (" Redeal ", REDEAL),
    ("undo", UNDO), ("Undo", UNDO), ("stop", STOP), ("STOP ", STOP),
])
def test_the_words_redeal_undo_and_stop_parse_in_any_case(text: str, action: object) -> None:
    assert parse_action(text) == action
    assert str(parse_action(text)) == text.strip().lower()


def test_parse_action_reads_moves_too() -> None:
    assert parse_action("8C>r2c6") == Move.parse("8C>r2c6")
    assert parse_action("2H>3") == Move(Card.parse("2H"), Slot(3, 1))


@pytest.mark.parametrize("text", ["", "redeals", "un do", "halt", "8Z"])
def test_parse_action_refuses_anything_else_with_a_notation_error(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        parse_action(text)
    assert repr(text) in str(caught.value)


def test_word_actions_are_equal_by_kind() -> None:
    assert Redeal() == REDEAL and Undo() == UNDO and Stop() == STOP
    assert REDEAL != UNDO and UNDO != STOP and STOP != REDEAL
    assert len({Redeal(), REDEAL, Undo(), Stop()}) == 3
    assert repr(REDEAL) == "Redeal()"


def test_moves_are_equal_by_card_and_destination() -> None:
    assert Move.parse("8C") == Move(Card.parse("8C"))
    assert Move.parse("8C") != Move.parse("8C>r2c6")
    assert Move.parse("8C") != Move.parse("9C")
    assert Move.parse("8C") != "8C"
    assert len({Move.parse("8C"), Move.parse("8c"), Move.parse("8C>r1c2")}) == 2
    assert eval(repr(Move.parse("2H>3"))) == Move.parse("2H>3")


def test_a_move_is_immutable_and_checks_its_slot() -> None:
    move = Move.parse("8C")
    with pytest.raises(AttributeError):
        move.to = Slot(1, 1)  # type: ignore[misc]
    with pytest.raises(NotationError):
        Move(Card.parse("8C"), Slot(5, 1))


def test_is_two_tells_the_2s_apart() -> None:
    assert Move.parse("2D>1").is_two
    assert not Move.parse("3D").is_two


def test_the_interned_moves_cover_every_card_and_every_row_for_the_2s() -> None:
    assert [move.card for move in AUTO_MOVES] == list(DECK)
    assert all(move.to is None for move in AUTO_MOVES)
    for card in DECK:
        if card.rank == 2:
            assert [move.to for move in TWO_MOVES[card.code]] == [Slot(r, 1) for r in range(1, 5)]
        else:
            assert TWO_MOVES[card.code] == ()


slots = st.builds(Slot, st.integers(1, 4), st.integers(1, 13))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 51), st.one_of(st.none(), slots))
def test_every_move_prints_and_parses_back_to_an_equal_move(code: int, to: Slot | None) -> None:
    move = Move(Card.from_code(code), to)
    assert Move.parse(str(move)) == move
    assert parse_action(str(move)) == move
    assert str(Move.parse(str(move))) == str(move)


ACTIONISH = st.one_of(
    st.text(st.sampled_from("2348TKQHSCD10>rc ♣\t\u3000\u017f\u0663"), max_size=8),
    st.sampled_from(["redeal", "undo", "stop"]).flatmap(
        lambda word: st.tuples(st.text(" \t\u3000\x1c", max_size=2), st.sampled_from(
            [word, word.upper(), word.title()]), st.text(" \t\u3000\x1c", max_size=2)
        ).map("".join)
    ),
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(ACTIONISH, st.text(max_size=10)))
@example("2H>" + "1" * 5000)
@example("\u3000stop")
def test_any_text_parses_to_an_action_that_round_trips_or_raises_a_notation_error(
    text: str,
) -> None:
    try:
        action = parse_action(text)
    except NotationError:
        return
    assert parse_action(str(action)) == action
    assert str(parse_action(str(action))) == str(action)
    assert set(text) - set(SUIT_SYMBOLS) <= set(map(chr, range(128)))
    if isinstance(action, Move):
        assert Move.parse(text) == action
