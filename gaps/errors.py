"""The exceptions of the rules engine: one root, narrow subclasses.

Every message names the input that was refused, so a caller can show it as is.
"""

from __future__ import annotations


class GapsError(Exception):
    """Root of every error this package raises."""


class NotationError(GapsError, ValueError):
    """Text that does not parse as a card, slot, move, action, seed or ruleset."""


class StateFormatError(GapsError, ValueError):
    """Bytes or text that do not decode to a valid game state."""


class IllegalAction(GapsError):
    """An action the rules refuse in the current state; the state is left unchanged.

    ``reason`` is a stable machine-readable code (see ``REASONS``); the message says
    in words what was wrong with which card or slot.
    """

    def __init__(self, reason: str, message: str) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown reason {reason!r}")
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"IllegalAction({self.reason!r}, {self.message!r})"


#: Every reason an action can be refused for, with what it means.
REASONS: dict[str, str] = {
    "not_a_gap": "the destination slot holds a card",
    "dead_gap": "the destination gap is right of a King or of another gap",
    "wrong_card": "the destination gap accepts another card",
    "row_required": "a 2 can go to several rows: name one (2H>3)",
    "not_in_play": "Aces are removed from the game and never move",
    "redeal_not_allowed": "this ruleset allows no redeal now (not blocked, or none at all)",
    "no_redeals_left": "every redeal of the ruleset is used",
    "undo_not_allowed": "this ruleset has no undo",
    "nothing_to_undo": "no move since the start or the last redeal",
    "game_over": "the game has ended: won, lost or stopped",
}
