"""One WebSocket connection: its player, what it follows, its limits and its replies.

A session reads one frame at a time: it parses the request (``server.protocol``), checks
the connection's and the player's limits, hands the request to its handler
(``server.handlers``: one module per noun) and sends the reply. Events of what the
connection follows are forwarded through its outbox, after the reply that tells the
last event it reflects.

A session holds match codes, never matches: each request finds its match through the
routes (``server.routes``), which tell the session when a match it follows moved to
another process (it is then closed with 1012, so that its client joins the match
afresh).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from gaps_protocol.messages import ServerReply, requests
from gaps_protocol.messages.common import Message
from gaps_protocol.messages.errors import Error
from gaps_protocol.messages.replies import Snapshot
from server import handlers, protocol
from server.broker import BrokerError
from server.clock import Cancel, iso
from server.errors import ServerError
from server.http import address_of
from server.outbox import Dropped, Outbox
from server.protocol import encode, error_message, parse_request
from server.ratelimit import TokenBucket
from server.refusals import rate_limited, unavailable
from server.remote import MatchHandle
from server.services import Services
from server.storage.players import PlayerRecord

log = logging.getLogger("gaps.server")

#: How long a connection closed for abuse has to answer the close.
ABUSER_CLOSE_TIMEOUT_S: Final = 1.0

#: Events waiting for a connection that does not read fast enough, past which an event
#: is dropped (the client resyncs): as many as a broker keeps for a slow subscriber.
MAX_PENDING_EVENTS: Final = 1024

#: Requests that change nothing and follow nothing: answered as soon as they are ready,
#: even while an earlier request of the connection waits (for the database, say).
ANSWERED_APART: Final = (
    requests.Ping,
    requests.GetLeaderboard,
    requests.GetRating,
    requests.GetReplay,
    requests.GetDailyBoard,
    requests.ListMatches,
    requests.ListTournaments,
    requests.GetStandings,
    requests.GetDealSheet,
    requests.Resync,
)


class Session:
    """One WebSocket connection."""

    def __init__(self, services: Services, connection: ServerConnection) -> None:
        self.services = services
        self.connection = connection
        self.address = address_of(connection, services.settings)
        limits = services.settings.limits
        clock = services.clock.monotonic
        self._requests = TokenBucket(
            burst=limits.request_burst, per_s=limits.requests_per_s, clock=clock
        )
        # Refusals drain a bucket of their own: a client that hits the limit now and then
        # is answered; one that keeps sending into it is closed.
        self._patience = TokenBucket(burst=limits.refusals_before_close, per_s=1.0, clock=clock)
        self._abusive = False
        self._closing: asyncio.Future[None] | None = None
        self.player: PlayerRecord | None = None
        self.watching: dict[str, Any] = {}
        self.outbox = Outbox(
            connection,
            send_timeout_s=limits.send_timeout_s,
            max_pending_events=MAX_PENDING_EVENTS,
            address=self.address,
        )
        #: The codes of the matches this connection holds a seat of, and of those it
        #: watches.
        self.seats: set[str] = set()
        self.spectating: set[str] = set()
        self._after_reply: list[Callable[[], None]] = []
        #: The quick-match request this player waits on: (ruleset, ticket, since).
        self.queued: tuple[str, str, float] | None = None
        self.requeueing: asyncio.Task[None] | None = None
        #: Clear while a request is being answered: a shutdown waits for it.
        self.idle = asyncio.Event()
        self.idle.set()
        self._in_flight = 0
        #: The requests that change something, answered one at a time, in order.
        #: Each with the instant it was received (``Metrics.received``).
        self._lane: asyncio.Queue[tuple[Any, protocol.Request, float]] = asyncio.Queue()
        self._lane_worker: asyncio.Future[None] | None = None
        self._apart: set[asyncio.Future[None]] = set()
        self._auth_deadline: Cancel | None = None

    async def run(self) -> None:
        services = self.services
        connections = services.connections_by_address
        connections[self.address] += 1
        services.sessions.add(self)
        self._auth_deadline = services.clock.call_later(
            services.settings.limits.auth_timeout_s, self._auth_expired
        )
        try:
            async for frame in self.connection:
                self._take(frame)
                if self._abusive:
                    # The refusal that made it so is sent first.
                    await asyncio.gather(*self._apart, return_exceptions=True)
                    # Its unread requests keep the server from reading the close reply:
                    # do not wait the usual close timeout for it.
                    self.connection.close_timeout = ABUSER_CLOSE_TIMEOUT_S
                    await self.connection.close(1008, "too many requests")
                    break
                # One connection's burst must not hold the loop: requests already read
                # would otherwise be taken back to back, and others wait.
                await asyncio.sleep(0)
        except (ConnectionClosed, Dropped):
            pass
        finally:
            services.sessions.discard(self)
            if self._auth_deadline is not None:
                self._auth_deadline()
            connections[self.address] -= 1
            if not connections[self.address]:
                del connections[self.address]
            await self._finish_lanes()
            await self._cleanup()

    def _take(self, frame: str | bytes) -> None:
        """Take one frame: a request that changes something joins the ordered lane (its
        reply comes after those of the requests before it, and before the events it
        causes); a read, a ping or a refusal is answered apart, at once, even while an
        earlier request waits (for the database, say)."""
        received = self.services.metrics.received()
        taken = self._prepare(frame)
        self._busy(+1)
        if isinstance(taken, Error) or isinstance(taken[1], ANSWERED_APART):
            task = asyncio.ensure_future(self._answer_apart(taken, received))
            self._apart.add(task)
            task.add_done_callback(self._apart.discard)
            return
        self._lane.put_nowait((*taken, received))
        if self._lane_worker is None:
            self._lane_worker = asyncio.ensure_future(self._answer_in_order())

    async def _answer_in_order(self) -> None:
        while True:
            request_id, request, received = await self._lane.get()
            self.outbox.hold()
            try:
                reply = await self._answer(request_id, request)
                await self.send_then_forward(reply)
                self.services.metrics.answered(reply, received)
            except (ConnectionClosed, Dropped):
                pass  # the reader sees the connection go: nothing more is sent
            finally:
                self.outbox.release()
                self._busy(-1)

    async def _answer_apart(
        self, taken: Error | tuple[Any, Any], received: float
    ) -> None:
        try:
            reply = taken if isinstance(taken, Error) else await self._answer(*taken)
            await self.outbox.send(encode(reply), apart=True)
            self.services.metrics.answered(reply, received)
        except (ConnectionClosed, Dropped):
            pass
        finally:
            self._busy(-1)

    def _busy(self, change: int) -> None:
        """Count the requests taken and not yet answered: a shutdown waits for them."""
        self._in_flight += change
        if self._in_flight:
            self.idle.clear()
        else:
            self.idle.set()

    async def _finish_lanes(self) -> None:
        """Let the requests already taken be carried out (their replies go nowhere once
        the connection is closed), then stop the lane."""
        await self.idle.wait()
        if self._lane_worker is not None:
            self._lane_worker.cancel()
            await asyncio.gather(self._lane_worker, return_exceptions=True)
            self._lane_worker = None

    def _auth_expired(self) -> None:
        if self.player is None and self._closing is None:
            seconds = self.services.settings.limits.auth_timeout_s
            # Kept: the loop holds only a weak reference to a task.
            self._closing = asyncio.ensure_future(
                self.connection.close(1008, f"send hello or register within {seconds:g} s")
            )

    def _prepare(self, frame: str | bytes) -> Error | tuple[Any, protocol.Request]:
        """Parse ``frame`` and take it from the budgets: (its id, the request) to answer,
        or the error message that refuses it at once."""
        request_id = None
        wait_s = self._requests.take()
        try:
            request: protocol.Request | None = None
            try:
                request = parse_request(frame)
            except ServerError as error:
                if not wait_s:
                    raise
                request_id = error.details.get("id")  # refused for the rate, below
            else:
                request_id = request.id
            if self.services.draining:
                raise ServerError(
                    "shutting_down", "the server is shutting down: reconnect in a moment"
                )
            if wait_s:
                raise self._refuse(wait_s, "requests_per_connection")
            assert request is not None
            self._charge(request)
        except ServerError as error:
            return error_message(error, request_id)  # type: ignore[arg-type]
        return request_id, request

    async def handle(self, frame: str | bytes) -> ServerReply:
        """The reply to one frame (an error message for a refused request)."""
        taken = self._prepare(frame)
        if isinstance(taken, Error):
            return taken
        return await self._answer(*taken)

    async def _answer(self, request_id: Any, request: protocol.Request) -> ServerReply:
        """The reply to a request taken (an error message if it is refused)."""
        try:
            return await handlers.dispatch(self, request)
        except ServerError as error:
            return error_message(error, request_id)
        except Exception as error:
            refusal = unavailable(error)
            if refusal is not None:
                # An outage is logged once each way (server.outages), not once a request;
                # the broker tells its own.
                log.debug(refusal.code, extra={"error": repr(error)[:300]})
                if refusal.code == "storage_unavailable":
                    self.services.storage_outage.failed("a request", error)
                return error_message(refusal, request_id)
            log.exception("request failed", extra={"request": type(request).__name__})
            return error_message(
                ServerError("internal_error", "the server failed on this request"), request_id
            )

    def _charge(self, request: protocol.Request) -> None:
        """Take a costly request from the address's and the player's budgets."""
        if not isinstance(request, handlers.COSTLY_REQUESTS):
            return
        # Both budgets are asked before either is charged: a refusal costs neither.
        by_address = self.services.costly_by_address
        by_player = self.services.costly_by_player
        wait_s, limit = by_address.wait_s(self.address), "costly_per_address"
        if self.player is not None:
            player_wait_s = by_player.wait_s(self.player.id)
            if player_wait_s > wait_s:
                wait_s, limit = player_wait_s, "costly_per_player"
        if wait_s:
            raise self._refuse(wait_s, limit)
        by_address.take(self.address)
        if self.player is not None:
            by_player.take(self.player.id)

    def _refuse(self, wait_s: float, limit: str) -> ServerError:
        """The refusal of a request ``limit`` (``server.metrics.RATE_LIMITS``) does not
        allow for ``wait_s``."""
        self.services.metrics.limited(limit)
        if self._patience.take():
            self._abusive = True
        return rate_limited(wait_s)

    # -- what handlers use ------------------------------------------------------------------

    def require_player(self) -> PlayerRecord:
        if self.player is None:
            raise ServerError("not_authenticated", "send hello with your token (or register) first")
        return self.player

    def now(self) -> str:
        """The server's time, as replies give it."""
        return iso(self.services.clock.now_ms())

    async def match(self, code: str) -> MatchHandle:
        """The match ``code``, wherever it runs (``server.routes``)."""
        return await self.services.routes.find(code)

    async def seat(self, match: MatchHandle) -> Snapshot:
        """Take this player's seat in ``match`` on this connection, and follow it; the
        match's snapshot as they see it."""
        player = self.require_player()
        # Followed first: a match the server started (a daily challenge) may deal while
        # the seat is being taken, and the player must see the deal.
        await self.follow(match.channel)
        if match.code not in self.seats:
            try:
                await match.join(player.id, player.name, bot=player.bot)
            except BaseException:
                self.unfollow(match.channel)
                raise
            self.seats.add(match.code)
            self.services.routes.follow(match)
        return await match.snapshot(player.id)

    async def spectate(self, match: MatchHandle) -> Snapshot:
        """Watch ``match`` as a spectator on this connection; its snapshot."""
        player = self.require_player()
        if match.code in self.spectating:
            return await match.snapshot(None)
        await self.follow(match.channel)
        try:
            # Admitted and counted (not_watchable: a daily challenge before its end);
            # a seated player who asks to watch watches as a spectator.
            snapshot = await match.watch(player.id)
        except BaseException:
            self.unfollow(match.channel)
            raise
        self.spectating.add(match.code)
        self.services.routes.follow(match)
        return snapshot

    async def stop_following(self, match: MatchHandle) -> None:
        """Give up this connection's seat (leaving it) or watch of ``match``."""
        player = self.require_player()
        if match.code in self.spectating:
            self.spectating.discard(match.code)
            await match.unwatch()
            self.services.routes.unfollow(match.code)
        else:
            await match.leave(player.id)
            if match.code in self.seats:
                self.seats.discard(match.code)
                self.services.routes.unfollow(match.code)
        self.unfollow(match.channel)

    async def follow(self, channel: str) -> None:
        """Subscribe to a channel's events. Forwarding them starts once the reply is sent,
        so that the reply, which tells the last event's seq, comes first."""
        if channel in self.watching:
            return
        subscription = await self.services.broker.subscribe(channel)
        self.watching[channel] = subscription

        def start() -> None:
            if self.watching.get(channel) is subscription:  # not unfollowed before the reply
                subscription.listen(self.outbox.post)

        self._after_reply.append(start)

    def unfollow(self, channel: str) -> None:
        subscription = self.watching.pop(channel, None)
        if subscription is not None:
            subscription.close()

    async def send_then_forward(self, message: Message) -> None:
        """Send ``message``, then start forwarding what ``follow`` subscribed to."""
        await self.outbox.send(encode(message))
        starts, self._after_reply = self._after_reply, []
        for start in starts:
            start()

    def close_for_move(self, code: str) -> None:
        """Close the connection (1012: reconnect) because match ``code``, which it
        follows, moved to another process: the client's reconnection joins it there."""
        if self._closing is None:
            log.info("match moved: connection closed", extra={"match": code})
            self._closing = asyncio.ensure_future(
                self.connection.close(1012, f"match {code} moved: reconnect")
            )

    async def _cleanup(self) -> None:
        for channel in list(self.watching):
            self.unfollow(channel)
        self.outbox.close()
        await handlers.quick.forget(self)
        routes = self.services.routes
        player_id = self.player.id if self.player else 0
        for code in self.seats | self.spectating:
            try:
                match = await routes.find(code)
                if code in self.seats:
                    await match.disconnect(player_id)
                else:
                    await match.unwatch()
            except (ServerError, BrokerError):
                pass  # gone, moved or shutting down: its seat times out by itself
            finally:
                routes.unfollow(code)
