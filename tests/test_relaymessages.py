"""The messages between a cluster's processes: each one decodes to what was encoded."""

from __future__ import annotations

from datetime import UTC
from typing import Any, get_args

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gaps_protocol.messages import requests
from server.relaymessages import (
    Answered,
    AnyCommand,
    AskTournament,
    Call,
    Command,
    Ping,
    Play,
    Refused,
    decode,
    encode,
)

#: Every JSON value a result may be.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=12,
)


def values_of(info: mi.Type) -> st.SearchStrategy[Any]:
    """The values of a field of type ``info`` within its bounds."""
    match info:
        case mi.IntType(ge=ge, le=le):
            return st.integers(ge if ge is not None else -(2**63), le if le is not None
                               else 2**63 - 1)
        case mi.FloatType():
            return st.floats(allow_nan=False, allow_infinity=False)
        case mi.BoolType():
            return st.booleans()
        case mi.NoneType():
            return st.none()
        case mi.StrType(pattern=str() as pattern):
            return st.from_regex(pattern).filter(lambda text: len(text) <= info.max_length)
        case mi.StrType(min_length=low, max_length=high):
            return st.text(min_size=low or 0, max_size=high if high is not None else 40)
        case mi.UnionType(types=types):
            return st.one_of(*(values_of(each) for each in types))
        case mi.StructType():
            return commands_of(info)
        case mi.LiteralType(values=values):
            return st.sampled_from(values)
        case mi.DateTimeType():
            return st.datetimes(timezones=st.just(UTC))
        case mi.DateType():
            return st.dates()
        case mi.TupleType(item_types=items):
            return st.tuples(*(values_of(each) for each in items))
    raise AssertionError(f"no strategy for {info}")


def commands_of(info: mi.StructType) -> st.SearchStrategy[Any]:
    return st.builds(
        info.cls, **{field.name: values_of(field.type) for field in info.fields}
    )


commands = st.one_of(*(commands_of(mi.type_info(kind)) for kind in get_args(AnyCommand)))


@given(request=st.integers(0, 2**63 - 1), caller=st.text(max_size=30), command=commands)
def test_a_call_of_any_command_decodes_to_what_was_encoded(
    request: int, caller: str, command: Command
) -> None:
    call = Call(request=request, caller=caller, command=command)  # type: ignore[arg-type]
    assert decode(encode(call)) == call


@given(request=st.integers(0, 2**63 - 1), result=json_values)
def test_an_answer_decodes_to_what_was_encoded(request: int, result: Any) -> None:
    assert decode(encode(Answered(request=request, result=result))) == Answered(
        request=request, result=result
    )


def test_a_refusal_and_a_ping_decode_to_what_was_encoded() -> None:
    refused = Refused(request=3, code="match_full", message="full", details={"limit": 2})
    assert decode(encode(refused)) == refused
    assert decode(encode(Ping(caller="a"))) == Ping(caller="a")


def test_a_message_out_of_its_types_is_refused_naming_the_field() -> None:
    call = encode(Call(request=1, caller="a", command=Play(
        code="ABCDEF", epoch=1, player_id=2, seq=1, action="7H>2")))
    with pytest.raises(msgspec.ValidationError, match="seq"):
        decode(call.replace('"seq":1', '"seq":0'))
    with pytest.raises(msgspec.ValidationError, match="command"):
        decode(call.replace('"play"', '"fly"'))
    with pytest.raises(msgspec.DecodeError):
        decode("not json")


def test_a_tournament_request_travels_whole_in_its_own_type() -> None:
    asked = AskTournament(
        request=requests.NameArbiter(id=7, code="ABCDEF", player="bob"),
        player_id=4, name="ana", arbiter=(9, "bob"),
    )
    call = decode(encode(Call(request=1, caller="a", command=asked)))
    assert isinstance(call, Call) and call.command == asked
    assert isinstance(call.command, AskTournament)
    assert type(call.command.request) is requests.NameArbiter
    with pytest.raises(msgspec.ValidationError, match="request"):
        decode(encode(Call(request=1, caller="a", command=asked)).replace(
            '"tournament_arbiter"', '"action"'))
