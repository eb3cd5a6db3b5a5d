"""server.storage.boards on real databases: ordering, tie-breaks, cursors, periods, around-me."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from server.app import Server
from server.errors import ServerError
from server.storage.boards import (
    MAX_RANK,
    Boards,
    Result,
    around,
    encode_cursor,
    page,
    period_start,
    rebuild,
    record_results,
)
from server.storage.database import Database
from server.storage.models import BoardEntry, Player, Rating
from tests.client import Client, http_get
from tests.races import registered, start_race, stop_all

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

NOV_30_LATE = datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
DEC_1_EARLY = datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC)
NOV_30 = NOV_30_LATE.date()


@pytest.fixture
def engine(migrated_engine: AsyncEngine) -> AsyncEngine:
    return migrated_engine


async def make_players(engine: AsyncEngine, count: int) -> list[int]:
    async with engine.begin() as connection:
        ids = []
        for number in range(count):
            ids.append(
                (
                    await connection.execute(
                        insert(Player)
                        .values(
                            name=f"p{number}",
                            token_hash=f"{number:064d}",
                            created_at=datetime.now(UTC),
                        )
                        .returning(Player.id)
                    )
                ).scalar_one()
            )
    return ids


async def record(
    engine: AsyncEngine, ended_at: datetime, *results: Result, ruleset: str = "classic"
) -> None:
    async with engine.begin() as connection:
        await record_results(connection, ruleset=ruleset, ended_at=ended_at, results=results)


async def board(
    engine: AsyncEngine,
    by: str,
    *,
    period: str = "all",
    day: date = NOV_30,
    cursor: str | None = None,
    limit: int = 20,
    ruleset: str = "classic",
) -> dict:
    async with engine.connect() as connection:
        return await page(
            connection,
            ruleset=ruleset,
            by=by,
            period=period,
            day=day,
            cursor=cursor,
            limit=limit,
            provisional_games=10,
        )


def names(result: dict) -> list[str]:
    return [entry["name"] for entry in result["entries"]]


async def test_the_score_board_ranks_best_scores_and_breaks_ties_by_less_time(
    engine: AsyncEngine,
) -> None:
    a, b, c = await make_players(engine, 3)
    await record(
        engine,
        NOV_30_LATE,
        Result(a, 20, 90_000, False),
        Result(b, 30, 80_000, False),
        Result(c, 30, 70_000, False),
    )
    await record(engine, NOV_30_LATE, Result(a, 10, 10_000, False))  # worse: keeps 20
    result = await board(engine, "score")
    assert names(result) == ["p2", "p1", "p0"]
    assert [
        (e["rank"], e["best_score"], e["best_score_ms"], e["games"]) for e in result["entries"]
    ] == [(1, 30, 70_000, 1), (2, 30, 80_000, 1), (3, 20, 90_000, 2)]


async def test_the_time_board_lists_only_winners_fastest_first(engine: AsyncEngine) -> None:
    a, b, c = await make_players(engine, 3)
    await record(
        engine,
        NOV_30_LATE,
        Result(a, 58, 300_000, True),
        Result(b, 40, 1_000, False),
        Result(c, 58, 200_000, True),
    )
    await record(engine, NOV_30_LATE, Result(a, 48, 150_000, True))  # a faster win, fewer points
    result = await board(engine, "time")
    assert [
        (e["name"], e["fastest_win_ms"], e["fastest_win_score"], e["wins"])
        for e in result["entries"]
    ] == [("p0", 150_000, 48, 2), ("p2", 200_000, 58, 1)]


async def test_the_wins_board_counts_wins_and_prefers_fewer_games(engine: AsyncEngine) -> None:
    a, b, c = await make_players(engine, 3)
    for _ in range(2):
        await record(engine, NOV_30_LATE, Result(a, 58, 1, True), Result(b, 58, 1, True))
    await record(engine, NOV_30_LATE, Result(b, 3, 1, False), Result(c, 3, 1, False))
    result = await board(engine, "wins")
    assert [(e["name"], e["wins"], e["games"]) for e in result["entries"]] == [
        ("p0", 2, 2),
        ("p1", 2, 3),
    ]


async def test_cursors_walk_the_whole_board_once_in_order(engine: AsyncEngine) -> None:
    players = await make_players(engine, 23)
    await record(
        engine,
        NOV_30_LATE,
        *[
            Result(pid, number % 7, 1000 * (number % 3), False)
            for number, pid in enumerate(players)
        ],
    )
    seen, ranks, cursor = [], [], None
    while True:
        result = await board(engine, "score", limit=5, cursor=cursor)
        seen += names(result)
        ranks += [entry["rank"] for entry in result["entries"]]
        cursor = result["next_cursor"]
        if cursor is None:
            break
    whole = await board(engine, "score", limit=100)
    assert seen == names(whole) and len(seen) == 23 and len(set(seen)) == 23
    assert ranks == list(range(1, 24))


async def test_a_forged_cursor_is_refused(engine: AsyncEngine) -> None:
    with pytest.raises(ServerError) as refused:
        await board(engine, "score", cursor="not-a-cursor")
    assert refused.value.code == "bad_message" and refused.value.details["field"] == "cursor"


#: Each board's sort key, column by column, with the values its columns hold at their edges.
KEY_EDGES: dict[str, list[tuple[float, float]]] = {
    "score": [(-(2**15), 2**15 - 1), (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)],
    "time": [(-(2**31), 2**31 - 1), (-(2**15), 2**15 - 1), (-(2**63), 2**63 - 1)],
    "wins": [(-(2**31), 2**31 - 1), (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)],
    "rating": [(-1.7e308, 1.7e308), (-(2**63), 2**63 - 1)],
}
KEY_COLUMNS = {
    "score": ["best_score", "best_score_ms", "player_id"],
    "time": ["fastest_win_ms", "fastest_win_score", "player_id"],
    "wins": ["wins", "games", "player_id"],
    "rating": ["ordinal", "player_id"],
}
#: What no column of any board holds: values the fuzzer sent, and text with a NUL.
NOT_A_KEY_VALUE = [None, [1], {"a": 1}, True, False, "\x00", "7", ""]


async def refusal(engine: AsyncEngine, by: str, cursor: str) -> str:
    """The message of the bad_message a page with ``cursor`` is refused with."""
    with pytest.raises(ServerError) as refused:
        await board(engine, by, cursor=cursor)
    assert refused.value.code == "bad_message" and refused.value.details["field"] == "cursor"
    return refused.value.message


@pytest.mark.parametrize("by", KEY_EDGES)
async def test_a_cursor_with_a_value_of_the_wrong_type_names_its_column(
    engine: AsyncEngine, by: str
) -> None:
    for place, column in enumerate(KEY_COLUMNS[by]):
        for value in NOT_A_KEY_VALUE:
            key: list[object] = [edges[0] for edges in KEY_EDGES[by]]
            key[place] = value
            message = await refusal(engine, by, encode_cursor(key, 5))
            assert f"has {column} " in message, (key, message)


@pytest.mark.parametrize("by", KEY_EDGES)
async def test_a_cursor_with_an_integer_past_its_columns_range_or_a_fraction_is_refused(
    engine: AsyncEngine, by: str
) -> None:
    for place, (low, high) in enumerate(KEY_EDGES[by]):
        if isinstance(low, float):
            continue  # a double's range ends in overflow: the next test
        for value in (low - 1, high + 1, 10**30, -(10**30), 0.5, 1.0):
            key: list[object] = [edges[0] for edges in KEY_EDGES[by]]
            key[place] = value
            message = await refusal(engine, by, encode_cursor(key, 5))
            assert f"not an integer from {low} to {high}" in message, (key, message)


async def rate(engine: AsyncEngine, *ordinals: tuple[int, float]) -> None:
    async with engine.begin() as connection:
        for player_id, ordinal in ordinals:
            await connection.execute(
                insert(Rating).values(
                    player_id=player_id,
                    ruleset="classic",
                    mu=ordinal + 3,
                    sigma=1.0,
                    ordinal=ordinal,
                    games=20,
                    updated_at=NOV_30_LATE,
                )
            )


@pytest.mark.parametrize(
    ("by", "after_lowest", "after_highest"),
    [
        ("score", [], [8]),  # best_score sorts descending: every row is after the highest
        ("time", [8], []),  # fastest_win_ms sorts ascending
        ("wins", [], [8]),
        ("rating", [], [8]),
    ],
)
async def test_a_cursor_at_the_edges_of_its_columns_ranges_reads_a_page(
    engine: AsyncEngine, by: str, after_lowest: list[int], after_highest: list[int]
) -> None:
    (a,) = await make_players(engine, 1)
    await record(engine, NOV_30_LATE, Result(a, 40, 1_000, True))
    await rate(engine, (a, 25.0))
    for edge, ranks in ((0, after_lowest), (1, after_highest)):
        key = [edges[edge] for edges in KEY_EDGES[by]]
        result = await board(engine, by, cursor=encode_cursor(key, 7))
        assert [e["rank"] for e in result["entries"]] == ranks, (key, result)


@pytest.mark.parametrize("ordinal", [float("nan"), float("inf"), float("-inf"), 10**400])
async def test_a_rating_cursor_without_a_finite_ordinal_is_refused(
    engine: AsyncEngine, ordinal: float
) -> None:
    message = await refusal(engine, "rating", encode_cursor([ordinal, 1], 5))
    assert "not a finite number" in message


async def test_a_rating_cursor_takes_an_ordinal_written_as_an_integer(
    engine: AsyncEngine,
) -> None:
    a, b = await make_players(engine, 2)
    await rate(engine, (a, 30.0), (b, 10.0))
    result = await board(engine, "rating", cursor=encode_cursor([20, 0], 4))
    assert [(e["rank"], e["name"]) for e in result["entries"]] == [(5, "p1")]


@pytest.mark.parametrize("rank", [-1, MAX_RANK + 1, True, 1.0, "5", None])
async def test_a_cursor_whose_rank_is_not_a_count_is_refused(
    engine: AsyncEngine, rank: object
) -> None:
    message = await refusal(engine, "score", encode_cursor([1, 1, 1], rank))  # type: ignore[arg-type]
    assert f"not an integer from 0 to {MAX_RANK}" in message


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        ("[[1, 1, 1], 5, 6]", "is not a [key, rank] pair"),
        ('{"key": [1, 1, 1], "rank": 5}', "is not a [key, rank] pair"),
        ("[[1, 1], 5]", "has no key of the 3 values of the score board"),
        ("[[1, 1, 1, 1], 5]", "has no key of the 3 values of the score board"),
        ('["abc", 5]', "has no key of the 3 values of the score board"),
        ("[1, 1, 1]", "is not a [key, rank] pair"),
        ("[[1, 1, 1], 5", "is not base64 of JSON"),
        ("[" * 5000 + "]" * 5000, "is not base64 of JSON"),
    ],
)
async def test_a_cursor_that_is_not_a_key_and_a_rank_says_what_it_is(
    engine: AsyncEngine, shape: str, problem: str
) -> None:
    cursor = base64.urlsafe_b64encode(shape.encode()).decode()
    assert problem in await refusal(engine, "score", cursor)


async def test_periods_split_at_utc_midnight_and_month_ends(engine: AsyncEngine) -> None:
    a, b = await make_players(engine, 2)
    await record(engine, NOV_30_LATE, Result(a, 30, 1, False))
    await record(engine, DEC_1_EARLY, Result(b, 20, 1, False))
    november, december = date(2026, 11, 30), date(2026, 12, 1)
    assert names(await board(engine, "score", period="day", day=november)) == ["p0"]
    assert names(await board(engine, "score", period="day", day=december)) == ["p1"]
    assert names(await board(engine, "score", period="month", day=date(2026, 11, 2))) == ["p0"]
    assert names(await board(engine, "score", period="month", day=december)) == ["p1"]
    assert names(await board(engine, "score", period="all")) == ["p0", "p1"]
    assert period_start("month", november) == date(2026, 11, 1)


async def test_boards_are_per_ruleset(engine: AsyncEngine) -> None:
    a, b = await make_players(engine, 2)
    await record(engine, NOV_30_LATE, Result(a, 30, 1, False), ruleset="classic")
    await record(engine, NOV_30_LATE, Result(b, 30, 1, False), ruleset="addiction")
    assert names(await board(engine, "score", ruleset="addiction")) == ["p1"]


async def test_around_me_gives_my_rank_and_my_neighbours(engine: AsyncEngine) -> None:
    players = await make_players(engine, 11)
    await record(
        engine, NOV_30_LATE, *[Result(pid, 40 - n, 1, False) for n, pid in enumerate(players)]
    )
    async with engine.connect() as connection:
        mine = await around(
            connection,
            ruleset="classic",
            by="score",
            period="all",
            day=NOV_30_LATE.date(),
            player_id=players[6],
            neighbours=2,
            provisional_games=10,
        )
        nobody = await around(
            connection,
            ruleset="classic",
            by="time",
            period="all",
            day=NOV_30_LATE.date(),
            player_id=players[6],
            neighbours=2,
            provisional_games=10,
        )
    assert mine["rank"] == 7
    assert [(e["rank"], e["name"]) for e in mine["entries"]] == [
        (5, "p4"),
        (6, "p5"),
        (7, "p6"),
        (8, "p7"),
        (9, "p8"),
    ]
    assert nobody["rank"] is None and nobody["entries"] == []


async def test_a_rebuild_from_stored_results_gives_the_incremental_rows(
    connect: Callable[[], Awaitable[Client]],
    server: Server,
) -> None:
    clients = await registered(connect, "ana", "bob", "cat")
    for round_number in range(3):  # each time another player stops first
        await stop_all(clients[round_number:] + clients[:round_number], await start_race(clients))
    columns = [c for c in BoardEntry.__table__.c]
    async with server.database.engine.begin() as connection:
        incremental = sorted(
            tuple(row) for row in (await connection.execute(select(*columns))).all()
        )
        written = await rebuild(connection)
        rebuilt = sorted(tuple(row) for row in (await connection.execute(select(*columns))).all())
    assert written == len(incremental) == 9  # 3 players x 3 periods
    assert rebuilt == incremental


async def test_a_bots_result_is_on_the_bots_boards_and_off_the_peoples_marked_as_a_bot(
    connect: Callable[[], Awaitable[Client]],
    server: Server,
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    beep = await connect()
    await beep.register("beep", bot=True)
    await stop_all([ana, bob], await start_race([ana, bob]))
    await stop_all([ana, beep], await start_race([ana, beep], bots=True))

    for by in ("score", "wins", "rating"):
        people = await ana.ok("leaderboard", by=by, period="all")
        assert people["kind"] == "people"
        assert {(e["name"], e["bot"]) for e in people["entries"]} <= {
            ("ana", False),
            ("bob", False),
        }
    score = await ana.ok("leaderboard", by="score")
    assert [(e["name"], e["games"]) for e in score["entries"]] in (
        [("ana", 1), ("bob", 1)],
        [("bob", 1), ("ana", 1)],
    )  # the race beside beep counts for neither ana nor anyone but beep
    bots = await ana.ok("leaderboard", by="score", kind="bots")
    assert [(e["name"], e["bot"], e["games"]) for e in bots["entries"]] == [("beep", True, 1)]
    mine = await beep.ok("leaderboard", by="score", around_me=True)
    assert (mine["rank"], mine["entries"]) == (None, [])  # a bot has no row among people
    mine = await beep.ok("leaderboard", by="score", around_me=True, kind="bots")
    assert mine["rank"] == 1 and mine["entries"][0]["bot"] is True
    ratings = await ana.ok("rating", name="ana")
    assert ratings["player"]["bot"] is False and ratings["ratings"][0]["games"] == 1

    status, body = await http_get(server.port, "/leaderboards/classic?by=score&kind=bots")
    assert status == 200 and [(e["name"], e["bot"]) for e in body["entries"]] == [
        ("beep", True)
    ]
    status, body = await http_get(server.port, "/leaderboards/classic?kind=robots")
    assert status == 400 and (body["code"], body["field"]) == ("bad_message", "kind")
    status, body = await http_get(server.port, "/ratings/beep")
    assert status == 200 and body["player"]["bot"] is True


def test_the_benchmark_fills_builds_and_times_a_small_database(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.boards",
            "--database-url",
            f"sqlite:///{tmp_path}/b.db",
            "--results",
            "400",
            "--players",
            "50",
            "--repeats",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "database holds 400 results" in lines[2]
    timings = [line for line in lines if " ms median, " in line]
    assert len(timings) == 16 and all("(3 queries)" in line for line in timings)


async def test_the_boards_repository_reads_a_page_and_around_me_from_its_database(
    engine: AsyncEngine,
) -> None:
    a, b, c = await make_players(engine, 3)
    await record(
        engine, NOV_30_LATE, Result(a, 40, 9000, False), Result(b, 52, 8000, False),
        Result(c, 30, 7000, False),
    )
    boards = Boards(Database.of(engine), provisional_games=10)
    first = await boards.page(ruleset="classic", by="score", period="all", day=NOV_30,
                              cursor=None, limit=2)
    assert names(first) == ["p1", "p0"]
    rest = await boards.page(ruleset="classic", by="score", period="all", day=NOV_30,
                             cursor=first["next_cursor"], limit=2)
    assert names(rest) == ["p2"] and rest["entries"][0]["rank"] == 3
    mine = await boards.around(ruleset="classic", by="score", period="all", day=NOV_30,
                               player_id=c, neighbours=1)
    assert mine["rank"] == 3 and names(mine) == ["p0", "p2"]


async def test_the_boards_repository_rebuilds_the_rows_it_recorded(engine: AsyncEngine) -> None:
    a, b = await make_players(engine, 2)
    await record(engine, NOV_30_LATE, Result(a, 40, 9000, False), Result(b, 58, 8000, True))
    before = await board(engine, "time")
    async with engine.begin() as connection:
        await connection.execute(delete(BoardEntry))
    # The rebuild reads stored results: there are none (no match rows), so it writes none.
    assert await Boards(Database.of(engine), provisional_games=10).rebuild() == 0
    assert names(before) == ["p1"]
    assert names(await board(engine, "time")) == []
