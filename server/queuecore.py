"""The rules of the quick-match queue, without I/O: waiting players grouped into matches.

Each ruleset has a queue. At each tick the queue is sorted by rating and cut, from the
lowest rating up, into groups whose spread fits a window that widens the longer the
oldest of them has waited. A group of four starts at once; a smaller one (two or more)
starts once its oldest member has waited ``wait_ms``. A declared bot is grouped with
bots only: a bot never races a person.

A queued player's process asks again every few seconds with the ticket of their request
and how long they have waited (``Enqueue`` with the ticket queued only says they still
wait; a request made before the one queued, or before the player's group, is refused):
a player not asked for within ``stale_ms`` is dropped (their process died), and a new
leader, whose queue starts empty,
has every waiting player back within those few seconds, with their waiting time. The
queue is not stored: it is rebuilt from those requests.

``handle(state, command, now)`` returns a :class:`Step`: the new state, the reply, the
groups to start (the actor creates their matches) and the next instant to be woken at.
``now`` is the server clock's milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from server.records import Ms

GROUP_MIN: Final = 2
GROUP_MAX: Final = 4
#: The rating spread (openskill ordinal points) a group may have at once, and its growth.
WINDOW_POINTS: Final = 3.0
WINDOW_POINTS_PER_S: Final = 1.0


@dataclass(frozen=True)
class Waiting:
    player_id: int
    name: str
    rating: float
    #: Since when they wait.
    since: Ms
    #: The process of the player's connection.
    node: str = ""
    #: When their process last asked for them.
    seen: Ms = 0
    #: A declared bot: grouped with bots only.
    bot: bool = False
    #: The request that queued them (their process asks again with it).
    ticket: str = ""


@dataclass(frozen=True)
class Grouping:
    """A player just grouped: the tickets they were grouped under (every group of theirs
    still remembered), when last, and until when it is kept."""

    tickets: frozenset[str]
    at: Ms
    until: Ms


@dataclass(frozen=True)
class QueueState:
    wait_ms: int
    stale_ms: int
    tick_ms: int
    #: The waiting players of each ruleset, in the order they came.
    queues: Mapping[str, tuple[Waiting, ...]] = field(default_factory=dict)
    #: When the queues are next cut into groups (None: nobody waits).
    tick_at: Ms | None = None
    #: The players just grouped: when, and until when that is remembered. A request
    #: made before their group (sent before they heard of their match, or from another
    #: connection of theirs) is not a new wait.
    grouped: Mapping[int, Grouping] = field(default_factory=dict)

    def waiting(self, ruleset: str) -> tuple[Waiting, ...]:
        return dict(self.queues).get(ruleset, ())

    def find(self, player_id: int) -> Waiting | None:
        for queue in dict(self.queues).values():
            for waiting in queue:
                if waiting.player_id == player_id:
                    return waiting
        return None


def new_queue(*, wait_ms: int, stale_ms: int, tick_ms: int) -> QueueState:
    return QueueState(wait_ms=wait_ms, stale_ms=stale_ms, tick_ms=tick_ms)


# -- commands ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Enqueue:
    """Queue the player, who has waited ``waited_ms`` already, connected to ``node``.
    ``rating`` None: only say they still wait (refused with ``NeedRating`` if they are
    not queued from ``node``: the actor reads their rating and asks again)."""

    ruleset: str
    player_id: int
    name: str
    node: str
    ticket: str
    waited_ms: int = 0
    rating: float | None = None
    bot: bool = False


@dataclass(frozen=True)
class Cancel:
    player_id: int


@dataclass(frozen=True)
class Tick:
    pass


Command = Enqueue | Cancel | Tick


@dataclass(frozen=True)
class NeedRating:
    """The reply to an ``Enqueue`` without a rating of a player not queued from there."""


@dataclass(frozen=True)
class Grouped:
    """The reply to an ``Enqueue`` made before its player was grouped: their match is
    made (they are told on the connection they were grouped from)."""


@dataclass(frozen=True)
class Superseded:
    """The reply to an ``Enqueue`` made before the request its player waits on now (from
    another connection): this one waits no more."""


@dataclass(frozen=True)
class Group:
    """Players to seat in one new match of ``ruleset``."""

    ruleset: str
    members: tuple[Waiting, ...]


@dataclass(frozen=True)
class Step:
    state: QueueState
    #: ``Enqueue``: the queue's length; ``Cancel``: whether they were queued.
    reply: int | bool | NeedRating | Grouped | Superseded | None
    groups: tuple[Group, ...] = ()
    wake_at: Ms | None = None
    events: tuple[()] = ()
    writes: tuple[()] = ()


def handle(state: QueueState, command: Command, now: Ms) -> Step:
    groups: list[Group] = []
    if state.tick_at is not None and state.tick_at <= now:
        state, groups = _match(state, now)
        state = replace(state, tick_at=now + state.tick_ms)
    reply: int | bool | NeedRating | Grouped | Superseded | None = None
    match command:
        case Enqueue():
            state, reply, added = _enqueue(state, command, now)
            if added:  # someone new came: they may complete a group, cut at once
                state = replace(state, tick_at=now)
        case Cancel(player_id=player_id):
            reply = state.find(player_id) is not None
            state = _without(state, {player_id})
        case Tick():
            pass
    if not any(dict(state.queues).values()):
        state = replace(state, tick_at=None)
    return Step(state, reply, tuple(groups), state.tick_at)


def _enqueue(
    state: QueueState, request: Enqueue, now: Ms
) -> tuple[QueueState, int | NeedRating | Grouped | Superseded, bool]:
    """The state, the reply, and whether the player was added to a queue."""
    asked_at = now - request.waited_ms  # when the request was first made
    grouped = dict(state.grouped).get(request.player_id)
    if grouped is not None and (request.ticket in grouped.tickets or asked_at < grouped.at):
        return state, Grouped(), False
    queued = state.find(request.player_id)
    if queued is not None and queued.ticket == request.ticket:
        queues = dict(state.queues)
        for ruleset, queue in queues.items():
            if queued in queue:
                seen = replace(queued, seen=now)
                queues[ruleset] = tuple(seen if w is queued else w for w in queue)
                return replace(state, queues=queues), len(queue), False
    if queued is not None and asked_at < queued.since:
        return state, Superseded(), False
    if request.rating is None:
        return state, NeedRating(), False
    # A newer request wins: queued once, as the connection that asked last asked.
    state = _without(state, {request.player_id})
    queues = dict(state.queues)
    waiting = Waiting(
        request.player_id,
        request.name,
        request.rating,
        asked_at,
        request.node,
        now,
        request.bot,
        request.ticket,
    )
    queues[request.ruleset] = (*queues.get(request.ruleset, ()), waiting)
    return replace(state, queues=queues), len(queues[request.ruleset]), True


def _without(state: QueueState, player_ids: set[int]) -> QueueState:
    queues = {
        ruleset: tuple(w for w in queue if w.player_id not in player_ids)
        for ruleset, queue in dict(state.queues).items()
    }
    return replace(state, queues={r: q for r, q in queues.items() if q})


def _match(state: QueueState, now: Ms) -> tuple[QueueState, list[Group]]:
    """Drop the stale, then cut every queue into the groups ready now."""
    stale = {
        w.player_id
        for queue in dict(state.queues).values()
        for w in queue
        if now - w.seen > state.stale_ms
    }
    state = _without(state, stale)
    found: list[Group] = []
    for ruleset, queue in sorted(dict(state.queues).items()):
        for members in groups_by_kind(queue, now, wait_ms=state.wait_ms):
            found.append(Group(ruleset, tuple(members)))
    members = [w for group in found for w in group.members]
    remembered = {p: g for p, g in dict(state.grouped).items() if g.until > now}
    for w in members:
        earlier = remembered.get(w.player_id)
        tickets = frozenset({w.ticket}) | (earlier.tickets if earlier else frozenset())
        remembered[w.player_id] = Grouping(tickets, now, now + state.stale_ms)
    return replace(_without(state, {w.player_id for w in members}), grouped=remembered), found


def next_deadline(state: QueueState) -> Ms | None:
    """The next cut while anybody waits (their groups change as their windows widen)."""
    return state.tick_at


def window(waited_ms: int) -> float:
    return WINDOW_POINTS + WINDOW_POINTS_PER_S * waited_ms / 1000


def groups_by_kind(
    queue: Sequence[Waiting], now: Ms, *, wait_ms: int
) -> list[list[Waiting]]:
    """``groups`` of the people, then of the bots: a bot never races a person."""
    people = [w for w in queue if not w.bot]
    bots = [w for w in queue if w.bot]
    return groups(people, now, wait_ms=wait_ms) + groups(bots, now, wait_ms=wait_ms)


def groups(queue: Sequence[Waiting], now: Ms, *, wait_ms: int) -> list[list[Waiting]]:
    """The groups ready to play now, lowest ratings first."""
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
        if len(group) == GROUP_MAX or (len(group) >= GROUP_MIN and now - oldest >= wait_ms):
            ready.append(group)
            index += len(group)
        else:
            index += 1
    return ready
