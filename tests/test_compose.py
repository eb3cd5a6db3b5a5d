"""docker-compose.yml follows the Compose Specification and describes the topology that
scripts/topology starts without Docker: the same services, at least two replicas, and a
load balancer that checks the same readiness path."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_FILE = ROOT / "docker-compose.yml"
#: A copy of the Compose Specification's schema (compose-spec.SOURCE says whence), so
#: that the file is validated on every machine.
SCHEMA_FILE = ROOT / "tests" / "data" / "compose-spec.json"
LB_CONFIG = ROOT / "deploy" / "haproxy.cfg"
LB_COMPOSE_CONFIG = ROOT / "deploy" / "haproxy-compose.cfg"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text())
    return document


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    # The schema names draft-07 without the "#" jsonschema looks for: choose it here.
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@pytest.fixture(scope="module")
def script() -> dict[str, Any]:
    """What scripts/topology says it starts."""
    described = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "topology"), "describe"],
        capture_output=True,
        text=True,
        check=True,
    )
    document: dict[str, Any] = json.loads(described.stdout)
    return document


def _errors(validator: jsonschema.Draft7Validator, document: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(document)
    ]


def _health_check_path(haproxy_config: str) -> str:
    found = re.search(r"^\s*option\s+httpchk\s+GET\s+(\S+)", haproxy_config, re.MULTILINE)
    assert found, "the load balancer checks no replica"
    return found.group(1)


def test_the_compose_file_follows_the_compose_specification(
    compose: dict[str, Any], validator: jsonschema.Draft7Validator
) -> None:
    assert _errors(validator, compose) == []


def test_a_misspelt_key_breaks_the_compose_specification(
    compose: dict[str, Any], validator: jsonschema.Draft7Validator
) -> None:
    misspelt = copy.deepcopy(compose)
    misspelt["services"]["server"]["healtcheck"] = misspelt["services"]["server"].pop("healthcheck")
    misspelt["services"]["server"]["deploy"]["replicas"] = [2]
    errors = _errors(validator, misspelt)
    assert any("healtcheck" in error for error in errors), errors
    assert any(error.startswith("services/server/deploy/replicas") for error in errors), errors


def test_the_script_starts_the_services_of_the_compose_file_in_an_order_it_allows(
    compose: dict[str, Any], script: dict[str, Any]
) -> None:
    services = compose["services"]
    order: list[str] = script["services"]
    assert sorted(order) == sorted(services)
    for name, service in services.items():
        for dependency in service.get("depends_on", {}):
            assert order.index(dependency) < order.index(name), (name, dependency)


def test_both_run_the_same_number_of_replicas_at_least_two(
    compose: dict[str, Any], script: dict[str, Any]
) -> None:
    replicas = compose["services"]["server"]["deploy"]["replicas"]
    assert replicas >= 2 and script["replicas"] == replicas


def test_the_load_balancer_sends_players_to_replicas_that_are_ready(
    compose: dict[str, Any], script: dict[str, Any]
) -> None:
    """Both use deploy/haproxy.cfg, which checks the path the script waits on, and the
    compose file's own check of a replica asks the same."""
    assert _health_check_path(LB_CONFIG.read_text()) == script["health_path"] == "/healthz"
    assert script["lb_config"] == "deploy/haproxy.cfg"
    mounted = [volume.split(":")[0] for volume in compose["services"]["lb"]["volumes"]]
    assert f"./{script['lb_config']}" in mounted
    assert f"./{LB_COMPOSE_CONFIG.relative_to(ROOT)}" in mounted
    server_check = " ".join(compose["services"]["server"]["healthcheck"]["test"])
    assert f":8765{script['health_path']}'" in server_check


def test_only_the_load_balancer_publishes_a_port(compose: dict[str, Any]) -> None:
    published = {name for name, service in compose["services"].items() if "ports" in service}
    assert published == {"lb"}
    assert compose["services"]["lb"]["depends_on"]["server"]["condition"] == "service_healthy"


def test_haproxy_accepts_the_compose_configuration(tmp_path: Path) -> None:
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (scripts/topology --install, or .ci/run)")
    # The `cert` service's certificate, as scripts/topology makes it.
    made = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "topology"), "certificate", "--dir", str(tmp_path)],
        capture_output=True, text=True, check=True,
    )
    checked = subprocess.run(
        ["haproxy", "-c", "-f", str(LB_CONFIG), "-f", str(LB_COMPOSE_CONFIG)],
        capture_output=True,
        text=True,
        env={**os.environ, "GAPS_LB_CERT": json.loads(made.stdout)["pem"]},
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
