"""Tables in the room through the protocol (SQLite): a tournament of two online entrants
and two table entrants, with entered results, through to its final standings and its
exports parsed back; the deal sheet, given to the host and their arbiter once the round
has begun and read by the terminal client's renderer; and entered results refused
naming the field that does not hold."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from client_cli.dealsheet_pdf import sheet_from_reply
from gaps import Seed
from gaps.dealsheet import DealSheet
from gaps.par import final_score
from server.app import Server
from tests.races import Connect, registered
from tests.test_dealsheet import decode_reply
from tests.test_exports import export
from tests.test_tournament import play_round

#: What each table enters, by round: (placed, redeals, finish_ms, won).
TABLES: dict[int, dict[str, tuple[int, int, int, bool]]] = {
    1: {"cat": (48, 0, 200_000, True), "dan": (20, 2, 600_000, False)},
    2: {"cat": (30, 1, 300_000, False), "dan": (5, 0, 10_000, False)},
}


def entry(code: str, number: int, player: str) -> dict[str, Any]:
    placed, redeals, finish_ms, won = TABLES[number][player]
    return {"code": code, "round": number, "player": player, "placed": placed,
            "redeals": redeals, "finish_ms": finish_ms, "won": won}


async def test_two_online_and_two_at_tables_through_to_the_standings_and_exports(
    connect: Connect, server: Server
) -> None:
    host, arb, ana, bob, cat, dan = await registered(
        connect, "host", "arb", "ana", "bob", "cat", "dan"
    )
    made = await host.ok("tournament_create", name="Club night", rounds=2, max_players=4)
    code = made["tournament"]["code"]
    for client in (ana, bob, cat, dan):
        await client.ok("tournament_join", code=code)
    refused = await ana.request("tournament_arbiter", code=code, player="arb")
    assert refused["code"] == "not_host"
    named = await host.ok("tournament_arbiter", code=code, player="ARB")
    assert named["tournament"]["arbiters"] == [{"player_id": arb.player_id, "name": "arb"}]
    for player in ("cat", "dan"):
        seated = await arb.ok("tournament_table", code=code, player=player, at_table=True)
    assert [e["at_table"] for e in seated["tournament"]["entrants"]] == [
        False, False, True, True]
    refused = await ana.request("tournament_table", code=code, player="ana")
    assert refused["code"] == "not_arbiter"
    not_yet = await host.request("tournament_deal_sheet", code=code, round=1)
    assert (not_yet["code"], not_yet["starts_at"]) == ("round_not_started", None)

    await host.ok("tournament_start", code=code)
    rng = random.Random(32)
    for number in (1, 2):
        starting = await host.event("round_starting", round=number)
        assert starting["tables"] == ["cat", "dan"]
        sheet = await arb.ok("tournament_deal_sheet", code=code.lower(), round=number)
        assert sheet["match"] == starting["match"] and sheet["ruleset"] == "classic"
        dealt = sheet_from_reply(decode_reply(sheet), code=code, round=number)
        assert dealt == DealSheet.of(Seed.parse(sheet["seed"]), "classic", code, number)
        assert (await ana.request("tournament_deal_sheet", code=code, round=number))[
            "code"] == "not_arbiter"
        ahead = await host.request("tournament_deal_sheet", code=code, round=number + 1)
        assert ahead["code"] in ("round_not_started", "bad_message")
        # cat's table finishes before the match ends, dan's after it.
        reply = await arb.ok("tournament_enter_result", **entry(code, number, "cat"))
        assert reply["type"] == "standings"
        await asyncio.gather(*(play_round(c, number, bot_level=None, rng=rng,
                                          code=starting["match"]) for c in (ana, bob)))
        ended = await host.event("round_ended", round=number)
        assert [r["name"] for r in ended["entered"]] == ["cat"]
        assert ended["results_awaited"] == ["dan"]
        await host.ok("tournament_enter_result", **entry(code, number, "dan"))
        said = await ana.event("result_entered", round=number, player_id=dan.player_id)
        assert said["entered"] is True and said["standings"] is not None
    ended = await host.event("tournament_ended")

    final = await host.ok("tournament_standings", code=code)
    rows = {row["name"]: row for row in final["standings"]}
    assert rows["cat"]["total_score"] == final_score(48, 0) + final_score(30, 1)
    assert rows["dan"]["total_score"] == final_score(20, 2) + final_score(5, 0)
    assert rows["cat"]["entered"] and rows["dan"]["entered"]
    assert not rows["ana"]["entered"] and not rows["bob"]["entered"]
    assert rows["cat"]["rounds_played"] == 2 and rows["cat"]["entered_rounds"] == [1, 2]
    # Ranked with the others: by score, then time.
    ordered = sorted(final["standings"], key=lambda r: (-r["total_score"], r["total_time_ms"]))
    assert [r["name"] for r in final["standings"]] == [r["name"] for r in ordered]
    assert [r["rank"] for r in final["standings"]] == sorted(r["rank"] for r in ordered)
    assert ended["standings"] == final["standings"]

    document, csv_rows = await export(server, code, "standings")
    assert document["rows"] == [
        {column: row[column] for column in document["columns"]} for row in final["standings"]
    ]
    assert {r["name"]: r["entered"] for r in csv_rows} == {
        "ana": "false", "bob": "false", "cat": "true", "dan": "true"}
    rounds, csv_rounds = await export(server, code, "rounds")
    entered_rows = [r for r in rounds["rows"] if r["entered"]]
    assert sorted((r["round"], r["name"]) for r in entered_rows) == [
        (1, "cat"), (1, "dan"), (2, "cat"), (2, "dan")]
    for row in entered_rows:
        placed, redeals, finish_ms, won = TABLES[row["round"]][row["name"]]
        assert (row["placed"], row["redeals"], row["finish_ms"], row["won"]) == (
            placed, redeals, finish_ms, won)
        assert row["score"] == final_score(placed, redeals) and row["rank"] is None
        assert row["seed"] is not None  # revealed once the tournament is over
    online = [r for r in rounds["rows"] if not r["entered"]]
    assert sorted({r["name"] for r in online}) == ["ana", "bob"]
    assert sum(r["entered"] == "true" for r in csv_rounds) == 4
    one, _ = await export(server, code, "rounds/2")
    assert {r["round"] for r in one["rows"]} == {2} and len(one["rows"]) == 4
    assert json.loads(json.dumps(one)) == one
    over = await host.request("tournament_enter_result", **entry(code, 2, "dan"))
    assert over["code"] == "tournament_finished"
    # The sheet of a round played stays the host's after the end.
    assert (await host.ok("tournament_deal_sheet", code=code, round=1))["round"] == 1


async def test_an_entered_result_the_rules_do_not_allow_is_refused_naming_its_field(
    connect: Connect,
) -> None:
    host, ana, cat = await registered(connect, "host", "ana", "cat")
    code = (await host.ok("tournament_create", rounds=1, round_time_limit_s=300))[
        "tournament"]["code"]
    for client in (ana, cat):
        await client.ok("tournament_join", code=code)
    await host.ok("tournament_table", code=code, player="cat")  # at_table: true by default
    await host.ok("tournament_start", code=code)
    await host.event("round_starting", round=1)
    good = {"code": code, "round": 1, "player": "cat", "placed": 10, "redeals": 0,
            "finish_ms": 1000, "won": False}
    for change, field in (
        ({"placed": 49}, "placed"),
        ({"placed": "ten"}, "placed"),
        ({"redeals": 3}, "redeals"),
        ({"finish_ms": 300_001}, "finish_ms"),
        ({"won": True}, "won"),
        ({"round": 0}, "round"),
        ({"round": 2}, "round"),
    ):
        reply = await host.request("tournament_enter_result", **{**good, **change})
        assert (reply["code"], reply.get("field")) == ("bad_message", field), reply
    wrong = await host.request("tournament_enter_result", **{**good, "player": "ana"})
    assert (wrong["code"], wrong["player"]) == ("not_at_table", "ana")
    reply = await host.ok("tournament_enter_result", **good)
    [row] = [r for r in reply["entered_results"] if r["name"] == "cat"]
    assert (row["score"], row["entered"], row["entered_by"]) == (10, True, None)
