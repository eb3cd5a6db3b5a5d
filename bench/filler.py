"""Filling a throwaway database with made-up results, for the leaderboard benchmark
(``python -m bench.boards``)."""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, insert, select

from server.storage.database import Database
from server.storage.models import BoardEntry, Match, MatchPlayer, Player, Rating

PLAYERS_PER_MATCH = 4
RULESETS = ("classic", "classic", "classic", "addiction", "no-redeal")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def fill(
    database: Database,
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
    async with database.write() as connection:
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
        async with database.write() as connection:
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
        async with database.write() as connection:
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
        async with database.write() as connection:
            await connection.execute(insert(Rating), rows)


async def counts(database: Database) -> tuple[int, int]:
    """How many results and board rows the database holds."""
    async with database.read() as connection:
        results = (
            await connection.execute(select(func.count()).select_from(MatchPlayer))
        ).scalar_one()
        entries = (
            await connection.execute(select(func.count()).select_from(BoardEntry))
        ).scalar_one()
    return int(results), int(entries)


async def newest_end(database: Database) -> datetime | None:
    """When the last finished match ended."""
    async with database.read() as connection:
        found: datetime | None = (
            await connection.execute(select(func.max(Match.ended_at)))
        ).scalar_one()
    return found


async def filled_player_ids(database: Database, *, limit: int) -> list[int]:
    """The ids of the players ``fill`` made, up to ``limit`` of them."""
    async with database.read() as connection:
        ids = (
            await connection.execute(
                select(Player.id).where(Player.name.like("bench-%")).order_by(Player.id).limit(limit)
            )
        ).scalars()
        return list(ids)


async def analyze(database: Database) -> None:
    """On PostgreSQL, what autovacuum would do in time: statistics, and visibility for
    index-only scans (on SQLite, nothing)."""
    if database.is_sqlite:
        return
    async with database.engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.exec_driver_sql("VACUUM ANALYZE")
