"""The rebuild of the boards and ratings from the stored results, on PostgreSQL and SQLite:
it gives the rows the live server wrote match by match."""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Game, Move
from server.app import Server
from server.storage.models import BoardEntry, Rating, RatingChange
from server.storage.rebuild import rebuild_boards_and_ratings
from tests.client import Client
from tests.races import registered, start_race

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

Connect = Callable[[], Awaitable[Client]]
#: Floats equal to this: a fold in the same order computes the very same numbers, but a
#: value may round-trip through a database column.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Derived:
    """Every row the match endings derive: the board rows by their key, the ratings by
    (player, ruleset), the rating history by (match, player), its ids left out (a rebuild
    numbers the history anew)."""

    boards: dict[tuple[Any, ...], tuple[Any, ...]]
    ratings: dict[tuple[Any, ...], tuple[Any, ...]]
    changes: dict[tuple[Any, ...], tuple[Any, ...]]


async def derived_rows(engine: AsyncEngine) -> Derived:
    async with engine.connect() as connection:
        board_rows = (await connection.execute(select(BoardEntry.__table__))).all()
        rating_rows = (await connection.execute(select(Rating.__table__))).all()
        change_rows = (await connection.execute(select(RatingChange.__table__))).all()
    return Derived(
        boards={
            (r.ruleset, r.period, r.period_start, r.player_id): (
                r.games,
                r.wins,
                r.best_score,
                r.best_score_ms,
                r.fastest_win_ms,
                r.fastest_win_score,
            )
            for r in board_rows
        },
        ratings={
            (r.player_id, r.ruleset): (r.games, r.mu, r.sigma, r.ordinal, r.updated_at)
            for r in rating_rows
        },
        changes={
            (r.match_id, r.player_id): (r.ruleset, r.rank, r.mu, r.sigma, r.ordinal, r.at)
            for r in change_rows
        },
    )


def assert_same_rows(found: Derived, expected: Derived) -> None:
    """The same keys in each table, and the same values (floats within TOLERANCE)."""
    for table in ("boards", "ratings", "changes"):
        found_rows, expected_rows = getattr(found, table), getattr(expected, table)
        assert sorted(found_rows) == sorted(expected_rows), table
        for key, values in expected_rows.items():
            assert same_values(found_rows[key], values), (table, key, found_rows[key], values)


def same_values(found: tuple[Any, ...], expected: tuple[Any, ...]) -> bool:
    return len(found) == len(expected) and all(
        math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE) if isinstance(b, float) else a == b
        for a, b in zip(found, expected, strict=True)
    )


async def play(client: Client, code: str, moves: int, rng: random.Random) -> None:
    """Up to ``moves`` legal moves on the dealt grid, each one that raises the score most
    (ties at random), then stop: players making more moves score more."""
    started = await client.event("started", match=code)
    game = Game.from_layout("\n".join(started["grid"]), "classic")
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            break
        move = max(legal, key=lambda m: (score_after(game, m), rng.random()))
        reply = await client.act(code, str(move))
        assert reply["type"] == "action_ok", reply
        game.play(move)
    reply = await client.act(code, "stop")
    assert reply["type"] == "action_ok", reply


def score_after(game: Game, move: Move) -> int:
    trial = game.copy()
    trial.play(move)
    return trial.score


async def race(clients: list[Client], rng: random.Random, **options: Any) -> dict[str, Any]:
    """A match of ``clients``, each making a random number of moves; its match_ended."""
    code = await start_race(clients, **options)
    for client in clients:
        await play(client, code, rng.randrange(0, 16), rng)
    return await clients[0].event("match_ended", match=code)


async def test_the_rebuild_gives_the_rows_the_matches_wrote_as_they_ended(
    connect: Connect, server: Server
) -> None:
    ana, bob, cat, dan = await registered(connect, "ana", "bob", "cat", "dan")
    rng = random.Random(7)
    rated = [
        ([ana, bob], "time"),
        ([bob, cat, dan], "score"),
        ([cat, ana], "time"),
        ([ana, bob, cat, dan], "score"),
        ([dan], "time"),  # on the boards, but rates nobody
        ([dan, cat], "score"),
        ([bob, ana, dan], "time"),
    ]
    scores = set()
    for clients, win_by in rated:
        ended = await race(clients, rng, win_by=win_by)
        scores |= {row["score"] for row in ended["ranking"]}
    # A chosen deal counts for no board and no rating: the rebuild must skip it too.
    await race([ana, bob], rng, seed="AAAA-BBBB-CCCC-DDDD")
    incremental = await derived_rows(server.database.engine)

    folded = await rebuild_boards_and_ratings(server.database.engine, batch_matches=3)

    assert folded == len(rated)
    rebuilt = await derived_rows(server.database.engine)
    assert_same_rows(rebuilt, incremental)
    # What was compared: results of differing scores, and a rating per match of two or more.
    assert len(scores) > 1
    assert len(incremental.changes) == sum(len(c) for c, _ in rated if len(c) > 1)
    rated_games = {
        (client.player_id, "classic"): sum(client in c for c, _ in rated if len(c) > 1)
        for client in (ana, bob, cat, dan)
    }
    assert {key: values[0] for key, values in incremental.ratings.items()} == rated_games


async def test_a_rebuild_repairs_board_and_rating_rows_gone_wrong(
    connect: Connect, server: Server
) -> None:
    ana, bob, cat = await registered(connect, "ana", "bob", "cat")
    rng = random.Random(3)
    for clients in ([ana, bob], [bob, cat], [cat, ana, bob]):
        await race(clients, rng)
    incremental = await derived_rows(server.database.engine)
    async with server.database.engine.begin() as connection:
        await connection.execute(update(Rating).values(games=99, mu=1.0))
        await connection.execute(update(RatingChange).values(rank=9))
        await connection.execute(delete(BoardEntry).where(BoardEntry.player_id == ana.player_id))
        await connection.execute(update(BoardEntry).values(wins=7))
    assert await derived_rows(server.database.engine) != incremental

    assert await rebuild_boards_and_ratings(server.database.engine) == 3

    assert_same_rows(await derived_rows(server.database.engine), incremental)


async def test_a_match_with_a_bot_counts_for_its_bots_only_and_the_rebuild_agrees(
    connect: Connect, server: Server
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    beep, boop = await connect(), await connect()
    await beep.register("beep", bot=True)
    await boop.register("boop", bot=True)
    rng = random.Random(11)
    await race([ana, bob], rng)  # people only: everyone counts
    await race([beep, boop], rng, bots=True)  # bots only: everyone counts, among bots
    await race([ana, beep], rng, bots=True)  # a bot sat: its bot only counts
    await race([boop, bob, beep], rng, bots=True)
    incremental = await derived_rows(server.database.engine)

    assert await rebuild_boards_and_ratings(server.database.engine) == 4
    assert_same_rows(await derived_rows(server.database.engine), incremental)
    # The other rebuild, of the boards alone, counts the same games.
    await server.store.boards.rebuild()
    assert (await derived_rows(server.database.engine)).boards == incremental.boards

    all_time = {
        player: values[0]
        for (ruleset, period, _, player), values in incremental.boards.items()
        if period == "all"
    }
    assert all_time == {
        ana.player_id: 1,
        bob.player_id: 1,
        beep.player_id: 3,
        boop.player_id: 2,
    }
    rated_games = {player: values[0] for (player, _), values in incremental.ratings.items()}
    # beep's game beside ana alone rates nobody: one bot is no field to rank among.
    assert rated_games == {
        ana.player_id: 1,
        bob.player_id: 1,
        beep.player_id: 2,
        boop.player_id: 2,
    }
