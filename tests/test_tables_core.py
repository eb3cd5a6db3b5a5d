"""Tables in the room, on the tournament's core alone (server/tournamentcore.py):
arbiters, entrants at tables seated in no match, a round of tables only timed by the
core, the deal sheet, and the tables' entered results checked, scored, kept apart and
ranked with the others. Time is passed explicitly."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gaps import Seed
from gaps.par import final_score
from gaps_protocol.messages import events as said
from gaps_protocol.messages.events import UNNUMBERED
from gaps_protocol.messages.replies import DealSheet
from gaps_protocol.messages.views import Arbiter
from server import tournamentcommands as commands
from server import tournamentcore
from server import tournamentrestore as restore
from server import tournamentviews as views
from server.errors import ServerError
from server.tournamentcommands import EnterResult, NameArbiter, RoundEnded, SetTable, Start, Tick
from server.tournamentcore import deal_sheet
from server.tournamentrestore import StoredTables
from server.tournamentstate import (
    ArbiterNamed,
    ResultEntered,
    RoundBegun,
    RoundStarted,
    StandingsRecorded,
    TableSet,
    TournamentFinished,
    TournamentState,
)
from server.tournamentviews import standings
from tests.test_tournamentcore import (
    ANA,
    BOB,
    BREAK_MS,
    CAT,
    CODE,
    COUNTDOWN_S,
    DAN,
    HOST,
    T0,
    dealt,
    entered,
    names,
    ok,
    refused,
    scores,
    seed,
)

LIMIT_MS = 60_000  # the rounds' time limit (tests.test_tournamentcore.options)
COUNTDOWN_MS = COUNTDOWN_S * 1000


def at_tables(state: TournamentState, *players: str, by: int = HOST) -> TournamentState:
    for player in players:
        state = ok(state, SetTable(by, player, True), T0).state
    return state


def result(player: str, number: int = 1, *, placed: int = 30, redeals: int = 1,
           finish_ms: int = 40_000, won: bool = False, by: int = HOST) -> EnterResult:
    return EnterResult(by, number, player, placed, redeals, finish_ms, won)


def started_two_and_two(rounds: int = 2) -> TournamentState:
    """ana and bob online, cat and dan at tables; round 1 dealt as R1 at T0."""
    state = at_tables(entered(ANA, BOB, CAT, DAN, rounds=rounds), "cat", "dan")
    step = ok(state, Start(HOST), T0)
    assert step.deal == dealt(1, ANA, BOB)  # the tables are seated in no match
    assert step.writes[-1] == RoundBegun(1, (CAT, DAN))
    return ok(step.state, commands.RoundDealt(1, "R1"), T0).state


def test_the_host_names_an_arbiter_who_may_seat_tables_but_not_start_or_cancel() -> None:
    state = entered(ANA, BOB)
    assert refused(state, NameArbiter(ANA, 99, "zed"), T0).code == "not_host"
    step = ok(state, NameArbiter(HOST, 99, "zed"), T0)
    assert step.writes == (ArbiterNamed(99, T0),) and names(step) == ["arbiter_named"]
    assert views.view(step.state).arbiters == [Arbiter(player_id=99, name="zed")]
    again = ok(step.state, NameArbiter(HOST, 99, "zed"), T0)
    assert again.writes == () and again.state == step.state
    state = ok(step.state, SetTable(99, "ANA", True), T0).state  # any case
    assert state.entrant(ANA) is not None and state.entrant(ANA).at_table  # type: ignore[union-attr]
    assert refused(state, SetTable(BOB, "ana", False), T0).code == "not_arbiter"
    assert refused(state, Start(99), T0).code == "not_host"
    assert refused(state, commands.Cancel(99, "no"), T0).code == "not_host"


def test_a_table_is_set_from_the_next_round_and_said_once() -> None:
    state = started_two_and_two()
    step = ok(state, SetTable(HOST, "cat", False), T0 + 1)
    assert step.writes == (TableSet(CAT, False),)
    assert step.events[0] == said.EntrantTable(
        tournament=CODE, seq=UNNUMBERED, player_id=CAT, name="cat", at_table=False, from_round=2
    )
    assert step.state.rounds[0].tables == (CAT, DAN)  # round 1 keeps its tables
    assert ok(step.state, SetTable(HOST, "cat", False), T0 + 2).events == ()
    assert refused(state, SetTable(HOST, "nobody", True), T0).code == "not_an_entrant"
    ended = ok(step.state, RoundEnded(1, "R1", scores((ANA, 5, 9000), (BOB, 4, 9000)), T0 + 9000),
               T0 + 9000).state
    second = ok(ended, Tick(), T0 + 9000 + BREAK_MS)
    assert second.deal == dealt(2, ANA, BOB, CAT) and second.writes == (RoundBegun(2, (DAN,)),)


def test_a_round_with_every_entrant_at_a_table_has_no_match_and_ends_by_its_time() -> None:
    state = at_tables(entered(ANA, BOB, rounds=2), "ana", "bob")
    step = ok(state, Start(HOST), T0)
    assert step.deal is None  # no match to create
    assert step.writes[-2:] == (RoundBegun(1, (ANA, BOB)), RoundStarted(1, T0 + COUNTDOWN_MS,
                                                                        online=False))
    starting = step.events[-1]
    assert isinstance(starting, said.RoundStarting)
    assert (starting.match, starting.tables) == (None, ["ana", "bob"])
    state = step.state
    assert state.round_code is None and state.playing
    time_up = T0 + COUNTDOWN_MS + LIMIT_MS
    assert step.wake_at == time_up
    assert ok(state, Tick(), time_up - 1).events == ()
    state = ok(state, result("ana", placed=20, redeals=0, finish_ms=30_000), T0 + 30_000).state
    ended = ok(state, Tick(), time_up)
    assert names(ended) == ["round_ended"]
    [round_ended] = ended.events
    assert isinstance(round_ended, said.RoundEnded) and round_ended.results_awaited == ["bob"]
    assert ended.state.next_round_at == time_up + BREAK_MS
    rows = standings(ended.state)
    assert [(r.name, r.total_score, r.entered) for r in rows] == [
        ("ana", 20, True), ("bob", 0, False)]


def test_the_deal_sheet_is_the_hosts_and_the_arbiters_once_the_round_has_begun() -> None:
    state = ok(started_two_and_two(), NameArbiter(HOST, 99, "zed"), T0).state
    refusal = refused(state, result("cat"), T0)  # the countdown is on
    assert refusal.code == "round_not_started" and refusal.details["round"] == 1
    with pytest.raises(ServerError) as early:
        deal_sheet(state, HOST, 1, T0 + COUNTDOWN_MS - 1)
    assert early.value.code == "round_not_started"
    assert early.value.details["starts_at"] == "2026-09-21T14:13:30.000Z"
    with pytest.raises(ServerError) as not_dealt:
        deal_sheet(state, HOST, 2, T0 + COUNTDOWN_MS)
    assert (not_dealt.value.code, not_dealt.value.details["starts_at"]) == (
        "round_not_started", None)
    with pytest.raises(ServerError) as stranger:
        deal_sheet(state, ANA, 1, T0 + COUNTDOWN_MS)
    assert stranger.value.code == "not_arbiter"
    with pytest.raises(ServerError) as beyond:
        deal_sheet(state, HOST, 3, T0 + COUNTDOWN_MS)
    assert (beyond.value.code, beyond.value.details["field"]) == ("bad_message", "round")
    sheet = deal_sheet(state, 99, 1, T0 + COUNTDOWN_MS)
    assert sheet == DealSheet(
        id=None, tournament=CODE, round=1, seed=str(Seed(seed(1))),
        ruleset="classic", match="R1", started_at="2026-09-21T14:13:30.000Z",
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"placed": 49}, "placed"),
        ({"placed": -1}, "placed"),
        ({"redeals": 3}, "redeals"),  # classic allows 2
        ({"finish_ms": LIMIT_MS + 1}, "finish_ms"),
        ({"won": True}, "won"),  # 30 placed is no win
        ({"placed": 48, "won": False}, "won"),  # 48 placed is one
    ],
)
def test_an_inconsistent_entered_result_is_refused_naming_its_field(
    change: dict[str, object], field: str
) -> None:
    state = started_two_and_two()
    refusal = refused(state, replace(result("cat"), **change), T0 + COUNTDOWN_MS)
    assert (refusal.code, refusal.details["field"]) == ("bad_message", field)
    assert field in refusal.message


def test_a_result_is_entered_for_a_table_of_that_round_only_by_the_host_or_an_arbiter() -> None:
    state = started_two_and_two()
    now = T0 + COUNTDOWN_MS
    assert refused(state, result("ana"), now).code == "not_at_table"
    assert refused(state, result("cat", by=ANA), now).code == "not_arbiter"
    assert refused(state, result("zed"), now).code == "not_an_entrant"
    assert refused(state, result("cat", number=2), now).code == "round_not_started"


def test_entered_results_are_scored_kept_apart_replaced_and_ranked_with_the_others() -> None:
    state = started_two_and_two(rounds=1)
    now = T0 + COUNTDOWN_MS + 20_000
    first = ok(state, result("cat", placed=30, redeals=1), now)
    stored = first.writes[0]
    assert isinstance(stored, ResultEntered) and stored.result.score == final_score(30, 1) == 25
    [entered_first] = first.events
    assert isinstance(entered_first, said.ResultEntered)
    assert entered_first.entered is True and entered_first.replaced is False
    assert entered_first.standings is None  # the round is not counted yet
    won = ok(first.state, result("cat", placed=48, redeals=0, finish_ms=50_000, won=True), now)
    [entered_again] = won.events
    assert isinstance(entered_again, said.ResultEntered) and entered_again.replaced is True
    assert entered_again.score == 58  # 48 placed and the bonus for no redeal
    assert [r.score for r in won.state.rounds[0].entered] == [58]
    # The match ends: the tournament waits for dan's table until its time and a break.
    ended_at = T0 + COUNTDOWN_MS + 45_000
    step = ok(won.state, RoundEnded(1, "R1", scores((ANA, 40, 45_000), (BOB, 58, 30_000)),
                                    ended_at), ended_at)
    assert names(step) == ["round_ended"] and not step.closed
    [round_ended] = step.events
    assert isinstance(round_ended, said.RoundEnded) and round_ended.results_awaited == ["dan"]
    assert [r.name for r in round_ended.entered] == ["cat"]
    assert step.state.next_round_at == T0 + COUNTDOWN_MS + LIMIT_MS + BREAK_MS
    late = ok(step.state, result("dan", placed=12, redeals=2, finish_ms=LIMIT_MS), ended_at + 5)
    assert names(late) == ["result_entered", "tournament_ended"] and late.closed
    entered_late = late.events[0]
    assert isinstance(entered_late, said.ResultEntered) and entered_late.standings is not None
    rows = entered_late.standings
    assert isinstance(late.writes[1], StandingsRecorded)
    assert isinstance(late.writes[-1], TournamentFinished)
    assert [(r.name, r.rank, r.total_score, r.entered) for r in rows] == [
        ("bob", 1, 58, False),  # faster than cat at the same score
        ("cat", 2, 58, True),
        ("ana", 3, 40, False),
        ("dan", 4, 2, True),
    ]
    assert refused(late.state, result("dan"), ended_at + 6).code == "tournament_finished"


def test_the_last_round_ends_without_the_results_not_entered_in_time() -> None:
    state = started_two_and_two(rounds=1)
    ended_at = T0 + COUNTDOWN_MS + 5000
    step = ok(state, RoundEnded(1, "R1", scores((ANA, 4, 5000), (BOB, 3, 5000)), ended_at),
              ended_at)
    deadline = T0 + COUNTDOWN_MS + LIMIT_MS + BREAK_MS
    assert step.wake_at == deadline and not step.closed
    over = ok(step.state, Tick(), deadline)
    assert names(over) == ["tournament_ended"] and over.closed


def test_a_round_of_tables_only_goes_on_to_its_stored_time_after_a_rebuild() -> None:
    live = ok(at_tables(entered(ANA, BOB, rounds=1), "ana", "bob"), Start(HOST), T0).state
    live = ok(live, result("ana", placed=10, redeals=0, finish_ms=1000), T0 + COUNTDOWN_MS).state
    entered_result = live.rounds[0].entered
    state = restore.rebuild(
        tournament_id=live.id, code=live.code, host_id=HOST, options=live.options,
        status="running", current_round=1, entrants=live.entrants, rounds=[],
        cancel_reason=None, now=T0 + 20_000, check_ms=1000, seeds=live.seeds,
        tables=StoredTables(started={1: T0 + COUNTDOWN_MS}, online={1: False},
                            tables={1: (ANA, BOB)}, entered={1: entered_result}),
    )
    assert state == replace(live, check_at=None)
    time_up = T0 + COUNTDOWN_MS + LIMIT_MS
    assert tournamentcore.next_deadline(state) == time_up
