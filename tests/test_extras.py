"""Each side's command on an install without its extra says what to install (the
``server`` and ``client`` extras of pyproject.toml; scripts/check-wheel installs each)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Imports the command with one of its side's modules missing, as an install of the other
# side only would.
WITHOUT = """
import sys
sys.modules[sys.argv[1]] = None  # import sys.argv[1] now raises ModuleNotFoundError
from {package}.__main__ import main
main(["--help"])
"""


@pytest.mark.parametrize(
    ("package", "missing", "command", "extra"),
    [
        ("server", "sqlalchemy", "gaps-server", "gaps-arena[server]"),
        ("server", "asyncio_redis", "gaps-server", "gaps-arena[server]"),
        ("client_cli", "textual", "gaps", "gaps-arena[client]"),
    ],
)
def test_a_command_without_its_sides_dependencies_says_what_to_install(
    package: str, missing: str, command: str, extra: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT.format(package=package), missing],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"{command}: {missing} is missing: this install holds the "
        + ("terminal client only; a server needs" if package == "server"
           else "server only; the terminal client needs")
        + f": pip install '{extra}'"
    ]


def test_a_missing_module_of_its_own_is_not_taken_for_a_missing_extra() -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT.format(package="server"), "server.command"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "Traceback" in result.stderr
    assert "ModuleNotFoundError" in result.stderr
