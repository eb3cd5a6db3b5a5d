"""Plain HTTP on the WebSocket's port: health checks, the web client's files and the
read-only JSON resources (docs/protocol.md, HTTP); and ``/metrics`` on a listener of its
own (docs/operations.md, Metrics).

``Http.respond`` is websockets' ``process_request``: it answers every request that is
not a WebSocket upgrade, and refuses an upgrade from an address with too many
connections open. ``MetricsHttp.respond`` answers every request of the metrics listener.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import parse_qs

import msgspec
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from gaps_protocol import schema
from gaps_protocol.messages import requests
from gaps_protocol.messages.common import Message
from server import protocol, web
from server.config import Settings
from server.errors import ServerError
from server.exports import csv_text, file_name
from server.forwarded import client_address
from server.metrics import CONTENT_TYPE, Metrics
from server.protocol import error_message
from server.ratelimit import Budgets
from server.reads import Reads
from server.refusals import rate_limited

_STATUS: Final = {
    "rate_limited": HTTPStatus.TOO_MANY_REQUESTS,
    "no_such_match": HTTPStatus.NOT_FOUND,
    "no_such_player": HTTPStatus.NOT_FOUND,
    "no_such_tournament": HTTPStatus.NOT_FOUND,
    "no_such_resource": HTTPStatus.NOT_FOUND,
    "not_finished": HTTPStatus.CONFLICT,
}

# Query values are text; the protocol's fields of these names are integers.
_INTEGER_QUERY_FIELDS: Final = frozenset({"limit"})

#: ``readiness()``: the names of the parts the server needs that do not answer now.
Readiness = Callable[[], Awaitable[list[str]]]

#: A tournament's export file: ``standings.csv``, ``rounds.json``, ``rounds/2.csv``...
_EXPORT_FILE: Final = re.compile(r"(standings|rounds)\.(csv|json)")
_ROUND_FILE: Final = re.compile(r"([1-9][0-9]{0,2})\.(csv|json)")
_TYPES: Final = {
    "csv": "text/csv; charset=utf-8; header=present",
    "json": "application/json; charset=utf-8",
    "ics": "text/calendar; charset=utf-8",
}


@functools.cache
def published_documents() -> dict[str, bytes]:
    """The protocol's published documents (docs/protocol/) by path, as served: static,
    so made once a process (a tenth of a second: most of a server's start) and served
    like the web client's files. Bytes: nothing can change them in place."""
    return {
        schema.PATH_PREFIX + name: schema.render(document).encode()
        for name, document in schema.documents().items()
    }


@dataclass(frozen=True)
class FileBody:
    """A resource served as a file to save: its text, its type (a suffix of ``_TYPES``)
    and the name to save it under."""

    text: str
    kind: str
    name: str


class Http:
    def __init__(
        self,
        *,
        settings: Settings,
        reads: Reads,
        readiness: Readiness,
        costly_by_address: Budgets[str],
        connections_by_address: Counter[str],
        metrics: Metrics,
    ) -> None:
        self._metrics = metrics
        self._settings = settings
        self._limits = settings.limits
        self._reads = reads
        self._readiness = readiness
        self._costly_by_address = costly_by_address
        self._connections_by_address = connections_by_address
        self._documents = published_documents()

    async def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        address = address_of(connection, self._settings)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if self._connections_by_address[address] >= self._limits.max_connections_per_ip:
                self._metrics.limited("connections_per_address")
                return json_response(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    error_message(
                        ServerError(
                            "rate_limited",
                            f"{address} already has {self._limits.max_connections_per_ip} "
                            "connections open: close one first",
                        )
                    ),
                )
            return None
        if request.method != "GET":
            return method_not_allowed(request.method)
        path, _, query_text = request.path.partition("?")
        match path.rstrip("/"):
            case "/livez":
                return json_response(HTTPStatus.OK, {"status": "alive"})
            case "/healthz":
                failing = await self._readiness()
                if failing:
                    return json_response(
                        HTTPStatus.SERVICE_UNAVAILABLE,
                        {"status": "unavailable", "failing": failing},
                    )
                return json_response(HTTPStatus.OK, {"status": "ok"})
        document = self._documents.get(path)
        if document is not None:
            return json_bytes_response(HTTPStatus.OK, document)
        page = web.response(path, request.headers)  # the web client (docs/web.md)
        if page is not None:
            return page
        try:
            wait_s = self._costly_by_address.take(address)
            if wait_s:
                self._metrics.limited("costly_per_address")
                raise rate_limited(wait_s)
            resource = await self._resource(path, _query_fields(query_text))
            if isinstance(resource, FileBody):
                return file_response(resource)
            return json_response(HTTPStatus.OK, resource)
        except ServerError as error:
            response = json_response(
                _STATUS.get(error.code, HTTPStatus.BAD_REQUEST), error_message(error)
            )
            retry_after_ms = error.details.get("retry_after_ms")
            if isinstance(retry_after_ms, int):
                response.headers["Retry-After"] = str(-(-retry_after_ms // 1000))
            return response

    async def _resource(
        self, path: str, query: dict[str, Any]
    ) -> dict[str, Any] | Message | FileBody:
        """The read-only JSON resources and files (docs/protocol.md, HTTP)."""
        reads = self._reads
        parts = [part for part in path.split("/") if part]
        match parts:
            case ["matches"]:
                return {"matches": await reads.open_matches()}
            case ["matches", code, "replay"]:
                return await reads.replay(code)
            case ["leaderboards", ruleset]:
                fields = protocol.parse_request(
                    json.dumps({**query, "type": "leaderboard", "ruleset": ruleset})
                )
                assert isinstance(fields, requests.GetLeaderboard)
                around = await reads.player_id(query["player"]) if "player" in query else None
                return _body(await reads.leaderboard(
                    ruleset=protocol.ruleset_of(fields).name,
                    by=fields.by,
                    period=fields.period,
                    day=fields.day,
                    cursor=fields.cursor,
                    limit=fields.limit,
                    around_player=around,
                    kind=fields.kind,
                ))
            case ["keys"]:
                return await reads.signing_keys()
            case ["ratings", name]:
                return _body(await reads.rating(name))
            case ["tournaments"]:
                listing = protocol.parse_request(json.dumps({**query, "type": "tournament_list"}))
                assert isinstance(listing, requests.ListTournaments)
                return _body(await reads.tournaments(listing.status))
            case ["tournaments", name] if name.endswith(".ics"):
                code = name.removesuffix(".ics")
                return FileBody(await reads.tournament_calendar(code), "ics", f"{code.upper()}.ics")
            case ["tournaments", code]:
                return _body(await reads.tournament_standings(code))
            case ["tournaments", code, name] if (found := _EXPORT_FILE.fullmatch(name)):
                return await self._export(code, found.group(1), None, found.group(2))
            case ["tournaments", code, "rounds", name] if (found := _ROUND_FILE.fullmatch(name)):
                return await self._export(code, "rounds", int(found.group(1)), found.group(2))
            case ["daily", ruleset]:
                board = protocol.parse_request(
                    json.dumps({**query, "type": "daily_board", "ruleset": ruleset})
                )
                assert isinstance(board, requests.GetDailyBoard)
                return _body(await reads.daily_board(protocol.ruleset_of(board).name, board.day))
        raise ServerError("no_such_resource", f"no resource at /{'/'.join(parts)}")

    async def _export(self, code: str, export: str, number: int | None, kind: str) -> FileBody:
        document = await self._reads.tournament_export(code, export, number)
        text = csv_text(document) if kind == "csv" else json.dumps(document, indent=2) + "\n"
        return FileBody(text, kind, file_name(document["tournament"], export, number, kind))


class MetricsHttp:
    """The metrics listener: ``GET /metrics`` in the Prometheus text format, nothing else
    (no WebSocket, no player's resource). It is served on an address of its own so that
    only who can reach that address reads it."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    async def respond(self, connection: ServerConnection, request: Request) -> Response:
        path = request.path.partition("?")[0].rstrip("/")
        if path != "/metrics":
            return json_response(
                HTTPStatus.NOT_FOUND,
                error_message(
                    ServerError("no_such_resource", f"only /metrics is served here, not {path}")
                ),
            )
        if request.method != "GET":
            return method_not_allowed(request.method)
        body = self._metrics.exposition()
        headers = Headers(
            [
                ("Content-Type", CONTENT_TYPE),
                ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
                ("Connection", "close"),
            ]
        )
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)


def method_not_allowed(method: str) -> Response:
    """The answer to a request other than GET: only GET is served, on either port."""
    response = json_response(
        HTTPStatus.METHOD_NOT_ALLOWED,
        error_message(ServerError("method_not_allowed", f"{method}: only GET is served")),
    )
    response.headers["Allow"] = "GET"
    return response


def _query_fields(text: str) -> dict[str, Any]:
    """An HTTP query as protocol fields (the last value of a repeated name wins)."""
    fields: dict[str, Any] = {}
    for key, values in parse_qs(text).items():
        value = values[-1]
        fields[key] = int(value) if key in _INTEGER_QUERY_FIELDS and value.isdigit() else value
    return fields


def address_of(connection: ServerConnection, settings: Settings) -> str:
    """Whom limits per address count ``connection`` against: its peer, or behind a trusted
    load balancer the client the balancer forwards (server/forwarded.py)."""
    peer = connection.remote_address
    if not peer:
        return "unknown"
    request = connection.request
    forwarded = request.headers.get("X-Forwarded-For") if request is not None else None
    return client_address(str(peer[0]), forwarded, trusted=settings.trusted_proxies)


def file_response(body: FileBody) -> Response:
    """``body`` as a file to save (UTF-8), under its name."""
    data = body.text.encode()
    headers = Headers(
        [
            ("Content-Type", _TYPES[body.kind]),
            ("Content-Length", str(len(data))),
            ("Content-Disposition", f'attachment; filename="{body.name}"'),
            ("Connection", "close"),
        ]
    )
    return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, data)


def json_response(status: HTTPStatus, body: Mapping[str, Any] | Message) -> Response:
    """``body`` as JSON: a message (an error) as the WebSocket has it, a document (which
    may hold the protocol's views) as is."""
    if isinstance(body, Message):
        return json_bytes_response(status, protocol.encode(body).encode())
    return json_bytes_response(status, json.dumps(msgspec.to_builtins(body)).encode())


def _body(reply: Message) -> dict[str, Any]:
    """What HTTP serves of a reply the WebSocket sends too: its members but ``type`` and
    ``id`` (the OpenAPI document's ``...Body``)."""
    members: dict[str, Any] = msgspec.to_builtins(reply)
    del members["type"], members["id"]
    return members


def json_bytes_response(status: HTTPStatus, data: bytes) -> Response:
    """``data``, JSON in UTF-8, as the response's body."""
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Connection", "close"),
        ]
    )
    return Response(status.value, status.phrase, headers, data)
