"""The final table of a match, ranked exactly as ruled (docs/rules.md, Competition).

The server ranks a match with it, and ``gaps verify`` checks a replay's ranks with it, so
the two cannot disagree on a tie.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from gaps.errors import NotationError
from gaps.notation import quoted

#: How a match is won: the fastest win first, or the best score first.
WIN_BY: Final = ("time", "score")


@dataclass(frozen=True)
class Finish:
    """How one player's game ended; times are milliseconds from the match start."""

    player_id: int  # orders tied players, nothing else
    won: bool
    score: int
    finish_ms: int  # when the game ended (win, loss, stop, timeout, disconnect)
    score_ms: int  # when the player reached the final score


def sort_key(finish: Finish, win_by: str) -> tuple[int, ...]:
    """Smaller is better; equal keys tie.

    ``time``: winners first by finish time; then the rest by score (higher first),
    ties by the time they reached it. ``score``: by score, ties by finish time.
    Any other ``win_by`` raises ``NotationError``.
    """
    if win_by == "time":
        if finish.won:
            return (0, finish.finish_ms)
        return (1, -finish.score, finish.score_ms)
    if win_by == "score":
        return (-finish.score, finish.finish_ms)
    raise _unknown(win_by)


def rank(finishes: Sequence[Finish], win_by: str) -> list[tuple[int, Finish]]:
    """(rank, finish) best first; equal keys share a rank and the next rank skips (1, 1, 3)."""
    if win_by not in WIN_BY:  # refused even with no finishes to sort
        raise _unknown(win_by)
    ordered = sorted(finishes, key=lambda finish: (sort_key(finish, win_by), finish.player_id))
    table: list[tuple[int, Finish]] = []
    for position, finish in enumerate(ordered, start=1):
        if table and sort_key(table[-1][1], win_by) == sort_key(finish, win_by):
            table.append((table[-1][0], finish))
        else:
            table.append((position, finish))
    return table


def _unknown(win_by: str) -> NotationError:
    return NotationError(f"win_by {quoted(win_by)} is not 'time' or 'score'")
