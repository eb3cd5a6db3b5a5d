"""An actor's event history: numbered events, the last few kept for clients that missed some."""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

import msgspec

from gaps_protocol.messages.events import MatchEvent, TournamentEvent

E = TypeVar("E", bound=MatchEvent | TournamentEvent)


class History(Generic[E]):
    """Assigns each event its sequence number (1, 2, ...) and keeps the newest ``max_events``."""

    def __init__(self, *, max_events: int = 512) -> None:
        self._events: deque[E] = deque(maxlen=max_events)
        self.last_seq = 0

    def append(self, event: E) -> E:
        """``event`` numbered (events are frozen: a copy), and kept."""
        self.last_seq += 1
        numbered = msgspec.structs.replace(event, seq=self.last_seq)
        self._events.append(numbered)
        return numbered

    def since(self, seq: int) -> list[E] | None:
        """The events after ``seq``, or None when some of them are no longer kept, or
        when ``seq`` is ahead of the history (a number given before a restart: they
        start anew)."""
        if seq > self.last_seq:
            return None
        if seq == self.last_seq:
            return []
        oldest = self._events[0].seq if self._events else self.last_seq + 1
        if seq + 1 < oldest:
            return None
        return [event for event in self._events if event.seq > seq]
