"""Messages in the board's notation: ``10♥``, ``r1c13``, as the screen draws them.

The rules engine (and the server, which speaks with its words) names cards by their
codes (``TH``, ``9H``); the board shows ``10♥``, ``9♥``. ``board_words`` rewrites a
refusal into the board's notation, and says plainly what a few refusals mean;
``typed_error`` explains why a line typed on the screen is not an action at all.
"""

from __future__ import annotations

import re
from typing import Final

from client_cli.render import card_label, printable
from gaps import Card, NotationError

#: A card code standing alone: ``TH``, ``9h``, ``QS`` (not inside a longer word).
CARD_CODE: Final = re.compile(r"(?<![\w♣♦♥♠])([2-9TJQKA])([CDHS])(?![\w♣♦♥♠])")
#: The engine's words for a card typed where it already stands.
IN_PLACE: Final = re.compile(
    r"^(?P<card>\S+): the slot right of (?P<left>\S+) \((?P<slot>r\d+c\d+)\) holds "
    r"(?P<occupant>\S+), not a gap$")
#: The engine's words for a card whose left neighbour ends a row.
AT_ROW_END: Final = re.compile(
    r"^(?P<card>\S+): (?P<left>\S+) stands in column 13, so \S+ has no slot to go to$")
#: The commands that may be typed, alone.
COMMANDS: Final = ("redeal", "undo", "stop", "help", "quit")
#: What a typed line may be.
EXAMPLES: Final = "a card (8c, 10h), a 2 and its row (2h>3), a slot (8c>r2c6), redeal, undo, stop"


def _label(match: re.Match[str]) -> str:
    return card_label(Card.parse(match.group(0))).strip()


def board_words(message: str) -> str:
    """``message`` (the engine's or the server's) with every card code in the board's
    notation; a move that cannot go anywhere says why in plain words."""
    text = printable(message)
    in_place = IN_PLACE.match(text)
    if in_place and in_place["card"] == in_place["occupant"]:
        return CARD_CODE.sub(_label, f"{in_place['card']} is already in place, right of "
                                     f"{in_place['left']} ({in_place['slot']})")
    at_end = AT_ROW_END.match(text)
    if at_end:
        return CARD_CODE.sub(_label, f"{at_end['card']} has no slot: {at_end['left']} ends its "
                                     "row, in column 13")
    return CARD_CODE.sub(_label, text)


def typed_error(text: str, error: NotationError) -> str:
    """Why ``text``, typed on the screen, is not an action (``error`` is the engine's)."""
    shown = printable(text)
    first, _, rest = shown.partition(" ")
    if first.lower() in COMMANDS and rest.strip():
        return f"{shown!r} is not an action: type {first.lower()} alone"
    if not shown[:1].isdigit() and shown[:1].lower() not in "tjqka":
        return f"{shown!r} is not an action: type {EXAMPLES}"
    return board_words(str(error))
