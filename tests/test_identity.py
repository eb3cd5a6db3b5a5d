"""server.identity: secret tokens, kept only as their SHA-256."""

from __future__ import annotations

import hashlib
import re

import pytest

from server.identity import MAX_TOKEN_LENGTH, is_token_text, new_token, token_hash


def test_tokens_are_unique() -> None:
    tokens = {new_token() for _ in range(1000)}
    assert len(tokens) == 1000


def test_a_token_is_long_enough_to_hold_32_random_bytes() -> None:
    # 32 bytes in URL-safe base64 without padding: 43 characters.
    for _ in range(50):
        assert len(new_token()) >= 43


def test_a_token_is_url_safe_text() -> None:
    for _ in range(50):
        assert re.fullmatch(r"[A-Za-z0-9_\-]+", new_token())


def test_a_token_fits_the_hello_requests_token_field() -> None:
    assert len(new_token()) <= 128


def test_a_token_hash_is_stable() -> None:
    token = new_token()
    assert token_hash(token) == token_hash(token)
    assert token_hash("abc") == token_hash("abc")


def test_a_token_hash_is_the_hex_sha256_of_the_token() -> None:
    assert token_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    assert token_hash("abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def test_a_token_hash_is_64_lower_case_hex_digits_that_fit_the_column() -> None:
    assert re.fullmatch(r"[0-9a-f]{64}", token_hash(new_token()))


def test_a_token_hash_is_not_the_token() -> None:
    token = new_token()
    assert token_hash(token) != token
    assert token not in token_hash(token)


def test_different_tokens_have_different_hashes() -> None:
    tokens = [new_token() for _ in range(200)]
    assert len({token_hash(token) for token in tokens}) == 200


def test_a_token_hash_reads_non_ascii_text_as_utf8() -> None:
    assert token_hash("zoë") == hashlib.sha256("zoë".encode()).hexdigest()


def test_every_new_token_is_token_text() -> None:
    for _ in range(200):
        assert is_token_text(new_token())


@pytest.mark.parametrize(
    "text",
    ["", " abc", "abc ", "a bc", "abc\n", "abc\t", "abc=", "a/b", "a+b", "abc\u00a0",
     "abc\u200b", "ab\x00", "zoë", "t" * (MAX_TOKEN_LENGTH + 1)],
)
def test_text_with_anything_but_url_safe_characters_is_no_token(text: str) -> None:
    assert not is_token_text(text)


def test_token_text_is_url_safe_characters_up_to_the_longest_a_client_may_send() -> None:
    assert is_token_text("aZ09-_")
    assert is_token_text("t" * MAX_TOKEN_LENGTH)
