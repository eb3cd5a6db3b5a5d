"""The compiled core of ``gaps.frontier`` (gaps/_speedups.c)."""

from typing import Protocol

class _Budget(Protocol):
    max_nodes: int
    max_memory_mb: float
    nodes: int
    table_bytes: int
    exhausted: str | None

    def check(self) -> bool: ...

def best_first(
    start: bytes, budget: _Budget, defer: bool, narrow: bool, /
) -> tuple[int, list[bytes], bool, int]: ...
