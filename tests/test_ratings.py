"""server.storage.ratings: openskill updates from a ranking, history, the rating request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from server.storage.database import Database
from server.storage.models import Match, Player, RatingChange
from server.storage.ratings import PROVISIONAL_GAMES, Ratings, rating_of, update_ratings
from tests.client import Client
from tests.races import registered, start_race, stop_all

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


@pytest.fixture
def engine(migrated_engine: AsyncEngine) -> AsyncEngine:
    return migrated_engine


async def setup_match(engine: AsyncEngine, players: int) -> tuple[int, list[int]]:
    async with engine.begin() as connection:
        ids = [
            (
                await connection.execute(
                    insert(Player)
                    .values(name=f"p{n}", token_hash=f"{n:064d}", created_at=NOW)
                    .returning(Player.id)
                )
            ).scalar_one()
            for n in range(players)
        ]
        match_id = (
            await connection.execute(
                insert(Match)
                .values(
                    code="ABCDEF",
                    ruleset="classic",
                    max_players=players,
                    time_limit_s=600,
                    win_by="time",
                    public=False,
                    rated=True,
                    host_id=ids[0],
                    status="finished",
                    seed=b"x",
                    commitment="0" * 64,
                    created_at=NOW,
                )
                .returning(Match.id)
            )
        ).scalar_one()
    return match_id, ids


async def test_the_winner_gains_and_the_loser_loses_rating(engine: AsyncEngine) -> None:
    match_id, (winner, loser) = await setup_match(engine, 2)
    async with engine.begin() as connection:
        changes = await update_ratings(
            connection,
            ruleset="classic",
            match_id=match_id,
            ranking=[(winner, 1), (loser, 2)],
            at=NOW,
        )
    by_player = {change["player_id"]: change for change in changes}
    assert by_player[winner]["mu"] > 25 > by_player[loser]["mu"]
    assert by_player[winner]["ordinal"] > by_player[loser]["ordinal"]
    assert all(c["games"] == 1 and c["provisional"] for c in changes)


async def test_a_shared_rank_is_a_tie(engine: AsyncEngine) -> None:
    match_id, (a, b, c) = await setup_match(engine, 3)
    async with engine.begin() as connection:
        changes = await update_ratings(
            connection,
            ruleset="classic",
            match_id=match_id,
            ranking=[(a, 1), (b, 1), (c, 3)],
            at=NOW,
        )
    mu = {change["player_id"]: change["mu"] for change in changes}
    assert mu[a] == mu[b] > mu[c]


async def test_ratings_accumulate_with_a_history_and_stop_being_provisional(
    engine: AsyncEngine,
) -> None:
    match_id, (a, b) = await setup_match(engine, 2)
    for _ in range(PROVISIONAL_GAMES):
        async with engine.begin() as connection:
            await update_ratings(
                connection, ruleset="classic", match_id=match_id, ranking=[(a, 1), (b, 2)], at=NOW
            )
    async with engine.connect() as connection:
        mine = await rating_of(connection, a)
        rows = (
            await connection.execute(select(RatingChange.id).where(RatingChange.player_id == a))
        ).all()
    [rating] = mine["ratings"]
    assert rating["games"] == PROVISIONAL_GAMES and rating["provisional"] is False
    assert len(rows) == PROVISIONAL_GAMES == len(mine["history"])
    assert mine["history"][0]["mu"] == rating["mu"]  # newest first
    assert mine["history"][0]["mu"] > mine["history"][-1]["mu"]
    # Each update names its match by the code a replay is asked with.
    assert {(h["match_id"], h["match_code"]) for h in mine["history"]} == {(match_id, "ABCDEF")}


async def test_a_solo_match_rates_nobody(engine: AsyncEngine) -> None:
    match_id, (a,) = await setup_match(engine, 1)
    async with engine.begin() as connection:
        assert (
            await update_ratings(
                connection, ruleset="classic", match_id=match_id, ranking=[(a, 1)], at=NOW
            )
            == []
        )


async def test_a_rated_race_updates_both_ratings_and_the_rating_request_shows_them(
    connect: Callable[[], Awaitable[Client]],
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    ended = await stop_all([bob, ana], await start_race([ana, bob]))
    assert {change["player_id"] for change in ended["ratings"]} == {ana.player_id, bob.player_id}
    mine = await ana.ok("rating")
    theirs = await ana.ok("rating", name="bob")
    assert mine["player"]["name"] == "ana" and theirs["player"]["name"] == "bob"
    assert mine["ratings"][0]["games"] == 1 and mine["ratings"][0]["provisional"] is True
    assert len(mine["history"]) == 1 and mine["history"][0]["ruleset"] == "classic"
    board = await ana.ok("leaderboard", by="rating")
    assert {entry["name"] for entry in board["entries"]} == {"ana", "bob"}
    assert (await ana.request("rating", name="nobody"))["code"] == "no_such_player"


async def test_the_ratings_repository_reads_a_players_ordinal_and_history(
    engine: AsyncEngine,
) -> None:
    match_id, (a, b) = await setup_match(engine, 2)
    ratings = Ratings(Database.of(engine))
    assert await ratings.ordinal(a, "classic") is None
    async with engine.begin() as connection:
        changes = await update_ratings(
            connection, ruleset="classic", match_id=match_id, ranking=[(a, 1), (b, 2)], at=NOW
        )
    winner = await ratings.ordinal(a, "classic")
    assert winner is not None and round(winner, 3) == changes[0]["ordinal"]
    assert await ratings.ordinal(a, "addiction") is None
    mine = await ratings.of_player(a)
    assert [r["ordinal"] for r in mine["ratings"]] == [changes[0]["ordinal"]]
    assert [h["match_id"] for h in mine["history"]] == [match_id]
