"""The log lines an operator follows a match and a tournament by (docs/operations.md,
Logs): one when a match is created, starts, ends (with its result); one when a tournament
starts, deals a round, ends a round, finishes (with its podium) or is cancelled."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest

from tests.fake_clock import FakeClock
from tests.races import Connect, registered, start_race, stop_all


def lines(caplog: pytest.LogCaptureFixture, logger: str) -> dict[str, dict[str, Any]]:
    """Each message ``logger`` logged, with its fields (the last one of each message)."""
    return {
        record.getMessage(): {k: v for k, v in vars(record).items() if k not in STANDARD}
        for record in caplog.records
        if record.name == logger
    }


STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


async def test_a_match_is_logged_when_created_started_and_ended_with_its_result(
    connect: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gaps.lobby")
    ana, bob = await registered(connect, "ana", "bob")
    code = await start_race([ana, bob])
    said = await stop_all([ana, bob], code)
    await asyncio.sleep(0)
    logged = lines(caplog, "gaps.lobby")
    assert logged["match created"] == {
        "match": code, "kind": "race", "ruleset": "classic", "max_players": 2,
        "host": ana.player_id, "rated": True, "tournament": None, "round": None,
    }  # fmt: skip
    assert logged["match started"] == {
        "match": code, "kind": "race", "ruleset": "classic", "rated": True,
        "players": [{"player": ana.player_id, "name": "ana"},
                    {"player": bob.player_id, "name": "bob"}],
    }  # fmt: skip
    ended = logged["match ended"]
    assert (ended["match"], ended["kind"], ended["rated"]) == (code, "race", True)
    assert ended["duration_s"] == 0  # the fake clock did not move
    # The result the players were told, best first.
    assert [(row["rank"], row["name"], row["score"], row["end"]) for row in ended["ranking"]] == [
        (row["rank"], row["name"], row["score"], row["end_reason"]) for row in said["ranking"]
    ]
    assert {row["end"] for row in ended["ranking"]} == {"stopped"}


async def test_a_tournament_is_logged_at_its_start_each_round_and_its_end(
    connect: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gaps.tournament")
    ana, bob = await registered(connect, "ana", "bob")
    code = (await ana.ok("tournament_create", name="Cup", rounds=1, max_players=2))[
        "tournament"
    ]["code"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    await ana.ok("tournament_start", code=code)
    match = (await ana.event("round_starting", round=1))["match"]
    for client in (ana, bob):
        await client.ok("join_match", code=match)  # dealt at once: its countdown is 0
    for client in (ana, bob):
        assert (await client.act(match, "stop"))["type"] == "action_ok"
    await ana.event("tournament_ended")
    await asyncio.sleep(0)
    logged = lines(caplog, "gaps.tournament")
    assert logged["tournament started"] == {"tournament": code, "rounds": 1, "entrants": 2}
    assert logged["tournament round dealt"] == {"tournament": code, "round": 1, "match": match}
    assert logged["tournament round ended"] == {
        "tournament": code, "round": 1, "match": match, "next_round_at": None
    }
    podium = logged["tournament finished"]["podium"]
    assert {row["name"] for row in podium} == {"ana", "bob"}
    assert {row["rank"] for row in podium} <= {1, 2}
    assert set(podium[0]) == {"rank", "player_id", "name", "total_score"}


async def test_a_cancelled_tournament_is_logged_with_its_reason(
    connect: Connect, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gaps.tournament")
    (ana,) = await registered(connect, "ana")
    start_at = (clock.now() + timedelta(seconds=1)).isoformat()
    code = (await ana.ok("tournament_create", rounds=1, start_at=start_at))["tournament"]["code"]
    clock.advance(2)
    async with asyncio.timeout(10):
        while "tournament cancelled" not in lines(caplog, "gaps.tournament"):
            await asyncio.sleep(0.01)
    cancelled = lines(caplog, "gaps.tournament")["tournament cancelled"]
    assert cancelled["tournament"] == code and cancelled["reason"]
    assert (await ana.ok("tournament_standings", code=code))["tournament"]["status"] == (
        "cancelled"
    )
