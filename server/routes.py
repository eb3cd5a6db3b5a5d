"""Routes: where each match runs, as this process knows it, and one owner for that knowledge.

A connection may reach any process of a cluster; a match runs on one (its lease's
owner). ``Routes.find(code)`` answers with the match itself when it runs here, else with
a handle on the process that runs it (``RemoteMatch``), else with the refusal every
process gives alike:

- stored, unfinished, but no process serves it yet (its owner died and its lease has not
  run out): ``match_unavailable``, retry;
- finished or abandoned, and no longer kept by any process: ``match_finished`` (its
  result and replay stay readable from any process);
- unknown: ``no_such_match``.

Sessions hold match codes, never handles: every request goes through ``find``, which
answers from the routes it keeps for the matches this process's connections follow
(``follow``/``unfollow``), without a database read. A route is forgotten, and every
connection following its match here is told (``on_moved``: closed with 1012, so that
its client joins the match afresh on its new owner), when the match moved: its owner or
epoch changed at a lease renewal (``check``), whichever process took it over (this one
included), or its owner refused a call because the match is no longer its own, or this
process lost the lease of a match it ran.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable

import msgspec

from gaps_protocol.messages.views import MatchSummary
from server.broker import BrokerError
from server.clock import Clock
from server.errors import ServerError
from server.lobby import Lobby
from server.relay import Relay
from server.relaymessages import OpenPublic
from server.remote import MatchHandle, MatchService, RemoteMatch, unavailable
from server.storage.leases import MatchLeases
from server.storage.store import Store

log = logging.getLogger("gaps.routes")


class Routes:
    """This process's routes to matches.

    :param lobby: this process's own matches.
    :param leases: a cluster's leases (None: one process, every match is the lobby's).
    :param relay: how other processes are asked (None: one process).
    """

    def __init__(
        self,
        *,
        lobby: Lobby,
        store: Store,
        clock: Clock,
        leases: MatchLeases | None,
        relay: Relay | None,
    ) -> None:
        self._lobby = lobby
        self._clock = clock
        self._store = store
        self._leases = leases
        self._relay = relay
        self._remote: dict[str, RemoteMatch] = {}
        self._followers: Counter[str] = Counter()
        self._moved_listeners: list[Callable[[str], None]] = []
        self._service = (
            MatchService(lobby, relay, retry_ms=lobby.retry_ms) if relay is not None else None
        )
        lobby.on_dropped(self._moved)
        if leases is not None:
            lobby.on_renewed(self.check)

    def on_moved(self, listener: Callable[[str], None]) -> None:
        """Call ``listener`` with the code of a match that moved to another owner (or
        epoch): the connections following it here must join it afresh."""
        self._moved_listeners.append(listener)

    def follow(self, handle: MatchHandle) -> None:
        """A connection of this process follows the match ``handle`` reaches: its route
        is kept (no database read to find it again) and checked at each renewal."""
        self._followers[handle.code] += 1
        if isinstance(handle, RemoteMatch):
            self._remote.setdefault(handle.code, handle)

    def unfollow(self, code: str) -> None:
        self._followers[code] -= 1
        if self._followers[code] <= 0:
            del self._followers[code]
            self._remote.pop(code, None)

    async def find(self, code: str) -> MatchHandle:
        """The match ``code`` wherever it runs, or the refusal every process gives."""
        code = code.upper()
        match = self._lobby.matches.get(code)
        if match is not None:
            return match
        route = self._remote.get(code)
        if route is not None:
            return route
        if self._leases is not None and self._relay is not None:
            holder = await self._leases.holder(code, self._clock.now())
            if (
                holder is not None
                and holder.live
                and holder.owner != self._leases.owner
                # A finished match is kept by its owner only while that owner lives.
                and (holder.status in ("lobby", "running")
                     or await self._relay.listening(holder.owner))
            ):
                route = RemoteMatch(
                    self._relay,
                    node=holder.owner,
                    match_id=holder.match_id,
                    code=code,
                    epoch=holder.epoch,
                    retry_ms=self._lobby.retry_ms,
                    on_moved=self._stale,
                )
                if code in self._followers:
                    self._remote[code] = route
                return route
        raise await self._refusal(code)

    async def _refusal(self, code: str) -> ServerError:
        """Why no process serves match ``code`` now, as every process says it."""
        status = await self._store.matches.status_of(code)
        if status in ("lobby", "running"):
            return unavailable(code, self._lobby.retry_ms, "no process serves it yet")
        if status == "finished":
            return ServerError(
                "match_finished",
                f"match {code} is over: its result and replay stay readable (get_replay)",
                status=status,
            )
        if status == "abandoned":
            return ServerError(
                "match_finished", f"match {code} was abandoned before its end", status=status
            )
        return ServerError("no_such_match", f"no live match has code {code!r}")

    async def check(self) -> None:
        """Forget every route whose match moved (its owner or epoch changed, or it is no
        longer leased), and tell the connections that follow it here."""
        assert self._leases is not None
        routes = list(self._remote.values())
        if not routes:
            return
        owners = await self._leases.owners([route.id for route in routes])
        for route in routes:
            if owners.get(route.id) != (route.node, route.epoch):
                self._stale(route)

    def _stale(self, route: RemoteMatch) -> None:
        if self._remote.get(route.code) is route:
            del self._remote[route.code]
        log.info(
            "match route moved",
            extra={"match": route.code, "from": route.node, "epoch": route.epoch},
        )
        self._moved(route.code)

    def _moved(self, code: str) -> None:
        for listener in self._moved_listeners:
            listener(code)

    async def open_public(self) -> list[MatchSummary]:
        """The summaries of the cluster's matches open to anyone, with a seat free; a
        process that does not answer within a second is left out."""
        listed = self._lobby.open_public_here()
        if self._leases is None or self._relay is None:
            return listed
        others = await self._leases.live_owners(self._clock.now()) - {self._leases.owner}
        relay = self._relay

        async def ask(node: str) -> list[MatchSummary]:
            try:
                answer = await relay.call(node, OpenPublic(), timeout_s=1.0)
                return msgspec.convert(answer, list[MatchSummary])
            except (ServerError, BrokerError) as error:
                log.warning("open matches not listed", extra={"node": node, "error": str(error)})
                return []

        for answer in await asyncio.gather(*(ask(node) for node in sorted(others))):
            listed.extend(answer)
        return listed
