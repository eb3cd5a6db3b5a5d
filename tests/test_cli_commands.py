"""Every ``gaps`` subcommand against a real server: output, config, exit codes, errors.

The match screen and practice are driven by a test frontend (Textual's Pilot) instead of
the terminal; bots have their own file (test_cli_bot.py). A hostile server (``Hostile``)
that speaks the protocol with names, codes and messages made to attack the terminal
checks that every command prints them as inert text.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from client_cli import http
from client_cli.cli import build_parser
from client_cli.config import Config
from client_cli.connection import Connection, ServerRefused
from client_cli.match_state import Phase
from client_cli.practice import PracticeApp
from client_cli.refusals import refusal_words
from client_cli.screen import MatchApp, RankingScreen
from client_cli.tables import local_time
from client_cli.widgets import MessageLine
from gaps import Game, Seed
from gaps.bots import bot_for_level
from gaps_protocol.messages.replies import RematchJoined
from gaps_protocol.messages.requests import Play
from tests.cli_support import (
    HOSTILE,
    HOSTILE_CODES,
    ME,
    NEUTRAL_TIME,
    SHOWN,
    Hostile,
    assert_inert,
    driving,
    gaps,
    lobby,
    page,
    racing,
    screen_text,
    seated,
)

pytestmark = pytest.mark.usefixtures("config_dir")

KNOWN_SEED = "AAAA-BBBB-CCCC-DDDD"  # 3H is a legal first move


async def until(pilot: Pilot[Any], found: Callable[[], Any], timeout: float = 10) -> None:
    import asyncio
    deadline = asyncio.get_running_loop().time() + timeout
    while not found():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.002)


def created_code(out: str) -> str:
    found = re.search(r"Match (\w+) created", out)
    assert found is not None, out
    return found[1]


def name(prefix: str) -> str:
    return f"{prefix}-{random.randrange(10**6)}"


async def test_register_stores_the_token_and_whoami_checks_it(
    ws_url: str, capsys: pytest.CaptureFixture[str], config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ana = name("ana")
    assert await gaps("register", ana, "--server", ws_url) == 0
    out = capsys.readouterr().out
    assert f"Registered {ana}" in out and str(config_dir / "config.json") in out
    stored = json.loads((config_dir / "config.json").read_text())
    assert stored["server"] == ws_url and stored["accounts"][ws_url]["name"] == ana
    assert len(stored["accounts"][ws_url]["token"]) > 20

    assert await gaps("whoami") == 0  # the server comes from the config now
    assert capsys.readouterr().out.startswith(f"{ana} (player #")

    other = name("again")
    assert await gaps("register", other) == 1
    err = capsys.readouterr().err
    assert f"you are already {ana}" in err and f"`gaps register {other} --force`" in err

    # The name is already this account's: nothing to replace, with or without --force.
    for argv in ((ana,), (ana.upper(), "--force")):
        assert await gaps("register", *argv) == 0
        assert capsys.readouterr().out.startswith(f"You are already {ana} (player #")
    assert await gaps("register", "x", "--force") == 1  # one line, the server's words
    assert capsys.readouterr().err.startswith("gaps: 'x': a name is 2-24 letters")

    # The server no longer knows the token: each command says what to run, and that
    # command says why the name cannot be had again (someone holds it on the server).
    stored = json.loads((config_dir / "config.json").read_text())
    stored["accounts"][ws_url]["token"] = "forgotten"
    (config_dir / "config.json").write_text(json.dumps(stored))
    assert await gaps("whoami") == 1
    assert f"`gaps register {ana}` registers that name again" in capsys.readouterr().err
    assert await gaps("register", ana) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "choose another one with `gaps register NAME --force`" in err
    assert await gaps("register", other, "--force") == 0
    assert f"Registered {other}" in capsys.readouterr().out

    monkeypatch.setenv("GAPS_SERVER", "ws://127.0.0.1:9")  # the environment wins over the file
    assert await gaps("whoami") == 1
    assert "no account on ws://127.0.0.1:9" in capsys.readouterr().err


async def test_an_unreachable_server_or_no_account_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await gaps("register", "ana", "--server", "ws://127.0.0.1:9") == 1
    err = capsys.readouterr().err
    assert err.startswith("gaps: cannot reach the server at ws://127.0.0.1:9")
    assert err.count("\n") == 1
    assert await gaps("create", "--server", "ws://127.0.0.1:9") == 1
    assert "run `gaps register NAME` first" in capsys.readouterr().err
    assert await gaps("matches", "--server", "ws://127.0.0.1:9") == 1
    assert "cannot reach the server" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "says"), [
    (["create", "--time", "10x"], "'10x' is not a duration"),
    (["create", "--players", "40"], "40 players is not in 1..16"),
    (["create", "--rules", "chess"], "invalid choice: 'chess'"),
    (["create", "--seed", "!!!!"], "is not a share code"),
    (["bot", "--join", "K7QX2M", "--pace", "fast"], "is not a pace"),
    (["bot", "--level", "2"], "one of the arguments --join --tournament --quick is required"),
    (["bot", "--join", "K7QX2M", "--level", "5"], "invalid choice: 5 (choose from 1, 2, 3, 4)"),
    (["bot", "--join", "K7QX2M", "--tournament", "Q4M2ZK"], "not allowed with argument"),
    (["leaderboard", "--by", "speed"], "invalid choice: 'speed'"),
    (["leaderboard", "--limit", "0"], "0 rows is not in 1..100"),
    (["leaderboard", "--around-me", "--cursor", "X"], "not allowed with argument --around-me"),
    (["tournament"], "the following arguments are required: ACTION"),
    (["tournament", "create", "--round-time", "soon"], "'soon' is not a duration"),
    (["tournament", "create", "--start-in", "5m", "--start-at", "2030-01-01T00:00"],
     "not allowed with argument --start-in"),
    (["tournament", "join", "Q4-M2"], "'Q4-M2' is not a tournament code"),
    (["daily", "--board", "--day", "yesterday"], "'yesterday' is not a day"),
    (["play", "--rules", "poker"], "invalid choice: 'poker'"),
    (["create", "--time", "25h"], "create: argument --time: '25h': the time limit is at most "
                                  "24 hours (`gaps create --help` lists the options)"),
    (["create", "--countdown", "90s"], "the countdown is at most 60 seconds"),
    (["tournament", "create", "--round-time", "24h1s"], "a round's time limit is at most 24 hours"),
    (["tournament", "create", "--name", "x" * 65], "a tournament's name is at most 64 characters"),
    (["tournament", "create", "--start-at", "2020-01-01T00:00Z"], "has passed"),
    (["tournament", "remove", "Q4M2ZK", "bob", "--reason", " "],
     "the reason: ' ' begins with a space"),
    # The one rule for text (gaps_protocol.text) at every argument that goes on the wire:
    # refused saying why, never stripped.
    (["register", "ana\u00a0"], "argument name: a player's name: 'ana\\xa0' holds U+00A0 "
                                "NO-BREAK SPACE at character 4: the only space is U+0020 SPACE"),
    (["join", " K7QX2M"], "a match code: ' K7QX2M' begins with a space"),
    (["watch", "K7QX2M\n"], "a match code: 'K7QX2M\\n' holds U+000A at character 7, which is "
                             "not printable"),
    (["create", "--seed", "AAAA-BBBB-CCCC-DDDD "], "a share code: 'AAAA-BBBB-CCCC-DDDD ' ends "
                                                  "with a space"),
    (["tournament", "create", "--name", "Friday  cup"],
     "a tournament's name: 'Friday  cup' holds two spaces in a row"),
    (["tournament", "announce", "Q4M2ZK", "Coffee\u2028now"],
     "an announcement: 'Coffee\\u2028now' holds U+2028 LINE SEPARATOR at character 7"),
    (["tournament", "remove", "Q4M2ZK", " bob", "--reason", "cheats"],
     "a player's name: ' bob' begins with a space"),
    (["tournament", "arbiter", "Q4M2ZK", "bob\u3000"], "holds U+3000 IDEOGRAPHIC SPACE"),
    (["leaderboard", "--around", "bob "], "a player's name: 'bob ' ends with a space"),
    (["rating", "bo\u200bb"], "'bo\\u200bb' holds U+200B ZERO WIDTH SPACE at character 3"),
    (["leaderboard", "--by", "rating", "--period", "day"], "a rating has no period"),
    (["leaderboard", "--by", "rating", "--day", "2026-01-01"], "a rating has no period"),
    ([], "the following arguments are required: COMMAND"),
])
async def test_usage_errors_exit_2_and_say_what_is_wrong(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await gaps(*argv) == 2
    err = capsys.readouterr().err
    assert says in err
    assert err.startswith("gaps: ") and err.count("\n") == 1, err  # one line, no usage block


async def test_the_server_refusing_an_option_is_worded_for_people(ws_url: str) -> None:
    """A server with other limits than the client's: the refusal names the option and the
    limits in its units, never the protocol's field."""
    connection = await Connection.open(ws_url)
    try:
        await connection.register(name("ana"))
        with pytest.raises(ServerRefused) as refused:
            await connection.create_match(time_limit_s=90_000)
        assert refusal_words(refused.value) == (
            "the server refused --time: the time limit is 1 second to 24 hours there")
        with pytest.raises(ServerRefused) as refused:
            await connection.create_match(countdown_s=90)
        assert refusal_words(refused.value) == (
            "the server refused --countdown: the countdown is 0 seconds to 60 seconds there")
    finally:
        await connection.close()


# The host detaches and comes back later: within the grace period, or the lobby gives the
# seat up.
@pytest.mark.grace_s(60)
async def test_create_join_matches_watch_and_leave_the_result_in_the_terminal(
    ws_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    assert await gaps("matches") == 0
    assert "No open public match" in capsys.readouterr().out

    assert await gaps("create", "--players", "1", "--time", "5m", "--public", "--countdown",
                      "0", "--seed", KNOWN_SEED, "--detach") == 0
    out = capsys.readouterr().out
    code = created_code(out)
    assert f"Match {code} created: classic, 1 player(s), 5:00, win by time, public, unrated" in out
    assert f"gaps join {code}" in out
    assert "gaps bot --join" not in out  # no bot may sit: the host did not say --bots

    assert await gaps("matches") == 0  # a match with no free seat is not open any more
    assert code not in capsys.readouterr().out

    async def watch(app: MatchApp, pilot: Pilot[Any]) -> None:
        assert app.state.role == "spectator" and app.state.phase is Phase.LOBBY
        await pilot.press("ctrl+q")

    with monkeypatch.context() as other_user:  # eve, with a config of her own
        other_user.setenv("GAPS_CONFIG_DIR", str(tmp_path / "eve"))
        assert await gaps("register", name("eve"), "--server", ws_url) == 0
        capsys.readouterr()
        assert await gaps("watch", code, frontend=driving(watch)) == 0
        assert capsys.readouterr().out == ""

    async def play(app: MatchApp, pilot: Pilot[Any]) -> None:
        assert app.state.role == "player" and app.state.is_host  # the seat is ours again
        await pilot.press("r")
        await until(pilot, lambda: app.state.playing)
        await pilot.press("3", "h", "enter")
        await until(pilot, lambda: app.state.own is not None and app.state.own.moves_made == 1)
        await pilot.press("s", "s")
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        await pilot.press("q")

    assert await gaps("join", code.lower(), frontend=driving(play)) == 0
    out = capsys.readouterr().out
    assert f"Match {code}: final ranking" in out and "stopped" in out
    assert f"Seed {KNOWN_SEED}. Replay: gaps replay {code}" in out

    with monkeypatch.context() as other_user:  # eve comes to watch after the end
        other_user.setenv("GAPS_CONFIG_DIR", str(tmp_path / "eve"))
        assert await gaps("watch", code) == 0  # over: its result, from its replay
        out = capsys.readouterr().out
        assert f"Match {code} · classic · seed {KNOWN_SEED}" in out and "stopped" in out
        assert f"Match {code} is over. Its replay: gaps replay {code}" in out
    assert await gaps("join", code) == 0  # a player of it too
    assert f"Match {code} is over" in capsys.readouterr().out

    assert await gaps("join", "ZZZZZZ") == 1
    assert "no live match has code 'ZZZZZZ'" in capsys.readouterr().err


async def test_a_public_match_is_listed_and_leaving_it_says_how_to_come_back(
    ws_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0

    async def leave(app: MatchApp, pilot: Pilot[Any]) -> None:
        assert app.state.phase is Phase.LOBBY
        await pilot.press("ctrl+q")

    assert await gaps("create", "--public", "--players", "3", "--win-by", "score", "--bots",
                      frontend=driving(leave)) == 0
    out = capsys.readouterr().out
    code = created_code(out)
    assert f"You left match {code}; `gaps join {code}` takes your seat back" in out
    assert f"Race bots with:     gaps bot --join {code}" in out
    [listed_match] = [m for m in await http.open_matches(ws_url) if m.code == code]
    assert listed_match.bots is True
    assert await gaps("matches") == 0  # the seat stays taken in the lobby
    listed = capsys.readouterr().out
    assert "Open public matches" in listed
    assert code in listed and "1/3" in listed and "score" in listed


async def test_replay_downloads_a_finished_match_and_verify_checks_it(
    ws_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0

    async def move_and_go(app: MatchApp, pilot: Pilot[Any]) -> None:
        await pilot.press("r")
        await until(pilot, lambda: app.state.playing)
        await pilot.press("3", "h", "enter")
        await until(pilot, lambda: app.state.own is not None and app.state.own.moves_made == 1)
        app.submit("XYZ")
        assert "'XYZ' is not an action" in str(app.query_one(MessageLine).text)
        await pilot.press("ctrl+q")

    async def come_back_and_stop(app: MatchApp, pilot: Pilot[Any]) -> None:
        assert app.state.own is not None and app.state.own.moves_made == 1
        await pilot.press("s", "s")
        await until(pilot, lambda: app.state.phase is Phase.FINISHED)
        await pilot.press("ctrl+q")

    assert await gaps("create", "--players", "1", "--countdown", "0", "--seed", KNOWN_SEED,
                      frontend=driving(move_and_go)) == 0
    code = created_code(capsys.readouterr().out)
    assert await gaps("replay", code) == 1
    assert f"match {code} has not finished" in capsys.readouterr().err
    assert await gaps("join", code, frontend=driving(come_back_and_stop)) == 0
    capsys.readouterr()

    assert await gaps("replay", code) == 0
    out = capsys.readouterr().out
    assert f"to gaps-replay-{code}.json" in out
    assert "to par" in out and "par not solved yet" in out  # this server computes none
    path = tmp_path / f"gaps-replay-{code}.json"
    document = json.loads(path.read_text())
    assert document["match"]["seed"] == KNOWN_SEED

    assert await gaps("verify", str(path)) == 0
    out = capsys.readouterr().out
    assert "✓ The recorded result holds" in out and "1 actions replayed" not in out

    document["players"][0]["actions"][0]["score"] = 7
    document["players"][0]["placed"] = 3
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(document))
    assert await gaps("verify", str(forged)) == 1
    out = capsys.readouterr().out
    assert "✗ The recorded result does NOT hold (2 discrepancies)" in out
    assert "recorded score 7, the rules give 0" in out and "recorded placed 3" in out

    document["players"][0]["name"] = HOSTILE  # whoever wrote the file chose the names
    forged.write_text(json.dumps(document))
    assert await gaps("verify", str(forged)) == 1
    assert_inert(capsys.readouterr().out, f"1. {SHOWN}: 2 actions replayed",
                 f"- {SHOWN}: recorded placed 3")

    assert await gaps("verify", str(tmp_path / "missing.json")) == 2
    assert "cannot read" in capsys.readouterr().err
    assert await gaps("replay", "ZZZZZZ") == 1
    assert "no match has code ZZZZZZ" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "words"), [
    ("[" * 100_000, "not JSON: nested too deep"),
    ('{"a":' * 100_000, "not JSON: nested too deep"),
    ("[" * 100_000 + "]" * 100_000, "not JSON: nested too deep"),
    ("{not json", "not JSON: Expecting property name"),
    ("", "not JSON: Expecting value"),
])
async def test_verify_of_a_file_that_is_no_json_exits_2_and_says_why(
    content: str, words: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "replay.json"
    path.write_text(content)
    assert await gaps("verify", str(path)) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"gaps: {path} is {words}")
    assert "unexpected" not in captured.err and len(captured.err) < 300
    assert captured.out == ""


async def test_verify_of_a_file_that_is_no_text_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "replay.json"
    path.write_bytes(b"\xff\xfe[")
    assert await gaps("verify", str(path)) == 2
    assert "is not text: expected a JSON replay" in capsys.readouterr().err


async def test_practice_plays_offline_and_prints_the_deal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def practise(app: PracticeApp, pilot: Pilot[Any]) -> None:
        assert app.session.share_code == KNOWN_SEED
        await pilot.press("3", "h", "enter")
        assert app.session.game.moves_made == 1

    assert await gaps("practice", "--seed", KNOWN_SEED.lower(), frontend=driving(practise)) == 0
    out = capsys.readouterr().out
    assert f"Practice deal {KNOWN_SEED} (classic): playing, score 0" in out
    assert f"gaps practice --rules classic --seed {KNOWN_SEED}" in out
    assert "Your classic practice record: 0 games, 0 won, best - (kept in" in " ".join(out.split())


def test_the_config_file_is_where_the_docs_say(config_dir: Path) -> None:
    assert Config.load().path == config_dir / "config.json"


async def test_the_colours_switched_on_a_screen_are_kept_for_the_next(config_dir: Path) -> None:
    palettes = []

    async def switch(app: PracticeApp, pilot: Pilot[Any]) -> None:
        palettes.append(app.palette.name)
        app.action_switch_colours()
        await pilot.pause()
        assert app.current_theme.name == "gaps-light"
        await pilot.press("ctrl+q")

    async def look(app: PracticeApp, pilot: Pilot[Any]) -> None:
        palettes.append(app.palette.name)
        await pilot.press("ctrl+q")

    assert await gaps("practice", frontend=driving(switch)) == 0
    assert json.loads((config_dir / "config.json").read_text())["colours"] == "light"
    assert await gaps("practice", frontend=driving(look)) == 0
    assert palettes == ["dark", "light"]


# -- what a hostile server says is printed as typed ------------------------------------------


async def test_a_hostile_servers_names_and_refusals_are_printed_as_typed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    player = {"id": 7, "name": HOSTILE}
    async with Hostile({
        "register": [{"type": "registered", "player": player, "token": "t" * 43}],
        "hello": [{"type": "welcome", "player": player}],
        "join_match": [{"type": "error", "code": "no_such_match", "message": HOSTILE}],
    }) as hostile:
        assert await gaps("register", "ana", "--server", hostile.url) == 0
        assert await gaps("whoami") == 0
        assert_inert(capsys.readouterr().out, f"Registered {SHOWN} (player #7) on",
                     f"{SHOWN} (player #7) on {hostile.url}")
        assert await gaps("join", "K7QX2M") == 1
        assert capsys.readouterr().err == f"gaps: {SHOWN}\n"


async def test_the_open_matches_of_a_hostile_server_are_listed_as_typed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (code, code_shown), _ = HOSTILE_CODES.items()
    listed = {"code": code, "ruleset": "spaces", "players": 1, "max_players": 2, "rated": True,
              "time_limit_s": 60, "win_by": "score"}
    async with Hostile(pages={"/matches": page("matches", matches=[listed])}) as hostile:
        assert await gaps("matches", "--server", hostile.url) == 0
        assert_inert(capsys.readouterr().out, code_shown, "spaces", "1/2", "score")
        # Text where the protocol has a number or one of its words is no list of matches:
        # the client says where, and lists nothing.
        for member, value in (("max_players", "[i]2"), ("win_by", "\u202e[b]t")):
            hostile.pages["/matches"] = page("matches", matches=[listed | {member: value}])
            assert await gaps("matches", "--server", hostile.url) == 1
            shown = capsys.readouterr()
            assert shown.out == ""
            assert shown.err.startswith("gaps: the server broke the protocol: in its list of "
                                        "matches, "), shown.err
            assert f" - at `$.matches[0].{member}`" in shown.err
            assert_inert(shown.err)


async def test_a_quick_match_with_hostile_names_says_who_you_meet_as_typed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (code, code_shown), _ = HOSTILE_CODES.items()
    matched = {**lobby(code, seated(8, HOSTILE), kind="quick"), "type": "matched"}
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "quick_match": [{"type": "queued", "waiting": 1}, matched],
    }) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0

        async def leave(app: MatchApp, pilot: Pilot[Any]) -> None:
            await pilot.press("ctrl+q")  # asks first: the seat would be given up
            assert app.is_running and "Press ctrl+q again to quit" in str(
                app.query_one(MessageLine).text)
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running

        assert await gaps("play", frontend=driving(leave)) == 0
    assert_inert(capsys.readouterr().out, f"Matched with {SHOWN} in match {code_shown}.",
                 f"You left match {code_shown}; `gaps join {code_shown}` takes your seat")


async def test_a_hostile_servers_boards_and_ratings_are_printed_as_typed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    board = page("leaderboard", board="score", ruleset="classic", period="all", rank=3,
                 entries=[{"rank": 3, "player_id": 8, "name": HOSTILE, "best_score": 3,
                           "best_score_ms": 1000, "games": 1}])
    async with Hostile(pages={"/ratings/bob": page("rating", player={"name": HOSTILE}),
                              "/leaderboards/classic": board}) as hostile:
        assert await gaps("rating", "bob", "--server", hostile.url) == 0
        assert await gaps("leaderboard", "--around", "bob", "--server", hostile.url) == 0
        assert_inert(capsys.readouterr().out, f"{SHOWN} has no rating yet",
                     "bob is #3 on this board.")
        hostile.pages["/leaderboards/classic"] = {**board, "rank": None, "next_cursor": HOSTILE}
        assert await gaps("leaderboard", "--server", hostile.url) == 0
        assert_inert(capsys.readouterr().out, f"--cursor {SHOWN}")
        # Text where the protocol has a number is no board: the client says where.
        hostile.pages["/leaderboards/classic"] = {**board, "rank": HOSTILE}
        assert await gaps("leaderboard", "--around", "bob", "--server", hostile.url) == 1
        err = capsys.readouterr().err
        assert err.startswith("gaps: the server broke the protocol: in its leaderboard, ")
        assert " - at `$.rank`" in err
        assert_inert(err)


async def test_a_hostile_servers_tournaments_are_printed_as_typed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (code, code_shown), _ = HOSTILE_CODES.items()
    view = {"code": code, "name": HOSTILE, "ruleset": "classic", "rounds": 3,
            "max_players": 4, "round_time_limit_s": 600, "start_at": NEUTRAL_TIME,
            "deals_ready": True,
            "status": "open", "current_round": 0, "round_match": None,
            "entrants": [{"player_id": 8, "name": HOSTILE}]}
    standings = [{"rank": 1, "player_id": 8, "name": HOSTILE, "total_score": 0,
                  "total_time_ms": 0, "rounds_played": 0}]
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "tournament_create": [{"type": "tournament", "tournament": view}],
        "tournament_start": [{"type": "tournament", "tournament": view}],
    }, pages={"/tournaments/Q4M2ZK": page("standings", tournament=view,
                                          standings=standings)}) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0
        capsys.readouterr()
        assert await gaps("tournament", "create", "--name", "Cup") == 0
        assert_inert(capsys.readouterr().out, f"Tournament {SHOWN} ({code_shown}) created",
                     "up to 4 entrants.",
                     f"It starts by itself at {local_time(NEUTRAL_TIME)}.",
                     f"gaps tournament join {code_shown}")
        assert await gaps("tournament", "standings", "Q4M2ZK") == 0
        assert_inert(capsys.readouterr().out, f"Tournament {SHOWN} ({code_shown})",
                     f"Entrants (1/4): {SHOWN}")
        assert await gaps("tournament", "start", "Q4M2ZK") == 0
        assert_inert(capsys.readouterr().out, f"Tournament {SHOWN} (Q4M2ZK) started: 3 round(s)")
        # Text where the protocol has a number or a time is no tournament: the client stops.
        for member in ("max_players", "start_at"):
            hostile.answers["tournament_create"] = [
                {"type": "tournament", "tournament": view | {member: "[i]4" + HOSTILE}}]
            assert await gaps("tournament", "create", "--name", "Cup") == 1
            err = capsys.readouterr().err
            assert err.startswith("gaps: the server broke the protocol: in a 'tournament' "
                                  "message, "), err
            assert f" - at `$.tournament.{member}`: " in err, err
            assert_inert(err)
            hostile.pages["/tournaments/Q4M2ZK"] = page(
                "standings", tournament=view | {member: "[i]4" + HOSTILE}, standings=standings)
            assert await gaps("tournament", "standings", "Q4M2ZK") == 1
            err = capsys.readouterr().err
            assert err.startswith("gaps: the server broke the protocol: in its standings, ")
            assert f" - at `$.tournament.{member}`" in err, err
            assert_inert(err)


async def test_a_replay_files_code_and_seed_are_printed_as_typed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps({"format": "gaps-replay/1", "match": {
        "code": HOSTILE, "ruleset": "classic", "seed": HOSTILE}, "players": []}))
    assert await gaps("verify", str(path)) == 1
    assert_inert(capsys.readouterr().out, f"Match {SHOWN} · ", f"seed {SHOWN}")


@pytest.mark.parametrize(("summary", "row", "field"), [
    ({"time_limit_s": "600"}, {}, "Expected `int`, got `str` - at `$.match.time_limit_s`"),
    ({}, {"placed": None}, "Expected `int`, got `null` - at `$.players[1].placed`"),
])
async def test_a_hostile_matchs_malformed_number_is_a_protocol_error_naming_it(
    summary: dict[str, Any], row: dict[str, Any], field: str, capsys: pytest.CaptureFixture[str],
) -> None:
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "join_match": [lobby("K7QX2M", seated(8, "bob", **row), **summary)],
    }) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0
        capsys.readouterr()
        assert await gaps("join", "K7QX2M") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"gaps: the server broke the protocol: in a 'joined' message, {field}: "
                          "'{\"type\": \"joined\"")
    assert err.count("\n") == 1, err


async def quit_twice(app: MatchApp, pilot: Pilot[Any]) -> None:
    await pilot.press("ctrl+q")  # asks first
    assert app.is_running
    await pilot.press("ctrl+q")


@pytest.mark.grace_s(60)
async def test_watching_a_match_you_sit_in_opens_the_spectator_view_and_keeps_your_seat(
    ws_url: str, capsys: pytest.CaptureFixture[str],
) -> None:
    """Bug 6 of issue 13 (point 3 of its remaining ones): `gaps watch` by a seated player
    opened their seat, and leaving it said "You left match…"."""
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    assert await gaps("create", "--players", "2", "--countdown", "0", "--detach") == 0
    code = created_code(capsys.readouterr().out)

    async def watch(app: MatchApp, pilot: Pilot[Any]) -> None:
        assert app.state.role == "spectator" and app.state.spectators == 1
        assert list(app.state.players) == [app.state.you_id]  # seated, and watching
        await pilot.press("ctrl+q")  # a spectator leaves at once: nothing of theirs ends

    assert await gaps("watch", code, frontend=driving(watch)) == 0
    assert capsys.readouterr().out == ""

    async def seat(app: MatchApp, pilot: Pilot[Any]) -> None:
        assert app.state.role == "player" and app.state.is_host  # the seat is still ours
        await quit_twice(app, pilot)

    assert await gaps("join", code, frontend=driving(seat)) == 0
    assert f"You left match {code}" in capsys.readouterr().out


async def test_quitting_after_your_game_ended_says_the_others_still_play(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Bug 6 of issue 13: it said "You left match…, takes your seat back" instead."""
    game = Game(Seed.parse("AAAA-BBBB-CCCC-DDDD"), "classic")
    game.stop()
    snapshot = racing("K7QX2M", game, seated(8, "bob", status="playing"))
    snapshot["players"][0].update(finished=True, end_reason="stopped", finish_ms=9000)
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "join_match": [snapshot],
    }) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0
        assert await gaps("join", "K7QX2M", frontend=driving(quit_twice)) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Your game in match K7QX2M is over (stopped, score 0); the others still play. " \
        "`gaps watch K7QX2M` follows them; once it is over, `gaps replay K7QX2M` has the " \
        "ranking." in out
    assert "takes your seat back" not in out


@pytest.mark.parametrize("same_deal", [False, True])
async def test_a_rematch_offered_by_another_player_is_shown_and_taken_with_its_key(
    ws_url: str, same_deal: bool, capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 13: ana asks for a rematch; bob's result screen shows her offer, and his key
    (n for a new deal, d for the same deal) takes his seat in that very match."""
    assert await gaps("register", name("bob"), "--server", ws_url) == 0
    capsys.readouterr()
    ana = await Connection.open(ws_url)
    await ana.register(name("ana"))
    created = await ana.create_match(max_players=2, countdown_s=0, win_by="score")
    code = created.match.code
    key = "d" if same_deal else "n"
    offered: list[RematchJoined] = []

    async def script(app: MatchApp, pilot: Pilot[Any]) -> None:
        if app.state.code != code:  # the rematch: both seated, as ana offered it
            assert app.state.code == offered[0].match.code
            assert len(app.state.players) == 2 and app.state.summary is not None
            assert app.state.summary.rated is not same_deal
            await quit_twice(app, pilot)
            return
        await until(pilot, lambda: len(app.state.players) == 2)
        await pilot.press("r")
        await ana.ready(code)
        await until(pilot, lambda: app.state.playing)
        await ana.request(Play(code=code, seq=1, action="stop"))
        await pilot.press("s", "s")
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        offered.append(await ana.rematch(code, same_seed=same_deal))
        new_code = offered[0].match.code
        await until(pilot, lambda: same_deal in app.state.rematches)
        await pilot.pause()
        reveal = screen_text(app)
        what = "the same deal, unrated" if same_deal else "a new deal"
        assert f"offered a rematch ({what}): match {new_code}. {key} takes your seat in it." \
            in " ".join(reveal.split())
        await pilot.press(key)

    try:
        assert await gaps("join", code, frontend=driving(script)) == 0
    finally:
        await ana.close()
    new_code = offered[0].match.code
    out = " ".join(capsys.readouterr().out.split())
    assert f"Rematch of {code} (" in out and f"match {new_code}. The others were told" in out


@pytest.mark.parametrize(("key", "same_deal"), [("n", False), ("d", True)])
async def test_a_rematch_the_server_cannot_offer_creates_the_same_match_and_prints_its_code(
    key: str, same_deal: bool, capsys: pytest.CaptureFixture[str],
) -> None:
    """A server that does not know ``rematch`` (or no longer has the finished match): the
    same options, created afresh (with the revealed seed for the same deal, which makes it
    unrated); the others join by its code."""
    seed = "AAAA-BBBB-CCCC-DDDD"
    snapshot = racing("K7QX2M", Game(Seed.parse(seed), "spaces"), seated(8, "bob"),
                      time_limit_s=300, win_by="score")
    ended = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "match_ended",
             "t_ms": 300_000, "seed": seed, "commitment": "c0ffee" * 10 + "c0ff", "ranking": [
                 {**seated(8, "bob"), "rank": 1, "end_reason": "time", "finish_ms": 300_000},
                 {**seated(ME["id"], "me"), "rank": 2, "end_reason": "time",
                  "finish_ms": 300_000}]}
    created = {**lobby("R3MTCH", max_players=2), "type": "match_created"}
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "join_match": [snapshot], "create_match": [created],
    }) as hostile:
        async def script(app: MatchApp, pilot: Pilot[Any]) -> None:
            if app.state.code == "R3MTCH":
                await quit_twice(app, pilot)
                return
            await hostile.push(ended)
            while not isinstance(app.screen, RankingScreen):
                await pilot.pause(0.01)
            await pilot.press(key)

        assert await gaps("register", "me", "--server", hostile.url) == 0
        assert await gaps("join", "K7QX2M", frontend=driving(script)) == 0
        [request] = hostile.sent("create_match")
    expected = {"ruleset": "spaces", "time_limit_s": 300, "win_by": "score", "public": False,
                "max_players": 2} | ({"seed": seed} if same_deal else {})
    assert {name: request.get(name) for name in expected} == expected
    assert request.get("seed") == (seed if same_deal else None)  # null: the server deals
    what = "the same deal, unrated" if same_deal else "a new deal"
    out = " ".join(capsys.readouterr().out.split())
    assert f"Rematch of K7QX2M ({what}): match R3MTCH. Others join with: gaps join R3MTCH" in out


def test_bot_level_4_is_the_solver_bot() -> None:
    options = build_parser().parse_args(["bot", "--join", "K7QX2M", "--level", "4"])
    assert options.level == 4
    assert bot_for_level(options.level, seed=0).name == "solver"
