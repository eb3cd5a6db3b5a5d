"""The host's hand in the terminal client: ``gaps tournament announce``, ``pause``,
``resume``, ``cancel --reason``, ``reinstate``, and create's ``--countdown``, ``--break``
and ``--late-entry-until``; and what a follower prints of announcements, pauses,
reinstated and late entrants."""

from __future__ import annotations

import functools
import io
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import cast

import pytest
from rich.console import Console

from client_cli.connection import Connection
from client_cli.tournament import TournamentFollower
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.views import TournamentView
from server.app import Server
from tests.cli_support import ME, gaps, no_screen, tournament_event, typed
from tests.client import Client
from tests.test_cli_competition import name, tournament_code
from tests.test_cli_desk import committed_view, printed

pytestmark = pytest.mark.usefixtures("config_dir")


async def test_the_host_steers_a_tournament_from_the_command_line(
    server: Server, ws_url: str, connect: Callable[[], Awaitable[Client]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await gaps("register", name("host"), "--server", ws_url) == 0
    assert await gaps("tournament", "create", "--rounds", "2", "--late-entry-until", "3") == 2
    assert "--late-entry-until 3 is past its 2 round(s)" in capsys.readouterr().err
    assert await gaps("tournament", "create", "--break", "2h") == 2
    assert "the break is at most" in capsys.readouterr().err
    assert await gaps("tournament", "create", "--rounds", "3", "--countdown", "5s",
                      "--break", "2m", "--late-entry-until", "2") == 0
    code = tournament_code(capsys.readouterr().out)
    options = server.tournaments.live[code].state.options
    assert (options.countdown_s, options.break_s, options.late_entry_until_round) == (5, 120, 2)

    # Text is taken as typed or refused, never folded (docs/protocol.md, Transport).
    assert await gaps("tournament", "announce", code, "Coffee  first") == 2
    assert "holds two spaces in a row" in capsys.readouterr().err
    assert await gaps("tournament", "announce", code, "Coffee first") == 0
    assert f"Announced to tournament {code}: Coffee first" in capsys.readouterr().out
    assert await gaps("tournament", "announce", code, "   ") == 2
    assert await gaps("tournament", "standings", code) == 0
    assert "The host says" in capsys.readouterr().out
    assert await gaps("tournament", "pause", code) == 1
    assert "only a running one is paused" in capsys.readouterr().err

    bob = await connect()
    await bob.register(name("bob"))
    await bob.ok("tournament_join", code=code)
    bob_view = (await bob.ok("tournament_standings", code=code))["tournament"]
    bob_name = bob_view["entrants"][0]["name"]
    assert await gaps("tournament", "remove", code, bob_name, "--reason", "phone") == 0
    assert await gaps("tournament", "reinstate", code, bob_name) == 0
    assert "is back in tournament" in capsys.readouterr().out
    assert await gaps("tournament", "reinstate", code, bob_name) == 1
    assert "nothing to reinstate" in capsys.readouterr().err

    assert await gaps("tournament", "start", code) == 0
    assert await gaps("tournament", "pause", code) == 0
    assert "is paused" in capsys.readouterr().out
    assert await gaps("tournament", "resume", code) == 0
    assert await gaps("tournament", "cancel", code, "--reason", "the hall closes") == 0
    assert f"Tournament {code} was cancelled: the hall closes" in capsys.readouterr().out
    assert await gaps("tournament", "standings", code) == 0
    assert "cancelled: the hall closes" in capsys.readouterr().out


async def test_a_follower_says_announcements_pauses_and_entrants_back_or_late() -> None:
    out = Console(file=io.StringIO(), width=160)
    connection = cast(Connection, SimpleNamespace(player=Player(**ME)))
    said = {"text": "Round 2 after [bold]coffee[/bold]", "at": "2026-11-29T18:05:00.000Z"}
    view = typed(TournamentView, **committed_view(announcements=[said], round_match=None))
    follower = TournamentFollower(connection, view, frontend=no_screen(), out=out)
    event = functools.partial(tournament_event, "Q4M2ZK")

    await follower._catch_up(view)
    await follower._catch_up(view)  # a snapshot again: each announcement is said once
    await follower._handle(event(1, "tournament_announcement", text="Last round!",
                                 at="2026-11-29T19:00:00.000Z"))
    await follower._handle(event(2, "tournament_paused", after_round=1, round_in_play=False))
    assert "Paused: the next round waits" in str(follower.waiting_for())
    await follower._handle(event(3, "entrant_joined", player_id=5, name="cat", bot=False,
                                 late=True, from_round=2))
    await follower._handle(event(4, "entrant_reinstated", player_id=5, name="cat",
                                 from_round=2))
    await follower._handle(event(5, "tournament_resumed", next_round_at=None))
    shown = printed(out)
    assert shown.count("Round 2 after [bold]coffee[/bold]") == 1  # as typed, not markup
    assert "Last round!" in shown
    assert "The host paused the tournament now" in shown
    assert "late: plays from round 2" in shown
    assert "cat is back (the host reinstated them): plays from round 2" in shown
    assert "The host resumed the tournament." in shown
    assert follower.view.paused is False
