"""Quick match: waiting players of close rating are grouped into matches of 2 to 4.

Each ruleset has a queue. Every tick the queue is sorted by rating and cut, from the
lowest rating up, into groups whose spread fits a window that widens the longer the
oldest of them has waited. A group of four starts at once; a smaller one (two or more)
starts once its oldest member has waited ``wait_s``.
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


@dataclass
class Waiting:
    player_id: int
    name: str
    rating: float
    since: float  # time.monotonic()
    on_match: Callable[[Match], Awaitable[None]] = field(repr=False)


class Matchmaker:
    def __init__(
        self,
        *,
        store: Store,
        lobby: Lobby,
        wait_s: float,
        countdown_s: int,
        time_limit_s: int = 600,
        tick_s: float = 0.2,
    ) -> None:
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
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def enqueue(
        self,
        ruleset: Ruleset,
        player_id: int,
        name: str,
        on_match: Callable[[Match], Awaitable[None]],
    ) -> int:
        """Queue the player (again: the newer request wins); returns the queue's length."""
        self.cancel(player_id)
        rating = await self._store.ratings.ordinal(player_id, ruleset.name)
        queue = self.queues.setdefault(ruleset.name, [])
        queue.append(Waiting(player_id, name, rating or 0.0, time.monotonic(), on_match))
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
                for group in groups(queue, time.monotonic(), wait_s=self._wait_s):
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
        )
        match = await self._lobby.create(
            group[0].player_id,
            options,
            None,
            seats=[(w.player_id, w.name) for w in group],
            connected=False,
            kind="quick",
        )
        for waiting in group:
            try:
                await waiting.on_match(match)
            except Exception:  # their connection just closed: the seat waits for them
                log.warning(
                    "could not tell a player of their quick match",
                    extra={"match": match.code, "player": waiting.player_id},
                )
        await match.start()


def window(waited_s: float) -> float:
    return WINDOW_POINTS + WINDOW_POINTS_PER_S * waited_s


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
