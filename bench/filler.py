"""Filling a throwaway database with made-up results, for the leaderboard benchmark
(``python -m bench.boards``)."""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, insert, select

from server.storage import boards
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
    await _fill_ratings(database, players=players, first_player=first_player, seed=seed)


async def _fill_ratings(
    database: Database, *, players: int, first_player: int, seed: int, batch_rows: int = 20_000
) -> None:
    rng = random.Random(seed)
    now = datetime.now(UTC).replace(microsecond=0)
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


async def fill_in_sql(
    database: Database, *, results: int, players: int, days: int, seed: int
) -> int:
    """What ``fill`` adds, generated by PostgreSQL itself (``generate_series``), and the
    board rows of those results aggregated there too (the same rows ``rebuild`` folds
    one game at a time, in seconds where it takes hours for 10,000,000 results); returns
    the board rows written. Results are generated with no bot and no review, so that
    every one of them counts."""
    ruleset = "(ARRAY[" + ", ".join(f"'{name}'" for name in RULESETS) + "])"
    async with database.write() as connection:
        first_player = (
            await connection.execute(select(func.coalesce(func.max(Player.id), 0)))
        ).scalar_one() + 1
        first_match = (
            await connection.execute(select(func.coalesce(func.max(Match.id), 0)))
        ).scalar_one() + 1
        await connection.exec_driver_sql(f"SELECT setseed({(seed % 1000) / 1000})")
        progress("players ...")
        await connection.exec_driver_sql(
            "INSERT INTO players (id, name, token_hash, created_at) "
            f"SELECT n, 'bench-' || n, lpad(to_hex(n), 64, '0'), now() "
            f"FROM generate_series({first_player}, {first_player + players - 1}) n"
        )
        matches = results // PLAYERS_PER_MATCH
        progress(f"{matches:,} matches ...")
        await connection.exec_driver_sql(
            "INSERT INTO matches (id, code, ruleset, max_players, time_limit_s, win_by, public,"
            " rated, host_id, status, seed, commitment, created_at, started_at, ended_at, kind) "
            f"SELECT n, right('B' || lpad(n::text, 7, '0'), 8), "
            f"{ruleset}[1 + floor(random() * {len(RULESETS)})::int], "
            f"{PLAYERS_PER_MATCH}, 600, 'time', false, true, {first_player}, 'finished', "
            "'bench'::bytea, repeat('0', 64), e, e, e, 'race' FROM ("
            f"SELECT n, date_trunc('second', now() - random() * interval '{days} days') AS e "
            f"FROM generate_series({first_match}, {first_match + matches - 1}) n) m"
        )
        progress(f"{matches * PLAYERS_PER_MATCH:,} results ...")
        # Seat k of a match is (base + k * players / 4) mod players: 4 players apart.
        await connection.exec_driver_sql(
            "INSERT INTO match_players (match_id, player_id, joined_at, score, placed, "
            "redeals, moves, won, end_reason, finish_ms, score_ms, rank) "
            "SELECT id, player, ended_at, score, greatest(score, 0), 0, 100, won, "
            "CASE WHEN won THEN 'won' ELSE 'stopped' END, finish_ms, 0, seat FROM ("
            f"SELECT m.id, m.ended_at, seat, {first_player} + "
            f"(m.base + (seat - 1) * {players // PLAYERS_PER_MATCH}) % {players} AS player, "
            "w.won, CASE WHEN w.won THEN 58 ELSE -15 + floor(random() * 63)::int END AS score, "
            "30000 + floor(random() * 570000)::int AS finish_ms "
            f"FROM (SELECT id, ended_at, floor(random() * {players})::int AS base "
            f"FROM matches WHERE id >= {first_match}) m "
            f"CROSS JOIN generate_series(1, {PLAYERS_PER_MATCH}) seat "
            "CROSS JOIN LATERAL (SELECT random() < 0.05 + 0 * seat AS won) w) r"
        )
        progress("board rows ...")
        # The best score (then its quickest) and the fastest win (then its best score)
        # as the greatest of one number each: score then time, time then score.
        built = await connection.exec_driver_sql(
            "INSERT INTO board_entries (ruleset, period, period_start, player_id, games, wins,"
            " best_score, best_score_ms, fastest_win_ms, fastest_win_score) "
            "SELECT ruleset, period, start, player_id, count(*), count(*) FILTER (WHERE won), "
            "max(best) >> 32, 4294967295 - (max(best) & 4294967295), "
            "min(fastest) >> 16, 32767 - (min(fastest) & 65535) FROM ("
            "SELECT m.ruleset, p.period, p.player_id, p.won, CASE p.period "
            "WHEN 'all' THEN DATE '2000-01-01' "
            "WHEN 'month' THEN date_trunc('month', m.ended_at AT TIME ZONE 'UTC')::date "
            "ELSE (m.ended_at AT TIME ZONE 'UTC')::date END AS start, "
            "(p.score::bigint << 32) + (4294967295 - p.finish_ms) AS best, "
            "CASE WHEN p.won THEN (p.finish_ms::bigint << 16) + (32767 - p.score) END "
            "AS fastest FROM matches m JOIN (SELECT r.*, period FROM match_players r "
            "CROSS JOIN (VALUES ('all'), ('month'), ('day')) v(period)) p "
            f"ON p.match_id = m.id WHERE m.id >= {first_match}) g "
            "GROUP BY ruleset, period, start, player_id"
        )
        progress("counts ...")
        await boards.recount(connection)
    await _fill_ratings(database, players=players, first_player=first_player, seed=seed)
    return int(built.rowcount)


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
