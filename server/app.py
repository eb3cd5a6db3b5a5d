"""The server's composition root: every part built once, started, and shut down.

``Server`` owns the one ``Clock`` and hands it to every part. Starting it connects the
broker (Redis in a cluster), then builds the lobby, the routes to other processes'
matches, the daily challenge, the tournaments, the quick-match queue and leadership,
migrates the database, restores the matches, and listens: WebSocket sessions
(``server.session``) and plain HTTP (``server.http``) on one port, and ``/metrics``
(``server.metrics``) on a port of its own if one is set.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from websockets.asyncio.server import Server as WebSocketServer
from websockets.asyncio.server import ServerConnection, serve

from server import protocol
from server.broker import Broker, LocalBroker
from server.clock import Clock, SystemClock
from server.config import Settings
from server.daily import Daily
from server.deals import DealProver
from server.desk import Desk
from server.errors import ServerError
from server.handlers import quick
from server.http import Http, MetricsHttp
from server.leadership import Leadership
from server.lobby import Lobby
from server.match import Match
from server.matchmaker import Matchmaker
from server.metrics import Metrics, Sources
from server.outages import Outage
from server.par_worker import ParWorker
from server.ratelimit import Budgets
from server.reads import Reads
from server.redis_broker import RedisBroker
from server.refusals import unavailable
from server.relay import Relay
from server.relaymessages import AnyLeaderCommand, Matched
from server.remote import MatchHandle
from server.routes import Routes
from server.services import Services, Sessions
from server.session import Session
from server.signing import Signer
from server.storage.database import Database, database_url
from server.storage.journal import Journal
from server.storage.leader import LeaderLock
from server.storage.leases import MatchLeases, process_name
from server.storage.store import Store
from server.tournament import Tournaments

log = logging.getLogger("gaps.server")

#: How long a shutdown keeps refusing requests with ``shutting_down`` once every request
#: it took is answered, before it closes the connections: the requests already on their
#: way get a refusal rather than a close. With no connection open, nothing can be on its
#: way: the shutdown does not linger. (The network's time, not the server's clock.)
DRAIN_LINGER_S: Final = 0.2

#: A queued player not asked for in this many lease renewals is dropped from the queue.
QUEUE_STALE_RENEWALS: Final = 5

#: How long the readiness check waits for the database.
READINESS_TIMEOUT_S: Final = 2.0


class Server:
    """One server process.

    :param clock: the server's one clock (a fake one in tests).
    """

    def __init__(self, settings: Settings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self.limits = settings.limits
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.url = database_url(settings.database_url, data_dir=settings.data_dir)
        # With leases (PostgreSQL), a process stalled mid-transaction past its lease
        # loses its locks as it loses its leases.
        self.database = Database(self.url, idle_in_transaction_timeout_s=settings.lease_s)
        self.store = Store(self.database)
        self.journal = Journal(self.database, monotonic=self.clock.monotonic)
        self.metrics = Metrics(clock=self.clock)
        #: The outages of the database and of the broker, each logged once each way.
        self.storage_outage = Outage("storage", clock=self.clock.monotonic)
        self.broker_outage = Outage("broker", clock=self.clock.monotonic)
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
        # Proves the deals of winnable tournaments and of the daily challenge (its
        # processes start at the first solve).
        self.deal_prover = DealProver()
        self.par_worker = ParWorker(
            self.store.matches,
            workers=settings.par_workers,
            par_max_nodes=settings.par_max_nodes,
            par_time_budget_s=settings.par_time_budget_s,
        )
        #: Signs what the server publishes, with the cluster's key (server/signing.py).
        self.signer = Signer(
            self.store.signing_keys, clock=self.clock, key_file=settings.signing_key_file
        )
        self._websocket_server: WebSocketServer | None = None
        self._metrics_server: WebSocketServer | None = None
        self._services: Services | None = None

    # -- the parts, once built ------------------------------------------------------------

    @property
    def services(self) -> Services:
        assert self._services is not None, "the server is not started"
        return self._services

    @property
    def lobby(self) -> Lobby:
        return self.services.lobby

    @property
    def routes(self) -> Routes:
        return self.services.routes

    @property
    def broker(self) -> Broker:
        return self.services.broker

    @property
    def leadership(self) -> Leadership:
        return self.services.leadership

    @property
    def daily(self) -> Daily:
        return self.services.daily

    @property
    def sessions(self) -> Sessions:
        return self.services.sessions

    async def _build(self) -> None:
        """Connect the broker, then build every part on it (once)."""
        settings = self.settings
        clock = self.clock
        broker: Broker = LocalBroker()
        relay: Relay | None = None
        if settings.redis_url:
            broker = await RedisBroker.connect(settings.redis_url, outage=self.broker_outage)
            if self.leases is not None:
                relay = Relay(broker, node=self.leases.owner, refusal=unavailable)
                await relay.start()
        self.relay = relay
        lobby = Lobby(
            store=self.store,
            journal=self.journal,
            broker=broker,
            clock=clock,
            grace_s=settings.grace_s,
            max_history_events=settings.max_history_events,
            retain_finished_s=settings.retain_finished_s,
            max_open_matches_per_player=settings.limits.max_open_matches_per_player,
            leases=self.leases,
            renew_s=settings.lease_renew_s,
            outage=self.storage_outage,
        )
        lobby.on_end(self.par_worker.ended)
        routes = Routes(
            lobby=lobby, store=self.store, clock=clock, leases=self.leases, relay=relay
        )
        routes.on_moved(self._match_moved)
        daily = Daily(
            store=self.store,
            lobby=lobby,
            clock=clock,
            countdown_s=settings.countdown_s,
            prover=self.deal_prover,
        )
        self.tournaments = Tournaments(
            repository=self.store.tournaments,
            lobby=lobby,
            broker=broker,
            clock=clock,
            prover=self.deal_prover,
            countdown_s=settings.tournament_countdown_s,
            break_s=settings.tournament_break_s,
            max_history_events=settings.max_history_events,
            check_s=settings.lease_renew_s,
            retain_s=settings.retain_finished_s,
            outage=self.storage_outage,
        )
        leadership = Leadership(
            lock=self.leader_lock, relay=relay, clock=clock, renew_s=settings.lease_renew_s
        )
        leadership.on_change(elected=self._lead, deposed=self._stop_leading)
        self.matchmaker: Matchmaker | None = None
        self.desk: Desk | None = None
        limits = settings.limits
        self._services = Services(
            settings=settings,
            clock=clock,
            store=self.store,
            broker=broker,
            lobby=lobby,
            routes=routes,
            daily=daily,
            leadership=leadership,
            reads=Reads(
                store=self.store,
                clock=clock,
                daily=daily,
                routes=routes,
                leadership=leadership,
                signer=self.signer,
            ),
            costly_by_player=Budgets(
                burst=limits.costly_request_burst,
                per_s=limits.costly_requests_per_min / 60,
                clock=clock.monotonic,
            ),
            costly_by_address=Budgets(
                burst=limits.costly_request_burst_per_ip,
                per_s=limits.costly_requests_per_min_per_ip / 60,
                clock=clock.monotonic,
            ),
            metrics=self.metrics,
            storage_outage=self.storage_outage,
            node=relay.node if relay is not None else "local",
        )
        leadership.serve(self._desk)
        if relay is not None:
            relay.serve(Matched.service, self._sessions_service)
        self.http = Http(
            settings=settings,
            reads=self.services.reads,
            readiness=self._failing,
            costly_by_address=self.services.costly_by_address,
            connections_by_address=self.services.connections_by_address,
            metrics=self.metrics,
        )
        self.metrics.observe(
            Sources(
                sessions=self.services.sessions,
                lobby=lobby,
                tournaments=self.tournaments,
                matchmaker=lambda: self.matchmaker,
                leading=lambda: leadership.leading,
                broker=broker,
                journal=self.journal,
                par_worker=self.par_worker,
                outages=(self.storage_outage, self.broker_outage),
            )
        )

    # -- start and stop -------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        assert self._websocket_server is not None
        return int(self._websocket_server.sockets[0].getsockname()[1])

    @property
    def metrics_port(self) -> int | None:
        """The bound port of ``/metrics`` (None: not served)."""
        if self._metrics_server is None:
            return None
        return int(self._metrics_server.sockets[0].getsockname()[1])

    async def start(self, *, reuse_port: bool = False) -> None:
        """Migrate, restore (or, in a cluster, take over) the unfinished matches, and
        listen; ``reuse_port``: bind with SO_REUSEPORT, beside the other workers of
        ``gaps-server --workers``."""
        await self.database.migrate()
        await self.signer.start()
        await self._build()
        self.journal.start()
        lobby = self.lobby
        restored = await lobby.restore(default_countdown_s=self.settings.countdown_s)
        if restored:
            log.info("restored matches", extra={"matches": [m.code for m in restored]})
        lobby.start_leases()
        await self.leadership.start()
        self.par_worker.start()
        if self.settings.metrics_port is not None:
            self._metrics_server = await serve(
                self._refuse_session,  # never called: every request is answered as HTTP
                self.settings.metrics_host,
                self.settings.metrics_port,
                process_request=MetricsHttp(self.metrics).respond,
                compression=None,
            )
        self._websocket_server = await serve(
            self._session,
            self.settings.host,
            self.settings.port,
            process_request=self.http.respond,
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
                "metrics_port": self.metrics_port,
            },
        )

    async def close(self, *, drain_timeout_s: float = 10.0) -> None:
        """Shut down gracefully: stop accepting connections; answer every request taken
        and refuse later ones with ``shutting_down`` (for at most ``drain_timeout_s``);
        close every connection with 1001 (going away); let the matches answer what they
        have queued; commit the journal; close the database. Nothing is abandoned or
        ended: the next start restores every match."""
        services = self._services
        if self._websocket_server is not None and services is not None:
            self._websocket_server.server.close()  # the listening sockets only
            services.draining = True
            answering = [
                asyncio.ensure_future(session.idle.wait())
                for session in services.sessions
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
        if self._metrics_server is not None:
            self._metrics_server.close()
            await self._metrics_server.wait_closed()
        if services is not None:
            await services.leadership.close()
            await services.lobby.close()
            if self.relay is not None:
                await self.relay.close()
        await self.par_worker.close()
        await self.deal_prover.close()
        await self.journal.close()
        if services is not None:
            await services.broker.close()
        await self.database.dispose()
        log.info("stopped")

    async def _session(self, connection: ServerConnection) -> None:
        self.metrics.connections_opened += 1
        await Session(self.services, connection).run()

    @staticmethod
    async def _refuse_session(connection: ServerConnection) -> None:
        await connection.close(1008, "no WebSocket here")

    async def _failing(self) -> list[str]:
        """The parts the server needs that do not answer now. What the database says is
        told to its outage: the load balancer's checks end an outage that no request
        would."""
        failing = []
        if await self.database.answers(timeout_s=READINESS_TIMEOUT_S):
            self.storage_outage.recovered()
        else:
            self.storage_outage.failed("the readiness check", "no answer")
            failing.append("database")
        if not await self.broker.ready():
            failing.append("broker")
        return failing

    # -- leading the cluster ----------------------------------------------------------------

    async def _lead(self) -> None:
        """This process leads the cluster: run the tournaments and the quick-match queue
        from what the database holds."""
        await self.tournaments.resume()
        self.matchmaker = Matchmaker(
            outage=self.storage_outage,
            store=self.store,
            lobby=self.lobby,
            broker=self.broker,
            clock=self.clock,
            wait_s=self.settings.quick_wait_s,
            countdown_s=self.settings.countdown_s,
            notify=self._tell_matched,
            stale_s=QUEUE_STALE_RENEWALS * self.settings.lease_renew_s,
        )
        self.desk = Desk(tournaments=self.tournaments, matchmaker=self.matchmaker)

    async def _stop_leading(self) -> None:
        self.desk = None
        if self.matchmaker is not None:
            await self.matchmaker.shutdown()
            self.matchmaker = None
        await self.tournaments.close()

    async def _desk(self, command: AnyLeaderCommand, caller: str) -> Any:
        if self.desk is None:
            raise ServerError("broker_unavailable", "this process no longer leads: retry")
        return await self.desk.answer(command, caller)

    async def _tell_matched(self, node: str, player_id: int, match: Match) -> None:
        """The matchmaker seated ``player_id``, connected to ``node``, in ``match``."""
        if self.relay is None or node == self.relay.node:
            await self._matched(player_id, match)
        else:
            await self.relay.call(node, Matched(player_id=player_id, code=match.code))

    async def _sessions_service(self, command: Matched, _caller: str) -> None:
        await self._matched(command.player_id, await self.routes.find(command.code))

    async def _matched(self, player_id: int, match: MatchHandle) -> None:
        for session in self.services.sessions.of_player(player_id):
            if session.queued is not None and isinstance(session, Session):
                await quick.matched(session, match)

    def _match_moved(self, code: str) -> None:
        """A match moved to another process: the connections that follow it here join
        it again after a reconnection (its events are numbered anew there)."""
        for session in self.services.sessions.following(code):
            session.close_for_move(code)
