"""server.children: a child that ends with its parent (the whole of it, with a real
gaps-server: tests/test_orphans.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from server.children import guarded
from tests.processes import left_after, marked, marked_environment


def test_a_guarded_command_ends_when_its_parent_is_killed() -> None:
    environment = marked_environment()
    # A parent that starts `sleep` guarded, says its pid and waits.
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys; from server.children import guarded; "
         "child = subprocess.Popen(guarded(['sleep', '600'])); print(child.pid, flush=True); "
         "child.wait()"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, **environment},
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 30  # until the guard has become `sleep`
        while marked(environment).get(child) != "sleep 600":
            assert time.monotonic() < deadline, marked(environment)
            time.sleep(0.01)
        parent.kill()
        parent.wait()
        assert left_after(environment, timeout_s=5) == {}
    finally:
        for pid in marked(environment):
            os.kill(pid, signal.SIGKILL)


def test_a_child_whose_parent_ended_first_does_not_run_its_command() -> None:
    # Its parent is this test's process, not pid 1: as if pid 1 had started it and died.
    done = subprocess.run(
        [sys.executable, "-m", "server.children", "1", "SIGTERM", "--", "echo", "ran"],
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 1 and done.stdout == ""
    (said,) = [json.loads(line) for line in done.stderr.splitlines()]
    assert said["message"].startswith("the parent process 1 ended before its child")
    assert said["command"] == ["echo", "ran"]


def test_guarded_names_this_process_as_the_parent() -> None:
    command = guarded(["gaps-server", "serve"], signal.SIGTERM)
    assert command[-5:] == [str(os.getpid()), "SIGTERM", "--", "gaps-server", "serve"]
