"""Tournaments end to end: rounds of the same deal for all, standings, podium, restart.

Through a server for the protocol; in process, on the real storage of each backend, for
restarts: a lobby and tournaments stopped where they are, then another pair started on
what they stored, every countdown, break and start time on fake clocks."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gaps import Game, Move, Redeal, Ruleset, parse_action
from gaps.bots import bot_for_level
from server import tournamentstate as states
from server import tournamentviews as views
from server.app import Server
from server.broker import LocalBroker
from server.config import Settings
from server.deals import DealProver
from server.errors import ServerError
from server.lobby import Lobby
from server.match import Match as ServerMatch
from server.storage.journal import Journal
from server.storage.models import Match, MatchPlayer
from server.storage.players import PlayerRecord
from server.storage.store import Store
from server.storage.tournaments import StoredRound
from server.tournament import Tournament, Tournaments, tournament_channel
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.lobbies import GRACE_S, Watcher, new_player

Connect = Callable[[], Awaitable[Client]]


async def entrants(connect: Connect, names: list[str]) -> list[Client]:
    clients = []
    for name in names:
        client = await connect()
        await client.register(name)
        clients.append(client)
    return clients


async def play_round(
    client: Client,
    number: int,
    *,
    bot_level: int | None,
    rng: random.Random,
    code: str | None = None,
) -> dict[str, Any]:
    """Join round ``number``'s match and play it out: as a bot of ``bot_level`` (to the
    end), or as a person making a few random moves and stopping. Returns the last ack."""
    if code is None:
        code = (await client.event("round_starting", round=number))["match"]
    joined = await client.ok("join_match", code=code)
    if "game" not in joined["you"]:
        await client.event("started", match=code)
        joined = await client.ok("join_match", code=code)
    view = joined["you"]["game"]
    game = Game.from_layout("\n".join(view["grid"]), "classic", redeals_used=view["redeals_used"])
    bot = bot_for_level(bot_level, seed=number) if bot_level else None
    reply: dict[str, Any] = {}
    for turn in range(10_000):
        if game.is_over() or (bot is None and turn == 6):
            break
        if bot is not None:
            action = bot.choose(game)
        else:
            legal = game.legal_moves()
            action = rng.choice(legal) if legal else Redeal()
        reply = await client.act(code, str(action))
        assert reply["type"] == "action_ok", (action, reply)
        if isinstance(action, Move):
            game.play(action)
        elif isinstance(action, Redeal):
            game = Game.from_layout(
                "\n".join(reply["grid"]), "classic", redeals_used=reply["redeals_used"]
            )
        else:
            game.push(action)
    if reply.get("status") in (None, "playing", "blocked"):
        reply = await client.act(code, "stop")
    return reply


async def round_scores(server: Server, tournament_id: int) -> dict[int, list[int]]:
    async with server.database.engine.connect() as connection:
        rows = (
            await connection.execute(
                select(Match.round, MatchPlayer.player_id, MatchPlayer.score, Match.status)
                .join(MatchPlayer, MatchPlayer.match_id == Match.id)
                .where(Match.tournament_id == tournament_id)
                .order_by(Match.round)
            )
        ).all()
    scores: dict[int, list[int]] = {}
    for row in rows:
        if row.status == "finished":
            scores.setdefault(row.player_id, []).append(row.score)
    return scores


# Every entrant takes every seat, so no grace period should run out: a long one keeps a
# loaded machine (server, four clients and two bots in one event loop) from ending a seat
# whose player was slow to join (it failed CI with the tests' 1 s).
@pytest.mark.grace_s(30)
async def test_a_three_round_tournament_of_four_with_bots_runs_to_its_podium(
    connect: Connect,
    server: Server,
    clock: FakeClock,
) -> None:
    host, ana, bot_one, bot_two = await entrants(connect, ["host", "ana", "bot-one", "bot-two"])
    created = await host.ok("tournament_create", name="Sunday cup", rounds=3, max_players=4)
    code = created["tournament"]["code"]
    assert created["tournament"]["entrants"] == []  # the host organises; playing is joining
    for client in (host, ana, bot_one, bot_two):
        joined = await client.ok("tournament_join", code=code)
        assert joined["tournament"]["status"] == "open"
    listed = await ana.ok("tournament_list")
    assert [t["code"] for t in listed["tournaments"]] == [code]
    assert (await ana.request("tournament_start", code=code))["code"] == "not_host"
    await host.ok("tournament_start", code=code)
    rng = random.Random(5)
    plan = {host: None, ana: None, bot_one: 1, bot_two: 2}
    for number in (1, 2, 3):
        # Everyone at once, as real entrants would: a seat left empty past the grace
        # period is ended.
        await asyncio.gather(
            *(
                play_round(client, number, bot_level=level, rng=random.Random(rng.random()))
                for client, level in plan.items()
            )
        )
        ended = await host.event("round_ended", round=number)
        assert [row["rounds_played"] for row in ended["standings"]] == [number] * 4
        # When the next round starts (a countdown for the clients); none after the last.
        assert (ended["next_round_at"] is None) == (number == 3)
        clock.advance(server.settings.tournament_break_s)
    final = await ana.event("tournament_ended")
    standings = final["standings"]
    scores = await round_scores(server, created["tournament"]["id"])
    for row in standings:
        assert row["total_score"] == sum(scores[row["player_id"]]) and row["rounds_played"] == 3
    keys = [(-row["total_score"], row["total_time_ms"]) for row in standings]
    assert keys == sorted(keys)
    assert final["podium"] == [row for row in standings if row["rank"] <= 3]
    assert final["podium"][0]["rank"] == 1
    # Every round dealt one deal to all four.
    starts = [e for e in host.events if e["event"] == "started"]
    assert len(starts) == 3 and len({tuple(e["grid"]) for e in starts}) == 3
    again = await host.ok("tournament_standings", code=code)
    assert again["tournament"]["status"] == "finished" and again["standings"] == standings


async def standings_from_results(server: Server, tournament_id: int) -> list[tuple[Any, ...]]:
    """The standings a run without a restart gives for the stored round results: each
    entrant's (rank, player id, total score, total time, rounds), ranked by score, then
    time, from the finished rounds' ``match_players`` rows."""
    async with server.database.engine.connect() as connection:
        rows = (
            await connection.execute(
                select(MatchPlayer.player_id, MatchPlayer.score, MatchPlayer.finish_ms)
                .join(Match, Match.id == MatchPlayer.match_id)
                .where(Match.tournament_id == tournament_id, Match.status == "finished")
            )
        ).all()
    totals: dict[int, tuple[int, int, int]] = {}
    for row in rows:
        score, time_ms, rounds = totals.get(row.player_id, (0, 0, 0))
        totals[row.player_id] = (score + row.score, time_ms + (row.finish_ms or 0), rounds + 1)
    ordered = sorted(totals.items(), key=lambda item: (-item[1][0], item[1][1], item[0]))
    table: list[tuple[Any, ...]] = []
    for position, (player_id, (score, time_ms, rounds)) in enumerate(ordered, start=1):
        tied = table and table[-1][2:4] == (score, time_ms)
        table.append((table[-1][0] if tied else position, player_id, score, time_ms, rounds))
    return table


def table_of(standings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (row["rank"], row["player_id"], row["total_score"], row["total_time_ms"],
         row["rounds_played"])
        for row in standings
    ]


# Bob never takes his round-2 seat before the restart: a long grace period keeps that
# round from ending by his absence before the server goes down.
@pytest.mark.grace_s(60)
async def test_a_round_cut_by_a_restart_goes_on_in_its_own_match_and_the_tournament_ends(
    settings: Settings,
) -> None:
    first = Server(settings)
    await first.start()
    url = f"ws://127.0.0.1:{first.port}"
    ana, bob = await Client.connect(url), await Client.connect(url)
    await ana.register("ana")
    await bob.register("bob")
    created = await ana.ok("tournament_create", rounds=3, max_players=2)
    code, tournament_id = created["tournament"]["code"], created["tournament"]["id"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    await ana.ok("tournament_start", code=code)
    rng = random.Random(1)
    await asyncio.gather(*(play_round(c, 1, bot_level=None, rng=rng) for c in (ana, bob)))
    await ana.event("round_ended", round=1)
    interrupted = (await ana.event("round_starting", round=2))["match"]
    joined = await ana.ok("join_match", code=interrupted)
    if "game" not in joined["you"]:  # not dealt yet when ana came
        await ana.event("started", match=interrupted)
        joined = await ana.ok("join_match", code=interrupted)
    deal = joined["you"]["game"]["grid"]
    stopped = await ana.act(interrupted, "stop")  # round 2 is under way when the server goes down
    tokens = [ana.token, bob.token]
    await ana.close()
    await bob.close()
    await first.close()

    second = Server(settings)
    await second.start()
    try:
        url = f"ws://127.0.0.1:{second.port}"
        ana, bob = await Client.connect(url), await Client.connect(url)
        for client, token in zip((ana, bob), tokens, strict=True):
            await client.ok("hello", token=token)
        views = [await client.ok("tournament_join", code=code) for client in (ana, bob)]
        tournament = views[0]["tournament"]
        assert tournament["status"] == "running" and tournament["current_round"] == 2
        assert tournament["round_match"] == interrupted  # not dealt again
        rejoined = await ana.ok("join_match", code=interrupted)
        assert rejoined["you"]["game"]["status"] == "stopped"
        assert rejoined["you"]["game"]["score"] == stopped["score"]
        bobs = await bob.ok("join_match", code=interrupted)
        assert bobs["you"]["game"]["grid"] == deal  # the same deal, still unplayed
        await play_round(bob, 2, bot_level=None, rng=rng, code=interrupted)
        ended = await ana.event("round_ended", round=2)
        assert ended["match"] == interrupted
        assert [row["rounds_played"] for row in ended["standings"]] == [2, 2]
        await asyncio.gather(*(play_round(c, 3, bot_level=None, rng=rng) for c in (ana, bob)))
        final = await bob.event("tournament_ended")
        assert [row["rounds_played"] for row in final["standings"]] == [3, 3]
        assert table_of(final["standings"]) == await standings_from_results(
            second, tournament_id
        )
        served = await ana.ok("tournament_standings", code=code)
        assert served["standings"] == final["standings"]
        async with second.database.engine.connect() as connection:
            statuses = dict(
                (
                    await connection.execute(
                        select(Match.code, Match.status).where(Match.kind == "tournament")
                    )
                ).all()
            )
        assert statuses[interrupted] == "finished"
        assert sorted(statuses.values()) == ["finished", "finished", "finished"]
        await ana.close()
        await bob.close()
    finally:
        await second.close()


async def test_a_tournament_with_a_start_time_starts_by_itself(
    connect: Connect, clock: FakeClock
) -> None:
    ana, bob = await entrants(connect, ["ana", "bob"])
    start_at = (clock.now() + timedelta(seconds=1)).isoformat()
    created = await ana.ok("tournament_create", rounds=1, start_at=start_at)
    code = created["tournament"]["code"]
    assert created["tournament"]["start_at"] is not None
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    clock.advance(1)
    started = await bob.event("tournament_started")
    assert started["rounds"] == 1 and len(started["entrants"]) == 2
    past = await ana.request("tournament_create", start_at="2000-01-01T00:00:00Z")
    assert (past["code"], past["field"]) == ("bad_message", "start_at")


async def test_tournament_resync_gives_the_events_after_since_in_order_to_anyone(
    connect: Connect,
) -> None:
    host, ana, bob, eve = await entrants(connect, ["host", "ana", "bob", "eve"])
    code = (await host.ok("tournament_create", rounds=1))["tournament"]["code"]
    for client in (host, ana, bob):
        await client.ok("tournament_join", code=code)
    # eve neither organises nor plays: tournaments are public, as their standings are.
    missed = await eve.ok("tournament_resync", code=code.lower(), since=1)
    assert (missed["type"], missed["tournament"]) == ("tournament_events", code)
    assert [(e["seq"], e["event"], e["name"]) for e in missed["events"]] == [
        (2, "entrant_joined", "ana"),
        (3, "entrant_joined", "bob"),
    ]
    assert all(e["type"] == "tournament_event" and e["tournament"] == code
               for e in missed["events"])
    everything = await eve.ok("tournament_resync", code=code, since=0)
    assert [e["seq"] for e in everything["events"]] == [1, 2, 3]
    up_to_date = await eve.ok("tournament_resync", code=code, since=3)
    assert up_to_date == {"type": "tournament_events", "id": up_to_date["id"],
                          "tournament": code, "events": []}
    # eve now follows the tournament: what comes next reaches her live.
    await host.ok("tournament_start", code=code)
    assert (await eve.event("tournament_started"))["seq"] == 4


async def test_a_missed_round_end_and_its_standings_come_back_through_tournament_resync(
    connect: Connect,
) -> None:
    ana, late = await entrants(connect, ["ana", "late"])
    code = (await ana.ok("tournament_create", rounds=1))["tournament"]["code"]
    await ana.ok("tournament_join", code=code)
    await ana.ok("tournament_start", code=code)
    started = await ana.event("tournament_started")
    await play_round(ana, 1, bot_level=None, rng=random.Random(3))
    final = await ana.event("tournament_ended")
    caught_up = await late.ok("tournament_resync", code=code, since=started["seq"])
    events = caught_up["events"]
    assert [e["event"] for e in events] == ["round_starting", "round_ended", "tournament_ended"]
    assert [e["seq"] for e in events] == list(range(started["seq"] + 1, final["seq"] + 1))
    assert events == [await ana.event(e["event"]) for e in events]  # as they came live
    standings = await late.ok("tournament_standings", code=code)
    assert events[1]["standings"] == standings["standings"] == final["standings"]


@pytest.mark.max_history_events(2)
async def test_a_tournament_resync_further_back_than_the_history_gets_a_snapshot(
    connect: Connect,
) -> None:
    ana, bob, cid, eve = await entrants(connect, ["ana", "bob", "cid", "eve"])
    code = (await ana.ok("tournament_create", rounds=2))["tournament"]["code"]
    for client in (ana, bob, cid):
        await client.ok("tournament_join", code=code)
    kept = await eve.ok("tournament_resync", code=code, since=1)
    assert [e["seq"] for e in kept["events"]] == [2, 3]
    snapshot = await eve.ok("tournament_resync", code=code, since=0)
    standings = await eve.ok("tournament_standings", code=code)
    assert snapshot == {"type": "tournament", "id": snapshot["id"],
                        "tournament": standings["tournament"],
                        "standings": standings["standings"],
                        "entered_results": standings["entered_results"], "seq": 3}
    assert [row["name"] for row in snapshot["standings"]] == ["ana", "bob", "cid"]
    # A seq the server never gave (it restarted and numbers anew): the snapshot too.
    ahead = await eve.ok("tournament_resync", code=code, since=99)
    assert ahead["type"] == "tournament" and ahead["seq"] == 3
    await ana.ok("tournament_start", code=code)
    assert (await eve.event("tournament_started"))["seq"] == 4  # eve follows it now


async def test_tournament_resync_refuses_an_unknown_code_and_a_bad_since(
    connect: Connect,
) -> None:
    anonymous = await connect()
    refused = await anonymous.request("tournament_resync", code="Q4M2ZK", since=0)
    assert refused["code"] == "not_authenticated"
    [ana] = await entrants(connect, ["ana"])
    code = (await ana.ok("tournament_create"))["tournament"]["code"]
    unknown = await ana.request("tournament_resync", code="ZZZZZZ", since=0)
    assert (unknown["type"], unknown["code"]) == ("error", "no_such_tournament")
    for since in (-1, "3", None, 2**31):
        bad = await ana.request("tournament_resync", code=code, since=since)
        assert (bad["code"], bad["field"]) == ("bad_message", "since"), since
    no_code = await ana.request("tournament_resync", since=0)
    assert (no_code["code"], no_code["field"]) == ("bad_message", "code")


async def test_a_finished_tournament_and_its_standings_are_there_after_a_restart(
    settings: Settings,
) -> None:
    first = Server(settings)
    await first.start()
    ana = await Client.connect(f"ws://127.0.0.1:{first.port}")
    await ana.register("ana")
    code = (await ana.ok("tournament_create", rounds=1, max_players=1))["tournament"]["code"]
    await ana.ok("tournament_join", code=code)
    await ana.ok("tournament_start", code=code)
    await play_round(ana, 1, bot_level=None, rng=random.Random(3))
    ended = await ana.event("tournament_ended")
    before = await ana.ok("tournament_standings", code=code)
    token = ana.token
    assert token is not None
    await ana.close()
    await first.close()

    second = Server(settings)
    await second.start()
    try:
        again = await Client.connect(f"ws://127.0.0.1:{second.port}")
        await again.ok("hello", token=token)
        after = await again.ok("tournament_standings", code=code.lower())
        assert after["tournament"]["status"] == "finished"
        assert after["standings"] == before["standings"] == ended["standings"]
        assert after["tournament"]["entrants"] == before["tournament"]["entrants"]
        snapshot = await again.ok("tournament_resync", code=code, since=0)
        assert snapshot["type"] == "tournament" and snapshot["standings"] == ended["standings"]
        rejoined = await again.ok("tournament_join", code=code)  # an entrant: its view
        assert rejoined["tournament"]["status"] == "finished"
        latecomer = await Client.connect(f"ws://127.0.0.1:{second.port}")
        await latecomer.register("bob")
        late = await latecomer.request("tournament_join", code=code)
        assert (late["code"], late["status"]) == ("tournament_finished", "finished")
        await latecomer.close()
        listed = await again.ok("tournament_list")
        assert code not in [t["code"] for t in listed["tournaments"]]  # listed: open ones
        status, body = await http_get(second.port, f"/tournaments/{code}")
        assert status == 200 and body["standings"] == ended["standings"]
        await again.close()
    finally:
        await second.close()



# -- restarts in process: the lobby and tournaments of one process, then of the next --


COUNTDOWN_S = 10
BREAK_S = 15.0
STOP = parse_action("stop")


class Process:
    """What one server process runs of tournaments: a lobby and the tournaments, on the
    shared storage, their timers on the fake clock. ``crash`` drops them where they are,
    as kill -9 would (nothing more is stored); ``restarted`` is the next process."""

    def __init__(
        self, store: Store, journal: Journal, broker: LocalBroker, clock: FakeClock,
        prover: DealProver | None = None,
    ) -> None:
        self.lobby = Lobby(
            store=store,
            journal=journal,
            broker=broker,
            clock=clock,
            grace_s=GRACE_S,
            max_history_events=512,
        )
        self.prover = prover or DealProver()
        self.tournaments = Tournaments(
            repository=store.tournaments,
            lobby=self.lobby,
            broker=broker,
            clock=clock,
            prover=self.prover,
            countdown_s=COUNTDOWN_S,
            break_s=BREAK_S,
            max_history_events=512,
        )

    @classmethod
    async def restarted(
        cls, store: Store, journal: Journal, broker: LocalBroker, clock: FakeClock,
        prover: DealProver | None = None,
    ) -> Process:
        process = cls(store, journal, broker, clock, prover)
        await process.lobby.restore(default_countdown_s=COUNTDOWN_S)
        await process.tournaments.resume()
        return process

    def live(self, code: str) -> Tournament:
        return self.tournaments.live[code]

    async def crash(self) -> None:
        await self.lobby.close()
        await self.tournaments.close()
        await self.prover.close()


@pytest.fixture
def store(migrated_engine: AsyncEngine) -> Store:
    return Store(migrated_engine)


@pytest.fixture
def broker() -> LocalBroker:
    return LocalBroker()


@pytest.fixture
async def journal(store: Store) -> AsyncIterator[Journal]:
    journal = Journal(store.database)
    journal.start()
    yield journal
    await journal.close()


@pytest.fixture
async def processes(
    store: Store, journal: Journal, broker: LocalBroker, clock: FakeClock
) -> AsyncIterator[Callable[[], Awaitable[Process]]]:
    """``await processes()``: the first process, then each call the next one, restarted
    on what the previous one stored (crash it first); the last is crashed after the test."""
    started: list[Process] = []

    async def next_process() -> Process:
        if started:
            process = await Process.restarted(store, journal, broker, clock)
        else:
            process = Process(store, journal, broker, clock)
        started.append(process)
        return process

    yield next_process
    if started:
        await started[-1].crash()


async def until(condition: Callable[[], bool]) -> None:
    """Wait until ``condition`` holds: some task of the process has to run first."""
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0)


async def counted_down(clock: FakeClock, match: ServerMatch) -> None:
    """Deal ``match``: its countdown, on the fake clock, runs out."""
    await until(lambda: match.status == "countdown" and match.timer_at is not None)
    clock.advance(COUNTDOWN_S)
    await until(lambda: match.status == "running")


async def break_over(clock: FakeClock, tournament: Tournament) -> None:
    """The break after a round, on the fake clock, runs out."""
    await until(lambda: tournament.state.next_round_at is not None and tournament.timer_at
                is not None)
    clock.advance(BREAK_S)


async def a_tournament(
    process: Process, store: Store, broker: LocalBroker, *, rounds: int
) -> tuple[Tournament, list[PlayerRecord], Watcher]:
    """A tournament of ana and bob, started, and a follower of its events."""
    ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
    created = await process.tournaments.create(
        ana.id,
        name="Cup",
        ruleset=Ruleset.named("classic"),
        rounds=rounds,
        max_players=2,
        round_time_limit_s=600,
        start_at_ms=None,
    )
    code = created.tournament.code
    follower = Watcher(await broker.subscribe(tournament_channel(code)))
    for player in (ana, bob):
        await process.tournaments.join(code, player.id, player.name, bot=False)
    await process.tournaments.start_by(code, ana.id)
    return process.live(code), [ana, bob], follower


async def round_played(
    process: Process, clock: FakeClock, follower: Watcher, players: list[PlayerRecord]
) -> dict[int, int]:
    """Deal the next round and stop every game at once: each player's score."""
    match = process.lobby.get((await follower.event("round_starting"))["match"])
    await counted_down(clock, match)
    scores = {}
    for player in players:
        scores[player.id] = (await match.play(player.id, 1, STOP)).score
    return scores


async def stored_round(store: Store, tournament_id: int, number: int) -> StoredRound:
    [stored] = await store.tournaments.rounds(tournament_id, number)
    return stored


async def test_a_round_cut_by_a_restart_goes_on_with_its_code_and_deal_and_counts_once(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    tournament, (ana, bob), follower = await a_tournament(first, store, broker, rounds=2)
    round_one = await round_played(first, clock, follower, [ana, bob])
    await follower.event("round_ended")
    await break_over(clock, tournament)
    cut = first.lobby.get((await follower.event("round_starting"))["match"])
    await counted_down(clock, cut)
    ana_seat, bob_seat = cut.state.seat(ana.id), cut.state.seat(bob.id)
    assert ana_seat is not None and bob_seat is not None
    assert ana_seat.game is not None and bob_seat.game is not None
    deal = bob_seat.game.layout()
    move = ana_seat.game.legal_moves()[0]
    await cut.play(ana.id, 1, move)
    ana_score = (await cut.play(ana.id, 2, STOP)).score
    await first.crash()

    second = await processes()
    resumed = second.live(tournament.code).state
    restored = second.lobby.round_match(tournament.id, 2)
    assert restored is not None and resumed.round_code == restored.code
    assert (restored.code, restored.seed.data) == (cut.code, cut.seed.data)
    assert views.view(resumed).round_match == cut.code and resumed.current_round == 2
    back = await restored.join(bob.id, bob.name)  # bob comes back to his seat
    assert back.you.game is not msgspec.UNSET and back.you.game.grid == deal.splitlines()
    ana_restored = restored.state.seat(ana.id)
    assert ana_restored is not None
    assert (ana_restored.end_reason, ana_restored.last_seq) == ("stopped", 2)
    bob_score = (await restored.play(bob.id, 1, STOP)).score
    ended = await follower.event("round_ended")
    assert (ended["round"], ended["match"]) == (2, cut.code)
    final = await follower.event("tournament_ended")
    totals = {row["player_id"]: row for row in final["standings"]}
    assert totals[ana.id]["total_score"] == round_one[ana.id] + ana_score
    assert totals[bob.id]["total_score"] == round_one[bob.id] + bob_score
    assert [row["rounds_played"] for row in final["standings"]] == [2, 2]
    keys = [(-row["total_score"], row["total_time_ms"]) for row in final["standings"]]
    assert keys == sorted(keys)
    stored = await stored_round(store, tournament.id, 2)
    assert (stored.code, stored.status) == (cut.code, "finished")
    served = await second.tournaments.standings(tournament.code)
    assert msgspec.to_builtins(served.standings) == final["standings"]
    assert served.tournament.status == "finished"


async def test_a_round_whose_games_all_ended_before_a_crash_is_ended_at_restore_and_counted(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    tournament, (ana, bob), follower = await a_tournament(first, store, broker, rounds=2)
    match = first.lobby.get((await follower.event("round_starting"))["match"])
    await counted_down(clock, match)
    for player in (ana, bob):
        await match.play(player.id, 1, STOP)
    # Down before the end of the match is stored: every game's end is, though.
    await match.close()
    assert match.status == "running"
    await first.crash()

    second = await processes()
    ended = await follower.event("round_ended")
    assert (ended["round"], ended["match"]) == (1, match.code)
    assert [row["rounds_played"] for row in ended["standings"]] == [1, 1]
    await break_over(clock, second.live(tournament.code))  # the break, then round 2
    starting = await follower.event("round_starting")
    assert starting["round"] == 2 and starting["match"] != match.code
    assert second.live(tournament.code).state.current_round == 2


def within_a_ms(said: str, moment: datetime) -> bool:
    return abs(datetime.fromisoformat(said) - moment) < timedelta(milliseconds=1)


async def test_the_break_between_rounds_goes_on_after_a_restart_with_the_time_it_had_left(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    tournament, players, follower = await a_tournament(first, store, broker, rounds=2)
    await round_played(first, clock, follower, players)
    ended = await follower.event("round_ended")
    # The next round starts after the break, on the wall clock: a countdown for clients.
    # (to the millisecond, as the protocol's times are)
    assert within_a_ms(ended["next_round_at"], clock.now() + timedelta(seconds=BREAK_S))
    await first.crash()
    stored = await stored_round(store, tournament.id, 1)
    assert stored.ended_at is not None
    clock.advance(5)  # down 5 s into the 15 s break

    second = await processes()
    again = await follower.event("round_ended")  # counted again, from the stored results
    # ...and the time the next round starts is the same: the break counts from the end.
    assert within_a_ms(again["next_round_at"], stored.ended_at + timedelta(seconds=BREAK_S))
    resumed = second.live(tournament.code)
    await until(lambda: resumed.timer_at is not None)
    clock.advance(BREAK_S - 5 - 0.5)
    await asyncio.sleep(0)
    assert resumed.state.current_round == 1
    clock.advance(0.5)
    starting = await follower.event("round_starting")
    assert starting["round"] == 2 and starting["match"] != ended["match"]


async def test_a_scheduled_start_keeps_its_time_across_a_restart(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    ana = await new_player(store, "ana")
    created = await first.tournaments.create(
        ana.id,
        name="Cup",
        ruleset=Ruleset.named("classic"),
        rounds=1,
        max_players=2,
        round_time_limit_s=600,
        start_at_ms=clock.now_ms() + 60_000,
    )
    code = created.tournament.code
    await first.tournaments.join(code, ana.id, ana.name, bot=False)
    follower = Watcher(await broker.subscribe(tournament_channel(code)))
    await first.crash()
    clock.advance(20)  # the server was down 20 s

    second = await processes()
    resumed = second.live(code)
    assert resumed.state.status == "open"
    await until(lambda: resumed.timer_at is not None)
    clock.advance(39.5)
    await asyncio.sleep(0)
    assert resumed.state.status == "open"
    clock.advance(0.5)
    started = await follower.event("tournament_started")
    assert started["entrants"] == [
        {"player_id": ana.id, "name": "ana", "bot": False, "removed": False,
         "removed_reason": None, "at_table": False}
    ]


async def test_a_round_whose_match_was_never_stored_is_dealt_after_a_restart_and_logged(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = await processes()
    tournament, players, follower = await a_tournament(first, store, broker, rounds=2)
    await round_played(first, clock, follower, players)
    await follower.event("round_ended")
    await first.crash()
    # Down between storing the round number and storing the round's match.
    await store.tournaments.update(tournament.id, current_round=2)
    clock.advance(BREAK_S)

    caplog.set_level(logging.WARNING, logger="gaps.tournament")
    second = await processes()
    starting = await follower.event("round_starting")
    assert starting["round"] == 2
    assert [r.getMessage() for r in caplog.records] == ["tournament round not found: dealt again"]
    match = second.lobby.get(starting["match"])
    assert (match.tournament_id, match.round) == (tournament.id, 2)
    assert match.seed.data == (await store.tournaments.deals(tournament.id))[1]  # committed
    await counted_down(clock, match)
    for player in players:
        await match.play(player.id, 1, STOP)
    final = await follower.event("tournament_ended")
    assert [row["rounds_played"] for row in final["standings"]] == [2, 2]


async def test_a_round_cut_in_its_countdown_counts_down_again_in_the_same_match(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    tournament, players, follower = await a_tournament(first, store, broker, rounds=1)
    code = (await follower.event("round_starting"))["match"]
    await until(lambda: first.lobby.get(code).status == "countdown")
    await first.crash()

    second = await processes()
    match = second.lobby.get(code)
    assert second.live(tournament.code).state.round_code == match.code
    await counted_down(clock, match)
    for player in players:
        await match.play(player.id, 1, STOP)
    final = await follower.event("tournament_ended")
    assert [row["rounds_played"] for row in final["standings"]] == [1, 1]


# -- the host removes an entrant between rounds ----------------------------------------


async def test_the_host_removes_an_entrant_between_rounds_and_a_restart_keeps_them_out(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    ana, bob, cat = [await new_player(store, name) for name in ("ana", "bob", "cat")]
    created = await first.tournaments.create(
        ana.id,
        name="Cup",
        ruleset=Ruleset.named("classic"),
        rounds=2,
        max_players=3,
        round_time_limit_s=600,
        start_at_ms=None,
    )
    tournament = first.live(created.tournament.code)
    follower = Watcher(await broker.subscribe(tournament.channel))
    for player in (ana, bob, cat):
        await first.tournaments.join(tournament.code, player.id, player.name, bot=False)
    await first.tournaments.start_by(tournament.code, ana.id)
    match = first.lobby.get((await follower.event("round_starting"))["match"])
    with pytest.raises(ServerError) as live:
        await first.tournaments.remove(tournament.code, ana.id, "cat", "slow")
    assert live.value.code == "round_in_play" and live.value.details["round"] == 1
    await counted_down(clock, match)
    for player in (ana, bob, cat):
        await match.play(player.id, 1, STOP)
    await follower.event("round_ended")

    with pytest.raises(ServerError) as not_host:
        await first.tournaments.remove(tournament.code, bob.id, "cat", "slow")
    assert not_host.value.code == "not_host"
    with pytest.raises(ServerError) as unknown:
        await first.tournaments.remove(tournament.code, ana.id, "dan", "slow")
    assert unknown.value.code == "not_an_entrant"
    removal = await first.tournaments.remove(tournament.code, ana.id, "CAT", "left the table")
    view = removal.tournament
    removed = await follower.event("entrant_removed")
    assert removed | {"seq": 0} == {
        "type": "tournament_event", "tournament": tournament.code, "seq": 0,
        "event": "entrant_removed", "player_id": cat.id, "name": "cat",
        "reason": "left the table", "after_round": 1,
    }
    assert [(e.name, e.removed, e.removed_reason) for e in view.entrants] == [
        ("ana", False, None), ("bob", False, None), ("cat", True, "left the table")
    ]
    with pytest.raises(ServerError) as again:
        await first.tournaments.remove(tournament.code, ana.id, "cat", "twice")
    assert again.value.code == "not_an_entrant"
    await first.crash()  # during the break: the next process deals round 2
    stored = await stored_round(store, tournament.id, 1)
    assert stored.ended_at == clock.now()  # back at once: the whole break is left

    second = await processes()
    await follower.event("round_ended")  # round 1 counted again, from the stored results
    await break_over(clock, second.live(tournament.code))
    round_two = second.lobby.get((await follower.event("round_starting"))["match"])
    assert round_two.players == [ana.id, bob.id]  # cat is seated no more
    await counted_down(clock, round_two)
    for player in (ana, bob):
        await round_two.play(player.id, 1, STOP)
    ended = await follower.event("tournament_ended")
    standings = ended["standings"]
    assert sorted((row["name"], row["removed"], row["rounds_played"]) for row in standings[:2]) == [
        ("ana", False, 2),
        ("bob", False, 2),
    ]
    last = standings[-1]
    assert (last["name"], last["removed"], last["removed_reason"], last["rounds_played"]) == (
        "cat",
        True,
        "left the table",
        1,
    )
    assert last["rank"] == 3
    assert "cat" not in [row["name"] for row in ended["podium"]]


async def test_tournament_remove_goes_through_the_protocol_to_every_follower(
    connect: Connect,
) -> None:
    ana, bob, cat = await entrants(connect, ["ana", "bob", "cat"])
    code = (await ana.ok("tournament_create", rounds=1, max_players=3))["tournament"]["code"]
    for client in (bob, cat):
        await client.ok("tournament_join", code=code)
    refused = await bob.request("tournament_remove", code=code, player="cat", reason="no")
    assert refused["code"] == "not_host"
    empty = await ana.request("tournament_remove", code=code, player="cat", reason="  ")
    assert empty["code"] == "bad_message" and empty["field"] == "reason"

    reply = await ana.ok("tournament_remove", code=code, player="cat", reason="no show")

    entrants_view = {e["name"]: e for e in reply["tournament"]["entrants"]}
    assert entrants_view["cat"]["removed"] and entrants_view["cat"]["removed_reason"] == "no show"
    for follower in (bob, cat):
        event = await follower.event("entrant_removed")
        assert (event["name"], event["reason"], event["after_round"]) == ("cat", "no show", 0)
    standings = await ana.ok("tournament_standings", code=code)
    assert [row["name"] for row in standings["standings"]][-1] == "cat"
    await ana.ok("tournament_start", code=code)
    starting = await bob.event("round_starting")
    joined = await bob.ok("join_match", code=starting["match"])
    assert sorted(p["name"] for p in joined["players"]) == ["bob"]


async def test_a_bot_enters_only_a_tournament_whose_host_lets_bots_in(connect: Connect) -> None:
    (ana,) = await entrants(connect, ["ana"])
    beep = await connect()
    await beep.register("beep", bot=True)
    closed = (await ana.ok("tournament_create", rounds=1))["tournament"]
    assert closed["bots"] is False
    refused = await beep.request("tournament_join", code=closed["code"])
    assert (refused["code"], refused["refused_by"]) == ("bots_not_allowed", "tournament")

    open_to_bots = (await ana.ok("tournament_create", rounds=1, bots=True))["tournament"]
    joined = await beep.ok("tournament_join", code=open_to_bots["code"])
    assert joined["tournament"]["entrants"][0]["bot"] is True


async def test_a_tournament_whose_entrants_were_all_removed_ends_at_its_next_round(
    processes: Callable[[], Awaitable[Process]],
    store: Store,
    broker: LocalBroker,
    clock: FakeClock,
) -> None:
    first = await processes()
    tournament, players, follower = await a_tournament(first, store, broker, rounds=3)
    await round_played(first, clock, follower, players)
    await follower.event("round_ended")
    for player in players:
        await first.tournaments.remove(tournament.code, players[0].id, player.name, "closed")
    await break_over(clock, tournament)
    ended = await follower.event("tournament_ended")
    assert [row["removed"] for row in ended["standings"]] == [True, True]
    assert ended["podium"] == [] and tournament.state.current_round == 1
    assert tournament.state.status == "finished"
    with pytest.raises(ServerError) as over:
        await first.tournaments.remove(tournament.code, players[0].id, "ana", "again")
    assert over.value.code == "tournament_finished"


# -- one owner: the tournament's actor -------------------------------------------------


async def test_five_joining_a_tournament_capped_at_two_at_once_leave_three_refused(
    connect: Connect,
) -> None:
    host, *players = await entrants(connect, ["host", "p1", "p2", "p3", "p4", "p5"])
    code = (await host.ok("tournament_create", rounds=1, max_players=2))["tournament"]["code"]
    replies = await asyncio.gather(
        *(client.request("tournament_join", code=code) for client in players)
    )
    joined = [r for r in replies if r["type"] == "tournament"]
    refused = [r for r in replies if r["type"] == "error"]
    assert len(joined) == 2 and {r["code"] for r in refused} == {"tournament_full"}
    assert len(refused) == 3
    view = (await host.ok("tournament_standings", code=code))["tournament"]
    assert view["entrant_count"] == len(view["entrants"]) == 2
    listed = (await host.ok("tournament_list"))["tournaments"]
    assert [t["entrant_count"] for t in listed if t["code"] == code] == [2]
    events = [e for e in host.events if e["event"] == "entrant_joined"]
    assert len(events) == 2  # every follower hears each entrant once


async def test_a_scheduled_tournament_nobody_entered_is_cancelled_and_says_why(
    connect: Connect, clock: FakeClock
) -> None:
    ana, eve = await entrants(connect, ["ana", "eve"])
    start_at = (clock.now() + timedelta(minutes=5)).isoformat()
    code = (await ana.ok("tournament_create", rounds=1, start_at=start_at))["tournament"]["code"]
    await eve.ok("tournament_resync", code=code, since=0)  # eve follows it
    clock.advance(5 * 60)
    cancelled = await eve.event("tournament_cancelled")
    assert cancelled["reason"] == states.NOBODY_ENTERED
    view = (await eve.ok("tournament_standings", code=code))["tournament"]
    assert (view["status"], view["cancel_reason"]) == ("cancelled", states.NOBODY_ENTERED)
    late = await eve.request("tournament_join", code=code)
    assert (late["code"], late["status"], late["reason"]) == (
        "tournament_finished", "cancelled", states.NOBODY_ENTERED
    )
    assert code not in [t["code"] for t in (await eve.ok("tournament_list"))["tournaments"]]
    ended = (await eve.ok("tournament_list", status="ended"))["tournaments"]
    assert [(t["code"], t["status"]) for t in ended] == [(code, "cancelled")]


async def test_a_scheduled_tournament_that_waits_starts_with_its_first_entrant(
    connect: Connect, clock: FakeClock
) -> None:
    ana, bob = await entrants(connect, ["ana", "bob"])
    start_at = (clock.now() + timedelta(seconds=30)).isoformat()
    created = await ana.ok("tournament_create", rounds=1, start_at=start_at, if_empty="wait")
    code = created["tournament"]["code"]
    assert created["tournament"]["if_empty"] == "wait"
    clock.advance(60)
    view = (await ana.ok("tournament_standings", code=code))["tournament"]
    assert view["status"] == "open"  # past its start, waiting for an entrant
    await bob.ok("tournament_join", code=code)
    started = await bob.event("tournament_started")
    assert [e["name"] for e in started["entrants"]] == ["bob"]
    assert (await bob.event("round_starting"))["round"] == 1


async def test_a_removed_entrant_joining_again_is_told_why(connect: Connect) -> None:
    ana, bob = await entrants(connect, ["ana", "bob"])
    code = (await ana.ok("tournament_create", rounds=1))["tournament"]["code"]
    await bob.ok("tournament_join", code=code)
    await ana.ok("tournament_remove", code=code, player="bob", reason="no phones at the table")
    again = await bob.request("tournament_join", code=code)
    assert (again["code"], again["reason"]) == ("removed", "no phones at the table")
    view = (await ana.ok("tournament_standings", code=code))["tournament"]
    assert view["entrant_count"] == 0 and len(view["entrants"]) == 1
