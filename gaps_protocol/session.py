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
* Every frame is decoded once, strictly, into its type (``gaps_protocol.messages``): the
  notices carry typed messages. A frame that is not a server message of this protocol
  (not JSON, a count that is not a whole number, a member missing, or one, an event or a
  reply the protocol does not have, as a newer server's) breaks the protocol: the session
  ``Failed`` for good, naming the path of what is wrong (``$.match.players[0].score``).
  A client does not guess at what it does not know: a newer protocol is a new version
  (``welcome``'s ``protocol``), not something to skip.
* Requests are typed values too (``gaps_protocol.messages.requests``): the session gives
  each its ``id`` and writes every frame with the one encoder.
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
from typing import Final, TypeGuard, cast, get_args

import msgspec

from gaps_protocol.backoff import Backoff
from gaps_protocol.messages import (
    ClientMessage,
    Error,
    MatchEvent,
    ServerMessage,
    ServerReply,
    TournamentEvent,
    decode_server_message,
    encode,
)
from gaps_protocol.messages import replies as r
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.requests import (
    CancelQuickMatch,
    Hello,
    JoinMatch,
    JoinTournament,
    LeaveMatch,
    Play,
    QuickMatch,
    Register,
)
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
from gaps_protocol.tracks import (
    MATCH_SNAPSHOTS,
    Delivered,
    EventTrack,
    MatchSnapshot,
    MatchTrack,
    NumberedEvent,
    TournamentTrack,
)

log = logging.getLogger("gaps.client")
log.addHandler(logging.NullHandler())

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
#: How much of a frame that breaks the protocol the failure quotes.
QUOTED_AT_MOST: Final = 120
_MATCH_EVENTS: Final = frozenset(get_args(MatchEvent))
_TOURNAMENT_EVENTS: Final = frozenset(get_args(TournamentEvent))
#: Reads only the ``type`` and ``event`` of a frame that broke the protocol, to name it.
_decode_any: Final = msgspec.json.Decoder().decode


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
    #: The request as it goes, its ``id`` set.
    message: ClientMessage
    retry: bool = False
    #: An action's ``seq`` as its sender numbered it (None: the session numbers it).
    own_seq: int | None = None
    purpose: Purpose | None = None
    sent: bool = False
    answer_by: float | None = None
    resend_at: float | None = None
    retry_until: float | None = None
    backoff: Backoff = field(default_factory=lambda: Backoff(RETRY_FIRST_S, RETRY_MOST_S))

    @property
    def kind(self) -> str:
        """Its ``type``, for people."""
        return str(self.message.__struct_config__.tag)

    def frame(self) -> str:
        return encode(self.message).decode()


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
        self.player: Player | None = None
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
                  tournament: str | None = None) -> list[Delivered]:
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
            self._issue(Purpose(Step.HELLO), Hello(token=self.token), now)
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
            message = decode_server_message(frame)
        except msgspec.DecodeError as error:  # a ValidationError too: no reconnect to it
            violation = _violation(frame, error)
            log.warning("%s", violation)
            self._fail(violation, close_code=CLOSE_PROTOCOL_ERROR)
            return
        if _is_match_event(message):
            track = self.tracks.get(message.match)
            if track is not None:
                self._numbered(track, message, now)
        elif _is_tournament_event(message):
            self._numbered(self._tournament(message.tournament), message, now)
        else:  # neither kind of event: a reply (the decoder knows no other)
            self._reply(cast(ServerReply, message), now)

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

    def request(self, message: ClientMessage, now: float, *, retry: bool = False) -> int:
        """Send ``message`` (once the session is open) with an ``id`` of the session's;
        returns that id, which its ``Reply``, ``Refused`` or ``Unanswered`` names. With
        ``retry`` (only for requests that are safe to repeat), a request cut by a dropped
        connection goes again once reconnected, and one refused for now again after a
        growing pause, for up to ``reconnect_for_s``."""
        request = self._new_request(message, retry=retry)
        if isinstance(message, CancelQuickMatch):
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
        # Numbered when its turn comes (``_start_action``), unless its sender numbered it.
        request = self._new_request(Play(code=code, seq=0 if seq is None else seq,
                                         action=action), retry=True)
        request.own_seq = seq
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

    def _reply(self, message: ServerReply, now: float) -> None:
        if isinstance(message, MATCH_SNAPSHOTS):
            if isinstance(message, r.Matched):
                self.queued = None
                self._snapshot(message)
                return  # unasked: it answers no request
            self._snapshot(message)
        elif isinstance(message, r.Tournament) and message.seq is not msgspec.UNSET:
            # A reply reflects the tournament's events up to its seq: those that follow it
            # on the wire (sent before the reply was) are not delivered again.
            self._tournament(message.tournament.code).reflected(message.seq)
        request_id = message.id
        request = self._pending.get(request_id) if isinstance(request_id, int) else None
        if request is None or not request.sent:
            return
        request.sent = False
        request.answer_by = None
        if request.purpose is not None:
            self._step_answered(request, request.purpose, message, now)
        elif isinstance(message, Error):
            if not (request.retry and is_transient(message)
                    and self._retry_later(request, message, now)):
                self._finish(request, Refused(request.id, message), now)
        else:
            self._took_effect(request, message)
            self._finish(request, Reply(request.id, message), now)

    def _took_effect(self, request: Request, reply: ServerReply) -> None:
        """What the session remembers of a request the server carried out."""
        sent = request.message
        if isinstance(sent, Hello):
            self.token = sent.token
            self.player = reply.player if isinstance(reply, r.Welcome) else None
        elif isinstance(sent, Register) and isinstance(reply, r.Registered):
            self.token = reply.token
            self.player = reply.player
        elif isinstance(sent, JoinTournament) and isinstance(reply, r.Tournament):
            self.entered.add(reply.tournament.code)
        elif isinstance(sent, QuickMatch):
            self.queued = sent.ruleset
        elif isinstance(sent, LeaveMatch):
            self.tracks.pop(sent.code, None)

    def _retry_later(self, request: Request, refusal: Error, now: float) -> bool:
        """Schedule ``request`` again after a refusal for now; False once its window is
        past (the refusal then stands)."""
        if request.retry_until is None:
            request.retry_until = now + self.reconnect_for_s
            self._notices.append(Retrying(
                request.id, refusal.code,
                f"the server refused {request.kind} for now ({describe(refusal)}): trying "
                f"again for up to {self.reconnect_for_s:g} s"))
        wait_s = pause_after(refusal, request.backoff.take())
        if now + wait_s > request.retry_until:
            return False
        request.resend_at = now + wait_s
        return True

    def _snapshot(self, message: MatchSnapshot) -> None:
        code = message.match.code
        you = message.you
        track = self.tracks.get(code)
        if track is None:
            track = self.tracks[code] = MatchTrack(code, role=you.role)
        last_seq = you.last_seq
        track.snapshot(message.seq, None if last_seq is msgspec.UNSET else last_seq)
        self._deliver(track, Snapshot(message))

    # -- events -------------------------------------------------------------------------------

    def _numbered(self, track: EventTrack, event: NumberedEvent, now: float) -> None:
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
                    track.resync_request(), now)

    def _resynced(self, purpose: Purpose, reply: ServerReply, now: float) -> None:
        track = purpose.track
        assert track is not None
        if isinstance(reply, track.events_reply):
            track.held.extend(reply.events)
        elif isinstance(track, TournamentTrack) and isinstance(reply, r.Tournament):
            # Its count starts again from here.
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

    def _new_request(self, message: ClientMessage, *, retry: bool = False,
                     purpose: Purpose | None = None) -> Request:
        request_id = next(self._ids)
        return Request(request_id, msgspec.structs.replace(message, id=request_id),
                       retry=retry, purpose=purpose)

    def _issue(self, purpose: Purpose, message: ClientMessage, now: float) -> None:
        request = self._new_request(message, purpose=purpose)
        self._pending[request.id] = request
        self._send(request, now)

    def _step_answered(self, request: Request, purpose: Purpose, reply: ServerReply,
                       now: float) -> None:
        if (purpose.step is Step.RESYNC and not purpose.restoring
                and isinstance(reply, Error) and is_transient(reply)
                and self._retry_resync(request, reply, now)):
            return
        del self._pending[request.id]
        if isinstance(reply, Error):
            self._step_refused(purpose, reply, now)
        elif purpose.step is Step.RESYNC:
            self._resynced(purpose, reply, now)
        elif purpose.step is Step.HELLO:
            self.player = reply.player if isinstance(reply, r.Welcome) else None
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

    def _retry_resync(self, request: Request, refusal: Error, now: float) -> bool:
        """A resync refused for now goes again after a pause, for up to
        ``reconnect_for_s``: the events it fetches would not come otherwise."""
        if request.retry_until is None:
            request.retry_until = now + self.reconnect_for_s
        wait_s = pause_after(refusal, request.backoff.take())
        if now + wait_s > request.retry_until:
            return False
        request.resend_at = now + wait_s
        return True

    def _step_refused(self, purpose: Purpose, refusal: Error, now: float) -> None:
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
                self._issue(purpose, JoinMatch(code=track.code, role=track.role), now)
                return
            if purpose.step is Step.FOLLOW:
                followed = self._tournament(str(purpose.code))
                followed.held = []  # what came before the drop comes again in the reply
                self._resync(followed, now, restoring=True)
                return
            if self.queued is not None:  # REQUEUE
                self._issue(purpose, QuickMatch(ruleset=self.queued), now)
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
        play = request.message
        assert isinstance(play, Play)
        code = play.code
        track = self.tracks.get(code)
        if track is None:  # gone while it waited its turn
            self._next_action(code, now, Unanswered(request.id, str(NotInMatch(code)),
                                                    lost=False))
            return
        seq = track.next_seq if request.own_seq is None else request.own_seq
        track.next_seq = max(track.next_seq, seq + 1)
        track.unacked = (seq, play.action)
        request.message = msgspec.structs.replace(play, seq=seq)
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
        if isinstance(request.message, Play) and request.purpose is None:
            code = request.message.code
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


def _is_match_event(message: ServerMessage) -> TypeGuard[MatchEvent]:
    return type(message) in _MATCH_EVENTS


def _is_tournament_event(message: ServerMessage) -> TypeGuard[TournamentEvent]:
    return type(message) in _TOURNAMENT_EVENTS


def _violation(frame: str | bytes, error: msgspec.DecodeError) -> str:
    """What is wrong with ``frame``, for people: the kind of message, and the path of what
    is wrong in it as msgspec names it."""
    shown = repr(frame)
    if len(shown) > QUOTED_AT_MOST:
        shown = shown[:QUOTED_AT_MOST - 3] + "..."
    if not isinstance(error, msgspec.ValidationError):
        return f"the server broke the protocol: a frame that is not JSON ({error}): {shown}"
    message = _decode_any(frame)
    kind = message.get("type") if isinstance(message, dict) else None
    if kind in ("event", "tournament_event") and isinstance(message.get("event"), str):
        kind = f"{kind} {message['event']}"
    named = f"in a {kind!r} message, " if isinstance(kind, str) else ""
    return f"the server broke the protocol: {named}{error}: {shown}"
