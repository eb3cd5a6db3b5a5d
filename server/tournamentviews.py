"""A tournament as its followers see it: the view, the entrants, the tables' results,
the commitment to its deals, and the standings (ranked, ties shared)."""

from __future__ import annotations

from typing import Any

from gaps.commitment import deals_commitment, round_commitments
from gaps.seed import Seed
from gaps_protocol.messages.views import Announcement as AnnouncementView
from gaps_protocol.messages.views import Arbiter, StandingsRow, TournamentView
from gaps_protocol.messages.views import EnteredResult as EnteredResultView
from gaps_protocol.messages.views import Entrant as EntrantView
from server.clock import iso
from server.tournamentstate import EnteredResult, Entrant, RoundScore, TournamentState

# -- views ------------------------------------------------------------------------------


def entrant_members(entrant: Entrant) -> dict[str, Any]:
    """An entrant as shown (a declared bot or not, removed by the host or not): the
    members of an ``Entrant`` and of a standings row."""
    return {
        "player_id": entrant.player_id,
        "name": entrant.name,
        "bot": entrant.bot,
        "removed": entrant.removed,
        "removed_reason": entrant.removed_reason,
        "at_table": entrant.at_table,
    }


def entrant_view(entrant: Entrant) -> EntrantView:
    return EntrantView(**entrant_members(entrant))


def entered_members(state: TournamentState, number: int, result: EnteredResult) -> dict[str, Any]:
    """A table's result as shown, always ``entered``: the members of an
    ``EnteredResult`` and of the ``result_entered`` event."""
    return {
        "round": number,
        "player_id": result.player_id,
        "name": state.name_of(result.player_id),
        "score": result.score,
        "placed": result.placed,
        "redeals": result.redeals,
        "finish_ms": result.finish_ms,
        "won": result.won,
        "entered": True,
        "entered_by": _arbiter_name(state, result.by),
        "entered_at": iso(result.at),
    }


def entered_view(state: TournamentState, number: int, result: EnteredResult) -> EnteredResultView:
    return EnteredResultView(**entered_members(state, number, result))


def _arbiter_name(state: TournamentState, player_id: int) -> str | None:
    """The name of an arbiter (None: the host, whose name the tournament does not keep)."""
    if player_id == state.host_id:
        return None
    for arbiter_id, name in state.arbiters:
        if arbiter_id == player_id:
            return name
    return state.name_of(player_id)


def entered_results(state: TournamentState) -> list[EnteredResultView]:
    """Every result entered for a table, by round."""
    return [
        entered_view(state, round_.number, result)
        for round_ in state.rounds
        for result in round_.entered
    ]


def share_code(seed: bytes | None) -> str | None:
    return None if seed is None else str(Seed(seed))


def commitment_members(state: TournamentState) -> dict[str, Any]:
    """The commitment to the tournament's deals (docs/protocol.md, Committed deals):
    ``commitment`` (None: none committed yet, or ever), ``round_commitments``, and each
    round's ``seeds`` once revealed (None while secret): members of the view and of
    ``deals_committed``."""
    if not state.seeds:
        return {"commitment": None, "round_commitments": [], "seeds": []}
    seeds = [Seed(seed) for seed in state.seeds]
    return {
        "commitment": deals_commitment(seeds),
        "round_commitments": round_commitments(seeds),
        "seeds": [
            str(seed) if state.revealed(number) else None
            for number, seed in enumerate(seeds, start=1)
        ],
    }


def view(state: TournamentState) -> TournamentView:
    """The tournament view (docs/protocol.md): ``entrant_count`` counts those still in,
    the one count every client shows."""
    options = state.options
    return TournamentView(
        id=state.id,
        code=state.code,
        name=options.name,
        host_id=state.host_id,
        ruleset=options.ruleset,
        rounds=options.rounds,
        max_players=options.max_players,
        round_time_limit_s=options.round_time_limit_s,
        start_at=None if options.start_at is None else iso(options.start_at),
        if_empty=options.if_empty,
        status=state.status,
        cancel_reason=state.cancel_reason,
        current_round=state.current_round,
        round_match=state.round_code,
        bots=options.bots,
        countdown_s=options.countdown_s,
        break_s=options.break_s,
        deals=options.deals,
        deals_ready=not state.preparing,
        late_entry_until_round=options.late_entry_until_round,
        paused=state.paused,
        arbiters=[Arbiter(player_id=p, name=name) for p, name in state.arbiters],
        round_started_at=_round_started_at(state),
        # Who plays the round being played at a table (no seat in its match).
        round_tables=[state.name_of(p) for p in state.rounds[-1].tables]
        if state.rounds and not state.rounds[-1].counted else [],
        announcements=[AnnouncementView(text=a.text, at=iso(a.at)) for a in state.announcements],
        **commitment_members(state),
        entrant_count=len(state.seated()),
        entrants=[entrant_view(e) for e in state.entrants],
    )


def _round_started_at(state: TournamentState) -> str | None:
    """When the play of the round being played began (or begins: its countdown)."""
    if not state.playing or state.dealing is not None:
        return None
    started_at = state.rounds[-1].started_at
    return None if started_at is None else iso(started_at)


def standings(state: TournamentState) -> list[StandingsRow]:
    """Totals over the counted rounds: score (higher first), then time (less first), the
    entrants the host removed after everyone still in; equal rows share a rank. A round
    counted without an entrant (entered late, or removed then) scores 0 for them and
    costs them the round's whole time limit."""
    counted = [round_ for round_ in state.rounds if round_.counted]
    totals: dict[int, list[int]] = {}
    entered: dict[int, list[int]] = {}
    for round_ in counted:
        results = [*(round_.scores or ()), *(
            RoundScore(r.player_id, r.score, r.finish_ms) for r in round_.entered
        )]
        for result in results:
            total = totals.setdefault(result.player_id, [0, 0, 0])
            total[0] += result.score
            total[1] += result.time_ms
            total[2] += 1
        for table in round_.entered:
            entered.setdefault(table.player_id, []).append(round_.number)
    missed_ms = state.options.round_time_limit_s * 1000
    lines: list[tuple[Entrant, int, int, int]] = []
    for entrant in state.entrants:
        score, time_ms, played = totals.get(entrant.player_id, (0, 0, 0))
        lines.append((entrant, score, time_ms + (len(counted) - played) * missed_ms, played))
    lines.sort(key=lambda line: (line[0].removed, -line[1], line[2], line[0].player_id))
    rows: list[StandingsRow] = []
    for position, (entrant, score, time_ms, played) in enumerate(lines, start=1):
        previous = rows[-1] if rows else None
        same = previous is not None and (
            previous.removed, previous.total_score, previous.total_time_ms
        ) == (entrant.removed, score, time_ms)
        rows.append(StandingsRow(
            **entrant_members(entrant),
            rank=previous.rank if same and previous else position,
            total_score=score,
            total_time_ms=time_ms,
            rounds_played=played,
            # Counts a result entered for a table (not validated by the server).
            entered=entrant.player_id in entered,
            entered_rounds=entered.get(entrant.player_id, []),
        ))
    return rows
