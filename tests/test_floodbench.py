"""The flood benchmark runs and prints its lines (tiny phases only, and no timing is
checked: the figures come from ``python -m bench.flood``)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys

import pytest

from bench.flood import (
    FLOOD_REQUESTS,
    FloodReport,
    NotLoopback,
    Phase,
    check_loopback,
    percentile,
)
from gaps_protocol.messages import decode_request

ROUND_TRIPS = r"p50 [0-9.]+ ms, p99 [0-9.]+ ms, max [0-9.]+ ms"
PINGS = r"\(10 pings at 20/s over 0\.5 s[^)]*\)"
FLOODER = (
    r"flooder: (?P<sent>[0-9,]+) requests in [0-9.]+ s \([0-9,]+/s\): [0-9,]+ served, "
    r"[0-9,]+ rate_limited.*, [0-9,]+ unanswered; "
    r"(not closed|closed by the server with [0-9]+ after [0-9.]+ s.*)"
)
TINY = ["--seconds", "0.5", "--pace-hz", "20", "--max-flood-requests", "300"]


def check_figures(lines: list[str]) -> None:
    assert len(lines) == 6, lines
    assert re.fullmatch(r"server: ws://127\.0\.0\.1:[0-9]+ \(.+\)", lines[0]), lines[0]
    assert re.fullmatch(rf"calm, no flood: {ROUND_TRIPS} {PINGS}", lines[1]), lines[1]
    assert re.fullmatch(rf"calm, flood: {ROUND_TRIPS} {PINGS}", lines[2]), lines[2]
    assert re.fullmatch(r"p99 ratio: [0-9]+\.[0-9]{2} \(goal: under 2\)", lines[3]), lines[3]
    flooder = re.fullmatch(FLOODER, lines[4])
    assert flooder, lines[4]
    assert 0 < int(flooder["sent"].replace(",", "")) <= 300
    assert re.fullmatch(r"took [0-9.]+ s", lines[5]), lines[5]


def test_the_command_starts_its_own_server_and_prints_one_figure_a_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.flood", *TINY],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    check_figures(done.stdout.splitlines())
    assert "gaps-server on SQLite" in done.stdout
    assert "0.5 s calm, then 0.5 s of flood" in done.stderr


async def test_the_command_measures_a_running_server_given_by_url(ws_url: str) -> None:
    # Asynchronous: the server under test answers from this very event loop.
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.flood", "--url", ws_url, "--no-pin", *TINY,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    check_figures(lines)
    assert lines[0] == f"server: {ws_url} (given by --url; nothing pinned)"


def test_a_url_off_this_machine_is_refused_before_any_connection() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.flood", "--url", "ws://192.0.2.1:8765"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    assert "'192.0.2.1' is not a loopback address" in done.stderr


def test_server_arguments_are_refused_with_a_url() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "bench.flood", "--url", "ws://127.0.0.1:8765",
            "--server-arg=--requests-per-s=5",
        ],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--server-arg is for the server this command starts" in done.stderr


@pytest.mark.parametrize("url", ["ws://127.0.0.1:8765", "ws://127.9.9.9:1", "ws://[::1]:80/",
                                 "ws://localhost:8765"])  # fmt: skip
def test_loopback_urls_are_flooded(url: str) -> None:
    assert check_loopback(url) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ws://10.0.0.1:8765", "'10.0.0.1' is not a loopback address"),
        ("ws://example.com:8765", "'example.com' is not a loopback address"),
        ("wss://127.0.0.1:8765", "only ws:// URLs are flooded"),
        ("127.0.0.1:8765", "only ws:// URLs are flooded"),
    ],
)
def test_other_urls_are_not_flooded(url: str, why: str) -> None:
    with pytest.raises(NotLoopback, match=re.escape(why)):
        check_loopback(url)


def test_a_percentile_is_the_nearest_rank() -> None:
    hundred = [float(n) for n in range(100, 0, -1)]
    assert percentile(hundred, 0.99) == 99.0
    assert percentile(hundred, 0.5) == 50.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([7.0], 0.99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_a_phase_line_names_refused_and_unanswered_pings() -> None:
    phase = Phase("calm, flood", 0.5, 20, [2.0, 1.0, 30.0], {"rate_limited": 1}, unanswered=1)
    assert phase.line() == (
        "calm, flood: p50 2.00 ms, p99 30.00 ms, max 30.00 ms (4 pings at 20/s over 0.5 s, "
        "1 refused with rate_limited, 1 unanswered (counted at the time given up))"
    )
    assert Phase("calm, no flood", 1, 10, [], {"rate_limited": 10}).line() == (
        "calm, no flood: no ping answered "
        "(10 pings at 10/s over 1 s, 10 refused with rate_limited)"
    )


def test_a_flood_report_line_says_what_was_served_refused_and_closed() -> None:
    report = FloodReport(
        sent=12_000, served=9_000, rate_limited=2_500, other_errors={"bad_message": 3},
        flood_s=2.0, closes=3, close_code=1008, closed_after_s=0.25, reconnects=2,
    )  # fmt: skip
    assert report.line() == (
        "flooder: 12,000 requests in 2.0 s (6,000/s): 9,000 served, 2,500 rate_limited, "
        "3 bad_message, 497 unanswered; closed by the server with 1008 after 0.25 s "
        "(3 closes, 2 reconnects)"
    )
    assert FloodReport(sent=10, served=10, flood_s=1.0).line() == (
        "flooder: 10 requests in 1.0 s (10/s): 10 served, 0 rate_limited, 0 unanswered; "
        "not closed"
    )


def test_the_flood_is_of_valid_requests_though_written_past_the_encoder() -> None:
    for template in FLOOD_REQUESTS:
        request = decode_request(template % 7)
        assert request.id == 7, template
