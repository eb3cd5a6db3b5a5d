"""What the bots and the hint look ahead with: a search of one deal, a greedy walk, and
the expected score of a redeal, estimated from redeals sampled under seeds of their own.

Every move these play is an onward move (``gaps.board``): no walk here comes back to a
position it has left.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Final, Protocol

from gaps.board import ALL_PLACED, Board, Plan
from gaps.game import Game, redealt_grid
from gaps.ruleset import RedealWhen, Ruleset
from gaps.seed import SEED_BYTES, Seed

__all__ = [
    "REDEAL_COST", "REDEAL_SAMPLES", "ROLLOUT_NODES", "Rollout", "expected_after_redeal",
    "final_score", "greedy_deal", "greedy_move", "redeal_pays", "rollout_greedy",
    "rollout_search", "search_deal",
]

#: Points a redeal costs (the ruled -5 per redeal).
REDEAL_COST: Final = 5
#: Bonus for a win without redeal.
WIN_BONUS: Final = 10
#: Redeals sampled to estimate what a redeal is worth, and the search budget per deal of
#: each sample played on by a search.
REDEAL_SAMPLES: Final = 8
ROLLOUT_NODES: Final = 300


def search_deal(board: Board, max_nodes: int) -> tuple[int, Plan]:
    """The best position of this deal that a search of ``max_nodes`` positions finds.

    Depth-first, best-looking move first, no position visited twice (a transposition
    table keyed on the grid). A position's worth is its placed cards, ties going to a
    blocked one (a classic redeal needs a blocked position); a win ends the search.
    Returns the placed count of the best position and the moves that reach it from
    ``board``, which is left as it was.
    """
    seen = {board.key}
    best_rank = (board.placed, board.is_blocked())
    best: Plan = []
    if best_rank[0] == ALL_PLACED:
        return ALL_PLACED, best
    path: Plan = []
    undos: list[tuple[int, int, int, int]] = []
    stack = [board.ordered_moves()]
    nodes = 0
    while stack:
        pending = stack[-1]
        if not pending:
            stack.pop()
            if undos:
                board.take_back(undos.pop())
                path.pop()
            continue
        code, to = pending.pop()
        undo = board.play(code, to)
        if board.key in seen:
            board.take_back(undo)
            continue
        seen.add(board.key)
        nodes += 1
        path.append((code, to))
        undos.append(undo)
        placed = board.placed
        children = board.ordered_moves()
        rank = (placed, placed == ALL_PLACED or (not children and board.is_blocked()))
        if rank > best_rank:
            best_rank, best = rank, path.copy()
            if placed == ALL_PLACED:
                break
        if nodes >= max_nodes:
            break
        stack.append(children)
    while undos:
        board.take_back(undos.pop())
    return best_rank[0], best


def greedy_move(
    board: Board, rng: random.Random, avoid: Collection[int] = ()
) -> tuple[int, int] | None:
    """The best-looking onward move (ties broken by ``rng``), or None when blocked.

    With ``avoid`` (Zobrist keys), a move to one of those positions is passed over: a
    walk of onward moves never needs it, a walk that made other moves may.
    """
    best: tuple[int, int] | None = None
    best_score = -(10**9)
    for code, to in board.moves():
        score = board.score_move(code, to) * 8 + rng.randrange(8)
        if score > best_score:
            if avoid:
                undo = board.play(code, to)
                fresh = board.key not in avoid
                board.take_back(undo)
                if not fresh:
                    continue
            best, best_score = (code, to), score
    return best


def greedy_deal(board: Board, rng: random.Random) -> Plan:
    """Play greedy moves on ``board`` until it is blocked; returns them."""
    made: Plan = []
    while (move := greedy_move(board, rng)) is not None:
        board.play(*move)
        made.append(move)
    return made


# -- redeal or stop: expected score ----------------------------------------------------


class Rollout(Protocol):
    """Plays a game on from a freshly redealt ``grid``; returns its final score."""

    def __call__(
        self, grid: list[int], ruleset: Ruleset, redeals_used: int, rng: random.Random
    ) -> int: ...


def final_score(placed: int, redeals_used: int) -> int:
    """The ruled score of a game that ends with ``placed`` cards after ``redeals_used``."""
    bonus = WIN_BONUS if placed == ALL_PLACED and redeals_used == 0 else 0
    return placed - REDEAL_COST * redeals_used + bonus


def rollout_greedy(grid: list[int], ruleset: Ruleset, redeals_used: int, rng: random.Random) -> int:
    """One greedy deal, then stop."""
    board = Board(grid)
    greedy_deal(board, rng)
    return final_score(board.placed, redeals_used)


def rollout_search(max_nodes: int) -> Rollout:
    """Search each deal with ``max_nodes``; redeal while 10 cards or more are missing."""

    def rollout(grid: list[int], ruleset: Ruleset, redeals_used: int, rng: random.Random) -> int:
        while True:
            board = Board(grid)
            placed, plan = search_deal(board, max_nodes)
            for code, to in plan:
                board.play(code, to)
            may_redeal = ruleset.redeal_when is RedealWhen.ANY_TIME or board.is_blocked()
            if (
                ALL_PLACED - placed >= 2 * REDEAL_COST
                and may_redeal
                and redeals_used < ruleset.redeals
            ):
                redeals_used += 1
                seed = Seed(rng.randbytes(SEED_BYTES))
                grid = redealt_grid(board.grid, ruleset, seed, redeals_used)
                continue
            return final_score(placed, redeals_used)

    return rollout


def expected_after_redeal(
    game: Game, rng: random.Random, *, samples: int, rollout: Rollout
) -> float:
    """Mean final score over ``samples`` redeals of ``game``'s position, drawn from ``rng``.

    Each sample redeals the position under a seed drawn from ``rng`` (never the game's
    own, which is secret) and plays it on with ``rollout``.
    """
    grid = list(game.grid_codes())
    used = game.redeals_used + 1
    total = 0
    for _ in range(samples):
        dealt = redealt_grid(grid, game.ruleset, Seed(rng.randbytes(SEED_BYTES)), used)
        total += rollout(dealt, game.ruleset, used, rng)
    return total / samples


def redeal_pays(game: Game, rng: random.Random, *, samples: int, rollout: Rollout) -> bool:
    """Whether a redeal now has a higher expected score than stopping now.

    A redeal costs 5 points (and any hope of the no-redeal bonus), so with 5 cards or
    fewer missing it cannot pay; otherwise the gain is estimated by sampling.
    """
    if ALL_PLACED - game.placed <= REDEAL_COST or game.redeals_left <= 0:
        return False
    return expected_after_redeal(game, rng, samples=samples, rollout=rollout) > game.score
