"""Token buckets: how many requests a connection, a player or an address may send.

Pure: the time comes from the server's clock (``Clock.monotonic``), so tests drive it
without sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Clock = Callable[[], float]
Key = TypeVar("Key", bound=Hashable)


class TokenBucket:
    """Holds up to ``burst`` tokens and gains ``per_s`` tokens a second; each request
    takes one (or its ``cost``)."""

    __slots__ = ("burst", "per_s", "_clock", "_tokens", "_updated")

    def __init__(self, *, burst: float, per_s: float, clock: Clock) -> None:
        if burst <= 0 or per_s <= 0:
            raise ValueError(f"a bucket needs burst > 0 and per_s > 0, got {burst}, {per_s}")
        self.burst = burst
        self.per_s = per_s
        self._clock = clock
        self._tokens = float(burst)
        self._updated = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.per_s)
        self._updated = now
        return self._tokens

    def take(self, cost: float = 1.0) -> float:
        """Take ``cost`` tokens if the bucket has them and return 0; otherwise take
        nothing and return the seconds until it will have them."""
        wait_s = self.wait_s(cost)
        if not wait_s:
            self._tokens -= cost
        return wait_s

    def wait_s(self, cost: float = 1.0) -> float:
        """The seconds until the bucket has ``cost`` tokens (0: it has them now)."""
        tokens = self._refill()
        return 0.0 if tokens >= cost else (cost - tokens) / self.per_s

    @property
    def full(self) -> bool:
        return self._refill() >= self.burst


class Budgets(Generic[Key]):
    """One bucket per key (a player, an address), made on first use.

    Buckets that have refilled completely hold no information, so they are dropped
    from time to time: memory follows the keys active in the last ``burst / per_s``
    seconds, not every key ever seen.
    """

    def __init__(self, *, burst: float, per_s: float, clock: Clock) -> None:
        self.burst = burst
        self.per_s = per_s
        self._clock = clock
        self._buckets: dict[Key, TokenBucket] = {}
        self._takes_until_sweep = 1024

    def take(self, key: Key, cost: float = 1.0) -> float:
        """As ``TokenBucket.take`` for ``key``'s bucket."""
        return self._bucket(key).take(cost)

    def wait_s(self, key: Key, cost: float = 1.0) -> float:
        """As ``TokenBucket.wait_s`` for ``key``'s bucket."""
        return self._bucket(key).wait_s(cost)

    def _bucket(self, key: Key) -> TokenBucket:
        self._takes_until_sweep -= 1
        if self._takes_until_sweep <= 0:
            self._sweep()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(
                burst=self.burst, per_s=self.per_s, clock=self._clock
            )
        return bucket

    def _sweep(self) -> None:
        self._buckets = {key: b for key, b in self._buckets.items() if not b.full}
        self._takes_until_sweep = max(1024, 2 * len(self._buckets))

    def __len__(self) -> int:
        return len(self._buckets)
