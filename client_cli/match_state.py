"""A match as one client sees it, built from the server's snapshots, events and acks.

Pure (no I/O, no UI): the match screen draws it, the bots read it. The player's own game
is mirrored locally with ``gaps`` (from the dealt grid, then each acknowledged action),
which is what the screen pre-checks moves against; the numbers shown come from the
server, the authority.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from client_cli.render import bot_mark
from gaps import GAP, Card, Game, Ruleset, Seed, Slot

Message = Mapping[str, Any]

#: The replies that carry a whole match (all shaped like ``joined``).
SNAPSHOT_TYPES = frozenset(
    {"match_created", "joined", "snapshot", "daily_started", "matched", "rematch"}
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
    def from_view(view: Message, ruleset: Ruleset, last_seq: int) -> OwnGame:
        """From a snapshot's ``you.game``."""
        own = OwnGame(ruleset, parse_grid(list(view["grid"])), last_seq=last_seq)
        own._counters(view)
        return own

    def _counters(self, view: Message) -> None:
        self.score = int(view["score"])
        self.placed = int(view["placed"])
        self.redeals_used = int(view["redeals_used"])
        self.redeals_left = int(view["redeals_left"])
        self.moves_made = int(view["moves_made"])
        self.status = str(view["status"])
        self.can_undo = bool(view["can_undo"])

    @property
    def over(self) -> bool:
        return self.status in OVER_STATUSES or self.end_reason is not None

    def game(self) -> Game:
        """A ``gaps.Game`` in this position (under a stand-in seed: the real one is secret)."""
        return Game.restore(
            Seed(b"client"), self.ruleset, self.grid, redeals_used=self.redeals_used,
            moves_made=self.moves_made, stopped=self.status == "stopped",
        )

    def apply_ack(self, ack: Message) -> bool:
        """Apply an ``action_ok``; returns False for one already applied (a resend's)."""
        seq = int(ack.get("seq", 0))
        if seq <= self.last_seq:
            return False
        self.last_seq = seq
        kind = ack.get("kind")
        if kind in ("move", "undo") and ack.get("card"):
            code = Card.parse(str(ack["card"])).code
            self.grid[Slot.parse(str(ack["from"])).index] = GAP
            self.grid[Slot.parse(str(ack["to"])).index] = code
        elif kind == "redeal" and ack.get("grid"):
            self.grid = parse_grid(list(ack["grid"]))
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
    role: str = "player"
    phase: Phase = Phase.LOBBY
    summary: dict[str, Any] = field(default_factory=dict)
    players: dict[int, dict[str, Any]] = field(default_factory=dict)
    own: OwnGame | None = None
    ruleset: Ruleset = field(default_factory=lambda: Ruleset.named("classic"))
    time_limit_s: int = 600
    commitment: str | None = None
    seed: str | None = None
    ranking: list[dict[str, Any]] | None = None
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
    #: they deal the same seed: ``{"code", "by", "by_id"}`` (who offered it).
    rematches: dict[bool, dict[str, Any]] = field(default_factory=dict)
    #: The finished match's replay document (``get_replay``), once fetched: every action
    #: and the seed, and the deal's par once the server has solved it.
    replay: dict[str, Any] | None = None

    # -- reading -------------------------------------------------------------------------

    @property
    def me(self) -> dict[str, Any] | None:
        return self.players.get(self.you_id) if self.you_id is not None else None

    @property
    def kind(self) -> str:
        """``race``, ``quick``, ``tournament`` or ``daily``."""
        return str(self.summary.get("kind", "race"))

    @property
    def is_host(self) -> bool:
        return self.you_id is not None and self.summary.get("host_id") == self.you_id

    @property
    def playing(self) -> bool:
        """Whether this client may act now."""
        me = self.me
        return (
            self.role == "player" and self.phase is Phase.RUNNING and self.own is not None
            and not self.own.over and not (me is not None and me.get("finished"))
        )

    @property
    def par(self) -> object:
        """The deal's par from the replay (``{"score", "exact"}``), None until known."""
        match = self.replay.get("match") if isinstance(self.replay, dict) else None
        return match.get("par") if isinstance(match, dict) else None

    def remaining_ms(self) -> int:
        return max(0, self.time_limit_s * 1000 - self.clock.now_ms())

    def name_of(self, player_id: Any) -> str:
        player = self.players.get(player_id) if isinstance(player_id, int) else None
        return str(player["name"]) if player else f"player {player_id}"

    def verified_commitment(self) -> bool | None:
        """Whether SHA-256 of the revealed seed is the commitment (None before the reveal)."""
        if self.seed is None or self.commitment is None:
            return None
        try:
            return Seed.parse(self.seed).commitment == self.commitment
        except ValueError:
            return False

    # -- applying what the server says ---------------------------------------------------------

    def apply(self, message: Message) -> None:
        """Apply an event, a snapshot (``match_created``, ``joined``, ``snapshot``, and
        ``daily_started`` and ``matched``, shaped like ``joined``) or a connection notice
        (``client_cli.connection``: lost, restored, failed, and gone for this match)."""
        if message.get("type") == "event":
            self._event(message)
        elif message.get("type") in SNAPSHOT_TYPES:
            self._snapshot(message)
        elif message.get("type") == "connection":
            self._connection(message)

    def _connection(self, notice: Message) -> None:
        state, detail = notice.get("state"), str(notice.get("detail", ""))
        if state == "lost":
            self._note(f"connection lost: {detail}")
        elif state == "restored":
            self._note("connection restored: back in the match")
        elif state == "gone" and notice.get("match") == self.code:
            self.gone = f"match {self.code} is gone: {detail}"
            self._note(self.gone)
        elif state == "failed":
            self.gone = f"lost match {self.code}: {detail}"
            self._note(self.gone)

    def _note(self, line: str) -> None:
        self.log.append(line)
        del self.log[:-50]

    def _snapshot(self, message: Message) -> None:
        summary = dict(message.get("match") or {})
        self.summary = summary
        self.ruleset = Ruleset.named(str(summary.get("ruleset", "classic")))
        self.time_limit_s = int(summary.get("time_limit_s", self.time_limit_s))
        self.commitment = summary.get("commitment") or self.commitment
        self.seed = summary.get("seed") or self.seed
        self.spectators = int(message.get("spectators", 0))
        # A snapshot reflects every event up to its seq; after a server restart the seq is
        # numbered anew, lower than those seen before: it is the count from now on.
        self.last_seq = int(message.get("seq", 0))
        self.players = {int(p["player_id"]): dict(p) for p in message.get("players", [])}
        you = message.get("you") or {}
        self.role = str(you.get("role", self.role))
        phase = Phase(str(summary.get("status", "lobby")))
        if phase is Phase.COUNTDOWN and self.phase is not Phase.COUNTDOWN:
            self.countdown_ends = time.monotonic() + int(summary.get("countdown_s", 0))
        self.phase = phase if self.phase is not Phase.FINISHED else self.phase
        if phase in (Phase.RUNNING, Phase.FINISHED) and summary.get("started_at"):
            self.clock.sync(int(summary.get("t_ms", 0)))
        ranking = message.get("ranking")
        if phase is Phase.FINISHED and isinstance(ranking, list):  # when the server sends it
            self.ranking = [dict(row) for row in ranking]
        view = you.get("game")
        if isinstance(view, Mapping):
            last_seq = int(you.get("last_seq", 0))
            if self.own is None or last_seq >= self.own.last_seq:
                self.own = OwnGame.from_view(view, self.ruleset, last_seq)
        self._sync_own_end()

    def _event(self, event: Message) -> None:
        name = event.get("event")
        self.last_seq = max(self.last_seq, int(event.get("seq", 0)))
        t_ms = event.get("t_ms")
        if isinstance(t_ms, int) and self.phase is Phase.RUNNING and name != "match_ended":
            self.clock.sync(t_ms)
        if name == "player_joined":
            player = dict(event["player"])
            self.players[int(player["player_id"])] = player
            self.summary["players"] = len(self.players)
            self._note(f"{player['name']}{bot_mark(player)} joined")
        elif name == "player_left":
            gone = self.players.pop(int(event["player_id"]), None)
            self.summary["players"] = len(self.players)
            if gone:
                self._note(f"{gone['name']} left")
        elif name == "host_changed":
            self.summary["host_id"] = event["host_id"]
            if self.is_host:
                self._note("you are the host now: start the match when you like")
            else:
                self._note(f"{self.name_of(event['host_id'])} is the host now")
        elif name == "presence":
            seated = self.players.get(int(event["player_id"]))
            if seated is not None:
                seated["connected"] = bool(event["connected"])
                self._note(f"{seated['name']} is {'back' if event['connected'] else 'away'}")
        elif name == "match_abandoned":
            self.phase = Phase.ABANDONED
            self._note("the match was abandoned")
        elif name == "ready":
            seated = self.players.get(int(event["player_id"]))
            if seated is not None:
                seated["ready"] = bool(event["ready"])
                self._note(f"{seated['name']} is {'ready' if event['ready'] else 'not ready'}")
        elif name == "countdown":
            self.phase = Phase.COUNTDOWN
            self.commitment = event.get("commitment")
            self.countdown_ends = time.monotonic() + int(event.get("countdown_ms", 0)) / 1000
            self._note("the match is starting")
        elif name == "started":
            self._started(event)
        elif name in ("progress", "player_finished"):
            progress = {key: value for key, value in event.items()
                        if key not in ("type", "match", "seq", "event", "t_ms")}
            self.players[int(progress["player_id"])] = progress
            if name == "player_finished":
                self._note(f"{progress['name']} finished: {progress.get('end_reason')}, "
                           f"score {progress.get('score')}")
            self._sync_own_end()
        elif name == "match_ended":
            self.phase = Phase.FINISHED
            self.ranking = [dict(row) for row in event.get("ranking", [])]
            self.seed = event.get("seed")
            self.commitment = event.get("commitment") or self.commitment
            for row in self.ranking:
                self.players[int(row["player_id"])] = {k: v for k, v in row.items() if k != "rank"}
            if isinstance(t_ms, int):
                self.clock.freeze(min(t_ms, self.time_limit_s * 1000))
            self._sync_own_end()
            self._note("the match is over")
        elif name == "rematch_offered":
            by = event.get("by") or {}
            same_seed = bool(event.get("same_seed"))
            self.rematches[same_seed] = {"code": str(event.get("code")),
                                         "by": str(by.get("name", "someone")),
                                         "by_id": by.get("player_id")}
            what = "the same deal" if same_seed else "a new deal"
            self._note(f"{self.rematches[same_seed]['by']} offers a rematch ({what}): "
                       f"match {event.get('code')}")

    def _started(self, event: Message) -> None:
        self.phase = Phase.RUNNING
        self.countdown_ends = None
        self.ruleset = Ruleset.named(str(event.get("ruleset", self.ruleset.name)))
        self.time_limit_s = int(event.get("time_limit_s", self.time_limit_s))
        self.commitment = event.get("commitment") or self.commitment
        self.summary["status"] = "running"
        self.summary["started_at"] = event.get("started_at")
        self.clock.sync(int(event.get("t_ms", 0)))
        for player in event.get("players", []):
            self.players[int(player["player_id"])] = dict(player)
        # A rejoin's snapshot may already hold the game further on: never go back to the deal.
        if self.own is None and self.role == "player" and self.you_id in self.players:
            self.own = OwnGame.dealt(list(event["grid"]), self.ruleset)
        self._note("the cards are dealt")

    def apply_ack(self, ack: Message) -> None:
        """Apply the server's ``action_ok`` for one of this client's actions."""
        if self.own is None:
            return
        t_ms = ack.get("t_ms")
        if isinstance(t_ms, int):
            self.clock.sync(t_ms)
        self.own.apply_ack(ack)
        me = self.me
        if me is not None:  # our own row moves at once; the progress event confirms it
            me.update(score=ack["score"], placed=ack["placed"],
                      redeals_used=ack["redeals_used"], moves_made=ack["moves_made"],
                      status=ack["status"])

    def _sync_own_end(self) -> None:
        me = self.me
        if self.own is not None and me is not None and me.get("end_reason"):
            self.own.end_reason = str(me["end_reason"])
