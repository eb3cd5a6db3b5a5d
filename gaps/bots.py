"""Bot players of four strengths, by level, and how a bot plays a game.

A bot is anything with ``choose(game) -> Action``: for a game that is not over it
returns a legal ``Move``, ``REDEAL`` or ``STOP`` (these bots never undo: they plan
instead). ``play_game(bot, game)`` asks it until the game is over.

* level 1, ``RandomBot``: a uniformly random legal move to a position new to this deal;
  when there is none, redeal if it can, else stop.
* level 2, ``GreedyBot``: the move that looks best one ply ahead (extend a preserved
  sequence, open the slot right after one, leave no dead gap, no idle 2-shuffles); when
  blocked, redeal only if sampled redeals played greedily gain more than the redeal
  costs.
* level 3, ``gaps.search_bot.SearchBot``: a depth-first search of the current deal for
  the reachable position with the most placed cards; it plays its way there, then
  redeals or stops, whichever has the higher expected score, estimated by playing out
  redeals it samples itself.
* level 4, ``gaps.solver_bot.SolverBot``: the same, but each deal is searched by the exact
  solver (``gaps.solver``) within a budget.

No bot comes back to a position it has been in since the last redeal: level 1 keeps the
positions it has been in and moves only to new ones; levels 2 and 3 make onward moves
only (``gaps.board`` shows that no sequence of them repeats a position, whatever the bot
remembers); level 4 plays the solver's lines cut short of any position it has been in,
and onward moves otherwise. So every bot ends every game.

No bot ever reads ``game.seed``: the seed decides future redeals and is the server's
secret. To guess what a redeal brings, a bot redeals the position under seeds of its
own drawing. A bot is deterministic given its seed and the game it is shown.
"""

from __future__ import annotations

import random
from typing import Final, Protocol

from gaps.board import Board, move_for
from gaps.game import Game
from gaps.lookahead import REDEAL_SAMPLES, greedy_move, redeal_pays, rollout_greedy
from gaps.move import REDEAL, STOP, Action
from gaps.search_bot import SearchBot
from gaps.solver_bot import SolverBot

__all__ = [
    "BOT_NAMES", "LEVELS", "MAX_ACTIONS", "Bot", "GreedyBot", "RandomBot",
    "SearchBot", "SolverBot", "bot_for_level", "bot_named", "play_game",
]

#: Safety net: a game that has taken this many actions is stopped by ``play_game``.
MAX_ACTIONS: Final = 20_000


class Bot(Protocol):
    """A player: ``choose`` returns a legal action for a game that is not over."""

    name: str

    def choose(self, game: Game) -> Action: ...


def play_game(bot: Bot, game: Game, *, max_actions: int = MAX_ACTIONS) -> list[Action]:
    """Let ``bot`` play ``game`` until it is over; returns the actions taken.

    Every action goes through ``Game.push``, so an illegal one raises ``IllegalAction``.
    A game still going after ``max_actions`` is stopped: a safety net for a bot of
    someone else's, since no bot here repeats a position.
    """
    actions: list[Action] = []
    while not game.is_over():
        action = bot.choose(game) if len(actions) < max_actions else STOP
        game.push(action)
        actions.append(action)
    return actions


class RandomBot:
    """Level 1: a uniformly random legal move to a position new to this deal; when there
    is none, redeal if it can, else stop."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self._deal = -1
        #: The Zobrist keys of the positions this deal has been in, the current one too.
        self._seen: set[int] = set()

    def choose(self, game: Game) -> Action:
        if game.redeals_used != self._deal:
            self._deal, self._seen = game.redeals_used, set()
        board = Board.of(game)
        self._seen.add(board.key)
        moves = []
        for move in game.legal_moves():
            undo = board.play(move.code, board.destination(move))
            if board.key not in self._seen:
                moves.append(move)
            board.take_back(undo)
        if moves:
            return moves[int(self.rng.random() * len(moves))]
        return REDEAL if game.can_redeal() else STOP


class GreedyBot:
    """Level 2: the best-looking move one ply ahead; a redeal only if it should pay."""

    name = "greedy"

    def __init__(self, seed: int = 0, *, samples: int = REDEAL_SAMPLES) -> None:
        self.rng = random.Random(seed)
        self.samples = samples

    def choose(self, game: Game) -> Action:
        move = greedy_move(Board.of(game), self.rng)
        if move is not None:
            return move_for(*move)
        if game.can_redeal() and redeal_pays(
            game, self.rng, samples=self.samples, rollout=rollout_greedy
        ):
            return REDEAL
        return STOP


BOT_NAMES: Final = ("random", "greedy", "search", "search-win", "solver")
#: The bot of each level, by name.
LEVELS: Final = {1: "random", 2: "greedy", 3: "search", 4: "solver"}


def bot_for_level(level: int, *, seed: int) -> Bot:
    """The bot of ``level``: 1 random, 2 greedy, 3 search, 4 solver."""
    if level not in LEVELS:
        raise ValueError(f"bot level {level!r} is not one of 1, 2, 3, 4")
    return bot_named(LEVELS[level], seed=seed)


def bot_named(name: str, *, seed: int) -> Bot:
    """A bot by name: ``random``, ``greedy``, ``search``, ``search-win`` (plays to win)
    or ``solver``."""
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot(seed)
    if name == "search":
        return SearchBot(seed)
    if name == "search-win":
        return SearchBot(seed, play_to_win=True)
    if name == "solver":
        return SolverBot(seed)
    raise ValueError(f"{name!r} is not a bot: expected one of {', '.join(BOT_NAMES)}")
