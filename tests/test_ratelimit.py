"""server.ratelimit: token buckets on a fake clock."""

from __future__ import annotations

import pytest

from server.ratelimit import Budgets, TokenBucket
from tests.fake_clock import FakeClock


def test_a_full_bucket_serves_its_burst_at_once_then_refuses() -> None:
    clock = FakeClock()
    bucket = TokenBucket(burst=3, per_s=1, clock=clock)
    assert [bucket.take() for _ in range(3)] == [0, 0, 0]
    assert bucket.take() == pytest.approx(1.0)


def test_a_refusal_says_how_long_until_the_tokens_are_there() -> None:
    clock = FakeClock()
    bucket = TokenBucket(burst=2, per_s=4, clock=clock)
    bucket.take(2)
    assert bucket.take() == pytest.approx(0.25)
    assert bucket.take(2) == pytest.approx(0.5)


def test_a_refused_request_takes_nothing() -> None:
    clock = FakeClock()
    bucket = TokenBucket(burst=1, per_s=1, clock=clock)
    bucket.take()
    for _ in range(10):
        assert bucket.take() > 0
    clock.advance(1.0)
    assert bucket.take() == 0


def test_tokens_come_back_at_the_rate_and_never_beyond_the_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(burst=5, per_s=10, clock=clock)
    bucket.take(5)
    clock.advance(0.2)  # two tokens
    assert [bucket.take() for _ in range(2)] == [0, 0]
    assert bucket.take() > 0
    clock.advance(3600)
    assert bucket.full
    assert sum(bucket.take() == 0 for _ in range(10)) == 5


def test_a_bucket_without_burst_or_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="burst > 0"):
        TokenBucket(burst=0, per_s=1, clock=FakeClock())
    with pytest.raises(ValueError, match="per_s > 0"):
        TokenBucket(burst=1, per_s=0, clock=FakeClock())


def test_budgets_keep_one_bucket_per_key() -> None:
    clock = FakeClock()
    budgets: Budgets[str] = Budgets(burst=2, per_s=1, clock=clock)
    assert budgets.take("a") == budgets.take("a") == 0
    assert budgets.take("a") > 0
    assert budgets.take("b") == 0


def test_budgets_forget_keys_whose_buckets_have_refilled() -> None:
    clock = FakeClock()
    budgets: Budgets[int] = Budgets(burst=1, per_s=1, clock=clock)
    for key in range(1000):
        budgets.take(key)
    clock.advance(10)  # every bucket is full again: nothing to remember
    for key in range(1000, 1100):
        budgets.take(key)
    assert len(budgets) <= 100


def test_forgetting_a_refilled_key_gives_it_no_more_than_a_full_bucket() -> None:
    clock = FakeClock()
    budgets: Budgets[str] = Budgets(burst=3, per_s=1, clock=clock)
    for step in range(5000):
        clock.advance(0.001)
        budgets.take(f"other-{step}")
    served = sum(budgets.take("me") == 0 for _ in range(10))
    assert served == 3


def test_asking_how_long_to_wait_takes_nothing() -> None:
    clock = FakeClock()
    bucket = TokenBucket(burst=1, per_s=2, clock=clock)
    assert bucket.wait_s() == bucket.wait_s() == 0
    assert bucket.take() == 0
    assert bucket.wait_s() == pytest.approx(0.5)
    budgets: Budgets[str] = Budgets(burst=1, per_s=2, clock=clock)
    assert budgets.wait_s("a") == 0 and budgets.take("a") == 0
    assert budgets.wait_s("a") == pytest.approx(0.5)
