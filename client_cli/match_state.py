"""A match as one client sees it, built from the server's snapshots, events and acks.

Pure (no I/O, no UI): the match screen draws it, the bots read it. The player's own game
is mirrored locally with ``gaps`` (from the dealt grid, then each acknowledged action),
which is what the screen pre-checks moves against; the numbers shown come from the
server, the authority.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from msgspec.structs import replace

from client_cli.connection import ConnectionNotice, Listened
from client_cli.render import bot_mark
from gaps import GAP, Card, Game, Ruleset, Seed, Slot
from gaps_protocol import MATCH_SNAPSHOTS, MatchSnapshot
from gaps_protocol.messages import MatchEvent
from gaps_protocol.messages.common import Par, Role
from gaps_protocol.messages.events import (
    Countdown,
    HostChanged,
    MatchAbandoned,
    MatchEnded,
    PlayerFinished,
    PlayerJoined,
    PlayerLeft,
    Presence,
    ProgressMade,
    ReadyChanged,
    RematchOffered,
    Started,
)
from gaps_protocol.messages.replies import ActionOk
from gaps_protocol.messages.views import (
    GameCounters,
    GameView,
    MatchSummary,
    Progress,
    RankedProgress,
    Replay,
)

#: The statuses in which a player's game accepts no more actions.
OVER_STATUSES = frozenset({"won", "lost", "stopped"})


class Phase(StrEnum):
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    FINISHED = "finished"
    ABANDONED = "abandoned"


def parse_grid(rows: list[str]) -> list[int]:
    """Wire grid (4 strings of 13 cells, ``--`` a gap) to 52 card codes, ``GAP`` for gaps."""
    return [GAP if cell == "--" else Card.parse(cell).code for row in rows for cell in row.split()]


def progress_of(row: Progress) -> Progress:
    """A player's progress alone, from what carries it (a ``progress`` or
    ``player_finished`` event, a ranking row): the other members left out."""
    if type(row) is Progress:
        return row
    return Progress(
        player_id=row.player_id, name=row.name, bot=row.bot, ready=row.ready,
        connected=row.connected, placed=row.placed, score=row.score,
        redeals_used=row.redeals_used, moves_made=row.moves_made, status=row.status,
        finished=row.finished, won=row.won, end_reason=row.end_reason,
        finish_ms=row.finish_ms,
    )


@dataclass
class OwnGame:
    """The player's own game as the server last acknowledged it."""

    ruleset: Ruleset
    grid: list[int]
    score: int = 0
    placed: int = 0
    redeals_used: int = 0
    redeals_left: int = 0
    moves_made: int = 0
    status: str = "playing"
    can_undo: bool = False
    last_seq: int = 0
    end_reason: str | None = None

    @staticmethod
    def dealt(rows: list[str], ruleset: Ruleset) -> OwnGame:
        own = OwnGame(ruleset, parse_grid(rows))
        game = own.game()
        own.score, own.placed, own.redeals_left = game.score, game.placed, game.redeals_left
        own.status = game.result()
        return own

    @staticmethod
    def from_view(view: GameView, ruleset: Ruleset, last_seq: int) -> OwnGame:
        """From a snapshot's ``you.game``."""
        own = OwnGame(ruleset, parse_grid(list(view.grid)), last_seq=last_seq)
        own._counters(view)
        return own

    def _counters(self, view: GameCounters) -> None:
        self.score = view.score
        self.placed = view.placed
        self.redeals_used = view.redeals_used
        self.redeals_left = view.redeals_left
        self.moves_made = view.moves_made
        self.status = view.status
        self.can_undo = view.can_undo

    @property
    def over(self) -> bool:
        return self.status in OVER_STATUSES or self.end_reason is not None

    def game(self) -> Game:
        """A ``gaps.Game`` in this position (under a stand-in seed: the real one is secret)."""
        return Game.restore(
            Seed(b"client"), self.ruleset, self.grid, redeals_used=self.redeals_used,
            moves_made=self.moves_made, stopped=self.status == "stopped",
        )

    def apply_ack(self, ack: ActionOk) -> bool:
        """Apply an ``action_ok``; returns False for one already applied (a resend's)."""
        if ack.seq <= self.last_seq:
            return False
        self.last_seq = ack.seq
        if ack.kind in ("move", "undo") and isinstance(ack.card, str) \
                and isinstance(ack.from_, str) and isinstance(ack.to, str):
            code = Card.parse(ack.card).code
            self.grid[Slot.parse(ack.from_).index] = GAP
            self.grid[Slot.parse(ack.to).index] = code
        elif ack.kind == "redeal" and isinstance(ack.grid, list):
            self.grid = parse_grid(list(ack.grid))
        self._counters(ack)
        return True


class ServerClock:
    """The match clock, in server milliseconds, advanced locally between messages."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._origin: float | None = None  # local time at match ms 0
        self._frozen: int | None = None

    def sync(self, t_ms: int) -> None:
        """A message stamped ``t_ms`` arrived now (it left the server a little before)."""
        if self._frozen is not None:
            return
        origin = self._now() - t_ms / 1000
        # Take the earliest origin seen: a late message must not pull the clock back.
        self._origin = origin if self._origin is None else min(self._origin, origin)

    def freeze(self, t_ms: int) -> None:
        self._frozen = t_ms

    @property
    def running(self) -> bool:
        return self._origin is not None and self._frozen is None

    def now_ms(self) -> int:
        if self._frozen is not None:
            return self._frozen
        if self._origin is None:
            return 0
        return max(0, int((self._now() - self._origin) * 1000))


@dataclass
class MatchState:
    """Everything the screen shows about one match."""

    code: str
    you_id: int | None = None
    role: Role = "player"
    phase: Phase = Phase.LOBBY
    #: The match as the last snapshot summed it up, kept up to date by the events (None
    #: before the first snapshot).
    summary: MatchSummary | None = None
    players: dict[int, Progress] = field(default_factory=dict)
    own: OwnGame | None = None
    ruleset: Ruleset = field(default_factory=lambda: Ruleset.named("classic"))
    time_limit_s: int = 600
    commitment: str | None = None
    seed: str | None = None
    ranking: list[RankedProgress] | None = None
    countdown_ends: float | None = None  # local monotonic time of the deal
    clock: ServerClock = field(default_factory=ServerClock)
    log: list[str] = field(default_factory=list)
    spectators: int = 0
    last_seq: int = 0
    #: Why this client can no longer follow the match, if it cannot, naming the match: the
    #: server no longer has it (its rejoin after a reconnect was refused), or the
    #: connection gave up.
    gone: str | None = None
    #: The rematches offered once the match is over (``rematch_offered``), by whether
    #: they deal the same seed.
    rematches: dict[bool, RematchOffered] = field(default_factory=dict)
    #: The finished match's replay document (``get_replay``), once fetched: every action
    #: and the seed, and the deal's par once the server has solved it.
    replay: Replay | None = None

    # -- reading -------------------------------------------------------------------------

    @property
    def me(self) -> Progress | None:
        return self.players.get(self.you_id) if self.you_id is not None else None

    @property
    def kind(self) -> str:
        """``race``, ``quick``, ``tournament`` or ``daily``."""
        return self.summary.kind if self.summary is not None else "race"

    @property
    def host_id(self) -> int | None:
        return self.summary.host_id if self.summary is not None else None

    @property
    def is_host(self) -> bool:
        return self.you_id is not None and self.host_id == self.you_id

    @property
    def playing(self) -> bool:
        """Whether this client may act now."""
        me = self.me
        return (
            self.role == "player" and self.phase is Phase.RUNNING and self.own is not None
            and not self.own.over and not (me is not None and me.finished)
        )

    @property
    def par(self) -> Par | None:
        """The deal's par from the replay, None until known."""
        return self.replay.match.par if self.replay is not None else None

    def remaining_ms(self) -> int:
        return max(0, self.time_limit_s * 1000 - self.clock.now_ms())

    def name_of(self, player_id: int) -> str:
        player = self.players.get(player_id)
        return player.name if player is not None else f"player {player_id}"

    def verified_commitment(self) -> bool | None:
        """Whether SHA-256 of the revealed seed is the commitment (None before the reveal)."""
        if self.seed is None or self.commitment is None:
            return None
        try:
            return Seed.parse(self.seed).commitment == self.commitment
        except ValueError:
            return False

    # -- applying what the server says ---------------------------------------------------------

    def apply(self, message: Listened) -> None:
        """Apply an event, a snapshot (``match_created``, ``joined``, ``snapshot``, and
        ``daily_started``, ``matched`` and ``rematch``, shaped like ``joined``) or a
        connection notice (lost, restored, failed, and gone for this match); anything else
        is not this match's state."""
        if isinstance(message, MatchEvent):
            self._event(message)
        elif isinstance(message, MATCH_SNAPSHOTS):
            self._snapshot(message)
        elif isinstance(message, ConnectionNotice):
            self._connection(message)

    def _connection(self, notice: ConnectionNotice) -> None:
        if notice.state == "lost":
            self._note(f"connection lost: {notice.detail}")
        elif notice.state == "restored":
            self._note("connection restored: back in the match")
        elif notice.state == "gone" and notice.match == self.code:
            self.gone = f"match {self.code} is gone: {notice.detail}"
            self._note(self.gone)
        elif notice.state == "failed":
            self.gone = f"lost match {self.code}: {notice.detail}"
            self._note(self.gone)

    def _note(self, line: str) -> None:
        self.log.append(line)
        del self.log[:-50]

    def _snapshot(self, message: MatchSnapshot) -> None:
        summary = self.summary = message.match
        self.ruleset = Ruleset.named(summary.ruleset)
        self.time_limit_s = summary.time_limit_s
        self.commitment = summary.commitment or self.commitment
        self.seed = summary.seed if isinstance(summary.seed, str) else self.seed
        self.spectators = message.spectators
        # A snapshot reflects every event up to its seq; after a server restart the seq is
        # numbered anew, lower than those seen before: it is the count from now on.
        self.last_seq = message.seq
        self.players = {p.player_id: p for p in message.players}
        you = message.you
        self.role = you.role
        phase = Phase(summary.status)
        if phase is Phase.COUNTDOWN and self.phase is not Phase.COUNTDOWN:
            self.countdown_ends = time.monotonic() + summary.countdown_s
        self.phase = phase if self.phase is not Phase.FINISHED else self.phase
        if phase in (Phase.RUNNING, Phase.FINISHED) and summary.started_at:
            self.clock.sync(summary.t_ms)
        if isinstance(you.game, GameView):
            last_seq = you.last_seq if isinstance(you.last_seq, int) else 0
            if self.own is None or last_seq >= self.own.last_seq:
                self.own = OwnGame.from_view(you.game, self.ruleset, last_seq)
        self._sync_own_end()

    def _seated(self) -> None:
        """The summary's count of seats taken, after a player came or went."""
        if self.summary is not None:
            self.summary = replace(self.summary, players=len(self.players))

    def _event(self, event: MatchEvent) -> None:
        self.last_seq = max(self.last_seq, event.seq)
        if self.phase is Phase.RUNNING and not isinstance(event, MatchEnded):
            self.clock.sync(event.t_ms)
        if isinstance(event, PlayerJoined):
            player = event.player
            self.players[player.player_id] = player
            self._seated()
            self._note(f"{player.name}{bot_mark(player)} joined")
        elif isinstance(event, PlayerLeft):
            gone = self.players.pop(event.player_id, None)
            self._seated()
            if gone:
                self._note(f"{gone.name} left")
        elif isinstance(event, HostChanged):
            if self.summary is not None:
                self.summary = replace(self.summary, host_id=event.host_id)
            if self.is_host:
                self._note("you are the host now: start the match when you like")
            else:
                self._note(f"{self.name_of(event.host_id)} is the host now")
        elif isinstance(event, Presence):
            seated = self.players.get(event.player_id)
            if seated is not None:
                self.players[event.player_id] = replace(seated, connected=event.connected)
                self._note(f"{seated.name} is {'back' if event.connected else 'away'}")
        elif isinstance(event, MatchAbandoned):
            self.phase = Phase.ABANDONED
            self._note("the match was abandoned")
        elif isinstance(event, ReadyChanged):
            seated = self.players.get(event.player_id)
            if seated is not None:
                self.players[event.player_id] = replace(seated, ready=event.ready)
                self._note(f"{seated.name} is {'ready' if event.ready else 'not ready'}")
        elif isinstance(event, Countdown):
            self.phase = Phase.COUNTDOWN
            self.commitment = event.commitment
            self.countdown_ends = time.monotonic() + event.countdown_ms / 1000
            self._note("the match is starting")
        elif isinstance(event, Started):
            self._started(event)
        elif isinstance(event, ProgressMade | PlayerFinished):
            progress = progress_of(event)
            self.players[progress.player_id] = progress
            if isinstance(event, PlayerFinished):
                self._note(f"{progress.name} finished: {progress.end_reason}, "
                           f"score {progress.score}")
            self._sync_own_end()
        elif isinstance(event, MatchEnded):
            self.phase = Phase.FINISHED
            self.ranking = list(event.ranking)
            self.seed = event.seed
            self.commitment = event.commitment or self.commitment
            for row in self.ranking:
                self.players[row.player_id] = progress_of(row)
            self.clock.freeze(min(event.t_ms, self.time_limit_s * 1000))
            self._sync_own_end()
            self._note("the match is over")
        elif isinstance(event, RematchOffered):
            self.rematches[event.same_seed] = event
            what = "the same deal" if event.same_seed else "a new deal"
            self._note(f"{event.by.name} offers a rematch ({what}): match {event.code}")

    def _started(self, event: Started) -> None:
        self.phase = Phase.RUNNING
        self.countdown_ends = None
        self.ruleset = Ruleset.named(event.ruleset)
        self.time_limit_s = event.time_limit_s
        self.commitment = event.commitment or self.commitment
        if self.summary is not None:
            self.summary = replace(self.summary, status="running", started_at=event.started_at)
        self.clock.sync(event.t_ms)
        for player in event.players:
            self.players[player.player_id] = player
        # A rejoin's snapshot may already hold the game further on: never go back to the deal.
        if self.own is None and self.role == "player" and self.you_id in self.players:
            self.own = OwnGame.dealt(list(event.grid), self.ruleset)
        self._note("the cards are dealt")

    def apply_ack(self, ack: ActionOk) -> None:
        """Apply the server's ``action_ok`` for one of this client's actions."""
        if self.own is None:
            return
        self.clock.sync(ack.t_ms)
        self.own.apply_ack(ack)
        me = self.me
        if me is not None:  # our own row moves at once; the progress event confirms it
            self.players[me.player_id] = replace(
                me, score=ack.score, placed=ack.placed, redeals_used=ack.redeals_used,
                moves_made=ack.moves_made, status=ack.status)

    def _sync_own_end(self) -> None:
        me = self.me
        if self.own is not None and me is not None and me.end_reason:
            self.own.end_reason = me.end_reason
