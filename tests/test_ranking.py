"""gaps.ranking: the final table, as the rulings' Competition section rules it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaps.errors import NotationError
from gaps.ranking import WIN_BY, Finish, rank, sort_key


def finish(player_id: int, *, won: bool = False, score: int = 0, finish_ms: int = 60_000,
           score_ms: int = 30_000) -> Finish:
    return Finish(player_id=player_id, won=won, score=score, finish_ms=finish_ms,
                  score_ms=score_ms)


def table(finishes: list[Finish], win_by: str) -> list[tuple[int, int]]:
    """(rank, player id) best first."""
    return [(position, entry.player_id) for position, entry in rank(finishes, win_by)]


# --- win_by = time -----------------------------------------------------------------------


def test_a_winner_ranks_above_a_higher_score_that_did_not_win() -> None:
    winner = finish(1, won=True, score=38, finish_ms=500_000)
    best_loser = finish(2, score=47, finish_ms=10_000)
    assert table([best_loser, winner], "time") == [(1, 1), (2, 2)]


def test_winners_rank_by_finish_time_the_fastest_first() -> None:
    slow = finish(1, won=True, score=58, finish_ms=90_000)
    fast = finish(2, won=True, score=38, finish_ms=40_000)
    middle = finish(3, won=True, score=48, finish_ms=60_000)
    assert table([slow, fast, middle], "time") == [(1, 2), (2, 3), (3, 1)]


def test_with_win_by_time_a_winners_score_does_not_matter_among_winners() -> None:
    assert table([finish(1, won=True, score=58, finish_ms=2),
                  finish(2, won=True, score=38, finish_ms=1)], "time") == [(1, 2), (2, 1)]


def test_players_who_did_not_win_rank_by_score_the_highest_first() -> None:
    finishes = [finish(1, score=5), finish(2, score=-15), finish(3, score=40), finish(4, score=12)]
    assert table(finishes, "time") == [(1, 3), (2, 4), (3, 1), (4, 2)]


def test_equal_scores_without_a_win_rank_by_who_reached_the_score_first() -> None:
    late = finish(1, score=20, score_ms=50_000, finish_ms=60_000)
    early = finish(2, score=20, score_ms=10_000, finish_ms=600_000)
    assert table([late, early], "time") == [(1, 2), (2, 1)]


def test_with_win_by_time_the_finish_time_of_a_non_winner_breaks_no_tie() -> None:
    # Same score, same time reaching it: they tie, whenever their games ended.
    a = finish(1, score=20, score_ms=10_000, finish_ms=20_000)
    b = finish(2, score=20, score_ms=10_000, finish_ms=600_000)
    assert table([a, b], "time") == [(1, 1), (1, 2)]


def test_winners_finishing_at_the_same_millisecond_share_a_rank() -> None:
    finishes = [finish(1, won=True, finish_ms=70_000), finish(2, won=True, finish_ms=70_000),
                finish(3, won=True, finish_ms=80_000)]
    assert table(finishes, "time") == [(1, 1), (1, 2), (3, 3)]


def test_with_win_by_time_every_winner_ranks_above_every_non_winner() -> None:
    finishes = [finish(1, score=47), finish(2, won=True, score=28, finish_ms=599_999),
                finish(3, score=46), finish(4, won=True, score=58, finish_ms=1)]
    assert table(finishes, "time") == [(1, 4), (2, 2), (3, 1), (4, 3)]


# --- win_by = score ----------------------------------------------------------------------


def test_with_win_by_score_the_best_score_ranks_first_even_above_a_winner() -> None:
    winner = finish(1, won=True, score=38, finish_ms=100_000)
    stopped = finish(2, score=47, finish_ms=500_000)
    assert table([winner, stopped], "score") == [(1, 2), (2, 1)]


def test_with_win_by_score_equal_scores_rank_by_finish_time_the_earliest_first() -> None:
    late = finish(1, score=30, finish_ms=90_000, score_ms=1_000)
    early = finish(2, score=30, finish_ms=80_000, score_ms=70_000)
    assert table([late, early], "score") == [(1, 2), (2, 1)]


def test_with_win_by_score_the_time_a_score_was_reached_breaks_no_tie() -> None:
    a = finish(1, score=30, finish_ms=90_000, score_ms=1_000)
    b = finish(2, score=30, finish_ms=90_000, score_ms=80_000)
    assert table([a, b], "score") == [(1, 1), (1, 2)]


def test_with_win_by_score_a_win_alone_breaks_no_tie() -> None:
    a = finish(1, won=True, score=48, finish_ms=90_000)
    b = finish(2, won=False, score=48, finish_ms=90_000)
    assert table([b, a], "score") == [(1, 1), (1, 2)]


def test_with_win_by_score_negative_scores_rank_below_zero() -> None:
    finishes = [finish(1, score=-5), finish(2, score=0), finish(3, score=-15)]
    assert table(finishes, "score") == [(1, 2), (2, 1), (3, 3)]


# --- shared ranks ------------------------------------------------------------------------


def test_a_tie_shares_a_rank_and_the_next_rank_is_skipped() -> None:
    finishes = [finish(1, score=10), finish(2, score=10), finish(3, score=5)]
    assert [position for position, _ in rank(finishes, "time")] == [1, 1, 3]
    assert [position for position, _ in rank(finishes, "score")] == [1, 1, 3]


def test_three_way_tie_then_the_next_is_fourth() -> None:
    finishes = [finish(i, score=10) for i in (1, 2, 3)] + [finish(4, score=9)]
    assert [position for position, _ in rank(finishes, "score")] == [1, 1, 1, 4]


def test_a_tie_below_the_top_shares_its_rank() -> None:
    finishes = [finish(1, score=30), finish(2, score=20), finish(3, score=20), finish(4, score=10)]
    assert table(finishes, "time") == [(1, 1), (2, 2), (2, 3), (4, 4)]


def test_tied_players_are_listed_by_player_id_whatever_the_input_order() -> None:
    finishes = [finish(9, score=10), finish(3, score=10), finish(5, score=10)]
    assert table(finishes, "score") == [(1, 3), (1, 5), (1, 9)]


def test_everyone_tied_all_rank_first() -> None:
    finishes = [finish(i) for i in range(1, 6)]
    assert [position for position, _ in rank(finishes, "time")] == [1] * 5


def test_no_players_make_an_empty_table() -> None:
    assert rank([], "time") == []
    assert rank([], "score") == []


def test_one_player_ranks_first() -> None:
    only = finish(1, score=-15)
    assert rank([only], "time") == [(1, only)]


def test_the_table_holds_the_finishes_it_was_given() -> None:
    finishes = [finish(1, score=3), finish(2, won=True, score=48), finish(3, score=3)]
    ranked = [entry for _, entry in rank(finishes, "time")]
    assert len(ranked) == 3
    assert set(ranked) == set(finishes)


# --- win_by ------------------------------------------------------------------------------


@pytest.mark.parametrize("win_by", ["fastest", "best", "Time", "", "points", " time", "ｔｉｍｅ"])
def test_an_unknown_win_by_is_a_notation_error_naming_it(win_by: str) -> None:
    with pytest.raises(NotationError, match="is not 'time' or 'score'") as caught:
        sort_key(finish(1), win_by)
    assert repr(win_by) in str(caught.value)
    with pytest.raises(NotationError):
        rank([finish(1), finish(2)], win_by)


def test_an_unknown_win_by_is_refused_even_with_no_one_to_rank() -> None:
    with pytest.raises(NotationError):
        rank([], "fastest")


def test_a_notation_error_is_still_a_value_error_for_callers_that_catch_those() -> None:
    with pytest.raises(ValueError):
        rank([finish(1)], "points")


def test_the_win_by_modes_are_time_and_score() -> None:
    assert WIN_BY == ("time", "score")
    for win_by in WIN_BY:
        assert rank([finish(1)], win_by) == [(1, finish(1))]


def test_sort_keys_are_smaller_for_better_finishes() -> None:
    assert sort_key(finish(1, won=True, finish_ms=5), "time") < sort_key(finish(2, score=47),
                                                                         "time")
    assert sort_key(finish(1, score=10), "score") < sort_key(finish(2, score=9), "score")


# --- properties --------------------------------------------------------------------------


finishes_strategy = st.lists(
    st.builds(
        Finish,
        player_id=st.integers(1, 10_000),
        won=st.booleans(),
        score=st.integers(-15, 58),
        finish_ms=st.integers(0, 5_000),
        score_ms=st.integers(0, 5_000),
    ),
    max_size=12,
    unique_by=lambda entry: entry.player_id,
)


@settings(max_examples=60)
@given(finishes_strategy, st.sampled_from(["time", "score"]))
def test_ranks_start_at_one_never_decrease_and_ties_share_a_rank(
    finishes: list[Finish], win_by: str
) -> None:
    ranked = rank(finishes, win_by)
    assert len(ranked) == len(finishes)
    assert {entry.player_id for _, entry in ranked} == {entry.player_id for entry in finishes}
    if not ranked:
        return
    assert ranked[0][0] == 1
    positions = [position for position, _ in ranked]
    assert positions == sorted(positions)
    for index, (position, entry) in enumerate(ranked):
        # A rank is one more than the number of players strictly better.
        better = sum(1 for other in finishes if sort_key(other, win_by) < sort_key(entry, win_by))
        assert position == better + 1
        assert position <= index + 1
        if index:
            previous_position, previous = ranked[index - 1]
            tied = sort_key(previous, win_by) == sort_key(entry, win_by)
            assert (position == previous_position) == tied
            if not tied:
                assert position == index + 1


@settings(max_examples=60)
@given(finishes_strategy)
def test_with_win_by_time_winners_come_first_in_finish_order(finishes: list[Finish]) -> None:
    ranked = [entry for _, entry in rank(finishes, "time")]
    winners = [entry for entry in ranked if entry.won]
    assert ranked[: len(winners)] == winners
    assert [w.finish_ms for w in winners] == sorted(w.finish_ms for w in winners)
    rest = ranked[len(winners):]
    assert [(-r.score, r.score_ms) for r in rest] == sorted((-r.score, r.score_ms) for r in rest)


@settings(max_examples=60)
@given(finishes_strategy)
def test_with_win_by_score_scores_never_increase_down_the_table(finishes: list[Finish]) -> None:
    ranked = [entry for _, entry in rank(finishes, "score")]
    assert [(-r.score, r.finish_ms) for r in ranked] == sorted(
        (-r.score, r.finish_ms) for r in ranked
    )


@settings(max_examples=60)
@given(finishes_strategy, st.sampled_from(["time", "score"]), st.randoms())
def test_the_table_does_not_depend_on_the_input_order(
    finishes: list[Finish], win_by: str, random: object
) -> None:
    shuffled = list(finishes)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    assert rank(shuffled, win_by) == rank(finishes, win_by)
