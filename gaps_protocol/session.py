"""One client's session with a Gaps Arena server, without I/O (docs/protocol.md, "The
client session").

In the manner of the websockets library's sans-I/O protocol: the session is fed what
happened (a frame received, the connection made or lost, the time passing, the
application's requests) with the instant it happened, and accumulates what to do: frames
to send (``frames_to_send``), the next instant it wants to be woken at (``next_timer``,
then ``tick``) and what changed (``events``, typed notices). It never reads a clock,
sleeps, or touches a socket: an asyncio layer (``client_cli.connection``) or a test does.

* Requests carry an ``id``; each reply is matched to its request (``Reply``, or
  ``Refused`` for an ``error``; ``Unanswered`` when none will come).
* Events are delivered in ``seq`` order, each once. When an event's ``seq`` is not the one
  after the last seen, the session asks for the missing ones (``resync``, or
  ``tournament_resync``) and holds newer events back until they can go in order. A
  tournament's events after a ``tournament_join`` reply's ``seq`` are news; those before
  are reflected in the reply.
* When the connection drops, the session reconnects: ``Reconnect`` after a pause that
  doubles (``RECONNECT_FIRST_S`` to ``RETRY_MOST_S``), ``hello`` with the token,
  ``join_match`` for every match it was in (its snapshot is delivered), ``resync`` from the
  last event seen, ``tournament_resync`` for every tournament entered, ``quick_match`` again
  if it waited in the queue. An action sent but not acknowledged then goes again with the
  same ``seq``: the server applies it at most once. A server restart numbers each match's
  events anew: a rejoin's snapshot whose ``seq`` is below the last event seen says so, and
  the count goes on from that snapshot.
* A refusal that means "not now" (``TRANSIENT_CODES``) is tried again with a growing pause
  for up to ``reconnect_for_s``: the whole reconnect, or a request the application marked
  safe to repeat (actions are). A match whose rejoin is refused otherwise is ``Gone``.
* A message whose count (a ``seq``, ``round``, ``time_limit_s``...) is not a whole number
  breaks the protocol: the session ``Failed`` for good, naming the field.
* A probe of the server that must see what it sent opens a session with ``fill_gaps``
  False: a gap is then not filled (no resync), the events going on from the first after
  it; and it may number an action itself (``act``'s ``seq``), to send one again.
"""

from __future__ import annotations

import enum
import itertools
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from gaps_protocol.backoff import Backoff
from gaps_protocol.counters import ProtocolViolation, check_message
from gaps_protocol.notices import (
    Closed,
    Disconnect,
    Event,
    Failed,
    Gone,
    Lost,
    Notice,
    Reconnect,
    Refused,
    Reply,
    Restored,
    Retrying,
    Snapshot,
    Unanswered,
)
from gaps_protocol.refusals import describe, is_transient, pause_after
from gaps_protocol.tracks import EventTrack, MatchTrack, Message, TournamentTrack

log = logging.getLogger("gaps.client")
log.addHandler(logging.NullHandler())

#: The replies and pushes that carry a match's state.
SNAPSHOT_TYPES: Final = frozenset(
    {"match_created", "joined", "snapshot", "daily_started", "matched", "rematch"}
)
REQUEST_TIMEOUT_S: Final = 15.0
#: How long the session keeps trying to reconnect (and to repeat a request refused for
#: now) before it gives up: long enough for a deploy that migrates the database.
RECONNECT_FOR_S: Final = 180.0
#: The first pause before a reconnect is tried again (the first try goes at once).
RECONNECT_FIRST_S: Final = 0.05
#: The first pause before a request refused for now is tried again; each pause doubles,
#: up to ``RETRY_MOST_S``.
RETRY_FIRST_S: Final = 0.2
RETRY_MOST_S: Final = 2.0
#: Rounds of resync for one gap before the session waits for the next event to try again.
RESYNC_ROUNDS: Final = 5
#: The WebSocket close codes the session asks for.
CLOSE_NORMAL: Final = 1000
CLOSE_PROTOCOL_ERROR: Final = 1002
#: Every frame goes through these: msgspec's JSON is several times as fast as the standard
#: library's (a load generator runs thousands of sessions).
_decode_json: Final = msgspec.json.Decoder().decode
_encode_json: Final = msgspec.json.Encoder().encode


class State(enum.Enum):
    """Where the session is (the diagram in docs/protocol.md)."""

    CONNECTING = "connecting"  # the first connection is being opened
    AUTHENTICATING = "authenticating"  # reconnected: hello with the token
    REJOINING = "rejoining"  # rejoining matches, following tournaments, queueing again
    OPEN = "open"
    WAITING = "waiting"  # to reconnect
    FAILED = "failed"
    CLOSED = "closed"


class NotInMatch(LookupError):
    """An action for a match the session is not in (never joined, left, or gone)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(f"not in match {code}: join it first")


class Step(enum.Enum):
    """What the session itself asks the server, and why."""

    HELLO = "hello"
    REJOIN = "rejoin"
    FOLLOW = "follow"  # a tournament entered, followed again after a reconnect
    REQUEUE = "requeue"
    RESYNC = "resync"


@dataclass
class Purpose:
    """Why the session sent a request of its own: a step of the reconnect, or a resync."""

    step: Step
    code: str | None = None
    track: EventTrack | None = None
    restoring: bool = False
    round: int = 1


@dataclass
class Request:
    """A request of the application (``purpose`` None) or of the session, until its answer."""

    id: int
    kind: str
    fields: Message
    retry: bool = False
    purpose: Purpose | None = None
    sent: bool = False
    answer_by: float | None = None
    resend_at: float | None = None
    retry_until: float | None = None
    backoff: Backoff = field(default_factory=lambda: Backoff(RETRY_FIRST_S, RETRY_MOST_S))

    def frame(self) -> str:
        return _encode_json({"type": self.kind, "id": self.id, **self.fields}).decode()


class ClientSession:
    """The protocol state of one client: what it sent, what it follows, what it saw."""

    def __init__(
        self, peer: str, *, token: str | None = None, reconnect: bool = True,
        reconnect_for_s: float = RECONNECT_FOR_S,
        request_timeout_s: float = REQUEST_TIMEOUT_S, fill_gaps: bool = True,
    ) -> None:
        #: The server, as named in messages for people (its URL).
        self.peer = peer
        self.token = token
        self.player: Message | None = None
        self.reconnect = reconnect
        self.reconnect_for_s = reconnect_for_s
        self.request_timeout_s = request_timeout_s
        #: Whether a gap in a match's or tournament's events is filled with a resync.
        self.fill_gaps = fill_gaps
        self.state = State.CONNECTING
        #: Why the session gave up for good, once it has.
        self.failure: str | None = None
        self.tracks: dict[str, MatchTrack] = {}
        #: Tournaments whose events come: the last event seq seen, events held back.
        self.tournaments: dict[str, TournamentTrack] = {}
        #: Tournaments entered with ``tournament_join``: followed again after a reconnect.
        self.entered: set[str] = set()
        #: The ruleset of the quick-match queue this session waits in, if any.
        self.queued: str | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, Request] = {}
        #: Each match's actions, one at a time: the first is sent, the others wait.
        self._actions: dict[str, deque[Request]] = {}
        self._plan: list[Purpose] = []
        self._reconnect_backoff = Backoff(RECONNECT_FIRST_S, RETRY_MOST_S)
        self._reconnect_until = 0.0
        self._last_error = "no attempt"
        self._frames: list[str] = []
        self._notices: list[Notice] = []

    # -- what the session asks of its I/O layer ---------------------------------------------

    def frames_to_send(self) -> list[str]:
        """The frames to send, in order, since the last call."""
        frames, self._frames = self._frames, []
        return frames

    def events(self) -> list[Notice]:
        """What changed since the last call, in order."""
        notices, self._notices = self._notices, []
        return notices

    def next_timer(self) -> float | None:
        """The instant the session wants ``tick`` called, if any."""
        if not self._pending:  # most calls: between requests
            return None
        instants = [instant for request in self._pending.values()
                    for instant in (request.answer_by, request.resend_at) if instant is not None]
        return min(instants, default=None)

    def delivered(self, *, match: str | None = None,
                  tournament: str | None = None) -> list[Message]:
        """What was delivered of a match (every snapshot and event) or of a tournament
        (every event or snapshot after its ``tournament_join`` reply): for a listener that
        comes late."""
        track: EventTrack | None = None
        if match is not None:
            track = self.tracks.get(match)
        elif tournament is not None:
            track = self.tournaments.get(tournament)
        return list(track.delivered) if track is not None else []

    # -- what happened ------------------------------------------------------------------------

    def connection_made(self, now: float) -> None:
        """A connection is open: the first, or a reconnect asked for with ``Reconnect``."""
        if self.state is State.CONNECTING:
            self.state = State.OPEN
            self._flush(now)
        elif self.state is State.WAITING:
            assert self.token is not None  # a session without one does not reconnect
            self.state = State.AUTHENTICATING
            self._issue(Purpose(Step.HELLO), "hello", {"token": self.token}, now)
        else:  # closed or failed meanwhile: not wanted
            self._notices.append(Disconnect(CLOSE_NORMAL, "closed"))

    def connect_failed(self, now: float, reason: str) -> None:
        """A reconnect asked for with ``Reconnect`` could not open a connection."""
        if self.state is State.WAITING:
            self._last_error = reason
            self._wait_to_reconnect(now)

    def connection_lost(self, now: float, *, going_away: bool = False) -> None:
        """The connection closed (``going_away``: the server said it stops, close code
        1001)."""
        if self.state in (State.FAILED, State.CLOSED, State.WAITING):
            return  # a connection the session had given up already
        was = self.state
        lost = f"lost the connection to {self.peer}"
        self._forget_connection()
        for request in list(self._pending.values()):
            if request.sent and not request.retry:
                self._finish(request, Unanswered(request.id, lost, lost=True), now)
            elif request.sent:  # it goes again once reconnected (an action: same seq)
                request.sent = False
                request.answer_by = None
        if was is State.CONNECTING or not self.reconnect or self.token is None:
            self._fail(lost)
            return
        if was is State.OPEN:
            why = "the server is restarting" if going_away else lost
            self._notices.append(Lost(f"{why}; reconnecting"))
            self._reconnect_until = now + self.reconnect_for_s
            self._reconnect_backoff.reset()
            self._last_error = "no attempt"
            self.state = State.WAITING
            self._notices.append(Reconnect(0.0))
        else:  # dropped again while reconnecting
            self._last_error = lost
            self._wait_to_reconnect(now)

    def receive(self, frame: str | bytes, now: float) -> None:
        """A frame from the server (its text, or the text's UTF-8 bytes)."""
        if self.state not in (State.OPEN, State.AUTHENTICATING, State.REJOINING):
            return  # from a connection the session is done with
        try:
            message = _decode_json(frame)
        except msgspec.DecodeError:
            log.warning("a frame that is not JSON: %.80r", frame)
            return
        if not isinstance(message, dict):
            return
        try:
            check_message(message)
        except ProtocolViolation as violation:  # no reconnect to the same server
            log.warning("%s", violation)
            self._fail(str(violation), close_code=CLOSE_PROTOCOL_ERROR)
            return
        kind = message.get("type")
        if kind == "event":
            track = self.tracks.get(str(message.get("match")))
            if track is not None:
                self._numbered(track, message, now)
        elif kind == "tournament_event":
            self._numbered(self._tournament(str(message.get("tournament"))), message, now)
        else:
            self._reply(message, now)

    def tick(self, now: float) -> None:
        """The time is ``now``: requests unanswered in time fail, pauses that ran out end."""
        for request in list(self._pending.values()):
            if request.id not in self._pending:
                continue  # answered by a step of this loop (a reconnect dropped it)
            if request.answer_by is not None and now >= request.answer_by:
                self._timed_out(request, now)
            elif request.resend_at is not None and now >= request.resend_at:
                request.resend_at = None
                if self.state is State.OPEN or (
                        request.purpose is not None and self.state is State.REJOINING):
                    self._send(request, now)

    # -- the application's requests ---------------------------------------------------------

    def request(self, kind: str, fields: Message, now: float, *, retry: bool = False) -> int:
        """Send a request (once the session is open); returns its id, which its ``Reply``,
        ``Refused`` or ``Unanswered`` names. With ``retry`` (only for requests that are safe
        to repeat), a request cut by a dropped connection goes again once reconnected, and
        one refused for now again after a growing pause, for up to ``reconnect_for_s``."""
        request = Request(next(self._ids), kind, dict(fields), retry=retry)
        if kind == "quick_cancel":
            self.queued = None
        if self._ended(request):
            return request.id
        self._pending[request.id] = request
        if self.state is State.OPEN:
            self._send(request, now)
        return request.id

    def act(self, code: str, action: str, now: float, *, seq: int | None = None) -> int:
        """Play ``action`` in match ``code``: the actions of one match go one at a time,
        each with the next ``seq``, safe to repeat (the server applies each at most once).
        Raises ``NotInMatch`` for a match the session is not in.

        ``seq`` numbers the action instead (a probe sending an action again, or out of
        turn): the next one takes the number after the highest sent."""
        if code not in self.tracks:
            raise NotInMatch(code)
        fields: Message = {"code": code, "action": action}
        if seq is not None:
            fields["seq"] = seq
        request = Request(next(self._ids), "action", fields, retry=True)
        if self._ended(request):
            return request.id
        queue = self._actions.setdefault(code, deque())
        queue.append(request)
        if len(queue) == 1:
            self._start_action(request, now)
        return request.id

    def forget(self, code: str) -> None:
        """Stop following match ``code`` (a finished tournament round): no rejoin after a
        reconnect, no more of its messages kept."""
        self.tracks.pop(code, None)

    def close(self, now: float) -> None:
        """Close for good: no reconnect; what waits for an answer is ``Unanswered``."""
        if self.state is State.CLOSED:
            return
        failed = self.state is State.FAILED
        self.state = State.CLOSED
        self._forget_connection()
        self._end_requests("the connection is closed")
        if not failed:
            self._notices.append(Closed())

    # -- replies ------------------------------------------------------------------------------

    def _reply(self, message: Message, now: float) -> None:
        kind = message.get("type")
        if kind in SNAPSHOT_TYPES:
            if kind == "matched":
                self.queued = None
            self._snapshot(message)
        elif kind == "tournament" and isinstance(message.get("seq"), int):
            # A reply reflects the tournament's events up to its seq: those that follow it
            # on the wire (sent before the reply was) are not delivered again.
            code = _code_of(message.get("tournament"))
            if code is not None:
                self._tournament(code).reflected(int(message["seq"]))
        request_id = message.get("id")
        request = self._pending.get(request_id) if isinstance(request_id, int) else None
        if request is None or not request.sent:
            return
        request.sent = False
        request.answer_by = None
        if request.purpose is not None:
            self._step_answered(request, request.purpose, message, now)
        elif message.get("type") == "error":
            if not (request.retry and is_transient(message)
                    and self._retry_later(request, message, now)):
                self._finish(request, Refused(request.id, message), now)
        else:
            self._took_effect(request, message)
            self._finish(request, Reply(request.id, message), now)

    def _took_effect(self, request: Request, reply: Message) -> None:
        """What the session remembers of a request the server carried out."""
        if request.kind == "hello":
            self.token = str(request.fields.get("token"))
            self.player = _object(reply.get("player"))
        elif request.kind == "register":
            if isinstance(reply.get("token"), str):
                self.token = reply["token"]
            self.player = _object(reply.get("player"))
        elif request.kind == "tournament_join":
            code = _code_of(reply.get("tournament"))
            if code is not None:
                self.entered.add(code)
        elif request.kind == "quick_match":
            self.queued = str(request.fields.get("ruleset"))
        elif request.kind == "leave_match":
            self.tracks.pop(str(request.fields.get("code")), None)

    def _retry_later(self, request: Request, refusal: Message, now: float) -> bool:
        """Schedule ``request`` again after a refusal for now; False once its window is
        past (the refusal then stands)."""
        if request.retry_until is None:
            request.retry_until = now + self.reconnect_for_s
            self._notices.append(Retrying(
                request.id, str(refusal.get("code")),
                f"the server refused {request.kind} for now ({describe(refusal)}): trying "
                f"again for up to {self.reconnect_for_s:g} s"))
        wait_s = pause_after(refusal, request.backoff.take())
        if now + wait_s > request.retry_until:
            return False
        request.resend_at = now + wait_s
        return True

    def _snapshot(self, message: Message) -> None:
        code = _code_of(message.get("match"))
        if code is None:
            return
        you = _object(message.get("you")) or {}
        track = self.tracks.get(code)
        if track is None:
            track = self.tracks[code] = MatchTrack(code, role=str(you.get("role", "player")))
        last_seq = you.get("last_seq")
        track.snapshot(int(message.get("seq", 0)),
                       last_seq if isinstance(last_seq, int) else None)
        self._deliver(track, Snapshot(message))

    # -- events -------------------------------------------------------------------------------

    def _numbered(self, track: EventTrack, event: Message, now: float) -> None:
        if not isinstance(event.get("seq"), int):
            return
        due, gap = track.arrived(event)
        if gap and not self.fill_gaps:
            due, gap = track.skip_gaps(), False
        for message in due:
            self._deliver(track, Event(message))
        if gap and self.state in (State.OPEN, State.REJOINING):
            self._resync(track, now)

    def _deliver(self, track: EventTrack, notice: Event | Snapshot) -> None:
        track.remember(notice.message)
        self._notices.append(notice)

    def _tournament(self, code: str) -> TournamentTrack:
        track = self.tournaments.get(code)
        if track is None:
            track = self.tournaments[code] = TournamentTrack(code)
        return track

    def _resync(self, track: EventTrack, now: float, *, restoring: bool = False,
                round_: int = 1) -> None:
        """Ask for the events after the last seen (the missing ones)."""
        track.resyncing = True
        self._issue(Purpose(Step.RESYNC, track.code, track, restoring, round_),
                    track.resync_request, {"code": track.code, "since": track.last_event}, now)

    def _resynced(self, purpose: Purpose, reply: Message, now: float) -> None:
        track = purpose.track
        assert track is not None
        if reply.get("type") == track.events_reply:
            events = reply.get("events")
            track.held.extend(event for event in (events if isinstance(events, list) else [])
                              if isinstance(event, dict) and isinstance(event.get("seq"), int))
        elif isinstance(track, TournamentTrack):  # its count starts again from here
            track.restart_from(reply)
            self._deliver(track, Snapshot(reply))
        # A match's ``snapshot`` reply was delivered as a snapshot already.
        due, complete = track.release()
        for event in due:
            self._deliver(track, Event(event))
        if complete or purpose.round >= RESYNC_ROUNDS:
            track.resyncing = False
            if purpose.restoring:
                self._next_step(now)
            return
        self._resync(track, now, restoring=purpose.restoring, round_=purpose.round + 1)

    # -- the session's own requests: the reconnect, the resyncs -----------------------------

    def _issue(self, purpose: Purpose, kind: str, fields: Message, now: float) -> None:
        request = Request(next(self._ids), kind, fields, purpose=purpose)
        self._pending[request.id] = request
        self._send(request, now)

    def _step_answered(self, request: Request, purpose: Purpose, reply: Message,
                       now: float) -> None:
        if (purpose.step is Step.RESYNC and not purpose.restoring and is_transient(reply)
                and self._retry_resync(request, reply, now)):
            return
        del self._pending[request.id]
        if reply.get("type") == "error":
            self._step_refused(purpose, reply, now)
        elif purpose.step is Step.RESYNC:
            self._resynced(purpose, reply, now)
        elif purpose.step is Step.HELLO:
            self.player = _object(reply.get("player"))
            self.state = State.REJOINING
            self._plan = [
                *(Purpose(Step.REJOIN, code) for code in self.tracks),
                *(Purpose(Step.FOLLOW, code) for code in sorted(self.entered)),
                Purpose(Step.REQUEUE),
            ]
            for match in self.tracks.values():
                match.resyncing = True  # held from before the drop: they come again
                match.held = []
            self._next_step(now)
        elif purpose.step is Step.REJOIN:
            rejoined = self.tracks.get(str(purpose.code))
            if rejoined is None:
                self._next_step(now)
                return
            rejoined.rejoining = False
            self._resync(rejoined, now, restoring=True)
        else:  # REQUEUE
            self._next_step(now)

    def _retry_resync(self, request: Request, refusal: Message, now: float) -> bool:
        """A resync refused for now goes again after a pause, for up to
        ``reconnect_for_s``: the events it fetches would not come otherwise."""
        if request.retry_until is None:
            request.retry_until = now + self.reconnect_for_s
        wait_s = pause_after(refusal, request.backoff.take())
        if now + wait_s > request.retry_until:
            return False
        request.resend_at = now + wait_s
        return True

    def _step_refused(self, purpose: Purpose, refusal: Message, now: float) -> None:
        if purpose.track is not None:
            purpose.track.resyncing = False
        if not purpose.restoring and purpose.step is Step.RESYNC:
            log.warning("resync of %s failed: %s", purpose.code, describe(refusal))
            return
        if is_transient(refusal):  # not now: a new connection tries again
            self._last_error = f"the server refused the reconnect for now: {describe(refusal)}"
            self._reconnect_later(now, pause_after(refusal, self._reconnect_backoff.peek()))
            return
        code = str(purpose.code)
        if purpose.step is Step.REJOIN or isinstance(purpose.track, MatchTrack):
            self.tracks.pop(code, None)
            self._notices.append(Gone(f"cannot rejoin match {code}: {describe(refusal)}",
                                      match=code))
            self._next_step(now)
        elif isinstance(purpose.track, TournamentTrack):
            self.entered.discard(code)
            self._notices.append(Gone(
                f"cannot follow tournament {code} again: {describe(refusal)}", tournament=code))
            self._next_step(now)
        else:  # the hello, or the queue
            self._fail(f"the server refused the reconnect: {describe(refusal)}")

    def _next_step(self, now: float) -> None:
        """The next step of the reconnect; once none is left, the session is open."""
        while self._plan:
            purpose = self._plan.pop(0)
            if purpose.step is Step.REJOIN:
                track = self.tracks.get(str(purpose.code))
                if track is None:
                    continue
                track.rejoining = track.resyncing = True
                track.held = []
                self._issue(purpose, "join_match", {"code": track.code, "role": track.role}, now)
                return
            if purpose.step is Step.FOLLOW:
                followed = self._tournament(str(purpose.code))
                followed.held = []  # what came before the drop comes again in the reply
                self._resync(followed, now, restoring=True)
                return
            if self.queued is not None:  # REQUEUE
                self._issue(purpose, "quick_match", {"ruleset": self.queued}, now)
                return
        self.state = State.OPEN
        self._reconnect_backoff.reset()
        self._notices.append(Restored(f"reconnected to {self.peer}"))
        self._flush(now)

    def _timed_out(self, request: Request, now: float) -> None:
        purpose = request.purpose
        if purpose is None:
            self._finish(request, Unanswered(
                request.id, f"the server did not answer {request.kind} within "
                            f"{self.request_timeout_s:g} s", lost=False), now)
            return
        del self._pending[request.id]
        if purpose.track is not None:
            purpose.track.resyncing = False
        if purpose.step is Step.RESYNC and not purpose.restoring:
            log.warning("resync of %s failed: no answer in %g s", purpose.code,
                        self.request_timeout_s)
            return
        # A reconnect the server does not answer: as if dropped again, on a new connection.
        self._last_error = f"the server did not answer {request.kind} in time"
        self._reconnect_later(now, None)

    # -- reconnecting -------------------------------------------------------------------------

    def _reconnect_later(self, now: float, pause_s: float | None) -> None:
        """Let the connection go and open a new one after a pause (a reconnect refused
        for now, or not answered)."""
        self._forget_connection()
        self._notices.append(Disconnect(CLOSE_NORMAL, "reconnecting"))
        self._wait_to_reconnect(now, pause_s)

    def _wait_to_reconnect(self, now: float, pause_s: float | None = None) -> None:
        left_s = self._reconnect_until - now
        if left_s <= 0:
            self._fail(f"could not reconnect to {self.peer}: {self._last_error}")
            return
        delay = self._reconnect_backoff.take()
        if pause_s is not None:
            delay = max(delay, pause_s)
        self.state = State.WAITING
        self._notices.append(Reconnect(min(delay, left_s)))

    def _forget_connection(self) -> None:
        """What was under way on the connection is gone with it: the frames not sent yet,
        the session's own requests (a reconnect starts them again)."""
        self._frames.clear()
        self._plan = []
        for request in list(self._pending.values()):
            if request.purpose is not None:
                del self._pending[request.id]
        for track in (*self.tracks.values(), *self.tournaments.values()):
            track.resyncing = False
        for match in self.tracks.values():
            match.rejoining = False

    # -- the application's requests, sent and answered --------------------------------------

    def _send(self, request: Request, now: float) -> None:
        self._frames.append(request.frame())
        request.sent = True
        request.answer_by = now + self.request_timeout_s

    def _flush(self, now: float) -> None:
        """Open again: send what waited for the connection, in the order it was asked."""
        for request in sorted(self._pending.values(), key=lambda request: request.id):
            if not request.sent and request.resend_at is None:
                self._send(request, now)

    def _start_action(self, request: Request, now: float) -> None:
        code = str(request.fields["code"])
        track = self.tracks.get(code)
        if track is None:  # gone while it waited its turn
            self._next_action(code, now, Unanswered(request.id, str(NotInMatch(code)),
                                                    lost=False))
            return
        action = str(request.fields["action"])
        numbered = request.fields.get("seq")
        seq = numbered if isinstance(numbered, int) else track.next_seq
        track.next_seq = max(track.next_seq, seq + 1)
        track.unacked = (seq, action)
        request.fields = {"code": code, "seq": seq, "action": action}
        self._pending[request.id] = request
        if self.state is State.OPEN:
            self._send(request, now)

    def _next_action(self, code: str, now: float, notice: Notice) -> None:
        """The first action of match ``code`` is answered: the next goes."""
        queue = self._actions.get(code)
        if queue:
            queue.popleft()
        self._notices.append(notice)
        track = self.tracks.get(code)
        if track is not None:
            track.unacked = None
        if queue:
            self._start_action(queue[0], now)
        else:
            self._actions.pop(code, None)

    def _finish(self, request: Request, notice: Notice, now: float) -> None:
        self._pending.pop(request.id, None)
        if request.kind == "action" and request.purpose is None:
            code = str(request.fields["code"])
            queue = self._actions.get(code)
            if queue and queue[0] is request:
                self._next_action(code, now, notice)
                return
        self._notices.append(notice)

    def _ended(self, request: Request) -> bool:
        """A request to a session closed or failed: ``Unanswered`` at once."""
        if self.state is State.CLOSED:
            self._notices.append(Unanswered(request.id, "the connection is closed", lost=True))
        elif self.state is State.FAILED:
            self._notices.append(Unanswered(request.id, str(self.failure), lost=True))
        else:
            return False
        return True

    def _end_requests(self, why: str) -> None:
        requests = [*self._pending.values(),
                    *(request for queue in self._actions.values() for request in queue)]
        self._pending.clear()
        self._actions.clear()
        seen: set[int] = set()
        for request in sorted(requests, key=lambda request: request.id):
            if request.purpose is None and request.id not in seen:
                seen.add(request.id)
                self._notices.append(Unanswered(request.id, why, lost=True))
        for track in self.tracks.values():
            track.unacked = None

    def _fail(self, reason: str, *, close_code: int = CLOSE_NORMAL) -> None:
        self.state = State.FAILED
        self.failure = reason
        self._forget_connection()
        self._end_requests(reason)
        self._notices.append(Disconnect(close_code, "protocol error"
                                        if close_code == CLOSE_PROTOCOL_ERROR else "failed"))
        self._notices.append(Failed(reason))


def _object(value: Any) -> Message | None:
    return value if isinstance(value, dict) else None


def _code_of(value: Any) -> str | None:
    """The ``code`` of a match or tournament object, if it has one."""
    if isinstance(value, dict) and isinstance(value.get("code"), str):
        return str(value["code"])
    return None
