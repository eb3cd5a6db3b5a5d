"""One clock (docs/architecture.md): no module of the server reads the time or sets a
timer but ``server/clock.py``, from which every part gets the one ``Clock`` the
composition root makes. Read from the source, every call of the standard library's
clocks and timers."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent

#: Calls that read the time or wait for it, by the dotted name they are called by.
TIME_CALLS: Final = frozenset({
    "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns", "time.perf_counter",
    "time.sleep", "datetime.now", "datetime.utcnow", "date.today", "datetime.today",
    "asyncio.sleep", "loop.time", "loop.call_later", "loop.call_at",
})
#: Where a wait is the network's, not the server's time, and why.
NETWORK_WAITS: Final = {
    ("server/app.py", "asyncio.sleep"): "a shutdown lingers for the frames already in flight",
}


def dotted(node: ast.expr) -> str:
    """``a.b.c`` of a call's function (``get_running_loop().x`` reads as ``loop.x``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        return "loop" if name.endswith("get_running_loop") or name.endswith("get_event_loop") \
            else name
    return "?"


def time_calls(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        if name not in TIME_CALLS:
            continue
        if name == "asyncio.sleep" and node.args and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value == 0:
            continue  # a yield to the loop, not a wait
        found.append((name, node.lineno))
    return sorted(found, key=lambda call: call[1])


def test_the_reader_sees_the_clocks_and_timers_of_the_standard_library(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text(
        "import asyncio, time\nfrom datetime import datetime\n"
        "async def f():\n    time.monotonic()\n    datetime.now()\n    await asyncio.sleep(0)\n"
        "    await asyncio.sleep(1)\n    asyncio.get_running_loop().call_later(1, f)\n"
    )
    assert [name for name, _ in time_calls(source)] == [
        "time.monotonic", "datetime.now", "asyncio.sleep", "loop.call_later"
    ]


def test_only_the_clock_module_reads_the_time_in_the_server() -> None:
    offending = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "server/clock.py":
            continue
        for name, line in time_calls(path):
            if (relative, name) not in NETWORK_WAITS:
                offending.append(f"{relative}:{line}: {name}")
    assert offending == []
