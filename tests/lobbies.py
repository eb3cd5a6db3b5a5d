"""Helpers for tests of lobbies and matches on real storage, without a server: a lobby
whose timers run on a fake clock, players, matches and what their watchers receive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from gaps import Ruleset, Seed
from server.broker import LocalBroker, Subscription
from server.lobby import Lobby, new_code
from server.match import Match, MatchOptions
from server.matchstate import new_match
from server.storage.journal import Journal
from server.storage.players import PlayerRecord
from server.storage.store import Store
from tests.fake_clock import FakeClock

GRACE_S = 30.0


def new_lobby(store: Store, broker: LocalBroker, clock: FakeClock, **options: Any) -> Lobby:
    return Lobby(
        store=store,
        journal=Journal(store.database),
        broker=broker,
        clock=clock,
        grace_s=GRACE_S,
        max_history_events=512,
        **options,
    )


async def new_player(store: Store, name: str) -> PlayerRecord:
    return await store.players.register(name, f"hash-{name}", datetime.now(UTC))


def options(*, max_players: int, public: bool) -> MatchOptions:
    return MatchOptions(
        ruleset=Ruleset.named("classic"),
        max_players=max_players,
        time_limit_s=600,
        win_by="score",
        public=public,
        countdown_s=0,
    )


async def hosted(
    lobby: Lobby,
    host: PlayerRecord,
    *,
    others: Sequence[PlayerRecord] = (),
    kind: str = "race",
    daily_date: date | None = None,
    public: bool = True,
) -> Match:
    """A match ``host`` made, with ``others`` seated after them, everyone connected."""
    match = await lobby.create(
        host.id,
        options(max_players=4, public=public),
        None,
        seats=[(host.id, host.name, False)],
        kind=kind,
        daily_date=daily_date,
    )
    for other in others:
        await match.join(other.id, other.name)
    return match


async def clocked_match(
    store: Store,
    journal: Journal,
    broker: LocalBroker,
    clock: FakeClock,
    players: Sequence[PlayerRecord],
    *,
    ruleset: str,
    seed: Seed,
    win_by: str,
    time_limit_s: int,
    grace_s: float = GRACE_S,
) -> Match:
    """A rated match of ``players``, all connected, in the lobby, whose clock (timers,
    action and finish times) is ``clock``. Made as the lobby makes one, with room for
    every event in its history; it lets bots sit if one of ``players`` is a bot."""
    host = players[0]
    options = MatchOptions(
        ruleset=Ruleset.named(ruleset),
        max_players=len(players),
        time_limit_s=time_limit_s,
        win_by=win_by,
        public=False,
        countdown_s=0,
        bots=any(player.bot for player in players),
    )
    code = new_code()
    match_id = await store.matches.create(
        code=code,
        ruleset=options.ruleset.name,
        max_players=options.max_players,
        time_limit_s=time_limit_s,
        win_by=win_by,
        public=False,
        rated=True,
        bots=options.bots,
        host_id=host.id,
        status="lobby",
        seed=seed.data,
        commitment=seed.commitment,
        created_at=datetime.now(UTC),
    )
    state = new_match(
        match_id=match_id,
        code=code,
        kind="race",
        options=options,
        seed=seed,
        rated=True,
        host_id=host.id,
        grace_ms=round(grace_s * 1000),
    )
    match = Match(
        state,
        store=store,
        journal=journal,
        broker=broker,
        max_history_events=100_000,
        clock=clock,
    )
    for player in players:
        await match.join(player.id, player.name, bot=player.bot)
    return match


class Watcher:
    """The events of one match as a watcher receives them."""

    def __init__(self, subscription: Subscription) -> None:
        self._subscription = subscription

    @classmethod
    async def of(cls, broker: LocalBroker, match: Match) -> Watcher:
        return cls(await broker.subscribe(match.channel))

    async def event(self, name: str) -> dict[str, Any]:
        """The next event called ``name`` (the ones before it are passed over)."""
        while True:
            event: dict[str, Any] = json.loads(await asyncio.wait_for(self._subscription.get(), 5))
            if event["event"] == name:
                return event
