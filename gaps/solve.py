"""Solve deals: ``python -m gaps.solve`` prints a deal's verdict and par, or statistics.

    python -m gaps.solve --seed ABCD-EFGH-IJKL-MNOP --rules classic
    python -m gaps.solve --layout grid.txt --rules no-redeal     # "-" reads stdin
    python -m gaps.solve --seed ABCD-EFGH-IJKL-MNOP --fewest-moves
    python -m gaps.solve --stats 200 --rules no-redeal --time-budget-s 10

A single deal prints the verdict without redeal (``won``, ``lost`` or ``unknown``), the
par over the deal and its redeals (the seed decides them; a layout has no seed of its
own, so its redeals use the seed ``layout``), the line in move notation, the nodes
searched, the time and the peak memory; with ``--fewest-moves`` the line without redeal is
the shortest found (``gaps.shortest``) and a line says whether it is the fewest moves or
how few they could be. ``--stats N`` solves deals 0 .. N-1
(``Seed(i.to_bytes(10, "big"))``, as ``gaps.simulate`` numbers them) without redeal and
prints the share won with its 95% Wilson and Clopper-Pearson intervals beside the
published 85.8% +- 3.7%, and the distribution of solve times. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gaps.errors import GapsError
from gaps.game import Game
from gaps.par import par_of
from gaps.seed import Seed
from gaps.shortest import Shortest, fewest_moves
from gaps.solver import MAX_MEMORY_MB, MAX_NODES, ORDERS, TIME_BUDGET_S, Verdict, solve

#: Blake and Gent (2019), Solvitaire: winnable share of no-redeal Gaps deals.
PUBLISHED_WIN_RATE = 0.858
PUBLISHED_MARGIN = 0.037
#: z of a two-sided 95% interval.
_Z = 1.959963984540054


def deal_seed(number: int) -> Seed:
    """The seed of statistics deal ``number`` (as ``gaps.simulate`` numbers deals)."""
    return Seed(number.to_bytes(10, "big"))


def wilson(successes: int, trials: int, *, z: float = _Z) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion."""
    if trials <= 0:
        raise ValueError(f"an interval needs at least one trial, not {trials}")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k + 1):
        log_term = (
            math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * log_p + (n - i) * log_q
        )
        total += math.exp(log_term)
    return min(1.0, total)


def _solve_for(target: Callable[[float], float], falling: bool) -> float:
    """The p in [0, 1] where ``target(p)`` crosses 0, by bisection."""
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if (target(middle) > 0) == falling:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def clopper_pearson(successes: int, trials: int, *, alpha: float = 0.05) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial proportion."""
    if trials <= 0:
        raise ValueError(f"an interval needs at least one trial, not {trials}")
    k, n = successes, trials
    # Lower: P(X >= k | p) = alpha/2; upper: P(X <= k | p) = alpha/2.
    low = 0.0 if k == 0 else _solve_for(
        lambda p: (1 - _binomial_cdf(k - 1, n, p)) - alpha / 2, falling=False
    )
    high = 1.0 if k == n else _solve_for(
        lambda p: _binomial_cdf(k, n, p) - alpha / 2, falling=True
    )
    return low, high


def percentile(values: Sequence[float], share: float) -> float:
    """The value below which ``share`` (0..1) of ``values`` fall (nearest rank)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("a percentile of no values")
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


@dataclass
class Stats:
    """Verdicts of ``solve`` over deals 0 .. N-1, without redeal."""

    won: int = 0
    lost: int = 0
    unknown: int = 0
    seconds: list[float] | None = None
    peak_mb: float = 0.0
    #: With ``--fewest-moves``: (moves of the shortest line found, lower bound) of each
    #: decided deal.
    fewest: list[tuple[int, int]] | None = None

    @property
    def decided(self) -> int:
        return self.won + self.lost


def statistics(
    deals: int,
    *,
    max_nodes: int,
    time_budget_s: float,
    max_memory_mb: float,
    first: int = 0,
    progress: bool = False,
    order: str = "best-first",
    fewest: bool = False,
) -> Stats:
    """Solve deals ``first`` .. ``first + deals - 1`` of the no-redeal ruleset in ``order``;
    with ``fewest``, look for the fewest moves of each (``gaps.shortest``) too."""
    stats = Stats(seconds=[], fewest=[] if fewest else None)
    for number in range(first, first + deals):
        game = Game(deal_seed(number), "no-redeal")
        verdict: Verdict | Shortest
        if fewest:
            verdict = fewest_moves(
                game, max_nodes=max_nodes, time_budget_s=time_budget_s,
                max_memory_mb=max_memory_mb,
            )
            if verdict.status != "unknown" and stats.fewest is not None:
                stats.fewest.append((len(verdict.line), verdict.lower_bound))
        else:
            verdict = solve(
                game, max_nodes=max_nodes, time_budget_s=time_budget_s,
                max_memory_mb=max_memory_mb, order=order,
            )
        setattr(stats, verdict.status, getattr(stats, verdict.status) + 1)
        assert stats.seconds is not None
        stats.seconds.append(verdict.seconds)
        if progress:
            print(
                f"deal {number}: {verdict}", file=sys.stderr, flush=True,
            )
    return stats


def stats_lines(stats: Stats) -> list[str]:
    """The statistics mode's report, one figure a line."""
    seconds = stats.seconds or []
    total = stats.won + stats.lost + stats.unknown
    lines = [f"deals: {total}  won: {stats.won}  lost: {stats.lost}  unknown: {stats.unknown}"]
    if total:
        wl, wh = wilson(stats.won, total)
        # Every unknown deal might be won: the upper end counts them as wins.
        ol, oh = wilson(stats.won + stats.unknown, total)
        cl, ch = clopper_pearson(stats.won, total)
        lines += [
            f"winnable: {stats.won / total:.1%} proven "
            f"(up to {(stats.won + stats.unknown) / total:.1%} if every unknown is winnable)",
            f"95% Wilson: {wl:.1%} - {wh:.1%} (proven), {ol:.1%} - {oh:.1%} (unknown as won)",
            f"95% Clopper-Pearson: {cl:.1%} - {ch:.1%} (proven)",
            f"published (Blake and Gent 2019): {PUBLISHED_WIN_RATE:.1%} "
            f"+- {PUBLISHED_MARGIN:.1%}",
            ("time s (solve and fewest moves): " if stats.fewest is not None else "solve time s: ")
            + _percentiles(seconds, (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0), digits=3),
            f"decided within the time budget: {stats.decided / total:.1%}",
        ]
    if stats.fewest:
        proven = sum(length == bound for length, bound in stats.fewest)
        lengths = [length for length, _ in stats.fewest]
        above = [length - bound for length, bound in stats.fewest]
        lines += [
            f"fewest moves proven: {proven} of {len(stats.fewest)} decided deals "
            f"({proven / len(stats.fewest):.1%})",
            "line moves: " + _percentiles(lengths, (0.1, 0.5, 0.9), digits=0),
            "line above its lower bound by: "
            + _percentiles(above, (0.5, 0.9, 1.0), digits=0)
            + " moves",
        ]
    if total:
        lines.append(f"peak memory: {stats.peak_mb:.1f} MB")
    return lines


def _percentiles(values: Sequence[float], shares: Sequence[float], *, digits: int) -> str:
    """``p10 1.234  p50 ...``: the percentiles of ``values`` at ``shares``."""
    return "  ".join(
        f"p{round(share * 100)} {percentile(values, share):.{digits}f}" for share in shares
    )


def deal_lines(
    game: Game,
    *,
    max_nodes: int,
    time_budget_s: float,
    max_memory_mb: float,
    order: str = "best-first",
    fewest: bool = False,
) -> list[str]:
    """The single-deal report: verdict without redeal, par, lines, nodes, time, memory.

    With ``fewest`` the line without redeal is the shortest found (``gaps.shortest``), and
    a line says whether it is the fewest moves or how few they could be.
    """
    verdict: Verdict | Shortest
    if fewest:
        verdict = shortest = fewest_moves(
            game, max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb
        )
        decided = shortest.status != "unknown"
        if shortest.exact:
            moves = f"fewest moves: {len(shortest.line)} (exact)"
        elif decided:
            moves = (
                f"fewest moves: at least {shortest.lower_bound}, the line has "
                f"{len(shortest.line)} ({shortest.exhausted} budget ran out)"
            )
        else:
            moves = "fewest moves: unknown (the best count is not known)"
    else:
        verdict = solve(
            game, max_nodes=max_nodes, time_budget_s=time_budget_s,
            max_memory_mb=max_memory_mb, order=order,
        )
        decided = verdict.exact
    result = par_of(
        game, max_nodes=max_nodes, time_budget_s=time_budget_s, max_memory_mb=max_memory_mb
    )
    par_text = str(result.score) if result.exact else f"at least {result.score} (unknown)"
    return [
        f"deal: {game.seed} {game.ruleset}",
        f"verdict: {verdict.status} ({verdict.placed} placed without redeal"
        + ("" if decided else f", at least; {verdict.exhausted} budget ran out") + ")",
        f"line: {' '.join(map(str, verdict.line)) or '(none)'}",
        *([moves] if fewest else []),
        f"nodes: {verdict.nodes}  time: {verdict.seconds:.3f} s",
        f"par: {par_text}: {result.placed} placed, {result.redeals} redeals",
        f"par line: {' '.join(map(str, result.line)) or '(none)'}",
        f"par nodes: {result.nodes}  par time: {result.seconds:.3f} s",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m gaps.solve", description=__doc__.split("\n")[0]
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed", help="a deal's share code")
    source.add_argument("--layout", help="a file holding a grid in layout text, - for stdin")
    source.add_argument("--stats", type=int, metavar="N", help="solve deals 0..N-1 (no-redeal)")
    parser.add_argument("--rules", default="classic", help="ruleset (default classic)")
    parser.add_argument("--first", type=int, default=0, help="first deal of --stats (default 0)")
    parser.add_argument(
        "--max-nodes", type=int, default=MAX_NODES, help=f"node budget (default {MAX_NODES})"
    )
    parser.add_argument(
        "--time-budget-s", type=float, default=TIME_BUDGET_S,
        help=f"time budget per search, seconds (default {TIME_BUDGET_S:g})",
    )
    parser.add_argument(
        "--max-memory-mb", type=float, default=MAX_MEMORY_MB,
        help=f"table memory budget, MB (default {MAX_MEMORY_MB:g})",
    )
    parser.add_argument(
        "--order", choices=ORDERS, default="best-first",
        help="search order of the verdict without redeal (default best-first)",
    )
    parser.add_argument(
        "--fewest-moves", action="store_true",
        help="look for the shortest line without redeal too (A*; best-first order only)",
    )
    parser.add_argument(
        "--trace-memory", action="store_true",
        help="measure peak memory with tracemalloc (exact, about 2x slower)",
    )
    options = parser.parse_args(argv)
    if options.fewest_moves and options.order != "best-first":
        parser.error("--fewest-moves searches in best-first order, not --order depth-first")
    budgets = {
        "max_nodes": options.max_nodes,
        "time_budget_s": options.time_budget_s,
        "max_memory_mb": options.max_memory_mb,
    }
    if options.trace_memory:
        tracemalloc.start()
    begin = time.perf_counter()
    try:
        if options.stats is not None:
            if options.stats < 1:
                parser.error(f"--stats needs at least 1 deal, not {options.stats}")
            stats = statistics(
                options.stats, first=options.first, progress=True, order=options.order,
                fewest=options.fewest_moves, **budgets,
            )
            stats.peak_mb = _peak_mb(options.trace_memory)
            lines = stats_lines(stats)
        else:
            if options.seed is not None:
                game = Game(Seed.parse(options.seed), options.rules)
            else:
                text = (
                    sys.stdin.read() if options.layout == "-"
                    else open(options.layout, encoding="ascii").read()
                )
                game = Game.from_layout(text, options.rules)
            lines = deal_lines(
                game, order=options.order, fewest=options.fewest_moves, **budgets
            )
            lines.append(f"peak memory: {_peak_mb(options.trace_memory):.1f} MB")
    except (GapsError, ValueError, OSError) as error:
        parser.error(str(error))
    finally:
        # main() may run inside another program (the tests): tracing would slow it after
        if options.trace_memory:
            tracemalloc.stop()
    lines.append(f"wall time: {time.perf_counter() - begin:.3f} s")
    print("\n".join(lines))


def _peak_mb(traced: bool) -> float:
    """Peak memory: tracemalloc's when tracing, else the process's peak resident size."""
    if traced:
        return tracemalloc.get_traced_memory()[1] / 1e6
    import resource  # Unix only; imported here so that gaps imports everywhere

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


if __name__ == "__main__":
    main()
