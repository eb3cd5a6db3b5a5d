"""Slots of the 4 x 13 grid: ``r2c5``, flat indices, and bad input."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gaps.errors import NotationError
from gaps.slot import COLUMNS, ROWS, Slot

ALL_SLOTS = [Slot(row, column) for row in range(1, ROWS + 1) for column in range(1, COLUMNS + 1)]


def test_the_grid_has_4_rows_of_13_columns() -> None:
    assert (ROWS, COLUMNS) == (4, 13)


@pytest.mark.parametrize("slot", ALL_SLOTS, ids=str)
def test_every_slot_prints_and_parses_back_to_itself(slot: Slot) -> None:
    assert Slot.parse(str(slot)) == slot
    assert Slot.from_index(slot.index) == slot


def test_a_slot_prints_as_r_row_c_column() -> None:
    assert str(Slot(2, 5)) == "r2c5"
    assert str(Slot(4, 13)) == "r4c13"


def test_the_index_is_row_major_from_0_to_51() -> None:
    assert [slot.index for slot in ALL_SLOTS] == list(range(52))
    assert Slot(1, 1).index == 0
    assert Slot(2, 1).index == 13
    assert Slot(4, 13).index == 51


@pytest.mark.parametrize("text", ["r2c5", "R2C5", "r2C5", " r2c5 ", "r2 c5", "\tr2c5\r\n"])
def test_slots_parse_in_any_case_with_spaces_around(text: str) -> None:
    assert Slot.parse(text) == Slot(2, 5)


@pytest.mark.parametrize(
    "text", ["", "r", "2,5", "r2", "c5", "r2c", "rc5", "x2c5", "r2c5x", "r-1c5", "r٣c5", "r2.0c5"]
)
def test_text_that_is_not_a_slot_raises_a_notation_error_naming_it(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Slot.parse(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize("text", ["r0c1", "r5c1", "r1c0", "r1c14", "r9c99", "r123c1", "r1c100"])
def test_a_slot_off_the_grid_raises_a_notation_error_naming_it(text: str) -> None:
    with pytest.raises(NotationError, match="not in") as caught:
        Slot.parse(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize("text", ["r02c5", "r2c05", "r0004c0001", "r00c1"])
def test_a_number_with_a_leading_zero_is_refused(text: str) -> None:
    with pytest.raises(NotationError, match="leading zero") as caught:
        Slot.parse(text)
    assert repr(text) in str(caught.value)


def test_a_number_of_thousands_of_digits_is_refused_before_it_is_read() -> None:
    text = "r" + "1" * 5000 + "c1"
    with pytest.raises(NotationError, match=r"not in 1\.\.4") as caught:
        Slot.parse(text)
    message = str(caught.value)
    assert repr(text[:40]) in message and "5003 characters" in message
    assert len(message) < 300


@pytest.mark.parametrize(
    "text", ["\u3000r2c5", "r2c5\u00a0", "r2c5\x1c", "ｒ2c5", "r2ｃ5", "r２c5", "r2c\u0665"]
)
def test_only_ascii_letters_digits_and_space_make_a_slot(text: str) -> None:
    with pytest.raises(NotationError) as caught:
        Slot.parse(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(("row", "column"), [(0, 1), (5, 1), (1, 0), (1, 14)])
def test_checked_refuses_a_row_or_column_off_the_grid(row: int, column: int) -> None:
    with pytest.raises(NotationError):
        Slot.checked(row, column)


@pytest.mark.parametrize("index", [-1, 52])
def test_from_index_refuses_an_index_outside_0_to_51(index: int) -> None:
    with pytest.raises(ValueError, match=str(index)):
        Slot.from_index(index)


def test_a_slot_is_a_row_column_pair() -> None:
    row, column = Slot(3, 7)
    assert (row, column) == (3, 7)
    assert Slot(3, 7) == (3, 7)
    assert len({Slot(3, 7), Slot.parse("r3c7")}) == 1


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 51), st.booleans())
def test_index_and_text_round_trip(index: int, upper: bool) -> None:
    slot = Slot.from_index(index)
    text = str(slot).upper() if upper else str(slot)
    assert Slot.parse(text).index == index


SLOTISH = st.text(st.sampled_from("rRcC0123456789 \t\n\x1c\u3000\u0665\uff52\u00b2"), max_size=8)


@settings(max_examples=400, deadline=None)
@given(st.one_of(SLOTISH, st.text(max_size=12)))
@example("r" + "1" * 5000 + "c1")
def test_any_text_parses_to_a_slot_that_round_trips_or_raises_a_notation_error(
    text: str,
) -> None:
    try:
        slot = Slot.parse(text)
    except NotationError:
        return
    assert Slot.parse(str(slot)) == slot
    # Nothing but ASCII space and case was read leniently.
    assert str(slot) == re.sub("[ \t\n\r\f\v]", "", text).lower()
