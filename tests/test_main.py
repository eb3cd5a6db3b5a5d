"""``gaps-server`` as a process: migrate alone, serve, answer health checks, stop on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from tests.services import free_port


def test_migrate_creates_every_table_and_exits(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "server", "migrate", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DATABASE_URL": ""},
    )
    assert result.returncode == 0, result.stderr
    tables = set(inspect(create_engine(f"sqlite:///{tmp_path / 'gaps.sqlite3'}")).get_table_names())
    assert {"players", "matches", "match_players", "actions", "alembic_version"} <= tables


def test_the_server_serves_health_checks_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    # Port 0: the server binds a free port itself and says which, so no other process can
    # take it between a probe and the bind.
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0", "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DATABASE_URL": "", "REDIS_URL": ""},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        listening = re.search(r"ws://127\.0\.0\.1:(\d+)", banner)
        assert listening, (banner, process.stderr.read() if process.stderr else "")
        port = int(listening.group(1))
        for path, status in (("/livez", "alive"), ("/healthz", "ok")):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
                assert reply.status == 200 and json.load(reply)["status"] == status
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    # stdout (the banner) and stderr (the log) are both JSON lines, nothing else: systemd
    # and Docker merge them into one log.
    said = json.loads(banner)
    assert said["url"] == f"ws://127.0.0.1:{port}" and said["metrics"] is None
    assert said["message"].startswith(f"gaps-server listening on ws://127.0.0.1:{port} ")
    lines = [banner, *stdout.splitlines(), *stderr.splitlines()]
    logged = [json.loads(line) for line in lines if line.strip()]
    assert all(isinstance(entry, dict) and "message" in entry for entry in logged)
    assert any(entry["message"] == "stopped" for entry in logged), stderr


def test_rebuild_boards_refolds_the_stored_results_and_says_how_many(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "server", "rebuild-boards", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DATABASE_URL": ""},
    )
    assert result.returncode == 0, result.stderr
    assert "rebuilt the leaderboards and ratings from 0 rated matches" in result.stdout


def test_several_workers_are_refused_without_postgresql_and_redis(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "server", "--workers", "2", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DATABASE_URL": "", "REDIS_URL": ""},
    )
    assert result.returncode == 2
    assert (
        "--workers 2 needs a PostgreSQL DATABASE_URL (--database-url) and REDIS_URL "
        "(--redis-url)" in result.stderr
    )


def _children(pid: int) -> set[int]:
    return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def _until(predicate: Callable[[], bool], *, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout_s} s: {what}"
        time.sleep(0.1)


def _two_free_ports() -> int:
    """A loopback port free at this moment, the next one free too."""
    while True:
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port


def _serves_metrics(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as reply:
            return b"gaps_connections " in reply.read()
    except OSError:
        return False


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_workers_share_one_port_and_one_killed_is_started_again(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    port, metrics_port = free_port(), _two_free_ports()
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--workers", "2", "--port", str(port),
         "--data-dir", str(tmp_path), "--log-level", "WARNING",
         "--metrics-port", str(metrics_port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url},
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert f"supervising 2 workers on ws://127.0.0.1:{port}" in json.loads(banner)["message"]
        _until(lambda: len(_children(process.pid)) == 2, timeout_s=30, what="two workers")
        _until(lambda: _healthy(port), timeout_s=30, what="a worker answering")
        # Each worker's /metrics on a port of its own: the given one, and the next.
        for number in (0, 1):
            _until(
                lambda number=number: _serves_metrics(metrics_port + number),  # type: ignore[misc]
                timeout_s=30,
                what=f"worker {number + 1}'s metrics",
            )
        first, second = sorted(_children(process.pid))
        os.kill(first, signal.SIGKILL)
        _until(
            lambda: len(_children(process.pid) - {first, second}) == 1,
            timeout_s=30,
            what="the killed worker started again",
        )
        _until(lambda: _healthy(port), timeout_s=30, what="a worker answering")
        workers = _children(process.pid)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert not any(Path(f"/proc/{worker}").exists() for worker in workers)


def operator_command(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *argv, "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DATABASE_URL": ""},
    )


def test_operators_tasks_are_subcommands_that_the_audit_log_records(tmp_path: Path) -> None:
    assert "0 result(s) held for review" in operator_command(tmp_path, "reviews").stdout
    engine = create_engine(f"sqlite:///{tmp_path / 'gaps.sqlite3'}")
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO players (name, token_hash, created_at) "
                "VALUES ('ana', 'hash-ana', '2026-12-01 00:00:00')"
            )
        )
    engine.dispose()

    suspended = operator_command(
        tmp_path, "suspend", "--player", "ana", "--reason", "a script", "--operator", "boss"
    )
    again = operator_command(tmp_path, "suspend", "--player", "ana", "--reason", "twice")
    missing = operator_command(tmp_path, "review-void", "--player", "ana", "--reason", "x")
    unknown = operator_command(
        tmp_path, "review-void", "--match", "NOPE", "--player", "ana", "--reason", "x"
    )
    log = operator_command(tmp_path, "audit-log")

    assert suspended.returncode == 0, suspended.stderr
    assert "suspended ana from rated play" in suspended.stdout
    assert again.returncode == 1 and "refused (already_decided)" in again.stderr
    assert missing.returncode == 2 and "review-void needs --match" in missing.stderr
    assert unknown.returncode == 1 and "refused (no_such_result)" in unknown.stderr
    [line] = log.stdout.splitlines()
    assert line.endswith(" boss suspend player ana: a script")
