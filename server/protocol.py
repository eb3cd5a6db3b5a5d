"""The wire protocol on the server's side: one decoder of every client message into its
type of ``gaps_protocol.messages``, the engine's values a handler reads from one, and one
encoder of every frame out.

Pure: no I/O. docs/protocol.md is the contract this module implements; a test replays
the documented example session against the real server.

``parse_request`` first guards what a frame may be at all (its size, its nesting, UTF-8
text), then decodes it with msgspec straight into the request's Struct (the schema's
bounds and choices: a refusal names the field), then checks what a schema cannot say, in
one table per type (``_CHECKS``): every text by the one rule for text
(``gaps_protocol.text``), a code upper-cased, a ruleset, a share code and an action that
read as one, a start time in UTC. Only a refused frame is read a second time, to echo
its ``id`` and name what is wrong.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final, Protocol, TypeAlias, get_args

import msgspec
import msgspec.inspect as mi

from gaps import RULESETS, Action, GapsError, Ruleset, Seed, parse_action
from gaps_protocol.limits import MAX_DEPTH, MAX_FRAME_BYTES, MAX_TOKEN_LENGTH

# Re-exported for the connection's max_size (app.py, bench) and the welcome's version.
from gaps_protocol.limits import (
    MAX_READ_BYTES as MAX_READ_BYTES,
)
from gaps_protocol.limits import (
    PROTOCOL_VERSION as PROTOCOL_VERSION,
)
from gaps_protocol.messages import encode as encode_message
from gaps_protocol.messages.common import Message, RequestId
from gaps_protocol.messages.errors import Error
from gaps_protocol.messages.requests import REQUEST_TYPES as REQUEST_TYPES
from gaps_protocol.messages.requests import ClientMessage, CreateMatch, Play
from gaps_protocol.text import text_problem
from server.errors import ServerError

#: A client's request, as decoded: one of the types of ``gaps_protocol.messages.requests``.
Request: TypeAlias = ClientMessage


def parse_request(frame: str | bytes) -> Request:
    """Decode one client frame into its request, or raise ``ServerError`` (docs/protocol.md,
    Transport and Errors: ``bad_json``, ``bad_message`` naming the field, ``unknown_type``,
    ``bad_name``, ``bad_token``), with the request's ``id`` when it has a valid one."""
    text = _guarded(frame)
    try:
        request = _REQUESTS.decode(text)
    except msgspec.ValidationError as error:
        raise _refusal(text, error) from None
    except msgspec.DecodeError:
        raise _not_json(text) from None
    return _checked(request, text)


# -- the engine's values a handler reads from a request ---------------------------------


class _WithRuleset(Protocol):
    @property
    def ruleset(self) -> str: ...


def ruleset_of(request: _WithRuleset) -> Ruleset:
    """The ruleset ``request`` names (``parse_request`` refused any other name)."""
    return Ruleset.named(request.ruleset)


def action_of(play: Play) -> Action:
    """The action ``play`` carries (``parse_request`` refused any other text)."""
    return _parse_action(play.action)


def seed_of(request: CreateMatch) -> Seed | None:
    """The deal ``request`` asks for by its share code; None: a secret one."""
    return None if request.seed is None else Seed.parse(request.seed)


#: ``parse_action``, remembering the actions it parsed (values, shared safely): a game
#: uses a few thousand texts at most, and parsing one took about a third of a request's
#: parsing.
_parse_action: Final = functools.lru_cache(maxsize=4096)(parse_action)


# -- what a frame may be at all -----------------------------------------------------------


def _guarded(frame: str | bytes) -> str:
    """The frame's text, unless it is none a strict JSON reader takes (refused before
    decoding): a binary frame, one over ``MAX_FRAME_BYTES`` of UTF-8, one nesting deeper
    than ``MAX_DEPTH``."""
    if isinstance(frame, bytes):
        raise ServerError("bad_json", "frames are JSON text, not binary")
    try:
        too_long = len(frame) > MAX_FRAME_BYTES or len(frame.encode()) > MAX_FRAME_BYTES
    except UnicodeEncodeError:  # surrogates in the text itself: it did not come off a socket
        raise ServerError("bad_json", "a frame is UTF-8 text") from None
    if too_long:
        raise ServerError("bad_json", f"a frame is at most {MAX_FRAME_BYTES} bytes of UTF-8")
    if _nesting_depth(frame) > MAX_DEPTH:
        raise ServerError("bad_json", f"a frame nests arrays and objects at most {MAX_DEPTH} deep")
    return frame


_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


def _nesting_depth(frame: str) -> int:
    """How deeply the frame's arrays and objects nest (brackets in strings do not count)."""
    if frame.count("[") + frame.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for char in _STRING.sub("", frame):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _not_json(frame: str) -> ServerError:
    """The refusal of a frame msgspec does not read as JSON, saying why as the standard
    library would (it names the line and column)."""
    try:
        json.loads(frame, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        return ServerError("bad_json", f"not JSON: {error}"[:300])
    # What the standard library reads and msgspec does not: "\ud800" is valid JSON syntax
    # but no Unicode text, which no reply could echo as UTF-8.
    return ServerError("bad_json", "a frame's strings are Unicode text: no lone surrogates")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# -- the request's id ---------------------------------------------------------------------


class _Envelope(msgspec.Struct):
    """A refused frame's ``id`` and ``type`` as sent, to echo the one and name the other."""

    id: msgspec.Raw = msgspec.Raw(b"null")
    type: msgspec.Raw = msgspec.Raw(b"null")


_ENVELOPES: Final = msgspec.json.Decoder(_Envelope)
_IDS: Final = msgspec.json.Decoder(RequestId)


def _checked_id(request_id: Any, frame: str) -> None:
    """Refuse an ``id`` its type takes that is still not one to echo as sent: a text the
    rule refuses (a control character...), or a zero written ``-0``."""
    if isinstance(request_id, str):
        problem = text_problem(request_id)
        if problem is not None:
            raise _bad_id(f"{request_id!r} {problem}")
    elif request_id == 0 and bytes(_ENVELOPES.decode(frame).id) != b"0":
        raise _bad_id("-0 would come back as 0")


def _request_id(raw: msgspec.Raw, frame: str) -> Any:
    """The ``id`` of a refused frame, if it is one to echo; else its own refusal."""
    try:
        request_id = _IDS.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise _bad_id(f"got {bytes(raw)[:80].decode(errors='replace')}") from None
    _checked_id(request_id, frame)
    return request_id


def _bad_id(why: str) -> ServerError:
    return ServerError(
        "bad_message",
        "field 'id' must be null, an integer from -(2**53 - 1) to 2**53 - 1 written as one, "
        f"or a text of at most 64 characters by the rule for text: {why}"[:300],
        id=None,
        field="id",
    )


# -- what a schema cannot say, type by type -----------------------------------------------


class _Refused(Exception):
    """A field's value its check refuses; the message says why, after the field's name."""


#: A field's check: the value to keep (the value itself, or as the server holds it: a
#: code upper-cased, a time in UTC), or ``_Refused``.
Check = Callable[[Any], Any]


def _text(value: str) -> str:
    problem = text_problem(value)
    if problem is not None:
        raise _Refused(f"{value!r} {problem}"[:200])
    return value


def _whole(value: str) -> str:
    """A text its pattern matched whole: msgspec matches with ``re.search``, where ``$``
    also matches before a last line feed (``"ana\\n"`` would be a name)."""
    if value.endswith("\n"):
        raise _Refused(f"{value!r} ends with a line feed")
    return value


def _code(value: str) -> str:
    """A code in any case, as the server writes them: upper case."""
    upper = value.upper()
    return value if upper == value else upper


def _reading(read: Callable[[str], object]) -> Check:
    """A check that the text reads as the engine's value (``read`` raises ``GapsError``)."""

    def check(value: str) -> str:
        try:
            read(value)
        except GapsError as error:
            raise _Refused(str(error)[:200]) from None
        return value

    return check


def _start_at(value: datetime) -> datetime:
    """A start time in UTC, as stored (one without an offset is in UTC)."""
    try:
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    except (ValueError, OverflowError):  # near year 1 or 9999: no time in UTC
        raise _Refused(f"{value.isoformat()} is no time in UTC") from None


#: The checks of the fields of these names, wherever they are (after the text rule).
_READINGS: Final[dict[str, Check]] = {
    "code": _code,
    "ruleset": _reading(Ruleset.named),
    "seed": _reading(Seed.parse),
    "action": _reading(_parse_action),
    "start_at": _start_at,
}


def _is_free_text(info: mi.Type) -> bool:
    """Whether a field holds text a person chose: a string no pattern confines."""
    if isinstance(info, mi.UnionType):
        return any(_is_free_text(member) for member in info.types)
    return isinstance(info, mi.StrType) and info.pattern is None


def _is_patterned(info: mi.Type) -> bool:
    if isinstance(info, mi.UnionType):
        return any(_is_patterned(member) for member in info.types)
    return isinstance(info, mi.StrType) and info.pattern is not None


def _chain(first: Check, then: Check) -> Check:
    return lambda value: then(first(value))


def _checks_of(info: mi.StructType) -> tuple[tuple[str, Check], ...]:
    checks = []
    for field in info.fields:
        if field.name == "id":  # the id's own rule: _checked_id
            continue
        steps: list[Check] = (
            [_text] if _is_free_text(field.type) else [_whole] if _is_patterned(field.type) else []
        )
        if field.name in _READINGS:
            steps.append(_READINGS[field.name])
        if steps:
            check = steps[0] if len(steps) == 1 else _chain(steps[0], steps[1])
            checks.append((field.name, check))
    return tuple(checks)


_REQUEST_INFOS: Final = [
    info for info in mi.multi_type_info(get_args(ClientMessage))
    if isinstance(info, mi.StructType)
]
#: Each request type's checks after decoding: (field, check), in the fields' order.
_CHECKS: Final[dict[type, tuple[tuple[str, Check], ...]]] = {
    info.cls: _checks_of(info) for info in _REQUEST_INFOS
}
#: Each request type's ``type``, and each type by it.
_KINDS: Final[dict[type, str]] = {info.cls: str(info.tag) for info in _REQUEST_INFOS}
_TYPES: Final[dict[str, mi.StructType]] = {str(info.tag): info for info in _REQUEST_INFOS}

_REQUESTS: Final = msgspec.json.Decoder(ClientMessage)


def _checked(request: Request, frame: str) -> Request:
    """``request`` as the handlers take it, or the refusal of what its schema let by."""
    request_id = request.id
    if request_id is not None:
        _checked_id(request_id, frame)
    changes: dict[str, Any] | None = None
    for field, check in _CHECKS[type(request)]:
        value = getattr(request, field)
        if value is None:
            continue
        try:
            kept = check(value)
        except _Refused as refused:
            error = _field_error(_KINDS[type(request)], field, value, f": {refused}")
            error.details["id"] = request_id
            raise error from None
        if kept is not value:
            changes = {**(changes or {}), field: kept}
    return request if changes is None else msgspec.structs.replace(request, **changes)


# -- the refusal of a frame its type refuses ----------------------------------------------


def _refusal(frame: str, error: msgspec.ValidationError) -> ServerError:
    """What to answer a JSON frame that is no request: checked in the order a reader
    needs, the id first (every other refusal echoes it), then the type, then the field
    msgspec named."""
    try:
        envelope = _ENVELOPES.decode(frame)
    except msgspec.ValidationError:
        return ServerError("bad_json", "a frame is one JSON object")
    except msgspec.DecodeError:
        return _not_json(frame)
    try:
        request_id = _request_id(envelope.id, frame)
    except ServerError as bad_id:
        return bad_id
    refusal = _type_refusal(envelope.type, frame, error)
    refusal.details["id"] = request_id
    return refusal


def _type_refusal(raw_type: msgspec.Raw, frame: str, error: msgspec.ValidationError) -> ServerError:
    kind = msgspec.json.decode(raw_type)
    if not isinstance(kind, str):
        return ServerError("bad_message", "field 'type' must be a string", field="type")
    info = _TYPES.get(kind)
    if info is None:
        return ServerError("unknown_type", f"unknown message type {kind[:40]!r}")
    return _field_refusal(info, frame, error)


_AT_FIELD: Final = re.compile(r" - at `\$\.([A-Za-z0-9_]+)")
_MISSING: Final = re.compile(r"missing required field `([A-Za-z0-9_]+)`")


def _field_refusal(info: mi.StructType, frame: str, error: msgspec.ValidationError) -> ServerError:
    kind = str(info.tag)
    why = str(error)
    found = _AT_FIELD.search(why) or _MISSING.search(why)
    field = found.group(1) if found is not None else "type"
    got = _member(frame, field)
    shown = "nothing" if got is _MISSING_VALUE else repr(got)
    return _field_error(kind, field, got, f" must be {_expected(info, field)}, got {shown}")


def _field_error(kind: str, field: str, got: Any, why: str) -> ServerError:
    """The refusal of ``field`` of a ``kind`` request, which holds ``got``: ``bad_name``
    for a name to register and ``bad_token`` for a token that are text, else
    ``bad_message`` saying ``why`` after the field's name."""
    if kind == "register" and field == "name" and isinstance(got, str):
        return ServerError(
            "bad_name",
            f"{got[:40]!r}: a name is 2-24 letters, digits, '_', '-' or '.', starting with "
            "a letter or digit",
        )
    if kind == "hello" and field == "token" and isinstance(got, str):
        if 0 < len(got) <= MAX_TOKEN_LENGTH:
            return ServerError("bad_token", "a token is URL-safe text, as register gave it")
    return ServerError("bad_message", f"{kind}: field {field!r}{why}"[:300], field=field)


_MISSING_VALUE: Final = object()


def _member(frame: str, field: str) -> Any:
    """The value of ``field`` in a refused frame as sent (a number past a double's range
    as its text), or ``_MISSING_VALUE``."""
    members = msgspec.json.decode(frame, type=dict[str, msgspec.Raw])
    raw = members.get(field)
    if raw is None:
        return _MISSING_VALUE
    try:
        return msgspec.json.decode(raw)
    except msgspec.ValidationError:
        return bytes(raw).decode()


#: What the fields of these names must be, in words, wherever they are.
_EXPECTED_BY_NAME: Final = {
    "code": "a code of letters and digits, like K7QX2M",
    "ruleset": "a ruleset: " + ", ".join(RULESETS),
    "seed": "a share code like AAAA-BBBB-CCCC-DDDD",
    "action": "an action like 8C, 2H>3, 8C>r2c6, redeal, undo or stop",
    "token": "the token register gave, exactly",
}


def _expected(info: mi.StructType, field: str) -> str:
    """What ``field`` of the request ``info`` must be, in words."""
    found = next((f for f in info.fields if f.name == field), None)
    if found is None:
        return "absent"  # not reached: msgspec names only the fields it knows
    words = _EXPECTED_BY_NAME.get(field) or _described(found.type)
    return words if found.required or found.default is not None else f"{words} or null"


def _described(info: mi.Type) -> str:
    match info:
        case mi.UnionType(types=members):
            return " or ".join(
                _described(member) for member in members if not isinstance(member, mi.NoneType)
            )
        case mi.IntType(ge=low, le=high):
            return f"an integer from {low} to {high}"
        case mi.StrType(max_length=None):
            return "text"
        case mi.StrType(max_length=longest):
            return f"text of at most {longest} characters"
        case mi.BoolType():
            return "true or false"
        case mi.LiteralType(values=values):
            return "one of " + ", ".join(map(str, values))
        case mi.DateType():
            return "a date like 2026-11-29"
        case mi.DateTimeType():
            return "an RFC 3339 time like 2026-11-29T18:00:00Z"
    return str(info)


# -- one encoder out ----------------------------------------------------------------------


def encode(message: Message) -> str:
    """One server frame: ``message`` (a reply, an event, an error: a type of
    ``gaps_protocol.messages``) as compact JSON text that strict readers take (RFC 8259),
    written by the one encoder of every frame (``gaps_protocol.messages.encode``'s).

    It never raises, so that no reply can break the connection that asked for it. msgspec
    writes a float that is not finite as null and an integer of any size whole; the one
    value it refuses is a text holding a lone surrogate, which UTF-8 cannot carry. No such
    text should reach a reply: every frame a client sends is refused unless it is UTF-8
    (``_guarded``), so nothing a client says can hold one, and every text the server writes
    of its own is printable. Should one come all the same (a bug, or a row written by
    something else), it goes out as U+FFFD rather than breaking the connection."""
    try:
        return encode_message(message).decode()
    except UnicodeEncodeError:
        return encode_message(_without_surrogates(msgspec.to_builtins(message))).decode()


def _without_surrogates(value: Any) -> Any:
    """``value`` (builtins only, as ``msgspec.to_builtins`` gives them) with every lone
    surrogate of its texts replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_surrogates(key): _without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    return value


def error_message(error: ServerError, request_id: RequestId = None) -> Error:
    """The ``error`` reply refusing a request: its details are the code's own members."""
    details = dict(error.details)
    request_id = details.pop("id", request_id)  # type: ignore[assignment]  # a request's
    # A code's members, as its ServerError names them (tests/test_error_codes.py).
    return Error(id=request_id, code=error.code, message=error.message, **details)  # type: ignore[arg-type]
