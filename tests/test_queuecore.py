"""The quick-match queue core, pure: grouping by rating and waiting time, requests and
their tickets, cancels, the ticks that cut the queues, stale players, a new leader, and
any interleaving of them on a fake clock. Time is passed explicitly: nothing sleeps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from server import queuecore
from server.queuecore import (
    GROUP_MAX,
    GROUP_MIN,
    WINDOW_POINTS,
    WINDOW_POINTS_PER_S,
    Cancel,
    Command,
    Enqueue,
    Grouped,
    Grouping,
    NeedRating,
    QueueState,
    Step,
    Superseded,
    Tick,
    Waiting,
    groups,
    groups_by_kind,
    handle,
    new_queue,
    window,
)

T0 = 1_000_000
WAIT_MS = 5_000
STALE_MS = 10_000
TICK_MS = 200


def fresh() -> QueueState:
    return new_queue(wait_ms=WAIT_MS, stale_ms=STALE_MS, tick_ms=TICK_MS)


def waiting(player_id: int, rating: float, since: int) -> Waiting:
    return Waiting(player_id, f"p{player_id}", rating, since)


def a_bot(player_id: int, rating: float, since: int) -> Waiting:
    return Waiting(player_id, f"b{player_id}", rating, since, bot=True)


def ids(found: Sequence[Sequence[Waiting]]) -> list[list[int]]:
    return [[w.player_id for w in group] for group in found]


def request(
    player_id: int,
    *,
    rating: float | None = 10.0,
    ruleset: str = "classic",
    ticket: str = "",
    node: str = "n1",
    waited_ms: int = 0,
    bot: bool = False,
) -> Enqueue:
    return Enqueue(
        ruleset, player_id, f"p{player_id}", node, ticket or f"t{player_id}", waited_ms,
        rating, bot,
    )


def queued(state: QueueState, *requests: Enqueue, now: int) -> QueueState:
    for command in requests:
        step = handle(state, command, now)
        assert isinstance(step.reply, int)
        state = step.state
    return state


def asked_as_the_actor(state: QueueState, command: Enqueue, now: int) -> Step:
    """The request without a rating first, then with one if the queue needs it."""
    step = handle(state, replace(command, rating=None), now)
    if isinstance(step.reply, NeedRating):
        step = handle(step.state, replace(command, rating=10.0), now)
    return step


def queued_ids(state: QueueState, ruleset: str = "classic") -> list[int]:
    return [w.player_id for w in state.waiting(ruleset)]


def formed(step: Step) -> list[tuple[str, list[int]]]:
    return [(group.ruleset, [w.player_id for w in group.members]) for group in step.groups]


def made_before(made: int, grouped_at: int) -> bool:
    """Whether the queue takes a request made at ``made`` for one made before a group
    formed at ``grouped_at``: a request of the group's very millisecond is a new one."""
    return made < grouped_at


def first_groups(state: QueueState) -> tuple[int, Step]:
    """Tick at every instant the queue asks to be woken at until a group forms."""
    while True:
        assert state.tick_at is not None, "nobody waits any more"
        now = state.tick_at
        step = handle(state, Tick(), now)
        if step.groups:
            return now, step
        assert step.wake_at == now + TICK_MS
        state = step.state


# -- grouping -----------------------------------------------------------------------------


def test_four_close_players_are_grouped_at_once() -> None:
    queue = [waiting(n, 10.0 + n * 0.1, since=100_000) for n in range(4)]
    assert ids(groups(queue, 100_000, wait_ms=5_000)) == [[0, 1, 2, 3]]


def test_two_players_wait_for_more_until_the_wait_is_over() -> None:
    queue = [waiting(1, 10.0, since=100_000), waiting(2, 11.0, since=101_000)]
    assert groups(queue, 102_000, wait_ms=5_000) == []
    assert groups(queue, 104_999, wait_ms=5_000) == []
    assert ids(groups(queue, 105_000, wait_ms=5_000)) == [[1, 2]]


def test_a_lone_player_is_never_matched_alone() -> None:
    assert groups([waiting(1, 10.0, since=0)], 1_000_000, wait_ms=5_000) == []


def test_the_window_widens_by_its_points_per_second_of_waiting() -> None:
    assert window(0) == WINDOW_POINTS
    assert window(2_500) == WINDOW_POINTS + 2.5 * WINDOW_POINTS_PER_S


def test_far_ratings_are_not_grouped_until_the_window_has_widened() -> None:
    gap = window(5_000) + 1
    queue = [waiting(1, 0.0, since=100_000), waiting(2, gap, since=100_000)]
    assert groups(queue, 105_000, wait_ms=5_000) == []  # window(5 s) < gap
    assert ids(groups(queue, 110_000, wait_ms=5_000)) == [[1, 2]]  # window(10 s) > gap


def test_groups_take_at_most_four_and_the_rest_form_their_own() -> None:
    queue = [waiting(n, float(n) * 0.01, since=0) for n in range(7)]
    found = ids(groups(queue, 100_000, wait_ms=5_000))
    assert found == [[0, 1, 2, 3], [4, 5, 6]] and max(map(len, found)) == GROUP_MAX


def test_groups_form_among_close_ratings_first() -> None:
    queue = [
        waiting(1, 0.0, since=0),
        waiting(2, 50.0, since=0),
        waiting(3, 0.5, since=0),
        waiting(4, 50.5, since=0),
    ]
    assert ids(groups(queue, 10_000, wait_ms=5_000)) == [[1, 3], [2, 4]]


def test_bots_are_grouped_with_bots_only_and_people_with_people() -> None:
    queue = [
        waiting(1, 10.0, since=100_000),
        a_bot(2, 10.0, since=100_000),
        waiting(3, 10.1, since=100_000),
        a_bot(4, 10.1, since=100_000),
        a_bot(5, 10.2, since=100_000),
    ]
    assert ids(groups_by_kind(queue, 200_000, wait_ms=5_000)) == [[1, 3], [2, 4, 5]]
    mixed = [waiting(1, 10.0, since=0), a_bot(2, 10.0, since=0)]
    assert groups_by_kind(mixed, 99_000, wait_ms=5_000) == []


# -- Enqueue ------------------------------------------------------------------------------


def test_a_new_player_with_a_rating_is_queued_and_told_the_queue_length() -> None:
    step = handle(fresh(), request(1, rating=12.5, node="n2", waited_ms=700), T0)
    assert step.reply == 1
    assert step.state.waiting("classic") == (
        Waiting(1, "p1", 12.5, T0 - 700, "n2", T0, False, "t1"),
    )
    step = handle(step.state, request(2), T0 + 10)
    assert step.reply == 2 and queued_ids(step.state) == [1, 2]


def test_the_same_ticket_again_only_says_they_still_wait() -> None:
    state = queued(fresh(), request(1), request(2), now=T0)
    before = state.waiting("classic")
    for rating in (None, 99.0):  # whatever the request says besides, it is the same wait
        step = handle(state, request(1, rating=rating, waited_ms=4_000), T0 + 3_000)
        assert step.reply == 2
        assert step.state.waiting("classic") == (replace(before[0], seen=T0 + 3_000), before[1])


def test_a_new_ticket_of_a_queued_player_wins_and_they_are_queued_once() -> None:
    state = queued(fresh(), request(1, ticket="old", node="n1"), request(2), now=T0)
    step = handle(state, request(1, ticket="new", node="n2", rating=11.0), T0 + 100)
    assert step.reply == 2
    assert [(w.player_id, w.ticket, w.node, w.rating) for w in step.state.waiting("classic")] == [
        (2, "t2", "n1", 10.0),
        (1, "new", "n2", 11.0),
    ]
    moved = handle(step.state, request(1, ticket="newer", ruleset="addiction"), T0 + 200)
    assert moved.reply == 1
    assert queued_ids(moved.state) == [2] and queued_ids(moved.state, "addiction") == [1]


def test_an_enqueue_without_a_rating_of_a_player_not_queued_asks_for_it() -> None:
    state = queued(fresh(), request(2), now=T0)
    not_queued = request(1, rating=None)
    other_ticket = request(2, rating=None, ticket="from-another-connection")
    for command in (not_queued, other_ticket):
        step = handle(state, command, T0 + 50)
        assert step.reply == NeedRating()
        assert step.state.queues == state.queues and step.groups == ()


def test_an_older_request_than_the_one_queued_is_superseded_and_changes_nothing() -> None:
    state = queued(fresh(), request(1, ticket="older", node="n1"), request(2), now=T0)
    state = queued(state, request(1, ticket="newer", node="n2"), now=T0 + 1_000)
    state = handle(state, Tick(), T0 + 1_000).state
    assert state.tick_at is not None
    now = state.tick_at - 1  # no cut is due: the reply alone is looked at
    for rating in (None, 10.0):  # refused before its rating is asked for
        older = handle(state, request(1, ticket="older", rating=rating, waited_ms=now - T0), now)
        assert older.reply == Superseded()
        assert older.state == state and older.groups == () and older.wake_at == state.tick_at
    # The newer request asks on as before, and a request made after it wins as before.
    newer = state.find(1)
    assert newer is not None and newer.ticket == "newer"
    again = handle(state, request(1, ticket="newer", rating=None, waited_ms=now - newer.since), now)
    assert again.reply == 2 and again.state.find(1) == replace(newer, seen=now)
    newest = handle(state, request(1, ticket="newest", node="n3", waited_ms=5), now)
    assert newest.reply == 2
    assert [(w.ticket, w.since) for w in newest.state.waiting("classic")] == [
        ("t2", T0),
        ("newest", now - 5),
    ]


def test_every_request_made_before_the_group_of_its_player_is_answered_grouped() -> None:
    state = queued(fresh(), request(1, ticket="older", node="n1"), now=T0)
    state = queued(state, request(1, ticket="newer", node="n2"), now=T0 + 1_000)
    state = queued(state, *(request(n) for n in range(2, 5)), now=T0 + 1_000)
    grouped_at, step = first_groups(state)
    assert [[w.ticket for w in group.members] for group in step.groups] == [
        ["newer", "t2", "t3", "t4"]
    ]
    assert step.state.grouped[1] == Grouping(
        frozenset({"newer"}), grouped_at, grouped_at + STALE_MS
    )
    made_at = {
        "newer": T0 + 1_000,  # the grouped request itself
        "older": T0,  # the request it replaced
        "unseen": grouped_at - 1,  # another connection's, sent before it heard of the match
    }
    for now in (grouped_at + 1, grouped_at + STALE_MS - 1):
        for ticket, made in made_at.items():
            for rating in (None, 10.0):
                command = request(1, ticket=ticket, rating=rating, waited_ms=now - made)
                again = handle(step.state, command, now)
                assert again.reply == Grouped(), (ticket, now)
                assert again.state == step.state and again.wake_at is None
    # A request made from the group's instant on is a new wait.
    for ticket, made in (("made with the group", grouped_at), ("made after", grouped_at + 1)):
        now = grouped_at + 1
        anew = handle(step.state, request(1, ticket=ticket, waited_ms=now - made), now)
        assert anew.reply == 1 and anew.wake_at == now
        assert anew.state.waiting("classic") == (
            Waiting(1, "p1", 10.0, made, "n1", now, False, ticket),
        )
        assert anew.state.grouped == step.state.grouped  # the older requests are still refused
        refused = handle(anew.state, request(1, ticket="older", waited_ms=now - T0), now)
        assert refused.reply == Grouped() and refused.state.queues == anew.state.queues


def test_the_players_just_grouped_are_remembered_for_stale_ms_only() -> None:
    state = queued(fresh(), request(1), request(2), now=T0)
    grouped_at, step = first_groups(state)
    assert formed(step) == [("classic", [1, 2])]
    until = grouped_at + STALE_MS
    assert step.state.grouped == {
        1: Grouping(frozenset({"t1"}), grouped_at, until),
        2: Grouping(frozenset({"t2"}), grouped_at, until),
    }
    state = queued(step.state, request(9, ruleset="addiction"), now=grouped_at)
    assert handle(state, Tick(), until - 1).state.grouped == step.state.grouped
    later = handle(state, Tick(), until)
    assert later.state.grouped == {}
    assert handle(later.state, request(1, rating=None, waited_ms=until - T0), until).reply == (
        NeedRating()
    )


def test_a_request_replaced_by_a_newer_one_neither_takes_the_place_back_nor_queues_again() -> (
    None
):
    """One player queued from two processes: the newer request wins, and the older one's
    process, which keeps asking, must not take the place back, nor queue its player
    again once they are grouped (a second match at once)."""

    def older_asks(state: QueueState, now: int) -> Step:
        return asked_as_the_actor(state, request(1, ticket="older", waited_ms=now - T0), now)

    state = queued(fresh(), request(1, ticket="older", node="n1"), now=T0)
    state = queued(state, request(1, ticket="newer", node="n2"), now=T0 + 1_000)
    step = older_asks(state, T0 + 2_000)
    assert step.reply == Superseded()
    assert [(w.player_id, w.ticket) for w in step.state.waiting("classic")] == [(1, "newer")]
    grouped_at, step = first_groups(queued(step.state, request(2), now=T0 + 2_000))
    assert [[w.ticket for w in group.members] for group in step.groups] == [["newer", "t2"]]
    again = older_asks(step.state, grouped_at + TICK_MS)
    assert again.reply == Grouped() and again.state.find(1) is None


def test_a_request_grouped_is_not_queued_again_after_a_second_group_in_its_millisecond() -> (
    None
):
    state = queued(fresh(), request(1, ticket="first"), request(2), request(3), request(4), now=T0)
    grouping = handle(state, request(1, ticket="second"), T0)  # made as they are grouped
    assert formed(grouping) == [("classic", [1, 2, 3, 4])]
    state = grouping.state
    for command in (request(5), request(6), request(7), Tick()):  # and grouped again with them
        state = handle(state, command, T0).state
    now = T0 + 3_000  # the first request's process has not heard of its match yet
    again = asked_as_the_actor(state, request(1, ticket="first", waited_ms=3_000), now)
    assert again.reply == Grouped() and again.state.find(1) is None


# -- Cancel -------------------------------------------------------------------------------


def test_cancel_says_whether_the_player_was_queued() -> None:
    state = queued(fresh(), request(1), request(2, ruleset="addiction"), now=T0)
    step = handle(state, Cancel(1), T0 + 1)
    assert step.reply is True
    assert step.state.find(1) is None and queued_ids(step.state, "addiction") == [2]
    assert handle(step.state, Cancel(1), T0 + 2).reply is False
    assert handle(step.state, Cancel(7), T0 + 2).reply is False
    last = handle(step.state, Cancel(2), T0 + 3)
    assert last.reply is True and last.state.tick_at is None and last.wake_at is None


# -- Tick ---------------------------------------------------------------------------------


def test_four_close_players_are_grouped_at_the_first_tick() -> None:
    state = queued(fresh(), *(request(n, rating=10 + n / 10) for n in range(1, 5)), now=T0)
    grouped_at, step = first_groups(state)
    assert grouped_at == T0
    assert formed(step) == [("classic", [1, 2, 3, 4])]
    assert step.state.queues == {} and step.wake_at is None


def test_two_or_three_players_are_grouped_once_the_oldest_has_waited_wait_ms() -> None:
    state = queued(fresh(), request(1, waited_ms=1_000), request(2), request(3), now=T0)
    grouped_at, step = first_groups(state)
    assert grouped_at == T0 + WAIT_MS - 1_000
    assert formed(step) == [("classic", [1, 2, 3])]


def test_bots_are_grouped_with_bots_only_in_the_queue() -> None:
    state = queued(
        fresh(), request(1), request(2, bot=True), request(3), request(4, bot=True), now=T0
    )
    grouped_at, step = first_groups(state)  # four close players, but not four of a kind
    assert grouped_at == T0 + WAIT_MS
    assert formed(step) == [("classic", [1, 3]), ("classic", [2, 4])]


def test_a_late_cut_is_made_by_whichever_command_comes_first() -> None:
    state = queued(fresh(), *(request(n) for n in range(1, 5)), now=T0)
    assert state.tick_at is not None
    step = handle(state, request(5), state.tick_at + 300)
    assert formed(step) == [("classic", [1, 2, 3, 4])]
    assert step.reply == 1 and queued_ids(step.state) == [5]


def test_a_player_not_asked_for_within_stale_ms_is_dropped_at_the_next_tick() -> None:
    state = queued(fresh(), request(1), request(2, ruleset="addiction"), now=T0)
    dropped_at = None
    for now in range(T0, T0 + STALE_MS + 2 * TICK_MS, TICK_MS):
        assert state.tick_at == now
        state = handle(state, Tick(), now).state
        if dropped_at is None and state.find(1) is None:
            dropped_at = now
        refreshed = handle(state, request(2, ruleset="addiction", rating=None), now)
        assert refreshed.reply == 1
        state = refreshed.state
    assert dropped_at == T0 + STALE_MS + TICK_MS  # still there at stale_ms, gone a tick after
    assert queued_ids(state, "addiction") == [2] and state.queues.keys() == {"addiction"}


def test_the_queue_is_cut_at_once_when_someone_comes_then_every_tick_ms_while_anyone_waits() -> (
    None
):
    empty = fresh()
    assert empty.tick_at is None and handle(empty, Tick(), T0).wake_at is None
    step = handle(empty, request(1), T0)
    assert step.wake_at == step.state.tick_at == T0
    step = handle(step.state, Tick(), T0)
    assert step.wake_at == T0 + TICK_MS
    newcomer = handle(step.state, request(2, ruleset="addiction"), T0 + 50)
    assert newcomer.wake_at == T0 + 50  # they may complete a group
    still_waiting = handle(step.state, request(1, rating=None), T0 + 50)
    assert still_waiting.reply == 1 and still_waiting.wake_at == T0 + TICK_MS
    early = handle(step.state, Tick(), T0 + TICK_MS - 1)
    assert early.wake_at == T0 + TICK_MS and early.groups == ()
    late = handle(step.state, Tick(), T0 + 3 * TICK_MS + 7)  # woken late: no burst to catch up
    assert late.wake_at == T0 + 4 * TICK_MS + 7
    assert queuecore.next_deadline(late.state) == late.wake_at
    gone = handle(late.state, Cancel(1), T0 + 4 * TICK_MS)
    assert gone.wake_at is None and queuecore.next_deadline(gone.state) is None


# -- any interleaving ---------------------------------------------------------------------

#: Most requests are for one ruleset, so that groups of four form too.
RULESETS = ("classic", "classic", "classic", "addiction", "montana")
PLAYERS = 8


@dataclass
class Ticket:
    """One request, as the process of the connection that made it sees it."""

    player_id: int
    ruleset: str
    node: str
    issued: int
    cancelled: bool = False
    #: Answered ``Grouped`` or ``Superseded``: its process asks no more.
    stopped: bool = False
    grouped_at: int | None = None
    #: Its player was grouped under it or after it was made: by this instant its process
    #: has heard (told of the match, or answered ``Grouped``: it asks every few seconds,
    #: well within ``stale_ms``) and asks no more.
    heard_by: int | None = None


Entries = dict[int, tuple[str, Waiting]]


def entries(state: QueueState) -> Entries:
    found: Entries = {}
    for ruleset, queue in state.queues.items():
        for w in queue:
            assert w.player_id not in found, f"player {w.player_id} queued twice"
            found[w.player_id] = (ruleset, w)
    return found


def ready_pair(queue: Sequence[Waiting], now: int, wait_ms: int) -> tuple[int, int] | None:
    """Two players of one kind who could play each other now: both waited ``wait_ms`` and
    their ratings fit the window of the shorter wait."""
    for a, b in combinations(queue, 2):
        waited = now - max(a.since, b.since)
        if a.bot == b.bot and waited >= wait_ms and abs(a.rating - b.rating) <= window(waited):
            return a.player_id, b.player_id
    return None


class Run:
    """Drives the core as its actor does and checks every step against what was asked."""

    def __init__(self, state: QueueState, players: Sequence[tuple[float, bool]]) -> None:
        self.state = state
        self.players = players
        self.now = T0
        self.tickets: dict[str, Ticket] = {}
        #: When each ticket's request was last answered with the queue's length.
        self.asked: dict[str, int] = {}
        #: Each player's last group, whichever leader formed it.
        self.last_grouped: dict[int, Grouping] = {}
        #: The groups the leader must remember now: its ``grouped``.
        self.remembered: dict[int, Grouping] = {}

    # -- what the processes and the actor do ----------------------------------------------

    def live(self, player_id: int) -> list[str]:
        """The tickets the player's processes still ask with."""
        return [
            name
            for name, ticket in self.tickets.items()
            if ticket.player_id == player_id
            and not (ticket.cancelled or ticket.stopped)
            and (ticket.heard_by is None or self.now < ticket.heard_by)
        ]

    def new_request(self, player_id: int, ruleset: str) -> None:
        name = f"{player_id}.{len(self.tickets)}"
        node = f"n{len(self.tickets) % 3}"
        self.tickets[name] = Ticket(player_id, ruleset, node, self.now)
        self.ask(name)

    def ask(self, name: str) -> None:
        """The request, as the actor sends it: without a rating first, with it if needed;
        a process told its request waits no more stops asking."""
        ticket = self.tickets[name]
        rating, bot = self.players[ticket.player_id]
        command = Enqueue(
            ticket.ruleset, ticket.player_id, f"p{ticket.player_id}", ticket.node, name,
            self.now - ticket.issued, None, bot,
        )
        reply = self.send(command).reply
        if isinstance(reply, NeedRating):
            reply = self.send(replace(command, rating=rating)).reply
        if isinstance(reply, Grouped | Superseded):
            ticket.stopped = True

    def cancel(self, player_id: int, pick: int) -> None:
        live = self.live(player_id)
        if live:  # that connection stops asking
            self.tickets[live[pick % len(live)]].cancelled = True
        self.send(Cancel(player_id))

    def tick(self) -> None:
        self.send(Tick())

    def advance(self, ms: int, *, timely: bool) -> None:
        """Time passes; a ``timely`` actor is woken at every instant it asked for."""
        until = self.now + ms
        while timely and self.state.tick_at is not None and self.state.tick_at <= until:
            self.now = self.state.tick_at
            self.tick()
        self.now = until

    def new_leader(self) -> None:
        """The leader changes: its queue starts empty and every waiting player's process
        asks again with their ticket and waiting time (those who can play each other by
        now are grouped as they come back)."""
        before = entries(self.state)
        for ticket in self.tickets.values():
            # The new leader does not know who was just grouped: the model takes it that
            # the process of every request made before its player's group heard of it
            # from the old leader (a limit of a queue that is not stored).
            ticket.stopped = ticket.stopped or ticket.heard_by is not None
        self.remembered = {}
        self.state = new_queue(
            wait_ms=self.state.wait_ms, stale_ms=self.state.stale_ms, tick_ms=self.state.tick_ms
        )
        for _, w in before.values():
            self.ask(w.ticket)
        back = entries(self.state)
        for player_id, (ruleset, w) in before.items():
            if self.tickets[w.ticket].grouped_at != self.now:
                assert back[player_id] == (ruleset, replace(w, seen=self.now))
        assert back.keys() <= before.keys()

    def settle(self) -> None:
        """Everyone still queued keeps asking: once the shortest wait is over ``wait_ms``
        and a window's worth for the widest spread, a queue of one kind has one player at
        most."""
        for _, w in entries(self.state).values():
            self.ask(w.ticket)
        ratings = [w.rating for _, w in entries(self.state).values()]
        if not ratings:
            return
        widening_ms = (max(ratings) - min(ratings) - WINDOW_POINTS) / WINDOW_POINTS_PER_S
        until = self.now + self.state.wait_ms + max(0, math.ceil(widening_ms * 1000))
        while self.state.tick_at is not None:
            self.now = self.state.tick_at
            self.tick()
            if self.now >= until:
                break
            for _, w in entries(self.state).values():
                self.ask(w.ticket)
        for ruleset, queue in self.state.queues.items():
            for bot in (False, True):
                kind = [w.player_id for w in queue if w.bot == bot]
                assert len(kind) <= 1, f"{kind} still wait in {ruleset} at {self.now}"

    # -- the checks -----------------------------------------------------------------------

    def send(self, command: Command) -> Step:
        before, now = self.state, self.now
        cut = before.tick_at is not None and before.tick_at <= now
        step = handle(before, command, now)
        self.check_groups(before, step, cut, command)
        added = self.check_reply(before, command, step, cut)
        self.check_changes(before, command, step, cut)
        self.check_state(before, command, step, cut, added)
        self.state = step.state
        return step

    def check_groups(self, before: QueueState, step: Step, cut: bool, command: Command) -> None:
        """The groups are true, nobody is grouped twice but for a request made after their
        last group, and the queue remembers each group for ``stale_ms``."""
        now, after = self.now, step.state
        assert cut or not step.groups, "groups formed without a cut being due"
        if cut:
            self.remembered = {p: g for p, g in self.remembered.items() if g.until > now}
        for group in step.groups:
            members = group.members
            assert GROUP_MIN <= len(members) <= GROUP_MAX
            assert len({w.player_id for w in members}) == len(members)
            assert all(w in before.waiting(group.ruleset) for w in members)
            assert len({w.bot for w in members}) == 1, "bots and people in one group"
            oldest = min(w.since for w in members)
            assert len(members) == GROUP_MAX or now - oldest >= before.wait_ms
            spread = max(w.rating for w in members) - min(w.rating for w in members)
            assert spread <= window(now - oldest)
            for w in members:
                assert now - w.seen <= before.stale_ms, f"stale player {w.player_id} grouped"
                ticket = self.tickets[w.ticket]
                assert ticket.grouped_at is None, f"ticket {w.ticket} grouped twice"
                ticket.grouped_at = now
                last = self.last_grouped.get(w.player_id)
                if last is not None:  # a second match needs a request made after the first
                    assert not made_before(ticket.issued, last.at), (
                        f"player {w.player_id} grouped again at {now} with {w.ticket}, made"
                        f" before their group at {last.at}"
                    )
                earlier = self.remembered.get(w.player_id)
                tickets = frozenset({w.ticket}) | (earlier.tickets if earlier else frozenset())
                grouping = Grouping(tickets, now, now + before.stale_ms)
                self.last_grouped[w.player_id] = self.remembered[w.player_id] = grouping
                for other in self.tickets.values():
                    if (
                        other.player_id == w.player_id
                        and other.heard_by is None
                        and (other is ticket or made_before(other.issued, now))
                    ):
                        other.heard_by = grouping.until
                queued_again = after.find(w.player_id)
                assert queued_again is None or (
                    isinstance(command, Enqueue)
                    and command.player_id == w.player_id
                    and queued_again.ticket == command.ticket
                    and not made_before(self.tickets[command.ticket].issued, now)
                )
        assert after.grouped == self.remembered

    def check_reply(self, before: QueueState, command: Command, step: Step, cut: bool) -> bool:
        """Whether the command added a player to a queue."""
        now, after = self.now, step.state
        grouped_now = {w.player_id for group in step.groups for w in group.members}

        def left_by_the_cut(w: Waiting) -> bool:
            return w.player_id in grouped_now or (cut and now - w.seen > before.stale_ms)

        match command:
            case Cancel(player_id=player_id):
                was = entries(before).get(player_id)
                assert step.reply is (was is not None and not left_by_the_cut(was[1]))
            case Enqueue(player_id=player_id, ticket=name, ruleset=ruleset):
                made = self.tickets[name].issued
                was = entries(before).get(player_id)
                if was is not None and left_by_the_cut(was[1]):
                    was = None
                same = was is not None and was[1].ticket == name
                grouping = self.remembered.get(player_id)
                refusal: Grouped | Superseded | NeedRating | None = None
                if grouping is not None and (
                    name in grouping.tickets or made_before(made, grouping.at)
                ):
                    refusal = Grouped()
                elif was is not None and not same and made < self.tickets[was[1].ticket].issued:
                    refusal = Superseded()
                elif not same and command.rating is None:
                    refusal = NeedRating()
                entry = entries(after).get(player_id)
                if refusal is not None:
                    assert step.reply == refusal, f"{command} at {now}: {step.reply}"
                    assert entry == was
                    return False
                assert step.reply == len(after.waiting(ruleset))
                self.asked[name] = now
                if was is not None and same:
                    assert entry == (ruleset, replace(was[1], seen=now))
                    return False
                assert command.rating is not None
                assert entry == (
                    ruleset,
                    Waiting(
                        player_id, command.name, command.rating, now - command.waited_ms,
                        command.node, now, command.bot, name,
                    ),
                )
                return True
            case Tick():
                assert step.reply is None
        return False

    def check_changes(self, before: QueueState, command: Command, step: Step, cut: bool) -> None:
        """Nobody leaves a queue but by a group, a cancel, their newer request or going
        stale, and nobody comes but by their request."""
        now = self.now
        grouped_now = {w.player_id for group in step.groups for w in group.members}
        old, new = entries(before), entries(step.state)
        asking = command.player_id if isinstance(command, Enqueue) else None
        answered = isinstance(step.reply, int) and not isinstance(step.reply, bool)
        for player_id, (ruleset, w) in old.items():
            if new.get(player_id) == (ruleset, w) or (player_id == asking and answered):
                continue
            assert player_id not in new, f"player {player_id} changed by {command}"
            assert (
                player_id in grouped_now
                or (cut and now - w.seen > before.stale_ms)
                or command == Cancel(player_id)
            ), f"player {player_id} lost by {command} at {now}"
        for player_id in new.keys() - old.keys():
            assert player_id == asking and answered, f"player {player_id} came by {command}"

    def check_state(
        self, before: QueueState, command: Command, step: Step, cut: bool, added: bool
    ) -> None:
        now, after = self.now, step.state
        queued = entries(after)
        if not queued:
            assert after.tick_at is None
        elif added:  # someone came: they may complete a group at once
            assert after.tick_at == now
        elif cut:  # the next cut is tick_ms later
            assert after.tick_at == now + after.tick_ms
        else:
            assert after.tick_at is not None and after.tick_at == before.tick_at
            assert now <= after.tick_at <= now + after.tick_ms
        assert step.wake_at == after.tick_at == queuecore.next_deadline(after)
        asking = command.player_id if isinstance(command, Enqueue) else None
        for player_id, (ruleset, w) in queued.items():
            ticket = self.tickets[w.ticket]
            assert (ticket.player_id, ticket.ruleset) == (player_id, ruleset)
            # Queued on a request its process still asks with, made after their last group.
            assert not (ticket.cancelled or ticket.stopped) and ticket.heard_by is None
            assert w.since == ticket.issued, "their waiting time was lost"
            assert w.seen == self.asked[w.ticket]
            assert w.rating == self.players[player_id][0]
            if cut and player_id != asking:
                assert now - w.seen <= after.stale_ms, f"stale player {player_id} kept"
        if cut:  # whoever could play each other now was grouped
            for ruleset, queue in after.queues.items():
                others = [w for w in queue if w.player_id != asking]
                assert ready_pair(others, now, after.wait_ms) is None, (ruleset, now)


OPS = ("new", "crowd", "again", "again", "again", "cancel", "tick", "tick", "leader")


@settings(max_examples=120, deadline=None)
@given(
    timing=st.sampled_from([(0, 1_000, 100), (500, 1_000, 250), (3_000, 4_000, 200)]),
    players=st.lists(
        st.tuples(
            st.integers(0, 16).map(lambda halves: halves / 2),
            st.sampled_from([False, False, False, True]),  # a bot or not
        ),
        min_size=PLAYERS,
        max_size=PLAYERS,
    ),
    ops=st.lists(
        st.tuples(
            st.sampled_from(OPS),
            st.integers(0, PLAYERS - 1),
            st.integers(0, 10**6),
            st.one_of(st.just(0), st.integers(1, 400), st.integers(401, 2_500)),
            st.booleans(),
        ),
        min_size=10,
        max_size=60,
    ),
)
def test_any_interleaving_keeps_the_queue_true_and_groups_everyone_who_can_play(
    timing: tuple[int, int, int],
    players: list[tuple[float, bool]],
    ops: list[tuple[str, int, int, int, bool]],
) -> None:
    wait_ms, stale_ms, tick_ms = timing
    run = Run(new_queue(wait_ms=wait_ms, stale_ms=stale_ms, tick_ms=tick_ms), players)
    for op, player_id, pick, elapse_ms, timely in ops:
        if op == "new":
            run.new_request(player_id, RULESETS[pick % len(RULESETS)])
        elif op == "crowd":  # four players ask for one ruleset at one instant
            for n in range(4):
                run.new_request((player_id + n) % PLAYERS, RULESETS[pick % len(RULESETS)])
        elif op == "again":
            live = run.live(player_id)
            if live:
                run.ask(live[pick % len(live)])
        elif op == "cancel":
            run.cancel(player_id, pick)
        elif op == "tick":
            run.tick()
        else:
            run.new_leader()
        run.advance(elapse_ms, timely=timely)
    run.settle()
