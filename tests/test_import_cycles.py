"""No import cycles: read from the source (every import statement, those inside functions
included, as tests/test_layers.py reads them), no module of a package listed in
``ACYCLIC`` imports, directly or through others, itself.

A package joins ``ACYCLIC`` once its cycles are gone; a cycle across two listed packages
counts too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from tests.test_layers import imported, modules

#: The packages whose modules import one another without a cycle.
ACYCLIC: Final = ("gaps", "gaps_protocol", "server", "client_cli", "bench")


def import_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """For each module of ``packages``, the modules of ``packages`` it imports.

    A name imported stands for the longest module it begins with (``gaps.bots.SearchBot``
    for ``gaps.bots``; ``from gaps import _speedups``, a compiled module, for ``gaps``).
    """
    paths = dict(module for package in packages for module in modules(package))
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        targets = set()
        for name in imported(path):
            parts = name.split(".")
            for end in range(len(parts), 0, -1):
                prefix = ".".join(parts[:end])
                if prefix in paths:
                    targets.add(prefix)
                    break
        if path.name == "__init__.py":
            # ``from package import submodule`` in the package's own __init__ names the
            # package itself: not an import of itself.
            targets.discard(module)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components that hold a cycle, each sorted, in order
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(sorted(component))
    return sorted(found)


def write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_the_reader_finds_a_cycle_through_an_import_inside_a_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tests.test_layers.ROOT", tmp_path)
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import thing\n",
        "pkg/b.py": "def thing():\n    from pkg import c\n",
        "pkg/c.py": "import pkg.a\n",
        "pkg/d.py": "from pkg.a import x\nfrom pkg import e\n",
        "pkg/e.py": "from . import e\n",  # a module importing itself
    })
    graph = import_graph(("pkg",))
    assert graph["pkg.b"] == {"pkg", "pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"], ["pkg.e"]]


def test_the_reader_finds_a_cycle_across_two_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tests.test_layers.ROOT", tmp_path)
    write(tmp_path, {
        "low/__init__.py": "",
        "low/x.py": "from high.y import y\n",
        "high/__init__.py": "",
        "high/y.py": "import low.x\n",
    })
    assert cycles(import_graph(("low",))) == []
    assert cycles(import_graph(("low", "high"))) == [["high.y", "low.x"]]


def test_no_module_takes_part_in_an_import_cycle() -> None:
    assert cycles(import_graph(ACYCLIC)) == []
