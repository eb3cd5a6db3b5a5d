"""A pause that doubles after each try, up to a bound."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Backoff:
    """The pauses between tries: ``first``, then each twice the one before, never more
    than ``most``. ``reset`` starts again from ``first`` (after a success)."""

    first: float
    most: float
    _next: float = field(init=False)

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.most:
            raise ValueError(f"a backoff needs 0 < first <= most, not first={self.first!r}, "
                             f"most={self.most!r}")
        self._next = self.first

    def peek(self) -> float:
        """The next pause, without taking it."""
        return self._next

    def take(self) -> float:
        """The next pause; the one after is twice as long (at most ``most``)."""
        pause = self._next
        self._next = min(pause * 2, self.most)
        return pause

    def reset(self) -> None:
        self._next = self.first
