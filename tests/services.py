"""Throwaway PostgreSQL and Redis servers for the tests: real ones, never mocks.

Each starts on a free loopback port in a temporary directory and is stopped (and the
directory removed) at the end of the test session. PostgreSQL refuses to run as root,
so as root it runs as the ``postgres`` user.

A port found free can be taken by another process before the service binds it, so a
service is only taken as started once its own log says it is ready; one that exits
because its address is in use is started again on another port.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
ADDRESS_IN_USE = "Address already in use"


def free_port() -> int:
    """A loopback port free at this moment; whoever binds it must cope with losing it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class AddressInUse(RuntimeError):
    """The service exited because another process holds its port."""


def _wait_until_ready(
    process: subprocess.Popen[bytes], log: Path, ready: str, what: str, *, timeout_s: float
) -> None:
    """Wait for ``ready`` in the service's own log: a connection to the port could reach
    whoever else holds it."""
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        exited = process.poll() is not None
        text = log.read_text(errors="replace")
        if ready in text:
            return
        if exited:
            if ADDRESS_IN_USE in text:
                raise AddressInUse(f"{what}: {ADDRESS_IN_USE}")
            raise RuntimeError(f"{what} exited early:\n{text[-2000:]}")
        time.sleep(0.02)
    process.kill()
    raise RuntimeError(f"{what} was not ready within {timeout_s} s:\n{text[-2000:]}")


def _start(
    command: Callable[[int], list[str]],
    *,
    what: str,
    log: Path,
    ready: str,
    port: int | None = None,
    attempts: int = 10,
    timeout_s: float = 30.0,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``command(port)`` until it is ready: on a new free port after each
    address-in-use exit, or on ``port`` again (briefly later) when it is given."""
    for attempt in range(attempts):
        chosen = port if port is not None else free_port()
        with open(log, "wb") as output:
            process = subprocess.Popen(command(chosen), stdout=output, stderr=subprocess.STDOUT)
        try:
            _wait_until_ready(process, log, ready, what, timeout_s=timeout_s)
        except AddressInUse:
            process.wait()
            if port is not None:
                time.sleep(0.05 * (attempt + 1))
            continue
        return process, chosen
    raise RuntimeError(f"{what}: no free port after {attempts} attempts")


def _terminate(process: subprocess.Popen[bytes], *, timeout_s: float) -> None:
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Postgres:
    """A PostgreSQL cluster of its own; ``url(database)`` for each database made in it."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="gaps-test-pg-"))
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

        def command(port: int) -> list[str]:
            return [
                *self._as_postgres,
                str(PG_BIN / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-k",
                str(self.directory),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "lc_messages=C",  # the ready and address-in-use lines are matched in English
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=300",
            ]

        self.process, self.port = _start(
            command,
            what="postgres",
            log=self.directory / "postgres.log",
            ready="database system is ready to accept connections",
        )
        # The options it runs with, for pg_ctl to start it again with (after a stop).
        self._options = command(self.port)[len(self._as_postgres) + 3:]
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
        """Stop the cluster (a fast shutdown: its sessions are ended, not waited for),
        whether it runs as started here or was started again with ``pg_ctl``, and remove
        it. Signalled through ``pg_ctl``, never through the runuser wrapper: runuser
        answers SIGTERM by forwarding it, sleeping 2 s and then killing PostgreSQL."""
        self._resume_wrapper()
        subprocess.run([*self._as_postgres, str(PG_BIN / "pg_ctl"), "stop", "-D",
                        str(self.directory / "data"), "-m", "fast", "-w", "-t", "20"],
                       capture_output=True, check=False)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _terminate(self.process, timeout_s=5)
        shutil.rmtree(self.directory, ignore_errors=True)

    def pids(self) -> list[int]:
        """The postmaster and every backend of the cluster."""
        postmaster = int((self.directory / "data" / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if parent == postmaster:
                    found.append(int(entry.name))
        return found

    def halt(self) -> None:
        """Stop the cluster's processes where they are (SIGSTOP): a stalled database."""
        for pid in self.pids():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self.pids():
            os.kill(pid, signal.SIGCONT)
        self._resume_wrapper()

    def _resume_wrapper(self) -> None:
        """As root the cluster runs under runuser, which stops itself when PostgreSQL is
        stopped (as a shell's job would be) and is not continued with it: continue it, or
        it never sees PostgreSQL exit."""
        if self._as_postgres and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def pg_ctl(self, action: str, *arguments: str) -> None:
        """``pg_ctl ACTION ARGUMENTS`` on the cluster (``stop -m fast``, ``start``,
        ``restart -m fast``), waiting for it to be done; it starts again on its port, with
        its options."""
        options = ["-o", " ".join(self._options)] if action in ("start", "restart") else []
        self._run([str(PG_BIN / "pg_ctl"), action, *arguments, *options, "-D",
                   str(self.directory / "data"), "-w", "-l", str(self.directory / "pg_ctl.log")])


class Redis:
    """A redis-server of its own; ``halt()`` and ``resume()`` take it down and bring it
    back on the same port, for tests of what survives a Redis restart.

    With ``password`` it requires one; with ``tls`` it speaks only TLS (``rediss://``),
    with a self-signed certificate in ``ca_file``.
    """

    def __init__(self, *, password: str | None = None, tls: bool = False) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="gaps-test-redis-"))
        self.password = password
        self.ca_file: Path | None = None
        if tls:
            self.ca_file = _self_signed_certificate(self.directory)
        self.process, self.port = self._start(None)

    def _start(self, port: int | None) -> tuple[subprocess.Popen[bytes], int]:
        return _start(
            self._command,
            what="redis-server",
            log=self.directory / "redis.log",
            ready="Ready to accept connections",
            port=port,
        )

    def _command(self, port: int) -> list[str]:
        command = ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.directory)]
        if self.password is not None:
            command += ["--requirepass", self.password]
        if self.ca_file is None:
            return [*command, "--port", str(port)]
        return [
            *command,
            "--port",
            "0",
            "--tls-port",
            str(port),
            "--tls-cert-file",
            str(self.ca_file),
            "--tls-key-file",
            str(self.directory / "key.pem"),
            "--tls-ca-cert-file",
            str(self.ca_file),
            "--tls-auth-clients",
            "no",
        ]

    @property
    def url(self) -> str:
        scheme = "redis" if self.ca_file is None else "rediss"
        login = "" if self.password is None else f":{quote(self.password, safe='')}@"
        return f"{scheme}://{login}127.0.0.1:{self.port}/0"

    def halt(self) -> None:
        """Stop the server (its clients see their connections close); keep its port."""
        _terminate(self.process, timeout_s=10)

    def resume(self) -> None:
        """Start the server again, empty, on the port it had."""
        self.process, self.port = self._start(self.port)

    def restart(self) -> None:
        self.halt()
        self.resume()

    def stop(self) -> None:
        _terminate(self.process, timeout_s=10)
        shutil.rmtree(self.directory, ignore_errors=True)


def _self_signed_certificate(directory: Path) -> Path:
    """A certificate for 127.0.0.1 (its key beside it in key.pem); returns its path."""
    certificate = directory / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(directory / "key.pem"),
            "-out",
            str(certificate),
        ],
        check=True,
        capture_output=True,
    )
    return certificate
