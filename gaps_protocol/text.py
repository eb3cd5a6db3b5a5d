"""One rule for the text people type that goes on the wire, in the server and both clients.

Names, actions, codes, seeds, tournament names, reasons and announcements are taken as
sent or refused: nothing is stripped or folded on the way, so what a player typed is what
others see and what the server compares. docs/protocol.md ("Text") states the rule; the
web page's ``server/web/text.js`` is its copy in JavaScript, and a test holds the two to
the same cases.

A text is refused, with a sentence naming the first problem, when it

- is empty;
- holds a character that is not printable: a control (NUL, ESC, tab, line feed, U+0085),
  a format character (a bidi override, a zero-width space), a surrogate, a private-use or
  unassigned code point, or a line or paragraph separator (U+2028, U+2029);
- holds a space other than U+0020: a no-break space, an ideographic space, a thin
  space... (docs/rules.md: "a no-break space is not a space");
- begins or ends with a space, or holds two spaces in a row.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from gaps_protocol.limits import UNPRINTABLE_CATEGORIES

#: The one space a text may hold, alone and between other characters.
SPACE: Final = " "


class BadText(ValueError):
    """A text that the rule refuses; its message says why, naming the character."""


def text_problem(text: str) -> str | None:
    """Why ``text`` is refused (a sentence without the field's name), or None."""
    if not text:
        return "is empty"
    if not text.isprintable() or not text.isascii():
        for position, char in enumerate(text, start=1):
            if char == SPACE:
                continue
            category = unicodedata.category(char)
            if category in UNPRINTABLE_CATEGORIES:
                return f"holds {_named(char)} at character {position}, which is not printable"
            if category == "Zs":
                return (
                    f"holds {_named(char)} at character {position}: the only space is"
                    " U+0020 SPACE"
                )
    if text[0] == SPACE:
        return "begins with a space"
    if text[-1] == SPACE:
        return "ends with a space"
    if SPACE * 2 in text:
        return "holds two spaces in a row"
    return None


def check_text(text: str) -> str:
    """``text`` itself if the rule takes it; else raise ``BadText`` saying why."""
    problem = text_problem(text)
    if problem is not None:
        raise BadText(f"{text!r} {problem}")
    return text


def _named(char: str) -> str:
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")
    return f"{code} {name}" if name else code
