"""Leadership: the one process of a cluster that runs its singletons, and the way to it.

The tournament scheduler (round starts, breaks, scheduled starts) and the quick-match
queue must run once in a cluster. The process that holds the leader lock
(``server.storage.leader``) runs them; every process, the leader included, sends their
requests to the leader through ``ask``, which the relay carries to the leader's service
(or hands straight to it on the leader itself). Every ``renew_s`` each process checks:
the leader that its lock is still held (else it stops its singletons), the others
whether the lock is free (then one of them takes it, and starts the singletons from what
the database holds: ``on_elected``).

Without a leader lock (the embedded SQLite database: one process) this process leads
from its start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from server.clock import Clock
from server.errors import ServerError
from server.relay import NodeUnavailable, NodeUnreachable, Relay
from server.relaymessages import AnyLeaderCommand, LeaderCommand
from server.storage.leader import LeaderLock
from server.storage.outage import is_transient

log = logging.getLogger("gaps.leadership")

SERVICE: Final = LeaderCommand.service

Hook = Callable[[], Awaitable[None]]
#: What answers the leader's requests: ``handler(method, args, caller)`` (``server.desk``).
Handler = Callable[[AnyLeaderCommand, str], Awaitable[Any]]


class Leadership:
    """This process's part in leading the cluster.

    :param lock: the cluster's leader lock, or None when this process is alone.
    :param relay: how requests reach the leader (None when alone).
    :param renew_s: how often the lock is checked, or tried.
    """

    def __init__(
        self,
        *,
        lock: LeaderLock | None,
        relay: Relay | None,
        clock: Clock,
        renew_s: float,
    ) -> None:
        self._lock = lock
        self._relay = relay
        self._renew_s = renew_s
        self._clock = clock
        self.node = relay.node if relay is not None else "local"
        self.leading = False
        self._handler: Handler | None = None
        self._elected: list[Hook] = []
        self._deposed: list[Hook] = []
        self._known: tuple[str | None, float] = (None, 0.0)  # the leader, when read
        self._campaign: asyncio.Task[None] | None = None
        if relay is not None:
            relay.serve(SERVICE, self._serve)

    def serve(self, handler: Handler) -> None:
        """Answer what ``ask`` sends to the leader with ``handler``."""
        self._handler = handler

    def on_change(self, *, elected: Hook, deposed: Hook) -> None:
        """Start the singletons with ``elected``, stop them with ``deposed``."""
        self._elected.append(elected)
        self._deposed.append(deposed)

    async def start(self) -> None:
        """Lead now if the lock is free (or there is none); keep trying every
        ``renew_s`` until ``close``."""
        await self.campaign()
        if self._lock is not None:
            self._campaign = asyncio.create_task(self._keep_campaigning(), name="leadership")

    async def campaign(self) -> None:
        """Once: check the lock held, or try to take it; start or stop the singletons."""
        if self._lock is None:
            if not self.leading:
                await self._become_leader()
        elif self.leading:
            if not await self._lock.held():
                await self._step_down()
        elif await self._lock.try_acquire():
            log.info("leading the cluster", extra={"node": self.node})
            await self._become_leader()

    async def ask(self, command: AnyLeaderCommand) -> Any:
        """Have the leader answer ``command``, wherever it runs. Raises
        ``NodeUnavailable`` (a ``BrokerUnavailable``) when no leader can be reached now."""
        if self.leading or self._relay is None:
            return await self._serve(command, self.node)
        leader = await self._leader()
        if leader is None:
            raise NodeUnreachable("no process leads the cluster right now")
        try:
            return await self._relay.call(leader, command)
        except NodeUnavailable:
            self._known = (None, 0.0)
            raise

    async def close(self) -> None:
        """Stop campaigning; a leader stops its singletons and lets the lock go, so that
        another process leads at its next check."""
        if self._campaign is not None:
            self._campaign.cancel()
            await asyncio.gather(self._campaign, return_exceptions=True)
            self._campaign = None
        if self.leading:
            await self._step_down()

    # -- inside -------------------------------------------------------------------------

    async def _serve(self, command: AnyLeaderCommand, caller: str) -> Any:
        if not self.leading or self._handler is None:
            raise ServerError(
                "broker_unavailable", "this process no longer leads the cluster: retry"
            )
        return await self._handler(command, caller)

    async def _leader(self) -> str | None:
        assert self._lock is not None
        leader, read_at = self._known
        if leader is None or self._clock.monotonic() - read_at > self._renew_s:
            leader = await self._lock.holder()
            self._known = (leader, self._clock.monotonic())
        return leader

    async def _become_leader(self) -> None:
        self.leading = True
        for elected in self._elected:
            await elected()

    async def _step_down(self) -> None:
        log.warning("no longer leading the cluster", extra={"node": self.node})
        self.leading = False
        for deposed in self._deposed:
            await deposed()
        if self._lock is not None:
            await self._lock.release()

    async def _keep_campaigning(self) -> None:
        while True:
            await self._clock.sleep(self._renew_s)
            try:
                await self.campaign()
            except Exception as error:
                if is_transient(error):
                    # The database is down: its outage is logged once (server.outages) by
                    # the lease renewals that fail with it, not once a check.
                    log.debug("leadership check failed", extra={"error": repr(error)[:300]})
                else:
                    log.exception("leadership check failed")
