"""Outages of a part the server needs (the database, the broker), logged once each way.

Many tasks meet one outage: every match retrying a write, every request refused, the
broker's reconnection attempts. Each says so here (``failed``) and logs its own line at
DEBUG only; the first failure while the part is up begins an outage, logged once, and
the part's next success (``recovered``) ends it, logged once with how long it lasted and
how many failures it caused. Both lines are warnings, so that a log filtered to warnings
never shows an outage begin without its end.

Pure: the time comes from the server's clock (``Clock.monotonic``); ``server.metrics``
shows the counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("gaps.outage")


class Outage:
    """The outages of one part, ``part`` (``storage``, ``broker``).

    :param clock: monotonic seconds (the server's ``Clock.monotonic``).
    """

    def __init__(self, part: str, *, clock: Callable[[], float]) -> None:
        self.part = part
        self._clock = clock
        self.up = True
        #: When the outage under way began (None: the part is up).
        self.since: float | None = None
        #: Outages begun, failures reported (each retry, each refusal) and seconds down,
        #: since the server started.
        self.outages = 0
        self.failures = 0
        self.seconds_down = 0.0
        self._failures_now = 0

    def failed(self, what: str, error: BaseException | str) -> None:
        """``what`` failed because the part is down (``error``); the first failure while
        it was up begins an outage."""
        self.failures += 1
        self._failures_now += 1
        if self.up:
            self.up = False
            self.since = self._clock()
            self.outages += 1
            self._failures_now = 1
            log.warning(
                f"{self.part} outage began",
                extra={"outage": self.part, "what": what, "error": _text(error)},
            )

    def recovered(self) -> None:
        """The part answered: the outage under way, if any, is over. Cheap when the part
        is up: it is called on every success."""
        if self.up:
            return
        assert self.since is not None
        duration_s = max(0.0, self._clock() - self.since)
        self.up = True
        self.since = None
        self.seconds_down += duration_s
        log.warning(
            f"{self.part} outage ended",
            extra={
                "outage": self.part,
                "duration_s": round(duration_s, 3),
                "failures": self._failures_now,
            },
        )

    @property
    def down_s(self) -> float:
        """Seconds down: of the ended outages and of the one under way."""
        current = 0.0 if self.since is None else max(0.0, self._clock() - self.since)
        return self.seconds_down + current


def _text(error: BaseException | str) -> str:
    return error if isinstance(error, str) else repr(error)[:300]
