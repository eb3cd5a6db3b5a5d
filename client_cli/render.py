"""Rich text of what the client shows: cards with their suit symbols, actions in the
board's notation, bot marks, results, and the server's text made inert.

Pure functions; the board itself is ``client_cli.board``. The Textual widgets and the
plain command output both use them.
"""

from __future__ import annotations

import unicodedata
from typing import Final, Protocol

from rich.text import Text

from client_cli.palette import DARK, Palette
from gaps import Card

SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}

#: Characters a terminal may act on instead of showing: controls (ESC begins the
#: sequences that clear the screen or retitle the window), format characters (a bidi
#: override reverses what follows, zero-width ones hide), surrogates, private-use and
#: unassigned code points, line and paragraph separators.
UNPRINTABLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: What ``printable`` shows in their place.
REPLACEMENT: Final = "\ufffd"


def printable(value: object) -> str:
    """``str(value)`` safe to print: each character of ``UNPRINTABLE_CATEGORIES`` becomes
    U+FFFD. For every text from the server (names are the players'), however the server
    checked it."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(
        REPLACEMENT if unicodedata.category(char) in UNPRINTABLE_CATEGORIES else char
        for char in text
    )


def printable_text(value: object, style: str = "") -> Text:
    """A text from the server as ``Text`` of its ``printable`` characters: printed or drawn,
    it is shown as it is, never read as Rich or Textual markup (``[bold]`` stays
    ``[bold]``)."""
    return Text(printable(value), style=style)


#: What marks a bot's name wherever players are listed.
BOT_MARK: Final = "[bot]"
BOT_STYLE: Final = "#c090e0"


class Seated(Protocol):
    """A player entry: a seat, a standings, board or ranking row, a player page."""

    @property
    def bot(self) -> bool: ...


class Result(Protocol):
    """A ranking entry: how the game ended, and how the operators stand on it."""

    @property
    def end_reason(self) -> str | None: ...

    @property
    def review(self) -> str | None: ...


def is_bot(entry: Seated) -> bool:
    """Whether a player entry is a bot's: the server says so with ``bot: true``."""
    return entry.bot is True


def bot_mark(entry: Seated) -> str:
    """`` [bot]`` after a bot's name in plain text; nothing after a person's."""
    return f" {BOT_MARK}" if is_bot(entry) else ""


def append_bot_mark(text: Text, entry: Seated) -> Text:
    """``text`` (a name) with `` [bot]`` after it, dimmed, if ``entry`` is a bot's."""
    if is_bot(entry):
        text.append(f" {BOT_MARK}", style=BOT_STYLE)
    return text


#: What a result's ``review`` (docs/fair-play.md) says beside it; a result cleared, or
#: never flagged, says nothing.
REVIEW_WORDS = {
    "held": "under review",
    "voided": "voided",
    "suspended": "not counted (suspended)",
}


def review_words(entry: Result) -> str | None:
    """How a ranking entry's result stands with the operators, if it is not plain."""
    return REVIEW_WORDS.get(entry.review) if entry.review is not None else None


def result_words(entry: Result) -> str:
    """A ranking entry's end reason, with its review if it has one: ``stopped · under
    review``."""
    reason = printable(entry.end_reason)
    review = review_words(entry)
    return f"{reason} · {review}" if review else reason


def card_label(card: Card) -> str:
    """``10♥``, `` 8♣``: rank (10 for ten) and suit symbol, three characters wide."""
    rank = "10" if card.rank == 10 else str(card)[0]
    return f"{rank:>2}{SYMBOLS[card.suit]}"


def action_text(action: str, palette: Palette = DARK) -> Text:
    """An action as people read it: ``8C`` as ``8♣``, ``2H>3`` as ``2♥ → row 3``, and
    ``8C>1`` (any other card sent to column 1) as ``8♣ → r1c1``, as the board names it."""
    card_part, arrow, target = printable(action).partition(">")
    try:
        card = Card.parse(card_part)
    except ValueError:
        return Text(printable(action))
    text = Text()
    text.append(card_label(card).strip(), style=f"bold {palette.suit(card.suit)}")
    if arrow and target.isdigit():
        text.append(f" → row {target}" if card.rank == 2 else f" → r{target}c1")
    elif arrow:
        text.append(f" → {target}")
    return text
