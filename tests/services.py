"""Throwaway PostgreSQL and Redis servers for the tests: real ones, never mocks.

Each starts on a free loopback port in a temporary directory and is stopped (and the
directory removed) at the end of the test session. PostgreSQL refuses to run as root,
so as root it runs as the ``postgres`` user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, what: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited early:\n{log.read_text(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within 30 s")


class Postgres:
    """A PostgreSQL cluster of its own; ``url(database)`` for each database made in it."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="gaps-test-pg-"))
        self.port = free_port()
        self._as_postgres: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
            self._as_postgres = ["runuser", "-u", "postgres", "--"]
        self.user = "postgres" if self._as_postgres else pwd.getpwuid(os.geteuid()).pw_name
        data = self.directory / "data"
        self._run(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                self.user,
                "--no-sync",
                "-E",
                "UTF8",
            ]
        )
        log = self.directory / "postgres.log"
        with open(log, "wb") as output:
            if self._as_postgres:
                user = pwd.getpwnam("postgres")
                os.chown(log, user.pw_uid, user.pw_gid)
            self.process = subprocess.Popen(
                [
                    *self._as_postgres,
                    str(PG_BIN / "postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.directory),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "max_connections=300",
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        _wait_for_port(self.port, "postgres", self.process, log)
        self._databases = 0

    def _run(self, command: list[str]) -> None:
        subprocess.run([*self._as_postgres, *command], check=True, capture_output=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        self._databases += 1
        name = f"gaps_test_{self._databases}"
        self._run(
            [
                str(PG_BIN / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                "postgres",
                "-qc",
                f"CREATE DATABASE {name}",
            ]
        )
        return self.url(name)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


class Redis:
    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="gaps-test-redis-"))
        self.port = free_port()
        log = self.directory / "redis.log"
        with open(log, "wb") as output:
            self.process = subprocess.Popen(
                [
                    "redis-server",
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.directory),
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        _wait_for_port(self.port, "redis-server", self.process, log)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.directory, ignore_errors=True)
