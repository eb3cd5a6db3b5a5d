"""The collector of a server process: start-up frozen, then collections on a clock, the
oldest generation due first; bad periods refused. A fake clock and a recording stand-in
for ``gc.collect``."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from server.heap import FULL_EVERY_S, MIDDLE_EVERY_S, YOUNG_EVERY_S, Collector, freeze_start_up
from tests.fake_clock import FakeClock


@pytest.fixture
def frozen() -> Iterator[None]:
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("frozen")
def test_freezing_keeps_what_is_alive_out_of_every_later_collection() -> None:
    alive = [object() for _ in range(3)], {"kept": [1, 2]}
    freeze_start_up()
    assert gc.get_freeze_count() > 0
    collected = {id(tracked) for tracked in gc.get_objects()}  # the frozen are not
    assert all(gc.is_tracked(x) and id(x) not in collected for x in alive)


def test_each_step_collects_the_young_generation_until_an_older_one_is_due() -> None:
    clock, collected = FakeClock(), list[int]()
    collector = Collector(
        young_every_s=1, middle_every_s=10, full_every_s=35, collect=collected.append,
        clock=clock, sleep=clock.sleep,
    )
    for _ in range(40):
        clock.advance(1)
        collector.step()
    # the middle one at 10, 20 and 30 s; the full one at 35 s, which restarts the
    # middle clock: no middle one at 40 s
    middle = [0] * 9 + [1]
    assert collected == middle * 3 + [0] * 4 + [2] + [0] * 5
    assert collector.collections == [36, 3, 1]


def test_a_late_step_collects_the_oldest_generation_due_once() -> None:
    clock, collected = FakeClock(), list[int]()
    collector = Collector(
        young_every_s=1, middle_every_s=10, full_every_s=30, collect=collected.append,
        clock=clock, sleep=clock.sleep,
    )
    clock.advance(95)  # the loop was held up: both older generations are long due
    assert collector.step() == 2
    clock.advance(1)
    assert collector.step() == 0
    assert collected == [2, 0]


def test_the_default_periods_grow_with_the_generation() -> None:
    assert 0 < YOUNG_EVERY_S < MIDDLE_EVERY_S < FULL_EVERY_S
    clock = FakeClock()
    assert Collector(clock=clock, sleep=clock.sleep).young_every_s == YOUNG_EVERY_S


@pytest.mark.parametrize(
    ("young", "middle", "full"), [(0, 10, 100), (1, 0.5, 100), (1, 10, 5), (-1, 10, 100)]
)
def test_periods_that_are_not_positive_and_growing_are_refused(
    young: float, middle: float, full: float
) -> None:
    with pytest.raises(ValueError, match=f"young_every_s={young}, middle_every_s={middle}"):
        clock = FakeClock()
        Collector(
            young_every_s=young, middle_every_s=middle, full_every_s=full,
            clock=clock, sleep=clock.sleep,
        )


async def test_running_turns_the_allocation_count_off_and_steps_on_its_tick() -> None:
    clock, collected = FakeClock(), list[int]()
    collector = Collector(
        young_every_s=1, middle_every_s=2, collect=collected.append, clock=clock,
        sleep=clock.sleep,
    )
    running = asyncio.create_task(collector.run())
    try:
        for _ in range(3):
            await clock.until_sleeping(1)
            assert not gc.isenabled()
            clock.advance(1)
        await clock.until_sleeping(1)
        assert collected == [0, 1, 0]  # one a tick, the middle one when due
    finally:
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    assert gc.isenabled()
