"""Seeds: the bytes a deal is drawn from, shown to players as a share code."""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from typing import Final

from gaps.errors import NotationError
from gaps.notation import SPACE, quoted

#: Bytes of a generated seed: 80 bits, 16 characters of share code.
SEED_BYTES: Final = 10

_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

# Characters people mistype for the base32 alphabet (which has no 0, 1 or 8).
_LOOKALIKES: Final = str.maketrans({"0": "O", "1": "I", "8": "B"})
# What a share code may hold before case folding; anything else is refused by name.
_READABLE: Final = frozenset(_ALPHABET + _ALPHABET.lower() + "018")
_IGNORED: Final = str.maketrans("", "", SPACE + "-")


class Seed:
    """The seed of a deal. ``str(seed)`` is its share code, ``Seed.parse`` reads it back."""

    __slots__ = ("data",)
    data: bytes

    def __init__(self, data: bytes) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"a seed is bytes, not {type(data).__name__}")
        if not data:
            raise ValueError("a seed needs at least one byte")
        object.__setattr__(self, "data", bytes(data))

    @staticmethod
    def generate() -> Seed:
        """A fresh seed from the operating system's secure random source."""
        return Seed(secrets.token_bytes(SEED_BYTES))

    @staticmethod
    def derive(text: str) -> Seed:
        """A seed fixed by ``text`` (for example a daily challenge's date and ruleset)."""
        return Seed(hashlib.sha256(text.encode()).digest()[:SEED_BYTES])

    @staticmethod
    def parse(code: str) -> Seed:
        """Read a share code: base32 letters, any ASCII case, dashes and spaces ignored."""
        letters = code.translate(_IGNORED)
        if not letters:
            raise NotationError(f"{quoted(code)} is not a share code: it is empty")
        # Checked before upper-casing, which would read "ﬁ" as "FI" and "ſ" as "S".
        bad = sorted(set(letters) - _READABLE)
        if bad:
            raise NotationError(
                f"{quoted(code)} is not a share code: {quoted(''.join(bad))} is not among"
                " the letters A-Z and digits 2-7"
            )
        letters = letters.upper().translate(_LOOKALIKES)
        padded = letters + "=" * (-len(letters) % 8)
        try:
            data = base64.b32decode(padded)
        except (binascii.Error, ValueError):
            data = b""
        if not data or base64.b32encode(data).decode().rstrip("=") != letters:
            raise NotationError(
                f"{quoted(code)} is not a share code: it has a letter too many or too few"
                " (or a mistyped last letter)"
            )
        return Seed(data)

    @property
    def commitment(self) -> str:
        """SHA-256 of the seed bytes, hex: published before the seed is revealed."""
        return hashlib.sha256(self.data).hexdigest()

    def __str__(self) -> str:
        letters = base64.b32encode(self.data).decode().rstrip("=")
        return "-".join(letters[i : i + 4] for i in range(0, len(letters), 4))

    def __repr__(self) -> str:
        return f"Seed.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Seed) and self.data == other.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Seed is immutable")
