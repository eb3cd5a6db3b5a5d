"""Bots race through the real protocol: `gaps bot` joins, plays whole matches to the end,
and keeps its bot players' tokens in the config to reuse them."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from client_cli import http
from client_cli.bot import think_time, tournament_news
from client_cli.cli import run_async
from client_cli.connection import Connection
from client_cli.verify import verify
from gaps import Move
from gaps.move import REDEAL, STOP

pytestmark = pytest.mark.usefixtures("config_dir")


def test_bots_think_like_people_unless_told_not_to() -> None:
    rng = random.Random(1)
    move = Move.parse("8C")
    assert think_time(move, 0, rng) == 0
    assert all(0.5 <= think_time(move, 1.0, rng) <= 1.5 for _ in range(100))
    assert all(1.25 <= think_time(action, 1.0, rng) <= 3.75
               for action in (REDEAL, STOP) for _ in range(100))


async def host_a_match(url: str, seats: int) -> tuple[Connection, str, list[dict[str, Any]]]:
    """ana creates a match; returns her connection, its code and the events she gets."""
    ana = await Connection.open(url)
    await ana.register(f"ana-{random.randrange(10**6)}")
    events: list[dict[str, Any]] = []
    ana.add_listener(lambda message: message.get("type") == "event" and events.append(message))
    created = await ana.create_match(max_players=seats, countdown_s=0)
    return ana, created["match"]["code"], events


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
        await wait_for(lambda: sum(e["event"] == "ready" for e in events) == count)
        await ana.ready(code)
        await wait_for(lambda: any(e["event"] == "started" for e in events))
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


def test_a_tournament_snapshot_tells_the_bots_the_round_to_play_or_the_end() -> None:
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    listen = tournament_news("Q4M2ZK", queue)
    running = {"code": "Q4M2ZK", "status": "running", "current_round": 2, "round_match": "M2"}
    listen({"type": "tournament", "tournament": running, "standings": [], "seq": 9})
    assert queue.get_nowait() == {"event": "round_starting", "round": 2, "match": "M2"}
    rows = [{"rank": 1, "name": "bot1"}, {"rank": 2, "name": "bot2"}]
    finished = {"code": "Q4M2ZK", "status": "finished", "current_round": 3, "round_match": None}
    listen({"type": "tournament", "tournament": finished, "standings": rows, "seq": 30})
    assert queue.get_nowait() == {"event": "tournament_ended", "standings": rows, "podium": rows}
    listen({"type": "tournament", "tournament": {**finished, "code": "OTHER"}, "seq": 1})
    assert queue.empty()
