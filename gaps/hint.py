"""Hints: a useful next action for the position a player is looking at.

``hint(game)`` is the first step of a small search of the current deal (the SearchBot's,
with a budget that keeps it to a few milliseconds), or, when that search finds nothing
better to reach, ``REDEAL`` or ``STOP``, whichever has the higher expected score. It
is ``None`` once the game is over. It never reads ``game.seed`` (a client does not know
the match seed) and gives the same hint for the same position every time.

Following the hint never comes back to a position without a redeal in between, so it
always ends the game: a hinted move is an onward move (``gaps.board``), and no sequence
of onward moves repeats a position, however the hint chose each of them.
"""

from __future__ import annotations

from typing import Final

from gaps.game import Game
from gaps.move import Action
from gaps.search_bot import SearchBot

#: Positions the hint's search may visit: about 10-20 ms of work.
HINT_NODES: Final = 1_500
#: Redeals sampled (each played out greedily) to tell whether a redeal pays.
HINT_SAMPLES: Final = 6


def hint(game: Game) -> Action | None:
    """A useful legal action for ``game``, or ``None`` if the game is over."""
    if game.is_over():
        return None
    bot = SearchBot(0, max_nodes=HINT_NODES, samples=HINT_SAMPLES, rollout_nodes=0)
    return bot.choose(game)
