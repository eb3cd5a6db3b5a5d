"""The level-4 bot ``solver``: plays each deal by the solver's best line.

``SolverBot`` is the ``search`` bot (``gaps.search_bot.SearchBot``) with another way to plan a
deal: it asks ``gaps.solver.solve`` for the line that places the most cards, within a
node and time budget per solve. When the solve finishes (``won`` or ``lost``) the line is
the best there is, and the deal is not searched again; its tails are then shortened
(``gaps.shortest.shorten_tails``, within another such budget), so that the bot finishes
a race in fewer moves. When the budget runs out
(``unknown``), it plays whichever places more of the solver's best line so far and the
``search`` bot's line, and solves again from where that line ends, until a solve finds
nothing better.

The solver tries every legal move, not only the onward ones (``gaps.board``), so the bot
cuts a line short of any position it has been in since the last redeal, and plans again
from there: like every bot, it never comes back to one.

Once a deal is played out it redeals or stops exactly like the ``search`` bot: by
expected score, from redeals it samples under seeds of its own drawing. It never reads
``game.seed`` (the server's secret): the solver reads only the grid.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from gaps.board import Board, Plan
from gaps.frontier import COMPILED
from gaps.game import Game
from gaps.lookahead import REDEAL_SAMPLES, ROLLOUT_NODES, search_deal
from gaps.move import Move
from gaps.search_bot import SEARCH_NODES, SearchBot
from gaps.shortest import shorten_tails
from gaps.solver import Budget, solve

__all__ = ["SOLVE_NODES", "SOLVE_TIME_S", "SolverBot"]

#: The default budget of one solve: positions (about 1 s with the compiled core, 10-20 s
#: in Python, where the node budget is therefore ten times smaller), seconds, MB of tables.
SOLVE_NODES: Final = 1_000_000 if COMPILED else 100_000
SOLVE_TIME_S: Final = 10.0
SOLVE_MEMORY_MB: Final = 200.0


class SolverBot(SearchBot):
    """Level 4: each deal planned by the solver; redeals or stops by expected score.

    Each solve gets ``solve_nodes`` positions, ``solve_time_s`` seconds (by ``clock``)
    and about ``solve_memory_mb`` MB. ``search_nodes`` is the ``search`` bot's budget for
    its line when a solve runs out; ``samples`` and ``rollout_nodes`` size the redeal
    estimate, as for ``SearchBot``. Deterministic given its seed when the node budget
    (not the time budget) is the one that runs out.
    """

    name = "solver"

    def __init__(
        self,
        seed: int = 0,
        *,
        solve_nodes: int = SOLVE_NODES,
        solve_time_s: float = SOLVE_TIME_S,
        solve_memory_mb: float = SOLVE_MEMORY_MB,
        search_nodes: int = SEARCH_NODES,
        samples: int = REDEAL_SAMPLES,
        rollout_nodes: int = ROLLOUT_NODES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            seed, max_nodes=search_nodes, samples=samples, rollout_nodes=rollout_nodes
        )
        self.solve_nodes = solve_nodes
        self.solve_time_s = solve_time_s
        self.solve_memory_mb = solve_memory_mb
        self.clock = clock
        #: The deal (redeals used) in which nothing better is left to find.
        self._settled_deal = -1
        #: Solves run, and how many finished (exact), for measurements.
        self.solves = 0
        self.exact_solves = 0

    def _plan_deal(self, board: Board, game: Game) -> Plan:
        if self._settled_deal == game.redeals_used:
            return []
        verdict = solve(
            game,
            max_nodes=self.solve_nodes,
            time_budget_s=self.solve_time_s,
            max_memory_mb=self.solve_memory_mb,
            clock=self.clock,
        )
        self.solves += 1
        plan, placed = _plan_of(board, verdict.line), verdict.placed
        if verdict.exact:
            self.exact_solves += 1
            # The same result in fewer moves finishes a race sooner.
            plan, _ = shorten_tails(
                list(game.grid_codes()), placed, plan,
                Budget(
                    max_nodes=self.solve_nodes, time_budget_s=self.solve_time_s,
                    max_memory_mb=self.solve_memory_mb, clock=self.clock,
                ),
            )
            # Nothing reachable from here places more, nor from anywhere this line or
            # any later move of this deal leads (all reachable from here).
            self._settled_deal = game.redeals_used
        else:
            searched, line = search_deal(board, self.max_nodes)
            if searched > placed:
                plan, placed = line, searched
            if placed <= board.placed:
                self._settled_deal = game.redeals_used  # neither finds anything better
        onward = self._unseen_prefix(board, plan)
        if len(onward) < len(plan):
            # The line comes back to a position this deal has been in (the solver tries
            # every legal move, not only onward ones): play up to there, plan again then.
            self._settled_deal = -1
        return onward

    def _unseen_prefix(self, board: Board, plan: Plan) -> Plan:
        """``plan`` up to its first move into a position this deal has been in, or one
        the plan has passed; ``board`` is left as it was."""
        passed = set(self._seen)
        undos = []
        for code, to in plan:
            undo = board.play(code, to)
            if board.key in passed:
                board.take_back(undo)
                break
            undos.append(undo)
            passed.add(board.key)
        kept = len(undos)
        while undos:
            board.take_back(undos.pop())
        return plan[:kept]


def _plan_of(board: Board, line: tuple[Move, ...]) -> Plan:
    """``line`` as (card code, destination index) pairs from ``board`` (left as it was)."""
    plan: Plan = []
    undos = []
    for move in line:
        to = board.destination(move)
        plan.append((move.code, to))
        undos.append(board.play(move.code, to))
    for undo in reversed(undos):
        board.take_back(undo)
    return plan
