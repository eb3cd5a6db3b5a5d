"""gaps_protocol.ClientSession without a socket or real time: a fake server core (a test
double of the server, as far as a client sees it) and a fake clock, over random drops,
duplicates, reorderings and reconnects."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps_protocol import (
    Backoff,
    ClientSession,
    Closed,
    Disconnect,
    Event,
    Failed,
    Gone,
    Lost,
    Notice,
    NotInMatch,
    NumberedEvent,
    Reconnect,
    Refused,
    Reply,
    Restored,
    Retrying,
    Snapshot,
    State,
    Unanswered,
)
from gaps_protocol.messages import ClientMessage, Error, ServerReply, decode_request, encode
from gaps_protocol.messages import replies as r
from gaps_protocol.messages.events import EntrantJoined, ProgressMade
from gaps_protocol.messages.requests import (
    CreateMatch,
    Hello,
    JoinMatch,
    JoinTournament,
    Ping,
    Play,
    Resync,
    ResyncTournament,
)
from tests.test_layers import imported, modules, within

CODE = "K7QX2M"
CUP = "Q4M2ZK"
TOKEN = "t" * 43
URL = "ws://gaps.test"
PATIENT = 1e9  # no window runs out in the property test: only faults happen there
#: An instant as the server writes it.
AT = "2026-12-02T09:22:45.123Z"


# -- the server's messages, whole (the session reads them strictly) ---------------------------

def progress(name: str, *, player_id: int = 8) -> dict[str, Any]:
    return {"player_id": player_id, "name": name, "bot": False, "ready": True,
            "connected": True, "placed": 0, "score": 0, "redeals_used": 0, "moves_made": 0,
            "status": "playing", "finished": False, "won": False, "end_reason": None,
            "finish_ms": None}


MATCH = {"id": 1, "code": CODE, "ruleset": "classic", "max_players": 2, "time_limit_s": 600,
         "win_by": "time", "public": False, "rated": True, "countdown_s": 3, "bots": False,
         "host_id": 7, "kind": "race", "status": "running", "players": 2,
         "commitment": "c" * 64, "started_at": AT, "t_ms": 0}
TOURNAMENT = {
    "id": 1, "code": CUP, "name": "Cup", "host_id": 7, "ruleset": "classic", "rounds": 3,
    "max_players": 16, "round_time_limit_s": 600, "start_at": None, "if_empty": "cancel",
    "status": "open", "cancel_reason": None, "current_round": 0, "round_match": None,
    "bots": False, "countdown_s": 5, "break_s": 30, "deals": "any", "deals_ready": True,
    "late_entry_until_round": 0, "paused": False, "arbiters": [], "round_started_at": None,
    "round_tables": [], "announcements": [], "commitment": None, "round_commitments": [],
    "seeds": [], "entrant_count": 0, "entrants": [],
}


def message(kind: type[Any], /, **members: Any) -> Any:
    """A server message of type ``kind``, from its members as JSON gives them."""
    return msgspec.convert(members, kind)


def joined_frame(**changes: Any) -> dict[str, Any]:
    """A ``joined`` reply as JSON, valid as it is."""
    return {"type": "joined", "id": 99, "match": MATCH, "players": [progress("ana")],
            "spectators": 0, "you": {"role": "player", "last_seq": 0}, "seq": 0, **changes}


def tag(request: ClientMessage) -> str:
    return str(request.__struct_config__.tag)


# -- a fake server ------------------------------------------------------------------------------

@dataclass
class Wire:
    """One connection: the frames in flight each way, and what the server sends on it."""

    to_server: list[str] = field(default_factory=list)
    to_client: list[str] = field(default_factory=list)
    watching: bool = False
    following: bool = False


class FakeServer:
    """The server as one client sees it: one match whose events are numbered, the
    player's actions applied at most once by ``seq``, one tournament, and refusals for
    now on demand. A test double of the server's core, not a mock: it answers as the
    protocol says (docs/protocol.md), with the protocol's types, and reads the session's
    requests strictly."""

    def __init__(self) -> None:
        self.match_events: list[NumberedEvent] = []
        self.tournament_events: list[NumberedEvent] = []
        self.applied: list[str] = []
        self.last_seq = 0
        self.acks: dict[int, r.ActionOk] = {}
        #: Requests of these kinds to refuse for now (``storage_unavailable``), one each.
        self.outages: list[str] = []
        self.wire: Wire | None = None
        self.requests: list[ClientMessage] = []

    def publish(self, what: str) -> None:
        event = message(ProgressMade, type="event", event="progress", match=CODE,
                        seq=len(self.match_events) + 1, t_ms=0, **progress(what))
        self.match_events.append(event)
        if self.wire is not None and self.wire.watching:
            self.wire.to_client.append(encode(event).decode())

    def announce(self, what: str) -> None:
        event = EntrantJoined(type="tournament_event", tournament=CUP,
                              seq=len(self.tournament_events) + 1, player_id=9, name=what,
                              bot=False)
        self.tournament_events.append(event)
        if self.wire is not None and self.wire.following:
            self.wire.to_client.append(encode(event).decode())

    def handle(self, frame: str, wire: Wire) -> None:
        request = decode_request(frame)
        self.requests.append(request)
        reply = self._answer(request, wire)
        wire.to_client.append(encode(msgspec.structs.replace(reply, id=request.id)).decode())
        if isinstance(request, Play) and isinstance(reply, r.ActionOk) and not reply.duplicate:
            self.publish(f"moved {request.action}")

    def _answer(self, request: ClientMessage, wire: Wire) -> ServerReply:
        if tag(request) in self.outages:
            self.outages.remove(tag(request))
            return Error(id=None, code="storage_unavailable", message="not now")
        if isinstance(request, Hello):
            return message(r.Welcome, id=None, player={"id": 7, "name": "me", "bot": False},
                           protocol=1, server_time=AT, suspended=None)
        if isinstance(request, JoinMatch):
            wire.watching = True
            return message(r.Joined, **joined_frame(seq=len(self.match_events),
                                                    you={"role": "player",
                                                         "last_seq": self.last_seq}))
        if isinstance(request, Resync):
            return r.Events(id=None, match=CODE, events=self.match_events[request.since:])
        if isinstance(request, Play):
            seq = request.seq
            if seq <= self.last_seq:
                return msgspec.structs.replace(self.acks[seq], duplicate=True)
            self.last_seq = seq
            self.applied.append(request.action)
            ack = self.acks[seq] = message(
                r.ActionOk, id=None, match=CODE, seq=seq, action=request.action, kind="move",
                t_ms=0, score=0, placed=0, redeals_used=0, redeals_left=0,
                moves_made=len(self.applied), status="playing", can_undo=False)
            return ack
        if isinstance(request, JoinTournament | ResyncTournament):
            wire.following = True
            if isinstance(request, ResyncTournament):
                return r.TournamentEvents(id=None, tournament=CUP,
                                          events=self.tournament_events[request.since:])
            return message(r.Tournament, id=None, tournament=TOURNAMENT,
                           seq=len(self.tournament_events))
        return message(r.Pong, id=None, server_time=AT)


# -- a client on a fake clock ---------------------------------------------------------------

class Harness:
    """A session, the fake server, and the network between them, on a fake clock."""

    def __init__(self, server: FakeServer, **options: Any) -> None:
        self.server = server
        self.now = 0.0
        self.session = ClientSession(URL, token=TOKEN, **options)
        self.notices: list[Notice] = []
        self.reconnect_at: float | None = None
        self.refuse_connections = 0
        self.wire: Wire | None = None
        self.connect()

    def connect(self) -> None:
        self.wire = self.server.wire = Wire()
        self.session.connection_made(self.now)
        self.pump()

    def pump(self) -> None:
        frames = self.session.frames_to_send()
        if frames:
            assert self.wire is not None, "frames to send without a connection"
            self.wire.to_server.extend(frames)
        for notice in self.session.events():
            self.notices.append(notice)
            if isinstance(notice, Reconnect):
                assert notice.after_s >= 0
                self.reconnect_at = self.now + notice.after_s
            elif isinstance(notice, Disconnect):  # the session lets the connection go
                self.wire = self.server.wire = None

    def request(self, request: ClientMessage) -> int:
        request_id = self.session.request(request, self.now)
        self.pump()
        return request_id

    def act(self, action: str) -> int:
        request_id = self.session.act(CODE, action, self.now)
        self.pump()
        return request_id

    def to_server(self) -> bool:
        if self.wire is None or not self.wire.to_server:
            return False
        self.server.handle(self.wire.to_server.pop(0), self.wire)
        return True

    def to_client(self) -> bool:
        if self.wire is None or not self.wire.to_client:
            return False
        self.session.receive(self.wire.to_client.pop(0), self.now)
        self.pump()
        return True

    def cut(self) -> None:
        """The connection drops: what was in flight either way is lost."""
        if self.wire is None:
            return
        self.wire = self.server.wire = None
        self.session.connection_lost(self.now)
        self.pump()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        if self.reconnect_at is not None and self.now >= self.reconnect_at:
            self.reconnect_at = None
            if self.refuse_connections:
                self.refuse_connections -= 1
                self.session.connect_failed(self.now, "connection refused")
                self.pump()
            else:
                self.connect()
        wake_at = self.session.next_timer()
        if wake_at is not None and self.now >= wake_at:
            self.session.tick(self.now)
            self.pump()

    def settle(self, *, rounds: int = 10_000) -> None:
        """Let everything in flight arrive, reconnect when asked, wait out the pauses."""
        for _ in range(rounds):
            if self.to_server() or self.to_client():
                continue
            instants = [instant for instant in (self.reconnect_at, self.session.next_timer())
                        if instant is not None]
            if not instants:
                return
            self.advance(max(0.0, min(instants) - self.now))
        raise AssertionError("the session never settled")

    def answers(self, request_id: int) -> list[Notice]:
        return [notice for notice in self.notices
                if isinstance(notice, Reply | Refused | Unanswered)
                and notice.request_id == request_id]

    def delivered(self, kind: type[Any]) -> list[Any]:
        return [notice.message for notice in self.notices
                if isinstance(notice, Event) and isinstance(notice.message, kind)]


def started(server: FakeServer, **options: Any) -> Harness:
    """Signed in, in the match and in the tournament."""
    harness = Harness(server, **options)
    for request in (Hello(token=TOKEN), JoinMatch(code=CODE), JoinTournament(code=CUP)):
        request_id = harness.request(request)
        harness.settle()
        [answer] = harness.answers(request_id)
        assert isinstance(answer, Reply), answer
    return harness


# -- the property: whatever the network does ---------------------------------------------------

OPERATIONS = st.sampled_from([
    "act", "publish", "announce", "to_server", "to_client", "to_client", "drop", "duplicate",
    "swap", "cut", "tick", "outage", "refuse_connection",
])


def is_numbered(frame: str) -> bool:
    return json.loads(frame)["type"] in ("event", "tournament_event")


def run(harness: Harness, operation: str, index: int, pick: int) -> None:
    server, wire = harness.server, harness.wire
    numbered = [i for i, frame in enumerate(wire.to_client) if is_numbered(frame)] if wire else []
    if operation == "act" and CODE in harness.session.tracks:
        harness.act(f"a{index}")
    elif operation == "publish":
        server.publish(f"n{index}")
    elif operation == "announce":
        server.announce(f"e{index}")
    elif operation == "to_server":
        harness.to_server()
    elif operation == "to_client":
        harness.to_client()
    elif operation == "drop" and wire and numbered:  # a slow reader's events are dropped
        del wire.to_client[numbered[pick % len(numbered)]]
    elif operation == "duplicate" and wire and numbered:
        at = numbered[pick % len(numbered)]
        wire.to_client.insert(at, wire.to_client[at])
    elif operation == "swap" and wire and len(numbered) >= 2:
        first = pick % (len(numbered) - 1)
        a, b = numbered[first], numbered[first + 1]
        wire.to_client[a], wire.to_client[b] = wire.to_client[b], wire.to_client[a]
    elif operation == "cut":
        harness.cut()
    elif operation == "tick":
        harness.advance(0.05 + (pick % 7) * 0.3)
    elif operation == "outage":
        server.outages.append(["action", "hello", "join_match", "resync"][pick % 4])
    elif operation == "refuse_connection":
        harness.refuse_connections += 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(OPERATIONS, st.integers(0, 1000)), max_size=60))
def test_every_acknowledged_action_is_applied_once_and_every_event_delivered_once_in_order(
    schedule: list[tuple[str, int]],
) -> None:
    server = FakeServer()
    server.publish("before")
    server.announce("before")
    harness = started(server, reconnect_for_s=PATIENT, request_timeout_s=PATIENT)
    issued: list[str] = []
    for index, (operation, pick) in enumerate(schedule):
        if operation == "act" and CODE in harness.session.tracks:
            issued.append(f"a{index}")
        run(harness, operation, index, pick)
    # The last events come through: a gap before them shows, and the resync fills it.
    server.publish("last")
    server.announce("last")
    harness.settle()

    session = harness.session
    assert session.state is State.OPEN and session.failure is None
    assert server.applied == issued  # each once, in the order played
    replies = [notice.message for notice in harness.notices
               if isinstance(notice, Reply) and isinstance(notice.message, r.ActionOk)]
    assert [reply.action for reply in replies] == issued  # each acknowledged once
    assert [reply.seq for reply in replies] == sorted({reply.seq for reply in replies})

    events = harness.delivered(ProgressMade)
    assert [event.seq for event in events] == list(range(2, len(server.match_events) + 1))
    assert events == server.match_events[1:]  # as published: the first was in the snapshot
    announced = harness.delivered(EntrantJoined)
    assert announced == server.tournament_events[1:]  # the join's reply reflects the first
    assert not any(isinstance(notice, Failed | Gone | Refused | Unanswered)
                   for notice in harness.notices)
    lost = sum(isinstance(notice, Lost) for notice in harness.notices)
    assert sum(isinstance(notice, Restored) for notice in harness.notices) == lost


# -- one behaviour at a time ---------------------------------------------------------------------

def test_a_reply_answers_its_request_and_a_refusal_names_its_code() -> None:
    harness = started(FakeServer())
    ping = harness.request(Ping())
    harness.settle()
    harness.server.outages.append("ping")
    refused = harness.request(Ping())
    harness.settle()
    assert [type(answer) for answer in harness.answers(ping)] == [Reply]
    [refusal] = harness.answers(refused)
    assert isinstance(refusal, Refused) and refusal.code == "storage_unavailable"
    assert refusal.transient and str(refusal) == "not now"  # not retried: not marked safe


def test_an_action_refused_for_now_goes_again_with_its_seq_after_a_pause() -> None:
    harness = started(FakeServer())
    harness.server.outages += ["action", "action"]
    played = harness.act("3H")
    harness.settle()
    sent = [(r.seq, r.action) for r in harness.server.requests if isinstance(r, Play)]
    assert sent == [(1, "3H")] * 3
    [retrying] = [notice for notice in harness.notices if isinstance(notice, Retrying)]
    assert retrying.code == "storage_unavailable" and retrying.request_id == played
    assert retrying.detail.startswith("the server refused action for now (not now)")
    assert harness.now == pytest.approx(0.2 + 0.4)  # the pauses: 0.2 s, then twice that
    [reply] = harness.answers(played)
    assert reply == Reply(played, msgspec.structs.replace(harness.server.acks[1], id=played))


def test_an_action_still_refused_when_its_window_ends_is_refused() -> None:
    harness = started(FakeServer(), reconnect_for_s=0.5)
    harness.server.outages += ["action"] * 5
    played = harness.act("3H")
    harness.settle()
    [refusal] = harness.answers(played)
    assert isinstance(refusal, Refused) and refusal.code == "storage_unavailable"
    assert len([r for r in harness.server.requests if isinstance(r, Play)]) == 2


def test_actions_of_a_match_go_one_at_a_time_each_with_the_next_seq() -> None:
    harness = started(FakeServer())
    first, second = harness.act("3H"), harness.act("2C>4")
    assert [json.loads(f)["seq"] for f in harness.wire.to_server] == [1]  # type: ignore[union-attr]
    harness.settle()
    assert [seq_of(harness.answers(i)) for i in (first, second)] == [1, 2]
    with pytest.raises(NotInMatch, match="not in match ZZZZZZ: join it first"):
        harness.session.act("ZZZZZZ", "3H", harness.now)


def test_an_action_numbered_by_its_sender_goes_with_that_seq_and_the_count_goes_on() -> None:
    server = FakeServer()
    harness = started(server)
    first = harness.act("3H")
    harness.settle()
    again = harness.session.act(CODE, "3H", harness.now, seq=1)  # sent again, on purpose
    harness.pump()
    harness.settle()
    [reply] = harness.answers(again)
    assert isinstance(reply, Reply) and reply.message.duplicate is True  # type: ignore[union-attr]
    ahead = harness.session.act(CODE, "QH", harness.now, seq=5)
    then = harness.act("KH")
    harness.settle()
    assert [r.seq for r in server.requests if isinstance(r, Play)] == [1, 1, 5, 6]
    assert [seq_of(harness.answers(i)) for i in (first, ahead, then)] == [1, 5, 6]


def test_an_unacknowledged_action_goes_again_with_the_same_seq_and_is_applied_once() -> None:
    server = FakeServer()
    harness = started(server)
    played = harness.act("3H")
    harness.to_server()  # applied and acknowledged; the acknowledgement is lost
    harness.cut()
    assert isinstance(harness.notices[-2], Lost) and harness.notices[-1] == Reconnect(0.0)
    harness.settle()
    assert server.applied == ["3H"]
    [reply] = harness.answers(played)
    assert isinstance(reply, Reply) and reply.message.duplicate is True  # type: ignore[union-attr]
    kinds = [tag(r) for r in server.requests]
    assert kinds[-6:] == ["action", "hello", "join_match", "resync", "tournament_resync",
                          "action"]
    assert isinstance(harness.notices[-1], Reply)  # the resend goes once restored
    assert any(isinstance(notice, Restored) for notice in harness.notices)


def test_a_request_not_safe_to_repeat_is_unanswered_when_the_connection_drops() -> None:
    harness = started(FakeServer())
    created = harness.request(CreateMatch())
    harness.cut()
    [answer] = harness.answers(created)
    assert answer == Unanswered(created, f"lost the connection to {URL}", lost=True)


def test_reconnect_pauses_grow_and_are_bounded_and_the_session_gives_up_in_time() -> None:
    harness = started(FakeServer(), reconnect_for_s=20)
    harness.refuse_connections = 1000
    harness.cut()
    harness.settle()
    pauses = [notice.after_s for notice in harness.notices if isinstance(notice, Reconnect)]
    assert pauses[:7] == [0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6]
    assert max(pauses) == 2.0 and all(
        b >= a for a, b in itertools.pairwise(pauses[1:-1]))
    failed = harness.notices[-1]
    assert failed == Failed(f"could not reconnect to {URL}: connection refused")
    assert harness.now == pytest.approx(20)
    assert harness.session.state is State.FAILED


def test_a_backoff_doubles_up_to_its_bound_and_starts_again_when_reset() -> None:
    backoff = Backoff(0.25, 2.0)
    assert [backoff.take() for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    backoff.reset()
    assert backoff.peek() == 0.25
    with pytest.raises(ValueError, match="first=3"):
        Backoff(3, 2)


def test_a_reconnect_refused_for_now_lets_the_connection_go_and_tries_again() -> None:
    server = FakeServer()
    harness = started(server)
    server.outages.append("join_match")
    harness.cut()
    harness.settle()
    assert any(isinstance(notice, Disconnect) for notice in harness.notices)
    assert [tag(r) for r in server.requests].count("hello") == 3  # first, refused, back
    assert isinstance([n for n in harness.notices if isinstance(n, Restored | Lost)][-1],
                      Restored)


def test_a_restarted_server_numbers_anew_and_the_count_follows_its_snapshot() -> None:
    server = FakeServer()
    for index in range(5):
        server.publish(f"old{index}")
    harness = started(server)
    server.match_events = server.match_events[:1]  # the restart: numbered anew from 1
    harness.cut()
    harness.settle()
    server.publish("new")
    harness.settle()
    assert harness.session.tracks[CODE].last_event == 2
    assert [event.name for event in harness.delivered(ProgressMade)][-1:] == ["new"]


def test_a_match_whose_rejoin_is_refused_is_gone_and_the_session_goes_on() -> None:
    server = FakeServer()
    harness = started(server)
    answer = server._answer

    def no_match(request: ClientMessage, wire: Wire) -> ServerReply:
        if isinstance(request, JoinMatch):
            return Error(id=None, code="no_such_match",
                         message=f"no live match has code '{CODE}'")
        return answer(request, wire)

    server._answer = no_match  # type: ignore[method-assign]
    harness.cut()
    harness.settle()
    [gone] = [notice for notice in harness.notices if isinstance(notice, Gone)]
    assert gone == Gone(f"cannot rejoin match {CODE}: no live match has code '{CODE}'",
                        match=CODE)
    assert CODE not in harness.session.tracks and harness.session.state is State.OPEN


def test_a_hello_refused_for_good_fails_the_session_with_the_reason() -> None:
    server = FakeServer()
    harness = started(server)
    answer = server._answer
    server._answer = lambda request, wire: (  # type: ignore[method-assign]
        Error(id=None, code="bad_token", message="no such token")
        if isinstance(request, Hello) else answer(request, wire))
    harness.cut()
    harness.settle()
    assert harness.notices[-1] == Failed("the server refused the reconnect: no such token")


def fail_with(harness: Harness, frame: dict[str, Any] | str) -> str:
    """Feed ``frame`` (JSON text as it is, or an object written as JSON) to the session,
    which must fail for it: the reason."""
    harness.session.receive(frame if isinstance(frame, str) else json.dumps(frame),
                            harness.now)
    harness.pump()
    assert harness.session.state is State.FAILED
    assert harness.notices[-2:] == [Disconnect(1002, "protocol error"),
                                    Failed(str(harness.session.failure))]
    return str(harness.session.failure)


def progress_frame(**changes: Any) -> dict[str, Any]:
    return {"type": "event", "event": "progress", "match": CODE, "seq": 2, "t_ms": 0,
            **progress("ana"), **changes}


def test_a_count_that_is_not_a_whole_number_fails_the_session_naming_its_path() -> None:
    harness = started(FakeServer())
    waiting = harness.request(Ping())
    why = fail_with(harness, progress_frame(seq=1.5))
    assert why.startswith("the server broke the protocol: in a 'event progress' message, "
                          "Expected `int`, got `float` - at `$.seq`: ")
    assert harness.notices[-3] == Unanswered(waiting, why, lost=True)
    later = harness.request(Ping())
    assert harness.answers(later) == [Unanswered(later, why, lost=True)]
    harness.session.receive(encode(message(r.Pong, id=waiting, server_time=AT)), harness.now)
    assert harness.session.events() == []  # nothing more is read


@pytest.mark.parametrize(("frame", "where"), [
    (joined_frame(players=[{**progress("ana"), "score": 1.5}]),
     "Expected `int`, got `float` - at `$.players[0].score`"),
    (joined_frame(you={"role": "player", "game": {"moves_made": True}}),
     "Expected `int`, got `bool` - at `$.you.game.moves_made`"),
    (joined_frame(match={**MATCH, "players": "2"}),
     "Expected `int`, got `str` - at `$.match.players`"),
    ({**joined_frame(), "seq": None}, "Expected `int`, got `null` - at `$.seq`"),
    ({key: value for key, value in joined_frame().items() if key != "you"},
     "Object missing required field `you`"),
    (progress_frame(seq=0), "Expected `int` >= 1 - at `$.seq`"),
])
def test_a_frame_the_types_refuse_fails_the_session_naming_the_path(
    frame: dict[str, Any], where: str,
) -> None:
    assert where in fail_with(started(FakeServer()), frame)


def test_an_event_or_a_member_the_protocol_does_not_have_fails_the_session_naming_it() -> None:
    # A newer server's: this client speaks protocol 1 as it is, and guesses at nothing.
    unknown_event = fail_with(started(FakeServer()), progress_frame(event="confetti"))
    assert "Invalid value 'confetti' - at `$.event`" in unknown_event
    unknown_member = fail_with(started(FakeServer()), progress_frame(mood="festive"))
    assert "Object contains unknown field `mood`" in unknown_member
    unknown_reply = fail_with(started(FakeServer()), {"type": "weather", "id": None})
    assert "Invalid value 'weather' - at `$.type`" in unknown_reply


def test_a_frame_that_is_not_json_fails_the_session() -> None:
    why = fail_with(started(FakeServer()), '{"type": "pong",')
    assert why.startswith("the server broke the protocol: a frame that is not JSON")


def test_a_message_is_decoded_into_its_type_and_a_null_is_taken_where_allowed() -> None:
    harness = started(FakeServer())
    waiting = harness.request(Ping())
    harness.session.receive(json.dumps({**joined_frame(), "id": waiting,
                                        "match": {**MATCH, "host_id": None}}), harness.now)
    harness.pump()
    [reply] = harness.answers(waiting)
    assert isinstance(reply, Reply) and isinstance(reply.message, r.Joined)
    assert reply.message.match.host_id is None and reply.message.players[0].name == "ana"


def test_a_probe_session_delivers_the_events_after_a_gap_as_they_came_without_a_resync(
) -> None:
    server = FakeServer()
    harness = started(server, fill_gaps=False)
    server.publish("first")
    server.publish("lost")
    server.publish("third")
    assert harness.wire is not None
    del harness.wire.to_client[-2]  # the server dropped it for a slow reader
    harness.settle()
    assert [event.name for event in harness.delivered(ProgressMade)] == ["first", "third"]
    assert [tag(r) for r in server.requests] == ["hello", "join_match", "tournament_join"]


def test_a_frame_may_come_as_bytes() -> None:
    harness = started(FakeServer())
    waiting = harness.request(Ping())
    pong = message(r.Pong, id=waiting, server_time=AT)
    harness.session.receive(encode(pong), harness.now)
    harness.pump()
    assert harness.answers(waiting) == [Reply(waiting, pong)]


def test_a_request_unanswered_in_time_says_so() -> None:
    harness = started(FakeServer(), request_timeout_s=15)
    waiting = harness.request(Ping())
    harness.wire.to_server.clear()  # type: ignore[union-attr]
    harness.advance(15)
    assert harness.answers(waiting) == [
        Unanswered(waiting, "the server did not answer ping within 15 s", lost=False)]


def test_closing_ends_what_waits_and_says_closed_once() -> None:
    harness = started(FakeServer())
    waiting = harness.request(Ping())
    harness.session.close(harness.now)
    harness.session.close(harness.now)
    harness.pump()
    assert harness.notices[-2:] == [
        Unanswered(waiting, "the connection is closed", lost=True), Closed()]
    harness.session.connection_lost(harness.now)
    harness.pump()
    assert harness.notices[-1] == Closed()


def test_a_late_listener_gets_the_match_replayed_from_its_snapshot() -> None:
    server = FakeServer()
    harness = started(server)
    server.publish("one")
    harness.settle()
    replayed = harness.session.delivered(match=CODE)
    assert isinstance(replayed[0], r.Joined)
    assert isinstance(replayed[-1], ProgressMade) and replayed[-1].name == "one"
    assert [n.message for n in harness.notices if isinstance(n, Snapshot)] == replayed[:1]


def test_the_session_writes_each_request_with_its_id_and_numbers_each_action() -> None:
    harness = started(FakeServer())
    ping = harness.request(Ping(id="ignored"))
    played = harness.act("3H")
    assert harness.wire is not None
    assert [json.loads(frame) for frame in harness.wire.to_server] == [
        {"type": "ping", "id": ping},
        {"type": "action", "id": played, "code": CODE, "seq": 1, "action": "3H"},
    ]


def seq_of(answers: list[Notice]) -> int:
    [answer] = answers
    assert isinstance(answer, Reply) and isinstance(answer.message, r.ActionOk)
    return answer.message.seq


def test_the_session_imports_no_io_and_nothing_of_the_server_or_the_client() -> None:
    forbidden = ("server", "client_cli", "asyncio", "websockets", "time", "socket")
    for module, path in modules("gaps_protocol"):
        bad = sorted(name for name in imported(path) if within(name, forbidden))
        assert not bad, f"{module} imports {bad}"
