"""The clients run on the one client session (``gaps_protocol.ClientSession``), end to end
against a live server: `gaps bot`, the load benchmark's players and the test client each
play whole matches through it."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.players import Player, Tally, open_client, race
from client_cli.cli import run_async
from client_cli.connection import Connection
from gaps_protocol import ClientSession
from tests.client import Client

#: How long the load benchmark's players race: long enough for a 2-player match flat out.
RACE_S = 20.0


@pytest.fixture
def frames_read() -> Iterator[Counter[int]]:
    """Each session's frames read, by the session's id: what the sessions carried."""
    counts: Counter[int] = Counter()
    receive = ClientSession.receive

    def counted(session: ClientSession, frame: str | bytes, now: float) -> None:
        counts[id(session)] += 1
        receive(session, frame, now)

    ClientSession.receive = counted  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        ClientSession.receive = receive  # type: ignore[method-assign]


async def test_gaps_bot_plays_a_whole_match_through_the_session(
    ws_url: str, config_dir: Path, capsys: pytest.CaptureFixture[str],
    frames_read: Counter[int],
) -> None:
    host = await Client.connect(ws_url)
    await host.register(f"ana-{random.randrange(10**6)}")
    created = await host.ok("create_match", max_players=3, countdown_s=0, bots=True)
    code = created["match"]["code"]
    sessions_before = set(frames_read)
    bots = asyncio.create_task(run_async(
        ["bot", "--join", code, "--count", "2", "--level", "2", "--pace", "0",
         "--server", ws_url]))
    async with asyncio.timeout(30):
        while sum(event["event"] == "ready" for event in host.events) < 2:
            await asyncio.sleep(0.01)
    await host.ok("ready", code=code, ready=True)
    await host.event("started", match=code)
    assert (await host.act(code, "stop"))["type"] == "action_ok"
    assert await asyncio.wait_for(bots, 60) == 0
    await host.event("match_ended", match=code)
    await host.close()
    out = capsys.readouterr().out
    assert out.count(" finished: ") == 2 and f"Match {code}: final ranking" in out
    assert isinstance(host.session, ClientSession)
    # The host's session, and one for each bot (and the lobby's look-ups) carried frames.
    bot_sessions = set(frames_read) - sessions_before - {id(host.session)}
    assert len(bot_sessions) >= 2 and frames_read[id(host.session)] > 0
    assert Connection("ws://x").session.__class__ is ClientSession


async def test_the_load_benchmarks_players_race_whole_matches_through_the_session(
    ws_url: str, frames_read: Counter[int],
) -> None:
    tally = Tally(window_start=time.perf_counter(), window_end=time.perf_counter() + RACE_S,
                  max_actions=10**6)
    everyone: dict[int, Player] = {}
    group = [Player(await open_client(ws_url), tally, everyone) for _ in range(2)]
    for number, player in enumerate(group):
        await player.register(f"load-{number}-{random.randrange(10**6)}")
    matches_ended = asyncio.Event()

    async def until_a_match_ended() -> None:
        while not tally.matches:
            await asyncio.sleep(0.05)
        tally.window_end = time.perf_counter()  # the race stops after this match
        matches_ended.set()

    watcher = asyncio.create_task(until_a_match_ended())
    try:
        await asyncio.wait_for(race(group, ruleset="classic", pace_per_s=0, dealt=lambda: None),
                               RACE_S + 30)
    finally:
        watcher.cancel()
        for player in group:
            await player.close()
    assert matches_ended.is_set() and tally.matches >= 1, tally
    assert tally.acks > 0 and not tally.errors, tally
    assert tally.events_ms  # the opponents' progress, delivered in order by the session
    for player in group:
        assert isinstance(player.session, ClientSession)
        assert frames_read[id(player.session)] > tally.acks // 2
