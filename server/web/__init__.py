"""The web client's files, served by gaps-server on its own port (docs/web.md).

The front end is plain ES modules with no build step: this package only maps a request
path to one of its files. Every page of the single-page app (``/``, ``/m/CODE``, ...)
gets ``index.html``; ``app.js`` routes on the client. The JSON resources of
docs/protocol.md keep their paths: no page path starts like one of them.
"""

from __future__ import annotations

import hashlib
from functools import cache
from http import HTTPStatus
from pathlib import Path
from typing import Final

from websockets.datastructures import Headers
from websockets.http11 import Response

ROOT: Final = Path(__file__).resolve().parent

# The types of the files a browser may fetch under /web/: every module, the stylesheet
# and the icon shipped in this package (app.js imports the page modules by name).
TYPES: Final = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
ASSETS: Final = {
    path.name: TYPES[path.suffix] for path in sorted(ROOT.iterdir()) if path.suffix in TYPES
}
# The first segment of every client-side route, and how many segments follow it.
PAGES: Final = {
    "": 0,  # sign up, come back
    "lobby": 0,
    "m": 1,  # a match to race: /m/CODE
    "watch": 1,  # a spectator: /watch/CODE
    "replay": 1,  # /replay/CODE
    "t": 1,  # a tournament on a projector: /t/CODE
    "sheet": 2,  # a round's deal sheet for a table, printable: /sheet/CODE/N
    "boards": 0,  # leaderboards
    "player": 1,  # /player/NAME
    "today": 0,  # the daily challenge
    "practice": 0,
}
# No inline script or style, nothing from elsewhere; the WebSocket goes to this origin.
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@cache
def _file(name: str) -> tuple[bytes, str]:
    """The bytes of a shipped file and their entity tag (files change only on a deploy)."""
    data = (ROOT / name).read_bytes()
    return data, '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def page_file(path: str) -> tuple[str, str] | None:
    """The file (name, content type) that answers ``path``, or None if no page is there."""
    parts = path.split("/")[1:]
    if path == "/" or path == "":
        return "index.html", "text/html; charset=utf-8"
    if len(parts) == 2 and parts[0] == "web" and parts[1] in ASSETS:
        return parts[1], ASSETS[parts[1]]
    parts = [part for part in parts if part]
    if parts and PAGES.get(parts[0]) == len(parts) - 1:
        return "index.html", "text/html; charset=utf-8"
    return None


def response(path: str, headers: Headers) -> Response | None:
    """The answer to a GET of ``path``: a file with its headers, 304 when the browser's
    copy (``If-None-Match``) is current, or None when ``path`` is not the web client's."""
    found = page_file(path)
    if found is None:
        return None
    name, content_type = found
    data, etag = _file(name)
    fresh = headers.get("If-None-Match") == etag
    status = HTTPStatus.NOT_MODIFIED if fresh else HTTPStatus.OK
    body = b"" if fresh else data
    return Response(
        status.value,
        status.phrase,
        Headers(
            [
                ("Content-Type", content_type),
                ("Content-Length", str(len(body))),
                # Revalidate every time: a deploy must never leave an old app.js with a new
                # index.html; the ETag makes the revalidation cost a 304.
                ("Cache-Control", "no-cache"),
                ("ETag", etag),
                ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
                ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"),
                ("Connection", "close"),
            ]
        ),
        body,
    )
