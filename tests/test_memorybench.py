"""The memory benchmark runs and prints every figure (a handful of players, a few
seconds; no size or speed is checked: the figures come from ``python -m bench.memory``);
its pure helpers are tested on their own."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench import memory
from bench.memory import Memory, MemoryBenchError, build_parser, check_arguments, size

SIZE = r"-?[0-9,.]+ (?:B|KiB|MiB)"
SIZES = rf"RSS {SIZE}, PSS {SIZE}, USS {SIZE}"


def test_the_command_grows_its_own_server_step_by_step_and_prints_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.memory",
         "--connections", "10", "--matches", "2", "--actions", "60"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    patterns = [
        r"server: ws://127\.0\.0\.1:[0-9]+ \(gaps-server on SQLite in a temporary "
        r"directory.*\)",
        rf"baseline: {SIZES} \(started, no connection\)",
        rf"idle connections: 10 registered, in no match: {SIZES}",
        rf"per idle connection: {SIZES}",
        rf"live matches: 2 of 4 players, dealt, the players idle: {SIZES}",
        rf"per live match: {SIZES}",
        rf"stored actions: (?P<rows>[0-9,]+) rows \([0-9,]+ acknowledged; [0-9.]+ a seat\): "
        rf"{SIZES}",
        rf"per stored action in memory: {SIZES}",
        rf"per stored action on disk: {SIZE} \(the actions table and its indexes: {SIZE} "
        rf"before, {SIZE} after; SQLite dbstat\)",
        r"machine: load average [0-9.]+ before, [0-9.]+ after \([0-9]+ cores\)",
        r"errors: none",
        r"server log: no storage error",
    ]
    assert len(lines) == len(patterns), lines
    for line, pattern in zip(lines, patterns, strict=True):
        assert re.fullmatch(pattern, line), (line, pattern)
    stored = re.fullmatch(patterns[6], lines[6])
    assert stored and int(stored["rows"].replace(",", "")) >= 60  # played, and kept


def test_more_seats_than_connections_are_refused_before_any_server_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(MemoryBenchError, match="seat 12 players: more than --connections 10"):
        check_arguments(build_parser().parse_args(["--connections", "10", "--matches", "3"]))
    with pytest.raises(SystemExit) as exited:
        memory.main(["--connections", "10", "--matches", "3"])
    assert exited.value.code == 2
    assert "--matches 3 of --match-size 4 seat 12 players" in capsys.readouterr().err


def test_sizes_are_written_in_the_unit_a_person_reads() -> None:
    assert size(97) == "97 B"
    assert size(-191.4) == "-191 B"
    assert size(18.2 * 1024) == "18.2 KiB"
    assert size(85.9 * 2**20) == "85.9 MiB"


def test_a_step_is_its_growth_over_what_it_added() -> None:
    before = Memory(rss=100 * 2**20, pss=90 * 2**20, uss=80 * 2**20)
    after = Memory(rss=100 * 2**20 + 2000 * 20_480, pss=90 * 2**20 + 2000 * 10_240,
                   uss=80 * 2**20 + 2000 * 512)  # fmt: skip
    assert (after - before).text(2000) == "RSS 20.0 KiB, PSS 10.0 KiB, USS 512 B"


def test_a_process_memory_is_read_from_smaps_rollup() -> None:
    own = memory.memory_of(os.getpid())
    assert own.rss >= own.pss >= own.uss > 0


def test_the_action_rows_and_the_pages_of_their_table_and_indexes_are_counted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gaps.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE actions (id INTEGER PRIMARY KEY, seq INT, action TEXT)")
        connection.execute("CREATE UNIQUE INDEX ux_seq ON actions (seq)")
        connection.execute("CREATE TABLE other (x)")
        empty = memory._sqlite_actions(str(path))
        connection.executemany(
            "INSERT INTO actions (seq, action) VALUES (?, ?)",
            [(seq, f"{seq % 13}C>r{seq % 4}c{seq % 13}") for seq in range(5000)],
        )
        connection.executemany("INSERT INTO other VALUES (?)", [("x" * 500,)] * 100)
        connection.commit()
    full = memory._sqlite_actions(str(path))
    page = 4096
    assert (empty.rows, empty.bytes) == (0, 2 * page)  # a root page each
    assert full.rows == 5000
    assert 5000 * 10 < full.bytes < 5000 * 60  # the two b-trees, not the other table
    assert full.how == "SQLite dbstat"
