"""Games that end at the same instant (issue 17): every player of a match drops at once and,
past the grace period, every result is stored whole and every replay verifies. End to end
on a live server, on PostgreSQL and on SQLite; and the end of a match, stored twice, counts
once."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from client_cli.verify import verify
from gaps import Game, Seed
from server.app import Server
from server.lobby import new_code
from server.storage.models import BoardEntry, MatchPlayer, Rating, RatingChange
from server.storage.models import Match as MatchRow
from server.storage.results import FinishedGame
from server.storage.store import Store
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.lobbies import new_player
from tests.races import registered, start_race

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

Connect = Callable[[], Awaitable[Client]]
GRACE_S = 0.3


async def players(connect: Connect, count: int, prefix: str) -> list[Client]:
    names = (f"{prefix}{n}-{random.randrange(10**6)}" for n in range(count))
    return await registered(connect, *names)


async def moved(client: Client, code: str, moves: int, rng: random.Random) -> int:
    """Up to ``moves`` random legal moves on the dealt game; how many were made."""
    started = next(e for e in client.events if e["event"] == "started" and e["match"] == code)
    game = Game.from_layout("\n".join(started["grid"]), "classic")
    for made in range(moves):
        legal = game.legal_moves()
        if not legal:
            return made
        move = rng.choice(legal)
        reply = await client.act(code, str(move))
        assert reply["type"] == "action_ok", reply
        game.play(move)
    return moves


async def drop(clients: list[Client]) -> None:
    """Every connection cut in one turn of the loop, as when a network link goes down."""
    for client in clients:
        client.connection.transport.abort()
    await asyncio.gather(*(client.close() for client in clients))


async def all_away(server: Server, codes: list[str]) -> None:
    """Wait until the server has seen every player of ``codes`` go: each seat has no
    connection left, and its grace period runs from now."""
    async with asyncio.timeout(15):
        while any(
            seat.connections for code in codes for seat in server.lobby.get(code).state.seats
        ):
            await asyncio.sleep(0.01)


async def replay_once_over(server: Server, code: str, *, timeout_s: float = 15.0) -> dict[str, Any]:
    """The replay document, once the match has ended (409 until then)."""
    async with asyncio.timeout(timeout_s):
        while True:
            status, body = await http_get(server.port, f"/matches/{code}/replay")
            if status == 200:
                return body
            assert status == 409, (status, body)
            await asyncio.sleep(0.05)


def assert_dropped_and_whole(document: dict[str, Any], clients: list[Client]) -> None:
    """Each game ended by the disconnect past the grace period, stored whole; the
    replay verifies."""
    assert len(document["players"]) == len(clients)
    assert {p["player_id"] for p in document["players"]} == {c.player_id for c in clients}
    for player in document["players"]:
        assert player["end_reason"] == "disconnected", player
        assert player["finish_ms"] is not None and player["rank"] is not None, player
        last = player["actions"][-1]["t_ms"] if player["actions"] else 0
        assert player["finish_ms"] >= last + GRACE_S * 1000, player
    report = verify(document)
    assert report.discrepancies == [], report.discrepancies


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.grace_s(GRACE_S)
@pytest.mark.parametrize("count", [4, 16])
async def test_every_player_of_a_match_dropping_at_once_gets_a_whole_result(
    connect: Connect,
    server: Server,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    count: int,
) -> None:
    caplog.set_level(logging.WARNING)
    clients = await players(connect, count, "drop")
    code = await start_race(clients)
    await asyncio.gather(
        *(moved(client, code, 3, random.Random(n)) for n, client in enumerate(clients))
    )
    await drop(clients)
    await all_away(server, [code])
    clock.advance(GRACE_S)
    document = await replay_once_over(server, code)
    assert_dropped_and_whole(document, clients)
    assert errors(caplog) == []


async def play_flat_out(client: Client, until: asyncio.Event) -> int:
    """Match after match of one player, random move after move, each game stopped once
    blocked, until ``until``: the writes of a busy server. How many actions it made."""
    actions = 0
    rng = random.Random(7)
    while not until.is_set():
        code = await start_race([client], time_limit_s=600)
        started = next(e for e in client.events if e["event"] == "started" and e["match"] == code)
        game = Game.from_layout("\n".join(started["grid"]), "classic")
        while (legal := game.legal_moves()) and not until.is_set():
            move = rng.choice(legal)
            assert (await client.act(code, str(move)))["type"] == "action_ok"
            game.play(move)
            actions += 1
        assert (await client.act(code, "stop"))["type"] == "action_ok"
        await client.event("match_ended", match=code)
    return actions


@pytest.mark.grace_s(GRACE_S)
async def test_twelve_matches_dropping_at_once_beside_a_busy_writer_all_end_whole(
    connect: Connect, server: Server, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    busy = (await players(connect, 1, "busy"))[0]
    matches = []
    for number in range(12):
        clients = await players(connect, 4, f"m{number}-")
        matches.append((await start_race(clients), clients))
    done = asyncio.Event()
    writer = asyncio.create_task(play_flat_out(busy, done))
    await asyncio.gather(
        *(
            moved(client, code, 2, random.Random(f"{code}{n}"))
            for code, clients in matches
            for n, client in enumerate(clients)
        )
    )
    await drop([client for _, clients in matches for client in clients])
    await all_away(server, [code for code, _ in matches])
    clock.advance(GRACE_S)
    documents = await asyncio.gather(*(replay_once_over(server, code) for code, _ in matches))
    done.set()
    assert await writer > 0
    for document, (_, clients) in zip(documents, matches, strict=True):
        assert_dropped_and_whole(document, clients)
    async with server.database.engine.connect() as connection:
        unfinished = (
            await connection.execute(
                select(func.count()).select_from(MatchRow).where(MatchRow.status != "finished")
            )
        ).scalar_one()
        incomplete = (
            await connection.execute(
                select(func.count())
                .select_from(MatchPlayer)
                .where(MatchPlayer.end_reason.is_(None) | MatchPlayer.finish_ms.is_(None))
            )
        ).scalar_one()
    assert (unfinished, incomplete) == (0, 0)
    assert errors(caplog) == []


# -- the end of a match, stored twice ----------------------------------------------------


async def boards_and_ratings(engine: AsyncEngine) -> dict[str, list[Any]]:
    """Every row a match end writes besides its own: boards, ratings, rating history."""
    b, r = BoardEntry, Rating
    queries = {
        "boards": select(b.__table__).order_by(b.ruleset, b.period, b.period_start, b.player_id),
        "ratings": select(r.__table__).order_by(r.player_id, r.ruleset),
        "history": select(RatingChange.__table__).order_by(RatingChange.id),
    }
    async with engine.connect() as connection:
        return {name: list((await connection.execute(q)).all()) for name, q in queries.items()}


async def test_a_match_end_stored_twice_changes_the_boards_and_ratings_once(
    migrated_engine: AsyncEngine,
) -> None:
    store = Store(migrated_engine)
    ana, bob, cat = [await new_player(store, name) for name in ("ana", "bob", "cat")]
    seed = Seed.generate()
    started = datetime.now(UTC)
    code = new_code()
    match_id = await store.matches.create(
        code=code, ruleset="classic", max_players=3, time_limit_s=600, win_by="score",
        public=False, rated=True, host_id=ana.id, status="running", seed=seed.data,
        commitment=seed.commitment, created_at=started, started_at=started,
    )
    # The table best first, which is not player id order.
    table = [FinishedGame(cat.id, 1, 7, 9000, False), FinishedGame(ana.id, 2, 3, 4000, False),
             FinishedGame(bob.id, 3, 0, 1000, False)]
    for game in table:
        await store.matches.add_player(match_id, game.player_id, started)
        await store.matches.save_result(
            match_id, game.player_id, score=game.score, placed=game.score, redeals=0,
            moves=game.score, won=False, end_reason="stopped", finish_ms=game.finish_ms,
            score_ms=game.finish_ms,
        )
    ended = started + timedelta(minutes=1)
    # Two at once (a retry racing the first attempt) and one later: one of them folds.
    first, racing = await asyncio.gather(
        store.results.finish_match(match_id, ended, table, ruleset="classic", rated=True),
        store.results.finish_match(match_id, ended, table, ruleset="classic", rated=True),
    )
    assert racing == first
    once = await boards_and_ratings(migrated_engine)
    again = await store.results.finish_match(
        match_id, ended + timedelta(seconds=5), table, ruleset="classic", rated=True
    )
    assert again == first
    assert sorted(rating["player_id"] for rating in first.ratings) == sorted(
        [ana.id, bob.id, cat.id]
    )
    assert all(rating["games"] == 1 for rating in first.ratings)
    assert await boards_and_ratings(migrated_engine) == once
    assert [row.games for row in once["boards"]] == [1] * 9  # all, month and day each
    assert [row.games for row in once["ratings"]] == [1] * 3
    assert len(once["history"]) == 3
    stored = await store.matches.replay(code)
    assert stored is not None
    assert _naive(stored["match"]["ended_at"]) == _naive(ended)
    assert {p["player_id"]: p["rank"] for p in stored["players"]} == {
        game.player_id: game.rank for game in table
    }


def _naive(moment: datetime) -> datetime:
    """In UTC without a zone: SQLite keeps none."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
