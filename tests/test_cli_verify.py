"""client_cli.verify: a real replay from the server holds; every kind of tampering is caught."""

from __future__ import annotations

import asyncio
import copy
import functools
import random
from typing import Any

import pytest

from client_cli import http
from client_cli.connection import Connection
from client_cli.verify import verify
from gaps import Game, Seed, parse_action


@functools.cache
def winning_line(ruleset: str = "classic") -> tuple[str, tuple[str, ...]]:
    """A seed's share code and the actions of a random game that wins it."""
    for number in range(10_000):
        seed = Seed(number.to_bytes(10, "big"))
        game = Game(seed, ruleset)
        actions = game.random_playout(random.Random(number))
        if game.is_won():
            return str(seed), tuple(str(action) for action in actions)
    raise AssertionError("no winning random game in 10,000 deals")


def local_replay(win_by: str = "time") -> dict[str, Any]:
    """A replay document built with gaps alone: ana wins, bob makes 3 moves and stops."""
    seed_text, line = winning_line()
    seed = Seed.parse(seed_text)
    players = []
    for player_id, (name, actions, rank) in enumerate(
        [("ana", list(line), 1), ("bob", list(line[:3]) + ["stop"], 2)], start=1
    ):
        game = Game(seed, "classic")
        recorded = []
        for seq, action in enumerate(actions, start=1):
            game.push(parse_action(action))
            recorded.append({"seq": seq, "action": action, "t_ms": 100 * seq,
                             "score": game.score})
        players.append({
            "player_id": player_id, "name": name, "rank": rank, "score": game.score,
            "placed": game.placed, "redeals": game.redeals_used, "moves": game.moves_made,
            "won": game.is_won(), "end_reason": "won" if game.is_won() else "stopped",
            "finish_ms": 100 * len(actions), "actions": recorded,
        })
    return {
        "format": "gaps-replay/1",
        "match": {"id": 1, "code": "K7QX2M", "ruleset": "classic", "win_by": win_by,
                  "rated": True, "seed": seed_text, "commitment": seed.commitment,
                  "started_at": "2026-01-01T00:00:00+00:00",
                  "ended_at": "2026-01-01T00:01:00+00:00"},
        "players": players,
    }


def test_a_consistent_replay_holds() -> None:
    report = verify(local_replay())
    assert report.holds, report.discrepancies
    assert [(p.name, p.won, p.rank) for p in report.players] == [("ana", True, 1),
                                                                  ("bob", False, 2)]
    ana = report.players[0]
    assert ana.score == 48 - 5 * ana.redeals + (10 if ana.redeals == 0 else 0)


def tampered(change: Any) -> list[str]:
    document = local_replay()
    change(document)
    report = verify(document)
    assert not report.holds
    return report.discrepancies


def test_a_changed_score_after_an_action_is_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["actions"][1]["score"] += 5
    [found] = tampered(change)
    assert found.startswith("bob: action #2 (seq 2)") and "recorded score" in found


def test_a_changed_final_result_and_rank_are_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        bob = document["players"][1]
        bob["score"], bob["rank"] = 60, 1
        document["players"][0]["moves"] += 1
    found = tampered(change)
    assert any(line.startswith("bob: recorded score 60") for line in found)
    assert any(line.startswith("ana: recorded moves") for line in found)
    assert any("bob: recorded rank 1, the results give rank 2" in line for line in found)


def test_an_illegal_action_is_caught_with_the_engines_reason() -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["actions"][0]["action"] = "redeal"
    found = tampered(change)
    assert "is illegal" in found[0] and "redeal_not_allowed" in found[0]


def test_a_seed_that_is_not_the_committed_one_is_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        document["match"]["seed"] = "AAAA-BBBB-CCCC-DDDD"
    found = tampered(change)
    assert found[0].startswith("the seed's SHA-256 is")


def test_a_win_that_did_not_happen_is_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        bob = document["players"][1]
        bob["won"], bob["end_reason"] = True, "won"
    found = tampered(change)
    assert "bob: recorded won True, the replay gives False" in found
    assert "bob: recorded as won, but the replay ends stopped" in found


@pytest.mark.parametrize("document", [
    [], {"format": "other/1"}, {"format": "gaps-replay/1"},
    {"format": "gaps-replay/1", "match": {"seed": "!!", "ruleset": "classic"}, "players": []},
    {"format": "gaps-replay/1", "match": {"seed": "AAAA-BBBB", "ruleset": "chess"},
     "players": []},
])
def test_a_document_that_is_no_replay_is_one_clear_discrepancy(document: Any) -> None:
    report = verify(document)
    assert len(report.discrepancies) == 1
    assert report.discrepancies[0].startswith("not a readable gaps replay")


async def test_a_real_replay_from_the_server_holds_and_a_tampered_copy_does_not(
    ws_url: str,
) -> None:
    seed_text, line = winning_line()
    ana = await Connection.open(ws_url)
    bob = await Connection.open(ws_url)
    dealt = asyncio.Event()
    bob.add_listener(lambda message: message.get("event") == "started" and dealt.set())
    try:
        await ana.register(f"ana-{random.randrange(10**6)}")
        await bob.register(f"bob-{random.randrange(10**6)}")
        created = await ana.create_match(max_players=2, countdown_s=0, seed=seed_text)
        code = created["match"]["code"]
        await bob.join_match(code)
        await ana.ready(code)
        await bob.ready(code)
        await asyncio.wait_for(dealt.wait(), 10)
        with pytest.raises(http.Conflict):  # no replay (and no seed) while it runs
            await http.replay(ws_url, code)
        with pytest.raises(http.NotFound):
            await http.replay(ws_url, "ZZZZZZ")
        for action in [*line[:3], "stop"]:
            await bob.act(code, action)
        for action in line:
            reply = await ana.act(code, action)
        assert reply["status"] == "won"
        document = await http.replay(ws_url, code)  # the last ack comes once the match ended
        over_websocket = await bob.get_replay(code)
    finally:
        await ana.close()
        await bob.close()
    assert over_websocket == document
    report = verify(document)
    assert report.holds, report.discrepancies
    assert [p.rank for p in report.players] == [1, 2] and report.players[0].won
    forged = copy.deepcopy(document)
    forged["players"][0]["actions"][5]["score"] += 1
    assert not verify(forged).holds
