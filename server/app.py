"""The server: WebSocket sessions, plain HTTP on the same port, start and shutdown."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server as WebSocketServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from server import protocol
from server.broker import Broker, LocalBroker, Subscription
from server.config import Settings
from server.errors import ServerError
from server.identity import new_token, token_hash
from server.lobby import Lobby
from server.match import Match, MatchOptions, Seat
from server.protocol import (
    CreateMatch, GetReplay, Hello, JoinMatch, LeaveMatch, ListMatches, Ping, Play, Ready,
    Register, Resync, StartMatch, encode, error_message, parse_request,
)
from server.redis_broker import RedisBroker
from server.replays import replay_document
from server.storage.database import create_engine, database_url, migrate
from server.storage.journal import Journal
from server.storage.store import NameTaken, PlayerRecord, Store

log = logging.getLogger("gaps.server")


class Server:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.url = database_url(settings.database_url, data_dir=settings.data_dir)
        self.engine = create_engine(self.url)
        self.store = Store(self.engine)
        self.journal = Journal(self.engine)
        self.broker: Broker = LocalBroker()
        self.lobby = self._make_lobby()
        self._websocket_server: WebSocketServer | None = None

    def _make_lobby(self) -> Lobby:
        settings = self.settings
        return Lobby(
            store=self.store, journal=self.journal, broker=self.broker,
            grace_s=settings.grace_s, max_history_events=settings.max_history_events,
            retain_finished_s=settings.retain_finished_s,
        )

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        assert self._websocket_server is not None
        return int(self._websocket_server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        await migrate(self.engine)
        if self.settings.redis_url:
            self.broker = await RedisBroker.connect(self.settings.redis_url)
            self.lobby = self._make_lobby()
        self.journal.start()
        self._websocket_server = await serve(
            self._session, self.settings.host, self.settings.port,
            process_request=self._http, max_size=protocol.MAX_FRAME_BYTES * 4,
        )
        log.info("listening", extra={"host": self.settings.host, "port": self.port,
                                     "database": self.engine.url.get_backend_name(),
                                     "broker": type(self.broker).__name__})

    async def close(self) -> None:
        """Stop accepting, close every connection, flush the journal, close the database."""
        if self._websocket_server is not None:
            self._websocket_server.close()
            await self._websocket_server.wait_closed()
        await self.lobby.close()
        await self.journal.close()
        await self.broker.close()
        await self.engine.dispose()
        log.info("stopped")

    async def _session(self, connection: ServerConnection) -> None:
        await Session(self, connection).run()

    # -- plain HTTP on the same port --------------------------------------------------

    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?", 1)[0].rstrip("/")
        if path == "/healthz":
            return _respond(HTTPStatus.OK, {"status": "ok"})
        if path == "/matches":
            return _respond(HTTPStatus.OK, {"matches": [m.summary() for m in self.lobby.open_public()]})
        parts = path.split("/")
        if len(parts) == 4 and parts[1] == "matches" and parts[3] == "replay":
            try:
                return _respond(HTTPStatus.OK, await self.replay(parts[2]))
            except ServerError as error:
                status = HTTPStatus.NOT_FOUND if error.code == "no_such_match" else HTTPStatus.CONFLICT
                return _respond(status, error_message(error))
        return _respond(HTTPStatus.NOT_FOUND, {"error": f"no resource at {path or '/'}"})

    async def replay(self, code: str) -> dict[str, Any]:
        stored = await self.store.replay(code.upper())
        if stored is None:
            raise ServerError("no_such_match", f"no match has code {code!r}")
        if stored["match"]["status"] != "finished":
            raise ServerError("not_finished", f"match {code} has not finished: its seed is secret")
        return replay_document(stored)


def _respond(status: HTTPStatus, body: dict[str, Any]) -> Response:
    data = json.dumps(body).encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(data))),
                       ("Connection", "close")])
    return Response(status.value, status.phrase, headers, data)


class Session:
    """One WebSocket connection: its player, the matches it watches, its replies."""

    def __init__(self, server: Server, connection: ServerConnection) -> None:
        self.server = server
        self.connection = connection
        self.player: PlayerRecord | None = None
        self.watching: dict[str, tuple[Subscription, asyncio.Task[None] | None]] = {}
        self.seats: dict[str, tuple[Match, Seat]] = {}
        self.spectating: set[str] = set()
        self._after_reply: list[Callable[[], None]] = []

    async def run(self) -> None:
        try:
            async for frame in self.connection:
                reply = await self.handle(frame)
                await self.connection.send(encode(reply))
                for start in self._after_reply:
                    start()
                self._after_reply.clear()
        except ConnectionClosed:
            pass
        finally:
            await self._cleanup()

    async def handle(self, frame: str | bytes) -> dict[str, Any]:
        request_id = None
        try:
            request = parse_request(frame)
            request_id = request.id
            return {"id": request_id, **await self.dispatch(request)}
        except ServerError as error:
            return error_message(error, request_id)
        except Exception:
            log.exception("request failed", extra={"frame": str(frame)[:200]})
            return error_message(ServerError("internal_error", "the server failed on this request"),
                                 request_id)

    async def dispatch(self, request: protocol.Request) -> dict[str, Any]:
        match request:
            case Register(name=name):
                return await self.register(name)
            case Hello(token=token):
                return await self.hello(token)
            case Ping():
                return {"type": "pong", "server_time": _now()}
        player = self._require_player()
        lobby = self.server.lobby
        match request:
            case CreateMatch():
                return await self.create(player, request)
            case ListMatches():
                return {"type": "matches", "matches": [m.summary() for m in lobby.open_public()]}
            case JoinMatch(code=code, role=role):
                return await self.join(player, lobby.get(code), role)
            case LeaveMatch(code=code):
                return await self.leave(player, code)
            case Ready(code=code, ready=ready):
                await lobby.get(code).set_ready(player.id, ready)
                return {"type": "ok"}
            case StartMatch(code=code):
                await lobby.get(code).start_by(player.id)
                return {"type": "ok"}
            case Play(code=code, seq=seq, action=action):
                return await lobby.get(code).play(player.id, seq, action)
            case Resync(code=code, since=since):
                return self.resync(player, lobby.get(code), since)
            case GetReplay(code=code):
                return {"type": "replay", "replay": await self.server.replay(code)}
        raise AssertionError(f"unhandled request {request!r}")

    def _require_player(self) -> PlayerRecord:
        if self.player is None:
            raise ServerError("not_authenticated", "send hello with your token (or register) first")
        return self.player

    async def register(self, name: str) -> dict[str, Any]:
        if self.player is not None:
            raise ServerError("already_authenticated", f"this connection is {self.player.name}'s")
        token = new_token()
        try:
            self.player = await self.server.store.register_player(
                name, token_hash(token), datetime.now(UTC)
            )
        except NameTaken:
            raise ServerError("name_taken", f"{name!r} is taken: choose another name") from None
        log.info("registered", extra={"player": name})
        return {"type": "registered", "player": self._player_view(), "token": token}

    async def hello(self, token: str) -> dict[str, Any]:
        if self.player is not None:
            raise ServerError("already_authenticated", f"this connection is {self.player.name}'s")
        player = await self.server.store.player_by_token_hash(token_hash(token))
        if player is None:
            raise ServerError("bad_token", "no player has this token")
        self.player = player
        return {"type": "welcome", "player": self._player_view(),
                "protocol": protocol.PROTOCOL_VERSION, "server_time": _now()}

    def _player_view(self) -> dict[str, Any]:
        assert self.player is not None
        return {"id": self.player.id, "name": self.player.name}

    async def create(self, player: PlayerRecord, request: CreateMatch) -> dict[str, Any]:
        options = MatchOptions(
            ruleset=request.ruleset, max_players=request.max_players,
            time_limit_s=request.time_limit_s, win_by=request.win_by, public=request.public,
            countdown_s=(request.countdown_s if request.countdown_s is not None
                         else self.server.settings.countdown_s),
        )
        match = await self.server.lobby.create(
            player.id, options, request.seed, seats=[(player.id, player.name)]
        )
        self.seats[match.code] = (match, match.seats[player.id])
        await self._watch(match)
        return {"type": "match_created", **match.snapshot(player.id)}

    async def join(self, player: PlayerRecord, match: Match, role: str) -> dict[str, Any]:
        if role == "spectator" and player.id not in match.seats:
            if match.code not in self.spectating:
                self.spectating.add(match.code)
                match.spectators += 1
            await self._watch(match)
            return {"type": "joined", **match.snapshot(None)}
        if match.code not in self.seats:
            self.seats[match.code] = (match, await match.join(player.id, player.name))
        await self._watch(match)
        return {"type": "joined", **match.snapshot(player.id)}

    async def leave(self, player: PlayerRecord, code: str) -> dict[str, Any]:
        match = self.server.lobby.get(code)
        if match.code in self.spectating:
            self.spectating.discard(match.code)
            match.spectators -= 1
        else:
            await match.leave(player.id)
            self.seats.pop(match.code, None)
        self._unwatch(match.code)
        return {"type": "left", "match": match.code}

    def resync(self, player: PlayerRecord, match: Match, since: int) -> dict[str, Any]:
        events = match.history.since(since)
        if events is None:
            return {"type": "snapshot", **match.snapshot(player.id)}
        return {"type": "events", "match": match.code, "events": events}

    async def _watch(self, match: Match) -> None:
        """Subscribe to the match's events; forwarding starts once the reply is sent."""
        if match.code in self.watching:
            return
        subscription = await self.server.broker.subscribe(match.channel)
        self.watching[match.code] = (subscription, None)

        def start() -> None:
            task = asyncio.create_task(self._forward(subscription))
            self.watching[match.code] = (subscription, task)

        self._after_reply.append(start)

    def _unwatch(self, code: str) -> None:
        watched = self.watching.pop(code, None)
        if watched is not None:
            subscription, task = watched
            subscription.close()
            if task is not None:
                task.cancel()

    async def _forward(self, subscription: Subscription) -> None:
        try:
            while True:
                await self.connection.send(await subscription.get())
        except ConnectionClosed:
            pass

    async def _cleanup(self) -> None:
        for code in list(self.watching):
            self._unwatch(code)
        for match, seat in self.seats.values():
            match.disconnect(seat)
        for code in self.spectating:
            watched = self.server.lobby.matches.get(code)
            if watched is not None:
                watched.spectators -= 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
