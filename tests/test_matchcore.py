"""The match core, pure: every command and refusal, the countdown, grace periods in the
lobby and in a game, the time limit, deadlines at one instant or long past, the end of the
match, and a rebuild from what was stored. Time is passed explicitly: nothing sleeps."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps import Action, Game, Move, Redeal, Ruleset, Seed, Stop, parse_action
from gaps.ranking import Finish, rank
from gaps_protocol.messages.events import (
    UNNUMBERED,
    Countdown,
    MatchEnded,
    PlayerFinished,
    PlayerJoined,
    Presence,
    RematchOffered,
    Started,
    event_name,
)
from gaps_protocol.messages.replies import ActionOk
from gaps_protocol.messages.views import RatingView, RematchBy
from server import matchcore, matchstate, matchviews
from server.errors import ServerError
from server.matchcore import (
    Abandon,
    Act,
    Command,
    Disconnect,
    Ended,
    Join,
    Leave,
    OfferRematch,
    Ready,
    Snap,
    Start,
    Step,
    Tick,
    Unwatch,
    Watch,
)
from server.matchrestore import rebuild
from server.matchstate import MatchOptions, MatchState
from server.records import (
    ActionRow,
    GameEnded,
    HostSet,
    MatchAbandoned,
    MatchStarted,
    ReadySet,
    SeatAdded,
    SeatRemoved,
    Write,
)

T0 = 1_790_000_000_000  # a wall-clock instant, ms
GRACE_MS = 20_000
LIMIT_S = 60
SEED = Seed.parse("AAAA-BBBB-CCCC-DDDD")
ENDED_AT = "2026-01-01T00:00:00.000Z"
RATING = RatingView(
    player_id=1, ruleset="classic", mu=25.0, sigma=8.3, ordinal=0.1, games=1, provisional=True
)


def options(*, countdown_s: int = 0, max_players: int = 4, win_by: str = "score") -> MatchOptions:
    return MatchOptions(
        ruleset=Ruleset.named("classic"),
        max_players=max_players,
        time_limit_s=LIMIT_S,
        win_by=win_by,
        public=True,
        countdown_s=countdown_s,
    )


def fresh(**kwargs: Any) -> MatchState:
    return matchstate.new_match(
        match_id=7,
        code="ABCDEF",
        kind=kwargs.pop("kind", "race"),
        options=options(**kwargs),
        seed=SEED,
        rated=True,
        host_id=1,
        grace_ms=GRACE_MS,
        daily_date=None,
    )


def ok(state: MatchState, command: Command, now: int) -> Step:
    step = matchcore.handle(state, command, now)
    assert not isinstance(step.reply, ServerError), step.reply
    return step


def refused(state: MatchState, command: Command, now: int) -> ServerError:
    step = matchcore.handle(state, command, now)
    assert isinstance(step.reply, ServerError), step.reply
    assert step.state == state and step.writes == () and step.events == ()
    return step.reply


def seated(count: int, **kwargs: Any) -> MatchState:
    state = fresh(**kwargs)
    for player_id in range(1, count + 1):
        state = ok(state, Join(player_id, f"p{player_id}"), T0).state
    return state


def dealt(count: int, *, at: int = T0, **kwargs: Any) -> MatchState:
    """``count`` connected players, dealt at ``at`` (no countdown)."""
    state = ok(seated(count, **kwargs), Start(1), at).state
    return ok(state, Tick(), at).state


def names(step: Step) -> list[str]:
    return [event_name(event) for event in step.events]


def legal_move(state: MatchState, player_id: int) -> Move:
    seat = state.seat(player_id)
    assert seat is not None and seat.game is not None
    return seat.game.legal_moves()[0]


# -- the lobby ----------------------------------------------------------------------------


def test_a_join_stores_the_seat_says_so_and_answers_with_the_snapshot() -> None:
    step = ok(fresh(), Join(1, "ana"), T0)
    assert step.writes == (SeatAdded(1, T0),)
    assert names(step) == ["player_joined"]
    [joined] = step.events
    assert isinstance(joined, PlayerJoined) and joined.player.name == "ana"
    assert step.reply == Snap(1)
    seat = step.state.seat(1)
    assert seat is not None and seat.connections == 1


def test_a_second_connection_of_a_seated_player_only_counts() -> None:
    state = seated(1)
    step = ok(state, Join(1, "p1"), T0 + 5)
    assert step.writes == () and step.events == ()
    seat = step.state.seat(1)
    assert seat is not None and seat.connections == 2


def test_a_full_match_refuses_another_player() -> None:
    state = seated(2, max_players=2)
    error = refused(state, Join(3, "cat"), T0)
    assert (error.code, error.message) == ("match_full", "match ABCDEF has its 2 players")


def test_a_declared_bot_sits_only_where_the_host_lets_bots_sit() -> None:
    people_only = seated(1)
    error = refused(people_only, Join(2, "beep", bot=True), T0)
    assert (error.code, error.details) == ("bots_not_allowed", {"refused_by": "match"})
    assert refused(people_only, Join(2, "beep", bot=True), T0).message == (
        "the host of match ABCDEF lets no bot sit"
    )

    open_to_bots = replace(people_only, options=replace(people_only.options, bots=True))
    step = ok(open_to_bots, Join(2, "beep", bot=True), T0)
    [joined] = step.events
    assert isinstance(joined, PlayerJoined) and joined.player.bot is True
    snapshot = matchviews.snapshot(step.state, 1, T0, seq=2)
    assert [p.bot for p in snapshot.players] == [False, True]
    assert snapshot.match.bots is True


def test_a_started_match_refuses_joins_and_readies_and_an_abandoned_one_is_over() -> None:
    state = dealt(2)
    assert refused(state, Join(3, "cat"), T0).code == "already_started"
    assert refused(state, Ready(1, True), T0).code == "already_started"
    assert refused(state, Start(1), T0).code == "already_started"
    gone = ok(seated(1), Abandon(), T0).state
    assert refused(gone, Join(3, "cat"), T0).code == "match_finished"
    assert refused(gone, Leave(1), T0).code == "match_finished"


def test_only_a_seated_player_readies_or_leaves_and_only_the_host_starts() -> None:
    state = seated(2)
    assert refused(state, Ready(9, True), T0).code == "not_in_match"
    assert refused(state, Leave(9), T0).code == "not_in_match"
    error = refused(state, Start(2), T0)
    assert (error.code, error.message) == ("not_host", "only the host starts match ABCDEF")


def test_everyone_ready_starts_the_countdown_and_the_deal_comes_at_its_end() -> None:
    state = seated(2, countdown_s=5)
    state = ok(state, Ready(1, True), T0).state
    step = ok(state, Ready(2, True), T0 + 1000)
    assert step.writes == (ReadySet(2, True),)
    assert names(step) == ["ready", "countdown"]
    countdown = step.events[1]
    assert isinstance(countdown, Countdown) and countdown.countdown_ms == 5000
    assert step.state.status == "countdown" and step.wake_at == T0 + 6000
    early = ok(step.state, Tick(), T0 + 5999)
    assert early.events == () and early.state == step.state
    deal = ok(step.state, Tick(), T0 + 6000)
    assert deal.writes == (MatchStarted(T0 + 6000),)
    assert names(deal) == ["started"]
    assert deal.state.status == "running" and deal.state.started_at == T0 + 6000
    assert deal.wake_at == T0 + 6000 + LIMIT_S * 1000  # the time limit, from the deal
    [started] = deal.events
    assert isinstance(started, Started)
    assert started.grid == Game(SEED, "classic").layout().splitlines()


def test_a_host_away_past_the_grace_period_passes_the_match_to_the_next_seat() -> None:
    state = ok(seated(3), Disconnect(1), T0).state
    assert ok(state, Tick(), T0 + GRACE_MS - 1).events == ()
    step = ok(state, Tick(), T0 + GRACE_MS)
    assert step.writes == (SeatRemoved(1), HostSet(2))
    assert names(step) == ["player_left", "host_changed"]
    assert step.state.host_id == 2 and [s.player_id for s in step.state.seats] == [2, 3]


def test_the_last_seat_gone_from_the_lobby_abandons_the_match_at_its_grace_end() -> None:
    state = ok(seated(1), Disconnect(1), T0).state
    # Applied long after (the server was down), at its own instant.
    step = ok(state, Tick(), T0 + 10 * GRACE_MS)
    assert step.writes == (SeatRemoved(1), MatchAbandoned(T0 + GRACE_MS))
    assert names(step) == ["player_left", "match_abandoned"] and step.closed
    assert step.state.status == "abandoned" and step.wake_at is None


def test_a_player_back_within_the_grace_period_keeps_the_seat() -> None:
    state = ok(seated(2), Disconnect(2), T0).state
    state = ok(state, Join(2, "p2"), T0 + GRACE_MS - 1).state
    step = ok(state, Tick(), T0 + 5 * GRACE_MS)
    assert step.events == () and step.wake_at is None


def test_a_leave_in_the_lobby_frees_the_seat_at_once() -> None:
    step = ok(seated(2), Leave(2), T0)
    assert step.writes == (SeatRemoved(2),) and names(step) == ["player_left"]
    assert step.reply is None


def test_spectators_are_counted_but_a_daily_challenge_is_not_watchable_today() -> None:
    state = seated(1)
    step = ok(state, Watch(9), T0)
    assert step.reply == Snap(None) and step.state.spectators == 1
    assert ok(step.state, Unwatch(), T0).state.spectators == 0
    daily = replace(state, kind="daily", daily_date=datetime.fromtimestamp(T0 / 1000, UTC).date())
    assert refused(daily, Watch(9), T0).code == "not_watchable"
    assert ok(daily, Watch(1), T0).reply == Snap(None)  # its own player, as a spectator


def test_a_seated_player_who_asks_to_watch_is_a_spectator_and_their_seat_stays_as_it_was() -> (
    None
):
    state = seated(1)
    step = ok(state, Watch(1), T0)
    assert step.reply == Snap(None) and step.state.spectators == 1
    assert step.state.seat(1) == state.seat(1)


def test_a_lobby_whose_seated_players_are_all_ready_starts_however_its_seats_changed() -> None:
    state = seated(3, countdown_s=5)
    for player_id in (2, 3):
        state = ok(state, Ready(player_id, True), T0).state
    # The host, not ready, leaves: the next seat hosts, and everyone left is ready.
    left = ok(state, Leave(1), T0 + 5)
    assert names(left) == ["player_left", "host_changed", "countdown"]
    assert left.writes == (SeatRemoved(1), HostSet(2))
    assert (left.state.status, left.state.host_id) == ("countdown", 2)
    assert left.wake_at == T0 + 5 + 5000
    # ...and the same when the host's seat is given up at the end of its grace period.
    away = ok(state, Disconnect(1), T0).state
    given_up = ok(away, Tick(), T0 + GRACE_MS + 1000)
    assert names(given_up) == ["player_left", "host_changed", "countdown"]
    # The countdown runs from the instant the seat was given up.
    assert given_up.state.deal_at == T0 + GRACE_MS + 5000
    # A player who was not ready leaving the others ready starts it too.
    state = seated(3)
    for player_id in (1, 2):
        state = ok(state, Ready(player_id, True), T0).state
    assert names(ok(state, Leave(3), T0)) == ["player_left", "countdown"]
    # Nobody ready: a seat given up starts nothing.
    assert names(ok(seated(3), Leave(3), T0)) == ["player_left"]


def test_a_player_going_away_and_coming_back_is_said_to_everyone_once() -> None:
    state = dealt(2)
    away = ok(state, Disconnect(2), T0 + 100)
    assert names(away) == ["presence"] and away.writes == ()
    assert away.events[0] == Presence(
        match="ABCDEF", seq=UNNUMBERED, t_ms=100, player_id=2, connected=False
    )
    back = ok(away.state, Join(2, "p2"), T0 + 200)
    assert names(back) == ["presence"] and back.events[0] == Presence(
        match="ABCDEF", seq=UNNUMBERED, t_ms=200, player_id=2, connected=True
    )
    second = ok(back.state, Join(2, "p2"), T0 + 300)  # another connection of theirs
    assert second.events == ()
    one_of_two = ok(second.state, Disconnect(2), T0 + 400)
    assert one_of_two.events == ()
    seat = one_of_two.state.seat(2)
    assert seat is not None and seat.connections == 1
    # After a restart nobody is connected: each first connection says so.
    rebuilt = replace(state, seats=tuple(replace(s, connections=0) for s in state.seats))
    assert names(ok(rebuilt, Join(1, "p1"), T0 + 500)) == ["presence"]


def test_a_match_over_refuses_joins_and_watches_saying_how_it_ended() -> None:
    state = dealt(1)
    stopped = ok(state, Act(1, 1, Stop()), T0 + 10).state
    ending = ok(stopped, Tick(), T0 + 10).state
    finished = ok(ending, Ended("2026-12-02T00:00:00+00:00"), T0 + 20).state
    assert finished.phase == "finished"
    for command in (Join(1, "p1"), Watch(9)):
        error = refused(finished, command, T0 + 30)
        assert (error.code, error.details) == ("match_finished", {"status": "finished"})
        assert "get_replay" in error.message
    abandoned = ok(seated(1), Abandon(), T0).state
    for command in (Join(1, "p1"), Watch(9)):
        error = refused(abandoned, command, T0)
        assert (error.code, error.details) == ("match_finished", {"status": "abandoned"})


# -- play -----------------------------------------------------------------------------


def test_an_action_is_stored_said_and_acknowledged_on_the_match_clock() -> None:
    state = dealt(2)
    move = legal_move(state, 1)
    step = ok(state, Act(1, 1, move), T0 + 1234)
    [row] = step.writes
    assert isinstance(row, ActionRow)
    assert (row.player_id, row.seq, row.action, row.kind) == (1, 1, str(move), "move")
    assert row.t_ms == 1234
    assert names(step) == ["progress"]
    assert isinstance(step.reply, ActionOk)
    assert (step.reply.seq, step.reply.t_ms) == (1, 1234)
    seat = step.state.seat(1)
    before = state.seat(1)
    assert seat is not None and before is not None and before.game is not None
    assert seat.last_seq == 1 and before.last_seq == 0
    assert before.game.moves_made == 0  # the old state's game was copied, not pushed


def test_a_resent_action_gets_its_ack_again_and_an_old_uncached_one_is_stale() -> None:
    state = dealt(1)
    step = ok(state, Act(1, 1, legal_move(state, 1)), T0 + 10)
    again = ok(step.state, Act(1, 1, Stop()), T0 + 20)
    assert isinstance(step.reply, ActionOk)
    assert again.reply == msgspec.structs.replace(step.reply, duplicate=True)
    assert again.writes == () and again.state == step.state
    # A long game (its random playout has 89 actions): seq 1's ack is evicted at last.
    seed = Seed((0).to_bytes(10, "big"))
    line = Game(seed, "classic").random_playout(random.Random(0))
    state = replace(dealt(1), seed=seed)
    state = replace(state, seats=(replace(state.seats[0], game=Game(seed, "classic")),))
    for seq, action in enumerate(line[: matchstate.CACHED_ACKS + 1], start=1):
        state = ok(state, Act(1, seq, action), T0 + seq).state
    resent = ok(state, Act(1, 2, Stop()), T0 + 100).reply
    assert isinstance(resent, ActionOk) and resent.duplicate is True
    error = refused(state, Act(1, 1, Stop()), T0 + 100)
    assert (error.code, error.message) == (
        "stale_seq",
        f"seq 1 is older than your last action ({matchstate.CACHED_ACKS + 1})",
    )


def test_actions_are_refused_by_who_and_when() -> None:
    lobby = seated(2)
    assert refused(lobby, Act(1, 1, Stop()), T0).code == "not_started"
    state = dealt(2)
    error = refused(state, Act(9, 1, Stop()), T0)
    assert (error.code, error.message) == ("not_a_player", "you are not a player of match ABCDEF")
    illegal = refused(state, Act(1, 1, parse_action("2S>1")), T0)
    assert illegal.code == "illegal_action" and illegal.details["reason"]
    stopped = ok(state, Act(1, 1, Stop()), T0 + 5).state
    over = refused(stopped, Act(1, 2, Stop()), T0 + 6)
    assert (over.code, over.message) == ("game_over", "your game in ABCDEF has ended (stopped)")


def test_a_stop_ends_the_game_in_the_same_step_as_the_action() -> None:
    state = dealt(2)
    step = ok(state, Act(2, 1, Stop()), T0 + 700)
    assert [type(w) for w in step.writes] == [ActionRow, GameEnded]
    ended = step.writes[1]
    assert isinstance(ended, GameEnded)
    assert (ended.end_reason, ended.finish_ms) == ("stopped", 700)
    assert names(step) == ["progress", "player_finished"] and step.end is None


def test_the_last_game_to_end_ends_the_match_ranked_by_gaps_ranking() -> None:
    state = dealt(2)
    state = ok(state, Act(1, 1, legal_move(state, 1)), T0 + 100).state
    state = ok(state, Act(1, 2, Stop()), T0 + 200).state
    step = ok(state, Act(2, 1, Stop()), T0 + 300)
    assert step.end is not None and step.state.status == "running"
    finishes = [
        Finish(s.player_id, False, s.game.score, s.finish_ms or 0, s.score_ms)  # type: ignore[union-attr]
        for s in step.state.seats
    ]
    expected = {f.player_id: position for position, f in rank(finishes, "score")}
    assert {row.player_id: row.rank for row in step.end} == expected
    assert refused(step.state, Leave(9), T0 + 400).code == "not_in_match"
    done = ok(step.state, Ended(ENDED_AT, (RATING,)), T0 + 500)
    assert names(done) == ["match_ended"] and done.closed
    [ended] = done.events
    assert isinstance(ended, MatchEnded)
    assert ended.seed == str(SEED) and ended.ratings == [RATING]
    assert ended.ended_at == ENDED_AT
    assert [row.player_id for row in ended.ranking] == [row.player_id for row in step.end]
    assert done.state.status == "finished"
    assert [row.review for row in ended.ranking] == [None, None]


def test_the_match_ended_event_says_which_results_are_under_review() -> None:
    state = dealt(2)
    state = ok(state, Act(1, 1, Stop()), T0 + 100).state
    step = ok(state, Act(2, 1, Stop()), T0 + 200)
    done = ok(step.state, Ended(ENDED_AT, (), {2: "held"}), T0 + 300)
    [ended] = done.events
    assert isinstance(ended, MatchEnded)
    reviews = {row.player_id: row.review for row in ended.ranking}
    assert reviews == {1: None, 2: "held"}


def finished(count: int, **kwargs: Any) -> MatchState:
    """A match of ``count`` players, every game stopped and the end stored."""
    state = dealt(count, **kwargs)
    for player_id in range(1, count + 1):
        state = ok(state, Act(player_id, 1, Stop()), T0 + 100).state
    return ok(state, Ended(ENDED_AT), T0 + 200).state


# -- rematch ------------------------------------------------------------------------------


def test_the_first_rematch_offered_stands_and_is_said_to_everyone_once() -> None:
    state = finished(3)
    asked = ok(state, OfferRematch(2, same_seed=False), T0 + 300)
    assert asked.reply == {
        "code": None,
        "seed": None,
        "options": {"ruleset": "classic", "max_players": 4, "time_limit_s": LIMIT_S,
                    "win_by": "score", "public": True, "countdown_s": 0, "bots": False},
    } and asked.events == ()
    offered = ok(state, OfferRematch(2, same_seed=False, code="NEW111"), T0 + 300)
    assert isinstance(offered.reply, dict) and offered.reply["code"] == "NEW111"
    assert names(offered) == ["rematch_offered"] and offered.events[0] == RematchOffered(
        match="ABCDEF", seq=UNNUMBERED, t_ms=300,
        code="NEW111", same_seed=False, by=RematchBy(player_id=2, name="p2"),
    )
    # Another player's offer at the same instant finds the first one: no second match.
    second = ok(offered.state, OfferRematch(3, same_seed=False, code="NEW222"), T0 + 301)
    assert isinstance(second.reply, dict) and second.reply["code"] == "NEW111"
    assert second.events == () and second.state == offered.state
    # ...unless the first cannot be joined any more: then the new one replaces it.
    again = ok(offered.state, OfferRematch(3, False, code="NEW333", replacing="NEW111"), T0 + 302)
    assert isinstance(again.reply, dict) and again.reply["code"] == "NEW333"
    assert names(again) == ["rematch_offered"]
    # The same deal again is a rematch of its own, with the seed to deal.
    same = ok(again.state, OfferRematch(1, same_seed=True), T0 + 303)
    assert isinstance(same.reply, dict) and same.reply["code"] is None
    assert same.reply["seed"] == str(SEED)


def test_a_rematch_is_for_the_players_of_a_finished_match_and_a_secret_deal_is_not_dealt_again(
) -> None:
    running = dealt(2)
    assert refused(running, OfferRematch(1, False), T0 + 10).code == "not_finished"
    over = finished(2)
    assert refused(over, OfferRematch(9, False), T0 + 300).code == "not_in_match"
    today = datetime.fromtimestamp(T0 / 1000, UTC).date()
    daily = finished(1, kind="daily")
    daily = replace(daily, daily_date=today)
    assert refused(daily, OfferRematch(1, True), T0 + 300).code == "not_finished"
    # A match the server started becomes a private race for as many as played it.
    new_deal = ok(daily, OfferRematch(1, False), T0 + 300).reply
    assert isinstance(new_deal, dict) and new_deal["options"]["max_players"] == 1
    assert new_deal["options"]["public"] is False


def test_a_rematch_lets_bots_sit_where_the_finished_match_let_them() -> None:
    over = finished(2)
    over = replace(over, options=replace(over.options, bots=True))
    rematch = ok(over, OfferRematch(1, False), T0 + 300).reply
    assert isinstance(rematch, dict) and rematch["options"]["bots"] is True


# -- deadlines of a game ----------------------------------------------------------------


def test_a_player_away_past_the_grace_period_is_ended_at_its_end() -> None:
    state = ok(dealt(2), Disconnect(2), T0 + 1000).state
    assert ok(state, Tick(), T0 + 1000 + GRACE_MS - 1).events == ()
    step = ok(state, Tick(), T0 + 1000 + GRACE_MS + 777)  # the timer came late
    [ended] = step.writes
    assert isinstance(ended, GameEnded)
    assert (ended.end_reason, ended.finish_ms) == ("disconnected", 1000 + GRACE_MS)


def test_a_seat_away_at_the_start_is_timed_from_the_deal() -> None:
    state = seated(2, countdown_s=10)
    state = ok(state, Disconnect(2), T0).state
    state = ok(state, Start(1), T0 + 5000).state
    state = ok(state, Tick(), T0 + 15_000).state  # dealt
    step = ok(state, Tick(), T0 + 15_000 + GRACE_MS)
    ended = step.writes[0]
    assert isinstance(ended, GameEnded) and ended.finish_ms == GRACE_MS


def test_a_leave_during_the_countdown_ends_the_game_after_the_deal() -> None:
    state = ok(seated(2, countdown_s=3), Start(1), T0).state
    left = ok(state, Leave(2), T0 + 1000)
    assert left.writes == () and left.events == ()
    step = ok(left.state, Tick(), T0 + 3000)
    assert names(step) == ["started", "player_finished"]
    finished = step.events[1]
    assert isinstance(finished, PlayerFinished) and finished.end_reason == "left"
    assert [type(w) for w in step.writes] == [MatchStarted, GameEnded]


def test_the_time_limit_ends_every_game_still_running_at_the_limit() -> None:
    state = dealt(3)
    state = ok(state, Act(1, 1, Stop()), T0 + 10).state
    step = ok(state, Tick(), T0 + LIMIT_S * 1000 + 5000)
    ends = [w for w in step.writes if isinstance(w, GameEnded)]
    assert [(w.player_id, w.end_reason, w.finish_ms) for w in ends] == [
        (2, "time", LIMIT_S * 1000),
        (3, "time", LIMIT_S * 1000),
    ]
    assert step.end is not None and step.wake_at is None


def test_an_action_after_the_limit_is_game_over_and_the_limit_is_stored_with_it() -> None:
    state = dealt(1)
    step = matchcore.handle(state, Act(1, 1, Stop()), T0 + LIMIT_S * 1000)
    assert isinstance(step.reply, ServerError)
    assert (step.reply.code, step.reply.message) == (
        "game_over",
        "your game in ABCDEF has ended (time)",
    )
    [ended] = step.writes
    assert isinstance(ended, GameEnded) and ended.end_reason == "time"
    assert step.end is not None


def test_a_grace_end_and_the_time_limit_at_one_instant_end_by_time() -> None:
    at = T0 + LIMIT_S * 1000 - GRACE_MS
    state = ok(dealt(2), Disconnect(2), at).state
    step = ok(state, Tick(), T0 + LIMIT_S * 1000)
    ends = [(w.player_id, w.end_reason, w.finish_ms) for w in step.writes]  # type: ignore[union-attr]
    assert ends == [(1, "time", LIMIT_S * 1000), (2, "time", LIMIT_S * 1000)]


def test_deadlines_passed_during_a_downtime_apply_in_time_order_at_their_instants() -> None:
    state = dealt(3)
    state = ok(state, Disconnect(3), T0 + 2000).state
    state = ok(state, Disconnect(2), T0 + 1000).state
    step = ok(state, Tick(), T0 + 10 * LIMIT_S * 1000)
    ends = [(w.player_id, w.end_reason, w.finish_ms) for w in step.writes]  # type: ignore[union-attr]
    assert ends == [
        (2, "disconnected", 1000 + GRACE_MS),
        (3, "disconnected", 2000 + GRACE_MS),
        (1, "time", LIMIT_S * 1000),
    ]
    assert names(step) == ["player_finished"] * 3 and step.end is not None


def test_a_refused_command_stores_what_was_due_all_the_same() -> None:
    state = ok(dealt(2), Disconnect(2), T0).state
    step = matchcore.handle(state, Ready(1, True), T0 + GRACE_MS)
    assert isinstance(step.reply, ServerError) and step.reply.code == "already_started"
    assert [type(w) for w in step.writes] == [GameEnded]


# -- rebuild --------------------------------------------------------------------------


@dataclass
class MemoryStore:
    """The rows a match's writes leave in the database, as ``Store.unfinished_matches``
    reads them back."""

    state: MatchState
    seats: dict[int, dict[str, Any]] = field(default_factory=dict)
    actions: list[ActionRow] = field(default_factory=list)
    status: str = "lobby"
    started_at: datetime | None = None
    host_id: int = 0

    def store(self, writes: tuple[Write, ...], names_of: dict[int, str]) -> None:
        for write in writes:
            match write:
                case SeatAdded(player_id=player_id):
                    self.seats[player_id] = {
                        "player_id": player_id, "name": names_of[player_id], "ready": False,
                        "end_reason": None, "finish_ms": None, "score_ms": None,
                    }
                case SeatRemoved(player_id=player_id):
                    del self.seats[player_id]
                case ReadySet(player_id=player_id, ready=ready):
                    self.seats[player_id]["ready"] = ready
                case HostSet(host_id=host_id):
                    self.host_id = host_id
                case MatchStarted(started_at=started_at):
                    self.status = "running"
                    self.started_at = datetime.fromtimestamp(started_at / 1000, UTC)
                case ActionRow():
                    self.actions.append(write)
                case GameEnded():
                    self.seats[write.player_id].update(asdict(write))
                case MatchAbandoned():
                    self.status = "abandoned"

    def stored(self) -> SimpleNamespace:
        s = self.state
        row = SimpleNamespace(
            id=s.id, code=s.code, kind=s.kind, ruleset=s.options.ruleset.name,
            max_players=s.options.max_players, time_limit_s=s.options.time_limit_s,
            win_by=s.options.win_by, public=s.options.public, countdown_s=s.options.countdown_s,
            rated=s.rated, host_id=self.host_id or s.host_id, status=self.status, seed=s.seed.data,
            started_at=self.started_at, daily_date=s.daily_date, tournament_id=None, round=None,
        )
        actions = sorted(self.actions, key=lambda a: (a.player_id, a.seq))
        return SimpleNamespace(
            match=row,
            seats=[SimpleNamespace(**seat) for seat in self.seats.values()],
            actions=actions,
        )


def comparable(state: MatchState) -> list[tuple[Any, ...]]:
    """What a rebuild must give back of each seat (not the live facts: connections)."""
    return [
        (
            s.player_id, s.name, s.ready, s.game.layout() if s.game else None,
            s.game.score if s.game else None, s.last_seq, s.acks, s.end_reason, s.finish_ms,
            s.score_ms if s.finished else None,
        )
        for s in state.seats
    ]


def test_a_played_match_rebuilds_as_it_was_live_acks_and_last_seq_included() -> None:
    rng = random.Random(3)
    memory = MemoryStore(fresh())
    names_of = {1: "p1", 2: "p2"}
    state = memory.state
    now = T0
    for command in (Join(1, "p1"), Join(2, "p2"), Ready(1, True), Ready(2, True), Tick()):
        step = ok(state, command, now)
        memory.store(step.writes, names_of)
        state = step.state
    for seq in range(1, 41):
        for player_id in (1, 2):
            seat = state.seat(player_id)
            assert seat is not None and seat.game is not None
            if seat.finished:
                continue
            legal = seat.game.legal_moves()
            action: Action = rng.choice(legal) if legal else Redeal()
            if not legal and seat.game.redeals_left == 0:
                action = Stop()
            now += 250
            step = ok(state, Act(player_id, seq, action), now)
            memory.store(step.writes, names_of)
            state = step.state
    rebuilt = rebuild(memory.stored(), now=now, grace_ms=GRACE_MS, default_countdown_s=0)
    assert comparable(rebuilt) == comparable(state)
    assert rebuilt.started_at == state.started_at and rebuilt.status == "running"
    # Nobody is connected after a restart: each seat still playing has the grace period.
    assert all(s.connections == 0 for s in rebuilt.seats)
    assert matchcore.next_deadline(rebuilt) == min(now + GRACE_MS, T0 + LIMIT_S * 1000)


def test_a_lobby_rebuilds_with_its_ready_flags_and_a_grace_period_from_now() -> None:
    memory = MemoryStore(fresh())
    step = ok(memory.state, Join(1, "p1"), T0)
    memory.store(step.writes, {1: "p1"})
    memory.store(ok(step.state, Ready(1, True), T0).writes, {})
    rebuilt = rebuild(memory.stored(), now=T0 + 99, grace_ms=GRACE_MS,
                                default_countdown_s=4)
    seat = rebuilt.seat(1)
    assert seat is not None and seat.ready and rebuilt.status == "lobby"
    assert matchcore.next_deadline(rebuilt) == T0 + 99 + GRACE_MS


# -- any interleaving -----------------------------------------------------------------


OPS = ("act", "act", "act", "stop", "disconnect", "reconnect", "leave", "tick")


@settings(max_examples=150, deadline=None)
@given(
    players=st.integers(1, 4),
    countdown_s=st.sampled_from([0, 3]),
    win_by=st.sampled_from(["score", "time"]),
    ops=st.lists(
        st.tuples(
            st.sampled_from(OPS), st.integers(1, 4), st.integers(0, 9000), st.booleans(),
            st.integers(0, 10**6),
        ),
        max_size=60,
    ),
)
def test_any_interleaving_ends_every_game_once_then_the_match_ranked_by_gaps_ranking(
    players: int, countdown_s: int, win_by: str, ops: list[tuple[str, int, int, bool, int]]
) -> None:
    names_of = {p: f"p{p}" for p in range(1, players + 1)}
    state = fresh(countdown_s=countdown_s, win_by=win_by)
    memory = MemoryStore(state)
    steps: list[Step] = []

    def commit(command: Command, now: int, *, fails: bool = False) -> None:
        nonlocal state
        step = matchcore.handle(state, command, now)
        if fails and step.writes:
            return  # the database refused the first write: the step is dropped whole
        memory.store(step.writes, names_of)
        steps.append(step)
        state = step.state

    now = T0
    for player_id in names_of:
        commit(Join(player_id, names_of[player_id]), now)
    commit(Start(1), now)
    seqs = dict.fromkeys(names_of, 0)
    for op, who, dt, fails, pick in ops:
        now += dt
        player_id = (who - 1) % players + 1
        seat = state.seat(player_id)
        assert seat is not None
        if op in ("act", "stop"):
            action: Action = Stop()
            if op == "act" and seat.game is not None:
                legal = seat.game.legal_moves()
                action = legal[pick % len(legal)] if legal else Redeal()
            seqs[player_id] += 1
            before = seqs[player_id]
            commit(Act(player_id, before, action), now, fails=fails)
            if state.seat(player_id).last_seq != before:  # type: ignore[union-attr]
                seqs[player_id] -= 1  # refused or dropped: the client sends it again later
        elif op == "disconnect":
            commit(Disconnect(player_id), now)
        elif op == "reconnect":
            commit(Join(player_id, names_of[player_id]), now)
        elif op == "leave":
            commit(Leave(player_id), now, fails=fails)
        else:
            commit(Tick(), now, fails=fails)
    commit(Tick(), now + 10 * LIMIT_S * 1000)
    assert state.phase == "ending"
    ending = [index for index, step in enumerate(steps) if step.end is not None]
    assert len(ending) == 1
    finished = [
        (index, event.player_id)
        for index, step in enumerate(steps)
        for event in step.events
        if isinstance(event, PlayerFinished)
    ]
    assert sorted(player_id for _, player_id in finished) == sorted(names_of)
    assert all(index <= ending[0] for index, _ in finished)
    ended_writes = [w for s in steps for w in s.writes if isinstance(w, GameEnded)]
    assert sorted(w.player_id for w in ended_writes) == sorted(names_of)
    assert all(0 <= w.finish_ms <= LIMIT_S * 1000 for w in ended_writes)
    finishes = [
        Finish(w.player_id, w.won, w.score, w.finish_ms, w.score_ms) for w in ended_writes
    ]
    table = steps[ending[0]].end
    assert table is not None
    assert {row.player_id: row.rank for row in table} == {
        f.player_id: position for position, f in rank(finishes, win_by)
    }
    rebuilt = rebuild(memory.stored(), now=now, grace_ms=GRACE_MS, default_countdown_s=0)
    assert comparable(rebuilt) == comparable(state)


@pytest.mark.parametrize("phase", ["lobby", "running"])
def test_the_views_take_the_time_as_a_parameter(phase: str) -> None:
    state = seated(2) if phase == "lobby" else dealt(2)
    summary = matchviews.summary(state, T0 + 4321)
    assert summary.status == phase
    assert summary.t_ms == (4321 if phase == "running" else 0)
    snapshot = matchviews.snapshot(state, 1, T0 + 4321, seq=17)
    assert snapshot.seq == 17 and snapshot.you.role == "player"
    assert (snapshot.you.game is not msgspec.UNSET) == (phase == "running")


# -- rebuilding a state ---------------------------------------------------------------------

#: The function that runs (mypy is shown ``dataclasses.replace`` under its name).
evolve: Callable[..., Any] = matchstate.evolve  # type: ignore[attr-defined]


def test_evolve_builds_what_dataclasses_replace_builds_and_leaves_the_original_whole() -> None:
    state = dealt(2)
    seat = state.seats[0]
    changed = evolve(seat, last_seq=9, score_ms=120)
    assert changed == replace(seat, last_seq=9, score_ms=120)
    assert type(changed) is matchstate.Seat and changed is not seat
    assert (seat.last_seq, seat.score_ms) == (0, 0)
    assert evolve(state, phase="ending") == replace(state, phase="ending")
    with pytest.raises(AttributeError):  # still frozen
        changed.last_seq = 10  # type: ignore[misc]


def test_evolve_refuses_a_name_that_is_not_a_field() -> None:
    with pytest.raises(TypeError, match="Seat has no field 'last_sequence'"):
        evolve(dealt(1).seats[0], last_sequence=1)
