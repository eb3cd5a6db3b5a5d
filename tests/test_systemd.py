"""deploy/systemd, the way to run in production without Docker: the units pass
``systemd-analyze verify``, and the commands they name do what they say when run as
systemd would run them (the migration once, a replica on its instance's port, stopped by
its kill signal); HAProxy accepts its files for that setup."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.services import free_port

ROOT = Path(__file__).resolve().parents[1]
UNITS = ROOT / "deploy" / "systemd"
#: Where the units expect things on a production host, and where they are here.
INSTALLED = {
    "/opt/gaps/venv/bin/gaps-server": str(Path(sys.executable).parent / "gaps-server"),
    "/etc/gaps/gaps.env": str(UNITS / "gaps.env"),
}

Unit = dict[str, dict[str, list[str]]]


def parsed(name: str) -> Unit:
    """The sections of unit file ``name``, each key with its values in order (a key may
    be given several times)."""
    unit: Unit = {}
    section: dict[str, list[str]] = {}
    for line in (UNITS / name).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = unit.setdefault(line[1:-1], {})
            continue
        key, value = line.split("=", 1)
        section.setdefault(key.strip(), []).append(value.strip())
    return unit


def one(unit: Unit, section: str, key: str) -> str:
    (value,) = unit[section][key]
    return value


def here(text: str, replacements: dict[str, str]) -> str:
    for production, local in {**INSTALLED, **replacements}.items():
        text = text.replace(production, local)
    return text


def test_the_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed: the tests below parse the units")
    for name in ("gaps-server@.service", "gaps-migrate.service", "gaps.target"):
        (tmp_path / name).write_text(here((UNITS / name).read_text(), {}))
    verified = subprocess.run(
        ["systemd-analyze", "verify", "gaps-migrate.service", "gaps-server@8001.service",
         "gaps.target"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    # Unknown keys and commands that are not there are reported on stderr.
    assert (verified.returncode, verified.stderr) == (0, ""), verified.stderr


def test_the_migration_is_a_one_shot_retried_on_failure_that_migrates(tmp_path: Path) -> None:
    unit = parsed("gaps-migrate.service")
    service = unit["Service"]
    assert (one(unit, "Service", "Type"), one(unit, "Service", "RemainAfterExit")) == (
        "oneshot", "yes"
    )
    assert one(unit, "Service", "Restart") == "on-failure"
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"
    assert service["EnvironmentFile"] == ["/etc/gaps/gaps.env"]
    command = shlex.split(here(one(unit, "Service", "ExecStart"), {}))
    assert command[1:] == ["migrate"]
    migrated = subprocess.run(
        command, capture_output=True, text=True, timeout=120,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'gaps.sqlite3'}"},
    )
    assert migrated.returncode == 0, migrated.stderr
    assert any(json.loads(line)["message"] == "migrated" for line in migrated.stderr.splitlines())


def test_a_replica_serves_on_its_instances_port_and_stops_on_its_kill_signal(
    tmp_path: Path,
) -> None:
    unit = parsed("gaps-server@.service")
    assert one(unit, "Service", "Restart") == "on-failure"
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"
    assert "gaps-migrate.service" in one(unit, "Unit", "After").split()
    assert "gaps-migrate.service" in one(unit, "Unit", "Wants").split()
    assert one(unit, "Unit", "PartOf") == one(unit, "Install", "WantedBy") == "gaps.target"
    assert one(unit, "Service", "KillMode") == "control-group"  # its par solvers too
    port = free_port()
    command = shlex.split(here(one(unit, "Service", "ExecStart"), {
        "%i": str(port), "/var/lib/gaps": str(tmp_path),
    }))
    assert command[1] == "serve"
    replica = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'gaps.sqlite3'}",
             "REDIS_URL": ""},
    )
    try:
        assert replica.stdout is not None
        banner = replica.stdout.readline()
        assert f"ws://127.0.0.1:{port} " in banner, banner
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as reply:
            assert reply.status == 200
        replica.send_signal(signal.Signals[one(unit, "Service", "KillSignal")])
        timeout_s = float(one(unit, "Service", "TimeoutStopSec").removesuffix("s"))
        assert replica.wait(timeout=timeout_s) == 0
    finally:
        if replica.poll() is None:
            replica.kill()
            replica.wait()


def test_the_target_starts_the_migration_and_the_enabled_replicas() -> None:
    target = parsed("gaps.target")
    assert target["Unit"]["Wants"] == ["gaps-migrate.service"]
    assert one(target, "Install", "WantedBy") == "multi-user.target"
    assert one(parsed("gaps-migrate.service"), "Install", "WantedBy") == "gaps.target"


def test_the_environment_file_sets_options_the_server_has() -> None:
    helped = subprocess.run(
        [INSTALLED["/opt/gaps/venv/bin/gaps-server"], "--help"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    known = set(re.findall(r"GAPS_[A-Z_]+", helped)) | {"DATABASE_URL", "REDIS_URL"}
    names = [line.split("=", 1)[0] for line in (UNITS / "gaps.env").read_text().splitlines()
             if line and not line.startswith("#")]
    assert {"DATABASE_URL", "REDIS_URL"} <= set(names)
    assert set(names) <= known, set(names) - known


def test_haproxy_accepts_the_systemd_configuration(tmp_path: Path) -> None:
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (scripts/topology --install, or .ci/run)")
    drop_in = parsed("haproxy.service.d/gaps.conf")["Service"]
    environment = dict(value.split("=", 1) for value in drop_in["Environment"])
    assert environment["CONFIG"] == "/etc/haproxy/gaps"
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "topology"), "certificate", "--dir",
         str(tmp_path)],
        capture_output=True, text=True, check=True,
    )
    # The directory's files, read in the order of their names, as docs/operations.md
    # installs them.
    config = tmp_path / "gaps"
    config.mkdir()
    shutil.copy(ROOT / "deploy" / "haproxy.cfg", config / "10-haproxy.cfg")
    shutil.copy(UNITS / "haproxy-replicas.cfg", config / "20-replicas.cfg")
    checked = subprocess.run(
        ["haproxy", "-c", "-f", str(config)],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, **environment, "GAPS_LB_CERT": json.loads(made.stdout)["pem"]},
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
