"""The competition commands against a real server: leaderboards, ratings, tournaments (a
whole one, a human against a bot), the daily challenge and quick match.

Screens are driven by Textual's Pilot; every wait is on something the server or the
client has done (an event, a queue, an entrant), never a fixed sleep. A hostile server's
tournament is followed too: its names are printed and notified as typed.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._toast import Toast

from client_cli import http
from client_cli.connection import Connection, Listened
from client_cli.match_state import Phase
from client_cli.screen import MatchApp, RankingScreen
from client_cli.tables import Outcome
from client_cli.tournament import TournamentFollower
from gaps_protocol.messages import TournamentEvent
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.events import EntrantRemoved, MatchEnded, Started, event_name
from gaps_protocol.messages.replies import Tournament
from gaps_protocol.messages.views import TournamentView
from gaps_protocol.times import format_time
from server.app import Server
from tests.cli_support import (
    HOSTILE,
    ME,
    SHOWN,
    Hostile,
    Script,
    assert_inert,
    driving,
    gaps,
    lobby,
    no_screen,
    received,
    seated,
    typed,
)
from tests.fake_clock import FakeClock

pytestmark = pytest.mark.usefixtures("config_dir")


async def wait_for(found: Callable[[], Any], timeout: float = 15) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not found():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.002)


def name(prefix: str) -> str:
    return f"{prefix}-{random.randrange(10**6)}"


def lines_with(out: str, *names: str) -> list[str]:
    """The names in the order their rows come in ``out``."""
    found = [(out.index(n), n) for n in names if n in out]
    return [n for _, n in sorted(found)]


async def stop_and_see_the_ranking(app: MatchApp, pilot: Pilot[Any]) -> None:
    """Stop at once, wait for the final ranking, quit."""
    await wait_for(lambda: app.state.playing)
    await pilot.press("s", "s")
    await wait_for(lambda: isinstance(app.screen, RankingScreen))
    await pilot.press("q")


async def player(url: str, prefix: str) -> Connection:
    connection = await Connection.open(url)
    await connection.register(name(prefix))
    return connection


async def rated_match(*players: Connection) -> str:
    """A rated match (secret seed) of ``players``: each stops at once. Returns its code."""
    host = players[0]
    ended = asyncio.Event()
    started: dict[int, asyncio.Event] = {id(p): asyncio.Event() for p in players}

    def watcher(connection: Connection) -> Callable[[Listened], None]:
        def listen(message: Listened) -> None:
            if isinstance(message, Started):
                started[id(connection)].set()
            if isinstance(message, MatchEnded):
                ended.set()
        return listen

    listeners = [(p, watcher(p)) for p in players]
    for connection, listener in listeners:
        connection.add_listener(listener)
    code = (await host.create_match(max_players=len(players), countdown_s=0)).match.code
    for other in players[1:]:
        await other.join_match(code)
    for connection in players:
        await connection.ready(code)
    for connection in players:
        await asyncio.wait_for(started[id(connection)].wait(), 10)
        await connection.act(code, "stop")
    await asyncio.wait_for(ended.wait(), 10)
    for connection, listener in listeners:
        connection.remove_listener(listener)
        connection.forget(code)
    return code


# -- leaderboards and ratings ------------------------------------------------------------------


async def test_leaderboard_pages_in_the_servers_order_and_finds_you(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    me = name("ana")
    assert await gaps("leaderboard", "--around-me", "--server", ws_url) == 1
    assert "run `gaps register NAME` first" in capsys.readouterr().err
    assert await gaps("register", me, "--server", ws_url) == 0
    capsys.readouterr()
    assert await gaps("leaderboard") == 0
    assert capsys.readouterr().out.startswith(
        "Leaderboard · classic · best score · all time: nobody has finished a rated game yet.")

    account = (await Connection.open(ws_url, token=_token(config_dir, ws_url)))
    others = [await player(ws_url, "bob"), await player(ws_url, "cy")]
    try:
        for connection in (account, *others):
            await rated_match(connection)
    finally:
        for connection in (account, *others):
            await connection.close()
    names = [me, *(c.player.name for c in others if c.player)]
    server_order = [e.name for e in (await http.leaderboard(ws_url, "classic")).entries]
    assert sorted(server_order) == sorted(names)

    assert await gaps("leaderboard", "--limit", "2") == 0  # the first page: 2 rows, a hint
    out = capsys.readouterr().out
    assert "Leaderboard · classic · best score · all time" in out
    assert lines_with(out, *names) == server_order[:2]
    assert f"{me} (you)" in out or me not in server_order[:2]
    hint = re.search(r"Next page: (gaps leaderboard --limit 2 --cursor (\S+))", out)
    assert hint is not None, out
    assert await gaps("leaderboard", "--limit", "2", "--cursor", hint[2]) == 0
    out = capsys.readouterr().out
    assert lines_with(out, *names) == server_order[2:] and "Next page" not in out
    assert re.search(r"│\s+3 │", out)  # the rank goes on from the first page

    assert await gaps("leaderboard", "--around-me", "--limit", "2") == 0
    out = capsys.readouterr().out
    rank = server_order.index(me) + 1
    assert f"{me} (you)" in out and f"You are #{rank} on this board." in out
    assert await gaps("leaderboard", "--around", server_order[0], "--by", "wins") == 0
    assert f"{server_order[0]} has no row on this board" in capsys.readouterr().out
    assert await gaps("leaderboard", "--by", "time", "--period", "day") == 0
    out = capsys.readouterr().out
    today = datetime.now(UTC).date().isoformat()
    assert f"fastest win · day {today}: nobody has won a rated game yet" in out
    assert await gaps("leaderboard", "--period", "month", "--day", "2001-02-03") == 0
    assert "best score · month 2001-02: nobody" in capsys.readouterr().out

    assert await gaps("leaderboard", "--cursor", "nonsense") == 1
    assert "gaps: the server refused this page: cursor 'nonsense' is not one of ours" in \
        capsys.readouterr().err
    assert await gaps("leaderboard", "--around", "nobody-here") == 1
    assert "gaps: no player is called 'nobody-here'" in capsys.readouterr().err
    assert await gaps("leaderboard", "--day", "29/11/2026") == 2
    assert "is not a day: expected YYYY-MM-DD" in capsys.readouterr().err


def _token(config_dir: Path, url: str) -> str:
    import json
    token: str = json.loads((config_dir / "config.json").read_text())["accounts"][url]["token"]
    return token


async def test_rating_shows_each_ruleset_and_the_recent_changes(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path
) -> None:
    me = name("ana")
    assert await gaps("register", me, "--server", ws_url) == 0
    assert await gaps("rating") == 0
    assert f"{me} has no rating yet" in capsys.readouterr().out

    ana = await Connection.open(ws_url, token=_token(config_dir, ws_url))
    bob = await player(ws_url, "bob")
    try:
        await rated_match(ana, bob)
        await rated_match(bob, ana)
    finally:
        await ana.close()
        await bob.close()
    bob_name = str(bob.player and bob.player.name)

    assert await gaps("rating") == 0
    out = capsys.readouterr().out
    assert f"Ratings of {me}" in out and "classic" in out and "provisional" in out
    assert "Recent rating changes" in out
    # no internal match id, which `gaps replay` cannot use: the code once the server sends
    # it (`match_code`), a dash until then
    assert "#" not in out.split("Recent rating changes", 1)[1]
    assert re.search(r"[▲▼=] ", out)

    assert await gaps("rating", bob_name, "--history", "1") == 0
    out = capsys.readouterr().out
    assert f"Ratings of {bob_name}" in out and "Recent rating changes (1 of 2)" in out

    assert await gaps("leaderboard", "--by", "rating") == 0
    out = capsys.readouterr().out
    assert "Leaderboard · classic · rating · all time" in out
    assert "~" in out and "provisional: fewer than 10 rated games" in out
    assert f"{me} (you)" in out and bob_name in out

    assert await gaps("rating", "nobody-here") == 1
    assert capsys.readouterr().err == "gaps: no player is called 'nobody-here'\n"


# -- tournaments ---------------------------------------------------------------------------------


def tournament_code(out: str) -> str:
    found = re.search(r"\((\w{6})\) created", out)
    assert found is not None, out
    return found[1]


async def test_the_host_removes_an_entrant_with_a_reason_and_nobody_else_may(
    ws_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Issue 16, point 4: ``gaps tournament remove CODE PLAYER --reason``."""
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    assert await gaps("tournament", "create", "--name", "Cup", "--players", "4") == 0
    code = tournament_code(capsys.readouterr().out)
    bob = name("bob")
    with monkeypatch.context() as other_user:
        other_user.setenv("GAPS_CONFIG_DIR", str(tmp_path / "bob"))
        assert await gaps("register", bob, "--server", ws_url) == 0
        following = asyncio.create_task(gaps("tournament", "join", code))
        await wait_for(lambda: "You are in." in capsys.readouterr().out)
        following.cancel()
        assert await following == 0
        capsys.readouterr()
        assert await gaps("tournament", "remove", code, bob, "--reason", "self") == 1
        assert "only the host" in capsys.readouterr().err
    assert await gaps("tournament", "remove", code, bob, "--reason", "left the table") == 0
    assert capsys.readouterr().out == (
        f"{bob} was removed from tournament {code}: left the table\n"
    )
    assert await gaps("tournament", "standings", code) == 0
    out = capsys.readouterr().out
    assert "0/4 entrants" in out and "Entrants (0/4): nobody" in out
    assert f"Removed by the host: {bob} (left the table)" in out
    assert await gaps("tournament", "remove", code, "nobody", "--reason", "x") == 1
    assert "nobody" in capsys.readouterr().err


async def test_tournament_create_list_standings_start_and_refusals(
    ws_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    assert await gaps("tournament", "list") == 0
    assert "No open or running tournament" in capsys.readouterr().out

    assert await gaps("tournament", "create", "--name", "Cup", "--rounds", "2", "--players",
                      "4", "--round-time", "5m", "--rules", "spaces") == 0
    out = capsys.readouterr().out
    code = tournament_code(out)
    assert f"Tournament Cup ({code}) created: spaces, 2 round(s) of 5:00, up to 4 entrants" in out
    assert f"gaps tournament start {code}" in out and f"gaps tournament join {code}" in out
    assert "gaps bot --tournament" not in out  # no bot may enter: the host did not say --bots

    assert await gaps("tournament", "create", "--start-in", "1h", "--name", "Later") == 0
    later = tournament_code(out := capsys.readouterr().out)
    assert "It starts by itself at" in out
    assert await gaps("tournament", "list") == 0
    out = capsys.readouterr().out
    assert code in out and later in out and "Cup" in out and "0/4" in out
    assert "open, starts" in out

    assert await gaps("tournament", "standings", code) == 0
    assert "Nobody has entered yet" in capsys.readouterr().out

    assert await gaps("tournament", "start", code) == 1
    assert f"has no entrants: players enter with `gaps tournament join {code}`" in \
        capsys.readouterr().err

    following = asyncio.create_task(gaps("tournament", "join", code))  # Ctrl-C while waiting
    out = ""

    def says_it_waits() -> bool:
        nonlocal out
        out += capsys.readouterr().out
        return "You are in." in out

    await wait_for(says_it_waits)
    following.cancel()
    assert await following == 0
    assert capsys.readouterr().out == (f"Stopped following tournament {code}; `gaps tournament "
                                       f"join {code}` follows it again.\n")
    assert await gaps("tournament", "standings", code) == 0
    out = capsys.readouterr().out
    assert "Entrants (1/4): ana-" in out and f"gaps tournament start {code}" in out

    with monkeypatch.context() as other_user:  # bob enters, but may not start it
        other_user.setenv("GAPS_CONFIG_DIR", str(tmp_path / "bob"))
        assert await gaps("register", name("bob"), "--server", ws_url) == 0
        assert await gaps("tournament", "start", code) == 1
        assert f"only the host starts tournament {code}" in capsys.readouterr().err
        bots = await gaps("bot", "--tournament", "ZZZZZZ", "--pace", "0")
        assert bots == 1 and "no tournament has code 'ZZZZZZ'" in capsys.readouterr().err
        assert await gaps("tournament", "join", "ZZZZZZ") == 1
        assert "no tournament has code 'ZZZZZZ'" in capsys.readouterr().err

    assert await gaps("tournament", "standings", "ZZZZZZ") == 1
    assert "no tournament has code 'ZZZZZZ'" in capsys.readouterr().err
    assert await gaps("tournament", "create", "--start-at", "2001-01-01T10:00Z") == 2
    assert "has passed: a tournament starts by itself at a time to come" in \
        capsys.readouterr().err  # said before anything is sent
    assert await gaps("tournament", "create", "--start-at", "tomorrow") == 2
    assert "is not a time" in capsys.readouterr().err
    assert await gaps("tournament", "create", "--rounds", "21") == 2
    assert "21 rounds is not in 1..20" in capsys.readouterr().err


async def test_a_whole_tournament_two_players_and_a_bot(
    server: Server, ws_url: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """Two rounds: each opens the match screen by itself; standings after each round, the
    podium at the end. ana creates it and plays (--join), bob joins, a bot plays too."""
    ana, bob = name("ana"), name("bob")
    assert await gaps("register", ana, "--server", ws_url) == 0
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "bob"))
    assert await gaps("register", bob, "--server", ws_url) == 0
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "config"))
    screens: dict[str, list[MatchApp]] = {ana: [], bob: []}

    def player_of(who: str) -> Script:
        async def play_round(app: MatchApp, pilot: Pilot[Any]) -> None:
            rounds = screens[who]
            rounds.append(app)
            assert app.state.kind == "tournament" and app.heading == f"Cup · round {len(rounds)}/2"
            await wait_for(lambda: app.state.playing)
            await pilot.press("s", "s")
            if len(rounds) == 1:  # the next round's start closes a finished round's screen
                await wait_for(lambda: not app.is_running)
            else:
                await wait_for(lambda: isinstance(app.screen, RankingScreen))
                await pilot.press("q")
        return play_round

    hosting = asyncio.create_task(gaps(
        "tournament", "create", "--name", "Cup", "--rounds", "2", "--players", "3",
        "--round-time", "2m", "--bots", "--join", frontend=driving(player_of(ana))))
    await wait_for(lambda: any(t.state.entrants for t in server.tournaments.live.values()))
    [live] = server.tournaments.live.values()
    code = live.code
    assert live.state.options.bots  # the host let bots in (--bots)
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "bob"))  # ana's config is read
    joining = asyncio.create_task(gaps("tournament", "join", code.lower(),
                                       frontend=driving(player_of(bob))))
    bot = asyncio.create_task(gaps("bot", "--tournament", code, "--pace", "0", "--level", "1"))
    await wait_for(lambda: len(live.state.entrants) == 3)
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "config"))
    assert await gaps("tournament", "start", code) == 0
    for task in (hosting, joining, bot):
        assert await asyncio.wait_for(task, 40) == 0
    out = capsys.readouterr().out

    for who in (ana, bob):
        rounds = screens[who]
        assert len(rounds) == 2 and rounds[0].state.code != rounds[1].state.code
        assert all(app.state.phase is Phase.FINISHED for app in rounds)
    assert [app.state.code for app in screens[ana]] == [app.state.code for app in screens[bob]]
    assert f"Tournament Cup ({code}) created" in out and f"Tournament Cup ({code}) started" in out
    assert f"gaps bot --tournament {code}" in out  # created with --bots
    assert out.count("Tournament started: 2 round(s), entrants") == 2
    for number, app in enumerate(screens[ana], start=1):
        assert out.count(f"Round {number}/2 (match {app.state.code}) is starting.") == 2
        assert out.count(f"Round {number}/2 (match {app.state.code}): final ranking") == 2
    assert out.count("Standings after round 1/2") == 2
    assert out.count("Standings after round 2/2") == 2
    assert out.count(f"Cup ({code}): final standings") == 3 and out.count("Podium") == 3
    assert f"{ana} (you)" in out and f"{bob} (you)" in out
    assert f"+ {bob} entered" in out  # ana saw bob come in
    assert "entered tournament" in out and "round 1 ended; standings:" in out  # the bot's
    standings = await http.standings(ws_url, code)
    assert standings.tournament.status == "finished"
    assert [row.rounds_played for row in standings.standings] == [2, 2, 2]

    assert await gaps("tournament", "standings", code) == 0
    out = capsys.readouterr().out
    assert "finished" in out and "final standings" in out and "Podium" in out
    assert await gaps("tournament", "list") == 0
    assert code not in capsys.readouterr().out  # only open and running ones are listed
    assert await gaps("tournament", "join", code) == 0  # an entrant looks back: the end
    assert f"Cup ({code}): final standings" in capsys.readouterr().out
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "carol"))
    assert await gaps("register", name("carol"), "--server", ws_url) == 0
    assert await gaps("tournament", "join", code) == 1
    assert f"tournament {code} is over; its final standings: `gaps tournament " \
        f"standings {code}`" in capsys.readouterr().err


@pytest.mark.tournament_break_s(15)
async def test_a_round_end_the_follower_missed_is_fetched_again_and_its_standings_printed(
    server: Server, ws_url: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock,
) -> None:
    """Round 1's ``round_ended`` is lost on the way: the next event's seq shows the gap,
    the client fetches it with ``tournament_resync`` and prints its standings before
    round 2 opens."""
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    dropped: list[int] = []
    take = Connection._on_frame

    def lossy(connection: Connection, frame: str) -> None:
        event = json.loads(frame)
        if event.get("event") == "round_ended" and not dropped:
            dropped.append(event["seq"])
            return
        take(connection, frame)

    monkeypatch.setattr(Connection, "_on_frame", lossy)
    screens: list[MatchApp] = []

    async def play(app: MatchApp, pilot: Pilot[Any]) -> None:
        screens.append(app)
        await stop_and_see_the_ranking(app, pilot)
        if len(screens) == 1:
            clock.advance(15)  # the break: round 2 comes

    hosting = asyncio.create_task(gaps(
        "tournament", "create", "--name", "Cup", "--rounds", "2", "--players", "1",
        "--round-time", "2m", "--join", frontend=driving(play)))
    await wait_for(lambda: any(t.state.entrants for t in server.tournaments.live.values()))
    [live] = server.tournaments.live.values()
    assert await gaps("tournament", "start", live.code) == 0
    assert await asyncio.wait_for(hosting, 40) == 0
    out = capsys.readouterr().out

    [round_one] = [e for e in live.history.since(0) or [] if event_name(e) == "round_ended"][:1]
    assert dropped == [round_one.seq] and len(screens) == 2
    assert out.count("Standings after round 1/2") == 1
    assert out.count("Standings after round 2/2") == 1
    assert out.index("Standings after round 1/2") < out.index(
        f"Round 2/2 (match {screens[1].state.code}) is starting.")
    assert f"Cup ({live.code}): final standings" in out and "Podium" in out


async def test_a_tournament_snapshot_prints_the_standings_missed_once_and_may_end_it(
    ws_url: str,
) -> None:
    """What a ``tournament_resync`` too far back gives: the view and the standings."""
    connection = await player(ws_url, "ana")
    you = connection.player.id if connection.player else None
    text = io.StringIO()
    view = {"code": "Q4M2ZK", "name": "Cup", "rounds": 2, "max_players": 2, "entrants": [],
            "status": "running", "current_round": 1, "round_match": None}
    follower = TournamentFollower(connection, typed(TournamentView, **view),
                                  frontend=no_screen(), out=Console(file=text, width=120))
    rows = [{"rank": 1, "player_id": you, "name": "ana", "total_score": 9,
             "total_time_ms": 4000, "rounds_played": 1},
            {"rank": 2, "player_id": -1, "name": "bob", "total_score": 4,
             "total_time_ms": 3000, "rounds_played": 1}]
    between_rounds = received(
        {"type": "tournament", "tournament": view, "standings": rows, "seq": 5})
    final_rows = [dict(row, rounds_played=2) for row in rows]
    ended = received({"type": "tournament", "standings": final_rows, "seq": 9,
                      "tournament": dict(view, status="finished", current_round=2)})
    try:
        for message in (between_rounds, between_rounds, ended):  # as the connection hands
            follower._on_message(message)                          # them over
        final = await asyncio.wait_for(follower.run(), 10)
    finally:
        await connection.close()
    out = text.getvalue()
    assert out.count("Standings after round 1/2") == 1 and "ana (you)" in out
    assert "round 2/2" not in out  # the end's standings are the final ones
    assert isinstance(ended, Tournament) and ended.standings
    assert final == Outcome(ended.standings, ended.standings)


# -- the daily challenge ---------------------------------------------------------------------------


async def test_daily_plays_once_a_day_and_shows_its_board(
    ws_url: str, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    me = name("ana")
    assert await gaps("register", me, "--server", ws_url) == 0
    assert await gaps("daily", "--board") == 0
    assert "Nobody has finished the classic daily challenge" in capsys.readouterr().out
    today = clock.today().isoformat()
    seen: list[MatchApp] = []

    async def play(app: MatchApp, pilot: Pilot[Any]) -> None:
        seen.append(app)
        assert app.state.kind == "daily" and app.state.summary is not None
        assert app.state.summary.win_by == "score"
        await stop_and_see_the_ranking(app, pilot)

    # An account registered today plays today's challenge unranked, and is told why.
    assert await gaps("daily", frontend=driving(play)) == 0
    out = capsys.readouterr().out
    assert f"Daily challenge (classic, {today}): score " in out and "stopped at" in out
    assert seen[0].heading == f"daily challenge {today} (unranked)"
    unranked = " ".join(out.split())
    assert "Unranked: your account was registered at" in unranked
    assert f"after the {today} challenge began (00:00 UTC)" in unranked
    assert "on today's board" not in out
    assert seen[0].state.seed is None  # secret until the day is over
    assert "The deal stays secret until the day is over" in out

    assert await gaps("daily") == 1
    assert capsys.readouterr().err == (
        f"gaps: you have played today's classic challenge ({today}): one attempt a day. "
        "See the board: gaps daily --board\n")

    clock.advance(24 * 3600)  # the next day, the account is ranked
    tomorrow = clock.today().isoformat()
    assert await gaps("daily", frontend=driving(play)) == 0
    out = capsys.readouterr().out
    assert seen[1].heading == f"daily challenge {tomorrow}"
    assert f"Daily challenge (classic, {tomorrow}): score " in out and "Unranked" not in out
    assert "You are #1 of 1 on today's board: gaps daily --board" in out
    assert await gaps("daily", "--board") == 0
    out = capsys.readouterr().out
    assert f"Daily challenge · classic · {tomorrow}" in out and f"{me} (you)" in out
    assert await gaps("daily", "--board", "--day", "2001-01-01", "--rules", "spaces") == 0
    # a past day's board invites to play nothing: that day cannot be played any more
    assert capsys.readouterr().out == \
        "Nobody finished the spaces daily challenge of 2001-01-01.\n"
    assert await gaps("daily", "--day", "2001-01-01") == 2
    assert "--day goes with --board" in capsys.readouterr().err


# -- quick match -----------------------------------------------------------------------------------


async def test_quick_match_pairs_two_players_and_ctrl_c_leaves_the_queue(
    server: Server, ws_url: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    ana, bob = name("ana"), name("bob")
    assert await gaps("register", ana, "--server", ws_url) == 0
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "bob"))
    assert await gaps("register", bob, "--server", ws_url) == 0
    def waiting() -> list[str]:
        assert server.matchmaker is not None
        return [w.name for w in server.matchmaker.state.waiting("classic")]

    # Ctrl-C while waiting (the task is cancelled): out of the queue, exit 0
    capsys.readouterr()
    alone = asyncio.create_task(gaps("play"))
    out = ""

    def says_it_waits() -> bool:
        nonlocal out
        out += capsys.readouterr().out
        return "Looking for opponents in classic (1 player waiting)" in out

    await wait_for(says_it_waits)
    assert waiting() == [bob]
    alone.cancel()
    assert await alone == 0
    assert capsys.readouterr().out == "Stopped looking for a match.\n" and waiting() == []

    screens: list[MatchApp] = []

    async def race(app: MatchApp, pilot: Pilot[Any]) -> None:
        screens.append(app)
        assert app.state.kind == "quick" and app.heading == "quick match"
        await stop_and_see_the_ranking(app, pilot)

    bob_plays = asyncio.create_task(gaps("play", frontend=driving(race)))
    await wait_for(lambda: waiting() == [bob])  # bob's config is read: ana's turn
    monkeypatch.setenv("GAPS_CONFIG_DIR", str(tmp_path / "config"))
    ana_plays = asyncio.create_task(gaps("play", frontend=driving(race)))
    assert await asyncio.wait_for(ana_plays, 20) == 0
    assert await asyncio.wait_for(bob_plays, 20) == 0
    out = capsys.readouterr().out
    assert screens[0].state.code == screens[1].state.code
    code = screens[0].state.code
    assert f"Matched with {bob} in match {code}." in out
    assert f"Matched with {ana} in match {code}." in out
    assert out.count(f"Match {code}: final ranking") == 2


async def test_a_hostile_tournament_is_followed_with_its_names_printed_and_notified_as_typed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, match = "\x1b[2J[b]Q4", "\u202e[i]K7"
    shown_code, shown_match = "\ufffd[2J[b]Q4", "\ufffd[i]K7"
    view = {"code": code, "name": HOSTILE, "ruleset": "classic", "rounds": 1,
            "max_players": 4, "round_time_limit_s": 60, "start_at": None, "status": "running",
            "current_round": 1, "round_match": match, "entrants": [{"player_id": 7, "name": "me"}],
            "entrant_count": 1}
    standings = [{"rank": 1, "player_id": 8, "name": HOSTILE, "total_score": 9,
                  "total_time_ms": 1000, "rounds_played": 1},
                 {"rank": 2, "player_id": ME["id"], "name": "me", "total_score": 0,
                  "total_time_ms": 1000, "rounds_played": 1}]

    def event(seq: int, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": "tournament_event", "tournament": code, "seq": seq, "event": kind,
                **fields}

    ended = {"type": "event", "match": match, "seq": 1, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": "0" * 64,
             "ranking": [{**seated(8, HOSTILE), "rank": 1, "moves_made": 0,
                          "end_reason": "stopped", "finish_ms": 1000},
                         {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0,
                          "end_reason": "stopped", "finish_ms": 1000}]}
    toasts: list[str] = []
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "tournament_join": [{"type": "tournament", "tournament": view, "seq": 0}],
        "join_match": [lobby(match, seated(8, HOSTILE), kind="tournament"), ended],
    }) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0

        async def see_the_news(app: MatchApp, pilot: Pilot[Any]) -> None:
            """The round's screen is open, its notifications drawn: the follower listens.
            What it hears while the screen is open, it prints once the screen closes."""
            await wait_for(lambda: isinstance(app.screen, RankingScreen))
            await hostile.push(
                event(1, "entrant_joined", player_id=8, name=HOSTILE),
                event(2, "tournament_started", rounds=1, entrants=[
                    {"player_id": ME["id"], "name": "me"}, {"player_id": 8, "name": HOSTILE}]),
                event(3, "round_ended", round=1, match=match, standings=standings),
                event(4, "tournament_ended", standings=standings, podium=standings))
            await wait_for(lambda: len(app.screen.query(Toast)) == 2)
            toasts.extend(toast.render().plain for toast in app.screen.query(Toast))
            await pilot.press("q")

        news = driving(see_the_news, notifications=True)
        assert await gaps("tournament", "join", "Q4M2ZK", frontend=news) == 0
    out = capsys.readouterr().out
    assert_inert(out, f"Tournament {SHOWN} ({shown_code})", f"+ {SHOWN} entered (2/4)",
                 f"entrants me, {SHOWN}.", f"Round 1/1 (match {shown_match}) is starting.")
    assert_inert("\n".join(toasts), "Round 1/1 is over", f"1. {SHOWN} 9",
                 "The tournament is over")


async def test_a_round_that_starts_right_behind_the_join_reply_is_played(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The server sends ``round_starting`` in the same breath as the ``tournament_join``
    reply: the follower, whose listener comes after the reply, still gets it."""
    code, match = "Q4M2ZK", "K7QX2M"
    view = {"code": code, "name": "Cup", "ruleset": "classic", "rounds": 1, "max_players": 4,
            "round_time_limit_s": 60, "start_at": None, "status": "running",
            "current_round": 0, "round_match": None,
            "entrants": [{"player_id": ME["id"], "name": "me"}]}
    standings = [{"rank": 1, "player_id": ME["id"], "name": "me", "total_score": 0,
                  "total_time_ms": 1000, "rounds_played": 1}]

    def event(seq: int, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": "tournament_event", "tournament": code, "seq": seq, "event": kind,
                **fields}

    ended = {"type": "event", "match": match, "seq": 1, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": "0" * 64,
             "ranking": [{**seated(ME["id"], "me"), "rank": 1, "moves_made": 0,
                          "end_reason": "stopped", "finish_ms": 1000}]}
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "tournament_join": [{"type": "tournament", "tournament": view, "seq": 3},
                            event(4, "round_starting", round=1, match=match)],
        "join_match": [lobby(match, kind="tournament"), ended],
    }) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0

        async def play(app: MatchApp, pilot: Pilot[Any]) -> None:
            await wait_for(lambda: isinstance(app.screen, RankingScreen))
            # A round has no rematch (the tournament deals the next): n does nothing.
            assert "rematch" not in str(app.screen.query_one("#reveal", Static).render())
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, RankingScreen) and app.rematch is None
            await hostile.push(event(5, "tournament_ended", standings=standings,
                                     podium=standings))
            await pilot.press("q")

        following = gaps("tournament", "join", code, frontend=driving(play))
        assert await asyncio.wait_for(following, 10) == 0
    out = capsys.readouterr().out
    assert f"Round 1/1 (match {match}) is starting." in out
    assert f"Cup ({code}): final standings" in out and "Stopped following" not in out


@pytest.mark.parametrize(("bad", "field"), [
    ({"view": {"rounds": "3"}},
     "in a 'tournament' message, Expected `int`, got `str` - at `$.tournament.rounds`"),
    ({"round": "[b]1"},
     "in a 'tournament_event round_ended' message, Expected `int`, got `str` - at `$.round`"),
    ({"standings": [{"rank": 1.5}]},
     "message, Expected `int`, got `float` - at `$.standings[0].rank`"),
])
async def test_a_hostile_tournaments_malformed_number_is_a_protocol_error_naming_it(
    bad: dict[str, Any], field: str, capsys: pytest.CaptureFixture[str],
) -> None:
    code = "Q4M2ZK"
    view = {"code": code, "name": "Cup", "ruleset": "classic", "rounds": 1, "max_players": 4,
            "round_time_limit_s": 60, "start_at": None, "status": "running",
            "current_round": 0, "round_match": None, "entrants": [], **bad.get("view", {})}
    ended = {"type": "tournament_event", "tournament": code, "seq": 1, "event": "round_ended",
             "round": bad.get("round", 1), "match": "K7QX2M",
             "standings": [{"rank": 1, "player_id": ME["id"], "name": "me", "total_score": 0,
                            "total_time_ms": 0, "rounds_played": 1, **row}
                           for row in bad.get("standings", [{}])]}
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "tournament_join": [{"type": "tournament", "tournament": view, "seq": 0}, ended],
    }) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0
        capsys.readouterr()
        following = gaps("tournament", "join", code)
        assert await asyncio.wait_for(following, 10) == 1
    err = capsys.readouterr().err
    assert err.startswith("gaps: the server broke the protocol: ") and err.count("\n") == 1
    assert f"{field}: " in err and "unexpected" not in err


async def test_a_round_gone_in_a_server_restart_is_reported_and_the_next_deal_is_played(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The server restarts without round 1's match: the rejoin is refused, the round's
    screen closes, the terminal says so, and the round the server deals next is opened."""
    code, first, again = "Q4M2ZK", "M1AAAA", "M2BBBB"
    view = {"code": code, "name": "Cup", "ruleset": "classic", "rounds": 2, "max_players": 4,
            "round_time_limit_s": 60, "start_at": None, "status": "running",
            "current_round": 1, "round_match": first,
            "entrants": [{"player_id": ME["id"], "name": "me"}]}
    gone = {"type": "error", "code": "no_such_match",
            "message": f"no live match has code '{first}'"}
    opened: list[str] = []
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "tournament_join": [{"type": "tournament", "tournament": view, "seq": 0}],
        "tournament_resync": [{"type": "tournament", "tournament": view | {"round_match": again},
                               "standings": [], "seq": 0}],
    }, once={"join_match": [lobby(first, kind="tournament"), gone,
                            lobby(again, kind="tournament")]}) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0

        async def restart_then_quit(app: MatchApp, pilot: Pilot[Any]) -> None:
            opened.append(app.state.code)
            if len(opened) == 1:
                await hostile.drop(1001)  # the server restarts
                await wait_for(lambda: not app.is_running)
                return
            await pilot.press("ctrl+q")

        assert await gaps("tournament", "join", code,
                          frontend=driving(restart_then_quit)) == 0
        assert [r["code"] for r in hostile.sent("join_match")] == [first, first, again]
    out = capsys.readouterr().out
    assert opened == [first, again]
    assert f"Round 1's match {first} is gone (cannot rejoin match {first}: no live match has " \
        f"code '{first}'); waiting for the next round." in out
    assert f"Round 1/2 (match {again}) is starting." in out
    assert "You left round 1 of tournament Q4M2ZK during your game" in out


async def test_quick_match_races_a_bot_when_nobody_comes_in_time(
    ws_url: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    seen: list[str] = []

    async def race(app: MatchApp, pilot: Pilot[Any]) -> None:
        while len(app.state.players) < 2:
            await pilot.pause(0.02)
        seen.extend(player.name for player in app.state.players.values())
        assert app.state.kind == "race" and app.state.summary is not None
        assert app.state.summary.max_players == 2
        # End to end: the bot is ready; ready too, and the race is on against it.
        bot_id = next(i for i in app.state.players if i != app.state.you_id)
        await wait_for(lambda: app.state.players[bot_id].ready)
        await pilot.press("r")
        await wait_for(lambda: app.state.playing)
        # The bot plays (about one action a second).
        await wait_for(lambda: app.state.players[bot_id].moves_made > 0)
        await pilot.press("s", "s")  # stop (asks first): our game is over, the bot's goes on
        await wait_for(lambda: app.state.own is not None and app.state.own.over)
        await pilot.press("ctrl+q", "ctrl+q")  # leaving asks first

    assert await asyncio.wait_for(
        gaps("play", "--bot-after", "1s", frontend=driving(race)), 40) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Nobody came: racing a bot in match" in out
    assert any(player.startswith("bot-") for player in seen)
    assert "is over (stopped, score" in out and "the others still play" in out


class Wall:
    """A wall clock that moves only when the test says so."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


async def test_between_rounds_the_round_screen_and_the_terminal_count_down_to_the_next(
) -> None:
    """Issue 13: ``round_ended`` says when the next round starts; the title of the round's
    screen, then the terminal's waiting line, count down to it on the wall clock."""
    code, match = "Q4M2ZK", "K7QX2M"
    wall = Wall(datetime(2026, 11, 30, 18, 0, tzinfo=UTC))
    view = {"code": code, "name": "Cup", "ruleset": "classic", "rounds": 2, "max_players": 4,
            "round_time_limit_s": 60, "start_at": None, "status": "running",
            "current_round": 1, "round_match": match,
            "entrants": [{"player_id": ME["id"], "name": "me"}]}
    standings = [{"rank": 1, "player_id": ME["id"], "name": "me", "total_score": 0,
                  "total_time_ms": 1000, "rounds_played": 1}]

    def event(seq: int, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": "tournament_event", "tournament": code, "seq": seq, "event": kind,
                **fields}

    ended = {"type": "event", "match": match, "seq": 1, "event": "match_ended", "t_ms": 1000,
             "seed": None, "commitment": "0" * 64,
             "ranking": [{**seated(ME["id"], "me"), "rank": 1, "moves_made": 0,
                          "end_reason": "stopped", "finish_ms": 1000}]}
    titles: list[str] = []
    async with Hostile({"join_match": [lobby(match, kind="tournament"), ended]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43)

        async def count_down(app: MatchApp, pilot: Pilot[Any]) -> None:
            await wait_for(lambda: isinstance(app.screen, RankingScreen))
            next_at = wall.at.replace(second=15)
            await hostile.push(event(1, "round_ended", round=1, match=match,
                                     standings=standings, next_round_at=format_time(next_at)))
            await wait_for(lambda: app.next_round_at == next_at)
            await pilot.press("b")  # the board, under its title
            for seconds in (0, 10, 15):
                wall.at = datetime(2026, 11, 30, 18, 0, seconds, tzinfo=UTC)
                app._draw_title()  # as its timer does
                title = str(app.query_one("#title", Static).render())
                found = re.search(r"next round (in \d+:\d\d|any moment now)", title)
                titles.append(found.group(0) if found else title)
            wall.at = datetime(2026, 11, 30, 18, 0, 3, tzinfo=UTC)
            await pilot.press("q")

        follower = TournamentFollower(connection, typed(TournamentView, **view),
                                      frontend=driving(count_down),
                                      out=Console(file=io.StringIO()), now=wall)
        following = asyncio.create_task(follower.run())
        await wait_for(lambda: follower.app is None and follower.standings_shown == 1)
        waiting = follower.waiting_for().plain
        await hostile.push(event(2, "tournament_ended", standings=standings, podium=standings))
        await asyncio.wait_for(following, 10)
        await connection.close()
    assert titles == [
        "next round in 0:15", "next round in 0:05", "next round any moment now"]
    assert waiting == "Round 2/2 starts in 0:12 (Ctrl-C stops following)…"


async def test_entrants_who_are_bots_are_marked_as_they_enter_and_at_the_start() -> None:
    """Issue 13: an entrant with ``bot: true`` shows ``[bot]`` beside the name."""
    code = "Q4M2ZK"
    view = {"code": code, "name": "Cup", "ruleset": "classic", "rounds": 1, "max_players": 4,
            "round_time_limit_s": 60, "start_at": None, "status": "open", "entrants": []}
    out = Console(file=io.StringIO(), width=100)
    connection = cast(Connection, SimpleNamespace(player=Player(**ME)))
    follower = TournamentFollower(connection, typed(TournamentView, **view),
                                  frontend=no_screen(), out=out)

    def event(seq: int, kind: str, **fields: Any) -> TournamentEvent:
        message = received({"type": "tournament_event", "tournament": code, "seq": seq,
                            "event": kind, **fields})
        assert isinstance(message, TournamentEvent)
        return message

    robo, cy = {"player_id": 8, "name": "robo", "bot": True}, {"player_id": 9, "name": "cy"}
    await follower._handle(event(1, "entrant_joined", **robo))
    await follower._handle(event(2, "entrant_joined", **cy))
    await follower._handle(event(3, "tournament_started", rounds=1, entrants=[robo, cy]))
    printed = " ".join(str(out.file.getvalue()).split())  # type: ignore[attr-defined]
    assert "+ robo [bot] entered (1/4)" in printed and "+ cy entered (2/4)" in printed
    assert "entrants robo [bot], cy." in printed


async def test_an_entrant_the_host_removes_is_announced_with_the_reason_to_all() -> None:
    """Issue 16: ``entrant_removed`` is shown to all, and the entrant is marked removed."""
    code = "Q4M2ZK"
    view = {"code": code, "name": "Cup", "ruleset": "classic", "rounds": 2, "max_players": 4,
            "round_time_limit_s": 60, "start_at": None, "status": "running",
            "entrants": [{"player_id": 8, "name": "robo"}, {"player_id": 9, "name": "cy"}]}
    out = Console(file=io.StringIO(), width=100)
    connection = cast(Connection, SimpleNamespace(player=Player(**ME)))
    follower = TournamentFollower(connection, typed(TournamentView, **view),
                                  frontend=no_screen(), out=out)
    removed = received({"type": "tournament_event", "tournament": code, "seq": 1,
                        "event": "entrant_removed", "player_id": 8, "name": "robo",
                        "reason": "left the table", "after_round": 1})
    assert isinstance(removed, EntrantRemoved)
    await follower._handle(removed)
    printed = " ".join(str(out.file.getvalue()).split())  # type: ignore[attr-defined]
    assert "− robo was removed by the host: left the table" in printed
    assert follower.view.entrants[0].removed is True
    assert follower.view.entrants[0].removed_reason == "left the table"
