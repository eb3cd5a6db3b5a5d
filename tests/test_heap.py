"""The collector's settings for a server process: start-up frozen, young collections
made rarer; bad settings refused."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from server.heap import YOUNG_OBJECTS, tune_collector


@pytest.fixture
def collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("collector")
def test_tuning_freezes_what_is_alive_and_raises_the_young_threshold_only() -> None:
    _, middle, old = gc.get_threshold()
    alive = [object() for _ in range(3)], {"kept": [1, 2]}
    tune_collector()
    assert gc.get_threshold() == (YOUNG_OBJECTS, middle, old)
    assert gc.get_freeze_count() > 0
    collected = {id(tracked) for tracked in gc.get_objects()}  # the frozen are not
    assert all(gc.is_tracked(x) and id(x) not in collected for x in alive)


@pytest.mark.usefixtures("collector")
def test_a_chosen_young_threshold_is_used() -> None:
    tune_collector(young_objects=2_500)
    assert gc.get_threshold()[0] == 2_500


@pytest.mark.usefixtures("collector")
def test_a_young_threshold_below_one_is_refused_and_nothing_changes() -> None:
    before = gc.get_threshold()
    with pytest.raises(ValueError, match="young_objects must be at least 1, not 0"):
        tune_collector(young_objects=0)
    assert gc.get_threshold() == before
