"""A restart, even kill -9, loses no match: lobby and running matches (tournament rounds
too) come back from the database, with every acknowledged action, on each backend. The
server runs as a process of its own here, so that it can be killed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from client_cli.verify import verify
from gaps import Game
from server.storage.database import Database
from server.storage.database import database_url as sqlalchemy_url
from server.storage.models import Player
from tests.client import Client, http_get
from tests.races import LONG_FIRST_MOVES
from tests.server_process import ServerProcess, back, rejoined

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends

#: Tournament rounds without a countdown and with a short break between them.
TOURNAMENT_AT_ONCE = ("--tournament-countdown-s", "0", "--tournament-break-s", "0.1")

#: test_cluster's leases: on PostgreSQL a process killed with -9 holds its leases until
#: they run out, and the restarted process waits for that (``rejoined``); the default
#: 4 s + 1 s made each restart here wait about 5 s.
SHORT_LEASES = ("--lease-s", "2", "--lease-renew-s", "0.5")


@pytest.fixture
async def server_process(database_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    process = ServerProcess(database_url, tmp_path, args=(*TOURNAMENT_AT_ONCE, *SHORT_LEASES))
    process.start()
    yield process
    await process.stop()


async def play_until_killed(
    client: Client, code: str, game: Game, acknowledged: list[tuple[int, str]], *,
    kill_after: int,
    kill: Callable[[], None],
) -> None:
    """Legal moves, one after the other as fast as they are acknowledged; the server is
    killed after ``kill_after`` of them, while the next is on its way."""
    while True:
        moves = game.legal_moves()
        if not moves:  # a deal that blocks this early: killed with nothing in flight
            kill()
            return
        move = moves[0]
        seq = client.seq.get(code, 0) + 1
        if len(acknowledged) == kill_after:
            await client.connection.send(
                json.dumps({"type": "action", "id": "last", "code": code, "seq": seq,
                            "action": str(move)})
            )
            kill()
            return
        reply = await client.act(code, str(move), seq=seq)
        assert reply["type"] == "action_ok", reply
        acknowledged.append((seq, str(move)))
        game.push(move)


async def test_a_running_match_survives_kill_9_with_every_acknowledged_action(
    server_process: ServerProcess,
) -> None:
    ana, bob = await Client.connect(server_process.url), await Client.connect(server_process.url)
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2, countdown_s=0,
                         seed=str(LONG_FIRST_MOVES)))["match"]["code"]
    await bob.ok("join_match", code=code)
    await ana.ok("ready", code=code)
    await bob.ok("ready", code=code)
    started = await ana.event("started", match=code)
    game = Game.from_layout("\n".join(started["grid"]))
    await bob.act(code, "stop")
    acknowledged: list[tuple[int, str]] = []
    await play_until_killed(
        ana, code, game, acknowledged, kill_after=8, kill=server_process.kill
    )
    tokens = [ana.token, bob.token]
    assert None not in tokens and len(acknowledged) == 8
    for client in (ana, bob):
        await client.close()

    server_process.start()
    ana = await back(server_process, str(tokens[0]))
    joined = await rejoined(ana, code)
    you = joined["you"]
    # Every acknowledged action is there; the one in flight at the kill may be too.
    assert you["last_seq"] in (8, 9)
    assert joined["match"]["status"] == "running"
    assert you["game"]["moves_made"] == you["last_seq"]
    # Events are numbered anew: a resync from a seq of the old process gets a snapshot.
    resynced = await ana.ok("resync", code=code, since=40)
    assert resynced["type"] == "snapshot" and resynced["you"]["last_seq"] == you["last_seq"]
    # The last acknowledged action, sent again, gets its original reply.
    last_seq, last_action = acknowledged[-1]
    again = await ana.act(code, last_action, seq=last_seq)
    assert again.get("duplicate") is True and again["seq"] == 8
    ana.seq[code] = you["last_seq"]
    players = {p["name"]: p for p in joined["players"]}
    assert players["bob"]["status"] == "stopped" and players["bob"]["finished"]
    assert (await ana.act(code, "stop"))["type"] == "action_ok"
    ended = await ana.event("match_ended", match=code)
    assert [row["name"] for row in ended["ranking"]] and len(ended["ranking"]) == 2
    report = verify(server_process.replay(code))
    assert report.holds, report.discrepancies
    ana_check = next(p for p in report.players if p.name == "ana")
    assert ana_check.actions == you["last_seq"] + 1
    await ana.close()


async def test_a_lobby_survives_kill_9_with_its_seats_and_ready_flags(
    server_process: ServerProcess,
) -> None:
    ana, bob = await Client.connect(server_process.url), await Client.connect(server_process.url)
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2, countdown_s=0, public=True))["match"][
        "code"
    ]
    await bob.ok("join_match", code=code)
    await ana.ok("ready", code=code)
    tokens = [str(ana.token), str(bob.token)]
    server_process.kill()
    for client in (ana, bob):
        await client.close()

    server_process.start()
    ana, bob = [await back(server_process, token) for token in tokens]
    listed = await ana.ok("list_matches")
    assert [m["code"] for m in listed["matches"]] == []  # full: not open
    joined = await rejoined(bob, code)
    assert [(p["name"], p["ready"]) for p in joined["players"]] == [("ana", True), ("bob", False)]
    assert joined["match"]["host_id"] == joined["players"][0]["player_id"]
    await ana.ok("join_match", code=code)
    await bob.ok("ready", code=code)
    await ana.event("started", match=code)
    for client in (ana, bob):
        await client.act(code, "stop")
    await ana.event("match_ended", match=code)
    report = verify(server_process.replay(code))
    assert report.holds, report.discrepancies
    for client in (ana, bob):
        await client.close()


async def test_a_countdown_cut_short_counts_down_again_after_a_restart(
    server_process: ServerProcess,
) -> None:
    ana = await Client.connect(server_process.url)
    await ana.register("ana")
    code = (await ana.ok("create_match", max_players=1, countdown_s=60))["match"]["code"]
    await ana.ok("ready", code=code)
    await ana.event("countdown", match=code)
    token = str(ana.token)
    server_process.kill()
    await ana.close()

    server_process.start()
    ana = await back(server_process, token)
    joined = await rejoined(ana, code)
    assert joined["match"]["status"] == "countdown"
    await ana.close()


async def finished_replay(server: ServerProcess, code: str) -> dict[str, Any]:
    """The replay of match ``code`` once its end is stored (409 until then)."""
    async with asyncio.timeout(15):
        while True:
            status, body = await http_get(server.port, f"/matches/{code}/replay")
            if status == 200:
                return body
            assert status == 409, (status, body)
            await asyncio.sleep(0.05)


async def test_a_time_limit_passed_while_the_server_was_down_ends_the_games_at_restore(
    server_process: ServerProcess,
) -> None:
    ana = await Client.connect(server_process.url)
    await ana.register("ana")
    code = (
        await ana.ok("create_match", max_players=1, countdown_s=0, time_limit_s=1)
    )["match"]["code"]
    await ana.ok("ready", code=code)
    await ana.event("started", match=code)
    token = str(ana.token)
    server_process.kill()
    await ana.close()
    await asyncio.sleep(1.2)  # the server is down: nothing to wait on but the time

    server_process.start()
    ana = await back(server_process, token)
    try:
        joined = await rejoined(ana, code)
    except AssertionError as over:  # ended at its restore before ana came back
        assert "'match_finished'" in str(over)
    else:
        if joined["match"]["status"] != "finished":
            await ana.event("match_ended", match=code)
    document = await finished_replay(server_process, code)
    assert document["players"][0]["end_reason"] == "time"
    assert document["players"][0]["finish_ms"] == 1000
    report = verify(document)
    assert report.holds, report.discrepancies
    await ana.close()


async def registered_yesterday(server: ServerProcess, name: str) -> None:
    """Move ``name``'s registration a day back: only accounts registered before the day
    began are ranked on its daily board, and a server process's clock is the real one."""
    database = Database(sqlalchemy_url(server.database_url, data_dir=server.data_dir))
    try:
        async with database.write() as connection:
            at = (
                await connection.execute(select(Player.created_at).where(Player.name == name))
            ).scalar_one()
            await connection.execute(
                update(Player).where(Player.name == name).values(created_at=at - timedelta(1))
            )
    finally:
        await database.dispose()


async def test_a_daily_challenge_survives_kill_9(server_process: ServerProcess) -> None:
    ana = await Client.connect(server_process.url)
    await ana.register("ana")
    await registered_yesterday(server_process, "ana")
    started = await ana.ok("daily", ruleset="classic")
    code = started["match"]["code"]
    dealt = await ana.event("started", match=code)
    game = Game.from_layout("\n".join(dealt["grid"]))
    move = game.legal_moves()[0]
    assert (await ana.act(code, str(move)))["type"] == "action_ok"
    token = str(ana.token)
    server_process.kill()
    await ana.close()

    server_process.start()
    ana = await back(server_process, token)
    joined = await rejoined(ana, code)
    assert joined["match"]["kind"] == "daily" and joined["you"]["last_seq"] == 1
    assert (await ana.request("daily", ruleset="classic"))["code"] == "daily_already_played"
    ana.seq[code] = 1
    assert (await ana.act(code, "stop"))["type"] == "action_ok"
    await ana.event("match_ended", match=code)
    board = await ana.ok("daily_board", ruleset="classic")
    assert [entry["name"] for entry in board["entries"]] == ["ana"]
    await ana.close()


async def dealt(client: Client, code: str) -> list[str]:
    """Join a tournament round's match ``code`` and wait for its deal: the grid. (Its
    countdown is 0: it may have been dealt before the player joined.)"""
    joined = await client.ok("join_match", code=code)
    if "game" in joined["you"]:
        grid: list[str] = joined["you"]["game"]["grid"]
        return grid
    started = await client.event("started", match=code)
    return list(started["grid"])


def standings_of_replays(documents: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The standings a tournament whose rounds are these stored matches gives, with no
    restart: (rank, name, total score, total time, rounds), by score, then time."""
    totals: dict[str, tuple[int, int, int]] = {}
    for document in documents:
        for player in document["players"]:
            score, time_ms, rounds = totals.get(player["name"], (0, 0, 0))
            totals[player["name"]] = (
                score + player["score"], time_ms + (player["finish_ms"] or 0), rounds + 1
            )
    ordered = sorted(totals.items(), key=lambda item: (-item[1][0], item[1][1], item[0]))
    table: list[tuple[Any, ...]] = []
    for position, (name, (score, time_ms, rounds)) in enumerate(ordered, start=1):
        tied = table and table[-1][2:4] == (score, time_ms)
        table.append((table[-1][0] if tied else position, name, score, time_ms, rounds))
    return table


async def test_a_tournament_round_survives_kill_9_and_the_tournament_finishes(
    server_process: ServerProcess,
) -> None:
    ana, bob = await Client.connect(server_process.url), await Client.connect(server_process.url)
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("tournament_create", rounds=2, max_players=2))["tournament"]["code"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    await ana.ok("tournament_start", code=code)
    cut = (await ana.event("round_starting", round=1))["match"]
    grid = [await dealt(client, cut) for client in (ana, bob)][0]
    game = Game.from_layout("\n".join(grid))
    acknowledged: list[tuple[int, str]] = []
    await play_until_killed(ana, cut, game, acknowledged, kill_after=6, kill=server_process.kill)
    tokens = [str(ana.token), str(bob.token)]
    for client in (ana, bob):
        await client.close()

    server_process.start()
    ana, bob = [await back(server_process, token) for token in tokens]
    view = (await ana.ok("tournament_join", code=code))["tournament"]
    assert (view["status"], view["current_round"], view["round_match"]) == ("running", 1, cut)
    await bob.ok("tournament_join", code=code)
    joined = await rejoined(ana, cut)
    played = len(acknowledged)  # 6, unless the deal blocked before
    assert joined["you"]["last_seq"] in (played, played + 1)  # the one in flight may count
    assert joined["you"]["game"]["moves_made"] == joined["you"]["last_seq"]
    bobs = await rejoined(bob, cut)
    assert bobs["you"]["game"]["grid"] == grid  # the same deal, unplayed
    ana.seq[cut] = joined["you"]["last_seq"]
    for client in (ana, bob):
        assert (await client.act(cut, "stop"))["type"] == "action_ok"
    ended = await ana.event("round_ended", round=1)
    assert ended["match"] == cut and [row["rounds_played"] for row in ended["standings"]] == [1, 1]
    second = (await bob.event("round_starting", round=2))["match"]
    for client in (ana, bob):
        await dealt(client, second)
    for client in (ana, bob):
        assert (await client.act(second, "stop"))["type"] == "action_ok"
    final = await bob.event("tournament_ended")
    documents = [server_process.replay(match) for match in (cut, second)]
    for document in documents:
        report = verify(document)
        assert report.holds, report.discrepancies
    table = [
        (row["rank"], row["name"], row["total_score"], row["total_time_ms"], row["rounds_played"])
        for row in final["standings"]
    ]
    assert table == standings_of_replays(documents)
    served = await ana.ok("tournament_standings", code=code)
    assert served["standings"] == final["standings"]
    assert served["tournament"]["status"] == "finished"
    for client in (ana, bob):
        await client.close()
