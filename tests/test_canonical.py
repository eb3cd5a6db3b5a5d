"""gaps.canonical: the canonical JSON a signature covers (RFC 8785 on integer-only
documents), the bytes signed, key ids and base64url."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gaps.canonical import (
    MAX_INTEGER,
    NotCanonical,
    canonical_json,
    from_base64url,
    key_id,
    signed_bytes,
    to_base64url,
)


def test_members_are_sorted_and_nothing_is_spaced() -> None:
    document = {"b": [3, {"z": None, "a": True}], "a": "x", "c": False}
    assert canonical_json(document) == b'{"a":"x","b":[3,{"a":true,"z":null}],"c":false}'


def test_names_sort_by_utf16_code_units_not_by_code_points() -> None:
    """RFC 8785 sorts by UTF-16 code units: U+1F600 (surrogates D83D DE00) comes before
    U+FB01, whose code point is lower; U+0080 comes after "z"."""
    document = {"\ufb01": 1, "\U0001f600": 2, "z": 3, "\u0080": 4, "Z": 5}
    assert canonical_json(document).decode() == '{"Z":5,"z":3,"\u0080":4,"\U0001f600":2,"\ufb01":1}'


@pytest.mark.parametrize(("text", "written"), [
    ('a"b', r'"a\"b"'),
    ("back\\slash", r'"back\\slash"'),
    ("\b\t\n\f\r", r'"\b\t\n\f\r"'),
    ("\x00\x1f", r'"\u0000\u001f"'),
    ("\x7f é € 😀 /", '"\x7f é € 😀 /"'),  # beyond the controls: as is, in UTF-8
    ("\u2028", '"\u2028"'),
])
def test_strings_are_escaped_as_json_requires_and_no_more(text: str, written: str) -> None:
    assert canonical_json(text) == written.encode("utf-8")


@pytest.mark.parametrize("value", [0, -1, 600, MAX_INTEGER, -MAX_INTEGER])
def test_integers_are_written_as_their_digits(value: int) -> None:
    assert canonical_json(value) == str(value).encode()


@pytest.mark.parametrize(("value", "words"), [
    ({"t": 1.5}, "$.t is 1.5: a signed document holds integers only"),
    ({"t": [1.0]}, "$.t[0] is 1.0: a signed document holds integers only"),
    ({"big": MAX_INTEGER + 1}, "$.big is 9007199254740992, beyond the integers"),
    ({"name": "\ud800"}, "$.name holds a lone surrogate"),
    ({1: "x"}, "$ has the member name 1, which is no string"),
    ({"raw": b"x"}, "$.raw is a bytes, which JSON does not hold"),
])
def test_what_has_no_canonical_form_is_refused_naming_where(value: Any, words: str) -> None:
    with pytest.raises(NotCanonical) as refused:
        canonical_json(value)
    assert str(refused.value).startswith(words)


def test_a_document_nested_as_deep_as_json_allows_is_refused_not_a_crash() -> None:
    with pytest.raises(NotCanonical, match="nested too deep"):
        canonical_json(_nested(50_000))


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_booleans_are_not_integers() -> None:
    assert canonical_json([True, 1, False, 0]) == b"[true,1,false,0]"


def test_what_is_signed_is_the_document_without_its_signature() -> None:
    document = {"format": "x/1", "n": 1}
    signed = {**document, "signature": {"alg": "Ed25519", "key_id": "k", "value": "v"}}
    assert signed_bytes(signed) == signed_bytes(document) == b'{"format":"x/1","n":1}'
    with pytest.raises(NotCanonical, match="not a JSON object"):
        signed_bytes([1, 2])  # type: ignore[arg-type]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_INTEGER, MAX_INTEGER) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_the_canonical_form_reads_back_as_the_same_value(value: Any) -> None:
    assert json.loads(canonical_json(value)) == value


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=5))
def test_the_order_members_come_in_does_not_change_the_canonical_form(
    document: dict[str, Any],
) -> None:
    backwards = dict(reversed(list(document.items())))
    assert canonical_json(backwards) == canonical_json(document)
    assert canonical_json(json.loads(canonical_json(document))) == canonical_json(document)


def test_a_key_id_is_the_start_of_the_sha256_of_the_raw_key() -> None:
    # SHA-256 of 32 zero bytes is 66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925
    assert key_id(bytes(32)) == "66687aadf862bd77"


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xfe\xfd", bytes(range(64))])
def test_base64url_has_no_padding_and_reads_back(data: bytes) -> None:
    text = to_base64url(data)
    assert "=" not in text and "+" not in text and "/" not in text
    assert from_base64url(text) == data


@pytest.mark.parametrize("text", ["a", "ab!c", "é", "ab+/", "AA==", "abcde"])
def test_text_that_is_no_base64url_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not base64url"):
        from_base64url(text)
