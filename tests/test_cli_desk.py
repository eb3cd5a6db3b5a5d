"""The tournament director's desk in the terminal client: exports saved to a file or
stdout, ended tournaments listed, winnable deals waited for and their commitment shown,
and every revealed seed checked against the commitment: a tampered one is said loudly,
and the command fails."""

from __future__ import annotations

import csv
import functools
import io
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from rich.console import Console

from client_cli.connection import Connection
from client_cli.tournament import TournamentFollower
from gaps import Seed
from gaps.commitment import deals_commitment
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.views import TournamentView
from server.app import Server
from tests.cli_support import ME, Hostile, gaps, no_screen, page, tournament_event, typed
from tests.client import Client
from tests.fake_clock import FakeClock
from tests.test_cli_competition import name, tournament_code, wait_for
from tests.test_tournament import play_round

pytestmark = pytest.mark.usefixtures("config_dir")

SEEDS = [Seed(bytes([n]) * 10) for n in (1, 2)]
#: What a server that changed round 2's deal after committing would reveal.
TAMPERED = str(Seed(bytes([9]) * 10))


def committed_view(**fields: Any) -> dict[str, Any]:
    """A tournament of two rounds committed to ``SEEDS``, none revealed yet."""
    return {
        "id": 3, "code": "Q4M2ZK", "name": "Cup", "ruleset": "classic", "rounds": 2,
        "max_players": 4, "round_time_limit_s": 60, "start_at": None, "status": "running",
        "current_round": 1, "round_match": None, "deals": "any", "deals_ready": True,
        "commitment": deals_commitment(SEEDS),
        "round_commitments": [seed.commitment for seed in SEEDS], "seeds": [None, None],
        "entrants": [{"player_id": ME["id"], "name": "me"}], **fields,
    }


def printed(out: Console) -> str:
    return " ".join(str(out.file.getvalue()).split())  # type: ignore[attr-defined]


async def test_each_revealed_seed_is_checked_as_it_comes_and_a_tampered_one_said_loudly() -> None:
    out = Console(file=io.StringIO(), width=120)
    connection = cast(Connection, SimpleNamespace(player=Player(**ME)))
    follower = TournamentFollower(connection, typed(TournamentView, **committed_view()),
                                  frontend=no_screen(), out=out)
    event = functools.partial(tournament_event, "Q4M2ZK")

    await follower._handle(event(1, "round_ended", round=1, match="R1", seed=str(SEEDS[0]),
                                 standings=[], next_round_at=None))
    assert f"Round 1's deal: {SEEDS[0]}, as committed." in printed(out)
    assert follower.mismatches == []
    await follower._handle(event(2, "round_ended", round=2, match="R2", seed=TAMPERED,
                                 standings=[], next_round_at=None))
    shown = printed(out)
    assert "THE DEALS DO NOT MATCH THE COMMITMENT" in shown
    assert f"round 2: seed {TAMPERED} hashes to" in shown
    await follower._handle(event(3, "tournament_ended", standings=[], podium=[],
                                 seeds=[str(SEEDS[0]), TAMPERED]))
    assert len(follower.mismatches) == 2  # the round's, then the whole list's
    assert "the revealed seeds hash to" in follower.mismatches[1]


async def test_a_tampered_seed_makes_standings_and_following_fail_loudly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    honest = committed_view(status="finished", current_round=2,
                            seeds=[str(seed) for seed in SEEDS])
    forged = {**honest, "seeds": [str(SEEDS[0]), TAMPERED]}
    standings = [{"rank": 1, "player_id": ME["id"], "name": "me", "total_score": 12,
                  "total_time_ms": 9000, "rounds_played": 2}]
    async with Hostile({
        "register": [{"type": "registered", "player": ME, "token": "t" * 43}],
        "tournament_join": [{"type": "tournament", "tournament": forged, "seq": 0}],
        "tournament_standings": [{"type": "standings", "tournament": forged,
                                  "standings": standings}],
    }, pages={"/tournaments/Q4M2ZK": page("standings", tournament=honest,
                                          standings=standings)}) as hostile:
        assert await gaps("register", "me", "--server", hostile.url) == 0
        capsys.readouterr()
        assert await gaps("tournament", "standings", "Q4M2ZK") == 0
        out = capsys.readouterr().out
        assert "all 2 revealed, and they match it" in out and "DO NOT MATCH" not in out
        hostile.pages["/tournaments/Q4M2ZK"] = page("standings", tournament=forged,
                                                    standings=standings)
        assert await gaps("tournament", "standings", "Q4M2ZK") == 1
        out = capsys.readouterr().out
        assert "THE DEALS DO NOT MATCH THE COMMITMENT" in out and TAMPERED in out
        assert await gaps("tournament", "join", "Q4M2ZK") == 1  # its final standings too
        out = capsys.readouterr().out
        assert "final standings" in out and "THE DEALS DO NOT MATCH THE COMMITMENT" in out


async def test_exports_are_saved_to_a_file_or_stdout_and_ended_tournaments_listed(
    server: Server, ws_url: str, capsys: pytest.CaptureFixture[str], clock: FakeClock,
    tmp_path: Path,
) -> None:
    ana = name("ana")
    assert await gaps("register", ana, "--server", ws_url) == 0
    assert await gaps("tournament", "create", "--name", "Cup", "--rounds", "1",
                      "--players", "1") == 0
    out = capsys.readouterr().out
    code = tournament_code(out)
    assert re.search(r"Deals: committed, SHA-256 [0-9a-f]{64}; each seed is revealed", out)
    assert await gaps("tournament", "export", code) == 0
    saved = tmp_path / f"{code}-standings.csv"  # the test's working directory
    assert f"Saved tournament {code}'s standings to {code}-standings.csv" in \
        capsys.readouterr().out
    header = next(csv.reader(io.StringIO(saved.read_text(encoding="utf-8"))))
    assert header[:3] == ["rank", "name", "player_id"]
    assert await gaps("tournament", "export", code.lower(), "--format", "json", "--rounds",
                      "-o", "-") == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["export"], document["rows"]) == ("rounds", [])
    assert await gaps("tournament", "export", code, "--round", "1") == 1
    assert f"tournament {code} has no round 1 yet" in capsys.readouterr().err
    assert await gaps("tournament", "export", code, "--format", "ics") == 1
    assert "has no start time" in capsys.readouterr().err
    assert await gaps("tournament", "export", code, "--format", "ics", "--rounds") == 2
    assert "it has no rounds" in capsys.readouterr().err

    assert await gaps("tournament", "create", "--name", "Later", "--start-in", "1m") == 0
    later = tournament_code(capsys.readouterr().out)
    target = tmp_path / "cal" / "later.ics"
    target.parent.mkdir()
    assert await gaps("tournament", "export", later, "--format", "ics", "-o", str(target)) == 0
    capsys.readouterr()
    assert target.read_bytes().startswith(b"BEGIN:VCALENDAR\r\n")
    # Past the start, which the command counted from the real wall clock: the server's
    # fake one stood still meanwhile, a few seconds behind on a busy machine. Nobody
    # entered: cancelled, and listed as ended.
    clock.advance(120)
    await wait_for(lambda: server.tournaments.live[later].state.status == "cancelled")
    assert await gaps("tournament", "list", "--ended") == 0
    out = capsys.readouterr().out
    assert later in out and "cancelled" in out and code not in out
    assert await gaps("tournament", "list", "--all") == 0
    out = capsys.readouterr().out
    assert later in out and code in out
    assert await gaps("tournament", "list") == 0
    out = capsys.readouterr().out
    assert code in out and later not in out and "gaps tournament list --ended" in out


async def test_a_winnable_tournament_is_created_once_its_deals_are_committed(
    ws_url: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    assert await gaps("tournament", "create", "--winnable", "--rounds", "2") == 0
    out = capsys.readouterr().out
    code = tournament_code(out)
    found = re.search(r"Deals \(winnable: each proven so by the solver\): committed, SHA-256 "
                      r"([0-9a-f]{64})", " ".join(out.split()))
    assert found is not None, out
    assert await gaps("tournament", "standings", code) == 0
    assert found[1] in capsys.readouterr().out


async def test_a_finished_tournaments_standings_say_its_deals_match_the_commitment(
    ws_url: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await gaps("register", name("ana"), "--server", ws_url) == 0
    assert await gaps("tournament", "create", "--rounds", "1", "--players", "1") == 0
    code = tournament_code(capsys.readouterr().out)
    bob = await Client.connect(ws_url)
    try:
        await bob.register(name("bob"))
        await bob.ok("tournament_join", code=code)
        assert await gaps("tournament", "start", code) == 0  # ana hosts; bob plays
        await play_round(bob, 1, bot_level=None, rng=random.Random(1))
        await bob.event("tournament_ended")
    finally:
        await bob.close()
    capsys.readouterr()
    assert await gaps("tournament", "standings", code) == 0
    assert "all 1 revealed, and they match it" in " ".join(capsys.readouterr().out.split())
