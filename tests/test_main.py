"""``gaps-server`` as a process: migrate alone, serve, answer health checks, stop on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from sqlalchemy import create_engine, inspect


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
    logged = [line for line in stderr.splitlines() if line.startswith("{")]
    assert any('"message": "stopped"' in line for line in logged), stderr


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
