"""The portable shuffle: the SHA-256 stream, rejection sampling, Fisher-Yates from the end."""

from __future__ import annotations

import hashlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gaps.shuffle
from gaps.shuffle import shuffle, stream_label, stream_words


def reference_words(seed: bytes, label: bytes, count: int) -> list[int]:
    key = hashlib.sha256(seed).digest()
    words = []
    for block in itertools.count():
        digest = hashlib.sha256(key + label + block.to_bytes(8, "big")).digest()
        words += [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4)]
        if len(words) >= count:
            return words[:count]
    raise AssertionError("unreachable")


def test_the_deal_stream_is_labelled_deal_and_redeal_k_is_labelled_redeal_k() -> None:
    assert stream_label(0) == b"deal"
    assert stream_label(1) == b"redeal-1"
    assert stream_label(3) == b"redeal-3"
    assert stream_label(12) == b"redeal-12"


@pytest.mark.parametrize("count", [0, 1, 8, 9, 17, 51])
def test_stream_words_are_sha256_of_hashed_seed_label_and_counter(count: int) -> None:
    assert stream_words(b"seed", b"deal", count) == reference_words(b"seed", b"deal", count)


def test_the_stream_depends_on_seed_and_label() -> None:
    first = stream_words(b"seed", b"deal", 8)
    assert stream_words(b"seed", b"redeal-1", 8) != first
    assert stream_words(b"seeds", b"deal", 8) != first


def test_a_shuffle_is_a_permutation_fixed_by_seed_and_label() -> None:
    items = list(range(52))
    shuffle(items, b"seed", b"deal")
    again = list(range(52))
    shuffle(again, b"seed", b"deal")
    assert items == again
    assert sorted(items) == list(range(52))
    assert items != list(range(52))
    other = list(range(52))
    shuffle(other, b"seed", b"redeal-1")
    assert other != items


def test_short_lists_are_left_as_they_are() -> None:
    empty: list[int] = []
    shuffle(empty, b"s", b"deal")
    one = [7]
    shuffle(one, b"s", b"deal")
    assert (empty, one) == ([], [7])


def fake_stream(monkeypatch: pytest.MonkeyPatch, words: list[int]) -> None:
    """Make the shuffle draw ``words`` (then zeros) instead of the SHA-256 stream."""
    stream = words + [0] * 200

    def stream_bytes(prefix: bytes, first: int, count: int) -> bytes:
        return b"".join(word.to_bytes(4, "big") for word in stream[8 * first : 8 * (first + count)])

    monkeypatch.setattr(gaps.shuffle, "_stream_bytes", stream_bytes)


def test_fisher_yates_runs_from_the_end_and_draws_word_mod_i_plus_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # i = 3: j = 5 % 4 = 1; i = 2: j = 7 % 3 = 1; i = 1: j = 2 % 2 = 0.
    fake_stream(monkeypatch, [5, 7, 2])
    items = ["a", "b", "c", "d"]
    shuffle(items, b"", b"")
    # [a b c d] -> swap 3,1 -> [a d c b] -> swap 2,1 -> [a c d b] -> swap 1,0 -> [c a d b]
    assert items == ["c", "a", "d", "b"]


def test_a_word_at_or_above_the_limit_is_rejected_and_the_next_word_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # n = 3: limit = 2**32 - 2**32 % 3 = 2**32 - 1, so 0xFFFFFFFF is rejected.
    fake_stream(monkeypatch, [0xFFFFFFFF, 0xFFFFFFFF, 1, 1])
    items = [0, 1, 2]
    shuffle(items, b"", b"")
    # i = 2: two rejections, then 1 % 3 = 1 -> [0 2 1]; i = 1: 1 % 2 = 1 -> unchanged.
    assert items == [0, 2, 1]


def test_the_word_just_below_the_limit_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = 2**32 - 2**32 % 3
    fake_stream(monkeypatch, [limit - 1, 0])
    items = [0, 1, 2]
    shuffle(items, b"", b"")
    # i = 2: (limit - 1) % 3 = 2 -> no swap; i = 1: 0 % 2 = 0 -> swap 1 and 0.
    assert (limit - 1) % 3 == 2
    assert items == [1, 0, 2]


def test_every_permutation_of_three_items_comes_out() -> None:
    seen = set()
    for label in range(200):
        items = [0, 1, 2]
        shuffle(items, b"uniform", b"%d" % label)
        seen.add(tuple(items))
    assert len(seen) == 6


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=16), st.binary(max_size=12), st.integers(0, 130))
def test_the_shuffle_matches_the_reference_from_the_spec(
    seed: bytes, label: bytes, length: int
) -> None:
    items = list(range(length))
    shuffle(items, seed, label)
    words = iter(reference_words(seed, label, 4 * length + 16))
    expected = list(range(length))
    for i in range(length - 1, 0, -1):
        x = next(words)
        while x >= 2**32 - 2**32 % (i + 1):
            x = next(words)
        j = x % (i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert items == expected


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=16), st.integers(0, 64))
def test_drawing_all_words_at_once_shuffles_as_drawing_them_one_by_one(
    seed: bytes, length: int
) -> None:
    at_once = list(range(length))
    shuffle(at_once, seed, b"deal")
    one_by_one = list(range(length))
    gaps.shuffle._shuffle_drawing_one_by_one(
        one_by_one, hashlib.sha256(seed).digest() + b"deal"
    )
    assert at_once == one_by_one
