"""The load benchmark runs, plays real actions and prints every figure (a few players for
a second or two, and no timing is checked: the figures come from ``python -m bench.load``);
its pure helpers and its light WebSocket client are tested on their own."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections import Counter

import pytest
from websockets.asyncio.server import ServerConnection, serve

from bench import load as loadbench
from bench import players
from bench.load import (
    BadArguments,
    Busy,
    Phase,
    build_parser,
    check_arguments,
    errors_line,
    latency_line,
    memory_line,
    percentile,
    raised_limits,
    result_lines,
    server_log_line,
    storage_errors,
)
from bench.players import Pacer, Tally, game_from
from bench.wire import WireClosed, WireError, open_wire
from gaps import Game, Seed
from tests.fake_clock import FakeClock

LATENCIES = r"p50 [0-9.]+ ms, p95 [0-9.]+ ms, p99 [0-9.]+ ms"
MEMORY = (
    r"-?[0-9,.]+ KiB per connection \(RSS [0-9,.]+ MiB before, [0-9,.]+ MiB after "
    r"(?P<connections>[0-9,]+) connections\)"
)
SHARE = r"(?:[0-9]+%|unknown)"
MICROSECONDS = r"[0-9,]+\.[0-9] µs"


def check_figures(lines: list[str], *, players: int, own_server: bool) -> None:
    """Every line in its place, ``cpu ratio:`` last; real actions played and no error."""
    header = 4 if own_server else 3
    assert len(lines) == header + 14, lines
    figures = lines[header:]
    actions = re.fullmatch(
        r"actions: (?P<count>[0-9,]+) in [0-9.]+ s: (?P<rate>[0-9,]+) actions/s "
        r"\([0-9,]+ match(?:es)? ended\)",
        figures[0],
    )
    assert actions, figures[0]
    assert int(actions["count"].replace(",", "")) > 0
    assert re.fullmatch(rf"ack latency: {LATENCIES}", figures[1]), figures[1]
    events = re.fullmatch(
        rf"event latency: {LATENCIES} \((?P<count>[0-9,]+) progress events to opponents\)",
        figures[2],
    )
    assert events and int(events["count"].replace(",", "")) > 0, figures[2]
    if own_server:
        memory = re.fullmatch(f"memory: {MEMORY}", figures[3])
        assert memory and memory["connections"] == str(players), figures[3]
    else:
        assert figures[3] == "memory: not measured (a server given by --url)"
    echo = re.fullmatch(
        rf"fan-out echo: (?P<count>[0-9,]+) round trips in [0-9.]+ s: [0-9,]+ round trips/s, "
        rf"{LATENCIES}",
        figures[4],
    )
    assert echo and int(echo["count"].replace(",", "")) > 0, figures[4]
    echo_memory = re.fullmatch(f"fan-out echo memory: {MEMORY}", figures[5])
    assert echo_memory and echo_memory["connections"] == str(players), figures[5]
    assert re.fullmatch(
        rf"busy \(share of a core over each window\): server {SHARE}, its load [0-9]+%; "
        r"fan-out echo [0-9]+%, its load [0-9]+%",
        figures[6],
    ), figures[6]
    if own_server:
        assert re.fullmatch(f"server CPU per action: {MICROSECONDS}", figures[7]), figures[7]
    else:
        assert figures[7] == "server CPU per action: unknown (a server given by --url)"
    assert re.fullmatch(f"fan-out echo CPU per round: {MICROSECONDS}", figures[8]), figures[8]
    assert re.fullmatch(
        r"machine: load average [0-9.]+ before, [0-9.]+ after \([0-9]+ cores\)", figures[9]
    ), figures[9]
    assert figures[10] == "errors: none"
    if own_server:
        assert figures[11] == "server log: no storage error"
    else:
        assert figures[11] == "server log: not read (a server given by --url)"
    assert re.fullmatch(r"ack p99 over the fan-out echo's: [0-9]+\.[0-9]{2}", figures[12])
    ratio = r"[0-9]+\.[0-9]{2}" if own_server else "unknown"
    assert re.fullmatch(f"cpu ratio: {ratio}", figures[13]), figures[13]
    assert figures[-1] is figures[13]


def without_warnings(lines: list[str]) -> list[str]:
    """The lines less those warning that the load was too busy: a smoke test on a shared
    machine may see one; whether it is printed is tested on ``load_warnings``."""
    return [line for line in lines if not line.startswith("warning: the load was ")]


def bench(*argv: str) -> subprocess.CompletedProcess[str]:
    """``gaps-bench argv``, run to its end; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", *argv],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def test_the_command_races_bots_on_its_own_server_and_prints_every_figure() -> None:
    done = bench("--players", "6", "--match-size", "3", "--seconds", "2", "--warmup-s", "0.5")
    lines = without_warnings(done.stdout.splitlines())
    assert re.fullmatch(
        r"server: ws://127\.0\.0\.1:[0-9]+ \(gaps-server on SQLite in a temporary "
        r"directory.*\)",
        lines[0],
    ), lines[0]
    assert lines[1].startswith("limits raised: --requests-per-s ")
    assert re.fullmatch(
        r"fan-out echo server: ws://127\.0\.0\.1:[0-9]+ \(each frame back, and an event to "
        r"the 2 others of its group of 3, written as gaps-server writes them.*\)",
        lines[2],
    ), lines[2]
    assert lines[3] == (
        "load: 6 players in 3-player classic races, flat out, 2 s a server after a 0.5 s warm-up"
    )
    check_figures(lines, players=6, own_server=True)
    assert (
        "gaps-server: 6 players registered; dealing their first matches, then 2 s of races..."
        in done.stderr
    )


async def test_the_command_measures_a_running_server_given_by_url(ws_url: str) -> None:
    # Asynchronous: the server under test answers from this very event loop.
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.load", "--url", ws_url, "--no-pin",
        "--players", "2", "--match-size", "2", "--seconds", "1", "--warmup-s", "0",
        "--pace-per-s", "50",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == 0, err.decode()
    lines = without_warnings(out.decode().splitlines())
    assert lines[0] == f"server: {ws_url} (given by --url; its own limits)"
    assert lines[2] == "load: 2 players in 2-player classic races, 50 actions/s each, 1 s a server"
    # (--warmup-s 0: the window opens at once)
    check_figures(lines, players=2, own_server=False)


def test_a_url_off_this_machine_is_refused_before_any_connection() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--url", "ws://192.0.2.1:8765"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert "'192.0.2.1' is not a loopback address" in done.stderr


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["--players", "0"], "argument --players: 0 is not in [1, 10000]"),
        (["--players", "many"], "argument --players: 'many' is not a number"),
        (["--match-size", "17"], "argument --match-size: 17 is not in [1, 16]"),
        (["--pace-per-s", "-1"], "argument --pace-per-s: -1 is not in [0, 1000]"),
        (["--seconds", "601"], "argument --seconds: 601 is not in [0.1, 600]"),
        (["--ruleset", "poker"], "argument --ruleset: invalid choice: 'poker'"),
    ],
)
def test_an_option_out_of_its_bounds_is_refused_by_name(
    argv: list[str], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        loadbench.main(argv)
    assert exited.value.code == 2
    assert why in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (
            ["--url", "ws://127.0.0.1:8765", "--database-url", "postgresql://x@127.0.0.1/db"],
            "--database-url is for the server this command starts, not for --url",
        ),
        (
            ["--url", "ws://127.0.0.1:8765", "--workers", "2"],
            "--workers is for the server this command starts, not for --url",
        ),
        (
            ["--url", "ws://127.0.0.1:8765", "--server-arg=--grace-s=5"],
            "--server-arg is for the server this command starts, not for --url",
        ),
        (["--url", "wss://127.0.0.1:8765"], "only ws:// URLs are measured"),
    ],
)
def test_options_that_make_no_run_are_refused_before_any_server_starts(
    argv: list[str], why: str
) -> None:
    with pytest.raises(BadArguments, match=re.escape(why)):
        check_arguments(build_parser().parse_args(argv))


def test_several_workers_are_given_one_fixed_port_and_one_server_picks_its_own() -> None:
    def port(workers: int) -> int:
        command = loadbench.gaps_server_command(
            "/tmp/data",
            database_url=None,
            workers=workers,
            players=4,
            server_args=(),
            cores=None,
        )
        return int(command[command.index("--port") + 1])

    assert port(1) == 0
    assert port(2) > 0


def test_workers_are_refused_clearly_by_a_server_without_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(loadbench, "supports_workers", lambda: False)
    with pytest.raises(SystemExit) as exited:
        loadbench.main(["--workers", "2"])
    assert exited.value.code == 2
    assert (
        "--workers 2: this gaps-server runs a single process (it has no --workers option yet)"
        in capsys.readouterr().err
    )


def test_the_players_left_over_race_together() -> None:
    assert loadbench._odd_race(50, 4) == " (and one 2-player race)"
    assert loadbench._odd_race(500, 4) == ""


def test_a_percentile_is_the_nearest_rank() -> None:
    hundred = [float(n) for n in range(100, 0, -1)]
    assert percentile(hundred, 0.99) == 99.0
    assert percentile(hundred, 0.95) == 95.0
    assert percentile(hundred, 0.5) == 50.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([7.0], 0.99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_a_latency_line_gives_three_percentiles_or_says_there_is_none() -> None:
    samples = [float(n) for n in range(1, 201)]
    assert latency_line("ack latency", samples) == (
        "ack latency: p50 100.0 ms, p95 190.0 ms, p99 198.0 ms"
    )
    assert latency_line("event latency", []) == "event latency: none measured"


def test_memory_per_connection_is_the_growth_over_the_connections() -> None:
    assert memory_line("memory", 64 * 2**20, 64 * 2**20 + 500 * 46 * 1024, 500) == (
        "memory: 46.0 KiB per connection (RSS 64.0 MiB before, 86.5 MiB after 500 connections)"
    )


def test_errors_are_counted_by_code_the_most_frequent_first() -> None:
    assert errors_line(Counter()) == "errors: none"
    counts = Counter({"no_reply": 2, "storage_unavailable": 1_500, "connection_lost": 2})
    assert errors_line(counts) == (
        "errors: 1,500 storage_unavailable, 2 connection_lost, 2 no_reply"
    )


def test_storage_errors_are_found_in_the_server_log_and_nothing_else() -> None:
    entries = [
        {"level": "error", "message": "match task failed", "match": "K7QX2M",
         "exception": "Traceback ...\nsqlite3.OperationalError: database is locked"},
        {"level": "warning", "message": "storing failed; retrying",
         "error": "OperationalError('(sqlite3.OperationalError) database is locked')"},
        {"level": "warning", "message": "storing failed; retrying",
         "error": "ConnectionDoesNotExistError('connection was closed')"},
        {"level": "warning", "message": "storage_unavailable", "error": "TimeoutError()"},
        {"level": "error", "message": "request failed",
         "exception": "Traceback ...\nasyncpg.exceptions.DeadlockDetectedError: deadlock"},
        {"level": "warning", "message": "dropped a client that does not read"},
    ]  # fmt: skip
    log = "\n".join(json.dumps(entry) for entry in entries) + "\nTraceback (not JSON)\n"
    assert storage_errors(log) == Counter(
        {
            "database is locked": 2,
            "storing failed; retrying": 1,
            "storage_unavailable": 1,
            "request failed: asyncpg": 1,
        }
    )
    assert storage_errors("") == Counter()


def test_matches_changing_owner_while_serving_are_counted_from_each_workers_metrics() -> None:
    def exposition(taken_over: int, lost: int) -> str:
        return (
            "# TYPE gaps_lease_takeovers counter\n"
            f"gaps_lease_takeovers_total {taken_over}.0\n"
            "# TYPE gaps_leases_lost counter\n"
            f"gaps_leases_lost_total {lost}.0\n"
            "# TYPE gaps_matches_created counter\n"
            "gaps_matches_created_total 40.0\n"
        )

    found = loadbench.ownership_changes([exposition(2, 0), exposition(0, 1)])
    assert loadbench.ownership_line(found) == (
        "ownership: 2 matches taken over, 1 dropped for a lost lease"
    )


def test_the_server_log_line_names_each_storage_error() -> None:
    assert server_log_line(Counter()) == "server log: no storage error"
    assert server_log_line(None) == "server log: not read (a server given by --url)"
    assert server_log_line(Counter({"database is locked": 9, "storage_unavailable": 1})) == (
        "server log: 10 storage errors (9 'database is locked', 1 'storage_unavailable')"
    )


def test_the_limits_are_raised_past_what_the_players_need() -> None:
    flags = raised_limits(500)
    values = dict(zip(flags[::2], flags[1::2], strict=True))
    assert int(values["--max-connections-per-ip"]) > 500
    for flag in (
        "--requests-per-s", "--request-burst", "--costly-requests-per-min",
        "--costly-request-burst", "--costly-requests-per-min-per-ip",
        "--costly-request-burst-per-ip",
    ):  # fmt: skip
        assert int(values[flag]) >= 1_000_000


def test_the_cpu_ratio_is_the_last_line_and_divides_cpu_per_action_by_cpu_per_round() -> None:
    # 1,000 actions for 0.25 s of the server's CPU: 250 µs each; 4,000 rounds for 0.2 s
    # of the echo's: 50 µs each.
    served = Phase(Tally(acks=1_000, acks_ms=[20.0]), 10.0, Busy(10.0, 0.25, 4.5), 4, 0, 2**20)
    echoed = Phase(Tally(acks=4_000, acks_ms=[4.0]), 10.0, Busy(10.0, 0.2, 6.0), 4, 0, 2**20)
    lines = result_lines(served, echoed, Counter(), load_averages=(0.5, 1.25))
    assert lines[0] == "actions: 1,000 in 10.0 s: 100 actions/s (0 matches ended)"
    assert "busy (share of a core over each window): server 2%, its load 45%; " \
        "fan-out echo 2%, its load 60%" in lines
    assert "server CPU per action: 250.0 µs" in lines
    assert "fan-out echo CPU per round: 50.0 µs" in lines
    assert not [line for line in lines if line.startswith("warning")]
    assert lines[-2] == "ack p99 over the fan-out echo's: 5.00"
    assert lines[-1] == "cpu ratio: 5.00"


def test_a_server_given_by_url_has_no_cpu_figure_and_no_ratio() -> None:
    served = Phase(Tally(acks=10, acks_ms=[2.0]), 1.0, Busy(1.0, None, 0.1), 2)
    echoed = Phase(Tally(acks=10, acks_ms=[1.0]), 1.0, Busy(1.0, 0.01, 0.1), 2, 0, 0)
    lines = result_lines(served, echoed, None, load_averages=(0.5, 0.5))
    assert "server CPU per action: unknown (a server given by --url)" in lines
    assert "busy (share of a core over each window): server unknown, its load 10%; " \
        "fan-out echo 1%, its load 10%" in lines
    assert lines[-1] == "cpu ratio: unknown"


def test_a_load_past_ninety_percent_of_its_core_is_called_out_for_each_window() -> None:
    quiet, busy = Busy(10.0, 9.9, 9.0), Busy(10.0, 6.0, 9.2)
    assert loadbench.load_warnings(quiet, quiet) == []
    assert loadbench.load_warnings(busy, quiet) == [
        "warning: the load was 92% busy measuring the server (over 90%): its figures are "
        "the load generator's limit, not the server's"
    ]
    assert [line.split(" (")[0] for line in loadbench.load_warnings(busy, busy)] == [
        "warning: the load was 92% busy measuring the server",
        "warning: the load was 92% busy measuring the fan-out echo",
    ]


def test_acknowledgements_count_only_inside_the_window_until_the_maximum() -> None:
    tally = Tally(window_start=10.0, window_end=20.0, max_actions=2)
    tally.acknowledged(sent=9.0, arrived=9.5)  # before the window
    tally.acknowledged(sent=10.0, arrived=10.004)
    tally.acknowledged(sent=19.99, arrived=20.5)  # after it
    assert tally.acks == 1 and tally.full_at is None
    tally.acknowledged(sent=12.0, arrived=12.010)
    assert tally.acks == 2 and tally.full_at == 12.010
    assert [round(ms, 3) for ms in tally.acks_ms] == [4.0, 10.0]


async def test_a_paced_player_sends_once_an_interval_and_never_catches_up() -> None:
    clock = FakeClock()
    pacer = Pacer(4, clock=clock, sleep=clock.sleep, offset=0.5)  # every 0.25 s, from 0.125
    first = asyncio.create_task(pacer.wait())
    await clock.until_sleeping(1)
    clock.advance(0.125)
    await first
    clock.advance(1.0)  # a slow acknowledgement: the player is late
    await pacer.wait()  # at once
    second = asyncio.create_task(pacer.wait())
    await clock.until_sleeping(1)
    clock.advance(0.125)
    assert not second.done()
    clock.advance(0.125)
    await second
    assert clock.monotonic() == pytest.approx(1.375)


async def test_a_flat_out_player_never_waits() -> None:
    clock = FakeClock()
    pacer = Pacer(0, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        await pacer.wait()
    assert clock.sleeping() == 0


def test_a_player_rebuilds_its_game_from_the_grid_the_server_sends() -> None:
    dealt = Game(Seed.derive("LOADBENCH"), "classic")
    grid = dealt.layout().splitlines()
    seen = game_from(grid, "classic", redeals_used=1, moves_made=12)
    assert seen.grid_codes() == dealt.grid_codes()
    assert (seen.redeals_used, seen.moves_made) == (1, 12)
    assert seen.legal_moves() == dealt.legal_moves()


async def test_the_window_opens_once_every_group_is_ready_each_counted_once() -> None:
    tally = Tally()
    starters = loadbench.Starters(2, tally, seconds=5.0)
    first, second = starters.callback(), starters.callback()
    first()
    first()  # a group that fails after its first deal says so again
    assert not starters.opened.is_set() and not tally.in_window(time.perf_counter())
    second()
    assert starters.opened.is_set()
    assert tally.window_end == tally.window_start + 5.0
    assert tally.in_window(time.perf_counter())


def test_a_window_that_waits_for_nobody_opens_at_once() -> None:
    tally = Tally()
    assert loadbench.Starters(0, tally, seconds=1.0).opened.is_set()
    assert tally.window_end - tally.window_start == 1.0


def test_a_warm_up_moves_the_window_past_the_first_setups() -> None:
    tally = Tally()
    starters = loadbench.Starters(1, tally, seconds=2.0, warmup_s=30.0)
    starters.callback()()
    now = time.perf_counter()
    assert starters.opened.is_set()
    assert now + 29 < tally.window_start <= now + 30
    assert tally.window_end == tally.window_start + 2.0
    assert not tally.in_window(now)  # what the first setups hold up is not counted


def test_how_busy_each_side_was_is_a_share_of_one_core() -> None:
    assert Busy(2.0, 1.948, 1.0).text("server") == "server 97%, its load 50%"
    assert Busy(2.0, None, 2.4).text("server") == "server unknown, its load 120%"
    assert Busy(0.0, 1.0, 1.0).load == 0.0


def test_a_paced_echo_client_is_told_how_long_to_wait_and_never_catches_up() -> None:
    clock = FakeClock()
    pacer = Pacer(4, clock=clock, sleep=clock.sleep, offset=0.5)  # every 0.25 s, from 0.125
    assert pacer.delay() == pytest.approx(0.125)
    clock.advance(0.125)
    assert pacer.delay() == pytest.approx(0.25)
    clock.advance(1.25)  # a slow echo: late by a whole second
    assert pacer.delay() == 0.0  # at once
    assert pacer.delay() == pytest.approx(0.25)  # then one interval later, no burst
    assert Pacer(0, clock=clock).delay() == 0.0


async def test_the_light_client_reads_frames_of_every_length_answers_pings_and_sees_the_end() -> (
    None
):
    async def server_side(connection: ServerConnection) -> None:
        await connection.send("first")  # may arrive with the handshake's answer
        for size in (125, 126, 65_535, 70_000):  # each length encoding and its edges
            await connection.send("é" * (size // 2) + "x" * (size % 2))
        await asyncio.wait_for(await connection.ping(b"still there?"), 10)
        await connection.send(await connection.recv())
        await connection.close()

    async with serve(server_side, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        wire = await open_wire(f"ws://127.0.0.1:{port}/", timeout_s=10)
        await asyncio.sleep(0.05)  # the first frame comes before anyone listens
        received: list[bytes] = []
        closed: asyncio.Future[WireClosed] = asyncio.get_running_loop().create_future()
        wire.listen(lambda payload, _arrived: received.append(payload), closed.set_result)
        wire.send(b'{"type":"ping","id":1}')
        assert isinstance(await asyncio.wait_for(closed, 10), WireClosed)
    assert received[0] == b"first"
    assert [len(payload) for payload in received[1:5]] == [125, 126, 65_535, 70_000]
    assert received[4].decode() == "é" * 35_000
    assert received[5:] == [b'{"type":"ping","id":1}']
    with pytest.raises(WireClosed):
        wire.send(b"{}")


async def test_the_light_client_refuses_a_server_that_does_not_upgrade() -> None:
    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    async with await asyncio.start_server(refuse, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(WireError, match="refused the upgrade: 'HTTP/1.1 403 Forbidden'"):
            await open_wire(f"ws://127.0.0.1:{port}/", timeout_s=10)


async def test_an_echo_that_never_comes_is_counted_as_no_reply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(players, "REPLY_TIMEOUT_S", 0.0)  # any echo awaited is overdue
    received = asyncio.Event()

    async def swallow(connection: ServerConnection) -> None:
        async for _frame in connection:
            received.set()

    async with serve(swallow, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        tally = Tally(window_start=0.0)
        echoer = players.Echoer(await open_wire(f"ws://127.0.0.1:{port}/", timeout_s=10), tally)
        looping = asyncio.create_task(echoer.loop(Pacer(0)))
        await asyncio.wait_for(received.wait(), 10)
        await echoer.close()
    assert tally.errors == Counter({"no_reply": 1}) and tally.acks == 0
    with pytest.raises(asyncio.CancelledError):
        await looping
