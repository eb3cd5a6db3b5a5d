"""Gaps (Montana, Spaces, Addiction): the pure rules engine.

No I/O, no third-party dependencies. The server validates every action with it, the
client renders and pre-checks with it, and anyone can audit a finished match with it::

    >>> from gaps import Game, Seed
    >>> game = Game(Seed.derive("GAPS-ARENA-2026-TEST"), "classic")
    >>> moves = game.legal_moves()
    >>> game.play(moves[0])
    >>> game.moves_made
    1
"""

from gaps.card import Card
from gaps.errors import GapsError, IllegalAction, NotationError, StateFormatError
from gaps.game import GAP, Game
from gaps.move import Action, Move, Redeal, Stop, Undo, parse_action
from gaps.ruleset import RULESETS, Ruleset, RulesetName
from gaps.seed import Seed
from gaps.slot import Slot

__all__ = [
    "GAP", "RULESETS", "Action", "Card", "Game", "GapsError", "IllegalAction", "Move",
    "NotationError", "Redeal", "Ruleset", "RulesetName", "Seed", "Slot", "StateFormatError",
    "Stop", "Undo",
    "parse_action",
]
