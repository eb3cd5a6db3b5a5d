"""The processes a test started, found again whoever their parent is now.

A process whose parent died is handed to init: its ancestry no longer names the test's
process. Its environment still does: every process inherits its parent's, so a test
starts its process with a mark of its own in the environment (``marked_environment``)
and finds that process and all it started, however deep (a server's par solvers, a
topology's PostgreSQL backends), by reading /proc/PID/environ.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

MARK = "GAPS_TEST_MARK"


def marked_environment() -> dict[str, str]:
    """An environment variable, to add to a started process's environment, that none
    but that process and its descendants carry."""
    return {MARK: secrets.token_hex(8)}


def marked(environment: dict[str, str]) -> dict[int, str]:
    """The running processes (not zombies) that carry ``environment``'s mark: pid and
    command line."""
    entry = f"{MARK}={environment[MARK]}".encode()
    found = {}
    for directory in Path("/proc").iterdir():
        if not directory.name.isdigit():
            continue
        try:
            if entry not in (directory / "environ").read_bytes().split(b"\0"):
                continue
            command = (directory / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended meanwhile, or another user's
            continue
        if running(int(directory.name)):
            found[int(directory.name)] = command.strip()
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def left_after(environment: dict[str, str], *, timeout_s: float) -> dict[int, str]:
    """The processes carrying ``environment``'s mark once none is left, or when
    ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    while (left := marked(environment)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def cpu_seconds(pid: int) -> float:
    """The CPU time ``pid`` has used (user and system), 0 if it has ended."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def kill_marked(environment: dict[str, str]) -> None:
    """SIGKILL every process carrying ``environment``'s mark: what a failed test left."""
    for pid in marked(environment):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
