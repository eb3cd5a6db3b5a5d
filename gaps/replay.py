"""Replay and verify: rebuild a game from (seed, ruleset, actions).

This is how a finished match is audited: the server publishes the seed and every
action, and anyone recomputes every score with this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gaps.errors import IllegalAction
from gaps.game import Game
from gaps.move import Action, parse_action
from gaps.ruleset import Ruleset
from gaps.seed import Seed


@dataclass(frozen=True)
class Replay:
    """What a replay found: the game as far as it went, and the first refused action."""

    game: Game
    applied: int
    error: IllegalAction | None = None
    failed_action: Action | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def score(self) -> int:
        return self.game.score


def replay(seed: Seed, ruleset: Ruleset | str, actions: Iterable[Action | str]) -> Replay:
    """Apply ``actions`` (objects or text like ``8C``, ``redeal``) to a fresh deal.

    Stops at the first illegal action and reports it with its index (``applied``);
    text that does not parse raises ``NotationError``.
    """
    game = Game(seed, ruleset)
    applied = 0
    for item in actions:
        action = parse_action(item) if isinstance(item, str) else item
        try:
            game.push(action)
        except IllegalAction as error:
            return Replay(game, applied, error, action)
        applied += 1
    return Replay(game, applied)
