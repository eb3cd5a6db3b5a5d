"""Par: the best final score of a deal over all lines through it and its redeals.

With the seed known, redeal k of a position is determined (``gaps.game.redealt_grid``),
so the game is a one-player puzzle of perfect information. ``par(seed, ruleset)`` (or
``par_of(game)`` from any position) searches each deal with ``gaps.solver.explore``
(the last deal, after which no redeal is left, with ``gaps.frontier.best_first``),
collects the positions a redeal may start from (blocked ones, or every one where the
ruleset redeals at any time), keyed by what the redeal keeps, and recurses into each
distinct redeal. A deal's value is the larger of stopping at its best position and the
best of its redeals; a redeal is not searched when even a win after it could not beat
what stopping already scores.

The result is exact when every search finished; otherwise ``Par.exact`` is False and
``score`` is a lower bound, reached by ``line`` (the ``search`` bot's line when that
scores more).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from gaps.board import ALL_PLACED
from gaps.board import move_for as _move_for
from gaps.bots import SearchBot, play_game
from gaps.frontier import best_first
from gaps.game import (
    _ROW_STARTS,
    BONUS_WIN_WITHOUT_REDEAL,
    POINTS_PER_REDEAL,
    Game,
    _row_template,
    redealt_grid,
)
from gaps.move import REDEAL, Action
from gaps.ruleset import RedealWhen, Ruleset
from gaps.seed import Seed
from gaps.solver import (
    MAX_MEMORY_MB,
    MAX_NODES,
    TIME_BUDGET_S,
    Budget,
    Exploration,
    explore,
)

__all__ = ["Par", "final_score", "par", "par_of"]

T = TypeVar("T")


def final_score(placed: int, redeals_used: int) -> int:
    """The score of a game that ends with ``placed`` cards after ``redeals_used`` redeals."""
    bonus = BONUS_WIN_WITHOUT_REDEAL if placed == ALL_PLACED and redeals_used == 0 else 0
    return placed + POINTS_PER_REDEAL * redeals_used + bonus


@dataclass(frozen=True)
class Par:
    """The best final score of a game, with a line that reaches it.

    ``score`` is exact when ``exact``; otherwise it is a lower bound (a budget ran out,
    ``exhausted`` names it). ``line`` (moves and redeals, from the position searched)
    ends with ``placed`` cards after ``redeals`` redeals in all; ``nodes`` counts the
    positions searched over every deal.
    """

    score: int
    placed: int
    redeals: int
    line: tuple[Action, ...]
    exact: bool
    nodes: int
    seconds: float
    exhausted: str | None = None

    def __str__(self) -> str:
        bound = "" if self.exact else f"at least {self.score} ({self.exhausted} budget ran out)"
        shown = str(self.score) if self.exact else bound
        return (
            f"par {shown}: {self.placed} placed, {self.redeals} redeals, "
            f"{len(self.line)} actions, {self.nodes} nodes, {self.seconds:.3f} s"
        )


def _signature(ruleset: Ruleset) -> Callable[[list[int]], object]:
    """What a redeal of a position depends on besides the seed: its rows' templates."""

    def signature(grid: list[int]) -> object:
        return tuple(tuple(_row_template(grid, start, ruleset)) for start in _ROW_STARTS)

    return signature


def _within_half(budget: Budget, search: Callable[[], T]) -> T:
    """What ``search`` finds with at most half of the nodes ``budget`` has left."""
    limit = budget.max_nodes
    budget.max_nodes = budget.nodes + max(1, (limit - budget.nodes) // 2)
    try:
        return search()
    finally:
        budget.max_nodes = limit
        if budget.exhausted == "nodes" and budget.nodes < limit:
            budget.exhausted = None  # only this search's share ran out


def _best(
    grid: list[int], ruleset: Ruleset, seed: Seed, redeals_used: int, budget: Budget
) -> tuple[int, int, int, list[Action], bool]:
    """(score, placed, redeals in all, line, exact) of the best play from this deal on."""
    redeal_left = ruleset.redeal_when is not RedealWhen.NEVER and redeals_used < ruleset.redeals
    if redeal_left:
        # A win is the deal's value (another redeal only costs), and the best-first
        # search finds one soonest, skipping what cannot be won; it cannot say where a
        # redeal may start, so without a win the depth-first search follows. Each gets
        # half of what is left, so that a deal too big to finish leaves nodes to its
        # redeals: an unfinished search still yields their lower bounds.
        placed, plan, _, _ = _within_half(
            budget, lambda: best_first(grid, budget, wins_only=True)
        )
        if placed == ALL_PLACED:
            won: list[Action] = [_move_for(code, to) for code, to in plan]
            return (final_score(ALL_PLACED, redeals_used), ALL_PLACED, redeals_used, won, True)
        found = _within_half(budget, lambda: explore(
            grid,
            budget,
            canonical=False,  # a redeal depends on the rows' order
            signature=_signature(ruleset),
            blocked_only=ruleset.redeal_when is RedealWhen.BLOCKED,
        ))
    else:  # the last deal: the best-first search finds wins sooner
        found = Exploration(*best_first(grid, budget))
    line: list[Action] = [_move_for(code, to) for code, to in found.line]
    best = (final_score(found.placed, redeals_used), found.placed, redeals_used, line)
    exact = found.complete
    if not redeal_left or found.placed == ALL_PLACED:
        return (*best, exact)
    # A redeal costs 5: after it, even a win scores no more than this.
    ceiling = final_score(ALL_PLACED, redeals_used + 1)
    for start, path in found.redeal_from.values():
        if best[0] >= ceiling:
            break
        if not budget.check():
            exact = False
            break
        dealt = redealt_grid(start, ruleset, seed, redeals_used + 1)
        score, placed, redeals, rest, rest_exact = _best(
            dealt, ruleset, seed, redeals_used + 1, budget
        )
        exact = exact and rest_exact
        if score > best[0]:
            moves: list[Action] = [_move_for(code, to) for code, to in path]
            best = (score, placed, redeals, [*moves, REDEAL, *rest])
    return (*best, exact)


def par_of(
    game: Game,
    *,
    max_nodes: int = MAX_NODES,
    time_budget_s: float = TIME_BUDGET_S,
    max_memory_mb: float = MAX_MEMORY_MB,
    clock: Callable[[], float] = time.monotonic,
    bot_floor: bool = True,
) -> Par:
    """The par of ``game`` from its current position, its seed deciding every redeal.

    The budgets are shared by all the deals searched. When they run out and
    ``bot_floor`` is set, the level-3 ``search`` bot plays the game too (outside the
    budgets; its own node limits bound it), and its line is the lower bound when it
    scores more. ``game`` is left as it was.
    """
    budget = Budget(
        max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb,
        clock=clock,
    )
    grid = list(game.grid_codes())
    line: list[Action]
    if game.is_over():
        score, placed, redeals, line, exact = game.score, game.placed, game.redeals_used, [], True
    else:
        score, placed, redeals, line, exact = _best(
            grid, game.ruleset, game.seed, game.redeals_used, budget
        )
    if not exact and bot_floor:
        played = game.copy()
        actions = play_game(SearchBot(0), played)
        if played.score > score:
            score, placed, redeals = played.score, played.placed, played.redeals_used
            line = actions
    return Par(
        score=score,
        placed=placed,
        redeals=redeals,
        line=tuple(line),
        exact=exact,
        nodes=budget.nodes,
        seconds=round(budget.seconds(), 6),
        exhausted=None if exact else budget.exhausted or "nodes",  # a deal's share of nodes
    )


def par(
    seed: Seed,
    ruleset: Ruleset | str = "classic",
    *,
    max_nodes: int = MAX_NODES,
    time_budget_s: float = TIME_BUDGET_S,
    max_memory_mb: float = MAX_MEMORY_MB,
    clock: Callable[[], float] = time.monotonic,
    bot_floor: bool = True,
) -> Par:
    """The par of the deal of ``seed`` under ``ruleset``: see ``par_of``."""
    return par_of(
        Game(seed, ruleset),
        max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb,
        clock=clock, bot_floor=bot_floor,
    )
