"""Plain HTTP GETs on the server's port: what anyone may read without an account.

The open matches, finished matches' replays, the leaderboards, a player's ratings, the
tournaments, their standings and exports, the daily challenge's board, and the keys the
server signs with (docs/protocol.md, HTTP).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urlencode

from client_cli.config import http_base
from client_cli.connection import ClientError, ConnectError


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


async def open_matches(server: str) -> list[dict[str, Any]]:
    body = await get_json(server, "/matches")
    return list(body.get("matches", [])) if isinstance(body, dict) else []


async def replay(server: str, code: str) -> dict[str, Any]:
    body = await get_json(server, f"/matches/{quote(code, safe='')}/replay")
    if not isinstance(body, dict):
        raise ClientError("the server's replay is not a JSON object")
    return body


def _object(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ClientError(f"the server's {what} is not a JSON object")
    return body


def _segment(text: str) -> str:
    return quote(text, safe="")


async def leaderboard(server: str, ruleset: str, **query: Any) -> dict[str, Any]:
    """A page of a board (``by``, ``period``, ``day``, ``limit``, ``cursor``), or the rows
    around a player (``player=NAME``); None values are left out."""
    fields = {key: value for key, value in query.items() if value is not None}
    path = f"/leaderboards/{_segment(ruleset)}"
    if fields:
        path += "?" + urlencode(fields)
    return _object(await get_json(server, path), "leaderboard")


async def rating(server: str, name: str) -> dict[str, Any]:
    return _object(await get_json(server, f"/ratings/{_segment(name)}"), "rating")


async def tournaments(server: str, status: str = "active") -> list[dict[str, Any]]:
    """The ``active`` tournaments (open and running), the ``ended`` ones, or ``all``."""
    path = "/tournaments" + (f"?{urlencode({'status': status})}" if status != "active" else "")
    body = _object(await get_json(server, path), "tournament list")
    return list(body.get("tournaments", []))


async def tournament_file(server: str, code: str, name: str, *, timeout: float = 30.0) -> bytes:
    """One of a tournament's files, as the server sent it: ``standings.csv``,
    ``rounds/2.json``, ``.ics`` (its calendar)..."""
    code = _segment(code.upper())
    path = f"/tournaments/{code}{name}" if name == ".ics" else f"/tournaments/{code}/{name}"
    body: bytes = await asyncio.to_thread(_get, http_base(server) + path, timeout, raw=True)
    return body


async def standings(server: str, code: str) -> dict[str, Any]:
    return _object(await get_json(server, f"/tournaments/{_segment(code.upper())}"),
                   "standings")


async def daily_board(server: str, ruleset: str, day: str | None = None) -> dict[str, Any]:
    path = f"/daily/{_segment(ruleset)}" + (f"?{urlencode({'day': day})}" if day else "")
    return _object(await get_json(server, path), "daily board")


async def signing_keys(server: str) -> dict[str, Any]:
    """The keys the server signs with, current and retired (``client_cli.signature``)."""
    return _object(await get_json(server, "/keys"), "list of keys")
