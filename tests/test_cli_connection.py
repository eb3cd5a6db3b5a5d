"""client_cli.connection against a real server: replies, refusals, events in order,
resync after a gap, and a reconnect that resends the unacknowledged action."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from client_cli import connection as connection_module
from client_cli.connection import (
    ClientError,
    ConnectError,
    Connection,
    ConnectionLost,
    ConnectionNotice,
    Listened,
    ServerRefused,
)
from gaps_protocol.messages import MatchEvent, TournamentEvent
from gaps_protocol.messages.common import Player
from gaps_protocol.messages.events import (
    EntrantJoined,
    MatchEnded,
    ProgressMade,
    Started,
    event_name,
)
from gaps_protocol.messages.replies import ActionOk, Joined, Tournament
from gaps_protocol.messages.requests import Play
from tests.cli_support import ME, Hostile, lobby
from tests.client import Client

KNOWN_SEED = "AAAA-BBBB-CCCC-DDDD"  # 3H goes to r3c5, then 2C>4, 3C, ... (see test_match)

T = TypeVar("T")


class Recorder:
    """A listener that keeps every message and lets a test wait for one."""

    def __init__(self) -> None:
        self.messages: list[Listened] = []
        self._changed = asyncio.Condition()

    def __call__(self, message: Listened) -> None:
        self.messages.append(message)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def of(self, kind: type[T]) -> list[T]:
        """The messages of type ``kind``, in the order they came."""
        return [m for m in self.messages if isinstance(m, kind)]

    def events(self) -> list[MatchEvent]:
        return [m for m in self.messages if isinstance(m, MatchEvent)]

    def tournament_events(self) -> list[TournamentEvent]:
        return [m for m in self.messages if isinstance(m, TournamentEvent)]

    def notices(self, state: str | None = None) -> list[ConnectionNotice]:
        return [m for m in self.of(ConnectionNotice) if state is None or m.state == state]

    async def wait(self, found: Callable[[], Any], timeout: float = 10) -> Any:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(found), timeout)
        return found()


async def player(url: str, name: str) -> tuple[Connection, Recorder]:
    connection = await Connection.open(url)
    await connection.register(f"{name}-{random.randrange(10**6)}")
    recorder = Recorder()
    connection.add_listener(recorder)
    return connection, recorder


async def race(url: str) -> tuple[str, list[tuple[Connection, Recorder]]]:
    """ana and bob in a started match of the known seed."""
    ana, bob = await player(url, "ana"), await player(url, "bob")
    created = await ana[0].create_match(max_players=2, countdown_s=0, seed=KNOWN_SEED)
    code = created.match.code
    await bob[0].join_match(code)
    for connection, _ in (ana, bob):
        await connection.ready(code)
    for _, recorder in (ana, bob):
        await recorder.wait(lambda r=recorder: r.of(Started))
    return code, [ana, bob]


def event_seqs(recorder: Recorder) -> list[int]:
    return [m.seq for m in recorder.events()]


def network_down_until_set(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Keep the client's reconnects waiting until the returned event is set."""
    back = asyncio.Event()
    open_socket = connection_module._open_socket

    async def held_open(url: str, timeout: float) -> Any:
        await back.wait()  # the network stays down until the test says so
        return await open_socket(url, timeout)

    monkeypatch.setattr(connection_module, "_open_socket", held_open)
    return back


async def test_an_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(ConnectError, match="cannot reach the server at ws://127.0.0.1:9"):
        await Connection.open("ws://127.0.0.1:9", open_timeout_s=2)


async def test_replies_match_requests_and_refusals_carry_the_servers_reason(ws_url: str) -> None:
    code, [(ana, recorder), (bob, _)] = await race(ws_url)
    try:
        first, second = await asyncio.gather(ana.act(code, "3h"), ana.ping())
        assert isinstance(first, ActionOk) and first.to == "r3c5" and first.seq == 1
        assert second[0] >= 0
        with pytest.raises(ServerRefused) as refused:
            await ana.act(code, "5C")
        assert refused.value.code == "illegal_action" and refused.value.reason == "not_a_gap"
        assert "4C (r4c13) holds 8S" in str(refused.value)
        moved = await ana.act(code, "2C>4")
        assert moved.seq == 3 and moved.score == 1  # each action took the next seq
        with pytest.raises(ServerRefused) as unknown:
            await ana.join_match("ZZZZZZ")
        assert unknown.value.code == "no_such_match"
        with pytest.raises(ServerRefused) as again:
            await ana.hello("whatever")
        assert again.value.code == "already_authenticated"
    finally:
        await ana.close()
        await bob.close()
    with pytest.raises(ConnectionLost):  # closed for good: no reconnect
        await ana.ping()


async def test_events_arrive_once_each_in_order_and_a_gap_is_filled_by_resync(
    ws_url: str,
) -> None:
    code, [(ana, _), (bob, watcher)] = await race(ws_url)
    dropped: list[int] = []
    deliver = bob._on_frame

    def lossy(frame: str) -> None:  # lose bob's first progress event, as a slow reader would
        event = json.loads(frame)
        if event.get("event") == "progress" and not dropped:
            dropped.append(event["seq"])
            return
        deliver(frame)

    bob._on_frame = lossy  # type: ignore[method-assign]
    try:
        await ana.act(code, "3H")
        await ana.act(code, "2C>4")
        await ana.act(code, "stop")
        await bob.act(code, "stop")
        await watcher.wait(lambda: watcher.of(MatchEnded))
        seqs = event_seqs(watcher)
        assert dropped and dropped[0] in seqs  # the lost event came back through resync
        assert seqs == list(range(seqs[0], seqs[-1] + 1))  # each once, in order
        assert ana.player is not None
        progress = [e.moves_made for e in watcher.of(ProgressMade) if e.name == ana.player.name]
        assert progress == [1, 2, 2]
    finally:
        await ana.close()
        await bob.close()


async def test_a_dropped_connection_comes_back_and_the_unacknowledged_action_is_sent_once(
    ws_url: str,
) -> None:
    code, [(ana, recorder), (bob, _)] = await race(ws_url)
    await ana.act(code, "3H")
    take_frame = ana._on_frame
    dropped: list[dict[str, Any]] = []

    def drop_the_ack(frame: str) -> None:
        # The server applies 2C>4 but its reply is lost with the connection.
        message = json.loads(frame)
        if message.get("type") == "action_ok" and not dropped:
            dropped.append(message)
            assert ana._socket is not None
            ana._socket.transport.abort()
            return
        take_frame(frame)

    ana._on_frame = drop_the_ack  # type: ignore[method-assign]
    try:
        resent = await ana.act(code, "2C>4")
        ana._on_frame = take_frame  # type: ignore[method-assign]
        assert dropped and dropped[0]["seq"] == 2
        assert resent.duplicate is True and resent.seq == 2 and resent.moves_made == 2
        await bob.act(code, "QH")  # while ana reconnects or after: she sees it either way
        going_on = await ana.act(code, "3C")
        assert going_on.seq == 3 and going_on.moves_made == 3 and going_on.score == 2
        states = [m.state for m in recorder.notices()]
        assert states[:2] == ["lost", "restored"]
        assert recorder.of(Joined)  # the rejoin snapshot
        bob_name = bob.player.name if bob.player else None
        await recorder.wait(lambda: any(
            e.name == bob_name for e in recorder.of(ProgressMade)))
        seqs = event_seqs(recorder)
        assert seqs == list(range(seqs[0], seqs[-1] + 1))
    finally:
        await ana.close()
        await bob.close()


async def test_events_missed_while_away_are_delivered_after_the_reconnect(
    ws_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, [(ana, recorder), (bob, _)] = await race(ws_url)
    back = network_down_until_set(monkeypatch)
    try:
        assert ana._socket is not None
        ana._socket.transport.abort()
        await recorder.wait(lambda: recorder.notices("lost"))
        await bob.act(code, "QH")
        await bob.act(code, "stop")  # ana misses both events
        stopping = asyncio.create_task(ana.act(code, "stop"))  # waits for the reconnect
        back.set()
        assert (await stopping).status == "stopped"
        await recorder.wait(lambda: recorder.of(MatchEnded))
        names = [event_name(e) for e in recorder.events()]
        assert names.count("player_finished") == 2 and names.count("match_ended") == 1
        seqs = event_seqs(recorder)
        assert seqs == list(range(seqs[0], seqs[-1] + 1))
    finally:
        await ana.close()
        await bob.close()


async def test_tournament_events_come_once_and_a_reconnect_follows_again_and_requeues(
    server: Any, ws_url: str,
) -> None:
    """Events the join's reply already reflects are not delivered again; after a drop the
    connection follows its tournaments again (nothing was missed: no snapshot comes to
    the listener) and goes back into the quick-match queue."""
    (ana, recorder), (bob, _) = await player(ws_url, "ana"), await player(ws_url, "bob")
    try:
        created = await ana.tournament_create(name="Cup", rounds=1)
        code = created.tournament.code
        assert code not in ana.entered  # the host organises; entering is a join
        joined = await ana.tournament_join(code)
        assert joined.seq == 1 and ana.entered == {code}
        await bob.tournament_join(code)
        await recorder.wait(lambda: recorder.tournament_events())
        events = recorder.tournament_events()
        assert [(e.seq, type(e), getattr(e, "name", None)) for e in events] == [
            (2, EntrantJoined, bob.player and bob.player.name)]  # not ana's own (1)

        queued = await ana.quick_match("spaces")
        assert queued.ruleset == "spaces" and ana.queued == "spaces"
        assert ana._socket is not None
        ana._socket.transport.abort()
        await recorder.wait(lambda: recorder.notices("restored"))
        assert not recorder.of(Tournament)
        assert server.matchmaker is not None
        queue = server.matchmaker.state.waiting("spaces")
        assert ana.player is not None and [w.player_id for w in queue] == [ana.player.id]
        assert await ana.quick_cancel() is True and ana.queued is None

        carol = await Connection.open(ws_url)
        await carol.register(f"carol-{random.randrange(10**6)}")
        await carol.tournament_join(code)
        await carol.close()
        await recorder.wait(lambda: len(recorder.tournament_events()) == 2)
        assert tournament_seqs(recorder) == [2, 3]
    finally:
        await ana.close()
        await bob.close()


def tournament_seqs(recorder: Recorder) -> list[int]:
    return [m.seq for m in recorder.tournament_events()]


async def enter(url: str, prefix: str, code: str) -> None:
    """A player on a connection of their own (the server's test client, not the one under
    test) enters tournament ``code`` and leaves."""
    client = await Client.connect(url)
    await client.register(f"{prefix}-{random.randrange(10**6)}")
    await client.ok("tournament_join", code=code)
    await client.close()


async def test_a_gap_in_tournament_events_is_filled_by_tournament_resync(ws_url: str) -> None:
    ana, recorder = await player(ws_url, "ana")
    dropped: list[int] = []
    take = ana._on_frame

    def lossy(frame: str) -> None:  # lose the first tournament event after the join
        event = json.loads(frame)
        if event.get("type") == "tournament_event" and not dropped:
            dropped.append(event["seq"])
            return
        take(frame)

    try:
        code = (await ana.tournament_create(rounds=1)).tournament.code
        assert (await ana.tournament_join(code)).seq == 1
        ana._on_frame = lossy  # type: ignore[method-assign]
        await enter(ws_url, "bob", code)  # seq 2: lost
        await enter(ws_url, "cid", code)  # seq 3: a gap, so ana asks for 2 again
        await recorder.wait(lambda: tournament_seqs(recorder) == [2, 3])
        assert dropped == [2]
        events = recorder.of(EntrantJoined)
        assert [e.name.split("-")[0] for e in events] == ["bob", "cid"]
        assert ana.tournaments[code].last_event == 3 and not ana.tournaments[code].held
    finally:
        await ana.close()


async def test_tournament_events_missed_while_away_are_delivered_after_the_reconnect(
    ws_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana, recorder = await player(ws_url, "ana")
    back = network_down_until_set(monkeypatch)
    try:
        code = (await ana.tournament_create(rounds=1)).tournament.code
        await ana.tournament_join(code)
        assert ana._socket is not None
        ana._socket.transport.abort()
        await recorder.wait(lambda: recorder.notices("lost"))
        await enter(ws_url, "bob", code)
        await enter(ws_url, "cid", code)  # ana misses both
        back.set()
        await recorder.wait(lambda: tournament_seqs(recorder) == [2, 3])
        await enter(ws_url, "dan", code)  # and she follows the tournament again
        await recorder.wait(lambda: tournament_seqs(recorder) == [2, 3, 4])
        assert not recorder.of(Tournament)
    finally:
        await ana.close()


async def test_a_listener_added_after_the_join_gets_the_tournament_events_that_followed_it(
    ws_url: str,
) -> None:
    """The events after the ``tournament_join`` reply are replayed to a late listener;
    those the reply reflects (even if delivered before it, to the host) are not."""
    ana, recorder = await player(ws_url, "ana")
    try:
        code = (await ana.tournament_create(rounds=1)).tournament.code
        await enter(ws_url, "bob", code)  # seq 1: the host hears it
        await recorder.wait(lambda: tournament_seqs(recorder) == [1])
        assert (await ana.tournament_join(code)).seq == 2
        await enter(ws_url, "cid", code)  # seq 3: after the reply
        await recorder.wait(lambda: tournament_seqs(recorder) == [1, 3])
        late = Recorder()
        ana.add_listener(late, replay_tournament=code)
        assert tournament_seqs(late) == [3]
        await enter(ws_url, "dan", code)  # and the live ones follow
        await late.wait(lambda: tournament_seqs(late) == [3, 4])
        assert [e.name.split("-")[0] for e in late.of(EntrantJoined)] == ["cid", "dan"]
        assert len(late.messages) == 2
    finally:
        await ana.close()


@pytest.mark.max_history_events(1)
async def test_a_tournament_resync_further_back_than_the_history_delivers_the_snapshot(
    ws_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps one event: after a drop that missed two, the listener gets the
    snapshot (view, standings, seq), then the events after it as they come."""
    ana, recorder = await player(ws_url, "ana")
    back = network_down_until_set(monkeypatch)
    try:
        code = (await ana.tournament_create(rounds=1)).tournament.code
        await ana.tournament_join(code)
        assert ana._socket is not None
        ana._socket.transport.abort()
        await recorder.wait(lambda: recorder.notices("lost"))
        await enter(ws_url, "bob", code)
        await enter(ws_url, "cid", code)
        back.set()
        snapshots = await recorder.wait(lambda: recorder.of(Tournament))
        [snapshot] = snapshots
        assert snapshot.seq == 3 and snapshot.tournament.code == code
        assert isinstance(snapshot.standings, list)
        assert len(snapshot.tournament.entrants) == len(snapshot.standings) == 3
        assert tournament_seqs(recorder) == []  # the snapshot stands for events 2 and 3
        await enter(ws_url, "dan", code)
        await recorder.wait(lambda: tournament_seqs(recorder) == [4])
    finally:
        await ana.close()


async def test_a_malformed_number_stops_the_connection_with_the_field_named() -> None:
    """A ``tournament_event`` whose ``round`` is no number: the listener is told the
    connection failed, and why; it does not reconnect, and requests say why too."""
    view = {"code": "Q4M2ZK", "name": "Cup", "rounds": 2, "status": "running"}
    bad = {"type": "tournament_event", "tournament": "Q4M2ZK", "seq": 1, "event": "round_ended",
           "round": "2nd", "standings": []}
    async with Hostile({"tournament_join": [{"type": "tournament", "tournament": view,
                                             "seq": 0}, bad]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43)
        recorder = Recorder()
        connection.add_listener(recorder)
        try:
            assert connection.player == Player(**ME)
            await connection.tournament_join("Q4M2ZK")
            [failed] = await recorder.wait(lambda: recorder.notices("failed"))
            why = ("the server broke the protocol: in a 'tournament_event round_ended' message, "
                   "Expected `int`, got `str` - at `$.round`: ")
            assert failed.detail.startswith(why) and connection.failure == failed.detail
            assert '"round": "2nd"' in failed.detail  # the frame quoted
            assert not recorder.tournament_events()
            with pytest.raises(ConnectionLost, match=re.escape("at `$.round`")):
                await connection.ping()
            assert [r["type"] for r in hostile.requests] == ["hello", "tournament_join"]
        finally:
            await connection.close()



# -- a server that restarts, or refuses for now ------------------------------------------------

def refused(code: str, **fields: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": f"not now ({code})", **fields}


def notices(recorder: Recorder) -> list[str]:
    return [m.state for m in recorder.notices()]


async def test_an_action_refused_for_now_goes_again_with_its_seq_until_it_is_taken() -> None:
    taken = {"type": "action_ok", "match": "K7QX2M", "seq": 1, "score": 0, "placed": 0,
             "redeals_used": 0, "redeals_left": 2, "moves_made": 1, "status": "playing"}
    async with Hostile({"join_match": [lobby("K7QX2M")], "action": [taken]}, once={"action": [
            refused("storage_unavailable"), refused("shutting_down"),
            refused("rate_limited", retry_after_ms=10)]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=10)
        recorder = Recorder()
        connection.add_listener(recorder)
        try:
            await connection.join_match("K7QX2M")
            assert (await connection.act("K7QX2M", "3H")).moves_made == 1
            assert [(r["seq"], r["action"]) for r in hostile.sent("action")] == [(1, "3H")] * 4
            [retrying] = recorder.notices()
            assert retrying.state == "retrying" and retrying.code == "storage_unavailable"
            assert "the server refused action for now (not now (storage_unavailable))" \
                in retrying.detail
        finally:
            await connection.close()


async def test_an_action_still_refused_for_now_after_the_window_is_raised() -> None:
    async with Hostile({"join_match": [lobby("K7QX2M")],
                        "action": [refused("storage_unavailable")]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=0.5)
        try:
            await connection.join_match("K7QX2M")
            with pytest.raises(ServerRefused) as refusal:
                await asyncio.wait_for(connection.act("K7QX2M", "3H"), 5)
            assert refusal.value.code == "storage_unavailable" and refusal.value.transient
            assert 2 <= len(hostile.sent("action")) <= 3  # pauses 0.2 s, then 0.4 s: past 0.5
            with pytest.raises(ServerRefused, match="storage_unavailable"):
                await connection.request(Play(code="K7QX2M", seq=2, action="3H"))
        finally:
            await connection.close()


async def test_a_restarted_server_numbers_anew_and_the_count_follows_its_snapshot() -> None:
    """Before the restart the match was at event 40; the restarted server's rejoin snapshot
    is at 2: the resync asks from 2, and the events after it are delivered, in order."""
    code = "K7QX2M"

    def numbered(seq: int) -> dict[str, Any]:
        return {"type": "event", "match": code, "seq": seq, "event": "progress", "t_ms": seq,
                "player_id": 8, "name": "bob", "moves_made": seq}

    async with Hostile({"join_match": [lobby(code) | {"seq": 40}],
                        "resync": [{"type": "events", "match": code,
                                    "events": [numbered(3)]}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=10)
        recorder = Recorder()
        connection.add_listener(recorder)
        try:
            await connection.join_match(code)
            hostile.answers["join_match"] = [lobby(code) | {"seq": 2}]
            await hostile.drop(1001)
            await recorder.wait(lambda: "restored" in notices(recorder))
            await hostile.push(numbered(4))
            await recorder.wait(lambda: [4] == event_seqs(recorder)[-1:])
            assert [r["since"] for r in hostile.sent("resync")] == [2]
            assert event_seqs(recorder) == [3, 4] and connection.tracks[code].last_event == 4
            lost = recorder.notices("lost")[0]
            assert lost.detail == "the server is restarting; reconnecting"
        finally:
            await connection.close()


async def test_a_rejoin_refused_while_the_match_is_taken_over_tries_again_until_it_is_back(
) -> None:
    code = "K7QX2M"
    async with Hostile({"join_match": [lobby(code)],
                        "resync": [{"type": "events", "match": code, "events": []}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=10)
        recorder = Recorder()
        connection.add_listener(recorder)
        try:
            await connection.join_match(code)
            hostile.once["join_match"] = [refused("match_unavailable", retry_after_ms=50)]
            await hostile.drop(1001)
            await recorder.wait(lambda: "restored" in notices(recorder))
            assert notices(recorder) == ["lost", "restored"]  # never "gone"
            assert code in connection.tracks
            assert len(hostile.sent("join_match")) == 3  # the first, refused for now, back
        finally:
            await connection.close()


async def test_a_reconnect_refused_for_now_tries_again_and_a_match_not_taken_back_is_gone() -> None:
    code = "K7QX2M"
    async with Hostile({"join_match": [lobby(code)]}) as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=10)
        recorder = Recorder()
        connection.add_listener(recorder)
        try:
            await connection.join_match(code)
            hostile.once["hello"] = [refused("storage_unavailable")]
            hostile.answers["join_match"] = [{
                "type": "error", "code": "no_such_match",
                "message": f"no live match has code '{code}'"}]
            await hostile.drop(1001)
            await recorder.wait(lambda: "restored" in notices(recorder))
            assert notices(recorder) == ["lost", "gone", "restored"]
            assert len(hostile.sent("hello")) == 3  # the first, refused for now, welcomed
            [gone] = recorder.notices("gone")
            assert gone.match == code and gone.detail == \
                f"cannot rejoin match {code}: no live match has code '{code}'"
            assert code not in connection.tracks and connection.failure is None
            with pytest.raises(ClientError, match=f"not in match {code}: join it first"):
                await connection.act(code, "3H")
        finally:
            await connection.close()


async def test_a_reconnect_refused_for_good_fails_the_connection_with_the_reason() -> None:
    async with Hostile() as hostile:
        connection = await Connection.open(hostile.url, token="t" * 43, reconnect_for_s=10)
        recorder = Recorder()
        connection.add_listener(recorder)
        try:
            hostile.answers["hello"] = [refused("bad_token")]
            await hostile.drop(1001)
            await recorder.wait(lambda: "failed" in notices(recorder))
            assert connection.failure == "the server refused the reconnect: not now (bad_token)"
            assert len(hostile.sent("hello")) == 2
        finally:
            await connection.close()
