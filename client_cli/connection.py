"""The protocol client: one WebSocket to the server, spoken as docs/protocol.md says.

The protocol itself (request ids and replies, events in order with a resync over a gap,
the rejoin after a reconnect, the resend of an unacknowledged action with its ``seq``, the
retries of a refusal for now, every frame decoded strictly into its type) is
``gaps_protocol.ClientSession``'s,
without I/O; this module runs it over asyncio and websockets: it opens the sockets,
sends the session's frames, feeds it what comes and the time, and wakes it when it asks.

* Each reply is matched to its request. An ``error`` reply raises ``ServerRefused`` with
  the server's ``code``, ``message`` and ``reason``.
* Events are handed to the listeners in ``seq`` order, each once, a gap filled by a resync.
* When the connection drops, it reconnects by itself (with a token): ``hello``, every
  match rejoined (its snapshot goes to the listeners) and resynced, every tournament
  entered followed again, the quick-match queue joined again; an action sent but not
  acknowledged goes again with the same ``seq``: the server applies it at most once. A
  refusal that means "not now" (``TRANSIENT_CODES``) is tried again with a growing pause
  for up to ``reconnect_for_s``: during a reconnect, and for requests that are safe to
  repeat (actions included: the server promises it applied none of them). A match the
  server no longer has is dropped, with a ``gone`` notice naming it and the reason.
* A frame that is not a server message of the protocol (a count that is not a whole
  number, a member missing, an event it does not have...) breaks the protocol: the
  connection stops for good (the message, naming the path of what is wrong, is its
  ``failure``), without a reconnect.

Requests are the protocol's typed values (``gaps_protocol.messages.requests``), and
``request`` returns the typed reply (``expect`` narrows it to the reply asked for); the
named requests (``join_match``, ``tournament_join``...) return the reply each expects.
The listeners are handed the typed messages too (``Listened``): every match event; every
snapshot (the ``match_created``, ``joined``, ``snapshot``, ``daily_started`` and
``rematch`` replies, and the unasked ``matched`` of a quick match); every tournament
event of the tournaments followed (each once, in order) and a tournament's resync
snapshot (a ``tournament`` reply with its ``standings`` and ``seq``) when the server no
longer has the events missed; and the connection's own notices (``ConnectionNotice``),
its ``state`` being ``lost`` (reconnecting), ``restored``, ``retrying`` (a request
refused for now goes again), ``failed`` (for good: the connection gave up), ``closed``,
or ``gone`` with the ``match`` (or ``tournament``) that could not be rejoined (followed)
after a reconnect. ``match_of`` says which match a message is about.

A listener added late (after a join's reply) asks ``add_listener`` for a replay: of a
match, every snapshot and event delivered so far; of a tournament, every event (or
snapshot) delivered after the ``tournament_join`` reply, which reflects those before. A
listener added after the connection failed is told so at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, TypeVar

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from gaps_protocol import (
    MATCH_SNAPSHOTS,
    RECONNECT_FOR_S,
    REQUEST_TIMEOUT_S,
    RETRY_FIRST_S,
    RETRY_MOST_S,
    TRANSIENT_CODES,
    ClientSession,
    Closed,
    Delivered,
    Disconnect,
    Event,
    Failed,
    Gone,
    Lost,
    MatchTrack,
    Notice,
    NotInMatch,
    Reconnect,
    Refused,
    Reply,
    Restored,
    Retrying,
    Snapshot,
    State,
    TournamentTrack,
    Unanswered,
    describe,
    is_transient,
    pause_after,
)
from gaps_protocol.messages import ClientMessage, Error, MatchEvent, ServerReply
from gaps_protocol.messages.common import Player, Role
from gaps_protocol.messages.replies import (
    ActionOk,
    DailyStarted,
    Joined,
    Left,
    MatchCreated,
    Matched,
    Matches,
    Ok,
    Pong,
    Queued,
    Registered,
    RematchJoined,
    ReplayReply,
    Tournament,
    Welcome,
)
from gaps_protocol.messages.requests import (
    CancelQuickMatch,
    CreateMatch,
    CreateTournament,
    GetReplay,
    Hello,
    JoinMatch,
    JoinTournament,
    LeaveMatch,
    ListMatches,
    Ping,
    PlayDaily,
    QuickMatch,
    Ready,
    Register,
    Rematch,
    StartMatch,
    StartTournament,
)
from gaps_protocol.messages.views import MatchSummary, Replay

log = logging.getLogger("gaps.client")
log.addHandler(logging.NullHandler())

__all__ = [
    "RECONNECT_FOR_S", "REQUEST_TIMEOUT_S", "RETRY_FIRST_S", "RETRY_MOST_S", "TRANSIENT_CODES",
    "ClientError", "ConnectError", "Connection", "ConnectionLost", "ConnectionNotice",
    "Listened", "Listener", "ProtocolError", "ServerRefused", "expect", "match_of",
]

#: The WebSocket close code of a server that stops (a deploy, a restart): "going away".
GOING_AWAY: Final = 1001
#: How long one attempt to open a socket may take when reconnecting.
REOPEN_TIMEOUT_S: Final = 5.0


class ClientError(Exception):
    """Anything that went wrong talking to the server; the message is for people."""


class ConnectError(ClientError):
    """The server could not be reached."""


class ConnectionLost(ClientError):
    """The connection dropped (or gave up, or was closed) before the reply came."""


class ProtocolError(ClientError):
    """A reply of the protocol that does not answer what was asked (another type of
    reply, another round...): the message says what came instead."""


Reply_ = TypeVar("Reply_", bound=msgspec.Struct)


def expect(reply: ServerReply, kind: type[Reply_], asked: str) -> Reply_:
    """``reply`` as the ``kind`` of reply that ``asked`` (a request's type) has; another
    reply is a ``ProtocolError`` naming both."""
    if not isinstance(reply, kind):
        raise ProtocolError(f"the server answered {asked} with a "
                            f"{type(reply).__struct_config__.tag!r} message, not a "
                            f"{kind.__struct_config__.tag}")
    return reply


class ServerRefused(ClientError):
    """The server answered a request with an ``error``."""

    def __init__(self, reply: Error) -> None:
        self.reply = reply
        self.code: str = reply.code
        self.message = reply.message
        self.reason: str | None = reply.reason if isinstance(reply.reason, str) else None
        self.field: str | None = reply.field if isinstance(reply.field, str) else None
        super().__init__(self.message)

    @property
    def transient(self) -> bool:
        """Whether the refusal means "not now": the same request may go again later."""
        return is_transient(self.reply)

    def pause_s(self, pause_s: float) -> float:
        """How long to wait before trying again: ``pause_s``, or longer if the server
        said how long (``retry_after_ms`` of ``rate_limited``)."""
        return pause_after(self.reply, pause_s)

    def __str__(self) -> str:
        return describe(self.reply)


async def _open_socket(url: str, timeout: float) -> ClientConnection:
    try:
        return await connect(url, open_timeout=timeout, max_size=2**20, ping_interval=20)
    except InvalidURI:
        raise ConnectError(f"{url!r} is not a WebSocket URL") from None
    except InvalidHandshake as error:
        raise ConnectError(f"{url} did not accept a WebSocket ({error})") from None
    except TimeoutError:
        raise ConnectError(
            f"cannot reach the server at {url}: no answer in {timeout:g} s"
        ) from None
    except OSError as error:
        detail = error.strerror or str(error) or type(error).__name__
        raise ConnectError(f"cannot reach the server at {url}: {detail}") from None


NoticeState: TypeAlias = Literal["lost", "restored", "retrying", "failed", "closed", "gone"]


@dataclass(frozen=True)
class ConnectionNotice:
    """What the connection itself tells its listeners: ``state`` is ``lost``
    (reconnecting), ``restored``, ``retrying`` (a request refused for now, its ``code``,
    goes again), ``failed`` (for good: the connection gave up), ``closed``, or ``gone``
    with the ``match`` (or ``tournament``) that could not be rejoined (followed) after a
    reconnect; ``detail`` says it for people."""

    state: NoticeState
    detail: str
    code: str | None = None
    match: str | None = None
    tournament: str | None = None


#: What a listener is handed: the server's messages of the matches and tournaments
#: followed, typed as decoded, and the connection's own notices.
Listened: TypeAlias = Delivered | ConnectionNotice
Listener = Callable[[Listened], None]


def match_of(message: Listened) -> str | None:
    """The code of the match ``message`` is about, if it is one of a match's: an event or
    a snapshot."""
    if isinstance(message, MatchEvent):
        return message.match
    if isinstance(message, MATCH_SNAPSHOTS):
        return message.match.code
    return None


def _connection_notice(notice: Notice) -> ConnectionNotice | None:
    """A notice of the session as the listeners read it, if it is one for them."""
    if isinstance(notice, Lost):
        return ConnectionNotice("lost", notice.detail)
    if isinstance(notice, Restored):
        return ConnectionNotice("restored", notice.detail)
    if isinstance(notice, Retrying):
        return ConnectionNotice("retrying", notice.detail, code=notice.code)
    if isinstance(notice, Failed):
        return ConnectionNotice("failed", notice.reason)
    if isinstance(notice, Closed):
        return ConnectionNotice("closed", notice.detail)
    if isinstance(notice, Gone):
        return ConnectionNotice("gone", notice.detail, match=notice.match,
                                tournament=notice.tournament)
    return None


class Connection:
    """A live connection to a Gaps Arena server. Use ``await Connection.open(url)``."""

    def __init__(
        self, url: str, *, token: str | None = None, reconnect: bool = True,
        reconnect_for_s: float = RECONNECT_FOR_S, timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.session = ClientSession(url, token=token, reconnect=reconnect,
                                     reconnect_for_s=reconnect_for_s,
                                     request_timeout_s=timeout_s)
        self._listeners: list[Listener] = []
        self._waiters: dict[int, asyncio.Future[ServerReply]] = {}
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._outbox: asyncio.Queue[str] = asyncio.Queue()
        self._reconnector: asyncio.Task[None] | None = None
        self._closers: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None

    # -- the session's state -----------------------------------------------------------------

    @property
    def token(self) -> str | None:
        return self.session.token

    @token.setter
    def token(self, token: str | None) -> None:
        self.session.token = token

    @property
    def player(self) -> Player | None:
        """Who the connection is signed in as, as ``welcome`` and ``registered`` name them."""
        return self.session.player

    @player.setter
    def player(self, player: Player | None) -> None:
        self.session.player = player

    @property
    def reconnect(self) -> bool:
        return self.session.reconnect

    @property
    def reconnect_for_s(self) -> float:
        return self.session.reconnect_for_s

    @property
    def timeout_s(self) -> float:
        return self.session.request_timeout_s

    @property
    def tracks(self) -> dict[str, MatchTrack]:
        return self.session.tracks

    @property
    def tournaments(self) -> dict[str, TournamentTrack]:
        return self.session.tournaments

    @property
    def entered(self) -> set[str]:
        return self.session.entered

    @property
    def queued(self) -> str | None:
        return self.session.queued

    @property
    def failure(self) -> str | None:
        """Why the connection is gone for good (it gave up reconnecting), if it is."""
        return self.session.failure

    @property
    def connected(self) -> bool:
        return self.session.state is State.OPEN

    # -- opening and closing -----------------------------------------------------------

    @classmethod
    async def open(
        cls, url: str, *, token: str | None = None, reconnect: bool = True,
        open_timeout_s: float = 5.0, reconnect_for_s: float = RECONNECT_FOR_S,
    ) -> Connection:
        """Connect (and ``hello`` with ``token`` when one is given)."""
        connection = cls(url, token=token, reconnect=reconnect, reconnect_for_s=reconnect_for_s)
        connection._attach(await _open_socket(url, open_timeout_s))
        if token is not None:
            try:
                await connection.hello(token)
            except BaseException:
                await connection.close()
                raise
        return connection

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _attach(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._outbox = asyncio.Queue()
        self._writer = asyncio.create_task(self._write(socket, self._outbox))
        self._reader = asyncio.create_task(self._read(socket))
        self.session.connection_made(self._now())
        self._pump()

    async def close(self) -> None:
        """Close for good: no reconnect; pending requests fail with ``ConnectionLost``."""
        self.session.close(self._now())
        self._pump()
        if self._timer is not None:
            self._timer.cancel()
        tasks = [task for task in (self._reconnector, self._writer) if task is not None]
        for task in tasks:
            task.cancel()
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._socket.close(), 2)
        for task in (*tasks, *self._closers, *([self._reader] if self._reader else [])):
            with contextlib.suppress(BaseException):
                await task

    def add_listener(
        self, listener: Listener, *, replay: str | None = None,
        replay_tournament: str | None = None,
    ) -> None:
        """Hand ``listener`` every message from now on; with ``replay``, first every
        snapshot and event of that match delivered so far; with ``replay_tournament``,
        first every event of that tournament delivered since its ``tournament_join``
        reply. So nothing falls between a join's reply and a listener added after it.
        A listener added to a connection that failed already is told so at once."""
        for message in self.session.delivered(match=replay, tournament=replay_tournament):
            listener(message)
        if self.session.failure is not None:
            listener(ConnectionNotice("failed", self.session.failure))
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _notify(self, message: Listened) -> None:
        for listener in list(self._listeners):
            try:
                listener(message)
            except Exception:  # a listener's bug must not stop the reader
                log.exception("listener failed")

    # -- the session's I/O ---------------------------------------------------------------

    def _pump(self) -> None:
        """Do what the session asks: send its frames, act on its notices, arm its timer."""
        for frame in self.session.frames_to_send():
            self._outbox.put_nowait(frame)
        for notice in self.session.events():
            self._act_on(notice)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        wake_at = self.session.next_timer()
        if wake_at is not None:
            self._timer = asyncio.get_running_loop().call_at(wake_at, self._tick)

    def _tick(self) -> None:
        self._timer = None
        self.session.tick(self._now())
        self._pump()

    def _act_on(self, notice: Notice) -> None:
        if isinstance(notice, Reply | Refused | Unanswered):
            waiter = self._waiters.pop(notice.request_id, None)
            if waiter is None or waiter.done():
                return
            if isinstance(notice, Reply):
                waiter.set_result(notice.message)
            elif isinstance(notice, Refused):
                waiter.set_exception(ServerRefused(notice.message))
            elif notice.lost:
                waiter.set_exception(ConnectionLost(notice.reason))
            else:
                waiter.set_exception(ClientError(notice.reason))
        elif isinstance(notice, Event | Snapshot):
            self._notify(notice.message)
        elif isinstance(notice, Reconnect):
            self._reconnector = asyncio.create_task(self._reopen(notice.after_s))
        elif isinstance(notice, Disconnect):
            self._let_go(notice.code, notice.reason)
        else:
            connection_notice = _connection_notice(notice)
            if connection_notice is not None:
                self._notify(connection_notice)

    def _let_go(self, code: int, reason: str) -> None:
        """Close the current socket: the session is done with it."""
        socket, self._socket = self._socket, None
        if self._writer is not None:
            self._writer.cancel()
        if socket is not None:
            closer = asyncio.create_task(self._close_quietly(socket, code, reason))
            self._closers.add(closer)
            closer.add_done_callback(self._closers.discard)

    @staticmethod
    async def _close_quietly(socket: ClientConnection, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(socket.close(code, reason), 2)

    async def _reopen(self, after_s: float) -> None:
        """A reconnect the session asked for: a new socket after ``after_s``."""
        await asyncio.sleep(after_s)
        try:
            socket = await _open_socket(self.url, REOPEN_TIMEOUT_S)
        except ConnectError as error:
            self.session.connect_failed(self._now(), str(error))
            self._pump()
            return
        self._attach(socket)

    async def _write(self, socket: ClientConnection, outbox: asyncio.Queue[str]) -> None:
        with contextlib.suppress(ConnectionClosed):  # the reader tells the session
            while True:
                await socket.send(await outbox.get())

    async def _read(self, socket: ClientConnection) -> None:
        try:
            async for frame in socket:
                if socket is not self._socket:
                    break
                self._on_frame(frame if isinstance(frame, str) else frame.decode(errors="replace"))
        except ConnectionClosed:
            pass
        finally:
            if socket is self._socket:
                self._socket = None
                if self._writer is not None:
                    self._writer.cancel()
                self.session.connection_lost(self._now(),
                                             going_away=socket.close_code == GOING_AWAY)
                self._pump()

    def _on_frame(self, frame: str) -> None:
        self.session.receive(frame, self._now())
        self._pump()

    # -- requests ----------------------------------------------------------------------

    async def request(self, message: ClientMessage, *, retry: bool = False) -> ServerReply:
        """Send ``message`` and return its typed reply (``expect`` narrows it to the type
        asked for); an ``error`` reply raises ``ServerRefused``.

        The request waits for the connection if it is being restored. With ``retry``
        (only for requests that are safe to repeat), a request cut by a dropped connection
        is sent again once the connection is back, and one refused for now
        (``TRANSIENT_CODES``) is sent again after a pause that grows from ``RETRY_FIRST_S``
        to ``RETRY_MOST_S``, until ``reconnect_for_s`` has passed since the first such
        refusal: then that refusal is raised.
        """
        return await self._answer(self.session.request(message, self._now(), retry=retry))

    async def _answer(self, request_id: int) -> ServerReply:
        waiter: asyncio.Future[ServerReply] = asyncio.get_running_loop().create_future()
        self._waiters[request_id] = waiter
        self._pump()
        try:
            return await waiter
        finally:
            self._waiters.pop(request_id, None)

    # -- the protocol's requests ---------------------------------------------------------

    async def hello(self, token: str) -> Welcome:
        """Sign in as the player of ``token`` (kept for the reconnects)."""
        return expect(await self.request(Hello(token=token)), Welcome, "hello")

    async def register(self, name: str) -> Registered:
        """A new player ``name``; its token is kept for the reconnects."""
        return expect(await self.request(Register(name=name)), Registered, "register")

    async def ping(self) -> tuple[float, str]:
        """The round trip in seconds, and the server's time."""
        started = self._now()
        reply = expect(await self.request(Ping(), retry=True), Pong, "ping")
        return self._now() - started, reply.server_time

    async def create_match(self, **options: Any) -> MatchCreated:
        """Create a match with ``options``, the members of ``create_match``."""
        return expect(await self.request(CreateMatch(**options)), MatchCreated, "create_match")

    async def list_matches(self) -> list[MatchSummary]:
        reply = expect(await self.request(ListMatches(), retry=True), Matches, "list_matches")
        return list(reply.matches)

    async def join_match(self, code: str, role: Role = "player") -> Joined:
        return expect(await self.request(JoinMatch(code=code.upper(), role=role)), Joined,
                      "join_match")

    async def rematch(self, code: str, *, same_seed: bool = False) -> RematchJoined:
        """A seat in the rematch of finished match ``code`` (the one offered, or a new one
        offered to the others): the ``rematch`` reply, shaped like ``joined``."""
        return expect(await self.request(Rematch(code=code.upper(), same_seed=same_seed)),
                      RematchJoined, "rematch")

    async def leave_match(self, code: str) -> Left:
        return expect(await self.request(LeaveMatch(code=code)), Left, "leave_match")

    async def ready(self, code: str, ready: bool = True) -> Ok:
        return expect(await self.request(Ready(code=code, ready=ready)), Ok, "ready")

    async def start_match(self, code: str) -> Ok:
        return expect(await self.request(StartMatch(code=code)), Ok, "start_match")

    def forget(self, code: str) -> None:
        """Stop tracking match ``code`` (a finished tournament round): no rejoin on a
        reconnect, no more of its messages kept."""
        self.session.forget(code.upper())

    async def get_replay(self, code: str) -> Replay:
        reply = expect(await self.request(GetReplay(code=code.upper()), retry=True),
                       ReplayReply, "get_replay")
        return reply.replay

    async def daily(self, ruleset: str) -> DailyStarted:
        """Deal today's challenge: the ``daily_started`` reply (shaped like ``joined``)."""
        return expect(await self.request(PlayDaily(ruleset=ruleset)), DailyStarted,
                      "daily")

    async def quick_match(self, ruleset: str) -> Queued:
        """Wait in the quick-match queue: the ``queued`` reply. The match comes later,
        unasked, as a ``matched`` snapshot; a reconnect queues again."""
        return expect(await self.request(QuickMatch(ruleset=ruleset)), Queued, "quick_match")

    def quick_matched(self) -> asyncio.Future[Matched]:
        """The ``matched`` snapshot the quick-match queue sends this connection, when it
        comes; fails with ``ClientError`` when the connection is lost for good. Cancel it
        to stop listening."""
        matched: asyncio.Future[Matched] = asyncio.get_running_loop().create_future()

        def listen(message: Listened) -> None:
            if matched.done():
                return
            if isinstance(message, Matched):
                matched.set_result(message)
            elif isinstance(message, ConnectionNotice) and message.state == "failed":
                matched.set_exception(ClientError(message.detail))

        self.add_listener(listen)
        matched.add_done_callback(lambda _: self.remove_listener(listen))
        return matched

    async def quick_cancel(self) -> bool:
        """Leave the quick-match queue; whether we were in it."""
        reply = expect(await self.request(CancelQuickMatch()), Ok, "quick_cancel")
        return reply.cancelled is True

    async def tournament_create(self, **options: Any) -> Tournament:
        """Create a tournament with ``options``, the members of ``tournament_create`` (this
        connection then gets its events; the creator is not an entrant until
        ``tournament_join``)."""
        return expect(await self.request(CreateTournament(**options)), Tournament,
                      "tournament_create")

    async def tournament_join(self, code: str) -> Tournament:
        """Enter (or follow again) tournament ``code``; its events come from now on (those
        after the reply's ``seq``), and a reconnect follows it again."""
        return expect(await self.request(JoinTournament(code=code.upper())), Tournament,
                      "tournament_join")

    async def tournament_start(self, code: str) -> Tournament:
        return expect(await self.request(StartTournament(code=code.upper())), Tournament,
                      "tournament_start")

    async def act(self, code: str, action: str) -> ActionOk:
        """Play ``action`` in match ``code``; returns the ``action_ok`` reply.

        Actions of one match go one at a time, each with the next ``seq``. If the
        connection drops before the reply (a server restart, say), the same action goes
        again with the same ``seq`` once reconnected: the server applies it at most once,
        and answers a resend of one it had applied with its original reply
        (``duplicate``). A refusal for now (``storage_unavailable``, ``shutting_down``...)
        is retried as ``request`` says: the server applied nothing.
        """
        try:
            request_id = self.session.act(code, action, self._now())
        except NotInMatch as error:
            raise ClientError(str(error)) from None
        return expect(await self._answer(request_id), ActionOk, "action")
