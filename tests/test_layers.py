"""The layers: who may import whom, read from the source (every import statement, those
inside functions included).

gaps/ (the rules) imports nothing of the server or the client; client_cli/ never imports
server/; only server/storage/ speaks SQL (SQLAlchemy, the database drivers); and
server/storage/ imports nothing of the server above it but the pure modules listed here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parent.parent
#: What speaks to a database: only server/storage imports these.
DATABASE_PACKAGES: Final = ("sqlalchemy", "alembic", "asyncpg", "aiosqlite", "sqlite3")
#: The modules of server/ above storage that storage may import: pure, no I/O, and
#: importing nothing of server/ themselves.
STORAGE_MAY_IMPORT: Final = frozenset(
    {"server.errors", "server.fairplay", "server.histogram", "server.outages"}
)


def modules(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute (relative imports resolved)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: -node.level]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def within(name: str, packages: tuple[str, ...] | frozenset[str]) -> bool:
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def test_the_import_reader_sees_imports_inside_functions_and_relative_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    source = tmp_path / "server" / "storage" / "x.py"
    source.parent.mkdir(parents=True)
    source.write_text("def f():\n    import sqlalchemy.orm\n    from ..match import Match\n")
    assert {"sqlalchemy.orm", "server.match", "server.match.Match"} <= imported(source)


def test_no_module_outside_server_storage_speaks_to_the_database() -> None:
    speaking = {
        module
        for package in ("gaps", "server", "client_cli")
        for module, path in modules(package)
        if not within(module, ("server.storage",))
        and any(within(name, DATABASE_PACKAGES) for name in imported(path))
    }
    assert speaking == set()


def test_the_rules_import_nothing_of_the_server_or_the_client() -> None:
    for module, path in modules("gaps"):
        assert not {n for n in imported(path) if within(n, ("server", "client_cli"))}, module


def test_the_client_never_imports_the_server() -> None:
    for module, path in modules("client_cli"):
        assert not {n for n in imported(path) if within(n, ("server",))}, module


def test_storage_imports_only_itself_and_the_pure_modules_of_the_server() -> None:
    for module, path in modules("server/storage"):
        above = {
            name
            for name in imported(path)
            if within(name, ("server",)) and not within(name, ("server.storage",))
        }
        assert {name for name in above if not within(name, STORAGE_MAY_IMPORT)} == set(), module


def test_the_pure_modules_storage_imports_import_nothing_of_the_server() -> None:
    for pure in STORAGE_MAY_IMPORT:
        path = ROOT / f"{pure.replace('.', '/')}.py"
        assert not {n for n in imported(path) if within(n, ("server", "client_cli"))}, pure


def test_the_migrations_import_only_storage() -> None:
    for module, path in modules("migrations"):
        above = {n for n in imported(path) if within(n, ("server", "client_cli"))}
        assert all(within(name, ("server.storage",)) for name in above), module
