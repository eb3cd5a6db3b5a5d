"""The level-3 bot ``search``: it searches the deal for its best position, plays its way
there, then redeals or stops by expected score.

It never comes back to a position it has been in since the last redeal: its search and
its wandering make onward moves only (``gaps.board``), and it keeps the positions it has
been in, for a planner that makes other moves too (``gaps.solver_bot`` plays the
solver's lines, which may).
"""

from __future__ import annotations

import random
from typing import Final

from gaps.board import Board, Plan, move_for
from gaps.game import Game
from gaps.lookahead import (
    REDEAL_SAMPLES,
    ROLLOUT_NODES,
    greedy_move,
    redeal_pays,
    rollout_greedy,
    rollout_search,
    search_deal,
)
from gaps.move import REDEAL, STOP, Action

__all__ = ["SEARCH_NODES", "SearchBot"]

#: The default node budget of each search of a deal.
SEARCH_NODES: Final = 10_000


class SearchBot:
    """Level 3: searches the deal for its best position; redeals or stops by expected score.

    ``max_nodes`` bounds each search of a deal; ``samples`` redeals, each played on by a
    search of ``rollout_nodes`` per deal, estimate what a redeal is worth. With
    ``play_to_win`` it redeals whenever it may instead (the most wins, as in matches won
    on time), not only when a redeal is expected to pay.
    """

    name = "search"

    def __init__(
        self,
        seed: int = 0,
        *,
        max_nodes: int = SEARCH_NODES,
        samples: int = REDEAL_SAMPLES,
        rollout_nodes: int = ROLLOUT_NODES,
        play_to_win: bool = False,
    ) -> None:
        self.rng = random.Random(seed)
        self.max_nodes = max_nodes
        self.samples = samples
        self.rollout = rollout_search(rollout_nodes) if rollout_nodes > 0 else rollout_greedy
        self.play_to_win = play_to_win
        if play_to_win:
            self.name = "search-win"
        self._plan: Plan = []  # the moves still to play, last first
        self._board: Board | None = None  # the position the plan expects
        self._deal = -1
        #: The Zobrist keys of the positions this deal has been in, the current one too.
        self._seen: set[int] = set()
        self._wander: bool | None = None

    def choose(self, game: Game) -> Action:
        grid = list(game.grid_codes())
        if game.redeals_used != self._deal:
            self._deal, self._plan, self._seen, self._wander = game.redeals_used, [], set(), None
        board = self._board
        if not self._plan or board is None or board.grid != grid:
            # A new board for a new plan: its gaps in index order, whatever moves made it.
            board = self._board = Board(grid)
            self._plan = []
        self._seen.add(board.key)
        if not self._plan:
            self._plan = self._plan_deal(board, game)[::-1]
        if self._plan:
            code, to = self._plan.pop()
            board.play(code, to)
            return move_for(code, to)
        # Nothing better to reach in this deal: redeal or stop.
        if game.can_redeal():
            return REDEAL if self._redeal_pays(game) else STOP
        if game.redeals_left <= 0:
            return STOP
        # Stuck short of blocked while a redeal waits for a blocked position (classic):
        # wander to new positions until blocked, if the redeal is worth it.
        if self._wander is None:
            self._wander = self._redeal_pays(game)
        move = greedy_move(board, self.rng, self._seen) if self._wander else None
        if move is None:
            return STOP
        board.play(*move)
        return move_for(*move)

    def _plan_deal(self, board: Board, game: Game) -> Plan:
        """The moves to play from ``board`` (``game``'s position) to the best position
        found in this deal; ``board`` is left as it was."""
        return search_deal(board, self.max_nodes)[1]

    def _redeal_pays(self, game: Game) -> bool:
        if self.play_to_win:
            return game.redeals_left > 0
        return redeal_pays(game, self.rng, samples=self.samples, rollout=self.rollout)
