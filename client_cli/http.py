"""Plain HTTP GETs on the server's port: the open matches and finished matches' replays."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from client_cli.config import http_base
from client_cli.connection import ClientError, ConnectError


class NotFound(ClientError):
    """404: no such resource (for a replay: no match has that code)."""


class Conflict(ClientError):
    """409: not yet (for a replay: the match has not finished)."""


def _get(url: str, timeout: float) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
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
    body = await get_json(server, f"/matches/{quote(code.strip().upper(), safe='')}/replay")
    if not isinstance(body, dict):
        raise ClientError("the server's replay is not a JSON object")
    return body
