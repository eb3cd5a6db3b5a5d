"""Helpers for client tests: run ``gaps`` commands, with or without a screen, against a
real server or a hostile one (``Hostile``) whose names, codes and messages are made to
attack the terminal."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from http import HTTPStatus
from typing import Any, Final, TypeVar, get_args

import msgspec
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from client_cli.boardapp import BoardApp
from client_cli.cli import run_async
from client_cli.connection import Connection
from client_cli.screen import MatchApp
from client_cli.widgets import MessageLine
from gaps import Game, Seed, Slot
from gaps_protocol.messages import (
    MatchEvent,
    ServerMessage,
    ServerReply,
    TournamentEvent,
    decode_server_message,
)
from gaps_protocol.messages.views import Progress, RankedProgress

Script = Callable[[Any, Pilot[Any]], Awaitable[None]]
Frontend = Callable[[App[Any]], Awaitable[None]]


def no_screen() -> Frontend:
    async def frontend(app: App[Any]) -> None:
        raise AssertionError(f"no screen expected, got {app!r}")

    return frontend


def driving(script: Script, *, notifications: bool = False) -> Frontend:
    """A frontend that runs the app headless and lets ``script`` play it; with
    ``notifications``, the app's notifications are drawn too (``run_test`` leaves them out).

    Each running app redirects stdout and stderr; two at once (two players in one test)
    undo that out of order, so the streams of the test are put back after each."""
    streams = sys.stdout, sys.stderr

    async def frontend(app: App[Any]) -> None:
        try:
            async with app.run_test(size=(130, 40), notifications=notifications) as pilot:
                await script(app, pilot)
        finally:
            sys.stdout, sys.stderr = streams

    return frontend


async def gaps(*argv: str, frontend: Frontend | None = None) -> int:
    """Run ``gaps ARGV`` in-process; returns its exit code."""
    return await run_async(list(argv), frontend=frontend or no_screen())


# -- a hostile server -----------------------------------------------------------------------

Message = dict[str, Any]

#: What a hostile server may put in any text: a control sequence that clears the screen, a
#: bidi override that reverses what follows, and Rich and Textual markup.
HOSTILE = "ana\x1b[2J\u202e[bold]x[/bold][link=http://x]y[/link]"
#: How the client must show it: the two unprintable characters replaced, the markup as typed.
SHOWN = "ana\ufffd[2J\ufffd[bold]x[/bold][link=http://x]y[/link]"
#: Shorter ones, for table cells and titles that would cut a long one short.
HOSTILE_CODES = {"\x1b[2J[b]K7": "\ufffd[2J[b]K7", "\u202e[i]Q4[/i]": "\ufffd[i]Q4[/i]"}
ME: Message = {"id": 7, "name": "me", "bot": False}


def assert_inert(out: str, *shown: str) -> None:
    """Each of ``shown`` is in ``out`` as typed, and nothing the terminal would act on is."""
    for text in shown:
        assert text in out, (text, out)
    assert "\x1b" not in out and "\u202e" not in out, out


class Hostile:
    """A server that speaks the protocol but chooses its words to attack the client.

    Each request type gets its scripted messages, completed (``complete``): the first is
    the reply (it takes the request's id), the others follow unasked; ``push`` sends more
    later. ``once`` holds replies given first, one per request of that type, before the
    scripted ones (a refusal for now, then the answer). ``hello`` is welcomed as ``ME``.
    ``drop`` closes every connection, as a server that stops does. A GET gets the JSON
    body scripted for its path (404 otherwise).
    """

    def __init__(
        self, answers: Mapping[str, list[Message]] | None = None,
        pages: Mapping[str, Any] | None = None,
        once: Mapping[str, list[Message]] | None = None,
    ) -> None:
        self.answers = {"hello": [{"type": "welcome", "player": ME}], **(answers or {})}
        self.once = {kind: list(replies) for kind, replies in (once or {}).items()}
        self.pages = dict(pages or {})
        self.requests: list[Message] = []
        self._sockets: set[ServerConnection] = set()
        self._server: Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> Hostile:
        self._server = await serve(self._session, "127.0.0.1", 0, process_request=self._http)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def push(self, *messages: Message) -> None:
        for socket in list(self._sockets):
            for message in messages:
                await socket.send(json.dumps(complete(message)))

    async def drop(self, code: int = 1001) -> None:
        """Close every connection with ``code`` (1001: going away, as a restart does)."""
        for socket in list(self._sockets):
            await socket.close(code, "going away")

    def sent(self, kind: str) -> list[Message]:
        """The requests of type ``kind`` received so far."""
        return [request for request in self.requests if request["type"] == kind]

    async def _session(self, socket: ServerConnection) -> None:
        self._sockets.add(socket)
        try:
            async for frame in socket:
                request = json.loads(frame)
                self.requests.append(request)
                once = self.once.get(request["type"])
                if once:
                    await socket.send(json.dumps(complete({**once.pop(0), "id": request["id"]})))
                    continue
                reply, *more = self.answers.get(request["type"], [
                    {"type": "error", "code": "unknown_type", "message": "not scripted"}])
                await socket.send(json.dumps(complete({**reply, "id": request["id"]})))
                await self.push(*more)
        finally:
            self._sockets.discard(socket)

    def _http(self, _: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.partition("?")[0]
        status = HTTPStatus.OK if path in self.pages else HTTPStatus.NOT_FOUND
        data = json.dumps(self.pages.get(path, {"message": f"nothing at {path}"})).encode()
        headers = Headers([("Content-Type", "application/json"),
                           ("Content-Length", str(len(data))), ("Connection", "close")])
        return Response(status.value, status.phrase, headers, data)


# -- whole messages -------------------------------------------------------------------------
# The client reads every frame strictly (``gaps_protocol.messages``): a scripted message
# names what a test is about, and ``complete`` gives it every other member the protocol
# requires, each a neutral value of its type.

#: A time and a day as the server writes them.
NEUTRAL_TIME: Final = "2026-11-30T18:00:00.000Z"
#: Neutral values of the patterned texts, by pattern.
_PATTERNED: Final = {
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$": NEUTRAL_TIME,  # a time held as text
    r"^[0-9a-f]{64}$": "0" * 64,
    r"^[A-Z2-7]{4}(-[A-Z2-7]{1,4})*$": "AAAA-AAAA-AAAA-AAAA",
    r"^[0-9a-f]{16}$": "0" * 16,
    r"^[A-Za-z0-9_\-]+$": "A",
}
_GAPS_ROW: Final = " ".join(["--"] * 13)


def _message_types() -> dict[tuple[str, str | None], msgspec.inspect.StructType]:
    types: dict[tuple[str, str | None], msgspec.inspect.StructType] = {}
    for union, frame in ((ServerReply, None), (MatchEvent, "event"),
                         (TournamentEvent, "tournament_event")):
        for info in msgspec.inspect.multi_type_info(get_args(union)):
            assert isinstance(info, msgspec.inspect.StructType)
            key = (frame, str(info.tag)) if frame else (str(info.tag), None)
            types[key] = info
    return types


_MESSAGE_TYPES: Final = _message_types()


def complete(message: Message) -> Message:
    """``message`` with every member its type requires that it lacks, each a neutral
    value (0, false, null, an empty list, the first of its choices...). Its own members
    are kept as they are: a wrong one stays wrong."""
    kind = message.get("type")
    key = (kind, message.get("event")) if kind in ("event", "tournament_event") else (kind, None)
    info = _MESSAGE_TYPES.get(key)  # type: ignore[arg-type]
    return message if info is None else _filled(message, info)


def _filled(value: Message, info: msgspec.inspect.StructType) -> Message:
    filled = dict(value)
    for member in info.fields:
        if member.encode_name in filled:
            filled[member.encode_name] = _completed(filled[member.encode_name], member.type)
        elif member.required:
            filled[member.encode_name] = _neutral(member.type)
    return filled


def _completed(value: Any, kind: msgspec.inspect.Type) -> Any:
    if isinstance(kind, msgspec.inspect.Metadata):  # constraints beside a type: the type
        return _completed(value, kind.type)
    if isinstance(kind, msgspec.inspect.StructType) and isinstance(value, dict):
        return _filled(value, kind)
    if isinstance(kind, msgspec.inspect.ListType) and isinstance(value, list):
        return [_completed(item, kind.item_type) for item in value]
    if isinstance(kind, msgspec.inspect.UnionType) and isinstance(value, dict):
        for option in kind.types:
            if isinstance(option, msgspec.inspect.StructType) and (
                    option.tag_field is None or value.get(option.tag_field) == option.tag):
                return _filled(value, option)
    return value


def _neutral(kind: msgspec.inspect.Type) -> Any:
    match kind:
        case msgspec.inspect.Metadata(type=inner):  # constraints beside a type: the type
            return _neutral(inner)
        case msgspec.inspect.UnionType(types=options):
            if any(isinstance(option, msgspec.inspect.NoneType) for option in options):
                return None
            return _neutral(options[0])
        case msgspec.inspect.StructType():
            return _filled({}, kind)
        case msgspec.inspect.ListType(min_length=least, item_type=item):
            if isinstance(item, msgspec.inspect.StrType) and item.pattern:
                return [_GAPS_ROW] * (least or 0)  # a grid: every cell a gap
            return [_neutral(item) for _ in range(least or 0)]
        case msgspec.inspect.IntType(ge=ge, gt=gt):
            return ge if ge is not None else (gt + 1 if gt is not None else 0)
        case msgspec.inspect.FloatType():
            return 0.0
        case msgspec.inspect.BoolType():
            return False
        case msgspec.inspect.StrType(pattern=pattern, min_length=least):
            return _PATTERNED[pattern] if pattern else "x" * (least or 0)
        case msgspec.inspect.LiteralType(values=values):
            return values[0]
        case msgspec.inspect.DateTimeType():
            return NEUTRAL_TIME
        case msgspec.inspect.DateType():
            return NEUTRAL_TIME[:10]
        case msgspec.inspect.DictType():
            return {}
    raise TypeError(f"no neutral value for {kind!r}")


S = TypeVar("S", bound=msgspec.Struct)


def typed(kind: type[S], /, **members: Any) -> S:
    """A value of the protocol's ``kind`` with ``members`` (by their names in JSON, typed
    or JSON-shaped), every other member it requires a neutral value (as ``complete``
    gives them), read as the client reads what the server sends."""
    info = msgspec.inspect.type_info(kind)
    assert isinstance(info, msgspec.inspect.StructType)
    value = _filled(msgspec.to_builtins(members), info)
    if info.tag_field is not None:
        value[info.tag_field] = info.tag
    return msgspec.convert(value, kind)


def progress(player_id: int, name: str, **fields: Any) -> Progress:
    """A player's progress as the server gives it: a person, connected, playing, nothing
    placed yet; ``fields`` say otherwise."""
    return msgspec.convert({
        "player_id": player_id, "name": name, "bot": False, "ready": False, "connected": True,
        "placed": 0, "score": 0, "redeals_used": 0, "moves_made": 0, "status": "playing",
        "finished": False, "won": False, "end_reason": None, "finish_ms": None, **fields,
    }, Progress)


def ranked(rank: int, player_id: int, name: str, **fields: Any) -> RankedProgress:
    """A row of ``match_ended``'s ranking: ``progress`` with its rank, not under review."""
    row = {**msgspec.to_builtins(progress(player_id, name)), "rank": rank, "review": None}
    return msgspec.convert({**row, **fields}, RankedProgress)


def received(message: Message) -> ServerMessage:
    """``message`` (as a test scripts it: ``complete`` gives it what it lacks) as the
    client reads it off the wire: typed, decoded strictly."""
    return decode_server_message(json.dumps(complete(message)))


def tournament_event(code: str, seq: int, kind: str, **fields: Any) -> TournamentEvent:
    """Event ``kind`` of tournament ``code`` as the client reads it."""
    event = received({"type": "tournament_event", "tournament": code, "seq": seq,
                      "event": kind, **fields})
    assert isinstance(event, TournamentEvent)
    return event


def page(kind: str, **members: Any) -> Message:
    """The JSON body HTTP serves of a reply of type ``kind``: its ``members``, and every
    other member it requires as ``complete`` gives them (but ``type`` and ``id``, which
    HTTP leaves out)."""
    body = complete({"type": kind, "id": None, **members})
    return {key: value for key, value in body.items() if key not in ("type", "id")}


def lobby(code: str, *players: Message, **match: Any) -> Message:
    """A ``joined`` snapshot of a lobby of ``players`` (``ME`` among them), as the
    protocol shapes it."""
    return {"type": "joined", "seq": 0, "spectators": 0, "you": {"role": "player"},
            "match": {"code": code, "ruleset": "classic", "time_limit_s": 600,
                      "status": "lobby", "host_id": ME["id"], "win_by": "time", "rated": True,
                      "kind": "race", **match},
            "players": [{"player_id": ME["id"], "name": ME["name"], "placed": 0, "score": 0,
                         "redeals_used": 0, "ready": False, "connected": True}, *players]}


def seated(player_id: int, name: str, **fields: Any) -> Message:
    return {"player_id": player_id, "name": name, "placed": 0, "score": 0, "redeals_used": 0,
            "ready": False, "connected": True, **fields}


def racing(code: str, game: Game, *players: Message, t_ms: int = 61_000, **match: Any) -> Message:
    """A ``joined`` snapshot of a running match in which ``ME`` plays ``game``, with
    ``players`` beside; the match clock at ``t_ms``."""
    snapshot = lobby(code, *players, status="running", started_at="2026-11-30T18:00:00.000Z",
                     t_ms=t_ms, commitment="c0ffee" * 10 + "c0ff", max_players=len(players) + 1,
                     **{"ruleset": game.ruleset.name, **match})
    snapshot["you"] = {"role": "player", "last_seq": game.moves_made, "game": {
        "grid": game.layout().splitlines(), "score": game.score, "placed": game.placed,
        "redeals_used": game.redeals_used, "redeals_left": game.redeals_left,
        "moves_made": game.moves_made, "status": game.result(), "can_undo": game.can_undo()}}
    snapshot["players"][0].update(placed=game.placed, score=game.score, ready=True,
                                  moves_made=game.moves_made, status=game.result())
    return snapshot


@functools.cache
def winning_line() -> tuple[str, tuple[str, ...]]:
    """A classic deal's share code and a line of actions that wins it."""
    for number in range(10_000):
        seed = Seed(number.to_bytes(10, "big"))
        game = Game(seed, "classic")
        actions = game.random_playout(random.Random(number))
        if game.is_won():
            return str(seed), tuple(str(action) for action in actions)
    raise AssertionError("no winning random game in 10,000 deals")


def screen_text(app: App[Any]) -> str:
    """What the screen shows, as plain text (as ``export_screenshot`` renders it), with
    what the app holds drawn now rather than at its next (debounced) redraw."""
    if isinstance(app, MatchApp) and app.screen is app.default_screen:
        app.refresh_view()
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(),
                      record=True, force_terminal=True)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text()


# -- a race on a scripted server, the same on every run ------------------------------------

DEAL = "AAAA-BBBB-CCCC-DDDD"
#: A position with every kind of cell: preserved cards (rows 1 and 2), gaps, a dead gap
#: (r1c6, right of a King), cards of both colours (``Game.from_layout``).
EVERY_CELL = """
    2C 3C 4C -- KH -- 5S 6S 7S 8S 9S TS JS
    2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD --
    3H 4H 5H 6H 7H 8H 9H TH JH QH 2H 2S 3S
    KC QC JC TC 9C 8C 7C 6C 5C -- 4S QS KS
"""


def at(text: str) -> int:
    """The flat index of a slot written ``r1c6``."""
    return Slot.parse(text).index
BOB = seated(8, "bob", placed=20, score=20, status="stopped", finished=True,
             end_reason="stopped", finish_ms=240_800, moves_made=31)
CAROL = seated(9, "carol-who-has-a-long-name", placed=12, score=12, status="playing",
               moves_made=15)
DAVE = seated(10, "dave-the-bot-of-the-night", bot=True, placed=33, score=33,
              status="blocked", moves_made=40)


def dealt(ruleset: str = "classic") -> Game:
    return Game(Seed.parse(DEAL), ruleset)


@contextlib.asynccontextmanager
async def race(
    size: tuple[int, int], *, game: Game | None = None, heading: str | None = None,
    answers: dict[str, list[dict[str, Any]]] | None = None, snapshot: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[MatchApp, Pilot[Any], Hostile]]:
    """A match screen on a scripted server: ``ME`` racing bob (stopped at 4:00.8) and
    carol, the clock frozen at 1:01 so that every drawing is the same."""
    snapshot = snapshot or racing("K7QX2M", game or dealt(), BOB, CAROL)
    async with Hostile({"join_match": [snapshot], **(answers or {})}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match("K7QX2M"), heading=heading)
            app.state.clock.freeze(61_000)
            async with app.run_test(size=size) as pilot:
                await pilot.pause()
                yield app, pilot, hostile
        finally:
            await connection.close()


async def until(pilot: Pilot[Any], found: Callable[[], Any], timeout: float = 10) -> None:
    """Let the app run until ``found()`` is true (the server answers asynchronously)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not found():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.002)  # the app runs in this loop: let it work


def message(app: BoardApp) -> str:
    """What the message line says, as plain text."""
    text = app.query_one(MessageLine).text
    return text if isinstance(text, str) else text.plain
