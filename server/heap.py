"""The garbage collector's settings for a long-running server process.

CPython collects its youngest generation every 700 net allocations, and a full collection
walks every container alive. A server holding thousands of connections (each with its
tasks, futures, queues and buffers) and a few hundred matches pays for both: under
3,000 players at one action a second, its collections took about a seventh of the
server's time, and each of the 26 full collections of a one-minute run paused every
match for about 260 ms (docs/benchmarks.md). Fewer, larger young collections promote
fewer short-lived objects (a match's state between two actions) into the old
generations, so full collections become rare; what start-up allocated (modules, the
tables of the server) is frozen out of every collection.
"""

from __future__ import annotations

import gc
from typing import Final

#: Net allocations between two collections of the youngest generation (Python's: 700).
YOUNG_OBJECTS: Final = 10_000


def tune_collector(*, young_objects: int = YOUNG_OBJECTS) -> None:
    """Freeze what is alive now out of every later collection, and collect the young
    generation every ``young_objects`` net allocations. Call it once start-up is over."""
    if young_objects < 1:
        raise ValueError(f"young_objects must be at least 1, not {young_objects}")
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_objects, middle, old)
