"""The scale benchmark runs and prints every figure (two tiny player counts for a second
each; no speed is checked: the figures come from ``python -m bench.scale``); what it
concludes from a series is tested on made-up rows."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import scale
from bench.load import Busy, Phase, rss_bytes
from bench.players import Tally
from bench.scale import Journal, Reading, Row, conclusions, metric_values, player_counts

SHARE = r"[0-9]+%"
MICROSECONDS = r"[0-9,]+\.[0-9] µs"
COUNT = r"[0-9,]+"
CELLS = [
    COUNT,  # players
    COUNT,  # offered actions/s
    COUNT,  # actions/s
    MICROSECONDS,  # server CPU per action
    SHARE,  # in the kernel
    SHARE,  # server core busy
    SHARE,  # server waiting for it
    SHARE,  # load core busy
    r"[0-9,.]+ / [0-9,.]+ ms",  # ack p50 / p99
    COUNT,  # commits/s
    r"[0-9,.]+",  # rows a commit
    SHARE,  # committing
    r"[0-9,.]+ (?:B|KiB|MiB)",  # written per action
    r"in the server \(SQLite\)",  # database CPU per action
    COUNT,  # frames waiting
    "0",  # errors
    r"[0-9]+\.[0-9]",  # load average
]


def test_the_command_runs_each_count_on_a_fresh_server_and_prints_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.scale",
         "--players", "4,8", "--seconds", "1", "--warmup-s", "0.5", "--pace-per-s", "5"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(
        r"server: gaps-server on SQLite in a temporary directory, a fresh one a count.*",
        lines[0],
    ), lines[0]
    assert lines[1] == (
        "load: 4-player classic races at 5 action/s a player, 1 s a count after a 0.5 s warm-up"
    )
    assert lines[2] == scale.HEADER
    assert lines[3] == "|" + "---|" * len(CELLS)
    for line, players in zip(lines[4:6], ("4", "8"), strict=True):
        cells = line.strip("|").split(" | ")
        assert len(cells) == len(CELLS), line
        assert cells[0].strip() == players
        for cell, pattern in zip(cells, CELLS, strict=True):
            assert re.fullmatch(pattern, cell.strip()), (cell, pattern)
    rest = lines[6:]
    assert re.fullmatch(
        rf"cpu per action: least at [48] players \({MICROSECONDS}\); at 8 players "
        rf"{MICROSECONDS} \([0-9.]+x the least\)",
        rest[0],
    ), rest[0]
    # On a shared machine a tiny count may still starve: what it says of it is free.
    verdicts = rest[1:-2]
    assert verdicts, rest
    for verdict in verdicts:
        assert re.fullmatch(
            r"at [48] players: served [0-9,]+ of [0-9,]+ actions/s(?: \(fell behind\))?; past "
            r"90%: .+; server core [0-9]+% busy, its threads waiting for a core [0-9]+% of the "
            r"window, machine load average [0-9.]+"
            r"|every count kept up, with nothing past 90%",
            verdict,
        ), verdict
    assert re.fullmatch(
        r"players per core: (?:a whole core serves about [0-9,]+ players at 5 action/s "
        rf"\({MICROSECONDS} an action at [48] players\); add a process past about [0-9,]+ "
        r"players per core \(70% busy\); .*|unknown \(no count's CPU per action fits one "
        r"core\))",
        rest[-2],
    ), rest[-2]
    assert re.fullmatch(
        r"machine: load average [0-9.]+ before, [0-9.]+ after \([0-9]+ cores\)", rest[-1]
    )


def test_player_counts_are_a_comma_separated_list_within_bounds() -> None:
    assert player_counts("100, 1000,3000") == [100, 1000, 3000]
    with pytest.raises(Exception, match="is not in"):
        player_counts("100,20000")
    with pytest.raises(Exception, match="names no player count"):
        player_counts(",")


def reading(at: float, *, cpu_s: float, commit_s: float, commits: int, rows: int) -> Reading:
    return Reading(
        at=at, user_s=cpu_s * 0.75, system_s=cpu_s * 0.25, waiting_s=cpu_s / 5,
        written_bytes=rows * 4096,
        journal=Journal(commit_s=commit_s, commits=commits, rows=rows, frames_waiting=0),
        database_cpu_s=None, wal_bytes=None, load_average=1.5,
    )  # fmt: skip


def row(players: int, acks: int, *, server_cpu_s: float, load_cpu_s: float, commit_s: float) -> Row:
    """``players`` at one action a second over a 10 s window: ``acks`` acknowledged."""
    tally = Tally(acks=acks, acks_ms=[5.0] * 98 + [80.0] * 2)  # p50 5 ms, p99 80 ms
    phase = Phase(tally, 10.0, Busy(10.0, server_cpu_s, load_cpu_s), players)
    first = reading(100.0, cpu_s=0.0, commit_s=0.0, commits=0, rows=0)
    last = reading(110.0, cpu_s=server_cpu_s, commit_s=commit_s, commits=acks // 4, rows=acks)
    return Row(players, 1.0, phase, first, last, storage_errors=0)


def test_a_series_says_where_cpu_per_action_grows_what_saturated_and_players_per_core() -> None:
    rows = [
        row(100, 1_000, server_cpu_s=0.5, load_cpu_s=0.1, commit_s=0.5),  # 500 µs
        row(1000, 10_000, server_cpu_s=2.5, load_cpu_s=1.0, commit_s=3.0),  # 250 µs
        row(3000, 29_000, server_cpu_s=8.7, load_cpu_s=3.0, commit_s=9.5),  # 300 µs, commits
        row(6000, 33_000, server_cpu_s=9.9, load_cpu_s=9.5, commit_s=6.0),  # server, load
    ]
    lines = conclusions(rows)
    assert lines[0] == (
        "cpu per action: least at 1,000 players (250.0 µs); at 6,000 players 300.0 µs "
        "(1.20x the least)"
    )
    assert lines[1] == (
        "at 3,000 players: served 2,900 of 3,000 actions/s; past 90%: the journal's commits "
        "(95% of the time committing); server core 87% busy, its threads waiting for a core "
        "17% of the window, machine load average 1.5"
    )
    assert lines[2] == (
        "at 6,000 players: served 3,300 of 6,000 actions/s (fell behind); past 90%: the "
        "server's core (99% busy), the load's core (95% busy: its figures are the load's); "
        "server core 99% busy, its threads waiting for a core 20% of the window, machine load "
        "average 1.5"
    )
    # A core at 300 µs an action serves 3,333 players: 3,000 fits, 6,000 does not.
    assert lines[3] == (
        "players per core: a whole core serves about 3,333 players at 1 action/s (300.0 µs an "
        "action at 3,000 players); add a process past about 2,333 players per core (70% busy); "
        "no count kept up with an ack p99 under 50 ms"
    )


def test_a_count_starved_of_its_core_falls_behind_with_nothing_saturated() -> None:
    starved = row(3000, 15_000, server_cpu_s=4.5, load_cpu_s=2.0, commit_s=2.0)
    kept = row(1000, 10_000, server_cpu_s=2.5, load_cpu_s=1.0, commit_s=3.0)
    lines = conclusions([kept, starved])
    assert lines[1] == (
        "at 3,000 players: served 1,500 of 3,000 actions/s (fell behind); past 90%: nothing; "
        "server core 45% busy, its threads waiting for a core 9% of the window, machine load "
        "average 1.5"
    )
    # Its CPU per action (300 µs) still says what a whole core would serve.
    assert lines[2].startswith(
        "players per core: a whole core serves about 3,333 players at 1 action/s (300.0 µs an "
        "action at 3,000 players)"
    )
    assert conclusions([kept])[1] == "every count kept up, with nothing past 90%"


def test_a_count_with_errors_names_them() -> None:
    failed = row(3000, 29_000, server_cpu_s=8.7, load_cpu_s=3.0, commit_s=2.0)
    failed.phase.tally.errors.update({"setup_timeout": 700, "storage_unavailable": 31})
    failed = dataclasses.replace(failed, storage_errors=2)
    assert failed.errors == 733
    assert (
        "at 3,000 players, errors: 700 setup_timeout, 31 storage_unavailable, "
        "2 storage errors in the server's log"
    ) in conclusions([failed])


def test_no_players_per_core_without_a_count_that_fits_one_core() -> None:
    swamped = row(6000, 2_000, server_cpu_s=10.0, load_cpu_s=1.0, commit_s=1.0)  # 5 ms each
    assert conclusions([swamped])[-1] == (
        "players per core: unknown (no count's CPU per action fits one core)"
    )


def test_the_table_row_shares_commits_and_kernel_time() -> None:
    cells = scale.table_row(row(1000, 10_000, server_cpu_s=2.5, load_cpu_s=1.0, commit_s=3.0))
    assert cells == (
        "| 1,000 | 1,000 | 1,000 | 250.0 µs | 25% | 25% | 5% | 10% | 5.0 / 80.0 ms | 250 | 4.0 "
        "| 30% | 4.0 KiB | in the server (SQLite) | 0 | 0 | 1.5 |"
    )


def test_a_server_that_did_not_answer_its_metrics_has_no_commit_figures() -> None:
    counted = row(1000, 10_000, server_cpu_s=9.5, load_cpu_s=1.0, commit_s=3.0)
    silent = dataclasses.replace(counted, last=dataclasses.replace(counted.last, journal=None))
    assert silent.commits is None and silent.committing is None
    cells = scale.table_row(silent).strip("|").split(" | ")
    assert [cell.strip() for cell in cells[9:12]] == ["unknown"] * 3
    assert cells[14].strip() == "unknown"  # frames waiting
    assert silent.saturated() == ["the server's core (95% busy)"]


def test_metrics_without_labels_are_read_by_sample_name() -> None:
    exposition = (
        "# TYPE gaps_commit_latency_seconds histogram\n"
        'gaps_commit_latency_seconds_bucket{le="0.005"} 3.0\n'
        'gaps_commit_latency_seconds_bucket{le="+Inf"} 4.0\n'
        "gaps_commit_latency_seconds_count 4.0\n"
        "gaps_commit_latency_seconds_sum 0.125\n"
        "# TYPE gaps_actions_committed counter\n"
        "gaps_actions_committed_total 17.0\n"
    )
    values = metric_values(exposition)
    assert values["gaps_commit_latency_seconds_sum"] == 0.125
    assert values["gaps_commit_latency_seconds_count"] == 4.0
    assert values["gaps_actions_committed_total"] == 17.0
    assert "gaps_commit_latency_seconds_bucket" not in values


def test_a_process_cpu_and_its_writes_to_storage_are_read_from_proc() -> None:
    user_s, system_s = scale.process_times(os.getpid())
    assert user_s > 0 and system_s >= 0
    assert scale.written_bytes(os.getpid()) >= 0
    assert scale.waiting_seconds(os.getpid()) >= 0


def test_postgresql_write_ahead_log_counts_with_the_servers_own_writes() -> None:
    counted = row(1000, 10_000, server_cpu_s=2.5, load_cpu_s=1.0, commit_s=3.0)
    with_wal = dataclasses.replace(
        counted,
        first=dataclasses.replace(counted.first, wal_bytes=1_000_000),
        last=dataclasses.replace(counted.last, wal_bytes=3_000_000),
    )
    assert counted.written_per_action == 4096
    assert with_wal.written_per_action == 4096 + 200


def test_a_series_with_no_count_measured_concludes_nothing() -> None:
    assert conclusions([]) == [
        "players per core: unknown (no count's CPU per action fits one core)"
    ]


def test_a_child_of_the_server_that_has_exited_holds_no_memory_and_fails_no_count() -> None:
    # A zombie has no VmRSS: reading one ended a whole count ("no VmRSS for process").
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
        assert "State:\tZ" in Path(f"/proc/{child.pid}/status").read_text()
        assert rss_bytes(child.pid) == 0
    finally:
        child.wait()
