"""Bots race through the real protocol: `gaps bot` joins, plays whole matches to the end,
and keeps its bot players' tokens in the config to reuse them."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from client_cli import http
from client_cli.bot import (
    BotPlayer,
    Cut,
    MatchGone,
    News,
    RoundToPlay,
    think_time,
    together,
    tournament_news,
)
from client_cli.cli import run_async
from client_cli.config import Account
from client_cli.connection import ClientError, Connection, ConnectionNotice
from client_cli.tables import Outcome
from client_cli.verify import verify
from gaps import Game, Move, Seed
from gaps.bots import bot_for_level
from gaps.move import REDEAL, STOP
from gaps_protocol.messages import MatchEvent
from gaps_protocol.messages.events import ReadyChanged, Started
from gaps_protocol.messages.replies import Tournament
from gaps_protocol.messages.views import StandingsRow
from server.app import Server
from server.config import Settings
from tests.cli_support import ME, Hostile, lobby, typed

pytestmark = pytest.mark.usefixtures("config_dir")


def test_bots_think_like_people_unless_told_not_to() -> None:
    rng = random.Random(1)
    move = Move.parse("8C")
    assert think_time(move, 0, rng) == 0
    assert all(0.5 <= think_time(move, 1.0, rng) <= 1.5 for _ in range(100))
    assert all(1.25 <= think_time(action, 1.0, rng) <= 3.75
               for action in (REDEAL, STOP) for _ in range(100))


async def host_a_match(
    url: str, seats: int, *, bots: bool = True
) -> tuple[Connection, str, list[dict[str, Any]]]:
    """ana creates a match (letting bots sit, unless told not to); returns her
    connection, its code and the events she gets."""
    ana = await Connection.open(url)
    await ana.register(f"ana-{random.randrange(10**6)}")
    events: list[MatchEvent] = []
    ana.add_listener(lambda message: isinstance(message, MatchEvent) and events.append(message))
    created = await ana.create_match(max_players=seats, countdown_s=0, bots=bots)
    return ana, created.match.code, events


async def wait_for(found: Any, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not found():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def race_bots(url: str, count: int, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """Bots join ana's match and play it to the end while ana stops at once."""
    ana, code, events = await host_a_match(url, count + 1)
    try:
        bots = asyncio.create_task(run_async(
            ["bot", "--join", code, "--count", str(count), "--level", "2", "--pace", "0",
             "--server", url]))
        await wait_for(lambda: sum(isinstance(e, ReadyChanged) for e in events) == count)
        await ana.ready(code)
        await wait_for(lambda: any(isinstance(e, Started) for e in events))
        await ana.act(code, "stop")
        assert await asyncio.wait_for(bots, 30) == 0
    finally:
        await ana.close()
    return code, capsys.readouterr().out


async def test_bots_play_a_whole_match_to_the_end_and_are_reused(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    code, out = await race_bots(ws_url, 2, capsys)
    assert out.count("registered a new bot player") == 2
    assert out.count(f"joined {code} and is ready") == 2
    assert out.count(" finished: ") == 2
    assert f"Match {code}: final ranking" in out
    saved = json.loads((config_dir / "config.json").read_text())["bots"][ws_url]
    names = [bot["name"] for bot in saved]
    assert len(names) == 2 and all(name.startswith("bot-") and len(name) == 8 for name in names)

    document = await http.replay(ws_url, code)  # every bot action replays exactly
    report = verify(document)
    assert report.holds, report.discrepancies
    bots = [player for player in document["players"] if player["name"] in names]
    assert len(bots) == 2 and all(player["actions"] for player in bots)
    assert all(player["end_reason"] in ("stopped", "lost", "won") for player in bots)

    code, out = await race_bots(ws_url, 1, capsys)  # the next time, a saved bot comes back
    assert "registered a new bot player" not in out
    assert f"{names[0]} (level 2) joined {code}" in out
    assert all(player["bot"] for player in bots)  # declared bots, shown as such
    rating = await http.rating(ws_url, names[0])
    assert rating.player.bot is True


async def test_a_bot_is_refused_a_seat_where_the_host_lets_no_bot_sit(
    ws_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ana, code, _ = await host_a_match(ws_url, 2, bots=False)
    try:
        assert await run_async(
            ["bot", "--join", code, "--pace", "0", "--server", ws_url]
        ) == 1
    finally:
        await ana.close()
    assert f"the host of match {code} lets no bot sit" in capsys.readouterr().err


async def test_a_saved_bot_registered_as_a_person_is_replaced_by_a_declared_bot(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    person = await Connection.open(ws_url)
    reply = await person.register(f"bot-p{random.randrange(10**4)}")
    await person.close()
    config_dir.mkdir(parents=True)
    (config_dir / "config.json").write_text(json.dumps({"bots": {ws_url: [
        {"name": reply.player.name, "token": reply.token, "player_id": reply.player.id}]}}))
    code, out = await race_bots(ws_url, 1, capsys)
    assert "registered as a person, not a bot; making a declared bot" in out
    assert "registered a new bot player" in out and f"Match {code}: final ranking" in out
    saved = json.loads((config_dir / "config.json").read_text())["bots"][ws_url]
    assert [bot["name"] for bot in saved] != [reply.player.name]


async def test_a_forgotten_bot_is_replaced_and_a_wrong_code_is_a_clear_error(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    config_dir.mkdir(parents=True)
    (config_dir / "config.json").write_text(json.dumps({"bots": {ws_url: [
        {"name": "bot-dead", "token": "not-a-token", "player_id": 99}]}}))
    code, out = await race_bots(ws_url, 1, capsys)
    assert "bot-dead: the server no longer knows this bot; making a new one" in out
    assert "registered a new bot player" in out and f"Match {code}: final ranking" in out
    saved = json.loads((config_dir / "config.json").read_text())["bots"][ws_url]
    assert len(saved) == 1 and saved[0]["name"] != "bot-dead"
    assert await run_async(["bot", "--join", "ZZZZZZ", "--pace", "0", "--server", ws_url]) == 1
    assert "no live match has code 'ZZZZZZ'" in capsys.readouterr().err


def snapshot(seq: int, standings: list[Any] | None = None, **view: Any) -> Tournament:
    """A resync's snapshot of tournament Q4M2ZK."""
    return typed(Tournament, id=None, seq=seq, tournament={"code": "Q4M2ZK", **view},
                 **({} if standings is None else {"standings": standings}))


def test_a_tournament_snapshot_tells_the_bots_the_round_to_play_or_the_end() -> None:
    queue: asyncio.Queue[News] = asyncio.Queue()
    listen = tournament_news("Q4M2ZK", queue)
    listen(snapshot(9, [], status="running", current_round=2, round_match="M2"))
    assert queue.get_nowait() == RoundToPlay(2, "M2")
    rows = [typed(StandingsRow, rank=1, player_id=1, name="bot1"),
            typed(StandingsRow, rank=2, player_id=2, name="bot2")]
    listen(snapshot(30, rows, status="finished", current_round=3, round_match=None))
    assert queue.get_nowait() == Outcome(rows, rows)
    listen(snapshot(1, None, code="OTHER", status="finished", current_round=3))
    assert queue.empty()


def test_a_tournament_gone_after_a_reconnect_fails_its_bots_and_a_round_gone_does_not() -> None:
    queue: asyncio.Queue[News] = asyncio.Queue()
    listen = tournament_news("Q4M2ZK", queue)
    listen(ConnectionNotice("gone", "cannot rejoin match M2: no live match has code 'M2'",
                            match="M2"))
    listen(ConnectionNotice("gone", "cannot follow tournament OTHER again", tournament="OTHER"))
    assert queue.empty()  # a round's match gone: the bot playing it says so, and goes on
    why = "cannot follow tournament Q4M2ZK again: no tournament has code 'Q4M2ZK'"
    listen(ConnectionNotice("gone", why, tournament="Q4M2ZK"))
    assert queue.get_nowait() == Cut(why)


async def test_bots_together_stop_when_one_fails() -> None:
    cancelled: list[str] = []

    async def waits() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("waiting bot")
            raise
        return "never"

    async def fails() -> str:
        raise ClientError("bot-ab12: match K7QX2M is gone")

    with pytest.raises(ClientError, match="is gone"):
        await asyncio.wait_for(together([waits(), fails()]), 5)
    assert cancelled == ["waiting bot"]
    assert await together([asyncio.sleep(0, "a"), asyncio.sleep(0, "b")]) == ["a", "b"]


def running(code: str) -> dict[str, Any]:
    """A ``joined`` snapshot of a running match where ME (the bot here) plays a deal."""
    game = Game(Seed.parse("AAAA-BBBB-CCCC-DDDD"), "classic")
    snapshot = lobby(code, status="running", started_at="2026-01-01T00:00:00.000Z", t_ms=0)
    snapshot["players"][0] |= {"status": "playing", "moves_made": 0, "finished": False}
    snapshot["you"] = {"role": "player", "last_seq": 0, "game": {
        "grid": game.layout().splitlines(), "score": 0, "placed": 0, "redeals_used": 0,
        "redeals_left": 2, "moves_made": 0, "status": "playing", "can_undo": False}}
    return snapshot


def a_bot(connection: Connection, code: str, said: list[str]) -> BotPlayer:
    return BotPlayer(connection, Account("bot-ab12", "t" * 43, ME["id"]), code,
                     bot_for_level(2, seed=1), pace_s=0, rng=random.Random(1),
                     report=said.append, level=2)


async def test_a_bot_refused_for_now_past_its_retries_fails_and_does_not_stop_its_game() -> None:
    refusal = {"type": "error", "code": "storage_unavailable", "message": "database down"}
    async with Hostile({"join_match": [running("K7QX2M")], "action": [refusal]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=0.3)
        said: list[str] = []
        player = a_bot(connection, "K7QX2M", said)
        try:
            await player.join(ready=False)
            with pytest.raises(ClientError) as failed:
                await asyncio.wait_for(player.play(), 10)
            assert not isinstance(failed.value, MatchGone)
            assert str(failed.value).startswith("bot-ab12: the server could not take ")
            assert str(failed.value).endswith(
                " in match K7QX2M for 0.3 s (database down); the game ends after the "
                "server's grace period")
            actions = {request["action"] for request in hostile.sent("action")}
            assert len(actions) == 1 and "stop" not in actions  # the same action, again
            assert not [line for line in said if "stopping" in line]
        finally:
            await connection.close()


async def test_a_bot_whose_match_is_not_taken_back_after_a_restart_raises_match_gone() -> None:
    async with Hostile({"join_match": [lobby("K7QX2M")]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=10)
        player = a_bot(connection, "K7QX2M", [])
        try:
            await player.join(ready=False)  # in the lobby: the bot waits
            playing = asyncio.create_task(player.play())
            hostile.answers["join_match"] = [{"type": "error", "code": "no_such_match",
                                              "message": "no live match has code 'K7QX2M'"}]
            await hostile.drop(1001)
            with pytest.raises(MatchGone) as gone:
                await asyncio.wait_for(playing, 10)
            assert str(gone.value) == ("bot-ab12: match K7QX2M is gone: cannot rejoin match "
                                       "K7QX2M: no live match has code 'K7QX2M'")
        finally:
            await connection.close()


async def test_bots_in_the_quick_match_queue_race_each_other_when_the_server_lets_them(
    settings: Settings, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    server = Server(replace(settings, quick_match_bots=True))
    await server.start()
    try:
        url = f"ws://127.0.0.1:{server.port}"
        command = ["bot", "--quick", "classic", "--count", "2", "--pace", "0", "--server", url]
        assert await run_async(command) == 0
        out = capsys.readouterr().out
        assert out.count("waits for a classic quick match") == 2
        assert out.count(" finished: ") == 2 and ": final ranking" in out
    finally:
        await server.close()


async def test_a_bot_sent_to_a_quick_match_that_keeps_bots_out_is_told_so(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    command = ["bot", "--quick", "classic", "--pace", "0", "--server", ws_url]
    assert await run_async(command) == 1
    assert "bot" in capsys.readouterr().err
