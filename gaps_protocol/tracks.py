"""The numbered events of one match or one tournament: delivered once each, in order.

A track remembers the last event delivered and holds back those that come after a gap
until the resync fills it. It says what to deliver; the session delivers it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Final, TypeAlias

import msgspec

from gaps_protocol.messages import MatchEvent, TournamentEvent
from gaps_protocol.messages import replies as r
from gaps_protocol.messages.common import Role
from gaps_protocol.messages.requests import Resync, ResyncTournament

#: An event numbered by its ``seq``: a match's or a tournament's.
NumberedEvent: TypeAlias = MatchEvent | TournamentEvent
#: The replies (and the unasked ``matched``) that carry a match's state as you see it.
MatchSnapshot: TypeAlias = (
    r.MatchCreated | r.Joined | r.Snapshot | r.DailyStarted | r.Matched | r.RematchJoined
)
MATCH_SNAPSHOTS: Final = (
    r.MatchCreated, r.Joined, r.Snapshot, r.DailyStarted, r.Matched, r.RematchJoined
)
#: What a track delivers: its events, and the snapshots its count goes on from.
Delivered: TypeAlias = NumberedEvent | MatchSnapshot | r.Tournament

#: Messages of one match or tournament kept for listeners that come late.
MAX_DELIVERED: Final = 20_000


@dataclass
class EventTrack:
    """What a client remembers of one match's or tournament's numbered events to deliver
    them once each and in order, resyncing over a gap."""

    #: The reply that holds the events a resync fetched.
    events_reply: ClassVar[type[r.Events | r.TournamentEvents]]

    code: str
    last_event: int = 0
    resyncing: bool = False
    held: list[NumberedEvent] = field(default_factory=list)
    #: What was delivered, for listeners that come late.
    delivered: list[Delivered] = field(default_factory=list)

    def resync_request(self) -> Resync | ResyncTournament:
        """The request that fetches the events after the last delivered."""
        raise NotImplementedError

    def remember(self, message: Delivered) -> None:
        """Keep ``message``, delivered, for listeners that come late."""
        if len(self.delivered) >= MAX_DELIVERED:
            del self.delivered[1 : MAX_DELIVERED // 2]  # keep the first (a snapshot)
        self.delivered.append(message)

    def arrived(self, event: NumberedEvent) -> tuple[list[NumberedEvent], bool]:
        """Take in a numbered event as it came: the events now due in order, and whether a
        gap opened (the event is held back until a resync fills it). An event already
        seen, or reflected in a snapshot or a join's reply, is dropped."""
        seq = event.seq
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

    def release(self) -> tuple[list[NumberedEvent], bool]:
        """The held events that follow on from the last delivered, in order; and whether
        the gap is filled (``False``: some are still missing)."""
        held = sorted(self.held, key=lambda event: event.seq)
        self.held = []
        due: list[NumberedEvent] = []
        for index, event in enumerate(held):
            seq = event.seq
            if seq <= self.last_event:
                continue  # seen already, or sent twice
            if seq != self.last_event + 1:
                self.held = held[index:]
                return due, False
            self.last_event = seq
            due.append(event)
        return due, True

    def skip_gaps(self) -> list[NumberedEvent]:
        """Give up on the missing events: the held ones, in order, as if none were
        missing before each."""
        due: list[NumberedEvent] = []
        while self.held:
            self.last_event = min(event.seq for event in self.held) - 1
            due.extend(self.release()[0])
        return due


@dataclass
class MatchTrack(EventTrack):
    """What a client remembers about one match to resync, rejoin and resend."""

    events_reply: ClassVar[type[r.Events]] = r.Events

    role: Role = "player"
    #: The seq the next action takes.
    next_seq: int = 1
    #: The action sent and not yet acknowledged: (seq, action).
    unacked: tuple[int, str] | None = None
    #: A rejoin is under way: its snapshot keeps the last event seen (the resync after it
    #: fills the gap), unless the server numbers anew.
    rejoining: bool = False

    def resync_request(self) -> Resync:
        return Resync(code=self.code, since=self.last_event)

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

    events_reply: ClassVar[type[r.TournamentEvents]] = r.TournamentEvents

    def resync_request(self) -> ResyncTournament:
        return ResyncTournament(code=self.code, since=self.last_event)

    def reflected(self, seq: int) -> None:
        """A reply reflects the events up to ``seq``: those are not news any more."""
        self.last_event = max(self.last_event, seq)
        self.delivered = [m for m in self.delivered if _seq_of(m) > seq]

    def restart_from(self, snapshot: r.Tournament) -> None:
        """The server's snapshot stands for every event up to its ``seq``: the count
        starts again from there (the server may have numbered anew)."""
        self.last_event = _seq_of(snapshot)
        self.delivered.clear()


def _seq_of(message: Delivered) -> int:
    """The last event ``message`` is or reflects (0: a view of no followed tournament)."""
    seq = message.seq
    return 0 if seq is msgspec.UNSET else seq
