"""The compiled core of ``gaps.frontier`` and ``gaps.bound`` (gaps/_speedups.c)."""

from gaps.frontier import _Budget

def best_first(
    start: bytes, budget: _Budget, defer: bool, narrow: bool, bound: bool, wins_only: bool, /
) -> tuple[int, list[bytes], bool, int]: ...
def upper_bound(key: bytes, /) -> int: ...
