"""The server: WebSocket sessions, plain HTTP on the same port, start and shutdown."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import parse_qs

from websockets.asyncio.server import Server as WebSocketServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from gaps import Ruleset, Seed
from server import protocol, web
from server.broker import Broker, BrokerUnavailable, LocalBroker, Subscription
from server.config import Settings
from server.daily import Daily, today
from server.desk import Desk
from server.errors import ServerError, bots_not_allowed
from server.forwarded import client_address
from server.identity import new_token, token_hash
from server.leadership import Leadership
from server.lobby import Lobby
from server.match import Match, MatchOptions
from server.matchmaker import Matchmaker
from server.outbox import Dropped, Outbox
from server.par_worker import ParWorker
from server.protocol import (
    CancelQuickMatch,
    CreateMatch,
    CreateTournament,
    DecideReview,
    GetAuditLog,
    GetDailyBoard,
    GetLeaderboard,
    GetRating,
    GetReplay,
    GetStandings,
    Hello,
    JoinMatch,
    JoinTournament,
    LeaveMatch,
    ListMatches,
    ListReviews,
    ListTournaments,
    Ping,
    Play,
    PlayDaily,
    QuickMatch,
    Ready,
    Register,
    Rematch,
    RemoveEntrant,
    Resync,
    ResyncTournament,
    StartMatch,
    StartTournament,
    Suspend,
    encode,
    error_message,
    parse_request,
)
from server.ratelimit import Budgets, Clock, TokenBucket
from server.redis_broker import RedisBroker
from server.relay import Relay
from server.remote import MatchHandle
from server.replays import replay_document
from server.storage.database import Database, database_url
from server.storage.journal import Journal
from server.storage.leader import LeaderLock
from server.storage.leases import MatchLeases, process_name
from server.storage.outage import is_outage
from server.storage.players import NameTaken, PlayerRecord
from server.storage.store import Store
from server.tournament import Tournaments, tournament_channel

log = logging.getLogger("gaps.server")


#: Requests that cost the server a database round trip or a large reply: each also
#: takes from the player's and the address's budget of costly requests.
COSTLY_REQUESTS: Final = (
    Register,
    Hello,
    CreateMatch,
    Rematch,
    CreateTournament,
    GetReplay,
    GetLeaderboard,
    GetRating,
    GetDailyBoard,
    GetStandings,
)

#: How long a connection closed for abuse has to answer the close.
ABUSER_CLOSE_TIMEOUT_S: Final = 1.0

#: How long a shutdown keeps refusing requests with ``shutting_down`` once every request
#: it took is answered, before it closes the connections: the requests already on their
#: way get a refusal rather than a close. With no connection open, nothing can be on its
#: way: the shutdown does not linger.
DRAIN_LINGER_S: Final = 0.2

#: A queued player not asked for in this many lease renewals is dropped from the queue.
QUEUE_STALE_RENEWALS: Final = 5

#: How long the readiness check waits for the database.
READINESS_TIMEOUT_S: Final = 2.0


class Server:
    def __init__(self, settings: Settings, *, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self.limits = settings.limits
        self.clock = clock
        burst, per_s = self.limits.costly_request_burst, self.limits.costly_requests_per_min / 60
        self.costly_by_player: Budgets[int] = Budgets(burst=burst, per_s=per_s, clock=clock)
        self.costly_by_address: Budgets[str] = Budgets(burst=burst, per_s=per_s, clock=clock)
        self.connections_by_address: Counter[str] = Counter()
        self.url = database_url(settings.database_url, data_dir=settings.data_dir)
        self.database = Database(self.url)
        self.store = Store(self.database)
        self.journal = Journal(self.database)
        node = process_name()
        #: This process's leases on matches, and its bid to lead: a cluster's (PostgreSQL).
        self.leases = (
            None
            if self.database.is_sqlite
            else MatchLeases(self.database, owner=node, lease_s=settings.lease_s)
        )
        self.leader_lock = (
            None if self.database.is_sqlite else LeaderLock(self.database, owner=node)
        )
        self.broker: Broker = LocalBroker()
        #: How this process asks the others of its cluster: with leases and Redis only.
        self.relay: Relay | None = None
        self.par_worker = ParWorker(
            self.store.matches,
            workers=settings.par_workers,
            par_max_nodes=settings.par_max_nodes,
            par_time_budget_s=settings.par_time_budget_s,
        )
        self._build_services()
        self._websocket_server: WebSocketServer | None = None
        self.sessions: set[Session] = set()
        #: Set when a shutdown begins: sessions refuse requests with ``shutting_down``.
        self.draining = False

    def _build_services(self) -> None:
        """The lobby and what runs matches in it, all linked through ``self.broker``."""
        settings = self.settings
        self.lobby = Lobby(
            store=self.store,
            journal=self.journal,
            broker=self.broker,
            grace_s=settings.grace_s,
            max_history_events=settings.max_history_events,
            retain_finished_s=settings.retain_finished_s,
            max_open_matches_per_player=settings.limits.max_open_matches_per_player,
            leases=self.leases,
            relay=self.relay,
            renew_s=settings.lease_renew_s,
        )
        self.lobby.on_moved(self._match_moved)
        self.lobby.on_end(self.par_worker.ended)
        self.daily = Daily(store=self.store, lobby=self.lobby, countdown_s=settings.countdown_s)
        self.tournaments = Tournaments(
            repository=self.store.tournaments,
            lobby=self.lobby,
            broker=self.broker,
            countdown_s=settings.tournament_countdown_s,
            break_s=settings.tournament_break_s,
            max_history_events=settings.max_history_events,
        )
        self.matchmaker = Matchmaker(
            store=self.store,
            lobby=self.lobby,
            wait_s=settings.quick_wait_s,
            countdown_s=settings.countdown_s,
            notify=self._tell_matched,
            stale_s=QUEUE_STALE_RENEWALS * settings.lease_renew_s,
        )
        self.leadership = Leadership(
            lock=self.leader_lock, relay=self.relay, renew_s=settings.lease_renew_s
        )
        self.leadership.serve(
            Desk(tournaments=self.tournaments, matchmaker=self.matchmaker).answer
        )
        self.leadership.on_change(elected=self._lead, deposed=self._stop_leading)
        if self.relay is not None:
            self.relay.serve("sessions", self._sessions_service)

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        assert self._websocket_server is not None
        return int(self._websocket_server.sockets[0].getsockname()[1])

    async def start(self, *, reuse_port: bool = False) -> None:
        """Migrate, restore (or, in a cluster, take over) the unfinished matches, and
        listen; ``reuse_port``: bind with SO_REUSEPORT, beside the other workers of
        ``gaps-server --workers``."""
        await self.database.migrate()
        if self.settings.redis_url:
            self.broker = await RedisBroker.connect(self.settings.redis_url)
            if self.leases is not None:
                self.relay = Relay(self.broker, node=self.leases.owner, refusal=_unavailable)
                await self.relay.start()
            self._build_services()
        self.journal.start()
        restored = await self.lobby.restore(default_countdown_s=self.settings.countdown_s)
        if restored:
            log.info("restored matches", extra={"matches": [m.code for m in restored]})
        self.lobby.start_leases()
        await self.leadership.start()
        self.par_worker.start()
        self._websocket_server = await serve(
            self._session,
            self.settings.host,
            self.settings.port,
            process_request=self._http,
            max_size=protocol.MAX_READ_BYTES,
            write_limit=self.limits.max_pending_bytes,
            reuse_port=reuse_port,
            # Frames are a few hundred bytes: deflating each one cost about 13% of the
            # server's time under load and a compressor per connection, for little saved.
            compression=None,
        )
        log.info(
            "listening",
            extra={
                "host": self.settings.host,
                "port": self.port,
                "database": "sqlite" if self.database.is_sqlite else "postgresql",
                "broker": type(self.broker).__name__,
            },
        )

    async def close(self, *, drain_timeout_s: float = 10.0) -> None:
        """Shut down gracefully: stop accepting connections; answer every request taken
        and refuse later ones with ``shutting_down`` (for at most ``drain_timeout_s``);
        close every connection with 1001 (going away); let the matches answer what they
        have queued; commit the journal; close the database. Nothing is abandoned or
        ended: the next start restores every match."""
        if self._websocket_server is not None:
            self._websocket_server.server.close()  # the listening sockets only
            self.draining = True
            answering = [
                asyncio.ensure_future(session.idle.wait())
                for session in self.sessions
                if not session.idle.is_set()
            ]
            if answering:
                _, pending = await asyncio.wait(answering, timeout=drain_timeout_s)
                for waiting in pending:
                    waiting.cancel()
                if pending:
                    log.warning("requests unanswered at shutdown", extra={"count": len(pending)})
            if self._websocket_server.connections:
                await asyncio.sleep(DRAIN_LINGER_S)
            self._websocket_server.close()
            await self._websocket_server.wait_closed()
        await self.leadership.close()
        await self.lobby.close()
        if self.relay is not None:
            await self.relay.close()
        await self.par_worker.close()
        await self.journal.close()
        await self.broker.close()
        await self.database.dispose()
        log.info("stopped")

    async def _session(self, connection: ServerConnection) -> None:
        await Session(self, connection).run()

    async def _lead(self) -> None:
        """This process leads the cluster: run the tournaments and the quick-match queue
        from what the database holds."""
        await self.tournaments.resume()
        self.matchmaker.start()

    async def _stop_leading(self) -> None:
        await self.matchmaker.close()
        await self.tournaments.close()

    async def _tell_matched(self, node: str, player_id: int, match: Match) -> None:
        """The matchmaker seated ``player_id``, connected to ``node``, in ``match``."""
        if self.relay is None or node == self.relay.node:
            await self._matched(player_id, match)
        else:
            await self.relay.call(
                node, "sessions", "matched", {"player_id": player_id, "code": match.code}
            )

    async def _sessions_service(self, method: str, args: dict[str, Any], _caller: str) -> Any:
        if method != "matched":
            raise ServerError("internal_error", f"no sessions method {method!r}")
        await self._matched(args["player_id"], await self.lobby.find(args["code"]))

    async def _matched(self, player_id: int, match: MatchHandle) -> None:
        for session in list(self.sessions):
            if session.queued is not None and session.player and session.player.id == player_id:
                await session.quick_matched(match)

    def _match_moved(self, code: str) -> None:
        """A match moved to another process: the connections that follow it here join
        it again after a reconnection (its events are numbered anew there)."""
        for session in list(self.sessions):
            if code in session.seats or code in session.spectating:
                session.close_for_move(code)

    # -- plain HTTP on the same port --------------------------------------------------

    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        address = _address(connection, self.settings)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if self.connections_by_address[address] >= self.limits.max_connections_per_ip:
                return _respond(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    error_message(
                        ServerError(
                            "rate_limited",
                            f"{address} already has {self.limits.max_connections_per_ip} "
                            "connections open: close one first",
                        )
                    ),
                )
            return None
        if request.method != "GET":
            response = _respond(
                HTTPStatus.METHOD_NOT_ALLOWED,
                error_message(
                    ServerError("method_not_allowed", f"{request.method}: only GET is served")
                ),
            )
            response.headers["Allow"] = "GET"
            return response
        path, _, query_text = request.path.partition("?")
        match path.rstrip("/"):
            case "/livez":
                return _respond(HTTPStatus.OK, {"status": "alive"})
            case "/healthz":
                return await self._readiness()
        page = web.response(path, request.headers)  # the web client (docs/web.md)
        if page is not None:
            return page
        try:
            wait_s = self.costly_by_address.take(address)
            if wait_s:
                raise rate_limited(wait_s)
            return _respond(HTTPStatus.OK, await self._http_get(path, _query_fields(query_text)))
        except ServerError as error:
            status = _HTTP_STATUS.get(error.code, HTTPStatus.BAD_REQUEST)
            response = _respond(status, error_message(error))
            retry_after_ms = error.details.get("retry_after_ms")
            if isinstance(retry_after_ms, int):
                response.headers["Retry-After"] = str(-(-retry_after_ms // 1000))
            return response

    async def _readiness(self) -> Response:
        """200 when every part the server needs answers, else 503 naming what fails."""
        failing = []
        if not await self.database.answers(timeout_s=READINESS_TIMEOUT_S):
            failing.append("database")
        if not await self.broker.ready():
            failing.append("broker")
        if failing:
            return _respond(
                HTTPStatus.SERVICE_UNAVAILABLE, {"status": "unavailable", "failing": failing}
            )
        return _respond(HTTPStatus.OK, {"status": "ok"})

    def is_operator(self, name: str) -> bool:
        """Whether ``name`` is an operator's: the configuration's list, in any case."""
        return name.lower() in {operator.lower() for operator in self.settings.operators}

    async def replay(self, code: str) -> dict[str, Any]:
        stored = await self.store.matches.replay(code.upper())
        if stored is None:
            raise ServerError("no_such_match", f"no match has code {code!r}")
        match = stored["match"]
        if match["status"] != "finished":
            raise ServerError("not_finished", f"match {code} has not finished: its seed is secret")
        if match["daily_date"] is not None and match["daily_date"] >= today():
            raise ServerError(
                "not_finished",
                f"match {code} is a daily challenge: its seed is secret until "
                f"{match['daily_date']} is over",
            )
        return replay_document(stored)

    async def leaderboard(
        self,
        *,
        ruleset: str,
        by: str,
        period: str,
        day: date | None,
        cursor: str | None,
        limit: int,
        around_player: int | None,
        kind: str = "people",
    ) -> dict[str, Any]:
        boards = self.store.boards
        if around_player is not None:
            return await boards.around(
                ruleset=ruleset,
                by=by,
                period=period,
                day=day or today(),
                player_id=around_player,
                neighbours=limit // 2,
                kind=kind,
            )
        return await boards.page(
            ruleset=ruleset,
            by=by,
            period=period,
            day=day or today(),
            cursor=cursor,
            limit=limit,
            kind=kind,
        )

    async def rating(self, name: str) -> dict[str, Any]:
        player = await self.store.players.named(name)
        if player is None:
            raise ServerError("no_such_player", f"no player is called {name!r}")
        return {
            "player": {"id": player.id, "name": player.name, "bot": player.bot},
            **await self.store.ratings.of_player(player.id),
        }

    async def _http_get(self, path: str, query: dict[str, Any]) -> dict[str, Any]:
        """The read-only JSON resources (docs/protocol.md, HTTP)."""
        parts = [part for part in path.split("/") if part]
        match parts:
            case ["matches"]:
                return {"matches": await self.lobby.open_public()}
            case ["matches", code, "replay"]:
                return await self.replay(code)
            case ["leaderboards", ruleset]:
                fields = protocol.parse_request(
                    json.dumps({**query, "type": "leaderboard", "ruleset": ruleset})
                )
                assert isinstance(fields, protocol.GetLeaderboard)
                around = None
                if "player" in query:
                    found = await self.store.players.named(query["player"])
                    if found is None:
                        raise ServerError(
                            "no_such_player", f"no player is called {query['player']!r}"
                        )
                    around = found.id
                return await self.leaderboard(
                    ruleset=fields.ruleset.name,
                    by=fields.by,
                    period=fields.period,
                    day=fields.day,
                    cursor=fields.cursor,
                    limit=fields.limit,
                    around_player=around,
                    kind=fields.kind,
                )
            case ["ratings", name]:
                return await self.rating(name)
            case ["tournaments"]:
                return dict(await self.leadership.ask("tournament_list", {}))
            case ["tournaments", code]:
                return dict(await self.leadership.ask("tournament_standings", {"code": code}))
            case ["daily", ruleset]:
                board = protocol.parse_request(
                    json.dumps({**query, "type": "daily_board", "ruleset": ruleset})
                )
                assert isinstance(board, protocol.GetDailyBoard)
                return await self.daily.board(board.ruleset.name, board.day or today())
        raise ServerError("no_such_resource", f"no resource at /{'/'.join(parts)}")


_HTTP_STATUS: Final = {
    "rate_limited": HTTPStatus.TOO_MANY_REQUESTS,
    "no_such_match": HTTPStatus.NOT_FOUND,
    "no_such_player": HTTPStatus.NOT_FOUND,
    "no_such_tournament": HTTPStatus.NOT_FOUND,
    "no_such_resource": HTTPStatus.NOT_FOUND,
    "not_finished": HTTPStatus.CONFLICT,
}


# Query values are text; the protocol's fields of these names are integers.
_INTEGER_QUERY_FIELDS: Final = frozenset({"limit"})


def _query_fields(text: str) -> dict[str, Any]:
    """An HTTP query as protocol fields (the last value of a repeated name wins)."""
    fields: dict[str, Any] = {}
    for key, values in parse_qs(text).items():
        value = values[-1]
        fields[key] = int(value) if key in _INTEGER_QUERY_FIELDS and value.isdigit() else value
    return fields


def _address(connection: ServerConnection, settings: Settings) -> str:
    """Whom limits per address count ``connection`` against: its peer, or behind a trusted
    load balancer the client the balancer forwards (server/forwarded.py)."""
    peer = connection.remote_address
    if not peer:
        return "unknown"
    request = connection.request
    forwarded = request.headers.get("X-Forwarded-For") if request is not None else None
    return client_address(str(peer[0]), forwarded, trusted=settings.trusted_proxies)


def _unavailable(error: Exception) -> ServerError | None:
    """The refusal for a request that failed because a part the server needs is down,
    or None for any other failure (a bug)."""
    if isinstance(error, BrokerUnavailable):
        return ServerError(
            "broker_unavailable", "the link between server processes is down: retry in a moment"
        )
    if is_outage(error):
        return ServerError(
            "storage_unavailable", "the database could not be reached: nothing was changed, retry"
        )
    return None


def rate_limited(wait_s: float) -> ServerError:
    retry_after_ms = max(1, int(wait_s * 1000 + 0.999))
    return ServerError(
        "rate_limited",
        f"too many requests: wait {retry_after_ms} ms",
        retry_after_ms=retry_after_ms,
    )


#: Refusals to join an offered rematch that mean another is to be offered instead.
_REMATCH_GONE: Final = frozenset(
    {"already_started", "match_full", "match_finished", "no_such_match"}
)

#: Events waiting for a connection that does not read fast enough, past which an event
#: is dropped (the client resyncs): as many as a broker keeps for a slow subscriber.
MAX_PENDING_EVENTS: Final = 1024


def _respond(status: HTTPStatus, body: dict[str, Any]) -> Response:
    data = json.dumps(body).encode()
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Connection", "close"),
        ]
    )
    return Response(status.value, status.phrase, headers, data)


class Session:
    """One WebSocket connection: its player, the matches it watches, its replies."""

    def __init__(self, server: Server, connection: ServerConnection) -> None:
        self.server = server
        self.connection = connection
        self.address = _address(connection, server.settings)
        limits = server.limits
        self._requests = TokenBucket(
            burst=limits.request_burst, per_s=limits.requests_per_s, clock=server.clock
        )
        # Refusals drain a bucket of their own: a client that hits the limit now and then
        # is answered; one that keeps sending into it is closed.
        self._patience = TokenBucket(
            burst=limits.refusals_before_close, per_s=1.0, clock=server.clock
        )
        self._abusive = False
        self._closing: asyncio.Future[None] | None = None
        self.player: PlayerRecord | None = None
        self.watching: dict[str, Subscription] = {}
        self.outbox = Outbox(
            connection,
            send_timeout_s=server.limits.send_timeout_s,
            max_pending_events=MAX_PENDING_EVENTS,
            address=self.address,
        )
        # The matches this connection holds a seat of, and those it watches, by code.
        self.seats: dict[str, MatchHandle] = {}
        self.spectating: dict[str, MatchHandle] = {}
        self._after_reply: list[Callable[[], None]] = []
        #: The quick-match queue this player waits in (ruleset, since), and what says so.
        self.queued: tuple[str, float] | None = None
        self._requeueing: asyncio.Task[None] | None = None
        #: Clear while a request is being answered: a shutdown waits for it.
        self.idle = asyncio.Event()
        self.idle.set()

    async def run(self) -> None:
        connections = self.server.connections_by_address
        connections[self.address] += 1
        self.server.sessions.add(self)
        auth_deadline = asyncio.get_running_loop().call_later(
            self.server.limits.auth_timeout_s, self._auth_expired
        )
        try:
            async for frame in self.connection:
                self.idle.clear()
                self.outbox.hold()
                try:
                    await self._send_then_forward(await self.handle(frame))
                finally:
                    self.outbox.release()
                    self.idle.set()
                if self._abusive:
                    # Its unread requests keep the server from reading the close reply:
                    # do not wait the usual close timeout for it.
                    self.connection.close_timeout = ABUSER_CLOSE_TIMEOUT_S
                    await self.connection.close(1008, "too many requests")
                    break
                # One connection's burst must not hold the loop: requests already read
                # would otherwise be served back to back, and others wait.
                await asyncio.sleep(0)
        except (ConnectionClosed, Dropped):
            pass
        finally:
            self.server.sessions.discard(self)
            auth_deadline.cancel()
            connections[self.address] -= 1
            if not connections[self.address]:
                del connections[self.address]
            await self._cleanup()

    def _auth_expired(self) -> None:
        if self.player is None:
            seconds = self.server.limits.auth_timeout_s
            # Kept: the loop holds only a weak reference to a task.
            self._closing = asyncio.ensure_future(
                self.connection.close(1008, f"send hello or register within {seconds:g} s")
            )

    async def handle(self, frame: str | bytes) -> dict[str, Any]:
        request_id = None
        wait_s = self._requests.take()
        try:
            try:
                request = parse_request(frame)
            except ServerError as error:
                if not wait_s:
                    raise
                request_id = error.details.get("id")
            else:
                request_id = request.id
            if self.server.draining:
                raise ServerError(
                    "shutting_down", "the server is shutting down: reconnect in a moment"
                )
            if wait_s:
                raise self._refuse(wait_s)
            self._charge(request)
            return {"id": request_id, **await self.dispatch(request)}
        except ServerError as error:
            return error_message(error, request_id)
        except Exception as error:
            refusal = _unavailable(error)
            if refusal is not None:
                log.warning(refusal.code, extra={"error": repr(error)[:300]})
                return error_message(refusal, request_id)
            log.exception("request failed", extra={"frame": str(frame)[:200]})
            return error_message(
                ServerError("internal_error", "the server failed on this request"), request_id
            )

    def _charge(self, request: protocol.Request) -> None:
        """Take a costly request from the address's and the player's budgets."""
        if not isinstance(request, COSTLY_REQUESTS):
            return
        # Both budgets are asked before either is charged: a refusal costs neither.
        by_address, by_player = self.server.costly_by_address, self.server.costly_by_player
        wait_s = by_address.wait_s(self.address)
        if self.player is not None:
            wait_s = max(wait_s, by_player.wait_s(self.player.id))
        if wait_s:
            raise self._refuse(wait_s)
        by_address.take(self.address)
        if self.player is not None:
            by_player.take(self.player.id)

    def _refuse(self, wait_s: float) -> ServerError:
        if self._patience.take():
            self._abusive = True
        return rate_limited(wait_s)

    async def dispatch(self, request: protocol.Request) -> dict[str, Any]:
        match request:
            case Register(name=name, bot=bot):
                return await self.register(name, bot=bot)
            case Hello(token=token):
                return await self.hello(token)
            case Ping():
                return {"type": "pong", "server_time": _now()}
        player = self._require_player()
        lobby = self.server.lobby
        leader = self.server.leadership
        match request:
            case CreateMatch():
                return await self.create(player, request)
            case ListMatches():
                return {"type": "matches", "matches": await lobby.open_public()}
            case JoinMatch(code=code, role=role):
                return await self.join(player, await lobby.find(code), role)
            case LeaveMatch(code=code):
                return await self.leave(player, code)
            case Ready(code=code, ready=ready):
                await (await self._match(code)).set_ready(player.id, ready)
                return {"type": "ok"}
            case StartMatch(code=code):
                await (await self._match(code)).start_by(player.id)
                return {"type": "ok"}
            case Rematch(code=code, same_seed=same_seed):
                return await self.rematch(player, await self._match(code), same_seed)
            case Play(code=code, seq=seq, action=action):
                return await (await self._match(code)).play(player.id, seq, action)
            case Resync(code=code, since=since):
                return await (await self._match(code)).resync(player.id, since)
            case GetReplay(code=code):
                return {"type": "replay", "replay": await self.server.replay(code)}
            case GetLeaderboard():
                return {
                    "type": "leaderboard",
                    **await self.server.leaderboard(
                        ruleset=request.ruleset.name,
                        by=request.by,
                        period=request.period,
                        day=request.day,
                        cursor=request.cursor,
                        limit=request.limit,
                        around_player=player.id if request.around_me else None,
                        kind=request.kind,
                    ),
                }
            case GetRating(name=wanted):
                return {"type": "rating", **await self.server.rating(wanted or player.name)}
            case CreateTournament():
                created = await leader.ask(
                    "tournament_create",
                    {
                        "host_id": player.id,
                        "name": request.name,
                        "ruleset": request.ruleset.name,
                        "rounds": request.rounds,
                        "max_players": request.max_players,
                        "round_time_limit_s": request.round_time_limit_s,
                        "start_at": request.start_at.isoformat() if request.start_at else None,
                        "bots": request.bots,
                    },
                )
                await self._follow(tournament_channel(created["tournament"]["code"]))
                return {"type": "tournament", **created}
            case JoinTournament(code=code):
                # Followed first: what is published from now on comes after the reply.
                await self._follow_tournament(code)
                joined = await leader.ask(
                    "tournament_join",
                    {"code": code, "player_id": player.id, "name": player.name, "bot": player.bot},
                )
                return {"type": "tournament", **joined}
            case RemoveEntrant(code=code, player=removed, reason=reason):
                answer = await leader.ask(
                    "tournament_remove",
                    {"code": code, "player_id": player.id, "player": removed, "reason": reason},
                )
                return {"type": "tournament", **answer}
            case StartTournament(code=code):
                started = await leader.ask(
                    "tournament_start", {"code": code, "player_id": player.id}
                )
                return {"type": "tournament", **started}
            case ListTournaments():
                return {"type": "tournaments", **await leader.ask("tournament_list", {})}
            case GetStandings(code=code):
                standings = await leader.ask("tournament_standings", {"code": code})
                return {"type": "standings", **standings}
            case ResyncTournament(code=code, since=since):
                await self._follow_tournament(code)
                return dict(await leader.ask("tournament_resync", {"code": code, "since": since}))
            case PlayDaily(ruleset=ruleset):
                match = await self.server.daily.start(
                    player.id, player.name, ruleset, bot=player.bot
                )
                return {"type": "daily_started", **await self._attach(match)}
            case GetDailyBoard(ruleset=ruleset, day=day):
                return {
                    "type": "daily_board",
                    **await self.server.daily.board(ruleset.name, day or today()),
                }
            case QuickMatch(ruleset=ruleset):
                if player.bot and not self.server.settings.quick_match_bots:
                    raise bots_not_allowed(
                        "quick match is for people on this server: bots may not queue",
                        refused_by="quick_match",
                    )
                waiting = await self._enqueue(ruleset.name, waited_s=0.0)
                self.queued = (ruleset.name, time.monotonic())
                if self._requeueing is None:
                    self._requeueing = asyncio.create_task(self._stay_queued())
                return {"type": "queued", "ruleset": ruleset.name, "waiting": waiting}
            case CancelQuickMatch():
                self._leave_queue()
                return {
                    "type": "ok",
                    "cancelled": await leader.ask("quick_cancel", {"player_id": player.id}),
                }
            case ListReviews() | DecideReview() | Suspend() | GetAuditLog():
                return await self._operate(player, request)
        raise AssertionError(f"unhandled request {request!r}")

    async def _operate(
        self, player: PlayerRecord, request: ListReviews | DecideReview | Suspend | GetAuditLog
    ) -> dict[str, Any]:
        """An operator's request (docs/fair-play.md); anyone else is refused."""
        if not self.server.is_operator(player.name):
            raise ServerError("not_operator", f"{player.name} is not an operator of this server")
        reviews = self.server.store.reviews
        now = datetime.now(UTC)
        match request:
            case ListReviews():
                return {"type": "reviews", "reviews": await reviews.held()}
            case DecideReview(decision="clear", code=code, name=name, reason=reason):
                await reviews.clear(
                    code=code, name=name, operator=player.name, reason=reason, at=now
                )
            case DecideReview(code=code, name=name, reason=reason):
                await reviews.void(
                    code=code, name=name, operator=player.name, reason=reason, at=now
                )
            case Suspend(name=name, reason=reason):
                await reviews.suspend(name=name, operator=player.name, reason=reason, at=now)
            case GetAuditLog():
                return {
                    "type": "audit_log",
                    "entries": [entry.to_json() for entry in await reviews.audit_log()],
                }
        log.info(
            "operator decision",
            extra={"operator": player.name, "request": type(request).__name__},
        )
        return {"type": "ok"}

    async def _match(self, code: str) -> MatchHandle:
        """The match ``code``: the one this connection holds, else wherever it runs."""
        code = code.upper()
        held = self.seats.get(code) or self.spectating.get(code)
        return held if held is not None else await self.server.lobby.find(code)

    def close_for_move(self, code: str) -> None:
        """Close the connection (1012: reconnect) because match ``code``, which it
        follows, moved to another process: the client's reconnection joins it there."""
        if self._closing is None:
            log.info("match moved: connection closed", extra={"match": code})
            self._closing = asyncio.ensure_future(
                self.connection.close(1012, f"match {code} moved: reconnect")
            )

    async def _attach(self, match: MatchHandle) -> dict[str, Any]:
        """Take this player's seat in ``match`` on this connection, and watch it; the
        match's snapshot as they see it."""
        assert self.player is not None
        # Watched first: a match the server started (a daily challenge) may deal while
        # the seat is being taken, and the player must see the deal.
        await self._watch(match)
        if match.code not in self.seats:
            try:
                await match.join(self.player.id, self.player.name, bot=self.player.bot)
            except BaseException:
                self._unfollow(match.channel)
                raise
            self.seats[match.code] = match
        return await match.snapshot(self.player.id)

    async def quick_matched(self, match: MatchHandle) -> None:
        """The matchmaker seated this player: say so, unasked, with the match's snapshot."""
        self._leave_queue()
        await self._send_then_forward({"type": "matched", **await self._attach(match)})

    async def _enqueue(self, ruleset: str, *, waited_s: float) -> int:
        assert self.player is not None
        waiting = await self.server.leadership.ask(
            "quick_enqueue",
            {
                "ruleset": ruleset,
                "player_id": self.player.id,
                "name": self.player.name,
                "waited_s": waited_s,
                "bot": self.player.bot,
            },
        )
        return int(waiting)

    async def _stay_queued(self) -> None:
        """Say every few seconds that the player still waits: the queue forgets players
        nobody asks for, and a new leader's queue starts empty."""
        while self.queued is not None:
            await asyncio.sleep(self.server.settings.lease_renew_s)
            if self.queued is None:
                break
            ruleset, since = self.queued
            try:
                await self._enqueue(ruleset, waited_s=time.monotonic() - since)
            except (ServerError, BrokerUnavailable) as error:  # the leader changes: again
                log.info("quick match queue not reached", extra={"error": str(error)})

    def _leave_queue(self) -> None:
        self.queued = None
        if self._requeueing is not None:
            if self._requeueing is not asyncio.current_task():
                self._requeueing.cancel()
            self._requeueing = None

    async def _follow_tournament(self, code: str) -> None:
        await self._follow(
            tournament_channel(await self.server.leadership.ask("tournament_code", {"code": code}))
        )

    def _require_player(self) -> PlayerRecord:
        if self.player is None:
            raise ServerError("not_authenticated", "send hello with your token (or register) first")
        return self.player

    async def register(self, name: str, *, bot: bool = False) -> dict[str, Any]:
        if self.player is not None:
            raise ServerError("already_authenticated", f"this connection is {self.player.name}'s")
        if self.server.is_operator(name):
            # An operator's account is registered before it is listed: registering a
            # listed name would take the role.
            raise ServerError("name_taken", f"{name!r} is reserved: choose another name")
        token = new_token()
        try:
            self.player = await self.server.store.players.register(
                name, token_hash(token), datetime.now(UTC), bot=bot
            )
        except NameTaken:
            raise ServerError("name_taken", f"{name!r} is taken: choose another name") from None
        log.info("registered", extra={"player": name, "bot": bot})
        return {"type": "registered", "player": self._player_view(), "token": token}

    async def hello(self, token: str) -> dict[str, Any]:
        if self.player is not None:
            raise ServerError("already_authenticated", f"this connection is {self.player.name}'s")
        player = await self.server.store.players.by_token_hash(token_hash(token))
        if player is None:
            raise ServerError("bad_token", "no player has this token")
        self.player = player
        return {
            "type": "welcome",
            "player": self._player_view(),
            "protocol": protocol.PROTOCOL_VERSION,
            "server_time": _now(),
            # Suspended from rated play: {since, reason}; null when not.
            "suspended": await self.server.store.reviews.suspension_of(player.id),
        }

    def _player_view(self) -> dict[str, Any]:
        assert self.player is not None
        return {"id": self.player.id, "name": self.player.name, "bot": self.player.bot}

    async def create(self, player: PlayerRecord, request: CreateMatch) -> dict[str, Any]:
        if player.bot and not request.bots:
            raise bots_not_allowed(
                "you are a declared bot: a match you create must let bots sit (bots: true)",
                refused_by="match",
            )
        options = MatchOptions(
            ruleset=request.ruleset,
            max_players=request.max_players,
            time_limit_s=request.time_limit_s,
            win_by=request.win_by,
            public=request.public,
            countdown_s=(
                request.countdown_s
                if request.countdown_s is not None
                else self.server.settings.countdown_s
            ),
            bots=request.bots,
        )
        match = await self.server.lobby.create(
            player.id, options, request.seed, seats=[(player.id, player.name, player.bot)]
        )
        try:
            await self._watch(match)
        except BrokerUnavailable:
            await match.leave(player.id)  # refused: the match goes with its only seat
            raise
        self.seats[match.code] = match
        return {"type": "match_created", **await match.snapshot(player.id)}

    async def join(self, player: PlayerRecord, match: MatchHandle, role: str) -> dict[str, Any]:
        if role == "spectator" and match.code not in self.seats:
            if match.code in self.spectating:
                return {"type": "joined", **await match.snapshot(None)}
            await self._watch(match)
            try:
                # Admitted and counted (not_watchable: a daily challenge before its end);
                # a seated player who asks to watch watches as a spectator.
                snapshot = await match.watch(player.id)
            except BaseException:
                self._unfollow(match.channel)
                raise
            self.spectating[match.code] = match
            return {"type": "joined", **snapshot}
        return {"type": "joined", **await self._attach(match)}

    async def rematch(
        self, player: PlayerRecord, finished: MatchHandle, same_seed: bool
    ) -> dict[str, Any]:
        """Seat ``player`` in the rematch of ``finished``: the one offered already, if it
        still takes them, else a new one, offered to the others (``rematch_offered`` on
        the finished match's events). The finished match's actor keeps the offer, so that
        players who ask at once, on any process, meet in one match."""
        offer = await finished.offer_rematch(player.id, same_seed)
        stale = None
        while True:
            if offer["code"] is not None and offer["code"] != stale:
                try:
                    snapshot = await self._attach(await self.server.lobby.find(offer["code"]))
                except ServerError as error:
                    if error.code not in _REMATCH_GONE:
                        raise
                    stale = offer["code"]  # started, full or gone: another one is offered
                else:
                    return self._rematch_reply(finished, same_seed, snapshot)
            created = await self._create_rematch(player, offer)
            try:
                offer = await finished.offer_rematch(player.id, same_seed, created.code, stale)
            except BaseException:
                await self.leave(player, created.code)
                raise
            if offer["code"] == created.code:
                snapshot = await created.snapshot(player.id)
                return self._rematch_reply(finished, same_seed, snapshot)
            # Someone else's offer came first: theirs is the rematch, this one goes.
            await self.leave(player, created.code)

    async def _create_rematch(self, player: PlayerRecord, offer: dict[str, Any]) -> Match:
        """A new match for the rematch, ``player`` its host and only seat (watched)."""
        options = offer["options"]
        match = await self.server.lobby.create(
            player.id,
            MatchOptions(
                ruleset=Ruleset.named(options["ruleset"]),
                max_players=options["max_players"],
                time_limit_s=options["time_limit_s"],
                win_by=options["win_by"],
                public=options["public"],
                countdown_s=options["countdown_s"],
                bots=options.get("bots", False),
            ),
            Seed.parse(offer["seed"]) if offer["seed"] is not None else None,
            seats=[(player.id, player.name, player.bot)],
        )
        try:
            await self._watch(match)
        except BrokerUnavailable:
            await match.leave(player.id)
            raise
        self.seats[match.code] = match
        return match

    @staticmethod
    def _rematch_reply(
        finished: MatchHandle, same_seed: bool, snapshot: dict[str, Any]
    ) -> dict[str, Any]:
        return {"type": "rematch", "of": finished.code, "same_seed": same_seed, **snapshot}

    async def leave(self, player: PlayerRecord, code: str) -> dict[str, Any]:
        match = await self._match(code)
        if match.code in self.spectating:
            del self.spectating[match.code]
            await match.unwatch()
        else:
            await match.leave(player.id)
            self.seats.pop(match.code, None)
        self._unfollow(match.channel)
        return {"type": "left", "match": match.code}

    async def _watch(self, match: MatchHandle) -> None:
        await self._follow(match.channel)

    async def _follow(self, channel: str) -> None:
        """Subscribe to a channel's events. Forwarding them starts once the reply is sent,
        so that the reply, which tells the last event's seq, comes first."""
        if channel in self.watching:
            return
        subscription = await self.server.broker.subscribe(channel)
        self.watching[channel] = subscription

        def start() -> None:
            if self.watching.get(channel) is subscription:  # not unfollowed before the reply
                subscription.listen(self.outbox.post)

        self._after_reply.append(start)

    async def _send(self, frame: str) -> None:
        """Send one reply, after what the outbox holds; a client that leaves it unread
        past the send timeout, with ``max_pending_bytes`` already waiting, is dropped."""
        await self.outbox.send(frame)

    async def _send_then_forward(self, message: dict[str, Any]) -> None:
        """Send ``message``, then start forwarding what ``_follow`` subscribed to."""
        await self._send(encode(message))
        starts, self._after_reply = self._after_reply, []
        for start in starts:
            start()

    def _unfollow(self, channel: str) -> None:
        subscription = self.watching.pop(channel, None)
        if subscription is not None:
            subscription.close()

    async def _cleanup(self) -> None:
        for channel in list(self.watching):
            self._unfollow(channel)
        self.outbox.close()
        if self.queued is not None and self.player is not None:
            self._leave_queue()
            try:
                await self.server.leadership.ask("quick_cancel", {"player_id": self.player.id})
            except (ServerError, BrokerUnavailable):
                pass  # the queue forgets players nobody asks for
        for match in self.seats.values():
            try:
                await match.disconnect(self.player.id if self.player else 0)
            except ServerError:  # shutting down: the restore gives them a grace period anew
                pass
        for watched in self.spectating.values():
            try:
                await watched.unwatch()
            except ServerError:
                pass


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
