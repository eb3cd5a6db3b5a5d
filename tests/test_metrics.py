"""/metrics (server/metrics.py): scraped with Prometheus' own text parser before and after
what players do, its counts move; it is served on a listener of its own, only there."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from gaps import Game
from server.app import Server
from server.config import Settings
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.races import Connect, registered, start_race, stop_all

#: A sample: its name and its labels, sorted.
Key = tuple[str, tuple[tuple[str, str], ...]]


@pytest.fixture
async def server(settings: Settings, clock: FakeClock) -> AsyncIterator[Server]:
    """The test server, with /metrics on a port of its own (one the system picks)."""
    running = Server(replace(settings, metrics_port=0), clock=clock)
    await running.start()
    yield running
    await running.close()


def fetch(port: int, path: str = "/metrics", *, method: str = "GET") -> tuple[int, str, str]:
    """(status, content type, body) of an HTTP request to 127.0.0.1:``port``."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.headers["Content-Type"], reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


async def scrape(server: Server) -> dict[Key, float]:
    """Every sample of the server's /metrics, as Prometheus parses it."""
    assert server.metrics_port is not None
    status, content_type, text = await asyncio.to_thread(fetch, server.metrics_port)
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def moved(before: dict[Key, float], after: dict[Key, float], name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after[key] - before.get(key, 0.0)


async def play(client: Client, code: str, moves: int) -> None:
    """``moves`` legal moves of ``client``'s game, each acknowledged."""
    started = await client.event("started", match=code)
    game = Game.from_layout("\n".join(started["grid"]), "classic")
    for _ in range(moves):
        move = game.legal_moves()[0]
        reply = await client.act(code, str(move))
        assert reply["type"] == "action_ok", reply
        game.play(move)


async def test_a_race_moves_the_counts_of_actions_connections_and_matches(
    server: Server, connect: Connect
) -> None:
    before = await scrape(server)
    ana, bob = await registered(connect, "ana", "bob")
    code = await start_race([ana, bob])
    during = await scrape(server)
    await play(ana, code, 3)
    await play(bob, code, 2)
    refused = await ana.request("join_match", code="NOSUCH")
    assert refused["code"] == "no_such_match"
    await stop_all([ana, bob], code)
    after = await scrape(server)

    assert moved(before, after, "gaps_connections_opened_total") == 2
    assert after[("gaps_connections", ())] == 2
    assert moved(before, after, "gaps_actions_total") == 3 + 2 + 2  # the moves, two stops
    assert moved(before, after, "gaps_action_latency_seconds_count") == 7
    assert after[("gaps_action_latency_seconds_bucket", (("le", "+Inf"),))] == 7
    assert moved(before, after, "gaps_actions_committed_total") == 7
    assert moved(before, after, "gaps_commit_latency_seconds_count") >= 1
    assert moved(before, after, "gaps_refusals_total", code="no_such_match") == 1
    for counter in ("created", "started"):
        assert moved(before, after, f"gaps_matches_{counter}_total") == 1
    assert moved(before, after, "gaps_matches_ended_total", outcome="finished") == 1
    assert during[("gaps_matches", (("state", "running"),))] == 1
    assert after[("gaps_matches", (("state", "running"),))] == 0
    assert after[("gaps_matches", (("state", "finished"),))] == 1
    assert after[("gaps_up", (("part", "storage"),))] == 1
    assert after[("gaps_outages_total", (("part", "storage"),))] == 0
    assert after[("gaps_outbox_frames_waiting", ())] == 0
    assert after[("process_resident_memory_bytes", ())] > 10_000_000
    assert after[("process_cpu_seconds_total", ())] > 0


async def test_tournaments_by_status_the_queue_and_the_leader_are_read_at_scrape_time(
    server: Server, connect: Connect
) -> None:
    ana, bob = await registered(connect, "ana", "bob")
    before = await scrape(server)
    assert before[("gaps_tournaments", (("status", "open"),))] == 0
    assert before[("gaps_leader", ())] == 1  # one process leads itself
    await ana.ok("tournament_create", name="Cup")
    assert (await bob.ok("quick_match", ruleset="classic"))["type"] == "queued"
    after = await scrape(server)
    assert after[("gaps_tournaments", (("status", "open"),))] == 1
    assert after[("gaps_quick_match_queue", ())] == 1


@pytest.mark.limits(costly_request_burst=1, costly_requests_per_min=0.1)
async def test_rate_limited_refusals_are_counted_by_the_limit_that_refused(
    server: Server, connect: Connect
) -> None:
    (ana,) = await registered(connect, "ana")
    before = await scrape(server)
    await ana.ok("rating")  # the player's one costly request
    assert (await ana.request("rating"))["code"] == "rate_limited"
    after = await scrape(server)
    assert moved(before, after, "gaps_rate_limited_total", limit="costly_per_player") == 1
    assert moved(before, after, "gaps_rate_limited_total", limit="costly_per_address") == 0
    assert moved(before, after, "gaps_refusals_total", code="rate_limited") == 1


async def test_metrics_are_served_on_their_own_listener_only(server: Server) -> None:
    assert server.metrics_port is not None and server.metrics_port != server.port
    status, _ = await http_get(server.port, "/metrics")  # the players' port
    assert status == 404
    status, _, body = await asyncio.to_thread(fetch, server.metrics_port, "/matches")
    assert status == 404 and "only /metrics is served here" in body
    status, _, _ = await asyncio.to_thread(fetch, server.metrics_port, method="POST")
    assert status == 405


async def test_without_a_metrics_port_nothing_is_served(settings: Settings) -> None:
    running = Server(settings)
    await running.start()
    try:
        assert running.metrics_port is None
    finally:
        await running.close()


async def test_each_server_has_a_registry_of_its_own(
    server: Server, settings: Settings, connect: Connect
) -> None:
    other = Server(replace(settings, metrics_port=0), clock=FakeClock())
    await other.start()
    try:
        await registered(connect, "ana")
        mine, theirs = await scrape(server), await scrape(other)
        assert mine[("gaps_connections_opened_total", ())] == 1
        assert theirs[("gaps_connections_opened_total", ())] == 0
    finally:
        await other.close()
    # Nothing went to prometheus-client's global registry, which servers would share.
    assert not [name for name in REGISTRY._names_to_collectors if name.startswith("gaps_")]


DASHBOARD = Path(__file__).resolve().parent.parent / "deploy" / "grafana" / "gaps-arena.json"


async def test_the_sample_dashboard_reads_only_metrics_the_server_exposes(server: Server) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    used = {name for expr in expressions for name in re.findall(METRIC_NAME, expr)}
    assert server.metrics_port is not None
    _, _, text = await asyncio.to_thread(fetch, server.metrics_port)
    exposed = set(re.findall(rf"^(?:# (?:HELP|TYPE) )?({METRIC_NAME})", text, re.MULTILINE))
    assert used and used <= exposed, used - exposed
    assert {"gaps_actions_total", "gaps_matches", "process_resident_memory_bytes"} <= used


METRIC_NAME = r"(?:gaps|process)_[a-z_]+"
