"""Actions a player takes: a move, a redeal, an undo or a stop, with their text notation.

Text notation (one way to print, a little leeway to parse):

* ``8C``: the 8 of clubs into its only possible gap, the one right of the 7 of clubs.
* ``2H>3``: the 2 of hearts into column 1 of row 3 (a 2 always needs its row).
* ``8C>r2c6``: a card into a named slot; the rules then check that slot.
* ``redeal``, ``undo``, ``stop``.
"""

from __future__ import annotations

from typing import Final, Union

from gaps.card import DECK, TWO, Card
from gaps.errors import NotationError
from gaps.notation import SPACE, number, quoted
from gaps.slot import ROWS, Slot


class Move:
    """A card into a gap. ``to`` is None for the card's only possible gap."""

    __slots__ = ("card", "to", "code", "to_index")
    card: Card
    to: Slot | None
    code: int
    to_index: int  # -1 when ``to`` is None; kept flat for the engine's hot path

    def __init__(self, card: Card, to: Slot | None = None) -> None:
        if to is not None:
            to = Slot.checked(to.row, to.column)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "code", card.code)
        object.__setattr__(self, "to_index", -1 if to is None else to.index)

    @staticmethod
    def parse(text: str) -> Move:
        """Parse ``8C``, ``2H>3`` or ``8C>r2c6``."""
        card_text, arrow, target = text.strip(SPACE).partition(">")
        if not card_text.strip(SPACE):
            raise NotationError(
                f"{quoted(text)} is not a move: expected a card, like 8C or 2H>3"
            )
        try:
            card = Card.parse(card_text)
            if not arrow:
                return Move(card)
            target = target.strip(SPACE)
            if target[:1].isdigit():  # a row number: column 1 of that row
                return Move(card, Slot(number(target, "row", high=ROWS), 1))
            return Move(card, Slot.parse(target))
        except NotationError as error:
            raise NotationError(f"{quoted(text)} is not a move: {error}") from None

    @property
    def is_two(self) -> bool:
        return self.card.rank == TWO

    def __str__(self) -> str:
        if self.to is None:
            return str(self.card)
        if self.to.column == 1:
            return f"{self.card}>{self.to.row}"
        return f"{self.card}>{self.to}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Move) and self.code == other.code and self.to_index == other.to_index
        )

    def __hash__(self) -> int:
        return hash((self.code, self.to_index))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Move is immutable")


class _Word:
    """An action without arguments, printed and parsed as one word."""

    __slots__ = ()
    word: str = ""

    def __str__(self) -> str:
        return self.word

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(self.word)


class Redeal(_Word):
    """Collect the cards not preserved, shuffle and deal them again (costs 5 points)."""

    __slots__ = ()
    word = "redeal"


class Undo(_Word):
    """Take back the last move since the last redeal (never a redeal itself)."""

    __slots__ = ()
    word = "undo"


class Stop(_Word):
    """End the game now; the score stands."""

    __slots__ = ()
    word = "stop"


Action = Union[Move, Redeal, Undo, Stop]

REDEAL: Final = Redeal()
UNDO: Final = Undo()
STOP: Final = Stop()
_WORDS: Final[dict[str, Action]] = {"redeal": REDEAL, "undo": UNDO, "stop": STOP}


def parse_action(text: str) -> Action:
    """Parse any action: ``redeal``, ``undo``, ``stop`` or a move (``8C``, ``2H>3``)."""
    word = _WORDS.get(text.strip(SPACE).lower()) if text.isascii() else None
    if word is not None:
        return word
    return Move.parse(text)


# Interned moves, so that listing legal moves allocates nothing.
#: ``AUTO_MOVES[code]``: the card of that code into its only possible gap.
AUTO_MOVES: Final = tuple(Move(card) for card in DECK)
#: ``TWO_MOVES[code][row - 1]``: a 2 into column 1 of a row (empty tuple for other ranks).
TWO_MOVES: Final = tuple(
    tuple(Move(card, Slot(row, 1)) for row in range(1, 5)) if card.rank == TWO else ()
    for card in DECK
)
