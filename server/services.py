"""What the requests of a connection are served with: every part of the server a
session and its handlers use, built once by the composition root (``server.app``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from server.broker import Broker
from server.clock import Clock
from server.config import Settings
from server.daily import Daily
from server.leadership import Leadership
from server.lobby import Lobby
from server.metrics import Metrics
from server.outages import Outage
from server.outbox import Outbox
from server.ratelimit import Budgets
from server.reads import Reads
from server.routes import Routes
from server.storage.players import PlayerRecord
from server.storage.store import Store


class Follower(Protocol):
    """What the server asks of an open session (``server.session.Session``)."""

    player: PlayerRecord | None
    seats: set[str]
    spectating: set[str]
    #: The quick-match request its player waits on: (ruleset, ticket, since).
    queued: tuple[str, str, float] | None
    #: Clear while a request is being answered.
    idle: asyncio.Event
    #: Its outgoing frames (what waits in them is a metric).
    outbox: Outbox

    def close_for_move(self, code: str) -> None: ...


class Sessions:
    """The open sessions of this process."""

    def __init__(self) -> None:
        self._open: set[Follower] = set()

    def add(self, session: Follower) -> None:
        self._open.add(session)

    def discard(self, session: Follower) -> None:
        self._open.discard(session)

    def __iter__(self) -> Iterator[Follower]:
        return iter(list(self._open))

    def __len__(self) -> int:
        return len(self._open)

    def following(self, code: str) -> list[Follower]:
        """The sessions that hold a seat of match ``code`` or watch it."""
        return [s for s in self._open if code in s.seats or code in s.spectating]

    def of_player(self, player_id: int) -> list[Follower]:
        return [s for s in self._open if s.player is not None and s.player.id == player_id]


@dataclass
class Services:
    settings: Settings
    clock: Clock
    store: Store
    broker: Broker
    lobby: Lobby
    routes: Routes
    daily: Daily
    leadership: Leadership
    reads: Reads
    costly_by_player: Budgets[int]
    costly_by_address: Budgets[str]
    #: What this process counts (``server.metrics``), and the database's outages, which
    #: requests refused ``storage_unavailable`` are told of (``server.outages``).
    metrics: Metrics
    storage_outage: Outage
    connections_by_address: Counter[str] = field(default_factory=Counter)
    sessions: Sessions = field(default_factory=Sessions)
    #: Set when a shutdown begins: sessions refuse requests with ``shutting_down``.
    draining: bool = False
    #: This process's name in its cluster (where the quick-match queue tells of matches).
    node: str = "local"

    def is_operator(self, name: str) -> bool:
        """Whether ``name`` is an operator's: the configuration's list, in any case."""
        return name.lower() in {operator.lower() for operator in self.settings.operators}
