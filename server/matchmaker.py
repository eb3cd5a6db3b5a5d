"""Quick match: waiting players of close rating are grouped into matches of 2 to 4.

Each ruleset has a queue. Every tick the queue is sorted by rating and cut, from the
lowest rating up, into groups whose spread fits a window that widens the longer the
oldest of them has waited. A group of four starts at once; a smaller one (two or more)
starts once its oldest member has waited ``wait_s``.

In a cluster the queue is one of the leader's singletons (server/leadership.py): every
process sends its players' requests there. A queued player's process asks again every
few seconds (``enqueue`` with how long they have waited): a player not asked for
within ``stale_s`` is dropped (their process died), and a new leader, whose queue starts
empty, has every waiting player back within those few seconds, with their waiting time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

from gaps import Ruleset
from server.lobby import Lobby
from server.match import Match, MatchOptions
from server.storage.store import Store

log = logging.getLogger("gaps.matchmaker")

GROUP_MIN: Final = 2
GROUP_MAX: Final = 4
#: The rating spread (openskill ordinal points) a group may have at once, and its growth.
WINDOW_POINTS: Final = 3.0
WINDOW_POINTS_PER_S: Final = 1.0


#: ``notify(node, player_id, match)``: tell the player, on their process, of their match.
Notify = Callable[[str, int, Match], Awaitable[None]]


@dataclass
class Waiting:
    player_id: int
    name: str
    rating: float
    since: float  # time.monotonic()
    node: str = ""  # the process of the player's connection
    seen: float = field(default=0.0, repr=False)  # when last asked for (time.monotonic())
    bot: bool = False  # a declared bot: grouped with bots only


class Matchmaker:
    def __init__(
        self,
        *,
        store: Store,
        lobby: Lobby,
        wait_s: float,
        countdown_s: int,
        notify: Notify,
        stale_s: float = 10.0,
        time_limit_s: int = 600,
        tick_s: float = 0.2,
    ) -> None:
        self._notify = notify
        self._stale_s = stale_s
        self._store = store
        self._lobby = lobby
        self._wait_s = wait_s
        self._countdown_s = countdown_s
        self._time_limit_s = time_limit_s
        self._tick_s = tick_s
        self.queues: dict[str, list[Waiting]] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="matchmaker")

    async def close(self) -> None:
        """Stop matching; the queues are emptied (a new leader's fill up again)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self.queues.clear()

    async def enqueue(
        self,
        ruleset: Ruleset,
        player_id: int,
        name: str,
        *,
        node: str,
        waited_s: float = 0.0,
        bot: bool = False,
    ) -> int:
        """Queue the player, who has waited ``waited_s`` already, connected to ``node``
        (again: the newer request wins; the same one again only says they still wait);
        returns the queue's length. A declared ``bot`` is grouped with bots only (the
        server lets bots queue at all only with ``--quick-match-bots``)."""
        now = time.monotonic()
        queue = self.queues.setdefault(ruleset.name, [])
        for waiting in queue:
            if waiting.player_id == player_id and waiting.node == node:
                waiting.seen = now
                return len(queue)
        self.cancel(player_id)
        rating = await self._store.ratings.ordinal(player_id, ruleset.name)
        queue = self.queues.setdefault(ruleset.name, [])
        queue.append(Waiting(player_id, name, rating or 0.0, now - waited_s, node, now, bot))
        return len(queue)

    def cancel(self, player_id: int) -> bool:
        found = False
        for queue in self.queues.values():
            for waiting in [w for w in queue if w.player_id == player_id]:
                queue.remove(waiting)
                found = True
        return found

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._tick_s)
            for ruleset, queue in list(self.queues.items()):
                now = time.monotonic()
                queue[:] = [w for w in queue if now - w.seen <= self._stale_s]
                for group in groups_by_kind(queue, time.monotonic(), wait_s=self._wait_s):
                    for waiting in group:
                        queue.remove(waiting)
                    try:
                        await self._start(Ruleset.named(ruleset), group)
                    except Exception:
                        log.exception("quick match failed", extra={"ruleset": ruleset})

    async def _start(self, ruleset: Ruleset, group: list[Waiting]) -> None:
        options = MatchOptions(
            ruleset=ruleset,
            max_players=len(group),
            time_limit_s=self._time_limit_s,
            win_by="time",
            public=False,
            countdown_s=self._countdown_s,
            bots=all(w.bot for w in group),
        )
        match = await self._lobby.create(
            group[0].player_id,
            options,
            None,
            seats=[(w.player_id, w.name, w.bot) for w in group],
            connected=False,
            kind="quick",
        )
        for waiting in group:
            try:
                await self._notify(waiting.node, waiting.player_id, match)
            except Exception:  # their connection just closed: the seat waits for them
                log.warning(
                    "could not tell a player of their quick match",
                    extra={"match": match.code, "player": waiting.player_id},
                )
        await match.start()


def window(waited_s: float) -> float:
    return WINDOW_POINTS + WINDOW_POINTS_PER_S * waited_s


def groups_by_kind(queue: list[Waiting], now: float, *, wait_s: float) -> list[list[Waiting]]:
    """``groups`` of the people, then of the bots: a bot never races a person."""
    people = [w for w in queue if not w.bot]
    bots = [w for w in queue if w.bot]
    return groups(people, now, wait_s=wait_s) + groups(bots, now, wait_s=wait_s)


def groups(queue: list[Waiting], now: float, *, wait_s: float) -> list[list[Waiting]]:
    """The groups ready to play now, lowest ratings first (pure: the queue is untouched)."""
    ready = []
    ordered = sorted(queue, key=lambda w: (w.rating, w.since))
    index = 0
    while index < len(ordered):
        group = [ordered[index]]
        oldest = group[0].since
        for candidate in ordered[index + 1 :]:
            waited = now - min(oldest, candidate.since)
            if len(group) == GROUP_MAX or candidate.rating - group[0].rating > window(waited):
                break
            group.append(candidate)
            oldest = min(oldest, candidate.since)
        if len(group) == GROUP_MAX or (len(group) >= GROUP_MIN and now - oldest >= wait_s):
            ready.append(group)
            index += len(group)
        else:
            index += 1
    return ready
