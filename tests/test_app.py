"""The server's sessions and its plain HTTP, end to end on a real server."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from server.app import Server
from tests.client import Client
from tests.races import registered, start_race, stop_all

Connect = Callable[[], Awaitable[Client]]


async def http_get(server: Server, path: str) -> tuple[int, dict[str, Any]]:
    def fetch() -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{server.port}{path}", timeout=5
            ) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    return await asyncio.to_thread(fetch)


async def test_healthz_answers_ok_over_plain_http(server: Server) -> None:
    assert await http_get(server, "/healthz") == (200, {"status": "ok"})


async def test_an_unknown_path_is_a_json_404(server: Server) -> None:
    status, body = await http_get(server, "/nothing/here")
    assert status == 404 and body["code"] == "no_such_resource"
    assert "/nothing/here" in body["message"]


async def test_open_public_matches_are_listed_over_http(server: Server, connect: Connect) -> None:
    ana = await connect()
    await ana.register("ana")
    public = (await ana.ok("create_match", public=True))["match"]["code"]
    await ana.ok("create_match", public=False)
    status, body = await http_get(server, "/matches")
    assert status == 200 and [m["code"] for m in body["matches"]] == [public]


async def test_a_replay_is_served_over_http_only_once_the_match_is_over(
    server: Server, connect: Connect
) -> None:
    ana = await connect()
    await ana.register("ana")
    code = (await ana.ok("create_match", max_players=1, countdown_s=0))["match"]["code"]
    assert (await http_get(server, f"/matches/{code}/replay"))[0] == 409
    assert (await ana.request("get_replay", code=code))["code"] == "not_finished"
    await ana.ok("ready", code=code)
    await ana.event("started")
    await ana.act(code, "stop")
    await ana.event("match_ended")
    status, document = await http_get(server, f"/matches/{code.lower()}/replay")
    assert status == 200 and document["format"] == "gaps-replay/1"
    assert document == (await ana.ok("get_replay", code=code))["replay"]
    assert (await http_get(server, "/matches/ZZZZZZ/replay"))[0] == 404


async def test_a_registered_player_comes_back_with_the_token_on_a_new_connection(
    connect: Connect,
) -> None:
    first = await connect()
    registered = await first.register("ana")
    assert len(registered["token"]) >= 40
    second = await connect()
    welcome = await second.ok("hello", token=registered["token"])
    assert welcome["player"] == registered["player"] and welcome["protocol"] == 1
    again = await second.request("hello", token=registered["token"])
    assert again["code"] == "already_authenticated"


async def test_names_are_unique_and_well_formed(connect: Connect) -> None:
    ana = await connect()
    await ana.register("ana")
    other = await connect()
    assert (await other.request("register", name="ana"))["code"] == "name_taken"
    assert (await other.request("register", name="a b"))["code"] == "bad_name"
    assert (await other.request("register", name="x"))["code"] == "bad_name"


async def test_every_request_but_ping_needs_authentication(connect: Connect) -> None:
    anonymous = await connect()
    pong = await anonymous.ok("ping")
    assert pong["type"] == "pong" and pong["server_time"].endswith("+00:00")
    for kind, fields in [
        ("create_match", {}),
        ("list_matches", {}),
        ("join_match", {"code": "ABCDEF"}),
        ("resync", {"code": "A", "since": 0}),
    ]:
        reply = await anonymous.request(kind, **fields)
        assert reply["code"] == "not_authenticated", (kind, reply)


async def test_malformed_frames_get_errors_and_the_connection_stays_usable(
    connect: Connect,
) -> None:
    client = await connect()
    assert (await client.send_raw("not json", None))["code"] == "bad_json"
    assert (await client.send_raw(json.dumps([1, 2]), None))["code"] == "bad_json"
    unknown = await client.send_raw(json.dumps({"type": "dance", "id": 5}), 5)
    assert (unknown["code"], unknown["id"]) == ("unknown_type", 5)
    assert (await client.request("join_match", code=""))["code"] == "bad_message"
    assert (await client.ok("ping"))["type"] == "pong"


@pytest.mark.max_history_events(3)
async def test_a_resync_too_far_back_gets_a_snapshot(connect: Connect) -> None:
    ana = await connect()
    await ana.register("ana")
    code = (
        await ana.ok("create_match", max_players=1, countdown_s=0, seed="AAAA-BBBB-CCCC-DDDD")
    )["match"]["code"]
    await ana.ok("ready", code=code)
    await ana.event("started")
    for action in ("3H", "2C>4", "3C"):
        await ana.act(code, action)
    recent = await ana.ok("resync", code=code, since=5)
    assert recent["type"] == "events" and [e["seq"] for e in recent["events"]] == [6, 7]
    old = await ana.ok("resync", code=code, since=1)
    assert old["type"] == "snapshot" and old["seq"] == 7
    assert old["you"]["game"]["moves_made"] == 3


async def test_boards_ratings_tournaments_and_the_daily_board_are_served_over_http(
    server: Server, connect: Connect
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    await stop_all([ana, bob], await start_race([ana, bob]))

    status, first = await http_get(server, "/leaderboards/classic?by=score&period=day&limit=1")
    assert status == 200 and len(first["entries"]) == 1 and first["next_cursor"]
    status, rest = await http_get(
        server, f"/leaderboards/classic?by=score&period=day&limit=1&cursor={first['next_cursor']}"
    )
    assert status == 200 and [e["rank"] for e in rest["entries"]] == [2]
    assert rest["next_cursor"] is None
    status, mine = await http_get(server, "/leaderboards/classic?by=rating&player=bob")
    assert status == 200 and mine["rank"] in (1, 2) and len(mine["entries"]) == 2
    assert (await http_get(server, "/leaderboards/classic?by=nonsense"))[0] == 400
    # The query cannot turn the request into another one.
    status, typed = await http_get(server, "/leaderboards/classic?type=register&name=eve")
    assert status == 200 and typed["board"] == "score"
    assert (await http_get(server, "/leaderboards/classic?player=nobody"))[0] == 404
    status, rating = await http_get(server, "/ratings/ana")
    assert status == 200 and rating["ratings"][0]["games"] == 1
    assert (await http_get(server, "/ratings/nobody"))[0] == 404

    tournament = (await ana.ok("tournament_create", name="Cup"))["tournament"]
    status, listed = await http_get(server, "/tournaments")
    assert status == 200 and [t["code"] for t in listed["tournaments"]] == [tournament["code"]]
    status, standings = await http_get(server, f"/tournaments/{tournament['code']}")
    assert status == 200 and standings["standings"] == []
    assert (await http_get(server, "/tournaments/NOPE42"))[0] == 404
    status, daily = await http_get(server, "/daily/classic")
    assert status == 200 and daily["entries"] == []
    assert (await http_get(server, "/daily/classic?day=yesterday"))[0] == 400
