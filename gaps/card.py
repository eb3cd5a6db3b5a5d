"""Cards: value types that parse and print round-trip.

A card is stored as a small integer ``code = suit_index * 13 + rank - 1`` (suits in the
order C, D, H, S; rank 1 is the Ace, 13 the King). The engine works on codes; ``Card``
is the public face of a code, and there is exactly one ``Card`` object per code.
"""

from __future__ import annotations

from typing import Final

from gaps.errors import NotationError
from gaps.notation import SPACE, quoted

SUITS: Final = "CDHS"
RANKS: Final = "A23456789TJQK"
SUIT_SYMBOLS: Final = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
SUIT_NAMES: Final = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}

ACE: Final = 1
TWO: Final = 2
KING: Final = 13


class Card:
    """One of the 52 cards. ``Card.parse("7H")``, ``str(card) == "7H"``."""

    __slots__ = ("code",)
    code: int

    def __new__(cls, code: int) -> Card:
        raise TypeError("use Card.parse('7H'), Card.of(rank, suit) or Card.from_code(code)")

    @staticmethod
    def from_code(code: int) -> Card:
        if not 0 <= code < 52:
            raise ValueError(f"card code {code!r} is not in 0..51")
        return _CARDS[code]

    @staticmethod
    def of(rank: int, suit: str) -> Card:
        """The card of ``rank`` (1 = Ace .. 13 = King) and ``suit`` (one of ``CDHS``)."""
        if not 1 <= rank <= 13 or suit not in SUITS or len(suit) != 1:
            raise NotationError(f"no card of rank {rank!r} and suit {suit!r}")
        return _CARDS[SUITS.index(suit) * 13 + rank - 1]

    @staticmethod
    def parse(text: str) -> Card:
        """Parse ``7H``, ``TD``, ``10d``, ``8♣`` (ASCII case and surrounding space ignored)."""
        cleaned = text.strip(SPACE)
        if len(cleaned) < 2:
            raise NotationError(
                f"{quoted(text)} is not a card: expected a rank and a suit, like 7H"
            )
        rank_text, suit_text = cleaned[:-1], cleaned[-1]
        # Upper-casing only ASCII keeps "ſ" (long s) from reading as S.
        suit = SUIT_SYMBOLS.get(suit_text) or (suit_text.upper() if suit_text.isascii() else "")
        if not suit or suit not in SUITS:
            raise NotationError(
                f"{quoted(text)} is not a card: suit {suit_text!r} is not one of C D H S"
            )
        rank = rank_text.upper() if rank_text.isascii() else ""
        if rank == "10":
            rank = "T"
        if len(rank) != 1 or rank not in RANKS:
            raise NotationError(
                f"{quoted(text)} is not a card: rank {quoted(rank_text)} is not one of"
                " A 2-9 T(10) J Q K"
            )
        return _CARDS[SUITS.index(suit) * 13 + RANKS.index(rank)]

    @property
    def rank(self) -> int:
        return self.code % 13 + 1

    @property
    def suit(self) -> str:
        return SUITS[self.code // 13]

    @property
    def symbol(self) -> str:
        """The suit as its symbol: ♣ ♦ ♥ ♠."""
        return "♣♦♥♠"[self.code // 13]

    def __str__(self) -> str:
        return RANKS[self.code % 13] + SUITS[self.code // 13]

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return self.code

    def __lt__(self, other: Card) -> bool:
        return self.code < other.code

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Card.from_code, (self.code,))


def _make(code: int) -> Card:
    card = object.__new__(Card)
    object.__setattr__(card, "code", code)
    return card


_CARDS: Final = tuple(_make(code) for code in range(52))

#: Every card, in code order.
DECK: Final = _CARDS
