"""A hostile client against a live server, on both backends: whatever it sends, every reply
is strict JSON with a documented error code (never ``internal_error``), and the connection
stays usable.

The fuzz test sends random and mutated messages of every request type (protocol.REQUEST_TYPES)
on one authenticated and one unauthenticated connection; the tests before it are the cases
that broke replies once (docs/protocol.md, Transport, says what each must get).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.protocol import MAX_DEPTH, MAX_FRAME_BYTES, MAX_READ_BYTES, REQUEST_TYPES
from tests.client import PUSHED

PROTOCOL_DOC = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()
#: The error codes of docs/protocol.md's Errors table: the only ones a client may get.
DOCUMENTED_ERROR_CODES = frozenset(re.findall(
    r"^\| `([a-z_]+)` \|",
    PROTOCOL_DOC.split("\n## Errors", 1)[1].split("\n## ", 1)[0],
    re.MULTILINE,
))
REPLY_TIMEOUT_S = 10
#: The server closes a connection that is nobody's after a while (Limits.auth_timeout_s,
#: 10 s by default): the fuzzer's anonymous connection is made anew well before.
ANONYMOUS_FOR_S = 3.0


def strict_json(text: str | bytes) -> dict[str, Any]:
    """A frame of the server as a strict JSON reader takes it: text, UTF-8, RFC 8259."""
    assert isinstance(text, str), f"a binary frame: {text!r}"

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON: {text[:200]!r}")

    message = json.loads(text.encode("utf-8").decode("utf-8"), parse_constant=refuse)
    assert isinstance(message, dict), text[:200]
    return message


class Raw:
    """One WebSocket, frames in and out as they are: no id matching, no JSON of ours."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket

    async def reply(self, frame: str | bytes) -> dict[str, Any]:
        """Send ``frame``; the server's next reply to it (events on the way are skipped),
        checked to be strict JSON with a documented code, if an error."""
        await self.socket.send(frame)
        while True:
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                message = strict_json(await self.socket.recv())
            if message.get("type") not in PUSHED:
                break
        assert "id" in message, message
        if message.get("type") == "error":
            assert message.get("code") in DOCUMENTED_ERROR_CODES, message
            assert message["code"] != "internal_error", (frame[:300], message)
            assert isinstance(message.get("message"), str), message
        return message

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        return await self.reply(json.dumps({"type": kind, "id": "r", **fields}))

    async def still_answers(self) -> None:
        """A ping after it all gets its pong."""
        pong = await self.reply(json.dumps({"type": "ping", "id": "still-there"}))
        assert pong["type"] == "pong" and pong["id"] == "still-there", pong


Open = Callable[[], Awaitable[Raw]]


@pytest.fixture
async def raw(ws_url: str) -> AsyncIterator[Open]:
    """``await raw()`` opens a raw connection to the test server; all closed after."""
    sockets: list[ClientConnection] = []

    async def open_raw() -> Raw:
        socket = await connect(ws_url, max_size=None)
        sockets.append(socket)
        return Raw(socket)

    yield open_raw
    for socket in sockets:
        await socket.close()


async def registered(open_raw: Open, name: str) -> tuple[Raw, str]:
    client = await open_raw()
    reply = await client.request("register", name=name)
    assert reply["type"] == "registered", reply
    return client, reply["token"]


# --- the cases of the issue --------------------------------------------------------------


@pytest.mark.parametrize("number", ["1e309", "-1e309", "1e99999", "1e2", "1.0", "-0"])
async def test_an_id_not_written_as_an_integer_is_refused_never_echoed_otherwise(
    raw: Open, number: str
) -> None:
    # An infinity echoed would be no JSON; 1e2 would come back as 100.0, -0 as 0.
    client = await raw()
    reply = await client.reply('{"type": "ping", "id": ' + number + "}")
    assert (reply["type"], reply["code"], reply["field"], reply["id"]) == (
        "error", "bad_message", "id", None)
    await client.still_answers()


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "x\\udbff"])
async def test_an_id_with_a_lone_surrogate_is_bad_json_and_the_connection_lives(
    raw: Open, escape: str
) -> None:
    client = await raw()
    reply = await client.reply('{"type": "ping", "id": "' + escape + '"}')
    assert (reply["code"], reply["id"]) == ("bad_json", None)
    await client.still_answers()


async def test_an_id_that_is_not_a_short_string_or_a_safe_number_is_refused_with_the_id_null(
    raw: Open,
) -> None:
    client = await raw()
    for request_id in ([1], {"a": 1}, True, 2**53, "x" * 65, 2.5, "", "a\x1b[2J", "\u202eid"):
        reply = await client.reply(json.dumps({"type": "ping", "id": request_id}))
        assert (reply["code"], reply["field"], reply["id"]) == ("bad_message", "id", None)
    await client.still_answers()


async def test_json_nested_two_thousand_deep_in_four_kib_is_bad_json(raw: Open) -> None:
    client = await raw()
    for text in ('{"type": "ping", "x": ' + "[" * 2000 + "]" * 2000 + "}", "[" * 4000,
                 '{"type": "ping", "x": ' + "[" * (MAX_DEPTH) + "]" * (MAX_DEPTH) + "}"):
        assert len(text.encode()) <= MAX_FRAME_BYTES
        reply = await client.reply(text)
        assert reply["code"] == "bad_json", reply
    await client.still_answers()


@pytest.mark.parametrize("size", [MAX_FRAME_BYTES + 1, 10_000, MAX_READ_BYTES])
async def test_a_frame_over_the_request_size_but_within_the_read_limit_is_bad_json(
    raw: Open, size: int
) -> None:
    client = await raw()
    head = '{"type": "ping", "id": 1, "pad": "'
    reply = await client.reply(head + "x" * (size - len(head) - 2) + '"}')
    assert (reply["code"], reply["id"]) == ("bad_json", None)
    assert str(MAX_FRAME_BYTES) in reply["message"]
    await client.still_answers()


async def test_a_frame_over_the_read_limit_closes_the_connection_with_1009(raw: Open) -> None:
    client = await raw()
    await client.socket.send("x" * (MAX_READ_BYTES + 1))
    with pytest.raises(ConnectionClosed) as closed:
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            await client.socket.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


@pytest.mark.parametrize(
    "name", ["\x1b[2JCup", "Cup\u202e", "Cup\u200b", "Cup\nCup", "\x00", "Cup\x1b]0;x\x07"]
)
async def test_a_tournament_name_that_is_not_printable_is_refused_and_never_listed(
    raw: Open, name: str
) -> None:
    client, _ = await registered(raw, "host")
    reply = await client.request("tournament_create", name=name)
    assert (reply["code"], reply["field"]) == ("bad_message", "name")
    assert (await client.request("tournament_list"))["tournaments"] == []


async def test_a_tournament_name_is_listed_as_sent_or_refused_never_folded(raw: Open) -> None:
    client, _ = await registered(raw, "host")
    for name in ("  Friday Cup", "Friday \u00a0  Cup", "Friday Cup "):
        reply = await client.request("tournament_create", name=name)
        assert (reply["code"], reply["field"]) == ("bad_message", "name"), reply
    await client.request("tournament_create", name="Friday Cup")
    listed = (await client.request("tournament_list"))["tournaments"]
    assert [view["name"] for view in listed] == ["Friday Cup"]


async def test_names_differing_only_in_case_are_one_name(raw: Open) -> None:
    ana, _ = await registered(raw, "ana")
    for name in ("Ana", "ANA", "aNa"):
        other = await raw()
        reply = await other.request("register", name=name)
        assert reply["code"] == "name_taken", reply
    for name in ("ana", "ANA"):
        found = await ana.request("rating", name=name)
        assert found["player"]["name"] == "ana", found


@pytest.mark.parametrize("name", ["..", ".", ".ana", "-ana", "_ana"])
async def test_a_name_that_does_not_start_with_a_letter_or_digit_is_a_bad_name(
    raw: Open, name: str
) -> None:
    reply = await (await raw()).request("register", name=name)
    assert reply["code"] == "bad_name"


async def test_hello_takes_the_token_exactly_as_register_gave_it(raw: Open) -> None:
    _, token = await registered(raw, "ana")
    for sent in (f" {token}", f"{token} ", f"\t{token}\n", token.upper() + "!"):
        reply = await (await raw()).request("hello", token=sent)
        assert reply["code"] == "bad_token", (sent, reply)
    welcome = await (await raw()).request("hello", token=token)
    assert welcome["type"] == "welcome" and welcome["player"]["name"] == "ana"


def forged_cursor(key: list[Any], rank: int) -> str:
    """A cursor made as the server makes its own (base64 of the JSON key and rank)."""
    return base64.urlsafe_b64encode(json.dumps([key, rank]).encode()).decode().rstrip("=")


async def test_a_forged_leaderboard_cursor_is_a_bad_message(raw: Open) -> None:
    client, _ = await registered(raw, "ana")
    for value in (None, [1], {"a": 1}, 10**30, True):
        for by, length in (("score", 3), ("rating", 2)):
            reply = await client.request("leaderboard", by=by, cursor=forged_cursor(
                [value] * length, 5))
            assert (reply["code"], reply["field"]) == ("bad_message", "cursor"), (value, reply)


# --- random and mutated messages of every request type -----------------------------------

CODE = "<code>"  # stands for the code of a match or tournament the fuzzer made
TOKEN = "<token>"  # stands for the fuzzing player's token

#: What each request type's fields plausibly hold; the fuzzer mixes these with anything.
PLAUSIBLE: dict[str, dict[str, list[Any]]] = {
    "register": {"name": ["ana", "Fuzz", "..", "a" * 25, "zoë"]},
    "hello": {"token": [TOKEN, f" {TOKEN}", "nope"]},
    "create_match": {"ruleset": ["classic", "montana", "nope"], "max_players": [1, 2, 16, 17],
                     "time_limit_s": [1, 600, 86401], "win_by": ["time", "score"],
                     "public": [True, False], "countdown_s": [0, 60, None],
                     "seed": ["AAAA-BBBB-CCCC-DDDD", "zz"]},
    "list_matches": {},
    "join_match": {"code": [CODE, "K7QX2M"], "role": ["player", "spectator", "host"]},
    "leave_match": {"code": [CODE]},
    "ready": {"code": [CODE], "ready": [True, False]},
    "start_match": {"code": [CODE]},
    "rematch": {"code": [CODE], "same_seed": [True, False, "yes"]},
    "action": {"code": [CODE], "seq": [1, 2, 2**31 - 1, 0],
               "action": ["8C", "2H>3", "8C>r2c6", "redeal", "undo", "stop", "zz"]},
    "resync": {"code": [CODE], "since": [0, 1, 2**31 - 1]},
    "get_replay": {"code": [CODE, "ZZZZZZ"]},
    "ping": {},
    "leaderboard": {"ruleset": ["classic"], "by": ["score", "time", "wins", "rating"],
                    "period": ["all", "month", "day"], "day": ["2026-11-29", "0001-01-01"],
                    "cursor": ["eyJ", "W1tdLDBd", "W1sxLDJdLDFd"], "limit": [1, 100, 101],
                    "around_me": [True, False]},
    "rating": {"name": ["ana", "Fuzz", "FUZZ", None]},
    "tournament_create": {"name": ["Cup", "  Friday  Cup ", "\x1b[2J"], "ruleset": ["classic"],
                          "rounds": [1, 20, 21], "max_players": [1, 64],
                          "round_time_limit_s": [1, 600],
                          "start_at": ["2999-01-01T00:00:00Z", "2000-01-01T00:00:00Z",
                                       "9999-12-31T23:59:59-23:59"]},
    "tournament_join": {"code": [CODE]},
    "tournament_start": {"code": [CODE]},
    "tournament_list": {},
    "tournament_standings": {"code": [CODE]},
    "tournament_resync": {"code": [CODE], "since": [0, 5, 2**31 - 1]},
    "daily": {"ruleset": ["classic", "spaces"]},
    "daily_board": {"ruleset": ["classic"], "day": ["2026-11-29", None]},
    "quick_match": {"ruleset": ["classic", "paganini"]},
    "quick_cancel": {},
}

#: Values that broke, or could break, a reply: hostile text, numbers at the edges.
NASTY: list[Any] = [
    "", " ", "\x00", "\x1b[2J", "\u202e", "\u200b", "\ud800", "\udfff", "\U0001f600", "x" * 300,
    2**31, 2**53, -(2**63), 10**30, 1e308, -0.0, 0.5, True, None, [], {}, [[[]]], {"a": {"b": 1}},
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=3),
    max_leaves=5,
)
ids = st.one_of(st.integers(0, 1000), st.text(max_size=8), st.sampled_from(NASTY), json_values)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """A request of a known type (now and then of none), its fields plausible, nasty,
    random or left out, with junk fields now and then."""
    kind = draw(st.sampled_from(REQUEST_TYPES) | st.text(max_size=6) | st.sampled_from(NASTY))
    message: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        message["id"] = draw(ids)
    for name, plausible in PLAUSIBLE.get(kind, {}).items() if isinstance(kind, str) else ():
        choice = draw(st.sampled_from(["plausible", "plausible", "nasty", "random", "absent"]))
        if choice == "plausible":
            message[name] = draw(st.sampled_from(plausible))
        elif choice == "nasty":
            message[name] = draw(st.sampled_from(NASTY))
        elif choice == "random":
            message[name] = draw(json_values)
    message.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2)))
    return message


MUTATIONS = ("none", "cut", "flip", "insert", "deep", "huge", "long", "binary")


@dataclass(frozen=True)
class Frame:
    """A message as a frame, perhaps mutated on its way: cut at ``cut`` (a fraction of its
    length), ``char`` put in there instead of the one there or before it, wrapped ``depth``
    deep, numbers out of range, made too long, sent as binary."""

    message: dict[str, Any]
    mutation: str
    cut: float
    char: str
    depth: int

    def text(self, code: str, token: str) -> str | bytes:
        """The frame, with ``CODE`` and ``TOKEN`` made ``code`` and ``token``."""
        filled = {key: code if value == CODE else
                  value.replace(TOKEN, token) if isinstance(value, str) else value
                  for key, value in self.message.items()}
        text = json.dumps(filled)
        at = int(self.cut * len(text))
        match self.mutation:
            case "cut":
                return text[:at]
            case "flip":
                return text[:at] + self.char + text[at + 1:]
            case "insert":
                return text[:at] + self.char + text[at:]
            case "deep":
                return text[:-1] + ', "deep": ' + "[" * self.depth + "]" * self.depth + "}"
            case "huge":
                return text[:-1] + ', "id": 1e309, "n": -1e400}'
            case "long":
                return text[:-1] + ', "pad": "' + "x" * (MAX_FRAME_BYTES + at) + '"}'
            case "binary":
                return text.encode()
        return text


frames = st.builds(
    Frame,
    message=messages(),
    mutation=st.sampled_from(MUTATIONS[:1] * 3 + MUTATIONS[1:]),
    cut=st.floats(0, 1),
    char=st.characters(exclude_categories=["Cs"]),  # a text frame is UTF-8: no surrogates
    depth=st.integers(MAX_DEPTH - 2, 3000),
)


@dataclass
class Fuzzing:
    """The fuzzer's connections, kept across examples: the state each message meets."""

    open_raw: Open
    player: Raw
    token: str
    codes: list[str]
    anonymous: Raw | None = None
    anonymous_since: float = 0.0

    async def nobodys(self) -> Raw:
        """A connection that is nobody's, young enough not to be closed for it."""
        if self.anonymous is None or time.monotonic() - self.anonymous_since > ANONYMOUS_FOR_S:
            self.anonymous = await self.open_raw()
            self.anonymous_since = time.monotonic()
        return self.anonymous


@pytest.fixture
async def fuzzing(raw: Open) -> Fuzzing:
    player, token = await registered(raw, "Fuzz")
    match = await player.request("create_match", max_players=2, countdown_s=0)
    tournament = await player.request("tournament_create", name="Fuzz Cup")
    return Fuzzing(raw, player, token, [match["match"]["code"], tournament["tournament"]["code"]])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(frame=frames, pick=st.integers(0, 1), anonymous=st.booleans())
async def test_any_message_gets_a_strict_json_reply_with_a_documented_code(
    fuzzing: Fuzzing, frame: Frame, pick: int, anonymous: bool
) -> None:
    client = await fuzzing.nobodys() if anonymous else fuzzing.player
    reply = await client.reply(frame.text(fuzzing.codes[pick], fuzzing.token))
    await client.still_answers()
    if anonymous and reply.get("type") in ("registered", "welcome"):
        fuzzing.anonymous = None  # it is somebody's now
