"""A deal's par, and how far a score is from it, in words.

Par is the best final score any play of the deal (redeals included) can reach; the
server solves it after the match, within a budget (docs/solver.md). The protocol gives it
as ``{"score": N, "exact": true}``, or with ``"exact": false`` when the budget ran out
and N is only a lower bound: the true par is N or more. The words say which: ``58``,
``3 below par``; ``≥31``, ``at least 3 below par``.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from gaps_protocol.messages.common import Par as SolvedPar

#: What stands for a par not solved yet, and for one a server sent in no known shape.
NOT_YET: Final = "…"
UNKNOWN: Final = "?"
#: Why a par may be only a lower bound.
BOUND_WHY: Final = "a lower bound: the solver ran out of budget"


class Par(NamedTuple):
    score: int
    exact: bool


def read_par(par: object) -> Par | None:
    """The par in a replay or a daily board (``{"score", "exact"}``, or typed), if it is
    one."""
    if isinstance(par, SolvedPar):
        return Par(par.score, par.exact)
    if not isinstance(par, dict):
        return None
    score, exact = par.get("score"), par.get("exact")
    if not isinstance(score, int) or isinstance(score, bool) or not isinstance(exact, bool):
        return None
    return Par(score, exact)


def par_text(par: object) -> str:
    """A deal's par as shown beside a score: ``58`` when exact, ``≥31`` when only a
    lower bound is known, ``…`` while it is not computed yet (``None``), ``?`` for
    anything else a server sent."""
    if par is None:
        return NOT_YET
    known = read_par(par)
    if known is None:
        return UNKNOWN
    return str(known.score) if known.exact else f"≥{known.score}"


def par_words(par: object) -> str:
    """``par 58``, ``par at least 31 (a lower bound: ...)``, or that it is not known."""
    if par is None:
        return "par not solved yet"
    known = read_par(par)
    if known is None:
        return "par unknown"
    if known.exact:
        return f"par {known.score}"
    return f"par at least {known.score} ({BOUND_WHY})"


def gap_words(score: object, par: object, *, short: bool = False) -> str | None:
    """How far ``score`` is from par: ``3 below par``, ``at par``; with a lower bound,
    ``at least 3 below par`` or ``maybe at par``. ``short`` for a narrow column:
    ``3 below``, ``≥3 below``, ``maybe par``. None while par is not known."""
    known = read_par(par)
    if known is None or not isinstance(score, int) or isinstance(score, bool):
        return None
    below = known.score - score
    tail = "" if short else " par"
    if known.exact:
        if below == 0:
            return "at par"
        return f"{below} below{tail}" if below > 0 else f"{-below} above{tail}"
    if below > 0:
        return f"≥{below} below" if short else f"at least {below} below par"
    return "maybe par" if short else "maybe at par"
