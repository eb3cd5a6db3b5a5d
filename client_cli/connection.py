"""The protocol client: one WebSocket to the server, spoken as docs/protocol.md says.

* Requests carry an ``id``; each reply is matched to its request. An ``error`` reply
  raises ``ServerRefused`` with the server's ``code``, ``message`` and ``reason``.
* Events are handed to the listener in ``seq`` order, each once. When an event's ``seq``
  is not the one after the last seen, the client asks for the missing ones (``resync``)
  and holds newer events back until they can be delivered in order.
* When the connection drops, it reconnects by itself: a new socket, ``hello`` with the
  token, ``join_match`` for every match it was in (its snapshot goes to the listener),
  then ``resync`` from the last event seen. An action that was sent but not acknowledged
  is sent again with the same ``seq``: the server applies it at most once.
* A server restart (a deploy, a crash) is one of those drops. The restarted server numbers
  each match's events anew: a rejoin's snapshot whose ``seq`` is below the last event seen
  says so, and the count goes on from that snapshot. A refusal that means "not now"
  (``TRANSIENT_CODES``: the database or the broker is down, the server is shutting down,
  too many requests, a match not yet taken over after its server's crash) is tried again
  with a growing pause, for up to ``reconnect_for_s``: during a reconnect (the whole
  ``hello`` and rejoin again), and for requests that are safe to repeat (actions
  included: the server promises it applied none of them).
  A match the server no longer has (its rejoin is refused otherwise) is dropped, with a
  ``gone`` notice naming it and the server's reason.
* A message whose count (a ``seq``, ``round``, ``rank``, ``time_limit_s``...) is not a
  whole number breaks the protocol: the connection stops for good (``ProtocolError``'s
  message, naming the field, is its ``failure``), without a reconnect.

The listener receives plain dicts: every ``event``; every snapshot (the ``match_created``,
``joined``, ``snapshot``, ``daily_started`` and ``rematch`` replies, and the unasked
``matched`` of a quick match); every ``tournament_event`` of the tournaments followed (each once, in
order); and ``{"type": "connection", "state": ..., "detail": ...}`` notices, ``state``
being ``lost`` (reconnecting), ``restored``, ``retrying`` (a request refused for now goes
again), ``failed`` (for good: the connection gave up), ``closed``, or ``gone`` with the
``match`` (or ``tournament``) that could not be rejoined (followed) after a reconnect.

Tournament events are numbered too: a gap in their ``seq`` is filled with
``tournament_resync``, and after a reconnect each tournament entered is followed again
with ``tournament_resync`` from the last event seen, so the events of the drop are
delivered as if they had come live. When the server no longer has them all, its
snapshot ``{"type": "tournament", "tournament": view, "standings": [...], "seq": N}`` is
delivered instead, and the events after it follow.

A listener added late (after a join's reply) asks ``add_listener`` for a replay: of a
match, every snapshot and event delivered so far; of a tournament, every event (or
snapshot) delivered after the ``tournament_join`` reply, which reflects those before.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

log = logging.getLogger("gaps.client")
log.addHandler(logging.NullHandler())

Message = dict[str, Any]
Listener = Callable[[Message], None]

SNAPSHOT_TYPES: Final = frozenset(
    {"match_created", "joined", "snapshot", "daily_started", "matched", "rematch"}
)
REQUEST_TIMEOUT_S: Final = 15.0
#: How long the client keeps trying to reconnect (and to repeat a request refused for now)
#: before it gives up: long enough for a deploy that migrates the database.
RECONNECT_FOR_S: Final = 180.0
#: The first pause before a refused request (or a reconnect) is tried again; each pause
#: doubles, up to ``RETRY_MOST_S``.
RETRY_FIRST_S: Final = 0.2
RETRY_MOST_S: Final = 2.0
#: Refusals that mean "not now, nothing was changed": the same request may go again.
TRANSIENT_CODES: Final = frozenset(
    {
        "storage_unavailable",
        "broker_unavailable",
        "shutting_down",
        "rate_limited",
        "match_unavailable",
    }
)
#: The WebSocket close code of a server that stops (a deploy, a restart): "going away".
GOING_AWAY: Final = 1001
#: Messages of one match kept for late listeners.
MAX_DELIVERED: Final = 20_000
#: Fields the client counts with (``int``), wherever they come in a message: whole numbers.
WHOLE_NUMBERS: Final = frozenset({
    "seq", "last_seq", "player_id", "placed", "round", "rounds", "current_round",
    "rounds_played", "time_limit_s", "round_time_limit_s", "countdown_s", "countdown_ms",
    "t_ms", "spectators", "waiting", "wins", "games",
})
#: Whole numbers that may be null (a board's ``rank`` when you have no row).
WHOLE_OR_NULL: Final = frozenset({"rank"})
#: The counters of your own game (``action_ok`` and a snapshot's ``you.game``): whole numbers.
COUNTERS: Final = frozenset({"score", "placed", "redeals_used", "redeals_left", "moves_made"})


def check_message(message: Message) -> None:
    """Raise ``ProtocolError`` if a field the client counts with is not a whole number.

    What the client only shows (names, a player's score in the table) is shown as sent;
    what it counts with is checked here, once, so that a malformed message is a clear
    error naming the field rather than a crash wherever the number is used."""
    kind = str(message.get("type", "message"))
    _check_fields(message, kind, "", counters=kind == "action_ok")


def _check_fields(value: Any, kind: str, path: str, *, counters: bool) -> None:
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_fields(item, kind, f"{path}[{index}]", counters=False)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        whole = key in WHOLE_NUMBERS or (counters and key in COUNTERS) or (
            key in WHOLE_OR_NULL and item is not None)
        if whole and (not isinstance(item, int) or isinstance(item, bool)):
            shown = repr(item) if len(repr(item)) <= 40 else repr(item)[:37] + "..."
            raise ProtocolError(f"the server broke the protocol: in a {kind!r} message, "
                                f"{where} is {shown}, not a whole number")
        _check_fields(item, kind, where, counters=key == "game" and path == "you")


class ClientError(Exception):
    """Anything that went wrong talking to the server; the message is for people."""


class ConnectError(ClientError):
    """The server could not be reached."""


class ConnectionLost(ClientError):
    """The connection dropped before the reply came."""


class ProtocolError(ClientError):
    """The server sent what the protocol does not allow (a count that is not a number):
    the connection stops, its message names the field."""


class ServerRefused(ClientError):
    """The server answered a request with an ``error``."""

    def __init__(self, reply: Message) -> None:
        self.reply = reply
        self.code = str(reply.get("code", "error"))
        self.message = str(reply.get("message", self.code))
        self.reason: str | None = reply.get("reason")
        self.field: str | None = reply.get("field")
        super().__init__(self.message)

    @property
    def transient(self) -> bool:
        """Whether the refusal means "not now": the same request may go again later."""
        return self.code in TRANSIENT_CODES

    def pause_s(self, pause_s: float) -> float:
        """How long to wait before trying again: ``pause_s``, or longer if the server
        said how long (``retry_after_ms`` of ``rate_limited``)."""
        after_ms = self.reply.get("retry_after_ms")
        if isinstance(after_ms, int | float) and not isinstance(after_ms, bool):
            return max(pause_s, after_ms / 1000)
        return pause_s

    def __str__(self) -> str:
        if self.reason:
            return f"{self.message} ({self.reason})"
        return self.message


@dataclass
class EventTrack:
    """What the client remembers of one match's or tournament's numbered events to
    deliver them once each and in order, resyncing over a gap."""

    #: The request that fetches the events after a seq, and the type of its events reply.
    resync_request: ClassVar[str]
    events_reply: ClassVar[str]

    code: str
    last_event: int = 0
    resyncing: bool = False
    held: list[Message] = field(default_factory=list)
    #: What was delivered, for listeners that come late (``add_listener``'s replays).
    delivered: list[Message] = field(default_factory=list)

    def remember(self, message: Message) -> None:
        """Keep ``message``, delivered, for listeners that come late."""
        if len(self.delivered) >= MAX_DELIVERED:
            del self.delivered[1 : MAX_DELIVERED // 2]  # keep the first (a snapshot)
        self.delivered.append(message)


@dataclass
class MatchTrack(EventTrack):
    """What the client must remember about one match to resync and resend."""

    resync_request: ClassVar[str] = "resync"
    events_reply: ClassVar[str] = "events"

    role: str = "player"
    next_seq: int = 1
    unacked: tuple[int, str] | None = None
    rejoining: bool = False
    action_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class TournamentTrack(EventTrack):
    """What the client remembers about one tournament to deliver its events in order.

    Its ``delivered`` messages are those after the last ``tournament_join`` reply (or
    resync snapshot): what a follower that starts from that reply has not seen."""

    resync_request: ClassVar[str] = "tournament_resync"
    events_reply: ClassVar[str] = "tournament_events"

    def reflected(self, seq: int) -> None:
        """A reply reflects the events up to ``seq``: those are not news any more."""
        self.last_event = max(self.last_event, seq)
        self.delivered = [m for m in self.delivered if int(m.get("seq", 0)) > seq]


async def _open_socket(url: str, timeout: float) -> ClientConnection:
    try:
        return await connect(url, open_timeout=timeout, max_size=2**20, ping_interval=20)
    except InvalidURI:
        raise ConnectError(f"{url!r} is not a WebSocket URL") from None
    except InvalidHandshake as error:
        raise ConnectError(f"{url} did not accept a WebSocket ({error})") from None
    except TimeoutError:
        raise ConnectError(
            f"cannot reach the server at {url}: no answer in {timeout:g} s"
        ) from None
    except OSError as error:
        detail = error.strerror or str(error) or type(error).__name__
        raise ConnectError(f"cannot reach the server at {url}: {detail}") from None


class Connection:
    """A live connection to a Gaps Arena server. Use ``await Connection.open(url)``."""

    def __init__(
        self, url: str, *, token: str | None = None, reconnect: bool = True,
        reconnect_for_s: float = RECONNECT_FOR_S, timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.token = token
        self.player: Message | None = None
        self.reconnect = reconnect
        self.reconnect_for_s = reconnect_for_s
        self.timeout_s = timeout_s
        self.tracks: dict[str, MatchTrack] = {}
        #: Tournaments whose events come: the last event seq seen, events held back.
        self.tournaments: dict[str, TournamentTrack] = {}
        #: Tournaments entered with ``tournament_join``: followed again after a reconnect.
        self.entered: set[str] = set()
        #: The ruleset of the quick-match queue this connection waits in, if any.
        self.queued: str | None = None
        self._listeners: list[Listener] = []
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reconnector: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._connected = asyncio.Event()
        self._closing = False
        self._failed: str | None = None

    # -- opening and closing -----------------------------------------------------------

    @classmethod
    async def open(
        cls, url: str, *, token: str | None = None, reconnect: bool = True,
        open_timeout_s: float = 5.0, reconnect_for_s: float = RECONNECT_FOR_S,
    ) -> Connection:
        """Connect (and ``hello`` with ``token`` when one is given)."""
        connection = cls(url, token=token, reconnect=reconnect, reconnect_for_s=reconnect_for_s)
        connection._attach(await _open_socket(url, open_timeout_s))
        connection._connected.set()
        if token is not None:
            try:
                await connection.hello(token)
            except BaseException:
                await connection.close()
                raise
        return connection

    def _attach(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._reader = asyncio.create_task(self._read(socket))

    async def close(self) -> None:
        """Close for good: no reconnect; pending requests fail with ``ConnectionLost``."""
        self._closing = True
        tasks = [task for task in (self._reconnector, *self._tasks) if task is not None]
        for task in tasks:
            task.cancel()
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._socket.close(), 2)
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await self._reader
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self._fail_pending("the connection is closed")

    @property
    def failure(self) -> str | None:
        """Why the connection is gone for good (it gave up reconnecting), if it is."""
        return self._failed

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def add_listener(
        self, listener: Listener, *, replay: str | None = None,
        replay_tournament: str | None = None,
    ) -> None:
        """Hand ``listener`` every message from now on; with ``replay``, first every
        snapshot and event of that match delivered so far; with ``replay_tournament``,
        first every event of that tournament delivered since its ``tournament_join``
        reply. So nothing falls between a join's reply and a listener added after it."""
        track: EventTrack | None = None
        if replay is not None:
            track = self.tracks.get(replay)
        elif replay_tournament is not None:
            track = self.tournaments.get(replay_tournament)
        for message in list(track.delivered) if track is not None else []:
            listener(message)
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _notify(self, message: Message) -> None:
        for listener in list(self._listeners):
            try:
                listener(message)
            except Exception:  # a listener's bug must not stop the reader
                log.exception("listener failed")

    # -- requests ----------------------------------------------------------------------

    async def request(self, kind: str, *, retry: bool = False, **fields: Any) -> Message:
        """Send a request and return its reply; an ``error`` reply raises ``ServerRefused``.

        With ``retry`` (only for requests that are safe to repeat), a request cut by a
        dropped connection is sent again once the connection is back, and one refused for
        now (``TRANSIENT_CODES``) is sent again after a pause that grows from
        ``RETRY_FIRST_S`` to ``RETRY_MOST_S``, until ``reconnect_for_s`` has passed since
        the first such refusal: then that refusal is raised.
        """
        deadline: float | None = None
        pause_s = RETRY_FIRST_S
        while True:
            await self._wait_connected()
            try:
                return await self._request_now(kind, **fields)
            except ConnectionLost:
                if not retry or self._closing or not self.reconnect:
                    raise
            except ServerRefused as refusal:
                if not retry or not refusal.transient or self._closing:
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.reconnect_for_s
                    self._notify({
                        "type": "connection", "state": "retrying", "code": refusal.code,
                        "detail": f"the server refused {kind} for now ({refusal}): trying "
                                  f"again for up to {self.reconnect_for_s:g} s"})
                wait_s = refusal.pause_s(pause_s)
                if now + wait_s > deadline:
                    raise
                await asyncio.sleep(wait_s)
                pause_s = min(pause_s * 2, RETRY_MOST_S)

    async def _wait_connected(self) -> None:
        if self._failed is not None:
            raise ConnectionLost(self._failed)
        if self._connected.is_set():
            return
        if self._closing:
            raise ConnectionLost("the connection is closed")
        try:
            await asyncio.wait_for(self._connected.wait(), self.reconnect_for_s + self.timeout_s)
        except TimeoutError:
            raise ConnectionLost(f"lost the connection to {self.url}") from None
        if self._failed is not None:
            raise ConnectionLost(self._failed)

    async def _request_now(self, kind: str, **fields: Any) -> Message:
        socket = self._socket
        if socket is None or self._closing:
            raise ConnectionLost("the connection is closed")
        request_id = next(self._ids)
        waiter: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = waiter
        try:
            await socket.send(json.dumps({"type": kind, "id": request_id, **fields}))
            reply = await asyncio.wait_for(waiter, self.timeout_s)
        except ConnectionClosed:
            raise ConnectionLost(f"lost the connection to {self.url}") from None
        except TimeoutError:
            raise ClientError(
                f"the server did not answer {kind} within {self.timeout_s:g} s"
            ) from None
        finally:
            self._pending.pop(request_id, None)
        if reply.get("type") == "error":
            raise ServerRefused(reply)
        return reply

    def _fail_pending(self, why: str) -> None:
        for waiter in self._pending.values():
            if not waiter.done():
                waiter.set_exception(ConnectionLost(why))
        self._pending.clear()

    # -- the protocol's requests ---------------------------------------------------------

    async def hello(self, token: str) -> Message:
        reply = await self._request_now("hello", token=token)
        self.token = token
        self.player = reply.get("player")
        return reply

    async def register(self, name: str) -> Message:
        reply = await self._request_now("register", name=name)
        self.token = reply["token"]
        self.player = reply.get("player")
        return reply

    async def ping(self) -> tuple[float, str]:
        """The round trip in seconds, and the server's time."""
        started = time.monotonic()
        reply = await self.request("ping", retry=True)
        return time.monotonic() - started, str(reply.get("server_time"))

    async def create_match(self, **options: Any) -> Message:
        return await self.request("create_match", **options)

    async def list_matches(self) -> list[Message]:
        reply = await self.request("list_matches", retry=True)
        return list(reply.get("matches", []))

    async def join_match(self, code: str, role: str = "player") -> Message:
        return await self.request("join_match", code=code.upper(), role=role)

    async def rematch(self, code: str, *, same_seed: bool = False) -> Message:
        """A seat in the rematch of finished match ``code`` (the one offered, or a new one
        offered to the others): the ``rematch`` reply, shaped like ``joined``."""
        return await self.request("rematch", code=code.upper(), same_seed=same_seed)

    async def leave_match(self, code: str) -> Message:
        reply = await self.request("leave_match", code=code)
        self.tracks.pop(code, None)
        return reply

    async def ready(self, code: str, ready: bool = True) -> Message:
        return await self.request("ready", code=code, ready=ready)

    async def start_match(self, code: str) -> Message:
        return await self.request("start_match", code=code)

    def forget(self, code: str) -> None:
        """Stop tracking match ``code`` (a finished tournament round): no rejoin on a
        reconnect, no more of its messages kept."""
        self.tracks.pop(code.upper(), None)

    async def get_replay(self, code: str) -> Message:
        reply = await self.request("get_replay", code=code.upper(), retry=True)
        document: Message = reply["replay"]
        return document

    async def daily(self, ruleset: str) -> Message:
        """Deal today's challenge: the ``daily_started`` reply (shaped like ``joined``)."""
        return await self.request("daily", ruleset=ruleset)

    async def quick_match(self, ruleset: str) -> Message:
        """Wait in the quick-match queue: the ``queued`` reply. The match comes later,
        unasked, as a ``matched`` snapshot; a reconnect queues again."""
        reply = await self.request("quick_match", ruleset=ruleset)
        self.queued = ruleset
        return reply

    def quick_matched(self) -> asyncio.Future[Message]:
        """The ``matched`` snapshot the quick-match queue sends this connection, when it
        comes; fails with ``ClientError`` when the connection is lost for good. Cancel it
        to stop listening."""
        matched: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

        def listen(message: Message) -> None:
            if matched.done():
                return
            if message.get("type") == "matched":
                matched.set_result(message)
            elif message.get("type") == "connection" and message.get("state") == "failed":
                matched.set_exception(ClientError(str(message.get("detail"))))

        self.add_listener(listen)
        matched.add_done_callback(lambda _: self.remove_listener(listen))
        return matched

    async def quick_cancel(self) -> bool:
        """Leave the quick-match queue; whether we were in it."""
        self.queued = None
        reply = await self.request("quick_cancel")
        return bool(reply.get("cancelled"))

    async def tournament_create(self, **options: Any) -> Message:
        """Create a tournament (this connection then gets its events; the creator is not an
        entrant until ``tournament_join``)."""
        return await self.request("tournament_create", **options)

    async def tournament_join(self, code: str) -> Message:
        """Enter (or follow again) tournament ``code``; its events come from now on (those
        after the reply's ``seq``), and a reconnect follows it again."""
        reply = await self.request("tournament_join", code=code.upper())
        self.entered.add(str(reply["tournament"]["code"]))
        return reply

    async def tournament_start(self, code: str) -> Message:
        return await self.request("tournament_start", code=code.upper())

    async def act(self, code: str, action: str) -> Message:
        """Play ``action`` in match ``code``; returns the ``action_ok`` reply.

        Actions of one match go one at a time, each with the next ``seq``. If the
        connection drops before the reply (a server restart, say), the same action goes
        again with the same ``seq`` once reconnected: the server applies it at most once,
        and answers a resend of one it had applied with its original reply
        (``duplicate``). A refusal for now (``storage_unavailable``, ``shutting_down``...)
        is retried as ``request`` says: the server applied nothing.
        """
        track = self.tracks.get(code)
        if track is None:
            raise ClientError(f"not in match {code}: join it first")
        async with track.action_lock:
            seq = track.next_seq
            track.next_seq += 1
            track.unacked = (seq, action)
            try:
                return await self.request("action", retry=True, code=code, seq=seq,
                                          action=action)
            finally:
                track.unacked = None

    # -- reading -------------------------------------------------------------------------

    async def _read(self, socket: ClientConnection) -> None:
        try:
            async for frame in socket:
                try:
                    message = json.loads(frame)
                except (TypeError, ValueError):
                    log.warning("a frame that is not JSON: %.80r", frame)
                    continue
                if not isinstance(message, dict):
                    continue
                try:
                    check_message(message)
                except ProtocolError as error:  # stop: no reconnect to the same server
                    log.warning("%s", error)
                    self._failed = str(error)
                    with contextlib.suppress(Exception):
                        await socket.close(1002, "protocol error")
                    break
                if message.get("type") == "event":
                    self._on_event(message)
                elif message.get("type") == "tournament_event":
                    self._on_tournament_event(message)
                else:
                    self._on_reply(message)
        except ConnectionClosed:
            pass
        finally:
            if socket is self._socket:
                self._dropped(going_away=socket.close_code == GOING_AWAY)

    def _on_reply(self, message: Message) -> None:
        kind = message.get("type")
        if kind in SNAPSHOT_TYPES:
            if kind == "matched":
                self.queued = None
            self._on_snapshot(message)
        elif kind == "tournament" and isinstance(message.get("seq"), int):
            # A join's reply reflects the events up to its seq: those that follow it on
            # the wire (already sent when we subscribed) are not delivered again.
            track = self._tournament(str(message["tournament"]["code"]))
            track.reflected(int(message["seq"]))
        waiter = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if waiter is not None and not waiter.done():
            waiter.set_result(message)

    def _on_snapshot(self, message: Message) -> None:
        summary = message.get("match")
        if not isinstance(summary, dict) or not isinstance(summary.get("code"), str):
            return
        code = summary["code"]
        you = message.get("you") or {}
        track = self.tracks.get(code)
        if track is None:
            track = self.tracks[code] = MatchTrack(code, role=str(you.get("role", "player")))
        seq = int(message.get("seq", 0))
        if not track.rejoining or seq < track.last_event:
            # A rejoin keeps the last event seen: the resync that follows fills the gap.
            # Unless the server restarted: it numbers the events anew, so a rejoin's seq
            # below the last seen starts the count again from this snapshot.
            track.last_event = seq
        last_seq = you.get("last_seq")
        if isinstance(last_seq, int):
            track.next_seq = max(track.next_seq, last_seq + 1)
        self._deliver(track, message)

    def _on_event(self, event: Message) -> None:
        track = self.tracks.get(str(event.get("match")))
        if track is not None:
            self._on_numbered(track, event)

    def _tournament(self, code: str) -> TournamentTrack:
        track = self.tournaments.get(code)
        if track is None:
            track = self.tournaments[code] = TournamentTrack(code)
        return track

    def _on_tournament_event(self, event: Message) -> None:
        self._on_numbered(self._tournament(str(event.get("tournament"))), event)

    def _on_numbered(self, track: EventTrack, event: Message) -> None:
        seq = event.get("seq")
        if not isinstance(seq, int):
            return
        if track.resyncing:
            track.held.append(event)
        elif seq == track.last_event + 1:
            track.last_event = seq
            self._deliver(track, event)
        elif seq > track.last_event:  # a gap: fetch what is missing, hold this one back
            track.held.append(event)
            self._spawn(self._resync(track))
        # else: already seen, or reflected in a snapshot or a join's reply

    def _deliver(self, track: EventTrack, message: Message) -> None:
        track.remember(message)
        self._notify(message)

    def _deliver_held(self, track: EventTrack) -> bool:
        """Deliver held events that follow on; returns False if a gap remains."""
        held = sorted(track.held, key=lambda event: int(event["seq"]))
        track.held = []
        for index, event in enumerate(held):
            seq = int(event["seq"])
            if seq <= track.last_event:
                continue
            if seq != track.last_event + 1:
                track.held = held[index:]
                return False
            track.last_event = seq
            self._deliver(track, event)
        return True

    async def _resync(self, track: EventTrack, *, inline: bool = False) -> None:
        """Deliver the events after the last seen (and those held back) in order, or the
        server's snapshot when it no longer has them all."""
        if track.resyncing and not inline:
            return
        track.resyncing = True
        try:
            for _ in range(5):
                reply = await self._request_now(track.resync_request, code=track.code,
                                                since=track.last_event)
                if reply.get("type") == track.events_reply:
                    track.held.extend(reply.get("events", []))
                elif isinstance(track, TournamentTrack):  # its count starts again from here
                    track.last_event = int(reply.get("seq", 0))
                    track.delivered.clear()  # the snapshot tells all that went before
                    self._deliver(track, reply)
                # A match's ``snapshot`` reply was delivered by ``_on_snapshot`` already.
                if self._deliver_held(track):
                    return
        except ClientError as error:
            if inline:
                raise  # the reconnect that called us deals with it
            if not isinstance(error, ConnectionLost):  # a drop: the reconnect resyncs
                log.warning("resync of %s failed: %s", track.code, error)
        finally:
            track.resyncing = False

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- reconnecting --------------------------------------------------------------------

    def _dropped(self, *, going_away: bool = False) -> None:
        self._connected.clear()
        if self._failed is not None:  # the server broke the protocol
            self._fail_pending(self._failed)
            self._notify({"type": "connection", "state": "failed", "detail": self._failed})
            return
        self._fail_pending(f"lost the connection to {self.url}")
        if self._closing:
            self._notify({"type": "connection", "state": "closed", "detail": "closed"})
            return
        if not self.reconnect or self.token is None:
            self._failed = f"lost the connection to {self.url}"
            self._notify({"type": "connection", "state": "failed", "detail": self._failed})
            return
        if self._reconnector is not None and not self._reconnector.done():
            return  # the reconnect under way sees the drop and tries again
        why = ("the server is restarting" if going_away
               else f"lost the connection to {self.url}")
        self._notify({"type": "connection", "state": "lost", "detail": f"{why}; reconnecting"})
        self._reconnector = asyncio.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        """Open a new socket and restore on it, until that works or ``reconnect_for_s``
        has passed. A server that is down, or that refuses for now (it restarts, its
        database is not back yet), is tried again; any other refusal is final."""
        deadline = time.monotonic() + self.reconnect_for_s
        delay = 0.05
        last_error = "no attempt"
        while not self._closing:
            if time.monotonic() > deadline:
                self._failed = f"could not reconnect to {self.url}: {last_error}"
                self._notify({"type": "connection", "state": "failed", "detail": self._failed})
                self._connected.set()  # wake the waiters: they see ``_failed``
                return
            try:
                socket = await _open_socket(self.url, 5.0)
            except ConnectError as error:
                last_error = str(error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MOST_S)
                continue
            self._attach(socket)
            try:
                await self._restore()
            except ServerRefused as refusal:
                if refusal.transient:  # not now: this socket goes, a new one tries again
                    last_error = f"the server refused the reconnect for now: {refusal}"
                    with contextlib.suppress(Exception):
                        await socket.close()
                    left_s = max(0.0, deadline - time.monotonic())
                    await asyncio.sleep(min(refusal.pause_s(delay), left_s))
                    delay = min(delay * 2, RETRY_MOST_S)
                    continue
                self._failed = f"the server refused the reconnect: {refusal}"
                self._notify({"type": "connection", "state": "failed", "detail": self._failed})
                self._connected.set()
                return
            except ClientError as error:  # dropped again: try again
                last_error = str(error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MOST_S)
                continue
            self._notify({"type": "connection", "state": "restored",
                          "detail": f"reconnected to {self.url}"})
            self._connected.set()
            return

    async def _restore(self) -> None:
        """hello, join every match again and resync each from the last event seen, resync
        every tournament entered, queue again for a quick match. A refusal for now is
        raised (the reconnect tries again); a match whose rejoin is refused otherwise is
        gone: it is dropped, with a notice."""
        assert self.token is not None
        await self.hello(self.token)
        for track in list(self.tracks.values()):
            track.resyncing = track.rejoining = True
            # Events held back from before the drop come again with the resync (or, after
            # a restart, numbered anew): held ones of the old numbering would mislead.
            track.held = []
            try:
                await self._request_now("join_match", code=track.code, role=track.role)
            except ServerRefused as refusal:
                track.resyncing = False
                if refusal.transient:
                    raise
                self.tracks.pop(track.code, None)
                self._notify({"type": "connection", "state": "gone", "match": track.code,
                              "detail": f"cannot rejoin match {track.code}: {refusal}"})
                continue
            finally:
                track.rejoining = False
            await self._resync(track, inline=True)
        for code in sorted(self.entered):
            followed = self._tournament(code)
            followed.held = []  # what came before the drop comes again in the resync's reply
            try:
                await self._resync(followed, inline=True)
            except ServerRefused as refusal:
                if refusal.transient:
                    raise
                self.entered.discard(code)
                self._notify({"type": "connection", "state": "gone", "tournament": code,
                              "detail": f"cannot follow tournament {code} again: {refusal}"})
        if self.queued is not None:
            await self._request_now("quick_match", ruleset=self.queued)
