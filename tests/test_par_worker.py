"""server.par_worker: par solved off the event loop after a match ends, stored and shown."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import BrokenExecutor, Executor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from client_cli.verify import verify
from gaps import Game
from server.app import Server
from server.config import Settings
from server.par_worker import PAR_NICENESS, ParWorker, _process_pool, solve_par
from server.storage.database import Database
from server.storage.matches import Matches
from server.storage.players import Players
from tests.client import Client
from tests.fake_clock import FakeClock

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

Connect = Callable[[], Awaitable[Client]]
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
#: A no-redeal deal (deal 25 of ``gaps.simulate``) that the solver wins in a few hundredths
#: of a second: its par is exact, 58, with a small budget.
WINNABLE = "AAAA-AAAA-AAAA-AAAZ"


@dataclass
class FakeMatch:
    id: int


def threads(workers: int) -> Executor:
    return ThreadPoolExecutor(workers)


async def finished_match(
    database: Database, code: str, scores: tuple[int, ...], *, ruleset: str = "no-redeal"
) -> int:
    players, matches = Players(database), Matches(database)
    seated = []
    for index, _ in enumerate(scores):
        name = f"p{code.lower()}{index}"
        seated.append(await players.named(name) or await players.register(
            name, f"{code}{index}".ljust(64, "x"), NOW
        ))
    match_id = await matches.create(
        code=code, ruleset=ruleset, max_players=len(scores) or 1, time_limit_s=600,
        win_by="score", public=False, rated=False, host_id=seated[0].id if seated else 1,
        status="running", seed=b"\x07" * 10, commitment="c" * 64, created_at=NOW,
    )
    for player, score in zip(seated, scores, strict=True):
        await matches.add_player(match_id, player.id, NOW)
        await matches.save_result(match_id, player.id, score=score)
    await matches.set_status(match_id, "finished", ended_at=NOW)
    return match_id


async def stored_par(database: Database, code: str) -> dict[str, Any] | None:
    stored = await Matches(database).replay(code)
    assert stored is not None
    match = stored["match"]
    if match["par_score"] is None:
        return None
    return {"score": match["par_score"], "exact": match["par_exact"]}


@pytest.fixture
def database(migrated_engine: AsyncEngine) -> Database:
    return Database.of(migrated_engine)


def fixed(score: int, exact: bool) -> Callable[..., tuple[int, bool]]:
    def solve(seed: bytes, ruleset: str, **budgets: Any) -> tuple[int, bool]:
        return score, exact

    return solve


async def test_an_ended_match_gets_its_par_stored(database: Database) -> None:
    worker = ParWorker(Matches(database), solve=fixed(40, True), executor=threads)
    worker.start()
    try:
        match_id = await finished_match(database, "AAAAAA", (12, 30))
        await worker.ended(FakeMatch(match_id))
        await worker.join()
        assert await stored_par(database, "AAAAAA") == {"score": 40, "exact": True}
        assert worker.stored == 1
    finally:
        await worker.close()


async def test_the_solver_gets_the_deal_and_the_budgets(database: Database) -> None:
    calls = []

    def solve(seed: bytes, ruleset: str, **budgets: Any) -> tuple[int, bool]:
        calls.append((seed, ruleset, budgets))
        return 20, False

    worker = ParWorker(
        Matches(database), solve=solve, executor=threads, par_max_nodes=7,
        par_time_budget_s=0.5, par_max_memory_mb=9.0,
    )
    worker.start()
    try:
        await worker.ended(FakeMatch(await finished_match(database, "AAAAAA", (3,))))
        await worker.join()
    finally:
        await worker.close()
    assert calls == [(b"\x07" * 10, "no-redeal",
                      {"max_nodes": 7, "time_budget_s": 0.5, "max_memory_mb": 9.0})]


async def test_par_is_never_stored_below_a_score_a_player_recorded(database: Database) -> None:
    worker = ParWorker(Matches(database), solve=fixed(25, False), executor=threads)
    worker.start()
    try:
        await worker.ended(FakeMatch(await finished_match(database, "AAAAAA", (12, 31))))
        await worker.ended(FakeMatch(await finished_match(database, "BBBBBB", (12,))))
        await worker.join()
    finally:
        await worker.close()
    assert await stored_par(database, "AAAAAA") == {"score": 31, "exact": False}
    assert await stored_par(database, "BBBBBB") == {"score": 25, "exact": False}


async def test_an_exact_par_below_a_players_score_is_stored_as_a_lower_bound(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    worker = ParWorker(Matches(database), solve=fixed(25, True), executor=threads)
    worker.start()
    try:
        await worker.ended(FakeMatch(await finished_match(database, "AAAAAA", (31,))))
        await worker.join()
    finally:
        await worker.close()
    assert await stored_par(database, "AAAAAA") == {"score": 31, "exact": False}
    assert "a player scored above the exact par" in caplog.text


async def test_the_matches_left_unsolved_by_an_earlier_run_are_solved_at_start(
    database: Database,
) -> None:
    await finished_match(database, "AAAAAA", (5,))
    await finished_match(database, "BBBBBB", (6,))
    worker = ParWorker(Matches(database), solve=fixed(44, True), executor=threads)
    worker.start()
    try:
        for _ in range(200):
            if worker.stored == 2:
                break
            await asyncio.sleep(0.01)
        await worker.join()
    finally:
        await worker.close()
    assert await stored_par(database, "AAAAAA") == {"score": 44, "exact": True}
    assert await stored_par(database, "BBBBBB") == {"score": 44, "exact": True}


async def test_a_failed_solve_leaves_the_match_unsolved_for_the_next_start(
    database: Database,
) -> None:
    def broken(seed: bytes, ruleset: str, **budgets: Any) -> tuple[int, bool]:
        raise MemoryError("out of memory")

    match_id = await finished_match(database, "AAAAAA", (5,))
    worker = ParWorker(Matches(database), solve=broken, executor=threads)
    worker.start()
    try:
        await worker.ended(FakeMatch(match_id))
        await worker.join()
    finally:
        await worker.close()
    assert await stored_par(database, "AAAAAA") is None
    assert [m.id for m in await Matches(database).unsolved()] == [match_id]


async def test_the_end_listener_returns_before_the_solve_ends(database: Database) -> None:
    release = threading.Event()

    def slow(seed: bytes, ruleset: str, **budgets: Any) -> tuple[int, bool]:
        release.wait(10)
        return 30, True

    match_id = await finished_match(database, "AAAAAA", (5,))
    worker = ParWorker(Matches(database), solve=slow, executor=threads)
    worker.start()
    try:
        await asyncio.wait_for(worker.ended(FakeMatch(match_id)), timeout=0.5)
        await asyncio.sleep(0.05)  # the solve is under way: the loop still turns
        assert await stored_par(database, "AAAAAA") is None
        release.set()
        await worker.join()
        assert await stored_par(database, "AAAAAA") == {"score": 30, "exact": True}
    finally:
        release.set()
        await worker.close()


async def test_no_workers_means_no_par_and_no_pool(database: Database) -> None:
    def no_pool(workers: int) -> Executor:
        raise AssertionError("no pool without workers")

    worker = ParWorker(Matches(database), workers=0, executor=no_pool)
    worker.start()
    await worker.ended(FakeMatch(await finished_match(database, "AAAAAA", (5,))))
    await worker.join()
    await worker.close()
    assert await stored_par(database, "AAAAAA") is None
    with pytest.raises(ValueError, match="par workers must be 0 or more, not -1"):
        ParWorker(Matches(database), workers=-1)


def test_the_solving_processes_run_at_the_lowest_priority() -> None:
    pool = _process_pool(1)
    try:
        # os.nice(0) reads the niceness without changing it.
        assert pool.submit(os.nice, 0).result(timeout=60) >= min(os.nice(0) + PAR_NICENESS, 19)
    finally:
        pool.shutdown()


def test_solve_par_is_exact_on_a_deal_it_finishes_and_a_bound_on_a_tiny_budget() -> None:
    from gaps import Seed

    seed = Seed.parse(WINNABLE).data
    exact = solve_par(seed, "no-redeal", max_nodes=200_000, time_budget_s=30,
                      max_memory_mb=200)
    assert exact == (58, True)
    score, is_exact = solve_par(
        seed, "classic", max_nodes=1, time_budget_s=30, max_memory_mb=200
    )
    assert not is_exact and 0 <= score <= 58


# -- in the server: a real pool of processes ----------------------------------------------


async def registered(connect: Connect, *names: str) -> list[Client]:
    clients = [await connect() for _ in names]
    for client, name in zip(clients, names, strict=True):
        await client.register(name)
    return clients


async def play_and_stop(
    players: list[Client], *, seed: str | None = None, ruleset: str = "classic", moves: int = 3
) -> tuple[str, dict[str, int]]:
    """A match of ``players`` on ``seed``: each plays up to ``moves`` legal moves, then
    stops. Returns its code and each player's final score as the engine counts it."""
    host = players[0]
    fields: dict[str, Any] = {"max_players": len(players), "countdown_s": 0, "ruleset": ruleset}
    if seed is not None:
        fields["seed"] = seed
    code = (await host.ok("create_match", **fields))["match"]["code"]
    for player in players[1:]:
        await player.ok("join_match", code=code)
    for player in players:
        await player.ok("ready", code=code)
    scores = {}
    for index, player in enumerate(players):
        dealt = await player.event("started", match=code)
        game = Game.from_layout("\n".join(dealt["grid"]), ruleset)
        for _ in range(moves + index):
            legal = game.legal_moves()
            if not legal:
                break
            assert (await player.act(code, str(legal[0])))["type"] == "action_ok"
            game.play(legal[0])
        await player.act(code, "stop")
        scores[f"p{index}"] = game.score
    await host.event("match_ended", match=code)
    return code, scores


async def replay_with_par(client: Client, code: str, *, timeout_s: float = 60) -> dict[str, Any]:
    """The match's replay once its par is in it."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        document = (await client.ok("get_replay", code=code))["replay"]
        if document["match"]["par"] is not None:
            return dict(document)
        assert asyncio.get_running_loop().time() < deadline, "par never came"
        await asyncio.sleep(0.1)


def assert_par_not_below_any_score(document: dict[str, Any]) -> None:
    par = document["match"]["par"]
    for player in document["players"]:
        assert par["score"] >= player["score"], (par, player["name"], player["score"])
    report = verify(document)  # the scores replayed from the seed, too
    assert report.holds, report.discrepancies


@pytest.mark.par(par_workers=1, par_max_nodes=200_000, par_time_budget_s=30)
async def test_a_finished_match_shows_its_exact_par_in_its_replay(connect: Connect) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    code, _ = await play_and_stop([ana, bob], seed=WINNABLE, ruleset="no-redeal")
    document = await replay_with_par(bob, code)
    assert document["match"]["par"] == {"score": 58, "exact": True}
    assert_par_not_below_any_score(document)


@pytest.mark.par(par_workers=1, par_max_nodes=1, par_time_budget_s=30)
async def test_par_is_unknown_when_the_budget_runs_out(connect: Connect) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    code, _ = await play_and_stop([ana, bob], moves=6)
    document = await replay_with_par(ana, code)
    assert document["match"]["par"]["exact"] is False
    assert_par_not_below_any_score(document)


@pytest.mark.par(par_workers=1, par_max_nodes=1, par_time_budget_s=30)
async def test_the_daily_board_shows_the_par_of_the_days_deal(
    connect: Connect, clock: FakeClock
) -> None:
    ana = (await registered(connect, "ana"))[0]
    clock.advance(24 * 3600)  # registered the day before: on the board
    started = await ana.ok("daily", ruleset="classic")
    code = started["match"]["code"]
    dealt = await ana.event("started", match=code)
    game = Game.from_layout("\n".join(dealt["grid"]), "classic")
    for _ in range(4):
        legal = game.legal_moves()
        if not legal:
            break
        await ana.act(code, str(legal[0]))
        game.play(legal[0])
    await ana.act(code, "stop")
    await ana.event("match_ended", match=code)
    deadline = asyncio.get_running_loop().time() + 60
    while (board := await ana.ok("daily_board", ruleset="classic"))["par"] is None:
        assert asyncio.get_running_loop().time() < deadline, "par never came"
        await asyncio.sleep(0.1)
    assert board["day"] == clock.today().isoformat() and board["entries"]
    assert board["par"]["exact"] is False
    assert board["par"]["score"] >= max(entry["score"] for entry in board["entries"])


async def test_a_match_ended_while_par_was_off_is_solved_when_the_server_starts_again(
    settings: Settings,
) -> None:
    codes = []
    for par_workers in (0, 1):
        server = Server(replace(settings, par_workers=par_workers, par_max_nodes=200_000))
        await server.start()
        try:
            client = await Client.connect(f"ws://127.0.0.1:{server.port}")
            await client.register(f"ana{par_workers}")
            if par_workers == 0:
                code, _ = await play_and_stop([client], seed=WINNABLE, ruleset="no-redeal")
                codes.append(code)
                assert (await client.ok("get_replay", code=code))["replay"]["match"][
                    "par"
                ] is None
            else:
                document = await replay_with_par(client, codes[0])
                assert document["match"]["par"] == {"score": 58, "exact": True}
                assert_par_not_below_any_score(document)
            await client.close()
        finally:
            await server.close()


async def test_a_pool_broken_by_a_dead_worker_is_replaced_for_the_next_matches(
    database: Database,
) -> None:
    pools: list[Executor] = []

    def pool(workers: int) -> Executor:
        made = ThreadPoolExecutor(workers)
        if not pools:
            made.shutdown()  # the first is broken: it takes no work
            made.submit = broken_submit  # type: ignore[method-assign]
        pools.append(made)
        return made

    def broken_submit(*args: Any, **kwargs: Any) -> Any:
        raise BrokenExecutor("a worker died")

    worker = ParWorker(Matches(database), solve=fixed(30, True), executor=pool)
    worker.start()
    await worker.join()  # its start's sweep found nothing: it sweeps no match stored after
    try:
        await worker.ended(FakeMatch(await finished_match(database, "AAAAAA", (5,))))
        await worker.join()
        await worker.ended(FakeMatch(await finished_match(database, "BBBBBB", (5,))))
        await worker.join()
    finally:
        await worker.close()
    assert len(pools) == 2
    assert await stored_par(database, "AAAAAA") is None  # solved at the next start
    assert await stored_par(database, "BBBBBB") == {"score": 30, "exact": True}
