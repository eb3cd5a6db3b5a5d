"""client_cli.verify: a real replay from the server holds; every kind of tampering is caught."""

from __future__ import annotations

import asyncio
import copy
import functools
import io
import random
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from client_cli import http
from client_cli.cli import print_report
from client_cli.connection import Connection, Listened
from client_cli.verify import verify
from gaps import Game, Seed, parse_action
from gaps_protocol.messages.events import MatchEnded, Started


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


def recorded_player(
    player_id: int,
    name: str,
    actions: list[str],
    rank: int,
    *,
    times: list[int] | None = None,
    end_reason: str | None = None,
    finish_ms: int | None = None,
) -> dict[str, Any]:
    """A player's entry in a replay, as the server records it: each action at ``times``
    (100 ms apart by default); a game its play ended finishes at its last action."""
    seed = Seed.parse(winning_line()[0])
    game = Game(seed, "classic")
    times = times if times is not None else [100 * seq for seq in range(1, len(actions) + 1)]
    recorded = []
    for seq, (action, t_ms) in enumerate(zip(actions, times, strict=True), start=1):
        game.push(parse_action(action))
        recorded.append({"seq": seq, "action": action, "t_ms": t_ms, "score": game.score})
    if end_reason is None:
        end_reason = game.result()
    if finish_ms is None:
        finish_ms = times[-1]
    return {
        "player_id": player_id, "name": name, "rank": rank, "score": game.score,
        "placed": game.placed, "redeals": game.redeals_used, "moves": game.moves_made,
        "won": game.is_won(), "end_reason": end_reason, "finish_ms": finish_ms,
        "actions": recorded,
    }


def local_replay(
    win_by: str = "time",
    players: list[dict[str, Any]] | None = None,
    time_limit_s: int | None = None,
) -> dict[str, Any]:
    """A replay document built with gaps alone: by default ana wins, bob makes 3 moves
    and stops."""
    seed_text, line = winning_line()
    seed = Seed.parse(seed_text)
    if players is None:
        players = [
            recorded_player(1, "ana", list(line), 1),
            recorded_player(2, "bob", [*line[:3], "stop"], 2),
        ]
    match = {"id": 1, "code": "K7QX2M", "ruleset": "classic", "win_by": win_by,
             "rated": True, "seed": seed_text, "commitment": seed.commitment,
             "started_at": "2026-01-01T00:00:00+00:00",
             "ended_at": "2026-01-01T00:01:00+00:00"}
    if time_limit_s is not None:
        match["time_limit_s"] = time_limit_s
    return {"format": "gaps-replay/1", "match": match, "players": players}


def test_a_consistent_replay_holds() -> None:
    report = verify(local_replay())
    assert report.holds, report.discrepancies
    assert [(p.name, p.won, p.rank) for p in report.players] == [("ana", True, 1),
                                                                  ("bob", False, 2)]
    ana = report.players[0]
    assert ana.score == 48 - 5 * ana.redeals + (10 if ana.redeals == 0 else 0)


def test_a_replay_says_which_players_are_bots_and_the_report_marks_them() -> None:
    document = local_replay()
    document["players"][1]["bot"] = True
    report = verify(document)
    assert report.holds and [p.bot for p in report.players] == [False, True]
    out = Console(file=io.StringIO(), width=200)
    print_report(out, report)
    lines = str(out.file.getvalue()).splitlines()  # type: ignore[attr-defined]
    assert lines[1].startswith("   1. ana: ") and lines[2].startswith("   2. bob [bot]: ")


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


def test_an_action_time_that_goes_backwards_is_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["actions"][2]["t_ms"] = 150
    [found] = tampered(change)
    assert found.startswith("bob: action #3 (seq 3)")
    assert "t_ms 150 goes back before the t_ms 200 of the action before it" in found


def test_an_action_time_before_the_match_start_is_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["actions"][0]["t_ms"] = -5
    [found] = tampered(change)
    assert found.startswith("bob: action #1 (seq 1)")
    assert "t_ms -5 is before the match start" in found


def last_action_ms(player: int) -> int:
    return int(local_replay()["players"][player]["actions"][-1]["t_ms"])


@pytest.mark.parametrize("player", [0, 1], ids=["won", "stopped"])
@pytest.mark.parametrize("delta", [-1, 1, 60_000])
def test_a_finish_time_that_is_not_the_last_actions_time_is_caught(player: int, delta: int) -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][player]["finish_ms"] += delta
    found = tampered(change)
    name, reason = [("ana", "won"), ("bob", "stopped")][player]
    last = last_action_ms(player)
    assert (f"{name}: finish_ms {last + delta}, but the game ended ({reason}) with its last"
            f" action, at t_ms {last}") in found


def test_swapped_ranks_are_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        ana, bob = document["players"]
        ana["rank"], bob["rank"] = bob["rank"], ana["rank"]
    found = tampered(change)
    assert found == ["ana: recorded rank 2, the results give rank 1",
                     "bob: recorded rank 1, the results give rank 2"]


def test_games_ended_by_the_clock_finish_at_the_time_limit() -> None:
    line = winning_line()[1]
    players = [
        recorded_player(1, "ana", list(line[:3]), 1, end_reason="time", finish_ms=60_000),
        recorded_player(2, "bob", list(line[:2]), 2, end_reason="time", finish_ms=60_000),
    ]
    assert verify(local_replay(players=players, time_limit_s=60)).holds
    assert verify(local_replay(players=players)).holds  # the limit the time finishes show
    players[1]["finish_ms"] = 59_000
    found = verify(local_replay(players=players, time_limit_s=60)).discrepancies
    assert found == ["bob: finish_ms 59000, but a game ended by time finishes at the time limit,"
                     " 60000"]
    [found_without_limit] = verify(local_replay(players=players)).discrepancies
    assert "the games ended by time finish at different finish_ms (ana 60000, bob 59000)" in (
        found_without_limit
    )


def test_a_given_time_limit_is_checked_even_when_the_time_finishes_agree() -> None:
    line = winning_line()[1]
    players = [
        recorded_player(1, "ana", list(line[:3]), 1, end_reason="time", finish_ms=59_000),
        recorded_player(2, "bob", list(line[:2]), 2, end_reason="time", finish_ms=59_000),
    ]
    assert verify(local_replay(players=players)).holds  # an older document: no limit given
    assert verify(local_replay(players=players, time_limit_s=60)).discrepancies == [
        f"{name}: finish_ms 59000, but a game ended by time finishes at the time limit, 60000"
        for name in ("ana", "bob")
    ]


@pytest.mark.parametrize("limit", [0, -60, "600", True, 600.0, None, [600]])
def test_a_time_limit_that_is_no_positive_whole_number_of_seconds_is_one_discrepancy(
    limit: Any,
) -> None:
    def change(document: dict[str, Any]) -> None:
        document["match"]["time_limit_s"] = limit
    [found] = tampered(change)
    assert found.startswith("not a readable gaps replay: match.time_limit_s is ")


@pytest.mark.parametrize("reason", ["disconnected", "left"])
def test_a_game_ended_from_outside_finishes_after_its_last_action_within_the_limit(
    reason: str,
) -> None:
    line = winning_line()[1]
    ana = recorded_player(1, "ana", list(line), 1)
    last = ana["finish_ms"]
    bob = recorded_player(2, "bob", list(line[:3]), 2, end_reason=reason, finish_ms=last + 5_000)
    assert verify(local_replay(players=[ana, bob], time_limit_s=600)).holds
    bob["finish_ms"] = 250  # its last action was at 300
    [found] = verify(local_replay(players=[ana, bob], time_limit_s=600)).discrepancies
    assert found == "bob: finish_ms 250 is before its last action, at t_ms 300"
    bob["finish_ms"] = 600_001
    [found] = verify(local_replay(players=[ana, bob], time_limit_s=600)).discrepancies
    assert found == "bob: finish_ms 600001 is after the time limit, 600000"


def test_a_player_without_actions_who_left_ranks_last() -> None:
    line = winning_line()[1]
    ana = recorded_player(1, "ana", list(line), 1)
    bob = recorded_player(2, "bob", [], 2, end_reason="left", finish_ms=0)
    assert verify(local_replay(players=[ana, bob])).holds
    bob["finish_ms"] = -1
    found = verify(local_replay(players=[ana, bob])).discrepancies
    assert found == ["bob: finish_ms -1 is before the match start"]


def test_a_game_its_play_ended_cannot_be_recorded_as_ended_from_outside() -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["end_reason"] = "left"
    assert tampered(change) == [
        "bob: the replay ends stopped, but the recorded end_reason is 'left'"
    ]


def test_an_unknown_end_reason_is_caught() -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["end_reason"] = "bored"
    assert tampered(change) == [
        "bob: end_reason 'bored' is not one of won, lost, stopped, time, disconnected, left"
    ]


def test_equal_scores_rank_by_when_they_were_reached() -> None:
    line = winning_line()[1]
    ana = recorded_player(1, "ana", list(line), 1)
    # bob and cy stop with the same score; cy reached it 1 ms later, then stopped earlier.
    bob = recorded_player(2, "bob", [*line[:3], "stop"], 2, times=[100, 200, 300, 900])
    cy = recorded_player(3, "cy", [*line[:3], "stop"], 3, times=[100, 200, 301, 302])
    assert verify(local_replay(players=[ana, bob, cy])).holds
    bob["rank"], cy["rank"] = 3, 2
    assert verify(local_replay(players=[ana, bob, cy])).discrepancies == [
        "bob: recorded rank 3, the results give rank 2",
        "cy: recorded rank 2, the results give rank 3",
    ]
    cy["actions"][2]["t_ms"] = 300  # now they tie on every key and share rank 2
    bob["rank"] = cy["rank"] = 2
    assert verify(local_replay(players=[ana, bob, cy])).holds


def test_with_win_by_score_equal_scores_rank_by_finish_time() -> None:
    line = winning_line()[1]
    bob = recorded_player(2, "bob", [*line[:3], "stop"], 2, times=[100, 200, 300, 900])
    cy = recorded_player(3, "cy", [*line[:3], "stop"], 1, times=[100, 200, 301, 302])
    assert verify(local_replay("score", players=[bob, cy])).holds
    bob["rank"], cy["rank"] = 1, 2
    assert len(verify(local_replay("score", players=[bob, cy])).discrepancies) == 2


@pytest.mark.parametrize(
    "text", ["2H>" + "1" * 5000, "8C>r" + "1" * 5000 + "c1", "\u3000stop", "Q\u017f", "2H>03"]
)
def test_an_action_in_bad_notation_is_reported_not_raised(text: str) -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["actions"][1]["action"] = text
    found = tampered(change)
    assert found[0].startswith("bob: action #2 (seq 2)") and "does not parse" in found[0]
    assert all(len(line) < 500 for line in found)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("t_ms", None, "player bob action #2.t_ms is None, of the wrong type"),
        ("t_ms", "200", "player bob action #2.t_ms is '200', of the wrong type"),
        ("t_ms", True, "player bob action #2.t_ms is True, of the wrong type"),
        ("seq", 2.0, "player bob action #2.seq is 2.0, of the wrong type"),
        ("action", ["8C"] * 100, "player bob action #2.action is ['8C', '8C',"),
    ],
)
def test_a_field_of_the_wrong_type_is_one_clear_discrepancy(
    field: str, value: Any, words: str
) -> None:
    def change(document: dict[str, Any]) -> None:
        document["players"][1]["actions"][1][field] = value
    [found] = tampered(change)
    assert found.startswith("not a readable gaps replay: ") and words in found
    assert len(found) < 200


def test_a_missing_field_is_one_clear_discrepancy() -> None:
    def change(document: dict[str, Any]) -> None:
        del document["players"][1]["actions"][1]["t_ms"]
    assert tampered(change) == ["not a readable gaps replay: player bob action #2 has no 't_ms'"]


def test_a_missing_finish_time_or_rank_leaves_the_ranks_unchecked_and_says_so() -> None:
    def no_finish(document: dict[str, Any]) -> None:
        document["players"][1]["finish_ms"] = None
    assert tampered(no_finish) == [
        "bob: finish_ms is not a time in milliseconds, so no rank can be checked"
    ]

    def no_rank(document: dict[str, Any]) -> None:
        del document["players"][0]["rank"]
    assert tampered(no_rank) == ["ana: no rank recorded, so no rank can be checked"]


def nested(depth: int) -> Any:
    """A list in a list ... ``depth`` deep, built without recursion."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(("where", "words"), [
    ("document", "the document is not a JSON object"),
    ("format", "format is [[[[...]]]], expected"),
    ("seed", "match.seed is [[[[...]]]], of the wrong type"),
    ("score", "bob: recorded score [[[[...]]]], the replay gives"),
])
def test_a_checked_value_nested_as_deep_as_json_allows_is_reported_never_raised(
    where: str, words: str
) -> None:
    deep = nested(sys.getrecursionlimit() - 5)
    document: Any = local_replay()
    if where == "document":
        document = deep
    elif where == "format":
        document["format"] = deep
    elif where == "seed":
        document["match"]["seed"] = deep
    else:
        document["players"][1]["score"] = deep
    [found] = verify(document).discrepancies
    assert words in found and len(found) < 200


def test_a_code_or_name_nested_as_deep_as_json_allows_is_shown_cut_short() -> None:
    document = local_replay()
    document["match"]["code"] = nested(sys.getrecursionlimit() - 5)
    document["players"][1]["name"] = nested(sys.getrecursionlimit() - 5)
    report = verify(document)
    assert report.holds, report.discrepancies
    assert report.code == report.players[1].name == "[[[[...]]]]"


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, as the keys and indexes that lead there."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_change_to_a_replay_is_reported_never_raised(data: st.DataObject) -> None:
    document: Any = local_replay()
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(paths(document)))
        if not where:
            document = data.draw(JSON_VALUES)
            continue
        parent = document
        for key in where[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(JSON_VALUES)
    report = verify(document)
    assert all(isinstance(line, str) and line for line in report.discrepancies)


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
    dealt, ended = asyncio.Event(), asyncio.Event()

    def on_event(message: Listened) -> None:
        if isinstance(message, Started):
            dealt.set()
        elif isinstance(message, MatchEnded):
            ended.set()

    bob.add_listener(on_event)
    try:
        await ana.register(f"ana-{random.randrange(10**6)}")
        await bob.register(f"bob-{random.randrange(10**6)}")
        created = await ana.create_match(max_players=2, countdown_s=0, seed=seed_text)
        code = created.match.code
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
        assert reply.status == "won"
        # The match's end is stored off the winner's reply path: its replay is published
        # once match_ended is said.
        await asyncio.wait_for(ended.wait(), 10)
        document = await http.replay(ws_url, code)
        over_websocket = await bob.get_replay(code)
    finally:
        await ana.close()
        await bob.close()
    assert over_websocket == http.read_replay(document)  # the same document, typed
    assert document["match"]["time_limit_s"] == 600  # the default: verify need not infer it
    report = verify(document)
    assert report.holds, report.discrepancies
    assert [p.rank for p in report.players] == [1, 2] and report.players[0].won
    forged = copy.deepcopy(document)
    forged["players"][0]["actions"][5]["score"] += 1
    assert not verify(forged).holds
    late = copy.deepcopy(document)
    late["players"][0]["finish_ms"] += 1
    assert verify(late).discrepancies[0].startswith(f"{late['players'][0]['name']}: finish_ms")


def test_a_par_at_least_every_score_holds_and_one_below_a_score_is_caught() -> None:
    document = local_replay()
    best = max(player["score"] for player in document["players"])
    for par in (None, {"score": best, "exact": True}, {"score": best + 3, "exact": False}):
        document["match"]["par"] = par
        report = verify(document)
        assert report.holds, (par, report.discrepancies)

    def below(document: dict[str, Any]) -> None:
        document["match"]["par"] = {"score": best - 1, "exact": True}
    [found] = tampered(below)
    assert found == f"ana: score {best} is above the deal's par {best - 1}"


@pytest.mark.parametrize("par", ["58", {"score": "58", "exact": True}, {"score": 58}, [58]])
def test_a_par_of_the_wrong_shape_is_not_a_readable_replay(par: Any) -> None:
    document = local_replay()
    document["match"]["par"] = par
    [found] = verify(document).discrepancies
    assert found.startswith("not a readable gaps replay: match.par")
