"""gaps_protocol.ClientSession without a socket or real time: a fake server core (a test
double of the server, as far as a client sees it) and a fake clock, over random drops,
duplicates, reorderings and reconnects."""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

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
    ProtocolViolation,
    Reconnect,
    Refused,
    Reply,
    Restored,
    Retrying,
    Snapshot,
    State,
    Unanswered,
    check_message,
)
from tests.test_layers import imported, modules, within

Message = dict[str, Any]
CODE = "K7QX2M"
CUP = "Q4M2ZK"
TOKEN = "t" * 43
URL = "ws://gaps.test"
PATIENT = 1e9  # no window runs out in the property test: only faults happen there


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
    protocol says (docs/protocol.md)."""

    def __init__(self) -> None:
        self.match_events: list[Message] = []
        self.tournament_events: list[Message] = []
        self.applied: list[str] = []
        self.last_seq = 0
        self.acks: dict[int, Message] = {}
        #: Requests of these kinds to refuse for now (``storage_unavailable``), one each.
        self.outages: list[str] = []
        self.wire: Wire | None = None
        self.requests: list[Message] = []

    def publish(self, what: str) -> None:
        event = {"type": "event", "match": CODE, "seq": len(self.match_events) + 1,
                 "event": "progress", "t_ms": 0, "what": what}
        self.match_events.append(event)
        if self.wire is not None and self.wire.watching:
            self.wire.to_client.append(json.dumps(event))

    def announce(self, what: str) -> None:
        event = {"type": "tournament_event", "tournament": CUP,
                 "seq": len(self.tournament_events) + 1, "event": "entrant_joined",
                 "name": what}
        self.tournament_events.append(event)
        if self.wire is not None and self.wire.following:
            self.wire.to_client.append(json.dumps(event))

    def handle(self, frame: str, wire: Wire) -> None:
        request = json.loads(frame)
        self.requests.append(request)
        kind = request["type"]
        reply = self._answer(request, wire)
        wire.to_client.append(json.dumps({**reply, "id": request["id"]}))
        if kind == "action" and reply["type"] == "action_ok" and not reply.get("duplicate"):
            self.publish(f"moved {request['action']}")

    def _answer(self, request: Message, wire: Wire) -> Message:
        kind = request["type"]
        if kind in self.outages:
            self.outages.remove(kind)
            return {"type": "error", "code": "storage_unavailable", "message": "not now"}
        if kind == "hello":
            return {"type": "welcome", "player": {"id": 7, "name": "me"}}
        if kind == "join_match":
            wire.watching = True
            return {"type": "joined", "seq": len(self.match_events),
                    "match": {"code": CODE, "status": "running"},
                    "you": {"role": "player", "last_seq": self.last_seq}}
        if kind == "resync":
            return {"type": "events", "match": CODE,
                    "events": self.match_events[request["since"]:]}
        if kind == "action":
            seq = request["seq"]
            if seq <= self.last_seq:
                return {**self.acks[seq], "duplicate": True}
            self.last_seq = seq
            self.applied.append(request["action"])
            ack = self.acks[seq] = {"type": "action_ok", "match": CODE, "seq": seq,
                                    "action": request["action"], "moves_made": len(self.applied)}
            return ack
        if kind in ("tournament_join", "tournament_resync"):
            wire.following = True
            if kind == "tournament_resync":
                return {"type": "tournament_events", "tournament": CUP,
                        "events": self.tournament_events[request["since"]:]}
            return {"type": "tournament", "tournament": {"code": CUP},
                    "seq": len(self.tournament_events)}
        return {"type": "pong"}


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

    def request(self, kind: str, **fields: Any) -> int:
        request_id = self.session.request(kind, fields, self.now)
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

    def delivered(self, kind: str) -> list[Message]:
        return [notice.message for notice in self.notices
                if isinstance(notice, Event) and notice.message["type"] == kind]


def started(server: FakeServer, **options: Any) -> Harness:
    """Signed in, in the match and in the tournament."""
    harness = Harness(server, **options)
    for kind, fields in (("hello", {"token": TOKEN}), ("join_match", {"code": CODE}),
                         ("tournament_join", {"code": CUP})):
        request_id = harness.request(kind, **fields)
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
               if isinstance(notice, Reply) and notice.message["type"] == "action_ok"]
    assert [reply["action"] for reply in replies] == issued  # each acknowledged once
    assert [reply["seq"] for reply in replies] == sorted({reply["seq"] for reply in replies})

    events = harness.delivered("event")
    assert [event["seq"] for event in events] == list(range(2, len(server.match_events) + 1))
    assert events == server.match_events[1:]  # as published: the first was in the snapshot
    announced = harness.delivered("tournament_event")
    assert announced == server.tournament_events[1:]  # the join's reply reflects the first
    assert not any(isinstance(notice, Failed | Gone | Refused | Unanswered)
                   for notice in harness.notices)
    lost = sum(isinstance(notice, Lost) for notice in harness.notices)
    assert sum(isinstance(notice, Restored) for notice in harness.notices) == lost


# -- one behaviour at a time ---------------------------------------------------------------------

def test_a_reply_answers_its_request_and_a_refusal_names_its_code() -> None:
    harness = started(FakeServer())
    ping = harness.request("ping")
    harness.settle()
    harness.server.outages.append("ping")
    refused = harness.request("ping")
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
    sent = [(r["seq"], r["action"]) for r in harness.server.requests if r["type"] == "action"]
    assert sent == [(1, "3H")] * 3
    [retrying] = [notice for notice in harness.notices if isinstance(notice, Retrying)]
    assert retrying.code == "storage_unavailable" and retrying.request_id == played
    assert retrying.detail.startswith("the server refused action for now (not now)")
    assert harness.now == pytest.approx(0.2 + 0.4)  # the pauses: 0.2 s, then twice that
    [reply] = harness.answers(played)
    assert isinstance(reply, Reply) and reply.message["seq"] == 1


def test_an_action_still_refused_when_its_window_ends_is_refused() -> None:
    harness = started(FakeServer(), reconnect_for_s=0.5)
    harness.server.outages += ["action"] * 5
    played = harness.act("3H")
    harness.settle()
    [refusal] = harness.answers(played)
    assert isinstance(refusal, Refused) and refusal.code == "storage_unavailable"
    assert len([r for r in harness.server.requests if r["type"] == "action"]) == 2


def test_actions_of_a_match_go_one_at_a_time_each_with_the_next_seq() -> None:
    harness = started(FakeServer())
    first, second = harness.act("3H"), harness.act("2C>4")
    assert [json.loads(f)["seq"] for f in harness.wire.to_server] == [1]  # type: ignore[union-attr]
    harness.settle()
    assert [harness.answers(i)[0].message["seq"] for i in (first, second)] == [1, 2]  # type: ignore[union-attr]
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
    assert isinstance(reply, Reply) and reply.message["duplicate"] is True
    ahead = harness.session.act(CODE, "QH", harness.now, seq=5)
    then = harness.act("KH")
    harness.settle()
    assert [r["seq"] for r in server.requests if r["type"] == "action"] == [1, 1, 5, 6]
    assert [harness.answers(i)[0].message["seq"] for i in (first, ahead, then)] == [1, 5, 6]  # type: ignore[union-attr]


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
    assert isinstance(reply, Reply) and reply.message["duplicate"] is True
    kinds = [r["type"] for r in server.requests]
    assert kinds[-6:] == ["action", "hello", "join_match", "resync", "tournament_resync",
                          "action"]
    assert isinstance(harness.notices[-1], Reply)  # the resend goes once restored
    assert any(isinstance(notice, Restored) for notice in harness.notices)


def test_a_request_not_safe_to_repeat_is_unanswered_when_the_connection_drops() -> None:
    harness = started(FakeServer())
    created = harness.request("create_match")
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
    assert [r["type"] for r in server.requests].count("hello") == 3  # first, refused, back
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
    assert [event["what"] for event in harness.delivered("event")][-1:] == ["new"]


def test_a_match_whose_rejoin_is_refused_is_gone_and_the_session_goes_on() -> None:
    server = FakeServer()
    harness = started(server)
    answer = server._answer

    def no_match(request: Message, wire: Wire) -> Message:
        if request["type"] == "join_match":
            return {"type": "error", "code": "no_such_match",
                    "message": f"no live match has code '{CODE}'"}
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
        {"type": "error", "code": "bad_token", "message": "no such token"}
        if request["type"] == "hello" else answer(request, wire))
    harness.cut()
    harness.settle()
    assert harness.notices[-1] == Failed("the server refused the reconnect: no such token")


def test_a_count_that_is_not_a_whole_number_fails_the_session_naming_the_field() -> None:
    harness = started(FakeServer())
    waiting = harness.request("ping")
    harness.session.receive(json.dumps({"type": "event", "match": CODE, "seq": "2",
                                        "event": "progress"}), harness.now)
    harness.pump()
    why = "the server broke the protocol: in a 'event' message, seq is '2', not a whole number"
    assert harness.session.failure == why
    assert harness.notices[-3:] == [Unanswered(waiting, why, lost=True),
                                    Disconnect(1002, "protocol error"), Failed(why)]
    later = harness.request("ping")
    assert harness.answers(later) == [Unanswered(later, why, lost=True)]
    harness.session.receive(json.dumps({"type": "pong", "id": waiting}), harness.now)
    assert harness.session.events() == []  # nothing more is read


def test_a_nested_count_is_named_by_its_path() -> None:
    harness = started(FakeServer())
    harness.session.receive(json.dumps({
        "type": "tournament_event", "tournament": CUP, "seq": 2, "event": "round_ended",
        "standings": [{"rank": 1.5}]}), harness.now)
    harness.pump()
    assert str(harness.session.failure).endswith("standings[0].rank is 1.5, not a whole number")


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
    assert [event["what"] for event in harness.delivered("event")] == ["first", "third"]
    assert [r["type"] for r in server.requests] == ["hello", "join_match", "tournament_join"]


def test_a_frame_may_come_as_bytes() -> None:
    harness = started(FakeServer())
    waiting = harness.request("ping")
    harness.session.receive(json.dumps({"type": "pong", "id": waiting}).encode(), harness.now)
    harness.pump()
    assert harness.answers(waiting) == [Reply(waiting, {"type": "pong", "id": waiting})]


def test_a_bool_or_a_float_is_no_count_and_a_null_rank_is_no_rank() -> None:
    for message, where in (
        ({"type": "action_ok", "id": 1, "seq": 1, "score": True}, "score is True"),
        ({"type": "joined", "you": {"game": {"moves_made": 1.0}}}, "you.game.moves_made is 1.0"),
        ({"type": "board", "entries": [[{"wins": "3"}]]}, "entries[0][0].wins is '3'"),
    ):
        with pytest.raises(ProtocolViolation, match=re.escape(where)):
            check_message(message)
    check_message({"type": "board", "entries": [{"rank": None, "score": 1.5}]})
    check_message({"type": "event", "you": {"score": 1.5}})  # a score only shown


def test_a_request_unanswered_in_time_says_so() -> None:
    harness = started(FakeServer(), request_timeout_s=15)
    waiting = harness.request("ping")
    harness.wire.to_server.clear()  # type: ignore[union-attr]
    harness.advance(15)
    assert harness.answers(waiting) == [
        Unanswered(waiting, "the server did not answer ping within 15 s", lost=False)]


def test_closing_ends_what_waits_and_says_closed_once() -> None:
    harness = started(FakeServer())
    waiting = harness.request("ping")
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
    assert replayed[0]["type"] == "joined" and replayed[-1]["what"] == "one"
    assert [n.message for n in harness.notices if isinstance(n, Snapshot)] == replayed[:1]


def test_the_session_imports_no_io_and_nothing_of_the_server_or_the_client() -> None:
    forbidden = ("server", "client_cli", "asyncio", "websockets", "time", "socket")
    for module, path in modules("gaps_protocol"):
        bad = sorted(name for name in imported(path) if within(name, forbidden))
        assert not bad, f"{module} imports {bad}"
