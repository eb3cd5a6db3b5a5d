"""Tables in the room from the terminal client: ``gaps tournament arbiter``, ``table
[--off]``, ``enter --round N ... --time MM:SS [--won]`` and ``sheet --round N [--pdf]``
against the real server; a follower at a table takes no seat in the round's match and
prints the results entered, marked; the standings mark entered results."""

from __future__ import annotations

import argparse
import functools
import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from rich.console import Console

from client_cli import arguments
from client_cli.connection import Connection
from client_cli.tables import standings_table
from client_cli.tournament import TournamentFollower
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.views import StandingsRow, TournamentView
from server.app import Server
from tests.cli_support import ME, gaps, no_screen, tournament_event, typed
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.test_cli_competition import name, tournament_code
from tests.test_cli_desk import committed_view, printed

pytestmark = pytest.mark.usefixtures("config_dir")


@pytest.mark.parametrize(("text", "ms"), [
    ("12:34", 754_000), ("0:05", 5000), ("1:02:03", 3_723_000), ("6:40.5", 400_500),
    (" 90:00 ", 5_400_000),
])
def test_a_tables_time_reads_as_a_clock_shows_it(text: str, ms: int) -> None:
    assert arguments.clock_time(text) == ms


@pytest.mark.parametrize("text", ["12", "12:60", "1:60:00", "ten", "-1:00", "1:2"])
def test_a_time_that_is_no_clocks_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a time"):
        arguments.clock_time(text)


async def test_the_host_and_an_arbiter_run_tables_from_the_command_line(
    server: Server, ws_url: str, connect: Callable[[], Awaitable[Client]],
    capsys: pytest.CaptureFixture[str], tmp_path: Path, clock: FakeClock,
) -> None:
    assert await gaps("register", name("host"), "--server", ws_url) == 0
    assert await gaps("tournament", "create", "--rounds", "1", "--round-time", "10m") == 0
    code = tournament_code(capsys.readouterr().out)
    arb, cat = await connect(), await connect()
    arb_name = name("arb")
    await arb.register(arb_name)
    await cat.register(name("cat"))
    await cat.ok("tournament_join", code=code)
    cat_name = (await cat.ok("tournament_standings", code=code))["standings"][0]["name"]
    assert await gaps("tournament", "arbiter", code, arb_name) == 0
    assert f"{arb_name} is an arbiter of tournament {code}" in capsys.readouterr().out
    assert [n for _, n in server.tournaments.live[code].state.arbiters] == [arb_name]

    assert await gaps("tournament", "table", code, cat_name) == 0
    assert f"{cat_name} plays at a table from the next round" in capsys.readouterr().out
    assert await gaps("tournament", "sheet", code, "--round", "1") == 1
    assert "round 1 of tournament" in capsys.readouterr().err
    assert await gaps("tournament", "start", code) == 0
    await cat.event("round_starting", round=1)
    capsys.readouterr()

    assert await gaps("tournament", "sheet", code, "--round", "1") == 0
    sheet = capsys.readouterr().out
    assert "round 1" in sheet.lower() and code in sheet
    pdf = tmp_path / "round-1.pdf"
    assert await gaps("tournament", "sheet", code, "--round", "1", "--pdf", str(pdf),
                      "--paper", "letter") == 0
    assert pdf.read_bytes().startswith(b"%PDF")

    assert await gaps("tournament", "enter", code, "--round", "1", cat_name, "--placed", "30",
                      "--redeals", "3", "--time", "6:40") == 1
    assert "redeals" in capsys.readouterr().err
    assert await gaps("tournament", "enter", code, "--round", "1", cat_name, "--placed", "30",
                      "--redeals", "1", "--time", "6:40") == 0
    out = capsys.readouterr().out
    assert f"✎ {cat_name}, round 1 (entered at a table): 25 pts" in out
    assert "6:40.0" in out
    # A round of tables only ends by its time limit: the clock is the server's, faked.
    clock.advance(600)
    await cat.event("tournament_ended")
    assert await gaps("tournament", "standings", code) == 0
    assert f"{cat_name} ✎ entered: round 1" in " ".join(capsys.readouterr().out.split())


def test_the_standings_mark_an_entered_result() -> None:
    out = Console(file=io.StringIO(), width=160)
    rows = [typed(StandingsRow, **row) for row in (
        {"rank": 1, "name": "cat", "player_id": 3, "total_score": 58, "total_time_ms": 5000,
         "rounds_played": 1, "entered": True, "entered_rounds": [1]},
        {"rank": 2, "name": "ana", "player_id": 1, "total_score": 40, "total_time_ms": 5000,
         "rounds_played": 1, "entered": False, "entered_rounds": []},
    )]
    out.print(standings_table(rows, title="Standings"))
    shown = printed(out)
    assert "cat ✎ entered: round 1" in shown and "ana ✎" not in shown


async def test_a_follower_at_a_table_takes_no_seat_and_prints_what_is_entered() -> None:
    out = Console(file=io.StringIO(), width=160)
    connection = cast(Connection, SimpleNamespace(player=Player(**ME)))
    view = typed(TournamentView, **committed_view(round_match=None))
    follower = TournamentFollower(connection, view, frontend=no_screen(), out=out)
    event = functools.partial(tournament_event, "Q4M2ZK")

    me = str(ME["name"])
    await follower._handle(event(1, "entrant_table", player_id=ME["id"], name=me,
                                 at_table=True, from_round=1))
    starting = event(2, "round_starting", round=1, match="R1XYZ2", countdown_ms=0,
                     tables=[me.upper()])
    follower._on_message(starting)  # no join is sent for a table's player
    assert follower.joins == {}
    await follower._handle(starting)
    await follower._handle(event(3, "result_entered", round=1, player_id=ME["id"], name=me,
                                 score=25, placed=30, redeals=1, finish_ms=400_000, won=False,
                                 entered=True, entered_by="arb", replaced=True, standings=None))
    shown = printed(out)
    assert f"{me} plays at a table in the room from round 1" in shown
    assert "you play it at a table in the room" in shown
    assert f"✎ {me}, round 1 (entered at a table): 25 pts · 30 placed, 1 redeal · 6:40.0" \
        " (replacing the one entered before)" in shown
    assert follower.played == set()
