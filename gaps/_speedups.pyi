"""The compiled core of ``gaps.frontier`` (gaps/_speedups.c)."""

from gaps.frontier import _Budget

def best_first(
    start: bytes, budget: _Budget, defer: bool, narrow: bool, /
) -> tuple[int, list[bytes], bool, int]: ...
