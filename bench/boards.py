"""Leaderboard benchmark: ``python -m bench.boards --database-url URL`` fills a database
with recorded results (1,000,000 by default), builds the boards, and prints how long a
leaderboard page takes, one figure a line.

Run it on a throwaway database: it adds players, matches and results to it. The machines
are shared and noisy: compare figures taken in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bench import filler
from server.storage.boards import Board, Boards, board_named, period_start
from server.storage.database import Database, database_url
from server.storage.models import Player


async def timed(query: Callable[[], Awaitable[Any]], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        await query()
        times.append((time.perf_counter() - begin) * 1000)
    return times


def report(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    print(
        f"{label}: {statistics.median(times):.2f} ms median, {p95:.2f} ms p95, "
        f"{max(times):.2f} ms max ({len(times)} queries)",
        flush=True,
    )


async def run(url: str, *, results: int, players: int, days: int, repeats: int, seed: int) -> None:
    database = Database(url, statement_timeout_s=None)  # a benchmark fills millions of rows
    await database.migrate()
    boards = Boards(database, provisional_games=10)
    if results and not database.is_sqlite:
        begin = time.perf_counter()
        written = await filler.fill_in_sql(
            database, results=results, players=players, days=days, seed=seed
        )
        print(
            f"filled {results:,} results of {players:,} players and built {written:,} "
            f"board rows and their counts in SQL: {time.perf_counter() - begin:.1f} s",
            flush=True,
        )
        await filler.analyze(database)
    elif results:
        begin = time.perf_counter()
        await filler.fill(database, results=results, players=players, days=days, seed=seed)
        print(
            f"filled {results:,} results of {players:,} players: "
            f"{time.perf_counter() - begin:.1f} s",
            flush=True,
        )
        begin = time.perf_counter()
        written = await boards.rebuild()
        print(f"built {written:,} board rows: {time.perf_counter() - begin:.1f} s", flush=True)
    newest = await filler.newest_end(database)
    total, entries = await filler.counts(database)
    print(f"database holds {total:,} results and {entries:,} board rows", flush=True)
    rng = random.Random(seed + 1)
    day = (newest or datetime.now(UTC)).date()

    def first_page(by: str, period: str) -> Callable[[], Awaitable[Any]]:
        return lambda: boards.page(
            ruleset="classic", by=by, period=period, day=day, cursor=None, limit=20
        )

    for by in ("score", "time", "wins", "rating"):
        for period in ("all", "month", "day") if by != "rating" else ("all",):
            report(f"{by}/{period} first page", await timed(first_page(by, period), repeats))
    cursor: list[str | None] = [None]

    async def next_page() -> None:
        result = await boards.page(
            ruleset="classic", by="score", period="all", day=day, cursor=cursor[0], limit=20
        )
        cursor[0] = result["next_cursor"]

    report("score/all following pages (cursor)", await timed(next_page, repeats))
    ids = await filler.filled_player_ids(database, limit=players)

    for by, period in (("score", "all"), ("score", "day"), ("time", "all"), ("wins", "all")):

        def around_someone(by: str = by, period: str = period) -> Awaitable[Any]:
            return boards.around(
                ruleset="classic",
                by=by,
                period=period,
                day=day,
                player_id=rng.choice(ids),
                neighbours=10,
            )

        report(f"{by}/{period} around me", await timed(around_someone, repeats))
    score = board_named("score")

    async def count_ahead() -> None:
        async with database.read() as connection:
            await rank_by_counting(connection, score, day=day, player_id=rng.choice(ids))

    report("score/all around me's rank counting every row ahead", await timed(count_ahead, repeats))
    await database.dispose()


async def rank_by_counting(
    connection: AsyncConnection, board: Board, *, day: date, player_id: int
) -> int | None:
    """A player's rank on the people's all-time ``board`` as it was read before the counts
    (migration 0015): every row ahead counted, over the key's index ranges. Timed beside
    ``around`` to compare the two on the same database."""
    c = board.table.c
    base = and_(board.where("classic", "all", period_start("all", day)), Player.bot.is_(False))
    mine = (
        await connection.execute(
            select(board.table)
            .join(Player, Player.id == c.player_id)
            .where(base, c.player_id == player_id)
        )
    ).first()
    if mine is None:
        return None
    ahead = 0
    for condition in board.ranges([getattr(mine, name) for name, _ in board.key], before=True):
        ahead += (
            await connection.execute(
                select(func.count())
                .select_from(board.table)
                .join(Player, Player.id == c.player_id)
                .where(base, condition)
            )
        ).scalar_one()
    return ahead + 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.boards", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--database-url",
        required=True,
        help="a throwaway database (postgresql://... or sqlite:///path)",
    )
    parser.add_argument(
        "--results",
        type=int,
        default=1_000_000,
        help="results to add (0: only time the database as it is)",
    )
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--days", type=int, default=90, help="results spread over these days")
    parser.add_argument("--repeats", type=int, default=50, help="timed queries per figure")
    parser.add_argument("--seed", type=int, default=2026)
    options = parser.parse_args(argv)
    url = database_url(options.database_url, data_dir=Path("var"))
    asyncio.run(
        run(
            url,
            results=options.results,
            players=options.players,
            days=options.days,
            repeats=options.repeats,
            seed=options.seed,
        )
    )


if __name__ == "__main__":
    main()
