"""The load benchmark's clients: bot players racing on gaps-server, and echo clients
sending an action-sized frame to an echo server and waiting for it back.

Both ride on ``bench.wire`` (a frame is a slice of the bytes read and one call): the load
generator has to cost less a frame than the servers it measures (docs/benchmarks.md,
issue 35). A player speaks the protocol through the client session every client shares
(``gaps_protocol.ClientSession``: request ids, replies, events in order, action seqs,
every frame decoded strictly into its type). An echo client is no Gaps client (the
echo answers with the frame it was sent): it is driven by its frames alone, with no task
or future a round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from bench.wire import Wire, WireClosed, open_wire
from gaps import Game, Seed
from gaps_protocol import (
    ClientSession,
    Disconnect,
    Event,
    Notice,
    NumberedEvent,
    Refused,
    Reply,
    Retrying,
    Unanswered,
)
from gaps_protocol.messages import ClientMessage, Error, ServerReply, encode
from gaps_protocol.messages import replies as r
from gaps_protocol.messages.events import MatchEnded, ProgressMade, Started
from gaps_protocol.messages.requests import (
    CreateMatch,
    JoinMatch,
    LeaveMatch,
    Play,
    Register,
    StartMatch,
)
from gaps_protocol.session import CLOSE_PROTOCOL_ERROR

DEFAULT_MAX_ACTIONS: Final = 10_000_000
REPLY_TIMEOUT_S: Final = 30.0
#: What an echo client sends: an action as a player sends it.
ECHO_FRAME: Final = encode(Play(id=107, code="K7QX2M", seq=107, action="8C>r2c6"))


class SetupRefused(Exception):
    """The server refused a request that a race cannot do without (register, create,
    join, start)."""


@dataclass
class Tally:
    """What the players of one phase measured; samples are kept only inside the window."""

    window_start: float = math.inf  # time.perf_counter; inf until the window opens
    window_end: float = math.inf
    acks: int = 0
    acks_ms: list[float] = field(default_factory=list)
    events_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    matches: int = 0  # ended, whoever ended them
    max_actions: int = DEFAULT_MAX_ACTIONS
    full_at: float | None = None  # when the max_actions-th acknowledgement arrived

    def in_window(self, instant: float) -> bool:
        return self.window_start <= instant <= self.window_end

    def done(self) -> bool:
        return time.perf_counter() >= self.window_end or self.acks >= self.max_actions

    def acknowledged(self, sent: float, arrived: float) -> None:
        if self.in_window(arrived):
            self.acks += 1
            self.acks_ms.append((arrived - sent) * 1000)
            if self.acks == self.max_actions:
                self.full_at = arrived


class Pacer:
    """When a player may send next: at once when flat out (``pace_per_s`` 0), else
    ``1 / pace_per_s`` after its previous send, from a random offset so that the players
    do not send in step."""

    def __init__(
        self,
        pace_per_s: float,
        *,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        offset: float | None = None,  # a share of the interval; random if None
    ) -> None:
        self.interval_s = 1 / pace_per_s if pace_per_s else 0.0
        self._clock, self._sleep = clock, sleep
        share = random.random() if offset is None else offset
        self._next = clock() + share * self.interval_s

    def delay(self) -> float:
        """How long from now the player may send, its turn then taken: a late player
        sends at once, and its next turn is one interval later: it never sends a burst
        to catch up."""
        if not self.interval_s:
            return 0.0
        now = self._clock()
        wait = max(0.0, self._next - now)
        self._next = now + wait + self.interval_s
        return wait

    async def wait(self) -> None:
        """Returns when the player may send (see ``delay``)."""
        wait = self.delay()
        if wait:
            await self._sleep(wait)


class Client:
    """One connection's ``ClientSession`` (gaps_protocol) over a ``Wire``: the session
    numbers the requests and matches their replies, delivers the events in order and
    decodes every frame into its type, strictly; this layer writes its frames, feeds it
    what the wire reads with the instant it was read, and wakes it when it asks (a reply
    overdue after ``REPLY_TIMEOUT_S``, a request refused for now going again). Events go
    to ``on_event``."""

    def __init__(self, wire: Wire, tally: Tally) -> None:
        self.wire = wire
        self.tally = tally
        # No reconnect: a lost connection is a figure of the run (``WireClosed``).
        self.session = ClientSession(wire.url, reconnect=False, reconnect_for_s=REPLY_TIMEOUT_S,
                                     request_timeout_s=REPLY_TIMEOUT_S)
        self._waiting: dict[int, asyncio.Future[tuple[float, Notice]]] = {}
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self.session.connection_made(time.perf_counter())
        wire.listen(self._received, self._lost)

    async def request(
        self, message: ClientMessage, *, retry: bool = False
    ) -> tuple[float, float, ServerReply]:
        """Sends ``message``; its send time, the reply's arrival time
        (``time.perf_counter``) and the reply (an ``error`` too). A request unanswered for
        ``REPLY_TIMEOUT_S`` raises ``TimeoutError``, a lost connection ``WireClosed``."""
        sent = time.perf_counter()
        request_id = self.session.request(message, sent, retry=retry)
        arrived, reply = await self.answer(request_id)
        return sent, arrived, reply

    async def answer(self, request_id: int) -> tuple[float, ServerReply]:
        """The reply to the session's request ``request_id`` (sent by the pump this
        starts) and when it arrived."""
        waiting: asyncio.Future[tuple[float, Notice]] = self._loop.create_future()
        self._waiting[request_id] = waiting
        self._pump(time.perf_counter())
        try:
            arrived, notice = await waiting
        finally:
            self._waiting.pop(request_id, None)
        if isinstance(notice, Reply | Refused):
            return arrived, notice.message
        assert isinstance(notice, Unanswered)
        raise WireClosed(notice.reason) if notice.lost else TimeoutError(notice.reason)

    def on_event(self, message: NumberedEvent, arrived: float) -> None:
        """An event of a match, in order; ignored here."""

    def _received(self, payload: bytes, arrived: float) -> None:
        self.session.receive(payload, arrived)
        self._pump(arrived)

    def _pump(self, now: float) -> None:
        """Does what the session asks: sends its frames, hands on its notices (``now``:
        when what they answer arrived) and arms its timer."""
        session = self.session
        for frame in session.frames_to_send():
            try:
                self.wire.send(frame.encode())
            except WireClosed:
                break  # the wire tells the session, which answers what waits
        for notice in session.events():
            if isinstance(notice, Event):
                self.on_event(notice.message, now)
            elif isinstance(notice, Reply | Refused | Unanswered):
                waiting = self._waiting.get(notice.request_id)
                if waiting is not None and not waiting.done():
                    waiting.set_result((now, notice))
            elif isinstance(notice, Retrying):
                self.tally.errors[notice.code] += 1
            elif isinstance(notice, Disconnect) and notice.code == CLOSE_PROTOCOL_ERROR:
                self.tally.errors["protocol_error"] += 1
                self.wire.abort()
        wake_at = session.next_timer()
        # A timer is rearmed only for an earlier instant: each request's answer is due
        # ``REPLY_TIMEOUT_S`` after its send, and a timer a request costs more than the
        # request.
        if wake_at is not None and wake_at < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = wake_at
            self._timer = self._loop.call_later(max(0.0, wake_at - now), self._tick)

    def _tick(self) -> None:
        self._timer, self._timer_at = None, math.inf
        now = time.perf_counter()
        self.session.tick(now)
        self._pump(now)

    def _lost(self, closed: WireClosed) -> None:
        now = time.perf_counter()
        self.session.connection_lost(now)
        self._pump(now)

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        now = time.perf_counter()
        self.session.close(now)
        self._pump(now)  # what still waits is told: no answer comes
        await self.wire.close()


async def open_client(url: str) -> Wire:
    """A connection, its handshake done within ``REPLY_TIMEOUT_S``."""
    return await open_wire(url, timeout_s=REPLY_TIMEOUT_S)


class Player(Client):
    """A bot player: registered under a random name, it plays the games of its group's
    matches and times the ``progress`` events of its opponents' actions."""

    def __init__(self, wire: Wire, tally: Tally, players: dict[int, Player]) -> None:
        super().__init__(wire, tally)
        self.players = players  # every bot of the run, by player id
        self.player_id = 0
        self.code = ""  # the match it plays now
        self.game: Game | None = None
        self.ruleset = "classic"
        self.dealt = asyncio.Event()
        self.ended = asyncio.Event()
        self.sent_at: dict[tuple[int, int], float] = {}  # (moves, redeals) after -> send

    async def register(self, name: str) -> None:
        reply = await self.setup(Register(name=name))
        assert isinstance(reply, r.Registered), reply
        self.player_id = reply.player.id
        self.players[self.player_id] = self

    async def setup(self, message: ClientMessage) -> ServerReply:
        """A request the race needs answered; a refusal raises ``SetupRefused``."""
        reply = (await self.request(message))[2]
        if isinstance(reply, Error):
            self.tally.errors[reply.code] += 1
            raise SetupRefused(f"{message.__struct_config__.tag}: {reply}")
        return reply

    def watch(self, code: str) -> None:
        """Play match ``code`` next: the session stops following the last one."""
        if self.code:
            self.session.forget(self.code)
        self.code, self.game = code, None
        self.dealt.clear()
        self.ended.clear()
        self.sent_at.clear()

    def on_event(self, message: NumberedEvent, arrived: float) -> None:
        if isinstance(message, ProgressMade):
            if message.match != self.code:
                return
            sender = self.players.get(message.player_id)
            if sender is None or sender is self or sender.code != self.code:
                return
            sent = sender.sent_at.get((message.moves_made, message.redeals_used))
            if sent is not None and self.tally.in_window(arrived):
                self.tally.events_ms.append((arrived - sent) * 1000)
        elif isinstance(message, Started) and message.match == self.code:
            self.ruleset = message.ruleset
            self.game = game_from(message.grid, self.ruleset)
            self.dealt.set()
        elif isinstance(message, MatchEnded) and message.match == self.code:
            self.ended.set()

    async def play(self, pace_per_s: float) -> None:
        """Plays the dealt game until it ends or the window closes, then waits for the
        match to end."""
        await self._until_done(self.dealt.wait())
        # From the deal: at a pace, the first action comes at a random instant of the
        # first interval, as the players of a match do not all act at the deal.
        pacer = Pacer(pace_per_s)
        while self.game is not None and not self.game.is_over() and not self.tally.done():
            await pacer.wait()
            if not await self._act(self.game):
                await self.setup(LeaveMatch(code=self.code))
                break
        await self._until_done(self.ended.wait())

    async def _act(self, game: Game) -> bool:
        """One action, numbered by the session (one refused for now goes again, for up
        to ``REPLY_TIMEOUT_S``, and is timed from its first send); False if the server
        refused it for good (the game is then given up)."""
        moves = game.legal_moves()
        if moves:
            chosen = random.choice(moves)
            action = str(chosen)
            game.play(chosen)
            self.sent_at[(game.moves_made, game.redeals_used)] = time.perf_counter()
        elif game.can_redeal():
            action = "redeal"
            self.sent_at[(game.moves_made, game.redeals_used + 1)] = time.perf_counter()
        else:
            action = "stop"
            game.stop()
        sent = time.perf_counter()
        arrived, reply = await self.answer(self.session.act(self.code, action, sent))
        if not isinstance(reply, r.ActionOk):
            self.tally.errors[reply.code if isinstance(reply, Error) else "unexpected"] += 1
            return False
        self.tally.acknowledged(sent, arrived)
        if action == "redeal" and reply.grid is not msgspec.UNSET:
            self.game = game_from(
                reply.grid, self.ruleset, redeals_used=reply.redeals_used,
                moves_made=reply.moves_made,
            )  # fmt: skip
        return True

    async def _until_done(self, waited: Awaitable[Any]) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waited, max(0.0, self.tally.window_end - time.perf_counter()))


def game_from(
    grid: Iterable[str], ruleset: str, *, redeals_used: int = 0, moves_made: int = 0
) -> Game:
    """The game a player sees: the grid the server sent (its seed stays secret)."""
    shown = Game.from_layout("\n".join(grid), ruleset)
    return Game.restore(
        Seed(b"unknown"), ruleset, shown.grid_codes(),
        redeals_used=redeals_used, moves_made=moves_made,
    )  # fmt: skip


async def race(
    group: list[Player], *, ruleset: str, pace_per_s: float, dealt: Callable[[], None]
) -> None:
    """The group's matches, one after the other, until the window closes: the first
    player creates each, the others join, the first starts it, all play. ``dealt`` is
    called once the first match has started."""
    host, tally = group[0], group[0].tally
    while not tally.done():
        created = await host.setup(
            CreateMatch(ruleset=ruleset, max_players=len(group), countdown_s=0)
        )
        assert isinstance(created, r.MatchCreated), created
        code = created.match.code
        for player in group:
            player.watch(code)
        await asyncio.gather(
            *(player.setup(JoinMatch(code=code)) for player in group[1:])
        )
        await host.setup(StartMatch(code=code))
        dealt()
        await asyncio.gather(*(player.play(pace_per_s) for player in group))
        if all(player.ended.is_set() for player in group):
            tally.matches += 1


class Echoer:
    """The players' request loop against an echo server, driven by the frames alone:
    ``ECHO_FRAME``, then the wait for its echo (the events a fan-out echo sends between
    are read and passed over), then the next at the pace. ``loop`` returns when the
    window has closed; an echo still awaited ``REPLY_TIMEOUT_S`` after its send when the
    client closes is counted as ``no_reply``."""

    def __init__(self, wire: Wire, tally: Tally) -> None:
        self.wire, self.tally = wire, tally
        self._loop = asyncio.get_running_loop()
        self._finished: asyncio.Future[None] = self._loop.create_future()
        self._pacer = Pacer(0)
        self._sent = math.inf
        self._awaited = False  # an echo is on its way
        wire.listen(self._received, self._lost)

    async def loop(self, pacer: Pacer) -> None:
        self._pacer = pacer
        self._next()
        await self._finished

    def _next(self) -> None:
        wait = self._pacer.delay()
        if wait:
            self._loop.call_later(wait, self._send)
        else:
            self._send()

    def _send(self) -> None:
        if self._finished.done():
            return
        if self.tally.done():
            self._finished.set_result(None)
            return
        self._sent = time.perf_counter()
        self._awaited = True
        self.wire.send(ECHO_FRAME)

    def _received(self, payload: bytes, arrived: float) -> None:
        if payload != ECHO_FRAME:
            return  # a fan-out echo's event
        self._awaited = False
        self.tally.acknowledged(self._sent, arrived)
        self._next()

    def _lost(self, closed: WireClosed) -> None:
        if not self._finished.done():
            self._finished.set_exception(closed)

    async def close(self) -> None:
        if self._awaited and time.perf_counter() - self._sent >= REPLY_TIMEOUT_S:
            self.tally.errors["no_reply"] += 1
        if not self._finished.done():
            self._finished.cancel()
        await self.wire.close()
