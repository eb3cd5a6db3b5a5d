"""A match taken back from the database after a restart or a take-over, without I/O.

``rebuild`` turns the stored rows of a match (its ``matches`` row, its seats and their
actions) into the state the core goes on from: every game replayed from its stored
actions through the rules engine, so that each is exactly what was acknowledged.
"""

from __future__ import annotations

from typing import Any

from gaps import Game, Ruleset, Seed, parse_action
from server.clock import ms_of
from server.matchcore import acknowledged, push
from server.matchstate import MatchOptions, MatchState, Seat, evolve
from server.records import Ms


def rebuild(
    stored: Any, *, now: Ms, grace_ms: int, default_countdown_s: int
) -> MatchState:
    """The match as the database holds it (``Store.unfinished_matches``' rows: ``match``,
    ``seats``, ``actions``), after a restart: seats and ready flags and, once dealt,
    every game replayed from its stored actions (last seq, the acknowledgements of the
    last ``CACHED_ACKS`` for resends, ends of games). Nobody is connected: every seat
    still playing has the grace period from ``now``. The match's clock is the wall clock
    since the deal: what fell due during the downtime is applied by the next ``handle``."""
    row = stored.match
    options = MatchOptions(
        ruleset=Ruleset.named(row.ruleset),
        max_players=row.max_players,
        time_limit_s=row.time_limit_s,
        win_by=row.win_by,
        public=row.public,
        countdown_s=default_countdown_s if row.countdown_s is None else row.countdown_s,
        bots=bool(getattr(row, "bots", False)),
    )
    state = MatchState(
        id=row.id,
        code=row.code,
        kind=row.kind,
        options=options,
        seed=Seed(row.seed),
        rated=row.rated,
        host_id=row.host_id,
        grace_ms=grace_ms,
        daily_date=row.daily_date,
        tournament_id=getattr(row, "tournament_id", None),
        round=getattr(row, "round", None),
    )
    if row.status == "lobby":
        return evolve(
            state,
            seats=tuple(
                Seat(s.player_id, s.name, ready=s.ready, away_since=now, bot=_bot(s))
                for s in stored.seats
            ),
        )
    started_at = ms_of(row.started_at)
    actions: dict[int, list[Any]] = {}
    for action in stored.actions:
        actions.setdefault(action.player_id, []).append(action)
    seats: list[Seat] = []
    for s in stored.seats:
        seat = Seat(s.player_id, s.name, ready=s.ready, bot=_bot(s))
        game = Game(state.seed, options.ruleset)
        for action in actions.get(s.player_id, ()):
            before = game.score
            played = parse_action(action.action)
            pushed, ack = push(state.code, s.player_id, game, action.seq, played, action.t_ms)
            seat = acknowledged(seat, game, pushed, ack, score_before=before)
        seat = evolve(seat, game=game)
        if s.end_reason is not None:
            seat = evolve(seat, end_reason=s.end_reason, finish_ms=s.finish_ms)
            if s.score_ms is not None:
                seat = evolve(seat, score_ms=s.score_ms)
        else:
            seat = evolve(seat, away_since=now)
        seats.append(seat)
    return evolve(state, phase="running", started_at=started_at, seats=tuple(seats))


def _bot(stored_seat: Any) -> bool:
    """Whether a stored seat is a declared bot's (rows read before there were bots: no)."""
    return bool(getattr(stored_seat, "bot", False))
