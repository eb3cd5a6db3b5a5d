"""The organiser's hand on the evening, on the tournament core: announcements, a cancel
during a round, a pause between rounds, late entry and reinstating a removed entrant,
each refused when it must be. Time is passed explicitly."""

from __future__ import annotations

from gaps_protocol.messages import events as said
from gaps_protocol.messages import views as shown
from gaps_protocol.messages.events import UNNUMBERED
from server.tournamentcommands import (
    Announce,
    Cancel,
    Pause,
    Reinstate,
    Remove,
    Resume,
    RoundDealt,
    RoundEnded,
    Start,
    Tick,
)
from server.tournamentrestore import rebuild
from server.tournamentstate import (
    ANNOUNCEMENTS_KEPT,
    Announcement,
    AnnouncementMade,
    EntrantAdded,
    EntrantReinstated,
    PauseSet,
    RoundBegun,
    TournamentCancelled,
)
from server.tournamentviews import standings, view
from tests.test_tournamentcore import (
    ANA,
    BOB,
    BREAK_MS,
    CAT,
    CHECK_MS,
    CODE,
    HOST,
    T0,
    dealt,
    entered,
    join,
    ok,
    options,
    refused,
    running,
    scores,
)

LIMIT_MS = 60_000  # the round time limit of ``options()``


# -- announcements -------------------------------------------------------------------------


def test_an_announcement_is_stored_said_to_all_and_kept_in_the_view() -> None:
    step = ok(entered(ANA), Announce(HOST, "Coffee at the bar"), T0 + 5)
    assert step.writes == (AnnouncementMade("Coffee at the bar", T0 + 5),)
    assert step.events == (
        said.TournamentAnnouncement(
            tournament=CODE, seq=UNNUMBERED,
            text="Coffee at the bar", at="2026-09-21T14:13:20.005Z",
        ),
    )
    assert view(step.state).announcements == [
        shown.Announcement(text="Coffee at the bar", at="2026-09-21T14:13:20.005Z")
    ]


def test_the_view_keeps_only_the_last_announcements_oldest_first() -> None:
    state = entered(ANA)
    for number in range(ANNOUNCEMENTS_KEPT + 3):
        state = ok(state, Announce(HOST, f"note {number}"), T0 + number).state
    texts = [a.text for a in view(state).announcements]
    assert texts == [f"note {n}" for n in range(3, ANNOUNCEMENTS_KEPT + 3)]


def test_only_the_host_announces_and_not_once_it_is_over() -> None:
    error = refused(entered(ANA), Announce(ANA, "hi"), T0)
    assert error.code == "not_host"
    over = ok(entered(ANA), Cancel(HOST, "rain"), T0).state
    assert refused(over, Announce(HOST, "hi"), T0 + 1).code == "tournament_finished"


def test_a_rebuilt_tournament_has_its_announcements_and_its_pause() -> None:
    state = rebuild(
        tournament_id=7, code="TQ4M2Z", host_id=HOST, options=options(), status="open",
        current_round=0, entrants=[], rounds=[], cancel_reason=None, now=T0,
        check_ms=CHECK_MS, paused=True,
        announcements=[Announcement(f"n{i}", T0 + i) for i in range(ANNOUNCEMENTS_KEPT + 1)],
    )
    assert state.paused
    assert [a.text for a in state.announcements] == [
        f"n{i}" for i in range(1, ANNOUNCEMENTS_KEPT + 1)
    ]


# -- cancel ----------------------------------------------------------------------------------


def test_the_host_cancels_during_a_round_which_is_abandoned_and_not_counted() -> None:
    state = running(ANA, BOB, rounds=3)
    state = ok(state, RoundEnded(1, "R1", scores((ANA, 30, 9_000), (BOB, 20, 8_000)),
                                 T0 + 10_000), T0 + 10_000).state
    state = ok(state, Tick(), T0 + 10_000 + BREAK_MS).state
    state = ok(state, RoundDealt(2, "R2"), T0 + 10_000 + BREAK_MS).state
    assert state.round_code == "R2"
    at = T0 + 40_000
    step = ok(state, Cancel(HOST, "the hall closes"), at)
    assert step.writes == (TournamentCancelled("the hall closes", at, 1),)
    [event] = step.events
    assert isinstance(event, said.TournamentCancelled)
    assert (event.reason, event.by_host, event.abandoned_round) == (
        "the hall closes", True, 2
    )
    assert step.abandon == "R2" and step.closed and step.wake_at is None
    assert view(step.state).status == "cancelled"
    assert view(step.state).cancel_reason == "the hall closes"
    # The standings are those of round 1: round 2 was given up.
    assert [(r.name, r.total_score) for r in standings(step.state)] == [
        ("ana", 30), ("bob", 20)
    ]
    # The abandoned round's end, should it come, counts for nothing.
    late = ok(step.state, RoundEnded(2, "R2", scores((ANA, 1, 1), (BOB, 1, 1)), at + 1), at + 1)
    assert (late.events, late.writes, late.state) == ((), (), step.state)


def test_a_cancel_while_a_round_is_being_created_leaves_it_undealt() -> None:
    state = ok(entered(ANA), Start(HOST), T0).state
    assert state.dealing == 1
    step = ok(state, Cancel(HOST, "wrong deals"), T0 + 1)
    assert step.abandon is None and step.state.status == "cancelled"
    after = ok(step.state, RoundDealt(1, "R1"), T0 + 2)
    assert (after.events, after.state.rounds) == ((), ())


def test_a_cancel_before_the_start_and_its_refusals() -> None:
    state = entered(ANA)
    assert refused(state, Cancel(ANA, "x"), T0).code == "not_host"
    step = ok(state, Cancel(HOST, "too few"), T0)
    [cancelled] = step.events
    assert isinstance(cancelled, said.TournamentCancelled)
    assert cancelled.abandoned_round is None and step.abandon is None
    assert refused(step.state, Cancel(HOST, "again"), T0 + 1).code == "tournament_finished"


# -- pause and resume --------------------------------------------------------------------------


def test_a_pause_asked_during_a_round_holds_the_next_round_until_resume() -> None:
    state = running(ANA, BOB, rounds=2)
    step = ok(state, Pause(HOST), T0 + 1_000)
    assert step.writes == (PauseSet(True, T0 + 1_000),)
    assert step.events == (
        said.TournamentPaused(
            tournament=CODE, seq=UNNUMBERED, after_round=1, round_in_play=True
        ),
    )
    ended_at = T0 + 20_000
    step = ok(step.state, RoundEnded(1, "R1", scores((ANA, 5, 1), (BOB, 4, 1)), ended_at),
              ended_at)
    [ended] = [e for e in step.events if isinstance(e, said.RoundEnded)]
    assert ended.next_round_at is None and ended.paused is True
    assert step.wake_at is None  # the break's end is not applied while paused
    long_after = ended_at + 10 * BREAK_MS
    assert ok(step.state, Tick(), long_after).deal is None
    step = ok(step.state, Resume(HOST), long_after)
    assert step.writes == (PauseSet(False, long_after), RoundBegun(2))
    assert step.events[0] == said.TournamentResumed(
        tournament=CODE, seq=UNNUMBERED, next_round_at="2026-09-21T14:16:10.000Z"
    )
    assert step.deal == dealt(2, ANA, BOB)  # the break had passed: dealt at once


def test_a_resume_before_the_break_is_over_keeps_the_break() -> None:
    state = running(ANA, rounds=2)
    ended_at = T0 + 20_000
    state = ok(state, RoundEnded(1, "R1", scores((ANA, 5, 1)), ended_at), ended_at).state
    state = ok(state, Pause(HOST), ended_at + 1).state
    step = ok(state, Resume(HOST), ended_at + 2)
    assert step.deal is None and step.wake_at == ended_at + BREAK_MS


def test_pause_and_resume_are_refused_by_who_and_when() -> None:
    assert refused(running(ANA), Pause(ANA), T0).code == "not_host"
    error = refused(entered(ANA), Pause(HOST), T0)
    assert (error.code, error.details) == ("not_running", {"status": "open"})
    assert refused(running(ANA), Resume(HOST), T0).code == "not_paused"
    paused = ok(running(ANA), Pause(HOST), T0).state
    assert refused(paused, Pause(HOST), T0).code == "already_paused"


def test_the_last_round_still_ends_a_paused_tournament() -> None:
    state = ok(running(ANA, rounds=1), Pause(HOST), T0).state
    step = ok(state, RoundEnded(1, "R1", scores((ANA, 5, 1)), T0 + 9), T0 + 9)
    assert step.state.status == "finished" and step.closed


# -- late entry -------------------------------------------------------------------------------


def test_a_late_entrant_plays_from_the_next_round_and_scores_nothing_for_the_missed() -> None:
    state = running(ANA, BOB, rounds=3, late_entry_until_round=2)
    # During round 1: they enter for round 2.
    step = ok(state, join(CAT), T0 + 1_000)
    assert step.writes == (EntrantAdded(CAT, T0 + 1_000, 3),)
    assert step.events == (
        said.EntrantJoined(
            tournament=CODE, seq=UNNUMBERED,
            player_id=CAT, name="cat", bot=False, late=True, from_round=2,
        ),
    )
    ended_at = T0 + 20_000
    step = ok(step.state, RoundEnded(1, "R1", scores((ANA, 10, 30_000), (BOB, 0, 5_000)),
                                     ended_at), ended_at)
    rows = {r.name: r for r in standings(step.state)}
    assert (rows["cat"].total_score, rows["cat"].rounds_played) == (0, 0)
    # A missed round costs its whole time limit: cat ranks below bob at the same score.
    assert rows["cat"].total_time_ms == LIMIT_MS
    assert (rows["bob"].rank, rows["cat"].rank) == (2, 3)
    step = ok(step.state, Tick(), ended_at + BREAK_MS)
    assert step.deal == dealt(2, ANA, BOB, CAT)


def test_late_entry_closes_once_its_round_is_dealt() -> None:
    state = running(ANA, rounds=3, late_entry_until_round=1)
    error = refused(state, join(BOB), T0 + 1)
    assert (error.code, error.details) == ("late_entry_closed", {"late_entry_until_round": 1})
    assert refused(running(ANA), join(BOB), T0 + 1).code == "already_started"


# -- reinstating ------------------------------------------------------------------------------


def test_a_reinstated_entrant_plays_again_from_the_next_round() -> None:
    state = running(ANA, BOB, rounds=3)
    ended_at = T0 + 20_000
    state = ok(state, RoundEnded(1, "R1", scores((ANA, 5, 1), (BOB, 6, 1)), ended_at),
               ended_at).state
    state = ok(state, Remove(HOST, "bob", "phone call"), ended_at + 1).state
    state = ok(state, Tick(), ended_at + BREAK_MS).state
    state = ok(state, RoundDealt(2, "R2"), ended_at + BREAK_MS).state
    step = ok(state, Reinstate(HOST, "BOB"), ended_at + BREAK_MS + 5)
    assert step.writes == (EntrantReinstated(BOB, ended_at + BREAK_MS + 5),)
    assert step.events == (
        said.EntrantReinstated(
            tournament=CODE, seq=UNNUMBERED, player_id=BOB, name="bob", from_round=3
        ),
    )
    bob = step.state.entrant(BOB)
    assert bob is not None and not bob.removed and bob.removed_reason is None
    ended_2 = ended_at + 60_000
    step = ok(step.state, RoundEnded(2, "R2", scores((ANA, 5, 1)), ended_2), ended_2)
    rows = {r.name: r for r in standings(step.state)}
    assert (rows["bob"].total_score, rows["bob"].total_time_ms) == (6, 1 + LIMIT_MS)
    step = ok(step.state, Tick(), ended_2 + BREAK_MS)
    assert step.deal == dealt(3, ANA, BOB)


def test_reinstating_is_refused_by_who_whom_and_when() -> None:
    state = entered(ANA, BOB, max_players=2)
    assert refused(state, Reinstate(ANA, "bob"), T0).code == "not_host"
    assert refused(state, Reinstate(HOST, "zed"), T0).code == "not_an_entrant"
    error = refused(state, Reinstate(HOST, "bob"), T0)
    assert (error.code, error.details) == ("not_removed", {"player": "bob"})
    removed = ok(state, Remove(HOST, "bob", "x"), T0).state
    full = ok(removed, join(CAT), T0).state
    assert refused(full, Reinstate(HOST, "bob"), T0).code == "tournament_full"
    over = ok(removed, Cancel(HOST, "y"), T0).state
    assert refused(over, Reinstate(HOST, "bob"), T0).code == "tournament_finished"
