"""A small test client: requests with ids, replies matched to them, events collected.

It is a probe of the server, not a client to rely on: it hands a test every message as
the server sent it, parsed from its JSON (ids and times as written), keeps every pushed
message as it came (no reordering, no resync: a test sees what the server sent) and lets
a test send any frame. Its requests and actions go through the session every client
shares (``gaps_protocol.ClientSession``, opened without reconnect, retry or resync) as
the protocol's typed requests (``gaps_protocol.messages.requests``: the kind names the
type, the fields are its members, which may be set to values the types refuse, to see
the server refuse them).

Every frame is held against the published message types (``gaps_protocol.messages``,
whose schema is docs/protocol/schema.json): the session decodes each frame received
strictly, and one it refuses fails the requests waiting with the frame and the path of
what is wrong. Each frame sent is decoded as a client message: one the types refuse must
be refused by the server as malformed (``MALFORMED``), and one they take must not be
refused as unreadable (``bad_json``, ``unknown_type``)."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, MutableMapping
from typing import Any, Final, get_args

import jsonschema
import msgspec
from websockets.asyncio.client import ClientConnection, connect

from gaps_protocol import (
    ClientSession,
    Notice,
    NotInMatch,
    Refused,
    Reply,
    State,
    Unanswered,
    schema,
)
from gaps_protocol.messages import ClientMessage, decode_request
from gaps_protocol.messages.requests import Play

# Messages the server sends unasked; ``event(name)`` finds them (``matched`` by its type).
PUSHED = ("event", "tournament_event", "matched")
#: How long a reply may take, s; a request that may wait for the solver to prove a deal
#: winnable (the day's first ``daily``) may take longer on a busy machine.
REPLY_TIMEOUT_S = 10.0
SOLVING_TIMEOUT_S = 60.0
SOLVING = frozenset({"daily", "tournament_create"})
#: The refusals of a request that is not what the message types say.
MALFORMED = frozenset({"bad_json", "bad_message", "unknown_type", "bad_name", "bad_token"})
#: The refusals of a frame the server could not read as a request at all.
UNREADABLE = frozenset({"bad_json", "unknown_type"})
#: Each request's type, by its ``type``.
REQUESTS: Final[dict[str, type[ClientMessage]]] = {
    str(kind.__struct_config__.tag): kind for kind in get_args(ClientMessage)}


class SchemaMismatch(AssertionError):
    """A frame and the published message types disagree."""


def check_reply_to(frame: str, reply: dict[str, Any]) -> None:
    """Raise ``SchemaMismatch`` if the server's ``reply`` to ``frame`` disagrees with what
    the message types say of ``frame``."""
    code = reply.get("code") if reply.get("type") == "error" else None
    try:
        decode_request(frame)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        if code not in MALFORMED:
            raise SchemaMismatch(f"the schema refuses a request ({error}) the server took "
                                 f"({reply!r}): {frame!r}") from None
        return
    if code in UNREADABLE:
        raise SchemaMismatch(f"the server refused a request the schema takes ({reply!r}): "
                             f"{frame!r}")


def _peer(connection: ClientConnection) -> str:
    """The server's URL, as far as the handshake tells."""
    request = connection.request
    if request is None:
        return "the server"
    return f"ws://{request.headers.get('Host', 'localhost')}{request.path}"


class Seqs(MutableMapping[str, int]):
    """The last action ``seq`` a client numbered, by match: a view of its session's
    (``gaps_protocol.MatchTrack.next_seq``), which a test may set (after a rejoin, say)."""

    def __init__(self, session: ClientSession) -> None:
        self._tracks = session.tracks

    def __getitem__(self, code: str) -> int:
        return self._tracks[code].next_seq - 1

    def __setitem__(self, code: str, seq: int) -> None:
        if code not in self._tracks:
            raise NotInMatch(code)
        self._tracks[code].next_seq = seq + 1

    def __delitem__(self, code: str) -> None:
        self[code] = 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._tracks)

    def __len__(self) -> int:
        return len(self._tracks)


class Client:
    """One connection. Its requests go through the client session every client shares
    (``gaps_protocol.ClientSession``: it numbers them and matches their replies, numbers
    the actions of each match, and decodes every frame strictly), opened as a
    probe: no reconnect, no retry of a refusal for now, no resync over a gap. Frames sent
    with ``send_raw`` bypass it (their replies are matched by the ``id`` given); every
    pushed message is kept in ``events`` as it came."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.events: list[dict[str, Any]] = []
        # Its timer is never run: each request waits for its reply as long as the test
        # says. The session is not told when the connection ends (the reader fails what
        # waits): a request after that goes to the socket anyway, whose ``send`` says so.
        self.session = ClientSession(
            _peer(connection), reconnect=False, reconnect_for_s=0,
            request_timeout_s=SOLVING_TIMEOUT_S, fill_gaps=False)
        self.session.connection_made(time.monotonic())
        #: The waiters of the frames sent with ``send_raw``, by the ``id`` of their reply.
        self._replies: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        #: The waiters of the session's requests, and the frame each was sent as.
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._sent: dict[int, str] = {}
        #: How many requests the types could not build went as written (their ids).
        self._unbuilt = 0
        self._event_arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())
        self.seq = Seqs(self.session)  # the last seq numbered per match
        self.token: str | None = None
        self.player_id: int | None = None

    @classmethod
    async def connect(cls, url: str) -> Client:
        return cls(await connect(url))

    async def _read(self) -> None:
        violation: SchemaMismatch | None = None
        try:
            async for frame in self.connection:
                self.session.receive(frame, time.monotonic())
                notices = self.session.events()
                if self.session.state is State.FAILED:
                    violation = SchemaMismatch(self.session.failure)
                    raise violation
                # The test sees the frame as sent; the session has read it as its type.
                message = json.loads(frame)
                self._answer(notices, message)
                if message.get("type") in PUSHED:
                    message.setdefault("event", message["type"])
                    async with self._event_arrived:
                        self.events.append(message)
                        self._event_arrived.notify_all()
                elif message.get("id") in self._replies:
                    waiter = self._replies.pop(message["id"])
                    if not waiter.done():
                        waiter.set_result(message)
        finally:
            # No reply comes once the connection is closed: a request waiting for one
            # fails now, instead of at its timeout.
            self._fail_waiting(violation)

    def _answer(self, notices: list[Notice], frame: dict[str, Any] | None = None) -> None:
        """Hand the session's answers to the requests waiting for them: a reply as
        ``frame``, the message just received it was read from."""
        for notice in notices:
            if isinstance(notice, Reply | Refused | Unanswered):
                waiter = self._answers.pop(notice.request_id, None)
                if waiter is None or waiter.done():
                    continue
                if isinstance(notice, Unanswered):
                    waiter.set_exception(ConnectionError(notice.reason))
                else:
                    assert frame is not None, notice  # a reply comes in a frame
                    waiter.set_result(frame)

    def _fail_waiting(self, violation: SchemaMismatch | None = None) -> None:
        waiting = [*self._replies.values(), *self._answers.values()]
        self._replies, self._answers = {}, {}
        for waiter in waiting:
            if not waiter.done():
                waiter.set_exception(violation or ConnectionError(
                    "the connection closed before the reply"))

    async def send_raw(
        self, frame: str, reply_id: Any, *, timeout_s: float = REPLY_TIMEOUT_S
    ) -> dict[str, Any]:
        """Send ``frame`` as it is, past the session; the reply carrying ``reply_id``."""
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[reply_id] = waiter
        await self._send(frame)
        reply = await asyncio.wait_for(waiter, timeout_s)
        check_reply_to(frame, reply)
        return reply

    async def _send(self, frame: str) -> None:
        await self.connection.send(frame)
        if self._reader.done():  # closed: no reply will come
            self._fail_waiting()

    async def _exchange(self, request_id: int, timeout_s: float) -> dict[str, Any]:
        """Send what the session has to send, and wait for its answer to ``request_id``."""
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = waiter
        self._answer(self.session.events())  # answered at once: the session is closed
        for frame in self.session.frames_to_send():
            self._sent[json.loads(frame)["id"]] = frame
            await self._send(frame)
        try:
            reply = await asyncio.wait_for(waiter, timeout_s)
        finally:
            self._answers.pop(request_id, None)
        check_reply_to(self._sent.pop(request_id), reply)
        return reply

    async def request(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        """Request ``kind`` with ``fields``: the reply, an ``error`` too. A request the
        types cannot even build (a member missing, one they do not have, a type that is
        none of theirs) goes as written, past the session, with an id of its own, to see
        what the server says."""
        timeout_s = SOLVING_TIMEOUT_S if kind in SOLVING else REPLY_TIMEOUT_S
        try:
            message = REQUESTS[kind](**fields)
        except (KeyError, TypeError):
            self._unbuilt += 1
            reply_id = f"unbuilt-{self._unbuilt}"
            frame = json.dumps({"type": kind, "id": reply_id, **fields})
            return await self.send_raw(frame, reply_id, timeout_s=timeout_s)
        return await self._exchange(self.session.request(message, time.monotonic()), timeout_s)

    async def ok(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        """A request that must not fail."""
        reply = await self.request(kind, **fields)
        assert reply["type"] != "error", reply
        return reply

    async def register(self, name: str, *, bot: bool = False) -> dict[str, Any]:
        """Register as ``name``, a declared ``bot`` or a person."""
        reply = await self.ok("register", name=name, **({"bot": True} if bot else {}))
        self.token = reply["token"]
        self.player_id = reply["player"]["id"]
        return reply

    async def act(self, code: str, action: str, *, seq: int | None = None) -> dict[str, Any]:
        """Play ``action`` in match ``code``, numbered by the session (or ``seq``): the
        reply, an ``error`` too. In a match the session does not follow (never joined on
        this connection), it goes as a plain request with ``seq`` (1 if not given), to
        see what the server says."""
        now = time.monotonic()
        if code in self.session.tracks:
            request_id = self.session.act(code, action, now, seq=seq)
        else:
            request_id = self.session.request(
                Play(code=code, seq=1 if seq is None else seq, action=action), now)
        return await self._exchange(request_id, REPLY_TIMEOUT_S)

    async def event(self, name: str, *, timeout: float = 10, **where: Any) -> dict[str, Any]:
        """The first event called ``name`` (matching ``where``) received so far or next."""

        def found() -> dict[str, Any] | None:
            for event in self.events:
                if event["event"] == name and all(event.get(k) == v for k, v in where.items()):
                    return event
            return None

        async with self._event_arrived:
            await asyncio.wait_for(self._event_arrived.wait_for(found), timeout)
        result = found()
        assert result is not None
        return result

    async def close(self) -> None:
        self.session.close(time.monotonic())
        await self.connection.close()
        self._reader.cancel()
        try:
            await self._reader
        except (asyncio.CancelledError, Exception):
            pass
_OPENAPI = schema.openapi()
#: Each documented path of the HTTP reads, as a pattern of the paths it stands for.
_ROUTES = [
    (re.compile("^" + re.sub(r"\\\{[a-z]+\\\}", "[^/]+", re.escape(template)) + "$"), template)
    for template in _OPENAPI["paths"]
]


def check_http_body(path: str, status: int, body: Any) -> None:
    """Raise ``SchemaMismatch`` unless ``body`` is what docs/protocol/openapi.json says
    ``GET path`` answers with ``status`` (an undocumented path: an error)."""
    route = path.partition("?")[0].rstrip("/") or "/"
    template = next((t for pattern, t in _ROUTES if pattern.match(route)), None)
    if template is None:
        expected: dict[str, Any] = {"$ref": "#/components/schemas/Error"}
    else:
        response = _OPENAPI["paths"][template]["get"]["responses"].get(str(status))
        if response is None:
            raise SchemaMismatch(f"GET {path}: status {status} is not documented for {template}")
        expected = response["content"]["application/json"]["schema"]
    validator = jsonschema.Draft202012Validator({**expected, "components": _OPENAPI["components"]})
    errors = sorted(validator.iter_errors(body), key=lambda error: list(error.absolute_path))
    if errors:
        where = "$" + "".join(f"[{p!r}]" for p in errors[0].absolute_path)
        raise SchemaMismatch(f"GET {path} ({status}): at {where}, {errors[0].message[:300]}")


async def http_get(port: int, path: str) -> tuple[int, Any]:
    """A plain HTTP GET on the server's port: the status and the JSON body (of an error
    too), which must be what the OpenAPI document says (``check_http_body``)."""

    def fetch() -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    status, body = await asyncio.to_thread(fetch)
    check_http_body(path, status, body)
    return status, body
