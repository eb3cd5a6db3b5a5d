"""The portable shuffle: SHA-256 in counter mode feeding an unbiased Fisher-Yates.

docs/rules.md specifies it byte for byte, with test vectors, so that any language can
reproduce a deal. Never replace it with ``random``: its output is not promised across
Python versions, and a deal must be the same everywhere, forever.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import MutableSequence
from typing import Final, TypeVar

T = TypeVar("T")

_TWO_32: Final = 1 << 32
#: Lists up to this long take the fast path of ``shuffle``.
_FAST_SIZE: Final = 64
# Only a word holding these bytes can be rejected by a draw below n <= _FAST_SIZE.
_MAYBE_REJECTED: Final = b"\xff\xff\xff"
_COUNTERS: Final = tuple(counter.to_bytes(8, "big") for counter in range(_FAST_SIZE))


def stream_label(redeal_number: int) -> bytes:
    """The label of the stream for the deal (0) or for redeal number ``redeal_number``."""
    return b"deal" if redeal_number == 0 else b"redeal-%d" % redeal_number


def stream_words(seed: bytes, label: bytes, count: int) -> list[int]:
    """The first ``count`` 32-bit words of the stream of (``seed``, ``label``)."""
    return list(_blocks(hashlib.sha256(seed).digest() + label, 0, (count + 7) // 8)[:count])


def shuffle(items: MutableSequence[T], seed: bytes, label: bytes) -> None:
    """Shuffle ``items`` in place with the stream of (``seed``, ``label``).

    Block ``i`` of the stream is ``SHA-256(SHA-256(seed) || label || i as 8 bytes
    big-endian)``; each block gives eight 32-bit big-endian words, used in order.
    A draw below ``n`` takes the next word ``x``, rejects it when
    ``x >= 2**32 - 2**32 % n`` and otherwise returns ``x % n``. Fisher-Yates runs
    ``i`` from ``len - 1`` down to 1 and swaps ``items[i]`` with ``items[draw below i+1]``.
    """
    size = len(items)
    prefix = hashlib.sha256(seed).digest() + label
    if size <= _FAST_SIZE:
        # Every deal takes this path. The bound 2**32 - 2**32 % n is at least
        # 2**32 - 64 = 0xFFFFFFC0 for n <= 64, so when no word starts with three 0xFF
        # bytes nothing is rejected, and word k is simply the draw of step k.
        draws = size - 1
        data = _stream_bytes(prefix, 0, (draws + 7) // 8)
        if _MAYBE_REJECTED not in data[: 4 * draws]:
            words = struct.unpack(f">{len(data) // 4}I", data)  # a few past the draws
            for i, word in zip(range(draws, 0, -1), words, strict=False):
                j = word % (i + 1)
                items[i], items[j] = items[j], items[i]
            return
    _shuffle_drawing_one_by_one(items, prefix)


def _shuffle_drawing_one_by_one(items: MutableSequence[T], prefix: bytes) -> None:
    """``shuffle`` word by word, rejecting as specified: long lists and rare words."""
    words: list[int] = []
    used = 0
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = _TWO_32 - _TWO_32 % n
        word = limit
        while word >= limit:  # rare: probability n / 2**32
            if used == len(words):
                words.extend(_blocks(prefix, len(words) // 8, 1))
            word = words[used]
            used += 1
        j = word % n
        items[i], items[j] = items[j], items[i]


def _blocks(prefix: bytes, first: int, count: int) -> tuple[int, ...]:
    """The words of blocks ``first`` to ``first + count - 1`` of the stream of ``prefix``."""
    return struct.unpack(f">{8 * count}I", _stream_bytes(prefix, first, count))


def _stream_bytes(prefix: bytes, first: int, count: int) -> bytes:
    """Blocks ``first`` to ``first + count - 1`` of the stream of ``prefix``, as bytes."""
    # Copying a hash of the prefix is cheaper than hashing the prefix again per block.
    hashed_prefix = hashlib.sha256(prefix)
    blocks = []
    for counter in range(first, first + count):
        block = hashed_prefix.copy()
        block.update(_COUNTERS[counter] if counter < len(_COUNTERS) else counter.to_bytes(8, "big"))
        blocks.append(block.digest())
    return b"".join(blocks)
