"""Leaderboard benchmark: ``python -m server.bench --database-url URL`` fills a database
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
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from server import leaderboard
from server.storage.database import create_engine, database_url, migrate
from server.storage.models import BoardEntry, Match, MatchPlayer, Player, Rating

PLAYERS_PER_MATCH = 4
RULESETS = ("classic", "classic", "classic", "addiction", "no-redeal")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def fill(
    engine: AsyncEngine,
    *,
    results: int,
    players: int,
    days: int,
    seed: int,
    batch_rows: int = 20_000,
) -> None:
    """Add ``players`` players and ``results`` results of 4-player matches over ``days``
    days up to now."""
    rng = random.Random(seed)
    now = datetime.now(UTC).replace(microsecond=0)
    async with engine.begin() as connection:
        first_player = (
            await connection.execute(select(func.coalesce(func.max(Player.id), 0)))
        ).scalar_one() + 1
        first_match = (
            await connection.execute(select(func.coalesce(func.max(Match.id), 0)))
        ).scalar_one() + 1
    for start in range(0, players, batch_rows):
        rows = [
            {
                "id": first_player + n,
                "name": f"bench-{first_player + n}",
                "token_hash": f"{first_player + n:064x}",
                "created_at": now,
            }
            for n in range(start, min(players, start + batch_rows))
        ]
        async with engine.begin() as connection:
            await connection.execute(insert(Player), rows)
        progress(f"players: {min(players, start + batch_rows):,}/{players:,}")
    matches = results // PLAYERS_PER_MATCH
    per_batch = batch_rows // PLAYERS_PER_MATCH
    for start in range(0, matches, per_batch):
        match_rows, result_rows = [], []
        for number in range(start, min(matches, start + per_batch)):
            match_id = first_match + number
            ended = now - timedelta(seconds=rng.randrange(days * 86400))
            match_rows.append(
                {
                    "id": match_id,
                    "code": f"B{match_id:07d}"[-8:],
                    "ruleset": rng.choice(RULESETS),
                    "max_players": PLAYERS_PER_MATCH,
                    "time_limit_s": 600,
                    "win_by": "time",
                    "public": False,
                    "rated": True,
                    "host_id": first_player,
                    "status": "finished",
                    "seed": b"bench",
                    "commitment": "0" * 64,
                    "created_at": ended,
                    "started_at": ended,
                    "ended_at": ended,
                    "kind": "race",
                }
            )
            for rank, player in enumerate(rng.sample(range(players), PLAYERS_PER_MATCH), 1):
                won = rng.random() < 0.05
                score = 58 if won else rng.randrange(-15, 48)
                result_rows.append(
                    {
                        "match_id": match_id,
                        "player_id": first_player + player,
                        "joined_at": ended,
                        "score": score,
                        "placed": max(score, 0),
                        "redeals": 0,
                        "moves": 100,
                        "won": won,
                        "end_reason": "won" if won else "stopped",
                        "finish_ms": rng.randrange(30_000, 600_000),
                        "score_ms": 0,
                        "rank": rank,
                    }
                )
        async with engine.begin() as connection:
            await connection.execute(insert(Match), match_rows)
            await connection.execute(insert(MatchPlayer), result_rows)
        progress(f"results: {min(matches, start + per_batch) * PLAYERS_PER_MATCH:,}/{results:,}")
    for start in range(0, players, batch_rows):
        rows = []
        for n in range(start, min(players, start + batch_rows)):
            mu, sigma = rng.gauss(25, 4), rng.uniform(1, 8.3)
            rows.append(
                {
                    "player_id": first_player + n,
                    "ruleset": "classic",
                    "mu": mu,
                    "sigma": sigma,
                    "ordinal": mu - 3 * sigma,
                    "games": rng.randrange(1, 50),
                    "updated_at": now,
                }
            )
        async with engine.begin() as connection:
            await connection.execute(insert(Rating), rows)


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
    engine = create_engine(url)
    await migrate(engine)
    if results:
        begin = time.perf_counter()
        await fill(engine, results=results, players=players, days=days, seed=seed)
        print(
            f"filled {results:,} results of {players:,} players: "
            f"{time.perf_counter() - begin:.1f} s",
            flush=True,
        )
        begin = time.perf_counter()
        async with engine.begin() as connection:
            written = await leaderboard.rebuild(connection)
        print(f"built {written:,} board rows: {time.perf_counter() - begin:.1f} s", flush=True)
        if engine.dialect.name == "postgresql":
            # As autovacuum would, in time: statistics and visibility for index-only scans.
            async with engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.exec_driver_sql("VACUUM ANALYZE")
    async with engine.connect() as connection:
        newest = (await connection.execute(select(func.max(Match.ended_at)))).scalar_one()
    async with engine.connect() as connection:
        total = (
            await connection.execute(select(func.count()).select_from(MatchPlayer))
        ).scalar_one()
        entries = (
            await connection.execute(select(func.count()).select_from(BoardEntry))
        ).scalar_one()
        print(f"database holds {total:,} results and {entries:,} board rows", flush=True)
        rng = random.Random(seed + 1)
        day = (newest or datetime.now(UTC)).date()

        def first_page(by: str, period: str) -> Callable[[], Awaitable[Any]]:
            return lambda: leaderboard.page(
                connection,
                ruleset="classic",
                by=by,
                period=period,
                day=day,
                cursor=None,
                limit=20,
                provisional_games=10,
            )

        for by in ("score", "time", "wins", "rating"):
            for period in ("all", "month", "day") if by != "rating" else ("all",):
                report(f"{by}/{period} first page", await timed(first_page(by, period), repeats))
        cursor: list[str | None] = [None]

        async def next_page() -> None:
            result = await leaderboard.page(
                connection,
                ruleset="classic",
                by="score",
                period="all",
                day=day,
                cursor=cursor[0],
                limit=20,
                provisional_games=10,
            )
            cursor[0] = result["next_cursor"]

        report("score/all following pages (cursor)", await timed(next_page, repeats))
        ids = (
            (
                await connection.execute(
                    select(Player.id)
                    .where(Player.name.like("bench-%"))
                    .order_by(Player.id)
                    .limit(players)
                )
            )
            .scalars()
            .all()
        )

        async def around_someone() -> None:
            await leaderboard.around(
                connection,
                ruleset="classic",
                by="score",
                period="all",
                day=day,
                player_id=rng.choice(ids),
                neighbours=10,
                provisional_games=10,
            )

        report("score/all around me", await timed(around_someone, repeats))
    await engine.dispose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m server.bench", description=__doc__.split("\n")[0]
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
