"""A small test client: requests with ids, replies matched to them, events collected.

It is a probe of the server, not a client to rely on: it keeps every pushed message as it
came (no reordering, no resync: a test sees what the server sent) and lets a test send
any frame. What every client relies on, it checks in every frame it reads, as the
terminal client's session does (``gaps_protocol.check_message``): a count that is not a
whole number fails the requests waiting, naming the field.

Every frame is also held against the published message types (``gaps_protocol.messages``,
whose schema is docs/protocol/schema.json): each frame received must decode as a server
message, strictly, or the requests waiting fail with the frame and the path of what is
wrong. Each frame sent is decoded as a client message: one the types refuse must be
refused by the server as malformed (``MALFORMED``), and one they take must not be
refused as unreadable (``bad_json``, ``unknown_type``)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import urllib.error
import urllib.request
from typing import Any

import jsonschema
import msgspec
from websockets.asyncio.client import ClientConnection, connect

from gaps_protocol import ProtocolViolation, check_message, schema
from gaps_protocol.messages import decode_request, decode_server_message

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


class SchemaMismatch(AssertionError):
    """A frame and the published message types disagree."""


def check_received(frame: str | bytes) -> None:
    """Raise ``SchemaMismatch`` unless ``frame`` is a server message, strictly."""
    try:
        decode_server_message(frame)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        raise SchemaMismatch(f"the server sent what its schema refuses ({error}): {frame!r}"
                             ) from None


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


class Client:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.events: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._replies: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._event_arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())
        self.seq: dict[str, int] = {}  # the next action seq per match
        self.token: str | None = None
        self.player_id: int | None = None

    @classmethod
    async def connect(cls, url: str) -> Client:
        return cls(await connect(url))

    async def _read(self) -> None:
        violation: ProtocolViolation | SchemaMismatch | None = None
        try:
            async for frame in self.connection:
                message = json.loads(frame)
                if isinstance(message, dict):
                    try:
                        check_message(message)
                        check_received(frame)
                    except (ProtocolViolation, SchemaMismatch) as error:
                        violation = error
                        raise
                if message.get("type") in PUSHED:
                    message.setdefault("event", message["type"])
                    async with self._event_arrived:
                        self.events.append(message)
                        self._event_arrived.notify_all()
                else:
                    waiter = self._replies.pop(message.get("id"), None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(message)
        finally:
            # No reply comes once the connection is closed: a request waiting for one
            # fails now, instead of at its timeout.
            self._fail_waiting(violation)

    def _fail_waiting(self, violation: ProtocolViolation | SchemaMismatch | None = None) -> None:
        replies, self._replies = self._replies, {}
        for waiter in replies.values():
            if not waiter.done():
                waiter.set_exception(violation or ConnectionError(
                    "the connection closed before the reply"))

    async def send_raw(
        self, frame: str, reply_id: Any, *, timeout_s: float = REPLY_TIMEOUT_S
    ) -> dict[str, Any]:
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[reply_id] = waiter
        await self.connection.send(frame)
        if self._reader.done():  # closed: no reply will come
            self._fail_waiting()
        reply = await asyncio.wait_for(waiter, timeout_s)
        check_reply_to(frame, reply)
        return reply

    async def request(self, kind: str, /, **fields: Any) -> dict[str, Any]:
        request_id = next(self._ids)
        return await self.send_raw(
            json.dumps({"type": kind, "id": request_id, **fields}),
            request_id,
            timeout_s=SOLVING_TIMEOUT_S if kind in SOLVING else REPLY_TIMEOUT_S,
        )

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
        if seq is None:
            seq = self.seq.get(code, 0) + 1
        self.seq[code] = max(self.seq.get(code, 0), seq)
        return await self.request("action", code=code, seq=seq, action=action)

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
