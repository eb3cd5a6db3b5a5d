"""A tournament rebuilt from its stored rows, after a restart or when a new leader takes
it over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from gaps_protocol.messages.common import TournamentStatus
from server.records import Ms
from server.tournamentstate import (
    ANNOUNCEMENTS_KEPT,
    Announcement,
    EnteredResult,
    Entrant,
    Round,
    RoundScore,
    TournamentOptions,
    TournamentState,
)

# -- restore ----------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredRound:
    """A round's match as stored: the last one dealt for that round number."""

    number: int
    code: str
    status: str
    ended_at: Ms | None
    scores: tuple[RoundScore, ...]


def rebuild(
    *,
    tournament_id: int,
    code: str,
    host_id: int,
    options: TournamentOptions,
    status: TournamentStatus,
    current_round: int,
    entrants: Sequence[Entrant],
    rounds: Sequence[StoredRound],
    cancel_reason: str | None,
    now: Ms,
    check_ms: int,
    seeds: Sequence[bytes] = (),
    paused: bool = False,
    announcements: Sequence[Announcement] = (),
    arbiters: Sequence[tuple[int, str]] = (),
    tables: StoredTables | None = None,
) -> TournamentState:
    """The tournament as the database holds it, after a restart or a new leader.

    Rounds before the current one are counted from their stored results. The current
    round goes on: if its match is stored (unfinished, or finished while nobody ran the
    tournament) it is looked for at once, and counted once it has ended (``round_ended``
    is said again); if its match was never stored (or was abandoned), it is dealt again.
    A break goes on from the end of the last round counted, on the wall clock. A round
    of tables only goes on to its time limit from when its play began, as stored."""
    tables = tables if tables is not None else StoredTables()
    state = TournamentState(
        id=tournament_id,
        code=code,
        host_id=host_id,
        options=options,
        status=status,
        entrants=tuple(entrants),
        check_ms=check_ms,
        cancel_reason=cancel_reason,
        seeds=tuple(seeds),
        paused=paused,
        announcements=tuple(announcements)[-ANNOUNCEMENTS_KEPT:],
        arbiters=tuple(arbiters),
    )
    by_number = {r.number: r for r in rounds}
    # Every round before the current one was counted before the next was dealt; once the
    # tournament is over, the last one too (a cancel stores the rounds counted).
    last_counted = current_round if status in ("finished", "cancelled") else current_round - 1
    current = by_number.get(current_round)
    counted = []
    for number in range(1, last_counted + 1):
        stored = by_number.get(number)
        round_ = (
            Round(number, stored.code, stored.scores, stored.ended_at)
            if stored is not None
            else Round(number, "", (), None)
        )
        counted.append(tables.attach(round_))
    state = replace(state, rounds=tuple(counted))
    if status != "running":
        return state
    tables_only = current_round in tables.started and not tables.online.get(current_round, True)
    if tables_only:
        return replace(state, rounds=(*state.rounds, tables.attach(Round(current_round, ""))))
    if current is None or current.status == "abandoned":
        # Never dealt (or dealt and lost): deal it (again) now.
        return replace(state, next_round_at=now, dealing_again=True)
    round_ = tables.attach(Round(current_round, current.code))
    if round_.started_at is None:  # stopped before its start was stored: it counts down again
        round_ = replace(round_, started_at=now + options.countdown_s * 1000)
    return replace(state, rounds=(*state.rounds, round_), check_at=now)


@dataclass(frozen=True)
class StoredTables:
    """What is stored of each round for tables in the room: when its play began, whether
    it had a match (``online``), who played it at a table, and the results entered."""

    started: Mapping[int, Ms] = field(default_factory=dict)
    online: Mapping[int, bool] = field(default_factory=dict)
    tables: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    entered: Mapping[int, tuple[EnteredResult, ...]] = field(default_factory=dict)

    def attach(self, round_: Round) -> Round:
        number = round_.number
        return replace(
            round_,
            started_at=self.started.get(number),
            tables=self.tables.get(number, ()),
            entered=self.entered.get(number, ()),
        )
