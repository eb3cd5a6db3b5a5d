"""What every text notation of the engine shares: ASCII only, and refusals that quote.

Notation is ASCII (the suit symbols ♣ ♦ ♥ ♠ are the one exception, and only as a suit):
letters fold case in ASCII only, only ASCII whitespace is ignored, and numbers are ASCII
digits without a leading zero. So ``ſ``, ``ﬁ``, ``٣`` or an ideographic space are never
read as ``S``, ``FI``, ``3`` or a space, whatever Python's Unicode tables say.
"""

from __future__ import annotations

from typing import Final

from gaps.errors import NotationError

#: The whitespace notation ignores: space, tab, line feed, carriage return, form feed,
#: vertical tab. (``str.strip()`` would also take ASCII separators and Unicode spaces.)
SPACE: Final = " \t\n\r\f\v"

#: How much of a refused text an error message quotes.
QUOTED_CHARS: Final = 40


def quoted(text: str, *, max_chars: int = QUOTED_CHARS) -> str:
    """``repr(text)``, cut after ``max_chars`` characters so a message stays one line."""
    if len(text) <= max_chars:
        return repr(text)
    return f"{text[:max_chars]!r}... ({len(text)} characters)"


def number(digits: str, what: str, *, high: int) -> int:
    """``digits`` as a number 1..``high``: ASCII digits, no sign, no leading zero.

    The length is checked before ``int()``, which refuses more than a few thousand digits
    with a bare ``ValueError``.
    """
    if not (digits.isascii() and digits.isdigit()):
        raise NotationError(f"{what} {quoted(digits)} is not a number made of the digits 0-9")
    if len(digits) > 1 and digits[0] == "0":
        raise NotationError(f"{what} {quoted(digits)} has a leading zero")
    if len(digits) > len(str(high)):
        raise NotationError(f"{what} {quoted(digits)} is not in 1..{high}")
    value = int(digits)
    if not 1 <= value <= high:
        raise NotationError(f"{what} {value} is not in 1..{high}")
    return value
