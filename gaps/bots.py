"""Bot players of three strengths, and the search that the strongest one and hints use.

A bot is anything with ``choose(game) -> Action``: for a game that is not over it
returns a legal ``Move``, ``REDEAL`` or ``STOP`` (these bots never undo: they plan
instead). ``play_game(bot, game)`` asks it until the game is over.

* level 1, ``RandomBot``: a uniformly random legal move; when blocked, redeal if it can,
  else stop.
* level 2, ``GreedyBot``: the move that looks best one ply ahead (extend a preserved
  sequence, open the slot right after one, leave no dead gap, no idle 2-shuffles, never
  back to a position already seen in this deal); when stuck, redeal only if sampled
  redeals played greedily gain more than the redeal costs.
* level 3, ``SearchBot``: a depth-first search of the current deal (moves ordered by the
  greedy heuristic, a transposition table on a Zobrist key of the grid, a node budget)
  for the reachable position with the most placed cards; it plays its way there, then
  redeals or stops, whichever has the higher expected score, estimated by playing out
  redeals it samples itself.
* level 4, ``gaps.solver_bot.SolverBot``: the same, but each deal is searched by the exact
  solver (``gaps.solver``) within a budget.

No bot ever reads ``game.seed``: the seed decides future redeals and is the server's
secret. To guess what a redeal brings, a bot redeals the position under seeds of its
own drawing. A bot is deterministic given its seed and the game it is shown.
"""

from __future__ import annotations

import random
from typing import Final, Protocol

from gaps.game import GAP, Game, redealt_grid
from gaps.move import AUTO_MOVES, REDEAL, STOP, TWO_MOVES, Action, Move
from gaps.ruleset import RedealWhen, Ruleset
from gaps.seed import SEED_BYTES, Seed

__all__ = [
    "BOT_NAMES", "Board", "Bot", "GreedyBot", "RandomBot", "SearchBot", "bot_for_level",
    "bot_named", "move_for", "play_game", "search_deal",
]

COLUMNS: Final = 13
CELLS: Final = 52
KING: Final = 12  # code % 13 of a King
TWOS: Final = (1, 14, 27, 40)
ROW_STARTS: Final = (0, 13, 26, 39)
ALL_PLACED: Final = 48
#: Points a redeal costs (the ruled -5 per redeal).
REDEAL_COST: Final = 5
#: Bonus for a win without redeal.
WIN_BONUS: Final = 10
#: Safety net: a game that has taken this many actions is stopped by ``play_game``.
MAX_ACTIONS: Final = 20_000

#: The SearchBot's default node budget per search, and its redeal estimate's sizes.
SEARCH_NODES: Final = 10_000
REDEAL_SAMPLES: Final = 8
ROLLOUT_NODES: Final = 300

Plan = list[tuple[int, int]]  # moves as (card code, destination index)

# Zobrist keys: a position's key is the XOR of one random number per (card, slot).
_zobrist_rng = random.Random(0x6A95)
_ZOBRIST: Final = [_zobrist_rng.getrandbits(64) for _ in range(CELLS * CELLS)]
del _zobrist_rng


class Bot(Protocol):
    """A player: ``choose`` returns a legal action for a game that is not over."""

    name: str

    def choose(self, game: Game) -> Action: ...


def play_game(bot: Bot, game: Game, *, max_actions: int = MAX_ACTIONS) -> list[Action]:
    """Let ``bot`` play ``game`` until it is over; returns the actions taken.

    Every action goes through ``Game.push``, so an illegal one raises ``IllegalAction``.
    A game still going after ``max_actions`` is stopped (a safety net for a random
    walk that keeps shuffling 2s; the other bots never revisit a position).
    """
    actions: list[Action] = []
    while not game.is_over():
        action = bot.choose(game) if len(actions) < max_actions else STOP
        game.push(action)
        actions.append(action)
    return actions


# -- a flat board for fast look-ahead -------------------------------------------------


def move_for(code: int, to: int) -> Move:
    """The interned ``Move`` that puts card ``code`` into the gap at index ``to``."""
    return TWO_MOVES[code][to // COLUMNS] if code % 13 == 1 else AUTO_MOVES[code]


def run_end(grid: list[int], start: int) -> int:
    """Index of the slot right after the preserved sequence of the row starting at ``start``."""
    first = grid[start]
    if first == GAP or first % 13 != 1:
        return start
    end = start + 1
    while end - start < COLUMNS - 1 and grid[end] == grid[end - 1] + 1:
        end += 1
    return end


class Board:
    """A position as flat lists, with fast moves and take-backs, for look-ahead.

    ``ends[row]`` is the index right after the row's preserved sequence, so the placed
    cards are ``sum(ends) - 78``; ``key`` is a Zobrist hash of the grid.
    """

    __slots__ = ("grid", "where", "gaps", "ends", "key")

    def __init__(self, grid: list[int]) -> None:
        self.grid = grid
        self.where = [GAP] * CELLS
        self.gaps: list[int] = []
        key = 0
        for index, code in enumerate(grid):
            if code == GAP:
                self.gaps.append(index)
            else:
                self.where[code] = index
                key ^= _ZOBRIST[code * CELLS + index]
        self.key = key
        self.ends = [run_end(grid, start) for start in ROW_STARTS]

    @staticmethod
    def of(game: Game) -> Board:
        return Board(list(game.grid_codes()))

    @property
    def placed(self) -> int:
        return sum(self.ends) - 78

    def moves(self) -> Plan:
        """The legal moves worth trying, as (card code, destination index).

        A move that extends a preserved sequence is returned alone: only that card can
        ever fill that slot, so filling it at once loses nothing. Left out, because they
        only lose placed cards: a 2 leaving column 1 with a sequence hanging on it.
        """
        grid, where, ends = self.grid, self.where, self.ends
        found: Plan = []
        for gap in self.gaps:
            if gap % COLUMNS == 0:
                for two in TWOS:
                    at = where[two]
                    if at % COLUMNS == 0 and grid[at + 1] == two + 1:
                        continue
                    found.append((two, gap))
            else:
                left = grid[gap - 1]
                if left != GAP and left % 13 != KING:
                    if gap == ends[gap // COLUMNS]:
                        return [(left + 1, gap)]
                    found.append((left + 1, gap))
        return found

    def is_blocked(self) -> bool:
        grid = self.grid
        for gap in self.gaps:
            if gap % COLUMNS == 0:
                return False
            left = grid[gap - 1]
            if left != GAP and left % 13 != KING:
                return False
        return True

    def score_move(self, code: int, to: int) -> int:
        """How promising a move looks one ply ahead (higher is better)."""
        grid, ends = self.grid, self.ends
        came_from = self.where[code]
        score = 0
        row_to = to // COLUMNS
        if to == ends[row_to]:
            # Extends a preserved sequence (or starts one with a 2), with the cards
            # already standing in line after it.
            gain = 1
            after = to + 1
            while after - row_to * COLUMNS < COLUMNS - 1 and grid[after] == code + gain:
                gain += 1
                after += 1
            score += 100 * gain
        if came_from % COLUMNS == 0:
            score -= 30  # a 2 shuffled between column-1 slots: rarely useful
        elif came_from == ends[came_from // COLUMNS]:
            score += 60  # opens the slot right after a preserved sequence
        else:
            left = grid[came_from - 1]
            if left == GAP or left % 13 == KING:
                score -= 20  # leaves a dead gap
            else:
                score += 5  # leaves a live gap
        if code % 13 == KING and to % COLUMNS != COLUMNS - 1 and grid[to + 1] == GAP:
            score -= 20  # a King kills the gap on its right
        return score

    def play(self, code: int, to: int) -> tuple[int, int, int, int]:
        """Make a legal move; returns what ``take_back`` needs to undo it."""
        grid, where, ends = self.grid, self.where, self.ends
        came_from = where[code]
        grid[to] = code
        grid[came_from] = GAP
        where[code] = to
        gaps = self.gaps
        gaps[gaps.index(to)] = came_from
        self.key ^= _ZOBRIST[code * CELLS + came_from] ^ _ZOBRIST[code * CELLS + to]
        row_from, row_to = came_from // COLUMNS, to // COLUMNS
        old_from, old_to = ends[row_from], ends[row_to]
        if came_from < old_from:  # a lone 2 left column 1
            ends[row_from] = row_from * COLUMNS
        if to == ends[row_to]:
            start = row_to * COLUMNS
            end = to + 1
            while end - start < COLUMNS - 1 and grid[end] == grid[end - 1] + 1:
                end += 1
            ends[row_to] = end
        return code, came_from, old_from, old_to

    def take_back(self, undo: tuple[int, int, int, int]) -> None:
        code, came_from, old_from, old_to = undo
        grid, where = self.grid, self.where
        to = where[code]
        grid[to] = GAP
        grid[came_from] = code
        where[code] = came_from
        gaps = self.gaps
        gaps[gaps.index(came_from)] = to
        self.key ^= _ZOBRIST[code * CELLS + came_from] ^ _ZOBRIST[code * CELLS + to]
        self.ends[to // COLUMNS] = old_to
        self.ends[came_from // COLUMNS] = old_from

    def ordered_moves(self) -> Plan:
        """``moves()`` with the most promising last (a search pops from the end)."""
        found = self.moves()
        if len(found) > 1:
            score = self.score_move
            found.sort(key=lambda move: score(move[0], move[1]))
        return found


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


def greedy_move(board: Board, rng: random.Random, seen: set[int]) -> tuple[int, int] | None:
    """The best-looking move to a position not in ``seen`` (ties broken by ``rng``)."""
    best: tuple[int, int] | None = None
    best_score = -(10**9)
    for code, to in board.moves():
        score = board.score_move(code, to) * 8 + rng.randrange(8)
        if score > best_score:
            undo = board.play(code, to)
            fresh = board.key not in seen
            board.take_back(undo)
            if fresh:
                best, best_score = (code, to), score
    return best


def greedy_deal(board: Board, rng: random.Random) -> Plan:
    """Play greedy moves on ``board`` until none leads to a new position; returns them."""
    seen = {board.key}
    made: Plan = []
    while (move := greedy_move(board, rng, seen)) is not None:
        board.play(*move)
        seen.add(board.key)
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


# -- the bots ---------------------------------------------------------------------------


class RandomBot:
    """Level 1: a uniformly random legal move; when blocked, redeal if it can, else stop."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: Game) -> Action:
        moves = game.legal_moves()
        if moves:
            return moves[int(self.rng.random() * len(moves))]
        return REDEAL if game.can_redeal() else STOP


class GreedyBot:
    """Level 2: the best-looking move one ply ahead; a redeal only if it should pay."""

    name = "greedy"

    def __init__(self, seed: int = 0, *, samples: int = REDEAL_SAMPLES) -> None:
        self.rng = random.Random(seed)
        self.samples = samples
        self._seen: set[int] = set()
        self._deal = -1

    def choose(self, game: Game) -> Action:
        board = Board.of(game)
        if game.redeals_used != self._deal:
            self._seen, self._deal = set(), game.redeals_used
        self._seen.add(board.key)
        move = greedy_move(board, self.rng, self._seen)
        if move is not None:
            return move_for(*move)
        if game.can_redeal() and redeal_pays(
            game, self.rng, samples=self.samples, rollout=rollout_greedy
        ):
            return REDEAL
        return STOP


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
        self._seen: set[int] = set()
        self._wander: bool | None = None

    def choose(self, game: Game) -> Action:
        grid = list(game.grid_codes())
        if game.redeals_used != self._deal:
            self._deal, self._plan, self._seen, self._wander = game.redeals_used, [], set(), None
        board = self._board
        if not self._plan or board is None or board.grid != grid:
            board = self._board = Board(grid)
            plan = self._plan_deal(board, game)
            plan.reverse()
            self._plan = plan
        self._seen.add(board.key)
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
    or ``solver`` (``gaps.solver_bot``)."""
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot(seed)
    if name == "search":
        return SearchBot(seed)
    if name == "search-win":
        return SearchBot(seed, play_to_win=True)
    if name == "solver":
        # Imported here: gaps.solver_bot builds on this module (and gaps.solver on it).
        from gaps.solver_bot import SolverBot

        return SolverBot(seed)
    raise ValueError(f"{name!r} is not a bot: expected one of {', '.join(BOT_NAMES)}")
