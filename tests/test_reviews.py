"""Held results, operators' decisions and the audit log, on PostgreSQL and SQLite: a
bot-paced game of a person's account is held off the boards and ratings, a human-paced one
counts, a declared bot's is not judged; clearing and voiding refold the boards and ratings
to what a rebuild gives; the audit log keeps every decision and refuses to be edited; only
the configured operators decide."""

from __future__ import annotations

import ast
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.fair import HumanModel
from gaps import Action, Game, Seed, Stop
from gaps.bots import bot_for_level
from server.app import Server
from server.broker import LocalBroker
from server.config import Settings
from server.errors import ServerError
from server.match import Match
from server.replays import replay_document
from server.storage.journal import Journal
from server.storage.models import AuditEntry, BoardEntry, Rating, SeatReview
from server.storage.players import PlayerRecord
from server.storage.rebuild import rebuild_boards_and_ratings
from server.storage.store import Store
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.lobbies import Watcher, clocked_match, new_player
from tests.test_cli_bot import race_bots
from tests.test_rebuild import assert_same_rows, derived_rows

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

ROOT = Path(__file__).resolve().parent.parent
SEED = Seed(bytes(range(10)))
#: Actions each test game makes before it stops: past the rules' minimum of 30 intervals.
ACTIONS = 40
#: Intervals, seconds: a bot at no pace (a network round trip), and a person (the model
#: of bench.fair).
Pace = Callable[[Action, random.Random], float]


def bot_pace(action: Action, rng: random.Random) -> float:
    return rng.uniform(0.02, 0.04)


def human_pace(action: Action, rng: random.Random) -> float:
    return HumanModel().interval_ms(action, rng) / 1000


@dataclass
class Table:
    """Rated matches on one store, on a fake clock."""

    store: Store
    journal: Journal
    broker: LocalBroker
    clock: FakeClock

    async def race(
        self, players: list[tuple[PlayerRecord, Pace]], *, seed: Seed = SEED
    ) -> tuple[Match, dict[str, Any]]:
        """A match of ``players``, each playing in turn at their pace; its match_ended."""
        match = await clocked_match(
            self.store, self.journal, self.broker, self.clock, [p for p, _ in players],
            ruleset="classic", seed=seed, win_by="score", time_limit_s=3600,
        )
        watcher = await Watcher.of(self.broker, match)
        await match.start()
        await watcher.event("started")
        for number, (player, pace) in enumerate(players):
            await self.play(match, player, pace, seed, random.Random(number))
        ended = await watcher.event("match_ended")
        await match.close()
        return match, ended

    async def play(
        self, match: Match, player: PlayerRecord, pace: Pace, seed: Seed, rng: random.Random
    ) -> None:
        game = Game(seed, "classic")
        bot = bot_for_level(2, seed=7)
        for seq in range(1, ACTIONS + 1):
            action = bot.choose(game) if seq < ACTIONS else Stop()
            self.clock.advance(pace(action, rng))
            await match.play(player.id, seq, action)
            game.push(action)
            if game.is_over():
                break
        assert seq >= 31, "the game must be long enough to be judged"


@pytest.fixture
async def table(migrated_engine: AsyncEngine) -> AsyncIterator[Table]:
    store = Store(migrated_engine)
    journal = Journal(store.database)
    journal.start()
    yield Table(store, journal, LocalBroker(), FakeClock())
    await journal.close()


def reviews_of(ended: dict[str, Any]) -> dict[int, str | None]:
    return {row["player_id"]: row["review"] for row in ended["ranking"]}


async def board_players(engine: AsyncEngine) -> set[int]:
    async with engine.connect() as connection:
        return set((await connection.execute(select(BoardEntry.player_id))).scalars())


async def rated_games(engine: AsyncEngine) -> dict[int, int]:
    async with engine.connect() as connection:
        rows = (await connection.execute(select(Rating.player_id, Rating.games))).all()
    return {row.player_id: row.games for row in rows}


async def test_a_bot_paced_game_is_held_off_the_boards_and_a_human_paced_one_counts(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    bot, person = [await new_player(table.store, name) for name in ("quick", "steady")]

    match, ended = await table.race([(bot, bot_pace), (person, human_pace)])

    assert reviews_of(ended) == {bot.id: "held", person.id: None}
    assert await board_players(migrated_engine) == {person.id}
    assert await rated_games(migrated_engine) == {}  # one result counts: nobody is rated
    stored = await table.store.matches.replay(match.code)
    assert stored is not None
    document = replay_document(stored)
    assert {p["player_id"]: p["review"] for p in document["players"]} == reviews_of(ended)
    [held] = await table.store.reviews.held()
    assert (held["match_code"], held["name"]) == (match.code, "quick")
    assert held["flags"] == ["fast", "even"] and held["intervals"] >= 31
    assert held["median_ms"] is not None and held["median_ms"] < 50
    assert any(line.startswith("   < 100 ms | #") for line in held["chart"])
    # The rebuild leaves the held result out as the match's end did.
    before = await derived_rows(migrated_engine)
    await rebuild_boards_and_ratings(migrated_engine)
    assert_same_rows(await derived_rows(migrated_engine), before)


async def test_two_human_paced_games_both_count_and_rate_each_other(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    ana, bob = [await new_player(table.store, name) for name in ("ana", "bob")]

    _, ended = await table.race([(ana, human_pace), (bob, human_pace)])

    assert reviews_of(ended) == {ana.id: None, bob.id: None}
    assert await table.store.reviews.held() == []
    assert await rated_games(migrated_engine) == {ana.id: 1, bob.id: 1}


async def test_a_cleared_result_counts_as_a_rebuild_counts_it(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    bot, ana, bob = [await new_player(table.store, name) for name in ("quick", "ana", "bob")]
    first, _ = await table.race([(bot, bot_pace), (ana, human_pace)])
    await table.race([(ana, human_pace), (bob, human_pace)], seed=Seed(bytes(range(1, 11))))
    await table.race([(bob, human_pace), (bot, human_pace)], seed=Seed(bytes(range(2, 12))))

    folded = await table.store.reviews.clear(
        code=first.code, name="QUICK", operator="boss", reason="a fast typist", at=_now()
    )

    assert folded == 3
    assert await table.store.reviews.held() == []
    [entry] = await table.store.reviews.audit_log()
    assert entry.target == f"match {first.code} player quick"  # as registered
    assert await rated_games(migrated_engine) == {bot.id: 2, ana.id: 2, bob.id: 2}
    cleared = await derived_rows(migrated_engine)
    await rebuild_boards_and_ratings(migrated_engine)
    assert_same_rows(await derived_rows(migrated_engine), cleared)
    stored = await table.store.matches.replay(first.code)
    assert stored is not None
    assert {p["name"]: p["review"] for p in stored["players"]} == {"quick": "cleared", "ana": None}


async def test_a_void_recomputes_boards_and_ratings_as_if_the_result_never_counted(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    ana, bob, cat = [await new_player(table.store, name) for name in ("ana", "bob", "cat")]
    seeds = [Seed(bytes(range(n, n + 10))) for n in range(3)]
    await table.race([(ana, human_pace), (bob, human_pace)], seed=seeds[0])
    voided, _ = await table.race(
        [(bob, human_pace), (cat, human_pace), (ana, human_pace)], seed=seeds[1]
    )
    await table.race([(cat, human_pace), (ana, human_pace)], seed=seeds[2])
    counted = await derived_rows(migrated_engine)

    await table.store.reviews.void(
        code=voided.code, name="cat", operator="boss", reason="played by a script", at=_now()
    )

    after = await derived_rows(migrated_engine)
    assert after != counted
    assert await rated_games(migrated_engine) == {ana.id: 3, bob.id: 2, cat.id: 1}
    # What a rebuild gives, from the stored results without the voided one.
    await rebuild_boards_and_ratings(migrated_engine)
    assert_same_rows(await derived_rows(migrated_engine), after)
    # And what the matches would have written had the result never counted: the same
    # races again on a fresh set of players, the voided game left out from the start.
    again = [await new_player(table.store, name) for name in ("ana2", "bob2", "cat2")]
    a, b, c = again
    await table.race([(a, human_pace), (b, human_pace)], seed=seeds[0])
    await table.race([(b, human_pace), (a, human_pace)], seed=seeds[1])
    await table.race([(c, human_pace), (a, human_pace)], seed=seeds[2])
    games = await rated_games(migrated_engine)
    assert [games[p.id] for p in again] == [games[ana.id], games[bob.id], games[cat.id]]


async def new_bot(store: Store, name: str) -> PlayerRecord:
    return await store.players.register(name, f"hash-{name}", datetime.now(UTC), bot=True)


async def test_declared_bots_are_not_held_for_their_timing_and_rate_each_other(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    beep, boop = [await new_bot(table.store, name) for name in ("beep", "boop")]

    _, ended = await table.race([(beep, bot_pace), (boop, bot_pace)])

    assert reviews_of(ended) == {beep.id: None, boop.id: None}
    assert await table.store.reviews.held() == []
    assert await board_players(migrated_engine) == {beep.id, boop.id}
    assert await rated_games(migrated_engine) == {beep.id: 1, boop.id: 1}


async def test_a_game_a_bot_played_in_stays_off_peoples_boards_whatever_its_reviews_say(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    beep = await new_bot(table.store, "beep")
    quick, ana, bob = [await new_player(table.store, name) for name in ("quick", "ana", "bob")]
    mixed, ended = await table.race([(beep, bot_pace), (quick, bot_pace), (ana, human_pace)])
    # The bot rule keeps the bot's result only (on the bots' boards); the person's
    # account playing at a bot's pace is held all the same.
    assert reviews_of(ended) == {beep.id: None, quick.id: "held", ana.id: None}
    assert await board_players(migrated_engine) == {beep.id}
    await table.race([(ana, human_pace), (bob, human_pace)], seed=Seed(bytes(range(3, 13))))

    await table.store.reviews.void(
        code=mixed.code, name="beep", operator="boss", reason="a broken bot", at=_now()
    )
    await table.store.reviews.clear(
        code=mixed.code, name="quick", operator="boss", reason="a fast typist", at=_now()
    )

    # Neither decision hands the match to the people's boards.
    assert await board_players(migrated_engine) == {ana.id, bob.id}
    assert await rated_games(migrated_engine) == {ana.id: 1, bob.id: 1}
    decided = await derived_rows(migrated_engine)
    await table.store.boards.rebuild()  # the boards alone (boards.rebuild)
    assert (await derived_rows(migrated_engine)).boards == decided.boards
    await rebuild_boards_and_ratings(migrated_engine)
    assert_same_rows(await derived_rows(migrated_engine), decided)


async def test_a_suspended_players_later_results_do_not_count_and_they_are_told(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    ana, bob = [await new_player(table.store, name) for name in ("ana", "bob")]
    await table.race([(ana, human_pace), (bob, human_pace)])

    await table.store.reviews.suspend(
        name="ana", operator="boss", reason="a shared account", at=_clock_time(table.clock)
    )
    _, ended = await table.race(
        [(ana, human_pace), (bob, human_pace)], seed=Seed(bytes(range(5, 15)))
    )

    assert reviews_of(ended) == {ana.id: "suspended", bob.id: None}
    assert await rated_games(migrated_engine) == {ana.id: 1, bob.id: 1}
    suspension = await table.store.reviews.suspension_of(ana.id)
    assert suspension is not None and suspension["reason"] == "a shared account"
    assert await table.store.reviews.suspension_of(bob.id) is None


async def test_every_seat_reviewed_at_one_end_is_stored_each_with_its_own_status(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    ana, quick, bob = [await new_player(table.store, name) for name in ("ana", "quick", "bob")]
    await table.store.reviews.suspend(
        name="ana", operator="boss", reason="a shared account", at=_clock_time(table.clock)
    )
    match, ended = await table.race(
        [(ana, human_pace), (quick, bot_pace), (bob, human_pace)]
    )

    assert reviews_of(ended) == {ana.id: "suspended", quick.id: "held", bob.id: None}
    async with migrated_engine.connect() as connection:
        rows = (await connection.execute(
            select(SeatReview.player_id, SeatReview.status, SeatReview.match_id)
            .order_by(SeatReview.player_id)
        )).all()
    assert [tuple(row) for row in rows] == sorted(
        [(ana.id, "suspended", match.id), (quick.id, "held", match.id)]
    )
    assert await rated_games(migrated_engine) == {}  # one result counts: nobody is rated


async def test_the_audit_log_records_every_decision_newest_first(table: Table) -> None:
    bot, ana, cat = [await new_player(table.store, name) for name in ("quick", "ana", "cat")]
    first, _ = await table.race([(bot, bot_pace), (ana, human_pace)])
    reviews = table.store.reviews

    await reviews.clear(code=first.code, name="quick", operator="boss", reason="r1", at=_now())
    await reviews.void(code=first.code, name="ana", operator="deputy", reason="r2", at=_now())
    await reviews.suspend(name="cat", operator="boss", reason="r3", at=_now())

    log = [entry.to_json() for entry in await reviews.audit_log()]
    assert [(e["operator"], e["decision"], e["target"], e["reason"]) for e in log] == [
        ("boss", "suspend", "player cat", "r3"),
        ("deputy", "void", f"match {first.code} player ana", "r2"),
        ("boss", "clear", f"match {first.code} player quick", "r1"),
    ]
    assert all(datetime.fromisoformat(e["at"]).tzinfo is not None for e in log)


async def test_decisions_that_do_not_apply_are_refused_and_not_logged(table: Table) -> None:
    bot, ana = [await new_player(table.store, name) for name in ("quick", "ana")]
    first, _ = await table.race([(bot, bot_pace), (ana, human_pace)])
    reviews = table.store.reviews
    at = _now()
    refusals = [
        (reviews.clear(code=first.code, name="ana", operator="b", reason="r", at=at),
         "already_decided"),
        (reviews.clear(code="NOPE", name="ana", operator="b", reason="r", at=at),
         "no_such_result"),
        (reviews.void(code=first.code, name="nobody", operator="b", reason="r", at=at),
         "no_such_result"),
        (reviews.suspend(name="nobody", operator="b", reason="r", at=at), "no_such_player"),
    ]
    for attempt, code in refusals:
        with pytest.raises(ServerError) as refused:
            await attempt
        assert refused.value.code == code
    await reviews.void(code=first.code, name="ana", operator="b", reason="r", at=at)
    await reviews.suspend(name="ana", operator="b", reason="r", at=at)
    for attempt in (
        reviews.void(code=first.code, name="ana", operator="b", reason="r", at=at),
        reviews.suspend(name="ANA", operator="b", reason="r", at=at),
    ):
        with pytest.raises(ServerError) as refused:
            await attempt
        assert refused.value.code == "already_decided"
    assert len(await reviews.audit_log()) == 2


async def test_the_database_refuses_to_change_or_delete_the_audit_log(
    table: Table, migrated_engine: AsyncEngine
) -> None:
    await new_player(table.store, "cat")
    await table.store.reviews.suspend(name="cat", operator="boss", reason="r", at=_now())
    for statement in (
        update(AuditEntry).values(reason="nothing happened"),
        delete(AuditEntry),
    ):
        with pytest.raises(DBAPIError, match="append-only"):
            async with migrated_engine.begin() as connection:
                await connection.execute(statement)
    if migrated_engine.dialect.name == "postgresql":
        with pytest.raises(DBAPIError, match="append-only"):
            async with migrated_engine.begin() as connection:
                await connection.execute(text("TRUNCATE audit_log"))
    [entry] = await table.store.reviews.audit_log()
    assert entry.reason == "r"


def test_no_code_of_the_server_changes_or_deletes_an_audit_log_row() -> None:
    for path in sorted((ROOT / "server").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("update", "delete")
                and any(isinstance(a, ast.Name) and a.id == "AuditEntry" for a in node.args)
            ):
                raise AssertionError(f"{path}:{node.lineno} changes the audit log")
        assert "audit_log SET" not in path.read_text() and "FROM audit_log" not in path.read_text()


# -- the operators, through the protocol ----------------------------------------------

Connect = Callable[[], Awaitable[Client]]


@pytest.fixture
async def operated(settings: Settings) -> AsyncIterator[tuple[Server, Connect]]:
    """A server whose operator is ``boss`` (registered before it was listed)."""
    first = Server(settings)
    await first.start()
    boss = await Client.connect(f"ws://127.0.0.1:{first.port}")
    token = (await boss.register("boss"))["token"]
    await boss.close()
    await first.close()
    running = Server(replace(settings, operators=("Boss",)))
    await running.start()
    clients: list[Client] = []

    async def connect() -> Client:
        client = await Client.connect(f"ws://127.0.0.1:{running.port}")
        clients.append(client)
        return client

    boss = await connect()
    await boss.ok("hello", token=token)
    running.boss = boss  # type: ignore[attr-defined]
    yield running, connect
    for client in clients:
        await client.close()
    await running.close()


OPERATOR_REQUESTS: list[dict[str, Any]] = [
    {"type": "review_list"},
    {"type": "review_clear", "code": "ABCD", "name": "ana", "reason": "why"},
    {"type": "review_void", "code": "ABCD", "name": "ana", "reason": "why"},
    {"type": "suspend", "name": "ana", "reason": "why"},
    {"type": "audit_log"},
]


async def test_a_client_cannot_make_itself_an_operator(
    operated: tuple[Server, Connect],
) -> None:
    server, connect = operated
    squatter = await connect()
    refused = await squatter.request("register", name="BOSS")
    assert (refused["type"], refused["code"]) == ("error", "name_taken")
    mallory = await connect()
    await mallory.register("mallory")
    for request in OPERATOR_REQUESTS:
        kind = request["type"]
        fields = {k: v for k, v in request.items() if k != "type"}
        reply = await mallory.request(kind, **fields, operator=True, role="operator")
        assert (reply["type"], reply.get("code")) == ("error", "not_operator"), kind
    stranger = await connect()
    reply = await stranger.request("review_list")
    assert reply["code"] == "not_authenticated"
    assert await server.store.reviews.audit_log() == []


async def test_an_operator_decides_through_the_protocol_and_reads_the_log(
    operated: tuple[Server, Connect],
) -> None:
    server, connect = operated
    boss: Client = server.boss  # type: ignore[attr-defined]
    ana = await connect()
    await ana.register("ana")
    assert (await boss.ok("review_list"))["reviews"] == []

    # A reason is taken as sent, or refused (docs/protocol.md, Text): never trimmed.
    refused = await boss.request("suspend", name="ana", reason=" a shared account ")
    assert (refused["code"], refused["field"]) == ("bad_message", "reason")
    assert (await boss.ok("suspend", name="ana", reason="a shared account"))["type"] == "ok"

    refused = await boss.request("suspend", name="ana", reason="again")
    assert refused["code"] == "already_decided"
    refused = await boss.request("suspend", name="ana", reason="   ")
    assert refused["code"] == "bad_message"
    [entry] = (await boss.ok("audit_log"))["entries"]
    assert {k: entry[k] for k in ("operator", "decision", "target", "reason")} == {
        "operator": "boss",
        "decision": "suspend",
        "target": "player ana",
        "reason": "a shared account",
    }
    again = await connect()
    welcome = await again.ok("hello", token=ana.token)
    assert welcome["suspended"]["reason"] == "a shared account"


async def test_the_projects_own_bot_is_a_declared_bot_never_held_and_counted_among_bots(
    operated: tuple[Server, Connect], capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    server, _ = operated
    boss: Client = server.boss  # type: ignore[attr-defined]
    # `gaps bot --level 2 --pace 0` races its host, who stops at once: a game a bot
    # played in, so it counts for the bot alone, on the bots' board, and the bot's
    # inhuman pace holds nothing (the flags are for programs registered as people).
    code, _ = await race_bots(f"ws://127.0.0.1:{server.port}", 1, capsys)

    assert (await boss.ok("review_list"))["reviews"] == []
    replay = (await boss.ok("get_replay", code=code))["replay"]
    [bot] = [player["name"] for player in replay["players"] if player["bot"]]
    [host] = [player["name"] for player in replay["players"] if not player["bot"]]
    assert bot.startswith("bot-")
    assert {p["name"]: p["review"] for p in replay["players"]} == {bot: None, host: None}
    people = await boss.ok("leaderboard", ruleset="classic", by="score")
    assert people["entries"] == []
    bots = await boss.ok("leaderboard", ruleset="classic", by="score", kind="bots")
    assert [(entry["name"], entry["bot"]) for entry in bots["entries"]] == [(bot, True)]

    await boss.ok("review_void", code=code, name=bot, reason="the project's own bot, testing")

    bots = await boss.ok("leaderboard", ruleset="classic", by="score", kind="bots")
    assert bots["entries"] == []
    people = await boss.ok("leaderboard", ruleset="classic", by="score")
    assert people["entries"] == []  # the host's game against a bot counts nowhere still


def _now() -> datetime:
    return datetime.now(UTC)


def _clock_time(clock: FakeClock) -> datetime:
    return datetime.fromtimestamp(clock.now_ms() / 1000, UTC)
