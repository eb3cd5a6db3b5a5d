"""The numbered events of one match or one tournament: delivered once each, in order.

A track remembers the last event delivered and holds back those that come after a gap
until the resync fills it. It says what to deliver; the session delivers it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

Message = dict[str, Any]

#: Messages of one match or tournament kept for listeners that come late.
MAX_DELIVERED: Final = 20_000


@dataclass
class EventTrack:
    """What a client remembers of one match's or tournament's numbered events to deliver
    them once each and in order, resyncing over a gap."""

    #: The request that fetches the events after a seq, and the type of its events reply.
    resync_request: ClassVar[str]
    events_reply: ClassVar[str]

    code: str
    last_event: int = 0
    resyncing: bool = False
    held: list[Message] = field(default_factory=list)
    #: What was delivered, for listeners that come late.
    delivered: list[Message] = field(default_factory=list)

    def remember(self, message: Message) -> None:
        """Keep ``message``, delivered, for listeners that come late."""
        if len(self.delivered) >= MAX_DELIVERED:
            del self.delivered[1 : MAX_DELIVERED // 2]  # keep the first (a snapshot)
        self.delivered.append(message)

    def arrived(self, event: Message) -> tuple[list[Message], bool]:
        """Take in a numbered event as it came: the events now due in order, and whether a
        gap opened (the event is held back until a resync fills it). An event already
        seen, or reflected in a snapshot or a join's reply, is dropped."""
        seq = int(event["seq"])
        if self.resyncing:
            self.held.append(event)
            return [], False
        if seq == self.last_event + 1:
            self.last_event = seq
            return [event], False
        if seq > self.last_event:
            self.held.append(event)
            return [], True
        return [], False

    def release(self) -> tuple[list[Message], bool]:
        """The held events that follow on from the last delivered, in order; and whether
        the gap is filled (``False``: some are still missing)."""
        held = sorted(self.held, key=lambda event: int(event["seq"]))
        self.held = []
        due: list[Message] = []
        for index, event in enumerate(held):
            seq = int(event["seq"])
            if seq <= self.last_event:
                continue  # seen already, or sent twice
            if seq != self.last_event + 1:
                self.held = held[index:]
                return due, False
            self.last_event = seq
            due.append(event)
        return due, True

    def skip_gaps(self) -> list[Message]:
        """Give up on the missing events: the held ones, in order, as if none were
        missing before each."""
        due: list[Message] = []
        while self.held:
            self.last_event = min(int(event["seq"]) for event in self.held) - 1
            due.extend(self.release()[0])
        return due


@dataclass
class MatchTrack(EventTrack):
    """What a client remembers about one match to resync, rejoin and resend."""

    resync_request: ClassVar[str] = "resync"
    events_reply: ClassVar[str] = "events"

    role: str = "player"
    #: The seq the next action takes.
    next_seq: int = 1
    #: The action sent and not yet acknowledged: (seq, action).
    unacked: tuple[int, str] | None = None
    #: A rejoin is under way: its snapshot keeps the last event seen (the resync after it
    #: fills the gap), unless the server numbers anew.
    rejoining: bool = False

    def snapshot(self, seq: int, last_seq: int | None) -> None:
        """A snapshot of the match reflects its events up to ``seq`` and, of your game,
        the actions up to ``last_seq``."""
        if not self.rejoining or seq < self.last_event:
            # A rejoin keeps the last event seen. Unless the server restarted: it numbers
            # the events anew, so a rejoin's seq below the last seen starts the count
            # again from this snapshot.
            self.last_event = seq
        if last_seq is not None:
            self.next_seq = max(self.next_seq, last_seq + 1)


@dataclass
class TournamentTrack(EventTrack):
    """What a client remembers about one tournament to deliver its events in order.

    Its ``delivered`` messages are those after the last ``tournament_join`` reply (or
    resync snapshot): what a follower that starts from that reply has not seen."""

    resync_request: ClassVar[str] = "tournament_resync"
    events_reply: ClassVar[str] = "tournament_events"

    def reflected(self, seq: int) -> None:
        """A reply reflects the events up to ``seq``: those are not news any more."""
        self.last_event = max(self.last_event, seq)
        self.delivered = [m for m in self.delivered if int(m.get("seq", 0)) > seq]

    def restart_from(self, snapshot: Message) -> None:
        """The server's snapshot stands for every event up to its ``seq``: the count
        starts again from there (the server may have numbered anew)."""
        self.last_event = int(snapshot.get("seq", 0))
        self.delivered.clear()
