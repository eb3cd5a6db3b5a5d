"""Seeds and share codes: round trips, lookalike letters, bad input, commitments."""

from __future__ import annotations

import base64
import hashlib

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gaps.errors import NotationError
from gaps.seed import SEED_BYTES, Seed


def test_a_share_code_is_base32_in_groups_of_four_letters() -> None:
    seed = Seed(bytes.fromhex("0123456789abcdef0123"))
    assert str(seed) == "AERU-KZ4J-VPG6-6AJD"
    assert str(seed).replace("-", "") == base64.b32encode(seed.data).decode()


def test_a_generated_seed_has_10_bytes_and_16_letters() -> None:
    seed = Seed.generate()
    assert SEED_BYTES == 10
    assert len(seed.data) == 10
    assert len(str(seed)) == 16 + 3
    assert Seed.parse(str(seed)) == seed


def test_generated_seeds_differ() -> None:
    assert len({Seed.generate() for _ in range(20)}) == 20


def test_a_derived_seed_is_fixed_by_its_text() -> None:
    seed = Seed.derive("daily 2026-11-29 classic")
    assert seed == Seed.derive("daily 2026-11-29 classic")
    assert seed != Seed.derive("daily 2026-11-30 classic")
    assert seed.data == hashlib.sha256(b"daily 2026-11-29 classic").digest()[:10]


@pytest.mark.parametrize(
    "text",
    ["AERU-KZ4J-VPG6-6AJD", "aeru-kz4j-vpg6-6ajd", "AERUKZ4JVPG66AJD", " AERU KZ4J VPG6 6AJD ",
     "AE-RU-KZ-4J-VP-G6-6A-JD", "aeruKZ4J-vpg6-6ajd"],
)
def test_a_share_code_reads_in_any_case_with_any_dashes_and_spaces(text: str) -> None:
    assert Seed.parse(text).data.hex() == "0123456789abcdef0123"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("G0OD-0000-0000-0000", "GOOD-OOOO-OOOO-OOOO"), ("1III-IIII-IIII-IIII", "IIII-IIII-IIII-IIII"),
     ("8BBB-BBBB-BBBB-BBBB", "BBBB-BBBB-BBBB-BBBB")],
)
def test_the_lookalike_digits_0_1_8_read_as_o_i_b(typed: str, meant: str) -> None:
    assert Seed.parse(typed) == Seed.parse(meant)


@pytest.mark.parametrize("text", ["", "   ", "---"])
def test_an_empty_share_code_is_refused_by_name(text: str) -> None:
    with pytest.raises(NotationError, match="empty") as caught:
        Seed.parse(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize("text", ["A!B9", "AERU-KZ4J-VPG6-6AJ9", "ÄERU", "AERU_KZ4J", "AB=="])
def test_a_character_outside_the_alphabet_is_refused_by_name(text: str) -> None:
    with pytest.raises(NotationError, match="letters A-Z and digits 2-7") as caught:
        Seed.parse(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    "text",
    ["\ufb01", "AERU\u3000KZ4J-VPG6-6AJD", "\u017fAAA", "AERU\u00a0KZ4J", "AERU\x1cKZ4J",
     "\uff21ERU-KZ4J-VPG6-6AJD", "AERU-KZ4J-VPG6-6AJ\u2167"],
    ids=["fi ligature", "ideographic space", "long s", "no-break space", "file separator",
         "fullwidth A", "roman numeral"],
)
def test_only_ascii_letters_digits_dashes_and_space_make_a_share_code(text: str) -> None:
    with pytest.raises(NotationError, match="letters A-Z and digits 2-7") as caught:
        Seed.parse(text)
    assert repr(text) in str(caught.value)


def test_a_long_share_code_is_quoted_cut_short_in_the_message() -> None:
    text = "\u00e9" * 5000
    with pytest.raises(NotationError, match="5000 characters") as caught:
        Seed.parse(text)
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize(
    "text", ["A", "ABC", "ABCDEF", "AERU-KZ4J-VPG6-6A", "AB", "AERU-KZ4J-VPG6-6AJ"]
)
def test_a_code_of_a_wrong_length_or_last_letter_is_refused_by_name(text: str) -> None:
    with pytest.raises(NotationError, match="too many or too few") as caught:
        Seed.parse(text)
    assert repr(text) in str(caught.value)


def test_the_commitment_is_the_sha256_of_the_seed_bytes_in_hex() -> None:
    seed = Seed(b"\x00" * 10)
    assert seed.commitment == hashlib.sha256(b"\x00" * 10).hexdigest()
    assert len(seed.commitment) == 64


def test_a_seed_needs_bytes_and_at_least_one() -> None:
    with pytest.raises(ValueError):
        Seed(b"")
    with pytest.raises(TypeError):
        Seed(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Seed("AERU")  # type: ignore[arg-type]


def test_a_seed_is_an_immutable_value() -> None:
    seed = Seed(b"abc")
    with pytest.raises(AttributeError):
        seed.data = b"x"  # type: ignore[misc]
    assert seed == Seed(bytearray(b"abc"))
    assert seed != b"abc"
    assert len({seed, Seed(b"abc"), Seed(b"abd")}) == 2
    assert eval(repr(seed)) == seed


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=24))
def test_every_seed_round_trips_through_its_share_code(data: bytes) -> None:
    seed = Seed(data)
    code = str(seed)
    assert Seed.parse(code) == seed
    assert Seed.parse(code.lower()) == seed
    assert Seed.parse(code.replace("-", " ")) == seed
    assert all(len(group) <= 4 for group in code.split("-"))


CODEISH = st.text(st.sampled_from("AERUKZ4JQaeq018-9 \t\u3000\ufb01\u017f=_"), max_size=18)


@settings(max_examples=400, deadline=None)
@given(st.one_of(CODEISH, st.text(max_size=20)))
@example("\ufb01")
def test_any_text_parses_to_a_seed_that_round_trips_or_raises_a_notation_error(
    text: str,
) -> None:
    try:
        seed = Seed.parse(text)
    except NotationError:
        return
    assert Seed.parse(str(seed)) == seed
    assert text.isascii()
