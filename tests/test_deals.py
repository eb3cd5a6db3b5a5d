"""Committed and winnable deals: the prover (the real solver in child processes), a
tournament's commitment checked against the seeds it reveals, ``deals: winnable``
tournaments whose every round ``gaps.solver`` solves as won, drawn off the players' path,
and the daily challenge's winnable deal, chosen once for every process."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import BrokenExecutor, Executor, Future, ThreadPoolExecutor
from datetime import date
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Game, Ruleset, Seed
from gaps.commitment import check_deals, deals_commitment
from gaps.solve import deal_seed
from gaps.solver import solve
from server.app import Server
from server.broker import LocalBroker
from server.daily import Daily, daily_seed
from server.deals import MAX_DRAWS, DealProver, NoWinnableDeal
from server.errors import ServerError
from server.storage.journal import Journal
from server.storage.store import Store
from server.tournament import tournament_channel
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.lobbies import Watcher, new_lobby, new_player
from tests.races import Connect, registered
from tests.test_tournament import Process, play_round

#: Deals of ``gaps.solve``'s numbering whose verdict at 20,000 nodes is known (measured:
#: deal 0 is lost in 63 nodes, deal 1 won in 11,585, deal 3 needs 194,277 to be won).
LOST, WON, SLOW = deal_seed(0), deal_seed(1), deal_seed(3)
SMALL_BUDGET = 20_000


@pytest.fixture
async def prover() -> AsyncIterator[DealProver]:
    """A prover on the real solver, in one child process, with a small node budget."""
    made = DealProver(max_nodes=SMALL_BUDGET)
    yield made
    await made.close()


async def test_the_first_candidate_proven_winnable_is_taken_in_their_order(
    prover: DealProver,
) -> None:
    assert await prover.verdict(LOST, "classic") == "lost"
    assert await prover.verdict(SLOW, "classic") == "unknown"  # beyond the budget: passed
    assert await prover.first_winnable([LOST, SLOW, WON, deal_seed(2)], "classic") == (2, WON)
    with pytest.raises(NoWinnableDeal):
        await prover.first_winnable([LOST, SLOW], "classic")
    two = DealProver(workers=2, max_nodes=SMALL_BUDGET)
    try:  # solved two at a time: the same one, the first in order
        assert await two.first_winnable([LOST, SLOW, WON, deal_seed(2)], "classic") == (2, WON)
    finally:
        await two.close()


async def test_drawn_deals_are_fresh_and_each_solved_as_won(prover: DealProver) -> None:
    seeds = await prover.draw(3, "no-redeal")
    assert len(set(seeds)) == 3 and all(len(seed.data) == 10 for seed in seeds)
    for seed in seeds:
        assert solve(Game(seed, "no-redeal"), max_nodes=SMALL_BUDGET).status == "won"


def lost(seed: bytes, ruleset: str, **budgets: Any) -> str:
    return "lost"


async def test_a_draw_gives_up_after_max_draws_candidates() -> None:
    hopeless = DealProver(prove=lost, executor=ThreadPoolExecutor)
    with pytest.raises(NoWinnableDeal, match=f"no winnable classic deal was proven in {MAX_DRAWS}"):
        await hopeless.draw(1, "classic")
    assert hopeless.solved == MAX_DRAWS
    await hopeless.close()


class Broken(Executor):
    """A pool whose worker died."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise BrokenExecutor("a process of the pool died")


async def test_a_pool_whose_worker_died_is_replaced_for_the_next_solves() -> None:
    pools: list[Executor] = [Broken(), ThreadPoolExecutor(1)]
    prover = DealProver(max_nodes=SMALL_BUDGET, executor=lambda _: pools.pop(0))
    with pytest.raises(BrokenExecutor):
        await prover.verdict(WON, "classic")
    assert await prover.verdict(WON, "classic") == "won"
    await prover.close()


# -- a tournament's commitment, through the protocol ------------------------------------


async def test_the_commitment_comes_with_the_tournament_and_holds_for_every_seed_revealed(
    connect: Connect,
) -> None:
    (ana,) = await registered(connect, "ana")
    created = (await ana.ok("tournament_create", rounds=2, max_players=1))["tournament"]
    assert created["deals"] == "any" and created["deals_ready"]
    assert created["seeds"] == [None, None] and len(created["round_commitments"]) == 2
    code = created["code"]
    await ana.ok("tournament_join", code=code)
    await ana.ok("tournament_start", code=code)
    grids = []
    for number in (1, 2):
        starting = await ana.event("round_starting", round=number)
        await play_round(ana, number, bot_level=None, rng=random.Random(number))
        started = await ana.event("started", match=starting["match"])
        # The round's match carries the round's own commitment.
        assert started["commitment"] == created["round_commitments"][number - 1]
        grids.append(started["grid"])
        ended = await ana.event("round_ended", round=number)
        assert Seed.parse(ended["seed"]).commitment == created["round_commitments"][number - 1]
    final = await ana.event("tournament_ended")
    seeds = [Seed.parse(code) for code in final["seeds"]]
    assert deals_commitment(seeds) == created["commitment"]
    assert [Game(seed, "classic").layout().splitlines() for seed in seeds] == grids
    view = (await ana.ok("tournament_standings", code=code))["tournament"]
    assert view["seeds"] == final["seeds"]
    assert check_deals(view["commitment"], view["round_commitments"], view["seeds"]).ok
    refused = await ana.request("tournament_create", deals="easy")
    assert (refused["code"], refused["field"]) == ("bad_message", "deals")


async def test_winnable_deals_are_drawn_before_entries_and_every_round_is_solved_as_won(
    connect: Connect, server: Server
) -> None:
    host, ana = await registered(connect, "host", "ana")
    created = (
        await host.ok("tournament_create", rounds=2, max_players=2, deals="winnable",
                      ruleset="no-redeal")
    )["tournament"]
    assert (created["deals"], created["deals_ready"], created["commitment"]) == (
        "winnable", False, None
    )
    code = created["code"]
    refused = await ana.request("tournament_join", code=code)
    if refused["type"] == "error":  # the deals may be drawn already, on a fast machine
        assert refused["code"] == "deals_not_ready"
    committed = await host.event("deals_committed", timeout=60)
    assert len(committed["round_commitments"]) == 2 and committed["seeds"] == [None, None]
    view = (await ana.ok("tournament_join", code=code))["tournament"]
    assert view["deals_ready"] and view["commitment"] == committed["commitment"]
    await host.ok("tournament_start", code=code)
    for number in (1, 2):
        await play_round(ana, number, bot_level=None, rng=random.Random(number))
        await ana.event("round_ended", round=number)
    final = await ana.event("tournament_ended")
    seeds = [Seed.parse(code) for code in final["seeds"]]
    assert deals_commitment(seeds) == committed["commitment"]
    for seed in seeds:  # gaps.solver, with its own default budget: won without redeal
        assert solve(Game(seed, "no-redeal")).status == "won"
    assert server.deal_prover.solved >= 2


class Gate(ThreadPoolExecutor):
    """A pool whose solves wait until the test opens the gate (a slow solver)."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.opened = threading.Event()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        def held() -> Any:
            self.opened.wait(10)
            return fn(*args, **kwargs)

        return super().submit(held)


@pytest.fixture
def store(migrated_engine: AsyncEngine) -> Store:
    return Store(migrated_engine)


@pytest.fixture
async def journal(store: Store) -> AsyncIterator[Journal]:
    journal = Journal(store.database)
    journal.start()
    yield journal
    await journal.close()


async def create_winnable(process: Process, host_id: int) -> dict[str, Any]:
    return await process.tournaments.create(
        host_id, name="Cup", ruleset=Ruleset.named("classic"), rounds=2, max_players=2,
        round_time_limit_s=600, start_at_ms=None, deals="winnable",
    )


async def test_a_winnable_tournament_is_answered_before_its_deals_are_drawn(
    store: Store, journal: Journal, clock: FakeClock
) -> None:
    gate = Gate(1)
    prover = DealProver(max_nodes=SMALL_BUDGET, executor=lambda _: gate)
    broker = LocalBroker()
    process = Process(store, journal, broker, clock, prover)
    try:
        ana = await new_player(store, "ana")
        # Answered at once, with no deal drawn: the solver is held back.
        created = await asyncio.wait_for(create_winnable(process, ana.id), 5)
        code = created.tournament.code
        assert created.tournament.deals_ready is False
        follower = Watcher(await broker.subscribe(tournament_channel(code)))
        with pytest.raises(ServerError) as early:
            await process.tournaments.join(code, ana.id, ana.name, bot=False)
        assert early.value.code == "deals_not_ready"
        gate.opened.set()
        committed = await follower.event("deals_committed")
        seeds = await store.tournaments.deals(created.tournament.id)
        assert committed["commitment"] == deals_commitment([Seed(s) for s in seeds])
        joined = await process.tournaments.join(code, ana.id, ana.name, bot=False)
        assert joined.tournament.commitment == committed["commitment"]
    finally:
        gate.opened.set()
        await process.crash()


async def test_a_draw_cut_by_a_dead_solver_is_tried_again_after_a_while_on_the_clock(
    store: Store, journal: Journal, clock: FakeClock
) -> None:
    pools: list[Executor] = [Broken(), ThreadPoolExecutor(1)]
    prover = DealProver(max_nodes=SMALL_BUDGET, executor=lambda _: pools.pop(0))
    broker = LocalBroker()
    process = Process(store, journal, broker, clock, prover)
    try:
        ana = await new_player(store, "ana")
        created = await create_winnable(process, ana.id)
        code, tournament_id = created.tournament.code, created.tournament.id
        follower = Watcher(await broker.subscribe(tournament_channel(code)))
        await clock.until_sleeping(1)  # the first draw failed: it waits to try again
        assert await store.tournaments.deals(tournament_id) == ()
        clock.advance(0.999)
        assert clock.sleeping() == 1
        clock.advance(0.001)  # the retry, a second later on the server's clock
        await follower.event("deals_committed")
        assert len(await store.tournaments.deals(tournament_id)) == 2
    finally:
        await process.crash()


async def test_a_tournament_whose_deals_cannot_be_proven_is_cancelled_saying_why(
    store: Store, journal: Journal, clock: FakeClock
) -> None:
    prover = DealProver(prove=lost, executor=ThreadPoolExecutor)
    broker = LocalBroker()
    process = Process(store, journal, broker, clock, prover)
    try:
        ana = await new_player(store, "ana")
        created = await create_winnable(process, ana.id)
        code = created.tournament.code
        follower = Watcher(await broker.subscribe(tournament_channel(code)))
        cancelled = await follower.event("tournament_cancelled")
        assert cancelled["reason"] == (
            "the server could not draw winnable deals: no winnable classic deal was proven in "
            f"{MAX_DRAWS} draws"
        )
        assert cancelled["seeds"] == []
        [stored] = await store.tournaments.ended_recently(limit=5)
        assert (stored.status, stored.cancel_reason) == ("cancelled", cancelled["reason"])
    finally:
        await process.crash()


async def test_a_tournament_drawing_its_deals_when_the_server_stops_draws_them_after(
    store: Store, journal: Journal, clock: FakeClock
) -> None:
    gate = Gate(1)
    broker = LocalBroker()
    first = Process(store, journal, broker, clock, DealProver(executor=lambda _: gate))
    ana = await new_player(store, "ana")
    created = await create_winnable(first, ana.id)
    await first.lobby.close()  # the process stops: the draw under way is lost
    await first.tournaments.close()
    gate.opened.set()
    await first.prover.close()
    second = await Process.restarted(
        store, journal, broker, clock, DealProver(max_nodes=SMALL_BUDGET)
    )
    try:
        follower = Watcher(
            await broker.subscribe(tournament_channel(created.tournament.code))
        )
        await follower.event("deals_committed")
        assert len(await store.tournaments.deals(created.tournament.id)) == 2
    finally:
        await second.crash()


# -- the daily challenge ------------------------------------------------------------------


async def test_the_daily_deal_is_its_first_candidate_proven_winnable_kept_for_every_process(
    store: Store, clock: FakeClock, prover: DealProver
) -> None:
    lobby = new_lobby(store, LocalBroker(), clock)
    daily = Daily(store=store, lobby=lobby, clock=clock, countdown_s=0, prover=prover)
    day = date(2026, 12, 3)
    try:
        deal = await daily.winnable_deal("classic", day)
        key = await daily.key()
        verdicts = []
        for candidate in range(64):  # the day's candidates in order, to the first won
            seed = daily_seed(key, "classic", day, candidate)
            verdicts.append(solve(Game(seed, "classic"), max_nodes=SMALL_BUDGET).status)
            if verdicts[-1] == "won":
                break
        assert deal == seed and verdicts.count("won") == 1  # the first won, in their order
        chosen = await store.daily_deals.chosen(ruleset="classic", day=day)
        assert chosen is not None and Seed(chosen.seed) == deal
        assert chosen.candidate == len(verdicts) - 1
        # Another process deals the same without solving: it reads the choice.
        idle = DealProver(prove=lost, executor=ThreadPoolExecutor)
        other = Daily(store=store, lobby=lobby, clock=clock, countdown_s=0, prover=idle)
        assert await other.winnable_deal("classic", day) == deal and idle.solved == 0
        together = await asyncio.gather(*(daily.winnable_deal("montana", day) for _ in range(3)))
        assert len(set(together)) == 1  # requests at once share one choice
        assert solve(Game(together[0], "montana")).status == "won"
    finally:
        await lobby.close()


async def test_the_daily_challenge_deals_a_winnable_deal(connect: Connect, server: Server) -> None:
    ana = await connect()
    await ana.register("ana")
    started = await ana.ok("daily", ruleset="classic")
    dealt = await ana.event("started", match=started["match"]["code"])
    chosen = await server.store.daily_deals.chosen(ruleset="classic", day=server.clock.today())
    assert chosen is not None
    seed = Seed(chosen.seed)
    assert Game(seed, "classic").layout().splitlines() == dealt["grid"]
    assert dealt["commitment"] == seed.commitment
    assert solve(Game(seed, "classic")).status == "won"
    await Client.close(ana)


async def test_a_daily_whose_solver_died_is_refused_for_now_and_chosen_at_the_next_request(
    store: Store, clock: FakeClock
) -> None:
    pools: list[Executor] = [Broken(), ThreadPoolExecutor(1)]
    prover = DealProver(max_nodes=SMALL_BUDGET, executor=lambda _: pools.pop(0))
    lobby = new_lobby(store, LocalBroker(), clock)
    daily = Daily(store=store, lobby=lobby, clock=clock, countdown_s=0, prover=prover)
    day = date(2026, 12, 3)
    try:
        with pytest.raises(ServerError) as refused:
            await daily.winnable_deal("classic", day)
        assert refused.value.code == "deals_not_ready"
        assert refused.value.details == {"retry_after_ms": 5000}
        deal = await daily.winnable_deal("classic", day)
        assert solve(Game(deal, "classic"), max_nodes=SMALL_BUDGET).status == "won"
    finally:
        await lobby.close()
        await prover.close()
