"""End to end: real WebSocket clients race on a real server, on PostgreSQL and on SQLite.

The deal of seed AAAA-BBBB-CCCC-DDDD (classic), used where a known position helps:

    3C 8C 3S 7H TC QC 2S 4D 6C 4S JH -- 7S
    KS KH 2D QS QD KC 9C JC KD JD 5C QH 6H
    8D TD 3D 2H -- 9H 7D 6S -- 9D 6D JS 7C
    3H -- 2C 4H 8H TH 5H 9S 5S TS 5D 4C 8S
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from client_cli.verify import verify
from gaps import Action, Game, Seed, Stop, parse_action
from gaps.ranking import Finish, rank
from gaps.replay import replay
from gaps_protocol.messages.events import (
    MatchEnded,
    MatchEvent,
    PlayerFinished,
    ProgressMade,
    ReadyChanged,
)
from gaps_protocol.messages.replies import ActionOk
from server.app import Server
from server.broker import LocalBroker
from server.errors import ServerError
from server.match import Match as LiveMatch
from server.replays import replay_document
from server.storage.journal import Journal
from server.storage.matches import Matches
from server.storage.models import ActionRecord, Match, MatchPlayer
from server.storage.results import Results
from server.storage.store import Store
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.lobbies import clocked_match, hosted, new_lobby, new_player
from tests.races import registered, start_race

Connect = Callable[[], Awaitable[Client]]
KNOWN_SEED = "AAAA-BBBB-CCCC-DDDD"
E = TypeVar("E", bound=MatchEvent)


def winning_line(ruleset: str) -> tuple[Seed, list[str]]:
    """A seed and the actions of a random game that wins it (the same every run)."""
    for number in range(10_000):
        seed = Seed(number.to_bytes(10, "big"))
        game = Game(seed, ruleset)
        actions = game.random_playout(random.Random(number))
        if game.is_won():
            return seed, [str(action) for action in actions]
    raise AssertionError("no winning random game in 10,000 deals")


async def players(connect: Connect, count: int) -> list[Client]:
    return await registered(connect, *(f"p{n}-{random.randrange(10**6)}" for n in range(count)))


def started_event(client: Client) -> dict[str, Any]:
    return next(event for event in client.events if event["event"] == "started")


def dealt(client: Client, ruleset: str = "classic") -> Game:
    return Game.from_layout("\n".join(started_event(client)["grid"]), ruleset)


async def play_randomly(
    client: Client, code: str, moves: int, rng: random.Random, ruleset: str = "classic"
) -> Game:
    """Make up to ``moves`` random legal moves, mirrored on a local game; then stop."""
    game = dealt(client, ruleset)
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            break
        move = rng.choice(legal)
        reply = await client.act(code, str(move))
        assert reply["type"] == "action_ok", reply
        game.play(move)
        assert (reply["score"], reply["placed"]) == (game.score, game.placed)
    reply = await client.act(code, "stop")
    assert reply["type"] == "action_ok" and reply["status"] == "stopped", reply
    return game


async def play_line(client: Client, code: str, actions: list[str]) -> dict[str, Any]:
    reply: dict[str, Any] = {}
    for action in actions:
        reply = await client.act(code, action)
        assert reply["type"] == "action_ok", (action, reply)
    return reply


async def stored(server: Server, code: str) -> tuple[Any, list[Any], list[Any]]:
    """The match row, its result rows and its action rows, read back from the database."""
    async with server.database.engine.connect() as connection:
        match = (await connection.execute(select(Match.__table__).where(Match.code == code))).one()
        results = (
            await connection.execute(
                select(MatchPlayer.__table__).where(MatchPlayer.match_id == match.id)
            )
        ).all()
        actions = (
            await connection.execute(
                select(ActionRecord.__table__)
                .where(ActionRecord.match_id == match.id)
                .order_by(ActionRecord.player_id, ActionRecord.seq)
            )
        ).all()
    return match, results, actions


async def test_two_players_get_the_same_deal_at_the_same_instant(connect: Connect) -> None:
    clients = await players(connect, 2)
    code = await start_race(clients)
    first, second = (started_event(client) for client in clients)
    assert first == second
    assert len(first["commitment"]) == 64 and "seed" not in first
    for number, client in enumerate(clients):
        await play_randomly(client, code, 5 + number, random.Random(number))
    ended = await clients[0].event("match_ended")
    assert Seed.parse(ended["seed"]).commitment == first["commitment"]
    assert sorted(row["player_id"] for row in ended["ranking"]) == sorted(
        client.player_id for client in clients
    )


async def test_eight_players_race_and_every_score_replays_from_the_database(
    connect: Connect, server: Server
) -> None:
    clients = await players(connect, 8)
    code = await start_race(clients, win_by="score")
    assert len({tuple(started_event(client)["grid"]) for client in clients}) == 1
    games = await asyncio.gather(
        *(
            play_randomly(client, code, 10 + 3 * number, random.Random(number))
            for number, client in enumerate(clients)
        )
    )
    ended = await clients[3].event("match_ended")
    scores = [row["score"] for row in ended["ranking"]]
    assert scores == sorted(scores, reverse=True)
    assert ended["ranking"][0]["rank"] == 1

    match, results, actions = await stored(server, code)
    assert match.status == "finished" and match.ended_at is not None
    assert len(results) == 8
    assert len(actions) == sum(game.moves_made + 1 for game in games)  # each move, each stop
    seed = Seed.parse(ended["seed"])
    assert seed.data == match.seed
    final = {client.player_id: game for client, game in zip(clients, games, strict=True)}
    ranks = {row["player_id"]: row["rank"] for row in ended["ranking"]}
    for result in results:
        own = [row for row in actions if row.player_id == result.player_id]
        replayed = replay(seed, "classic", [row.action for row in own])
        assert replayed.ok and replayed.score == result.score == final[result.player_id].score
        game = Game(seed, "classic")
        for row in own:  # every stored score is the score after that action
            game.push(parse_action(row.action))
            assert row.score == game.score
        assert (result.placed, result.moves, result.end_reason) == (
            game.placed,
            game.moves_made,
            "stopped",
        )
        assert result.rank == ranks[result.player_id]


async def test_illegal_actions_get_the_engines_reason_and_change_nothing(connect: Connect) -> None:
    [ana] = await players(connect, 1)
    code = await start_race([ana], seed=KNOWN_SEED)
    refused = {
        "2S>1": "not_a_gap",  # r1c1 holds 3C
        "5C": "not_a_gap",  # the slot right of 4C holds 8S
        "2H": "row_required",
        "AS": "not_in_play",
        "9C>r1c12": "wrong_card",  # the gap right of JH takes QH
        "redeal": "redeal_not_allowed",  # classic: only when blocked
        "undo": "undo_not_allowed",
    }
    for action, reason in refused.items():
        reply = await ana.act(code, action, seq=1)
        assert (reply["code"], reply.get("reason")) == ("illegal_action", reason), (action, reply)
    moved = await ana.act(code, "7S", seq=1)  # 7S leaves r1c13: now right of the gap r1c12
    assert (moved["from"], moved["to"], moved["moves_made"]) == ("r1c13", "r3c9", 1)
    dead = await ana.act(code, "8S>r1c13", seq=2)
    assert (dead["code"], dead["reason"]) == ("illegal_action", "dead_gap")
    malformed = await ana.request("action", code=code, seq=2, action="XYZ")
    assert (malformed["code"], malformed["field"]) == ("bad_message", "action")
    stopped = await ana.act(code, "stop", seq=2)
    assert stopped["moves_made"] == 1 and stopped["score"] == 0
    over = await ana.act(code, "7S", seq=3)
    assert over["code"] == "game_over"


async def test_addiction_refuses_undo_with_nothing_to_undo_and_a_fourth_redeal(
    connect: Connect,
) -> None:
    [ana] = await players(connect, 1)
    code = await start_race([ana], ruleset="addiction", seed=KNOWN_SEED)
    nothing = await ana.act(code, "undo", seq=1)
    assert nothing["reason"] == "nothing_to_undo"
    moved = await ana.act(code, "7S", seq=1)
    undone = await ana.act(code, "undo", seq=2)
    assert (undone["card"], undone["from"], undone["to"]) == ("7S", moved["to"], moved["from"])
    for seq in (3, 4, 5):
        redealt = await ana.act(code, "redeal", seq=seq)
        assert redealt["kind"] == "redeal" and len(redealt["grid"]) == 4
    assert redealt["score"] == redealt["placed"] - 15
    fourth = await ana.act(code, "redeal", seq=6)
    assert fourth["reason"] == "no_redeals_left"


async def test_a_resent_action_is_applied_once(connect: Connect, server: Server) -> None:
    [ana] = await players(connect, 1)
    code = await start_race([ana], seed=KNOWN_SEED)
    first = await ana.act(code, "3H", seq=1)
    again = await ana.act(code, "3H", seq=1)
    assert again == {**first, "id": again["id"], "duplicate": True}
    second = await ana.act(code, "2C>4", seq=2)
    assert second["moves_made"] == 2 and second["score"] == 1
    older = await ana.act(code, "4H", seq=1)  # a resend of seq 1, whatever it says now
    assert older["duplicate"] is True and older["action"] == "3H" and older["moves_made"] == 1
    _, _, actions = await stored(server, code)
    assert [row.action for row in actions] == ["3H", "2C>4"]


async def test_only_a_seated_player_acts_and_only_for_themself(connect: Connect) -> None:
    ana, bob, eve = await players(connect, 3)
    code = (await ana.ok("create_match", max_players=2, countdown_s=0))["match"]["code"]
    await eve.ok("join_match", code=code, role="spectator")
    await ana.ok("start_match", code=code)
    await ana.event("started")
    assert (await bob.act(code, "stop"))["code"] == "not_a_player"
    assert (await eve.act(code, "stop"))["code"] == "not_a_player"
    assert (await bob.request("join_match", code=code))["code"] == "already_started"
    anonymous = await connect()
    assert (await anonymous.act(code, "stop"))["code"] == "not_authenticated"
    assert (await anonymous.request("hello", token="not-a-token"))["code"] == "bad_token"
    progress = [e for e in ana.events if e["event"] == "progress"]
    assert progress == []  # nobody moved for ana


async def test_the_fastest_winner_wins_a_time_race_and_equal_losers_share_a_rank(
    connect: Connect, clock: FakeClock
) -> None:
    seed, line = winning_line("no-redeal")
    fast, slow, idle_one, idle_two = await players(connect, 4)
    code = await start_race(
        [fast, slow, idle_one, idle_two], ruleset="no-redeal", win_by="time", seed=str(seed)
    )
    for idle in (idle_one, idle_two):
        await idle.act(code, "stop")  # both stay at 0 points, reached at 0 ms
    won = await play_line(fast, code, line)
    assert won["status"] == "won" and won["score"] == 58
    clock.advance(0.05)
    await play_line(slow, code, line)
    ended = await fast.event("match_ended")
    table = [(row["player_id"], row["rank"]) for row in ended["ranking"]]
    assert table[:2] == [(fast.player_id, 1), (slow.player_id, 2)]
    assert sorted(table[2:]) == sorted([(idle_one.player_id, 3), (idle_two.player_id, 3)])
    assert ended["ranking"][0]["won"] and ended["ranking"][0]["end_reason"] == "won"
    assert ended["ranking"][0]["finish_ms"] < ended["ranking"][1]["finish_ms"]


async def test_a_score_race_ranks_by_score_then_by_finish_time(
    connect: Connect, clock: FakeClock
) -> None:
    seed, line = winning_line("no-redeal")
    partial_line, partial_game = [], Game(seed, "no-redeal")
    dealt_score = partial_game.score
    for action in line:  # the shortest start of the winning line that gains a point
        partial_line.append(action)
        partial_game.push(parse_action(action))
        if partial_game.score > dealt_score:
            break
    winner, partial, early, late = await players(connect, 4)
    code = await start_race(
        [winner, partial, early, late], ruleset="no-redeal", win_by="score", seed=str(seed)
    )
    await early.act(code, "stop")
    await play_line(partial, code, partial_line + ["stop"])
    await play_line(winner, code, line)
    clock.advance(0.02)
    await late.act(code, "stop")
    ended = await winner.event("match_ended")
    rows = [(row["player_id"], row["rank"], row["score"]) for row in ended["ranking"]]
    assert rows == [
        (winner.player_id, 1, 58),
        (partial.player_id, 2, partial_game.score),
        (early.player_id, 3, dealt_score),  # the same score as late, but finished first
        (late.player_id, 4, dealt_score),
    ]


async def test_a_reconnect_mid_match_resumes_exactly(connect: Connect) -> None:
    ana, bob = await players(connect, 2)
    code = await start_race([ana, bob], seed=KNOWN_SEED)
    await ana.act(code, "3H")
    await ana.act(code, "2C>4")
    seen = ana.events[-1]["seq"] if ana.events else 0
    await ana.close()
    await bob.act(code, "QH")  # happens while ana is away
    back = await connect()
    welcome = await back.ok("hello", token=ana.token)
    assert welcome["player"]["id"] == ana.player_id
    joined = await back.ok("join_match", code=code)
    expected = Game.from_layout("\n".join(started_event(bob)["grid"]))
    for action in ("3H", "2C>4"):
        expected.push(parse_action(action))
    you = joined["you"]
    assert you["role"] == "player" and you["last_seq"] == 2
    assert you["game"]["grid"] == expected.layout().splitlines()
    assert (you["game"]["score"], you["game"]["moves_made"]) == (expected.score, 2)
    missed = await back.ok("resync", code=code, since=seen)
    assert missed["type"] == "events"
    assert any(
        e["event"] == "progress" and e["player_id"] == bob.player_id for e in missed["events"]
    )
    assert [e["seq"] for e in missed["events"]] == list(range(seen + 1, joined["seq"] + 1))
    resent = await back.act(code, "2C>4", seq=2)
    assert resent["duplicate"] is True
    going_on = await back.act(code, "3C", seq=3)  # 3C follows 2C, now in r4c1
    assert going_on["type"] == "action_ok" and going_on["to"] == "r4c2"
    assert (going_on["moves_made"], going_on["score"]) == (3, 2)
    ana_now = next(p for p in joined["players"] if p["player_id"] == ana.player_id)
    assert ana_now["connected"] is True and ana_now["finished"] is False


async def test_a_player_away_past_the_grace_period_is_ended_with_their_score(
    connect: Connect, clock: FakeClock
) -> None:
    ana, bob = await players(connect, 2)
    code = await start_race([ana, bob], seed=KNOWN_SEED)
    await ana.act(code, "3H")
    await ana.act(code, "2C>4")
    await ana.close()  # the test server's grace period is 1 s
    away = await bob.event("presence", player_id=ana.player_id)
    assert away["connected"] is False
    clock.advance(0.999)
    assert await bob.ok("ping")  # the server has had its turn: nothing ended yet
    assert not [e for e in bob.events if e["event"] == "player_finished"]
    clock.advance(0.001)
    finished = await bob.event("player_finished", player_id=ana.player_id)
    assert finished["end_reason"] == "disconnected" and finished["score"] == 1
    assert finished["finish_ms"] == 1000


async def test_the_time_limit_ends_every_game_still_running(
    connect: Connect, clock: FakeClock
) -> None:
    ana, bob = await players(connect, 2)
    code = await start_race([ana, bob], seed=KNOWN_SEED, time_limit_s=1)
    await ana.act(code, "3H")
    clock.advance(1)
    ended = await bob.event("match_ended")
    assert {row["end_reason"] for row in ended["ranking"]} == {"time"}
    assert {row["status"] for row in ended["ranking"]} == {"time"}
    assert all(row["finish_ms"] == 1000 for row in ended["ranking"])
    late = await ana.act(code, "2C>4")
    assert late["code"] == "game_over"


async def test_spectators_see_every_players_progress_but_not_the_seed_until_the_end(
    connect: Connect,
) -> None:
    ana, bob, eve = await players(connect, 3)
    code = (await ana.ok("create_match", max_players=2, countdown_s=0, seed=KNOWN_SEED))["match"][
        "code"
    ]
    watching = await eve.ok("join_match", code=code, role="spectator")
    assert watching["you"] == {"role": "spectator"} and watching["spectators"] == 1
    await bob.ok("join_match", code=code)
    for client in (ana, bob):
        await client.ok("ready", code=code)
    await eve.event("started")
    await ana.act(code, "3H")
    await ana.act(code, "2C>4")
    progress = await eve.event("progress", player_id=ana.player_id, moves_made=2)
    assert (progress["placed"], progress["score"], progress["redeals_used"]) == (1, 1, 0)
    assert all("seed" not in event for event in eve.events)
    for client in (ana, bob):
        await client.act(code, "stop")
    ended = await eve.event("match_ended")
    assert ended["seed"] == KNOWN_SEED


async def test_the_lobby_lists_public_matches_and_seats_players_until_full(
    connect: Connect,
) -> None:
    ana, bob, cat = await players(connect, 3)
    public = (await ana.ok("create_match", max_players=2, public=True))["match"]
    private = (await ana.ok("create_match", max_players=2))["match"]
    listed = await cat.ok("list_matches")
    codes = [match["code"] for match in listed["matches"]]
    assert public["code"] in codes and private["code"] not in codes
    await bob.ok("join_match", code=private["code"])
    full = await cat.request("join_match", code=private["code"])
    assert full["code"] == "match_full"
    assert (await cat.request("join_match", code="NOPE42"))["code"] == "no_such_match"
    assert (await bob.request("start_match", code=private["code"]))["code"] == "not_host"
    left = await bob.ok("leave_match", code=private["code"])
    assert left == {"type": "left", "id": left["id"], "match": private["code"]}
    await ana.event("player_left", player_id=bob.player_id)
    await cat.ok("join_match", code=private["code"])
    await ana.ok("leave_match", code=private["code"])
    changed = await cat.event("host_changed")
    assert changed["host_id"] == cat.player_id
    await cat.ok("start_match", code=private["code"])
    await cat.event("countdown")


def losing_line(ruleset: str) -> tuple[Seed, list[str]]:
    """A seed and the actions of a random game that ends lost (the same every run)."""
    for number in range(1000):
        seed = Seed(number.to_bytes(10, "big"))
        game = Game(seed, ruleset)
        actions = game.random_playout(random.Random(number))
        if game.is_lost() and 5 < len(actions) < 80:
            return seed, [str(action) for action in actions]
    raise AssertionError("no short lost game in 1,000 deals")


async def test_a_blocked_game_with_no_redeal_left_ends_lost_by_itself(connect: Connect) -> None:
    seed, line = losing_line("no-redeal")
    ana, bob = await players(connect, 2)
    code = await start_race([ana, bob], ruleset="no-redeal", seed=str(seed))
    last = await play_line(ana, code, line)
    assert last["status"] == "lost"
    finished = await bob.event("player_finished", player_id=ana.player_id)
    assert finished["end_reason"] == "lost" and finished["score"] == last["score"]
    assert (await ana.act(code, "stop"))["code"] == "game_over"


async def test_the_deal_comes_after_the_countdown(connect: Connect, clock: FakeClock) -> None:
    [ana] = await players(connect, 1)
    code = (await ana.ok("create_match", max_players=1, countdown_s=1))["match"]["code"]
    await ana.ok("ready", code=code)
    countdown = await ana.event("countdown")
    assert countdown["countdown_ms"] == 1000 and len(countdown["commitment"]) == 64
    clock.advance(0.999)
    early = await ana.act(code, "stop")
    assert early["code"] == "not_started"
    clock.advance(0.001)
    started = await ana.event("started")
    assert started["t_ms"] == 0


# -- who may watch (unit level, on the real storage) --------------------------------------


async def test_players_who_ask_for_a_rematch_at_once_meet_in_one_match_offered_to_all(
    connect: Connect,
) -> None:
    ana, bob, cat = await registered(connect, "ana", "bob", "cat")
    code = await start_race([ana, bob, cat], win_by="score", time_limit_s=120)
    eve = await connect()
    await eve.register("eve")
    await eve.ok("join_match", code=code, role="spectator")
    for client in (ana, bob, cat):
        await client.act(code, "stop")
    ended = await ana.event("match_ended", match=code)
    # Two of them press the key at the same instant: one match, offered once.
    first, second = await asyncio.gather(
        ana.ok("rematch", code=code), bob.ok("rematch", code=code.lower())
    )
    assert first["type"] == second["type"] == "rematch" and first["of"] == code
    new_code = first["match"]["code"]
    assert second["match"]["code"] == new_code != code and first["same_seed"] is False
    assert first["match"]["status"] == "lobby" and first["match"]["rated"] is True
    assert first["match"]["time_limit_s"] == 120 and first["match"]["win_by"] == "score"
    # Every follower of the old match hears of it, the spectator too (who may not accept).
    for client in (ana, bob, cat, eve):
        offered = await client.event("rematch_offered", match=code)
        assert offered["code"] == new_code and offered["seq"] == ended["seq"] + 1
        assert offered["by"]["name"] in ("ana", "bob") and offered["same_seed"] is False
    assert (await eve.request("rematch", code=code))["code"] == "not_in_match"
    accepted = await cat.ok("rematch", code=code)  # cat accepts: the same match
    assert accepted["match"]["code"] == new_code and accepted["you"]["role"] == "player"
    assert {p["name"] for p in accepted["players"]} == {"ana", "bob", "cat"}
    assert [e["event"] for e in ana.events if e.get("match") == code].count(
        "rematch_offered") == 1
    # The same deal again is a rematch of its own: unrated, the revealed seed dealt.
    same = await bob.ok("rematch", code=code, same_seed=True)
    assert same["match"]["code"] not in (code, new_code) and same["match"]["rated"] is False
    assert same["match"]["commitment"] is None  # (published at the countdown)
    again = await ana.event("rematch_offered", match=code, same_seed=True)
    assert again["code"] == same["match"]["code"] and again["by"]["name"] == "bob"
    joined = await ana.ok("rematch", code=code, same_seed=True)
    assert joined["match"]["code"] == same["match"]["code"]
    for client in (ana, bob):
        await client.ok("ready", code=same["match"]["code"])
    countdown = await ana.event("countdown", match=same["match"]["code"])
    assert countdown["commitment"] == Seed.parse(ended["seed"]).commitment


async def test_a_rematch_comes_after_the_match_and_a_started_one_is_offered_anew(
    connect: Connect,
) -> None:
    ana, bob, cat = await registered(connect, "ana", "bob", "cat")
    code = await start_race([ana, bob])
    assert (await ana.request("rematch", code=code))["code"] == "not_finished"
    for client in (ana, bob):
        await client.act(code, "stop")
    await ana.event("match_ended", match=code)
    first = (await ana.ok("rematch", code=code))["match"]["code"]
    await cat.ok("join_match", code=first)  # the rematch has two seats: cat takes the other
    # bob finds it full: a new rematch is offered in its place, and said.
    second = (await bob.ok("rematch", code=code))["match"]["code"]
    assert second != first
    for offered in (first, second):
        assert (await ana.event("rematch_offered", match=code, code=offered))["by"]["name"] in (
            "ana", "bob")


async def test_a_rematch_lets_bots_sit_as_the_finished_match_did_and_no_more(
    connect: Connect,
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    beep = await connect()
    await beep.register("beep", bot=True)
    with_bot = await start_race([ana, beep], bots=True)
    for client in (ana, beep):
        await client.act(with_bot, "stop")
    await ana.event("match_ended", match=with_bot)
    # The bot asks first: it hosts the rematch, which lets bots sit as the match did.
    offered = await beep.ok("rematch", code=with_bot)
    assert offered["match"]["bots"] is True
    assert [(p["name"], p["bot"]) for p in offered["players"]] == [("beep", True)]
    accepted = await ana.ok("rematch", code=with_bot)
    assert accepted["match"]["code"] == offered["match"]["code"]
    # A match that let no bot sit has a rematch that lets none sit either.
    people = await start_race([ana, bob])
    for client in (ana, bob):
        await client.act(people, "stop")
    await ana.event("match_ended", match=people)
    rematch = (await ana.ok("rematch", code=people))["match"]
    assert rematch["bots"] is False
    refused = await beep.request("join_match", code=rematch["code"])
    assert refused["code"] == "bots_not_allowed"


async def test_anyone_may_watch_a_race_but_a_daily_challenge_only_its_own_player_today(
    migrated_engine: AsyncEngine,
) -> None:
    store = Store(migrated_engine)
    lobby = new_lobby(store, LocalBroker(), FakeClock())
    try:
        ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
        race = await hosted(lobby, ana, public=False)
        assert (await race.watch(bob.id)).you.role == "spectator"
        daily = await hosted(lobby, ana, kind="daily", daily_date=datetime.now(UTC).date())
        await daily.start()  # the deal comes in the `started` event, to every watcher
        await daily.resync(ana.id, 0)  # a player resyncs their own match
        for refused_request in (daily.watch(bob.id), daily.resync(bob.id, 0)):
            with pytest.raises(ServerError) as refused:
                await refused_request
            assert refused.value.code == "not_watchable" and daily.code in refused.value.message
        assert daily.state.spectators == 0 and race.state.spectators == 1
    finally:
        await lobby.close()


async def test_a_daily_challenge_may_be_watched_once_its_day_is_over(
    migrated_engine: AsyncEngine,
) -> None:
    store = Store(migrated_engine)
    lobby = new_lobby(store, LocalBroker(), FakeClock())
    try:
        ana, bob = await new_player(store, "ana"), await new_player(store, "bob")
        yesterday = datetime.now(UTC).date() - timedelta(days=1)
        daily = await hosted(lobby, ana, kind="daily", daily_date=yesterday)
        await daily.watch(bob.id)  # nobody can play that deal any more
        assert daily.state.spectators == 1
    finally:
        await lobby.close()


# -- every way a game ends, in any order, at the same instants (on a fake clock) ----------
#
# Each seat makes a few random moves at one step of the clock (steps are STEP_S apart),
# then ends its game one way: it stops, leaves, plays on until the game ends by itself
# (won on the winnable deal, else mostly lost), disconnects (and stays away past the grace
# period), or waits for the time limit, maybe acting just as it passes. Seats that act at
# one step act at once, beside the timers that fire at that instant.

STEP_S = 10
GRACE_STEPS = 3  # the grace period, 30 s
LIMIT_STEP = 6  # the time limit, 60 s
ENDINGS = ("stop", "leave", "play_out", "disconnect", "time", "late")
NAMES = itertools.count()


@dataclass(frozen=True)
class Part:
    """What one seat does: ``moves`` random moves at step ``step``, then ``ending``."""

    moves: int
    ending: str
    step: int


@dataclass(frozen=True)
class Race:
    ruleset: str
    seed: Seed
    win_by: str
    parts: tuple[Part, ...]
    rng_seed: int


@functools.cache
def winnable() -> tuple[Seed, tuple[Action, ...]]:
    seed, line = winning_line("no-redeal")
    return seed, tuple(parse_action(action) for action in line)


@st.composite
def races(draw: st.DrawFn) -> Race:
    endings: tuple[str, ...]
    if draw(st.booleans()):
        seed, ruleset, endings = winnable()[0], "no-redeal", (*ENDINGS, "win")
    else:
        seed = Seed(draw(st.binary(min_size=10, max_size=10)))
        ruleset, endings = draw(st.sampled_from(["no-redeal", "classic"])), ENDINGS
    parts = st.builds(
        Part,
        moves=st.integers(0, 6),
        ending=st.sampled_from(endings),
        step=st.integers(0, LIMIT_STEP - 1),
    ).map(lambda part: replace(part, moves=0) if part.ending == "win" else part)
    return Race(
        ruleset=ruleset,
        seed=seed,
        win_by=draw(st.sampled_from(["time", "score"])),
        parts=tuple(draw(st.lists(parts, min_size=2, max_size=6))),
        rng_seed=draw(st.integers(0, 2**32)),
    )


async def until(condition: Callable[[], bool], what: str, *, timeout_s: float = 5.0) -> None:
    try:
        async with asyncio.timeout(timeout_s):
            while not condition():
                await asyncio.sleep(0.001)
    except TimeoutError:
        raise AssertionError(f"not within {timeout_s} s: {what}") from None


def events_called(match: LiveMatch, kind: type[E]) -> list[E]:
    return [event for event in match.history.since(0) or [] if isinstance(event, kind)]


async def games_ended(match: LiveMatch, players: set[int], what: str) -> None:
    await until(
        lambda: {e.player_id for e in events_called(match, PlayerFinished)} >= players,
        what,
    )


async def timer_set(clock: FakeClock, count: int) -> None:
    await until(lambda: clock.wakeups() == count, f"{count} wake-ups set")


class Seating:
    """One seat of a race: its part, a local copy of its game, and what it sent."""

    def __init__(
        self, match: LiveMatch, player_id: int, part: Part, rng: random.Random
    ) -> None:
        self.match = match
        self.player_id = player_id
        self.part = part
        self.rng = rng
        self.game = Game(match.seed, match.options.ruleset)
        self.sent: list[str] = []
        self.seq = 0
        # The end reasons it may have, and the step it ends at (once it has acted).
        self.expected: tuple[frozenset[str], int] | None = None

    async def play(self, action: Action) -> ActionOk:
        self.seq += 1
        ack = await self.match.play(self.player_id, self.seq, action)
        self.game.push(action)
        self.sent.append(str(action))
        assert (ack.score, ack.placed) == (self.game.score, self.game.placed)
        return ack

    async def act(self) -> None:
        """Its moves, then its ending, at its step."""
        part, step = self.part, self.part.step
        for _ in range(part.moves):
            legal = self.game.legal_moves()
            if self.game.is_over() or not legal:
                break
            await self.play(self.rng.choice(legal))
        if self.game.is_over():  # ended by its own play before its ending
            self.expected = frozenset({self.game.result()}), step
            return
        if part.ending in ("play_out", "win"):
            if part.ending == "win":
                line = list(winnable()[1])
            else:
                line = self.game.copy().random_playout(self.rng)
            for action in line:
                await self.play(action)
            assert self.game.is_over()
            self.expected = frozenset({self.game.result()}), step
        elif part.ending == "stop":
            await self.play(Stop())
            self.expected = frozenset({"stopped"}), step
        elif part.ending == "leave":
            await self.match.leave(self.player_id)
            self.expected = frozenset({"left"}), step
        elif part.ending == "disconnect":
            await self.match.disconnect(self.player_id)
            back = step + GRACE_STEPS
            if back < LIMIT_STEP:
                self.expected = frozenset({"disconnected"}), back
            else:  # the time limit comes first, or at the same instant
                reasons = {"time", "disconnected"} if back == LIMIT_STEP else {"time"}
                self.expected = frozenset(reasons), LIMIT_STEP
        else:  # time, late
            self.expected = frozenset({"time"}), LIMIT_STEP

    async def act_late(self) -> None:
        """An action as the time limit passes: refused, whether or not the timer has run."""
        self.seq += 1
        with pytest.raises(ServerError) as refused:
            await self.match.play(self.player_id, self.seq, Stop())
        assert refused.value.code == "game_over"


async def race_to_the_end(store: Store, race: Race) -> None:
    clock, broker = FakeClock(), LocalBroker()
    journal = Journal(store.database)
    journal.start()
    players = [await new_player(store, f"end{next(NAMES)}") for _ in race.parts]
    match = await clocked_match(
        store, journal, broker, clock, players, ruleset=race.ruleset, seed=race.seed,
        win_by=race.win_by, time_limit_s=LIMIT_STEP * STEP_S, grace_s=GRACE_STEPS * STEP_S,
    )
    try:
        await match.start()
        await until(lambda: match.status == "running", "the deal")
        seats = [
            Seating(match, player.id, part, random.Random(f"{race.rng_seed}/{number}"))
            for number, (player, part) in enumerate(zip(players, race.parts, strict=True))
        ]
        step = 0
        while True:
            acting = [seat.act() for seat in seats if seat.part.step == step]
            if step == LIMIT_STEP:
                acting += [seat.act_late() for seat in seats if seat.part.ending == "late"]
            await asyncio.gather(*acting)
            due = {s.player_id for s in seats if s.expected and s.expected[1] <= step}
            await games_ended(match, due, f"the games due by step {step} end")
            finished = [e.player_id for e in events_called(match, PlayerFinished)]
            assert sorted(finished) == sorted(due), f"step {step}"
            if len(due) == len(seats):
                break
            # The match's one timer is set before the clock moves on.
            await timer_set(clock, 1)
            assert step < LIMIT_STEP, "the time limit passed and games are still running"
            step += 1
            clock.advance(STEP_S)
        await until(lambda: bool(events_called(match, MatchEnded)), "the match ends")
        await timer_set(clock, 0)  # nothing is due once the match has ended
        clock.advance(10 * LIMIT_STEP * STEP_S)
        for _ in range(10):
            await asyncio.sleep(0)
        await check_the_end(store, match, race, seats)
    finally:
        await match.close()
        await journal.close()


async def check_the_end(
    store: Store, match: LiveMatch, race: Race, seats: list[Seating]
) -> None:
    """One end per game and one for the match; every stored result complete, as the
    stored actions replay, ranked by gaps.ranking; the replay document verifies."""
    finished = [event.player_id for event in events_called(match, PlayerFinished)]
    assert sorted(finished) == sorted(seat.player_id for seat in seats)
    [ended] = events_called(match, MatchEnded)
    assert match.status == "finished"
    stored = await store.matches.replay(match.code)
    assert stored is not None and stored["match"]["status"] == "finished"
    results = {row["player_id"]: row for row in stored["players"]}
    assert sorted(results) == sorted(seat.player_id for seat in seats)
    for seat in seats:
        row = results[seat.player_id]
        assert seat.expected is not None
        reasons, step = seat.expected
        assert row["end_reason"] in reasons, (seat.part, row)
        assert row["finish_ms"] == step * STEP_S * 1000, (seat.part, row)
        actions = [a["action"] for a in stored["actions"] if a["player_id"] == seat.player_id]
        assert actions == seat.sent
        replayed = replay(race.seed, race.ruleset, actions)
        game = replayed.game
        assert replayed.ok
        assert (row["score"], row["placed"], row["moves"], row["redeals"], row["won"]) == (
            game.score,
            game.placed,
            game.moves_made,
            game.redeals_used,
            game.is_won(),
        )
    finishes = [
        Finish(pid, row["won"], row["score"], row["finish_ms"], row["score_ms"])
        for pid, row in results.items()
    ]
    ranks = {finish.player_id: position for position, finish in rank(finishes, race.win_by)}
    assert {pid: row["rank"] for pid, row in results.items()} == ranks
    assert {row.player_id: row.rank for row in ended.ranking} == ranks
    report = verify(replay_document(stored))
    assert report.discrepancies == []


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(race=races())
async def test_however_and_whenever_the_games_end_every_result_is_stored_whole(
    migrated_engine: AsyncEngine, race: Race
) -> None:
    await race_to_the_end(Store(migrated_engine), race)


# -- the actor, on a fake clock and a database that fails when told -------------------------


class Outage(OSError):
    """The database cannot be reached (an outage: retried where retries are due)."""


class FlakyStore(Store):
    """A store whose match writes (results, ends, ready flags) fail while ``down``."""

    down = False

    def __init__(self, database: Any) -> None:
        super().__init__(database)
        self.matches = _FlakyMatches(self.database, self)
        self.results = _FlakyResults(self.database, self)

    def check(self) -> None:
        if self.down:
            raise Outage("the database is down")


class _FlakyMatches(Matches):
    def __init__(self, database: Any, store: FlakyStore) -> None:
        super().__init__(database)
        self._store = store

    async def save_result(self, match_id: int, player_id: int, **result: Any) -> None:
        self._store.check()
        await super().save_result(match_id, player_id, **result)

    async def set_ready(self, match_id: int, player_id: int, ready: bool) -> None:
        self._store.check()
        await super().set_ready(match_id, player_id, ready)


class _FlakyResults(Results):
    def __init__(self, database: Any, store: FlakyStore) -> None:
        super().__init__(database)
        self._store = store

    async def finish_match(self, *args: Any, **kwargs: Any) -> Any:
        self._store.check()
        return await super().finish_match(*args, **kwargs)


class GatedJournal(Journal):
    """A journal whose appends wait for ``gate`` and fail while ``down``."""

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine)
        self.gate = asyncio.Event()
        self.gate.set()
        self.down = False

    async def append(self, row: dict[str, Any]) -> None:
        await self.gate.wait()
        if self.down:
            raise Outage("the database is down")
        await super().append(row)
        if self.lose_answer:  # stored, but its writer is not told (the database stalled)
            self.lose_answer = False
            raise Outage("the answer was lost")

    lose_answer = False


@dataclass
class Actor:
    match: LiveMatch
    store: FlakyStore
    journal: GatedJournal
    clock: FakeClock
    players: list[int]


@pytest.fixture
async def actor(migrated_engine: AsyncEngine) -> Any:
    store = FlakyStore(migrated_engine)
    journal = GatedJournal(migrated_engine)
    journal.start()
    clock = FakeClock()
    people = [await new_player(store, f"act{next(NAMES)}") for _ in range(2)]
    match = await clocked_match(
        store, journal, LocalBroker(), clock, people, ruleset="classic", seed=Seed.generate(),
        win_by="score", time_limit_s=60, grace_s=20,
    )
    await match.start()
    await until(lambda: match.status == "running", "the deal")
    yield Actor(match, store, journal, clock, [p.id for p in people])
    store.down = journal.down = False
    journal.gate.set()
    await match.shutdown()
    await journal.close()


def first_move(match: LiveMatch, player_id: int) -> Action:
    seat = match.state.seat(player_id)
    assert seat is not None and seat.game is not None
    return seat.game.legal_moves()[0]


async def test_an_action_is_answered_and_said_only_once_stored(actor: Actor) -> None:
    match, ana = actor.match, actor.players[0]
    actor.journal.gate.clear()
    playing = asyncio.create_task(match.play(ana, 1, first_move(match, ana)))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not playing.done() and events_called(match, ProgressMade) == []
    assert match.state.seat(ana).last_seq == 0  # type: ignore[union-attr]
    actor.journal.gate.set()
    ack = await playing
    assert ack.seq == 1 and len(events_called(match, ProgressMade)) == 1
    assert match.state.seat(ana).last_seq == 1  # type: ignore[union-attr]


async def test_an_action_not_stored_is_refused_and_changes_nothing(actor: Actor) -> None:
    match, ana = actor.match, actor.players[0]
    before = match.state
    actor.journal.down = True
    with pytest.raises(ServerError) as refused:
        await match.play(ana, 1, first_move(match, ana))
    assert refused.value.code == "storage_unavailable"
    assert "not applied" in refused.value.message
    assert match.state is before and events_called(match, ProgressMade) == []
    actor.journal.down = False
    assert (await match.play(ana, 1, first_move(match, ana))).seq == 1  # sent again


async def test_an_action_stored_though_its_answer_was_lost_is_applied_once_when_sent_again(
    actor: Actor,
) -> None:
    match, ana = actor.match, actor.players[0]
    move = first_move(match, ana)
    actor.journal.lose_answer = True
    with pytest.raises(ServerError) as refused:
        await match.play(ana, 1, move)
    assert refused.value.code == "storage_unavailable"
    assert match.state.seat(ana).last_seq == 0  # type: ignore[union-attr]
    again = await match.play(ana, 1, move)  # the journal holds it: read again, then a resend
    assert again.seq == 1 and again.duplicate is True and again.action == str(move)
    assert match.state.seat(ana).last_seq == 1  # type: ignore[union-attr]
    after = await match.play(ana, 2, Stop())
    assert after.seq == 2 and after.duplicate is msgspec.UNSET


async def test_a_time_limit_passing_during_an_outage_ends_every_game_once_the_database_is_back(
    actor: Actor,
) -> None:
    match, clock, store = actor.match, actor.clock, actor.store
    await match.disconnect(actor.players[1])  # a grace period ending within the outage too
    store.down = True
    clock.advance(61)
    for _ in range(5):  # the retries, ever later, while the database is down
        await until(lambda: clock.wakeups() == 1, "a retry is set")
        clock.advance(2)
    assert events_called(match, PlayerFinished) == [] and match.status == "running"
    # Asked meanwhile, the match shows its state as stored.
    assert (await match.snapshot(None)).match.status == "running"
    store.down = False
    clock.advance(2)
    await games_ended(match, set(actor.players), "every game ends once stored")
    finished = events_called(match, PlayerFinished)
    assert [(e.end_reason, e.finish_ms) for e in finished] == [
        ("disconnected", 20_000),
        ("time", 60_000),
    ]
    await until(lambda: bool(events_called(match, MatchEnded)), "the match ends")
    stored_match = await store.matches.replay(match.code)
    assert stored_match is not None and stored_match["match"]["status"] == "finished"
    assert verify(replay_document(stored_match)).discrepancies == []


async def test_a_refused_ready_leaves_the_lobby_as_it_was(migrated_engine: AsyncEngine) -> None:
    store = FlakyStore(migrated_engine)
    lobby = new_lobby(store, LocalBroker(), FakeClock())
    try:
        ana = await new_player(store, "ana")
        match = await hosted(lobby, ana)
        before = match.state
        store.down = True
        with pytest.raises(ServerError) as refused:
            await match.set_ready(ana.id, True)
        assert refused.value.code == "storage_unavailable"
        assert match.state is before and events_called(match, ReadyChanged) == []
    finally:
        await lobby.close()


async def test_a_shutdown_answers_what_is_queued_and_refuses_what_comes_later(
    actor: Actor,
) -> None:
    match, ana, bob = actor.match, actor.players[0], actor.players[1]
    actor.journal.gate.clear()
    queued = [
        asyncio.create_task(match.play(ana, 1, first_move(match, ana))),
        asyncio.create_task(match.play(bob, 1, first_move(match, bob))),
    ]
    await asyncio.sleep(0)
    stopping = asyncio.create_task(match.shutdown())
    await asyncio.sleep(0)
    with pytest.raises(ServerError) as refused:
        await match.play(ana, 2, Stop())
    assert refused.value.code == "shutting_down" and match.code in refused.value.message
    actor.journal.gate.set()
    acks = await asyncio.gather(*queued)
    await stopping
    assert [ack.seq for ack in acks] == [1, 1]
    assert actor.clock.wakeups() == 0  # its timer is off
    # Nothing was ended: the next start restores the match as it is.
    assert match.status == "running" and events_called(match, PlayerFinished) == []
