"""Quick match: the queue is one actor (``server.actor``) around ``server.queuecore``.

In a cluster the queue runs on the leader (server/leadership.py): every process sends
its players' requests there. Enqueues, cancels and the ticks that cut the queue into
groups go through its mailbox one at a time. Each group the core forms is seated in a
new match (kind ``quick``) through the lobby, each player is told on the process their
connection is on (``notify``), and the match is started.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Never

from gaps import Ruleset
from server import queuecore as core
from server.actor import Actor
from server.broker import Broker
from server.clock import Clock
from server.lobby import Lobby
from server.match import Match, MatchOptions
from server.outages import Outage
from server.queuecore import QueueState
from server.storage.store import Store

log = logging.getLogger("gaps.matchmaker")

#: ``notify(node, player_id, match)``: tell the player, on their process, of their match.
Notify = Callable[[str, int, Match], Awaitable[None]]

#: The time limit of a quick match.
TIME_LIMIT_S = 600


class Matchmaker(Actor[QueueState, core.Command, Never]):
    """The quick-match queue of the cluster (on its leader).

    :param wait_s: how long a group smaller than four waits for more.
    :param stale_s: a queued player not asked for this long is dropped.
    :param tick_s: how often the queue is cut into groups while anybody waits.
    """

    def __init__(
        self,
        *,
        store: Store,
        lobby: Lobby,
        broker: Broker,
        clock: Clock,
        wait_s: float,
        countdown_s: int,
        notify: Notify,
        stale_s: float = 10.0,
        tick_s: float = 0.2,
        outage: Outage | None = None,
    ) -> None:
        self._ratings = store.ratings
        self._lobby = lobby
        self._countdown_s = countdown_s
        self._notify = notify
        state = core.new_queue(
            wait_ms=round(wait_s * 1000), stale_ms=round(stale_s * 1000),
            tick_ms=round(tick_s * 1000),
        )
        super().__init__(
            state,
            clock=clock,
            broker=broker,
            channel="quick",
            max_history_events=1,
            name="quick-match queue",
            outage=outage,
        )

    async def enqueue(
        self,
        ruleset: Ruleset,
        player_id: int,
        name: str,
        *,
        node: str,
        ticket: str,
        waited_s: float = 0.0,
        bot: bool = False,
    ) -> int | None:
        """Queue the player, who has waited ``waited_s`` already, connected to ``node``,
        for the request ``ticket`` (again: the newer request wins; the same ticket again
        only says they still wait); the queue's length, or None if this request waits
        no more: its player was just grouped (their match is being made) or waits on a
        newer request. A declared ``bot`` is grouped with bots only."""
        request = core.Enqueue(
            ruleset.name, player_id, name, node, ticket, round(waited_s * 1000), None, bot
        )
        reply = await self.ask(request)
        if isinstance(reply, core.NeedRating):
            rating = await self._ratings.ordinal(player_id, ruleset.name)
            reply = await self.ask(replace(request, rating=rating or 0.0))
        if isinstance(reply, core.Grouped | core.Superseded):
            return None
        return int(reply)

    async def cancel(self, player_id: int) -> bool:
        return bool(await self.ask(core.Cancel(player_id)))

    def queued(self, ruleset: str) -> int:
        """How many wait in ``ruleset``'s queue now."""
        return len(self._state.waiting(ruleset))

    # -- the core and its effects ---------------------------------------------------------

    def _core(self, state: QueueState, command: core.Command, now: int) -> core.Step:
        return core.handle(state, command, now)

    def _tick(self) -> core.Command:
        return core.Tick()

    def _deadline(self, state: QueueState) -> int | None:
        return core.next_deadline(state)

    def _after(self, step: core.Step) -> None:
        for group in step.groups:
            self.spawn(self._start(group))

    async def _start(self, group: core.Group) -> None:
        members = group.members
        options = MatchOptions(
            ruleset=Ruleset.named(group.ruleset),
            max_players=len(members),
            time_limit_s=TIME_LIMIT_S,
            win_by="time",
            public=False,
            countdown_s=self._countdown_s,
            bots=all(w.bot for w in members),
        )
        try:
            match = await self._lobby.create(
                members[0].player_id,
                options,
                None,
                seats=[(w.player_id, w.name, w.bot) for w in members],
                connected=False,
                kind="quick",
            )
        except Exception as error:
            # Their processes ask for them again within seconds: they queue again.
            log.warning(
                "quick match not created",
                extra={"players": [w.player_id for w in members], "error": repr(error)[:300]},
            )
            return
        for waiting in members:
            try:
                await self._notify(waiting.node, waiting.player_id, match)
            except Exception:  # their connection just closed: the seat waits for them
                log.warning(
                    "could not tell a player of their quick match",
                    extra={"match": match.code, "player": waiting.player_id},
                )
        await match.start()
