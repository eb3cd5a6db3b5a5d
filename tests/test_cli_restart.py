"""The clients follow a server restart (docs/client.md, "When the server restarts").

The server runs in this process and is stopped and started again on the same port and
the same database, as a deploy restarts it: the connections drop ("going away"), the
clients reconnect by themselves, rejoin their matches and go on from the acknowledged
state. A match the server does not take back (marked abandoned in the database while the
server is down) is gone: its bot exits with the reason, promptly. Every wait is on
something the server or the client did, with a bound; nothing sleeps for a server timer.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from client_cli import http
from client_cli.cli import run_async
from client_cli.connection import Connection, ConnectionNotice, Listened, match_of
from client_cli.match_state import MatchState, Phase
from client_cli.screen import MatchApp, RankingScreen
from client_cli.verify import verify
from gaps import Action
from gaps.bots import GreedyBot
from gaps_protocol.messages import MatchEvent
from gaps_protocol.messages.replies import Joined, Snapshot
from server.app import Server
from server.config import Settings
from tests.cli_support import driving, gaps
from tests.conftest import GENEROUS_LIMITS

pytestmark = pytest.mark.usefixtures("config_dir")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Restartable:
    """A server in this process that stops and starts again on the same port and SQLite
    database: what a deploy (or a crash and a supervisor) does to its clients."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server: Server | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.settings.port}"

    async def start(self) -> None:
        self.server = Server(self.settings)
        await self.server.start()

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.close()
            self.server = None

    async def restart(self, *, meanwhile: Callable[[], None] | None = None) -> None:
        """Stop, do ``meanwhile`` to the stopped server's database, start again."""
        await self.stop()
        if meanwhile is not None:
            meanwhile()
        await self.start()

    def abandon(self, code: str) -> None:
        """Mark match ``code`` abandoned in the database: a restart does not take it back."""
        with sqlite3.connect(self.settings.data_dir / "gaps.sqlite3") as database:
            database.execute("UPDATE matches SET status = 'abandoned' WHERE code = ?", (code,))


@pytest.fixture
async def restartable(tmp_path: Path) -> AsyncIterator[Restartable]:
    server = Restartable(Settings(
        port=free_port(), data_dir=tmp_path, countdown_s=0, grace_s=30.0,
        tournament_countdown_s=0, tournament_break_s=0.1, quick_wait_s=0.3,
        log_level="WARNING", limits=GENEROUS_LIMITS, par_workers=0,
    ))
    await server.start()
    yield server
    await server.stop()


async def wait_for(found: Callable[[], Any], timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not found():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def player(url: str, prefix: str) -> Connection:
    connection = await Connection.open(url, reconnect_for_s=20)
    await connection.register(f"{prefix}-{random.randrange(10**6)}")
    return connection


def follow(connection: Connection, code: str, messages: list[Listened]) -> MatchState:
    """Match ``code`` as ``connection`` sees it (as the screen keeps it); every message
    of the connection goes to ``messages`` too."""
    assert connection.player is not None
    state = MatchState(code, you_id=connection.player.id)

    def listen(message: Listened) -> None:
        messages.append(message)
        if isinstance(message, ConnectionNotice) or match_of(message) == code:
            state.apply(message)

    connection.add_listener(listen, replay=code)
    return state


async def hosted(
    url: str, seats: int, *, bots: bool = False
) -> tuple[Connection, str, MatchState, list[Listened]]:
    ana = await player(url, "ana")
    created = await ana.create_match(max_players=seats, countdown_s=0, bots=bots)
    code = created.match.code
    messages: list[Listened] = []
    return ana, code, follow(ana, code, messages), messages


def events_after_the_last_snapshot(messages: list[Listened]) -> tuple[int, list[int]]:
    """The seq of the last snapshot delivered, and those of the events delivered after it."""
    last = max(i for i, m in enumerate(messages) if isinstance(m, Joined | Snapshot))
    snapshot = messages[last]
    assert isinstance(snapshot, Joined | Snapshot)
    seqs = [m.seq for m in messages[last + 1:] if isinstance(m, MatchEvent)]
    return snapshot.seq, seqs


async def test_a_race_goes_on_across_a_restart_and_every_acknowledged_action_is_kept(
    restartable: Restartable,
) -> None:
    url = restartable.url
    ana, code, state, messages = await hosted(url, 2)
    bob = await player(url, "bob")
    bob_messages: list[Listened] = []
    try:
        await bob.join_match(code)
        bob_state = follow(bob, code, bob_messages)
        await ana.ready(code)
        await bob.ready(code)
        await wait_for(lambda: state.playing and bob_state.playing)
        greedy = GreedyBot(7)
        acknowledged: dict[int, str] = {}

        async def act(chosen: Action | None = None) -> None:
            assert state.own is not None
            action = str(chosen or greedy.choose(state.own.game()))
            reply = await ana.act(code, action)
            acknowledged[reply.seq] = action
            state.apply_ack(reply)

        for _ in range(3):
            await act()
        seen_before = state.last_seq
        take_frame, lost = ana._on_frame, asyncio.Event()

        def lose_the_ack(frame: str) -> None:
            if json.loads(frame).get("type") == "action_ok" and not lost.is_set():
                lost.set()  # the server stored it; its reply goes down with the server
                return
            take_frame(frame)

        ana._on_frame = lose_the_ack  # type: ignore[method-assign]
        assert state.own is not None
        ahead = state.own.game()
        first = greedy.choose(ahead)
        ahead.push(first)
        unanswered = asyncio.create_task(act(first))
        await asyncio.wait_for(lost.wait(), 10)
        later: list[asyncio.Task[None]] = []
        # The next move is played while the server is down: it goes once it is back.
        await restartable.restart(
            meanwhile=lambda: later.append(asyncio.create_task(act(greedy.choose(ahead)))))
        await asyncio.wait_for(unanswered, 20)
        await asyncio.wait_for(later[0], 20)
        await wait_for(lambda: "connection restored: back in the match" in bob_state.log)
        assert len(acknowledged) == 5
        assert any(line.startswith("connection lost: the server is restarting")
                   for line in state.log)
        assert state.last_seq < seen_before  # numbered anew: the count follows the server
        while state.playing and len(acknowledged) < 300:
            await act()
        if state.playing:
            await act()  # a stop, after 300 actions
        await bob.act(code, "stop")
        await wait_for(lambda: state.ranking is not None and bob_state.ranking is not None)

        assert state.phase is Phase.FINISHED and state.gone is None
        for seen in (messages, bob_messages):  # each event once, in order, after the rejoin
            since, seqs = events_after_the_last_snapshot(seen)
            assert seqs == list(range(since + 1, since + 1 + len(seqs))) and seqs
        document = await http.replay(url, code)
        report = verify(document)
        assert report.holds, report.discrepancies
        assert ana.player is not None
        [mine] = [p for p in document["players"] if p["player_id"] == ana.player.id]
        assert {a["seq"]: a["action"] for a in mine["actions"]} == acknowledged
        assert state.own is not None and mine["score"] == state.own.score
    finally:
        await ana.close()
        await bob.close()


async def bots_joined(
    url: str, capsys: pytest.CaptureFixture[str],
) -> tuple[Connection, str, MatchState, asyncio.Task[int]]:
    """ana hosts a match for herself and a bot (level 2, a fast pace); the bot is playing."""
    ana, code, state, _ = await hosted(url, 2, bots=True)
    bot = asyncio.create_task(run_async(
        ["bot", "--join", code, "--level", "2", "--pace", "0.05", "--server", url]))
    await wait_for(lambda: any(p.ready for i, p in state.players.items()
                               if i != state.you_id))
    await ana.ready(code)
    await wait_for(lambda: any(p.moves_made >= 2 for i, p in state.players.items()
                               if i != state.you_id))
    capsys.readouterr()
    return ana, code, state, bot


async def test_a_bot_finishes_its_match_across_a_restart(
    restartable: Restartable, capsys: pytest.CaptureFixture[str],
) -> None:
    url = restartable.url
    ana, code, state, bot = await bots_joined(url, capsys)
    try:
        await restartable.restart()
        assert (await ana.act(code, "stop")).status == "stopped"
        assert await asyncio.wait_for(bot, 60) == 0
    finally:
        await ana.close()
    out = capsys.readouterr().out
    assert " finished: " in out and f"Match {code}: final ranking" in out
    document = await http.replay(url, code)
    report = verify(document)
    assert report.holds, report.discrepancies
    [robot] = [p for p in document["players"] if p["player_id"] != state.you_id]
    assert len(robot["actions"]) >= 2 and robot["end_reason"] in ("won", "lost", "stopped")


async def test_a_bot_whose_match_is_gone_after_a_restart_exits_at_once_saying_why(
    restartable: Restartable, capsys: pytest.CaptureFixture[str],
) -> None:
    url = restartable.url
    ana, code, state, bot = await bots_joined(url, capsys)
    try:
        await restartable.restart(meanwhile=lambda: restartable.abandon(code))
        assert await asyncio.wait_for(bot, 10) == 1
        await wait_for(lambda: state.gone is not None)
    finally:
        await ana.close()
    error = capsys.readouterr().err
    assert f"match {code} is gone: cannot rejoin match {code}: " in error
    assert f"match {code} was abandoned before its end" in error
    assert state.gone == f"match {code} is gone: cannot rejoin match {code}: " \
        f"match {code} was abandoned before its end"


async def test_gaps_join_says_its_match_is_gone_after_a_restart_and_exits_1(
    restartable: Restartable, capsys: pytest.CaptureFixture[str],
) -> None:
    url = restartable.url
    host, code, host_state, _ = await hosted(url, 2)
    opened: list[MatchApp] = []

    async def play(app: MatchApp, pilot: Pilot[Any]) -> None:
        opened.append(app)
        await pilot.press("r")  # ready
        await wait_for(lambda: app.state.playing)
        await pilot.press("s", "s")  # this game is over; the host's goes on
        await wait_for(lambda: app.state.own is not None and app.state.own.over)
        await restartable.restart(meanwhile=lambda: restartable.abandon(code))
        await wait_for(lambda: not app.is_running, timeout=10)

    try:
        assert await gaps("register", f"bob-{random.randrange(10**6)}", "--server", url) == 0
        joining = asyncio.create_task(gaps("join", code, frontend=driving(play)))
        await wait_for(lambda: len(host_state.players) == 2)
        await host.ready(code)
        assert await asyncio.wait_for(joining, 30) == 1
    finally:
        await host.close()
    error = capsys.readouterr().err
    assert f"gaps: match {code} is gone: cannot rejoin match {code}: " in error
    [app] = opened
    assert any(line.startswith("connection lost: ") for line in app.state.log)


async def test_a_tournament_round_gone_in_a_restart_is_reported_and_the_next_is_played(
    restartable: Restartable, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """ana follows her tournament on screen, a bot plays too; the server restarts without
    round 1's match: ana's screen closes, she is told, and the round dealt again (or the
    next) is played to the end of the tournament, by the bot too."""
    url = restartable.url
    screens: list[MatchApp] = []

    async def play_round(app: MatchApp, pilot: Pilot[Any]) -> None:
        screens.append(app)
        await wait_for(lambda: app.state.playing)
        if len(screens) == 1:
            await restartable.restart(meanwhile=lambda: restartable.abandon(app.state.code))
            await wait_for(lambda: not app.is_running)
            return
        await pilot.press("s", "s")
        await wait_for(lambda: not app.is_running or isinstance(app.screen, RankingScreen))
        if app.is_running:
            await pilot.press("q")

    assert await gaps("register", f"ana-{random.randrange(10**6)}", "--server", url) == 0
    hosting = asyncio.create_task(gaps(
        "tournament", "create", "--name", "Cup", "--rounds", "2", "--players", "2",
        "--round-time", "2m", "--bots", "--join", frontend=driving(play_round)))
    assert restartable.server is not None
    tournaments = restartable.server.tournaments
    await wait_for(lambda: any(t.state.entrants for t in tournaments.live.values()))
    [code] = [t.code for t in tournaments.live.values()]
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "bots"))
    bot = asyncio.create_task(gaps("bot", "--tournament", code, "--pace", "0.05",
                                   "--level", "2", "--server", url))
    await wait_for(lambda: len(tournaments.live[code].state.entrants) == 2)
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "config"))
    assert await gaps("tournament", "start", code) == 0
    assert await asyncio.wait_for(hosting, 60) == 0
    assert await asyncio.wait_for(bot, 30) == 0
    out = capsys.readouterr().out

    gone = screens[0].state.code
    assert len(screens) >= 2 and gone not in {app.state.code for app in screens[1:]}
    assert f"Round 1's match {gone} is gone (cannot rejoin match {gone}: match {gone} was " \
        "abandoned before its end); waiting for the next round." in out
    assert f"match {gone} is gone: cannot rejoin match {gone}" in out  # the bot's report
    assert "round 1 is lost, waiting for the next" in out
    assert f"Cup ({code}): final standings" in out and "Podium" in out
