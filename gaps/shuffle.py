"""The portable shuffle: SHA-256 in counter mode feeding an unbiased Fisher-Yates.

docs/rules.md specifies it byte for byte, with test vectors, so that any language can
reproduce a deal. Never replace it with ``random``: its output is not promised across
Python versions, and a deal must be the same everywhere, forever.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import MutableSequence
from typing import TypeVar

T = TypeVar("T")

_TWO_32 = 1 << 32
# The first draw >= limit is rejected: limit = 2**32 - 2**32 % n, for n below 64.
_LIMITS = tuple(_TWO_32 - _TWO_32 % n if n else 0 for n in range(64))


def stream_label(redeal_number: int) -> bytes:
    """The label of the stream for the deal (0) or for redeal number ``redeal_number``."""
    return b"deal" if redeal_number == 0 else b"redeal-%d" % redeal_number


def stream_words(seed: bytes, label: bytes, count: int) -> list[int]:
    """The first ``count`` 32-bit words of the stream of (``seed``, ``label``)."""
    words: list[int] = []
    _extend(words, hashlib.sha256(seed).digest() + label, (count + 7) // 8)
    return words[:count]


def shuffle(items: MutableSequence[T], seed: bytes, label: bytes) -> None:
    """Shuffle ``items`` in place with the stream of (``seed``, ``label``).

    Block ``i`` of the stream is ``SHA-256(SHA-256(seed) || label || i as 8 bytes
    big-endian)``; each block gives eight 32-bit big-endian words, used in order.
    A draw below ``n`` takes the next word ``x``, rejects it when
    ``x >= 2**32 - 2**32 % n`` and otherwise returns ``x % n``. Fisher-Yates runs
    ``i`` from ``len - 1`` down to 1 and swaps ``items[i]`` with ``items[draw below i+1]``.
    """
    prefix = hashlib.sha256(seed).digest() + label
    words: list[int] = []
    _extend(words, prefix, (len(items) + 6) // 8)
    used = 0
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = _LIMITS[n] if n < len(_LIMITS) else _TWO_32 - _TWO_32 % n
        if used == len(words):
            _extend(words, prefix, 1)
        word = words[used]
        used += 1
        while word >= limit:  # rare: probability n / 2**32
            if used == len(words):
                _extend(words, prefix, 1)
            word = words[used]
            used += 1
        j = word % n
        items[i], items[j] = items[j], items[i]


def _extend(words: list[int], prefix: bytes, blocks: int) -> None:
    """Append the stream's next ``blocks`` blocks to ``words``, eight words a block."""
    first = len(words) // 8
    data = b"".join(
        hashlib.sha256(prefix + counter.to_bytes(8, "big")).digest()
        for counter in range(first, first + blocks)
    )
    words.extend(struct.unpack(f">{8 * blocks}I", data))
