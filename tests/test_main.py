"""``gaps-server`` as a process: migrate alone, serve, answer health checks, stop on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from sqlalchemy import create_engine, inspect

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
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", str(port), "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DATABASE_URL": "", "REDIS_URL": ""},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as reply:
                    assert reply.status == 200
                    break
            except OSError:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert f"ws://127.0.0.1:{port}" in stdout
    logged = [line for line in stderr.splitlines() if line.startswith("{")]
    assert any('"message": "stopped"' in line for line in logged), stderr
