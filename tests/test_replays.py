"""server.replays: the published replay document, shaped from stored rows."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from client_cli.verify import verify
from gaps import Game, Seed
from gaps.replay import replay
from gaps_protocol.times import parse_time
from server.replays import FORMAT, replay_document

SEED = Seed.parse("AAAA-BBBB-CCCC-DDDD")
STARTED = datetime(2026, 3, 1, 12, 0, 0, 123456)
ENDED = datetime(2026, 3, 1, 12, 5, 30)


def match_row(**changes: Any) -> dict[str, Any]:
    """A row of the matches table, as Store.replay returns it."""
    row = {
        "id": 1, "code": "K7QX2M", "ruleset": "classic", "max_players": 2, "time_limit_s": 600,
        "win_by": "score", "public": False, "rated": False, "host_id": 1, "status": "finished",
        "seed": SEED.data, "commitment": SEED.commitment,
        "created_at": STARTED - timedelta(minutes=1), "started_at": STARTED, "ended_at": ENDED,
    }
    row.update(changes)
    return row


def player_row(player_id: int, name: str, rank: int | None, **changes: Any) -> dict[str, Any]:
    """A row of match_players joined with the player's name and kind."""
    row = {
        "match_id": 1, "player_id": player_id, "joined_at": STARTED, "score": 0, "placed": 0,
        "redeals": 0, "moves": 0, "won": False, "end_reason": "stopped", "finish_ms": 81200,
        "score_ms": 5000, "rank": rank, "name": name, "bot": False,
    }
    row.update(changes)
    return row


def action_row(row_id: int, player_id: int, seq: int, action: str, t_ms: int, score: int,
               **changes: Any) -> dict[str, Any]:
    row = {
        "id": row_id, "match_id": 1, "player_id": player_id, "seq": seq, "action": action,
        "kind": "move", "card": action[:2], "from_slot": "r4c1", "to_slot": "r3c5",
        "t_ms": t_ms, "score": score,
    }
    row.update(changes)
    return row


def stored() -> dict[str, Any]:
    """The example session's match: ana 3H, 2C>4, stop; bob QH, stop."""
    return {
        "match": match_row(),
        "players": [
            player_row(1, "ana", 1, score=1, placed=1, moves=2, finish_ms=9000),
            player_row(2, "bob", 2, score=0, placed=0, moves=1, finish_ms=8000),
        ],
        "actions": [
            action_row(1, 1, 1, "3H", 5210, 0),
            action_row(2, 1, 2, "2C>4", 6100, 1),
            action_row(5, 1, 3, "stop", 9000, 1, kind="stop", card=None, from_slot=None,
                       to_slot=None),
            action_row(3, 2, 1, "QH", 5800, 0),
            action_row(4, 2, 2, "stop", 8000, 0, kind="stop", card=None, from_slot=None,
                       to_slot=None),
        ],
    }


def test_the_document_names_its_format() -> None:
    assert replay_document(stored())["format"] == FORMAT == "gaps-replay/1"


def test_the_document_has_exactly_the_documented_keys() -> None:
    document = replay_document(stored())
    assert list(document) == ["format", "match", "players"]
    assert set(document["match"]) == {"id", "code", "ruleset", "win_by", "time_limit_s",
                                      "rated", "seed", "commitment", "started_at", "ended_at",
                                      "par"}
    for player in document["players"]:
        assert set(player) == {"player_id", "name", "bot", "rank", "score", "placed",
                               "redeals", "moves", "won", "end_reason", "finish_ms", "review",
                               "actions"}
        for action in player["actions"]:
            assert set(action) == {"seq", "action", "t_ms", "score"}


def test_each_result_says_whether_it_is_under_review() -> None:
    rows = stored()
    players = [dict(player, review="held") for player in rows["players"]]
    assert [p["review"] for p in replay_document(dict(rows, players=players))["players"]] == [
        "held" for _ in players
    ]
    assert {p["review"] for p in replay_document(rows)["players"]} == {None}


def test_the_match_part_copies_the_stored_match() -> None:
    match = replay_document(stored())["match"]
    assert match["id"] == 1
    assert match["code"] == "K7QX2M"
    assert match["ruleset"] == "classic"
    assert match["win_by"] == "score"
    assert match["time_limit_s"] == 600
    assert match["rated"] is False
    assert match["commitment"] == SEED.commitment


def test_the_time_limit_is_the_matchs_own_so_verify_need_not_infer_it() -> None:
    document = replay_document(dict(stored(), match=match_row(time_limit_s=90)))
    assert document["match"]["time_limit_s"] == 90
    report = verify(document)
    assert report.holds, report.discrepancies
    late = replay_document(dict(stored(), match=match_row(time_limit_s=8)))
    assert verify(late).discrepancies == ["ana: finish_ms 9000 is after the time limit, 8000"]


def test_par_is_null_until_it_is_computed() -> None:
    assert replay_document(stored())["match"]["par"] is None
    document = replay_document(dict(stored(), match=match_row(par_score=None, par_exact=None)))
    assert document["match"]["par"] is None


def test_par_is_its_score_and_whether_it_is_exact() -> None:
    exact = replay_document(dict(stored(), match=match_row(par_score=48, par_exact=True)))
    assert exact["match"]["par"] == {"score": 48, "exact": True}
    bound = replay_document(dict(stored(), match=match_row(par_score=31, par_exact=False)))
    assert bound["match"]["par"] == {"score": 31, "exact": False}


def test_the_seed_is_rendered_as_its_share_code() -> None:
    assert replay_document(stored())["match"]["seed"] == "AAAA-BBBB-CCCC-DDDD"


def test_the_seed_of_a_generated_match_round_trips_and_matches_its_commitment() -> None:
    seed = Seed.generate()
    document = replay_document(dict(stored(), match=match_row(seed=seed.data,
                                                              commitment=seed.commitment)))
    published = Seed.parse(document["match"]["seed"])
    assert published == seed
    assert published.commitment == document["match"]["commitment"]


def test_a_seed_stored_as_a_memoryview_is_rendered_too() -> None:
    document = replay_document(dict(stored(), match=match_row(seed=memoryview(SEED.data))))
    assert document["match"]["seed"] == "AAAA-BBBB-CCCC-DDDD"


def test_a_naive_stored_time_is_read_as_utc() -> None:
    match = replay_document(stored())["match"]
    assert match["started_at"] == "2026-03-01T12:00:00.123Z"
    assert match["ended_at"] == "2026-03-01T12:05:30.000Z"
    assert parse_time(match["started_at"]) == STARTED.replace(microsecond=123_000, tzinfo=UTC)


def test_an_aware_utc_time_is_written_in_the_protocols_form() -> None:
    document = replay_document(dict(stored(), match=match_row(
        started_at=STARTED.replace(tzinfo=UTC), ended_at=ENDED.replace(tzinfo=UTC))))
    assert document["match"]["started_at"] == "2026-03-01T12:00:00.123Z"
    assert document["match"]["ended_at"] == "2026-03-01T12:05:30.000Z"


def test_an_aware_time_in_another_zone_keeps_its_instant() -> None:
    paris = timezone(timedelta(hours=1))
    started = datetime(2026, 3, 1, 13, 0, tzinfo=paris)
    document = replay_document(dict(stored(), match=match_row(started_at=started)))
    assert parse_time(document["match"]["started_at"]) == started


def test_a_time_never_reached_is_null() -> None:
    document = replay_document(dict(stored(), match=match_row(started_at=None, ended_at=None)))
    assert document["match"]["started_at"] is None
    assert document["match"]["ended_at"] is None


def test_players_keep_the_stored_order_best_first() -> None:
    players = replay_document(stored())["players"]
    assert [(p["rank"], p["name"]) for p in players] == [(1, "ana"), (2, "bob")]


def test_a_player_entry_copies_the_stored_result() -> None:
    rows = stored()
    rows["players"][0].update(score=43, placed=48, redeals=1, moves=120, won=True,
                              end_reason="won", finish_ms=300_000)
    ana = replay_document(rows)["players"][0]
    assert {k: v for k, v in ana.items() if k != "actions"} == {
        "player_id": 1, "name": "ana", "bot": False, "rank": 1, "score": 43, "placed": 48,
        "redeals": 1, "moves": 120, "won": True, "end_reason": "won", "finish_ms": 300_000,
        "review": None,
    }


def test_a_declared_bot_is_marked_as_one_in_the_document() -> None:
    rows = stored()
    rows["players"][1].update(bot=True)
    assert [p["bot"] for p in replay_document(rows)["players"]] == [False, True]


def test_each_player_gets_only_their_own_actions_in_stored_order() -> None:
    ana, bob = replay_document(stored())["players"]
    assert ana["actions"] == [
        {"seq": 1, "action": "3H", "t_ms": 5210, "score": 0},
        {"seq": 2, "action": "2C>4", "t_ms": 6100, "score": 1},
        {"seq": 3, "action": "stop", "t_ms": 9000, "score": 1},
    ]
    assert bob["actions"] == [
        {"seq": 1, "action": "QH", "t_ms": 5800, "score": 0},
        {"seq": 2, "action": "stop", "t_ms": 8000, "score": 0},
    ]


def test_actions_of_players_interleaved_in_the_rows_are_still_grouped() -> None:
    rows = stored()
    rows["actions"] = [rows["actions"][i] for i in (0, 3, 1, 4, 2)]
    ana, bob = replay_document(rows)["players"]
    assert [a["seq"] for a in ana["actions"]] == [1, 2, 3]
    assert [a["seq"] for a in bob["actions"]] == [1, 2]


def test_a_player_without_actions_has_an_empty_list() -> None:
    rows = stored()
    rows["players"].append(player_row(3, "cy", None, end_reason="left", finish_ms=None))
    cy = replay_document(rows)["players"][2]
    assert cy["actions"] == []
    assert cy["rank"] is None
    assert cy["finish_ms"] is None


def test_a_match_without_players_has_an_empty_player_list() -> None:
    document = replay_document({"match": match_row(), "players": [], "actions": []})
    assert document["players"] == []


def test_the_stored_secrets_and_internals_do_not_leak_into_the_document() -> None:
    text = json.dumps(replay_document(stored()))
    for internal in ("host_id", "status", "created_at", "joined_at", "score_ms", "from_slot",
                     "match_id", "max_players"):
        assert internal not in text


def test_the_document_is_plain_json() -> None:
    document = replay_document(stored())
    assert json.loads(json.dumps(document)) == document


def test_the_document_of_a_real_game_verifies_with_the_rules_engine() -> None:
    seed = Seed.generate()
    game = Game(seed, "classic")
    rows = []
    for seq in range(1, 6):
        moves = game.legal_moves()
        if not moves:
            break
        game.play(moves[0])
        rows.append(action_row(seq, 1, seq, str(moves[0]), seq * 1000, game.score))
    document = replay_document({
        "match": match_row(seed=seed.data, commitment=seed.commitment),
        "players": [player_row(1, "ana", 1, score=game.score)],
        "actions": rows,
    })
    published = Seed.parse(document["match"]["seed"])
    actions = document["players"][0]["actions"]
    for count in range(1, len(actions) + 1):
        again = replay(published, document["match"]["ruleset"],
                       [a["action"] for a in actions[:count]])
        assert again.ok
        assert again.score == actions[count - 1]["score"]
    assert replay(published, "classic", [a["action"] for a in actions]).score == (
        document["players"][0]["score"]
    )
