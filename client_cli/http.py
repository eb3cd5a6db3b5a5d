"""Plain HTTP GETs on the server's port: what anyone may read without an account.

The open matches, finished matches' replays, the leaderboards, a player's ratings, the
tournaments, their standings and exports, the daily challenge's board, and the keys the
server signs with (docs/protocol.md, HTTP). What the protocol types (every body but a
replay, kept as signed, and the keys) is read as its type, as strictly as a frame.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import msgspec

from client_cli.config import http_base
from client_cli.connection import ClientError, ConnectError, ProtocolError
from gaps_protocol.messages.common import Message
from gaps_protocol.messages.replies import (
    DailyBoard,
    Leaderboard,
    Rating,
    Standings,
    Tournaments,
)
from gaps_protocol.messages.views import MatchSummary, Replay, TournamentView


class NotFound(ClientError):
    """404: no such resource (for a replay: no match has that code)."""


class Conflict(ClientError):
    """409: not yet (for a replay: the match has not finished)."""


class BadRequest(ClientError):
    """400: the server refused the query (a bad cursor, day, ...); its message says why."""


def _get(url: str, timeout: float, *, raw: bool = False) -> Any:
    """The JSON body at ``url`` (``raw``: its bytes, as sent)."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
            return body if raw else json.loads(body.decode("utf-8"))
    except urllib.error.HTTPError as error:
        try:
            body = json.loads(error.read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            body = {}
        message = (body.get("message") or body.get("error") if isinstance(body, dict) else None)
        message = message or f"HTTP {error.code} {error.reason}"
        if error.code == 404:
            raise NotFound(message) from None
        if error.code == 409:
            raise Conflict(message) from None
        if error.code == 400:
            raise BadRequest(message) from None
        raise ClientError(f"{url}: {message}") from None
    except urllib.error.URLError as error:
        raise ConnectError(f"cannot reach the server at {url}: {error.reason}") from None
    except (TimeoutError, OSError) as error:
        raise ConnectError(f"cannot reach the server at {url}: {error}") from None
    except (ValueError, UnicodeDecodeError):
        raise ClientError(f"{url} did not answer JSON") from None


async def get_json(server: str, path: str, *, timeout: float = 10.0) -> Any:
    """GET ``path`` on the server's port (the server given as its ws:// URL)."""
    return await asyncio.to_thread(_get, http_base(server) + path, timeout)


class _OpenMatches(Message, frozen=True):
    """``/matches``: the open public matches."""

    matches: list[MatchSummary]


R = TypeVar("R", bound=Message)


def typed(kind: type[R], body: Any, what: str) -> R:
    """An HTTP body as the protocol's ``kind``: the members of the reply the WebSocket
    sends too (``type`` and ``id`` are left out over HTTP), read as strictly as a frame;
    a body that is not one is a ``ProtocolError`` naming what is wrong."""
    if not isinstance(body, dict):
        raise ProtocolError(f"the server's {what} is not a JSON object")
    fields = kind.__struct_fields__
    if "id" in fields:
        body = {**body, "id": None}
    tag = kind.__struct_config__.tag
    if isinstance(tag, str):
        body = {**body, "type": tag}
    try:
        return msgspec.convert(body, kind)
    except msgspec.ValidationError as error:
        raise ProtocolError(f"the server broke the protocol: in its {what}, {error}") from None


async def open_matches(server: str) -> list[MatchSummary]:
    return typed(_OpenMatches, await get_json(server, "/matches"), "list of matches").matches


async def replay(server: str, code: str) -> dict[str, Any]:
    """A finished match's replay, the signed document as published (``read_replay``
    reads it)."""
    body = await get_json(server, f"/matches/{quote(code, safe='')}/replay")
    if not isinstance(body, dict):
        raise ClientError("the server's replay is not a JSON object")
    return body


def read_replay(document: dict[str, Any]) -> Replay:
    """A replay document as the protocol types it."""
    return typed(Replay, document, "replay")


def _segment(text: str) -> str:
    return quote(text, safe="")


async def leaderboard(server: str, ruleset: str, **query: Any) -> Leaderboard:
    """A page of a board (``by``, ``period``, ``day``, ``limit``, ``cursor``), or the rows
    around a player (``player=NAME``); None values are left out."""
    fields = {key: value for key, value in query.items() if value is not None}
    path = f"/leaderboards/{_segment(ruleset)}"
    if fields:
        path += "?" + urlencode(fields)
    return typed(Leaderboard, await get_json(server, path), "leaderboard")


async def rating(server: str, name: str) -> Rating:
    return typed(Rating, await get_json(server, f"/ratings/{_segment(name)}"), "rating")


async def tournaments(server: str, status: str = "active") -> list[TournamentView]:
    """The ``active`` tournaments (open and running), the ``ended`` ones, or ``all``."""
    path = "/tournaments" + (f"?{urlencode({'status': status})}" if status != "active" else "")
    return typed(Tournaments, await get_json(server, path), "tournament list").tournaments


async def tournament_file(server: str, code: str, name: str, *, timeout: float = 30.0) -> bytes:
    """One of a tournament's files, as the server sent it: ``standings.csv``,
    ``rounds/2.json``, ``.ics`` (its calendar)..."""
    code = _segment(code.upper())
    path = f"/tournaments/{code}{name}" if name == ".ics" else f"/tournaments/{code}/{name}"
    body: bytes = await asyncio.to_thread(_get, http_base(server) + path, timeout, raw=True)
    return body


async def standings(server: str, code: str) -> Standings:
    return typed(Standings, await get_json(server, f"/tournaments/{_segment(code.upper())}"),
                 "standings")


async def daily_board(server: str, ruleset: str, day: str | None = None) -> DailyBoard:
    path = f"/daily/{_segment(ruleset)}" + (f"?{urlencode({'day': day})}" if day else "")
    return typed(DailyBoard, await get_json(server, path), "daily board")


async def signing_keys(server: str) -> dict[str, Any]:
    """The keys the server signs with, current and retired (``client_cli.signature``)."""
    body = await get_json(server, "/keys")
    if not isinstance(body, dict):
        raise ClientError("the server's list of keys is not a JSON object")
    return body
