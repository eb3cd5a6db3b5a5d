"""The message types (gaps_protocol.messages): every value they allow goes to JSON and
back unchanged; they decode strictly, naming the path of what is wrong; and they agree
with the server's own lists (request types, error codes, defaults) and docs/protocol.md."""

from __future__ import annotations

import re
from datetime import UTC
from pathlib import Path
from typing import Any, get_args

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gaps import RULESETS
from gaps.errors import REASONS
from gaps_protocol import limits
from gaps_protocol.messages import (
    ERROR_CODES,
    REQUEST_TYPES,
    ClientMessage,
    MatchEvent,
    ServerReply,
    TournamentEvent,
    decode_request,
    decode_server_message,
    encode,
)
from gaps_protocol.messages.common import IllegalReason, Ruleset
from gaps_protocol.times import format_time
from server import errors, identity, protocol

ROOT = Path(__file__).resolve().parents[1]
_OMITTED = object()


def _strategy(kind: mi.Type) -> st.SearchStrategy[Any]:
    """Every value of ``kind`` (a few items per list), within its constraints."""
    match kind:
        case mi.NoneType():
            return st.none()
        case mi.BoolType():
            return st.booleans()
        case mi.IntType(ge=ge, le=le):
            low = ge if ge is not None else -limits.MAX_SAFE_INTEGER
            return st.integers(low, le if le is not None else limits.MAX_SAFE_INTEGER)
        case mi.FloatType(ge=ge, le=le):
            return st.floats(ge, le, allow_nan=False, allow_infinity=False)
        case mi.StrType(min_length=low, max_length=high, pattern=pattern):
            if pattern is None:
                return st.text(min_size=low or 0, max_size=high if high is not None else 20)
            return st.from_regex(pattern).filter(
                lambda text: (low or 0) <= len(text) <= (high or len(text)))
        case mi.LiteralType(values=values):
            return st.sampled_from(values)
        case mi.DateType():
            return st.dates()
        case mi.DateTimeType():
            return st.datetimes(timezones=st.just(UTC))
        case mi.Metadata(type=mi.StrType(), extra_json_schema={"format": "date-time"}):
            return st.datetimes(timezones=st.just(UTC)).map(format_time)  # a Time
        case mi.Metadata(type=inner):
            return _strategy(inner)
        case mi.ListType(item_type=item, min_length=low, max_length=high):
            return st.lists(_strategy(item), min_size=low or 0,
                            max_size=min(high if high is not None else 3, 4))
        case mi.UnionType(types=types):
            return st.one_of([_strategy(member) for member in types])
        case mi.StructType(cls=cls, fields=fields):
            members = {
                field.name: _strategy(field.type) if field.required
                else st.one_of(st.just(_OMITTED), _strategy(field.type))
                for field in fields
            }
            return st.fixed_dictionaries(members).map(
                lambda drawn, cls=cls: cls(**{k: v for k, v in drawn.items()
                                             if v is not _OMITTED}))
    raise AssertionError(f"no strategy for {kind!r}")


def _structs(kind: mi.Type, found: dict[str, type]) -> dict[str, type]:
    """Every Struct type in ``kind``, by name."""
    match kind:
        case mi.StructType(cls=cls, fields=fields) if cls.__name__ not in found:
            found[cls.__name__] = cls
            for field in fields:
                _structs(field.type, found)
        case mi.UnionType(types=types):
            for member in types:
                _structs(member, found)
        case mi.ListType(item_type=item):
            _structs(item, found)
    return found


UNIONS = {"ClientMessage": ClientMessage, "ServerReply": ServerReply,
          "MatchEvent": MatchEvent, "TournamentEvent": TournamentEvent}
STRUCTS = _structs(mi.UnionType(tuple(mi.type_info(u) for u in UNIONS.values())), {})
MESSAGES = {name: cls for name, cls in STRUCTS.items()
            if any(cls in get_args(union) for union in UNIONS.values())}


@pytest.mark.parametrize("name", sorted(STRUCTS))
def test_every_value_goes_to_json_and_back_unchanged(name: str) -> None:
    kind = STRUCTS[name]

    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(_strategy(mi.type_info(kind)))
    def round_trip(value: msgspec.Struct) -> None:
        assert msgspec.json.decode(encode(value), type=kind) == value
        if kind in get_args(ClientMessage):
            assert decode_request(encode(value)) == value
        elif name in MESSAGES:
            assert decode_server_message(encode(value)) == value

    round_trip()


def test_every_message_is_a_member_of_one_union() -> None:
    assert len(MESSAGES) == sum(len(get_args(union)) for union in UNIONS.values())


# -- strict, naming the path -------------------------------------------------------------

WELCOME = (b'{"type":"welcome","id":1,"player":{"id":1,"name":"ana","bot":false},'
           b'"protocol":1,"server_time":"2026-12-01T03:00:00.123Z","suspended":null}')


def test_a_server_message_decodes_to_its_type() -> None:
    welcome = decode_server_message(WELCOME)
    assert type(welcome).__name__ == "Welcome"
    assert decode_server_message(encode(welcome)) == welcome


@pytest.mark.parametrize(
    ("frame", "path"),
    [
        (WELCOME.replace(b'"bot":false', b'"bot":false,"admin":true'), "$.player"),
        (WELCOME.replace(b',"suspended":null', b""), "suspended"),
        (WELCOME.replace(b'"id":1,"name"', b'"id":1.0,"name"'), "$.player.id"),
        (WELCOME.replace(b'"protocol":1', b'"protocol":2'), "$.protocol"),
        # A time in another form than the protocol's one (gaps_protocol.times).
        (WELCOME.replace(b'00.123Z', b'00.123000+00:00'), "$.server_time"),
        (WELCOME.replace(b'00.123Z', b'00Z'), "$.server_time"),
        (WELCOME.replace(b'"type":"welcome"', b'"type":"welcomed"'), "welcomed"),
        (b'{"type":"event","match":"K7QX2M","seq":0,"event":"player_left","t_ms":0,'
         b'"player_id":2}', "$.seq"),
        (b'{"type":"tournament_event","tournament":"Q4M2ZK","seq":3,"event":"dance"}',
         "dance"),
    ],
)
def test_a_server_message_out_of_its_type_is_refused_naming_what(
    frame: bytes, path: str
) -> None:
    with pytest.raises(msgspec.ValidationError, match=re.escape(path)):
        decode_server_message(frame)


def test_a_request_out_of_its_bounds_is_refused_naming_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match=re.escape("$.max_players")):
        decode_request(b'{"type":"create_match","max_players":17}')
    with pytest.raises(msgspec.ValidationError, match=re.escape("$.id")):
        decode_request(b'{"type":"ping","id":9007199254740992}')


def test_a_request_may_carry_members_the_server_ignores() -> None:
    assert decode_request(b'{"type":"ping","id":"a","from":"a newer client"}') == \
        decode_request(b'{"type":"ping","id":"a"}')


# -- the same lists as the server and the docs ------------------------------------------


def test_the_request_types_are_the_servers() -> None:
    assert REQUEST_TYPES == protocol.REQUEST_TYPES


def _minimal(kind: str) -> dict[str, Any]:
    """A request of ``kind`` with its required fields only."""
    required = {"code": "K7QX2M", "seq": 1, "since": 0, "action": "8C", "token": "abc",
                "player": "bob", "reason": "a reason", "name": "ana", "text": "coffee",
                "round": 1, "placed": 30, "redeals": 1, "finish_ms": 60_000}
    cls = next(c for c in get_args(ClientMessage) if mi.type_info(c).tag == kind)
    fields = {f.name for f in mi.type_info(cls).fields if f.required}
    return {"type": kind, **{name: required[name] for name in fields if name != "type"}}


@pytest.mark.parametrize("kind", REQUEST_TYPES)
def test_the_server_decodes_a_request_into_its_type_with_its_defaults(kind: str) -> None:
    frame = msgspec.json.encode(_minimal(kind))
    assert protocol.parse_request(frame.decode()) == decode_request(frame)


def _documented_error_codes() -> list[str]:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    table = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", table, re.M)


def _raised_error_codes() -> set[str]:
    raised = set()
    for path in (ROOT / "server").rglob("*.py"):
        raised |= set(re.findall(r'ServerError\(\s*"([a-z_]+)"', path.read_text()))
    return raised


def test_the_error_codes_are_the_documented_ones_in_their_order() -> None:
    assert list(ERROR_CODES) == _documented_error_codes()


def test_the_error_codes_are_the_servers() -> None:
    assert set(ERROR_CODES) == set(errors.ERROR_CODES)
    assert _raised_error_codes() <= set(ERROR_CODES)
    assert set(ERROR_CODES) - _raised_error_codes() == set()


def test_the_enumerations_are_the_engines() -> None:
    assert set(get_args(Ruleset)) == set(RULESETS)
    assert set(get_args(IllegalReason)) == set(REASONS)


def test_the_token_bounds_are_the_servers() -> None:
    assert limits.MAX_TOKEN_LENGTH == identity.MAX_TOKEN_LENGTH
    assert limits.TOKEN_REGEX == identity.TOKEN_PATTERN.pattern
