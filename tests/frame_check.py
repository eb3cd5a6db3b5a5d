"""Every WebSocket frame a browser page sends and receives, checked against the published
protocol (docs/protocol/schema.json, ``gaps_protocol.schema``) and its message types: the
web client is held to the same contract as every other client."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

import jsonschema
import msgspec

from gaps_protocol import schema
from gaps_protocol.messages import decode_request, decode_server_message

Way = Literal["sent", "received"]


@cache
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    document = schema.json_schema()
    return jsonschema.Draft202012Validator(
        {"$ref": f"#/$defs/{definition}", "$defs": document["$defs"]}
    )


def mismatch(way: Way, frame: str | bytes) -> str | None:
    """What is wrong with ``frame`` (a page ``sent`` it, or ``received`` it) by the schema
    and by the types, if anything."""
    try:
        message = msgspec.json.decode(frame)
    except msgspec.DecodeError as error:
        return f"{way} a frame that is not JSON ({error}): {frame!r}"
    definition = "ClientMessage" if way == "sent" else "ServerMessage"
    errors = sorted(str(error.message) for error in _validator(definition).iter_errors(message))
    if errors:
        return f"{way} a frame the schema refuses ({errors[0]}): {frame!r}"
    try:
        (decode_request if way == "sent" else decode_server_message)(frame)
    except (msgspec.ValidationError, msgspec.DecodeError) as error:
        return f"{way} a frame the message types refuse ({error}): {frame!r}"
    return None


class FrameLog:
    """The mismatches of the frames of every page it ``watch``-es."""

    def __init__(self) -> None:
        self.mismatches: list[str] = []
        self.checked: dict[Way, int] = {"sent": 0, "received": 0}

    def watch(self, page: Any) -> None:
        page.on("websocket", self._socket)

    def _socket(self, socket: Any) -> None:
        socket.on("framesent", lambda frame: self._check("sent", frame))
        socket.on("framereceived", lambda frame: self._check("received", frame))

    def _check(self, way: Way, frame: str | bytes) -> None:
        self.checked[way] += 1
        wrong = mismatch(way, frame)
        if wrong is not None:
            self.mismatches.append(wrong)
