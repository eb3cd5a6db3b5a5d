"""The server's sessions and its plain HTTP, end to end on a real server."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as websocket_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from server.app import Server
from server.config import Settings
from server.forwarded import parse_networks
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.proxy import proxied_server
from tests.races import registered, start_race, stop_all
from tests.services import Redis

Connect = Callable[[], Awaitable[Client]]


async def test_healthz_answers_ok_over_plain_http(server: Server) -> None:
    assert await http_get(server.port, "/healthz") == (200, {"status": "ok"})


async def test_an_unknown_path_is_a_json_404(server: Server) -> None:
    status, body = await http_get(server.port, "/nothing/here")
    assert status == 404 and body["code"] == "no_such_resource"
    assert "/nothing/here" in body["message"]


async def test_open_public_matches_are_listed_over_http(server: Server, connect: Connect) -> None:
    ana = await connect()
    await ana.register("ana")
    public = (await ana.ok("create_match", public=True))["match"]["code"]
    await ana.ok("create_match", public=False)
    status, body = await http_get(server.port, "/matches")
    assert status == 200 and [m["code"] for m in body["matches"]] == [public]


async def test_a_replay_is_served_over_http_only_once_the_match_is_over(
    server: Server, connect: Connect
) -> None:
    ana = await connect()
    await ana.register("ana")
    code = (await ana.ok("create_match", max_players=1, countdown_s=0))["match"]["code"]
    assert (await http_get(server.port, f"/matches/{code}/replay"))[0] == 409
    assert (await ana.request("get_replay", code=code))["code"] == "not_finished"
    await ana.ok("ready", code=code)
    await ana.event("started")
    await ana.act(code, "stop")
    await ana.event("match_ended")
    status, document = await http_get(server.port, f"/matches/{code.lower()}/replay")
    assert status == 200 and document["format"] == "gaps-replay/1"
    assert document == (await ana.ok("get_replay", code=code))["replay"]
    assert (await http_get(server.port, "/matches/ZZZZZZ/replay"))[0] == 404


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
    assert pong["type"] == "pong" and pong["server_time"].endswith("Z")
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

    status, first = await http_get(server.port, "/leaderboards/classic?by=score&period=day&limit=1")
    assert status == 200 and len(first["entries"]) == 1 and first["next_cursor"]
    next_page = f"/leaderboards/classic?by=score&period=day&limit=1&cursor={first['next_cursor']}"
    status, rest = await http_get(server.port, next_page)
    assert status == 200 and [e["rank"] for e in rest["entries"]] == [2]
    assert rest["next_cursor"] is None
    status, mine = await http_get(server.port, "/leaderboards/classic?by=rating&player=bob")
    assert status == 200 and mine["rank"] in (1, 2) and len(mine["entries"]) == 2
    assert (await http_get(server.port, "/leaderboards/classic?by=nonsense"))[0] == 400
    # The query cannot turn the request into another one.
    status, typed = await http_get(server.port, "/leaderboards/classic?type=register&name=eve")
    assert status == 200 and typed["board"] == "score"
    assert (await http_get(server.port, "/leaderboards/classic?player=nobody"))[0] == 404
    status, rating = await http_get(server.port, "/ratings/ana")
    assert status == 200 and rating["ratings"][0]["games"] == 1
    assert (await http_get(server.port, "/ratings/nobody"))[0] == 404

    tournament = (await ana.ok("tournament_create", name="Cup"))["tournament"]
    status, listed = await http_get(server.port, "/tournaments")
    assert status == 200 and [t["code"] for t in listed["tournaments"]] == [tournament["code"]]
    status, standings = await http_get(server.port, f"/tournaments/{tournament['code']}")
    assert status == 200 and standings["standings"] == []
    assert (await http_get(server.port, "/tournaments/NOPE42"))[0] == 404
    status, daily = await http_get(server.port, "/daily/classic")
    assert status == 200 and daily["entries"] == []
    assert (await http_get(server.port, "/daily/classic?day=yesterday"))[0] == 400


# -- limits ---------------------------------------------------------------------------


async def send_all(connection: ClientConnection, messages: list[dict[str, Any]]) -> None:
    """Send every message at once, without waiting for replies."""
    for message in messages:
        await connection.send(json.dumps(message))


async def replies(connection: ClientConnection, count: int) -> list[dict[str, Any]]:
    return [json.loads(await asyncio.wait_for(connection.recv(), 10)) for _ in range(count)]


@pytest.mark.limits(request_burst=5, requests_per_s=0.01)
async def test_requests_past_the_burst_are_refused_with_the_time_to_wait(ws_url: str) -> None:
    async with websocket_connect(ws_url) as connection:
        await send_all(connection, [{"type": "ping", "id": n} for n in range(7)])
        answers = await replies(connection, 7)
    assert [a["type"] for a in answers] == ["pong"] * 5 + ["error"] * 2
    refused = answers[5]
    assert refused["code"] == "rate_limited" and refused["id"] == 5
    # One token comes back every 100 s at 0.01 requests a second.
    assert 1_000 <= refused["retry_after_ms"] <= 100_000


@pytest.mark.limits(request_burst=2, requests_per_s=0.01)
async def test_a_malformed_frame_past_the_burst_is_refused_too(ws_url: str) -> None:
    async with websocket_connect(ws_url) as connection:
        await send_all(connection, [{"type": "ping", "id": 1}, {"type": "ping", "id": 2}])
        await connection.send("not json")
        answers = await replies(connection, 3)
    assert answers[2]["code"] == "rate_limited" and answers[2]["id"] is None


@pytest.mark.limits(request_burst=1, requests_per_s=0.01, refusals_before_close=3)
async def test_a_connection_that_keeps_sending_past_its_limit_is_closed_with_1008(
    ws_url: str,
) -> None:
    async with websocket_connect(ws_url) as connection:
        await send_all(connection, [{"type": "ping", "id": n} for n in range(50)])
        codes = []
        with pytest.raises(ConnectionClosed):
            while True:
                codes.append(json.loads(await asyncio.wait_for(connection.recv(), 10)).get("code"))
    assert codes == [None, "rate_limited", "rate_limited", "rate_limited", "rate_limited"]
    assert connection.close_code == 1008 and connection.close_reason == "too many requests"


@pytest.mark.limits(costly_request_burst_per_ip=2, costly_requests_per_min_per_ip=0.1)
async def test_costly_requests_have_a_smaller_budget_per_address(connect: Connect) -> None:
    first, second = await connect(), await connect()
    await first.register("ana")
    await second.register("bob")
    # The address has spent its two costly requests: a third player cannot register from it.
    third = await connect()
    refused = await third.request("register", name="cyd")
    assert refused["code"] == "rate_limited" and refused["retry_after_ms"] > 60_000
    # Cheap requests still go through.
    assert (await first.ok("list_matches"))["type"] == "matches"


@pytest.mark.limits(
    costly_request_burst=3,
    costly_requests_per_min=0.1,
    costly_request_burst_per_ip=3,
    costly_requests_per_min_per_ip=0.1,
)
async def test_costly_requests_have_a_budget_per_player_across_addresses(
    server: Server, ws_url: str
) -> None:
    async def client_from(address: str) -> Client:
        return Client(await websocket_connect(ws_url, local_addr=(address, 0)))

    ana = await client_from("127.0.0.2")
    await ana.register("ana")  # 127.0.0.2: 1 of 3
    await ana.ok("rating")  # 127.0.0.2: 2 of 3, ana: 1 of 3
    await ana.ok("rating")  # 127.0.0.2: 3 of 3, ana: 2 of 3
    assert ana.token is not None
    elsewhere = await client_from("127.0.0.3")
    await elsewhere.ok("hello", token=ana.token)  # 127.0.0.3: 1 of 3
    await elsewhere.ok("rating")  # 127.0.0.3: 2 of 3, ana: 3 of 3
    refused = await elsewhere.request("rating")  # the address has one left, ana none
    assert refused["code"] == "rate_limited"
    fresh = await client_from("127.0.0.3")
    await fresh.register("bob")  # the same address's last, for another player
    assert (await fresh.request("rating"))["code"] == "rate_limited"
    for client in (ana, elsewhere, fresh):
        await client.close()


@pytest.mark.limits(costly_request_burst_per_ip=1, costly_requests_per_min_per_ip=0.1)
async def test_http_reads_share_the_address_budget_and_say_when_to_retry(server: Server) -> None:
    assert (await http_get(server.port, "/matches"))[0] == 200
    status, body = await http_get(server.port, "/tournaments")
    assert status == 429 and body["code"] == "rate_limited"
    headers = await http_headers(server, "/tournaments")
    assert int(headers["Retry-After"]) >= 60
    # Health checks are never limited.
    assert (await http_get(server.port, "/livez"))[0] == 200


@pytest.mark.limits(max_connections_per_ip=2)
async def test_an_address_may_keep_only_so_many_connections_open(
    server: Server, ws_url: str
) -> None:
    async with websocket_connect(ws_url) as first, websocket_connect(ws_url) as second:
        await first.send(json.dumps({"type": "ping"}))
        await second.send(json.dumps({"type": "ping"}))
        await first.recv()
        await second.recv()
        with pytest.raises(InvalidStatus) as refused:
            await websocket_connect(ws_url)
        assert refused.value.response.status_code == 429
        async with websocket_connect(ws_url, local_addr=("127.0.0.2", 0)) as other_address:
            await other_address.send(json.dumps({"type": "ping"}))
            assert json.loads(await other_address.recv())["type"] == "pong"
    await wait_until(lambda: not server.services.connections_by_address)
    async with websocket_connect(ws_url) as again:
        await again.send(json.dumps({"type": "ping"}))
        assert json.loads(await again.recv())["type"] == "pong"


@pytest.mark.limits(max_connections_per_ip=3)
async def test_handshakes_at_the_same_instant_cannot_all_pass_the_connection_limit(
    server: Server, ws_url: str
) -> None:
    attempts = await asyncio.gather(
        *(websocket_connect(ws_url) for _ in range(8)), return_exceptions=True
    )
    opened = [a for a in attempts if not isinstance(a, BaseException)]
    refused = [a for a in attempts if isinstance(a, InvalidStatus)]
    assert len(opened) == 3 and len(refused) == 5
    assert all(r.response.status_code == 429 for r in refused)
    for connection in opened:
        await connection.close()
    await wait_until(lambda: not server.services.connections_by_address)


async def test_behind_a_trusted_balancer_each_forwarded_client_has_its_own_connection_limit(
    settings: Settings,
) -> None:
    balanced = Server(
        replace(
            settings,
            trusted_proxies=parse_networks("127.0.0.1"),
            limits=replace(settings.limits, max_connections_per_ip=1),
        )
    )
    await balanced.start()
    url = f"ws://127.0.0.1:{balanced.port}"
    try:
        ana = await websocket_connect(url, additional_headers={"X-Forwarded-For": "198.51.100.1"})
        bob = await websocket_connect(url, additional_headers={"X-Forwarded-For": "198.51.100.2"})
        with pytest.raises(InvalidStatus) as refused:
            await websocket_connect(url, additional_headers={"X-Forwarded-For": "198.51.100.1"})
        assert refused.value.response.status_code == 429
        assert b"198.51.100.1 already has 1" in refused.value.response.body
        await ana.close()
        await bob.close()
    finally:
        await balanced.close()


@pytest.mark.limits(auth_timeout_s=0.3)
async def test_a_connection_that_never_authenticates_is_closed(
    ws_url: str, clock: FakeClock
) -> None:
    async with websocket_connect(ws_url) as idle, websocket_connect(ws_url) as player:
        await player.send(json.dumps({"type": "register", "id": 1, "name": "ana"}))
        assert json.loads(await player.recv())["type"] == "registered"
        await idle.send(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(await idle.recv())["type"] == "pong"  # answering pings is not enough
        clock.advance(0.3)
        await asyncio.wait_for(idle.wait_closed(), 10)
        assert idle.close_code == 1008 and "within 0.3 s" in (idle.close_reason or "")
        await player.send(json.dumps({"type": "ping", "id": 2}))
        assert json.loads(await player.recv())["type"] == "pong"


async def host_of_many_public_matches(ws_url: str) -> Client:
    """A player hosting 80 public matches: each listing is then about 22 KB."""
    host = await Client.connect(ws_url)
    await host.register("ana")
    for _ in range(80):
        await host.ok("create_match", public=True)
    return host


async def slow_reader(server: Server, ws_url: str) -> ClientConnection:
    """A connection with a tiny receive buffer that reads one frame at a time."""
    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.setblocking(False)
    await asyncio.get_running_loop().sock_connect(reader, ("127.0.0.1", server.port))
    # Uncompressed: a listing repeats itself and would shrink to a few KB.
    return await websocket_connect(ws_url, sock=reader, max_queue=1, compression=None)


@pytest.mark.limits(max_pending_bytes=16 * 1024, send_timeout_s=0.5)
async def test_a_client_that_never_reads_is_dropped_not_buffered_forever(
    server: Server, ws_url: str
) -> None:
    host = await host_of_many_public_matches(ws_url)
    silent = await slow_reader(server, ws_url)
    await silent.send(json.dumps({"type": "register", "id": 0, "name": "silent"}))
    # Each listing is about 22 KB: 600 of them are far more than the kernel's socket
    # buffers (at most 4 MB here) and the limit hold.
    try:
        await send_all(silent, [{"type": "list_matches", "id": n} for n in range(600)])
    except ConnectionClosed:
        pass  # dropped while still sending
    await wait_until(lambda: server.services.connections_by_address.get("127.0.0.1") == 1)
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(silent.recv(), 10)
    assert (await host.ok("ping"))["type"] == "pong"
    await host.close()


@pytest.mark.limits(max_pending_bytes=16 * 1024, send_timeout_s=10.0)
async def test_a_client_that_reads_late_gets_every_reply_in_order(
    server: Server, ws_url: str
) -> None:
    host = await host_of_many_public_matches(ws_url)
    late = await slow_reader(server, ws_url)
    await late.send(json.dumps({"type": "register", "id": 0, "name": "late"}))
    assert json.loads(await late.recv())["type"] == "registered"
    # 400 listings of about 22 KB: more than the kernel's socket buffers hold, so that
    # unread they fill the server's write buffer past max_pending_bytes, and the next
    # send waits for the client (the server's slow path) until it reads.
    await send_all(late, [{"type": "list_matches", "id": n} for n in range(1, 401)])
    await wait_until(
        lambda: any(
            session.connection.transport.get_write_buffer_size() > 16 * 1024
            for session in server.sessions
        )
    )
    answers = await replies(late, 400)
    assert [a["id"] for a in answers] == list(range(1, 401))
    assert {a["type"] for a in answers} == {"matches"}
    await late.close()
    await host.close()


async def test_a_client_offering_compression_is_served_without_it(ws_url: str) -> None:
    # Frames are a few hundred bytes: deflating each costs CPU and memory, saves little.
    async with websocket_connect(ws_url, compression="deflate") as connection:
        assert connection.response is not None
        assert "Sec-WebSocket-Extensions" not in connection.response.headers
        await connection.send(json.dumps({"type": "ping", "id": 1}))
        assert json.loads(await connection.recv())["type"] == "pong"


async def wait_until(condition: Callable[[], bool], *, timeout_s: float = 10) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)


async def http_headers(server: Server, path: str) -> dict[str, str]:
    def fetch() -> dict[str, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5):
                raise AssertionError(f"{path} was served")
        except urllib.error.HTTPError as error:
            return dict(error.headers)

    return await asyncio.to_thread(fetch)


async def http_request(
    server: Server, method: str, path: str, *, body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    def fetch() -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.port}{path}", method=method, data=body
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    return await asyncio.to_thread(fetch)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
async def test_http_answers_only_get(server: Server, method: str) -> None:
    for path in ("/matches", "/healthz", "/leaderboards/classic"):
        status, headers, body = await http_request(server, method, path)
        assert (status, headers["Allow"]) == (405, "GET")
        assert json.loads(body)["code"] == "method_not_allowed"


async def test_an_http_request_with_a_body_is_refused_by_closing_the_connection(
    server: Server,
) -> None:
    with pytest.raises(http.client.RemoteDisconnected):
        await http_request(server, "POST", "/matches", body=b"{}")


async def test_liveness_answers_while_the_process_runs(server: Server) -> None:
    assert await http_get(server.port, "/livez") == (200, {"status": "alive"})


async def test_readiness_and_requests_tell_a_database_outage(settings: Settings) -> None:
    async with proxied_server(settings) as (server, proxy):
        assert await http_get(server.port, "/healthz") == (200, {"status": "ok"})
        client = Client(await websocket_connect(f"ws://127.0.0.1:{server.port}"))
        await proxy.cut()
        status, body = await http_get(server.port, "/healthz")
        assert status == 503 and body == {"status": "unavailable", "failing": ["database"]}
        assert await http_get(server.port, "/livez") == (200, {"status": "alive"})
        refused = await client.request("register", name="ana")
        assert refused["code"] == "storage_unavailable"
        await proxy.restore()
        assert await http_get(server.port, "/healthz") == (200, {"status": "ok"})
        assert (await client.register("ana"))["type"] == "registered"
        await client.close()


async def test_readiness_tells_a_broker_outage_and_a_replicas_own_matches_go_on(
    settings: Settings,
) -> None:
    """docs/operations.md, "Redis restarts": while its broker is down a replica answers
    503 to ``/healthz`` (no new connections come), and the matches it runs itself go on:
    their events reach its own connections without Redis."""
    redis = Redis()
    server = Server(replace(settings, redis_url=redis.url))
    await server.start()
    try:
        url = f"ws://127.0.0.1:{server.port}"
        ana = Client(await websocket_connect(url))
        await ana.register("ana")
        assert await http_get(server.port, "/healthz") == (200, {"status": "ok"})
        redis.halt()
        status, body = await http_get(server.port, "/healthz")
        assert status == 503 and body == {"status": "unavailable", "failing": ["broker"]}
        created = await ana.ok("create_match", public=True)
        code = created["match"]["code"]
        await ana.ok("ready", code=code)
        await ana.event("ready")  # the match's own event, handed over without Redis
        redis.resume()
        await wait_until_ready(server)
        assert await http_get(server.port, "/healthz") == (200, {"status": "ok"})
        await ana.close()
    finally:
        await server.close()
        redis.stop()


async def wait_until_ready(server: Server, *, timeout_s: float = 20) -> None:
    async with asyncio.timeout(timeout_s):
        while (await http_get(server.port, "/healthz"))[0] != 200:
            await asyncio.sleep(0.05)


async def test_a_shutdown_with_no_connection_open_does_not_linger(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A linger far past the test's patience: waited for, it would fail the test.
    monkeypatch.setattr("server.app.DRAIN_LINGER_S", 60.0)
    running = Server(settings)
    await running.start()
    client = await Client.connect(f"ws://127.0.0.1:{running.port}")
    assert (await client.request("ping"))["type"] == "pong"
    await client.close()
    async with asyncio.timeout(10):
        await running.close()
