"""server.history: numbered match events, the newest kept for resync."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gaps_protocol.messages.events import UNNUMBERED, Presence, ReadyChanged
from server.history import History


def event(n: int = 0, *, seq: int = UNNUMBERED) -> Presence:
    """An event, told apart by ``n`` (its ``t_ms``)."""
    return Presence(match="ABCDEF", seq=seq, t_ms=n, player_id=1, connected=True)


def filled(count: int, *, max_events: int = 512) -> History:
    history = History(max_events=max_events)
    for number in range(count):
        history.append(event(number))
    return history


def test_a_new_history_has_seen_no_event() -> None:
    assert History().last_seq == 0


def test_events_are_numbered_one_two_three() -> None:
    history = History()
    assert [history.append(event()).seq for _ in range(3)] == [1, 2, 3]
    assert history.last_seq == 3


def test_append_numbers_a_copy_of_the_frozen_event_and_returns_it() -> None:
    history = History()
    first = ReadyChanged(match="ABCDEF", seq=UNNUMBERED, t_ms=5, player_id=1, ready=True)
    returned = history.append(first)
    assert returned == ReadyChanged(match="ABCDEF", seq=1, t_ms=5, player_id=1, ready=True)
    assert first.seq == UNNUMBERED  # the event as built is left whole
    assert history.since(0) == [returned]


def test_an_event_that_already_had_a_seq_gets_the_historys_number() -> None:
    history = filled(4)
    assert history.append(event(seq=99)).seq == 5


def test_since_returns_the_events_after_a_seq_in_order() -> None:
    history = filled(5)
    assert [e.seq for e in history.since(2) or []] == [3, 4, 5]
    assert [e.t_ms for e in history.since(2) or []] == [2, 3, 4]


def test_since_zero_returns_every_event_while_all_are_kept() -> None:
    assert [e.seq for e in filled(3).since(0) or []] == [1, 2, 3]


def test_since_the_last_seq_is_empty_when_up_to_date() -> None:
    history = filled(3)
    assert history.since(3) == []


def test_since_a_seq_ahead_of_the_history_is_none_it_was_given_before_a_restart() -> None:
    assert filled(3).since(10) is None
    assert History().since(1) is None


def test_since_on_an_empty_history_is_empty() -> None:
    assert History().since(0) == []


def test_the_history_keeps_only_the_newest_events() -> None:
    history = filled(10, max_events=4)
    assert history.last_seq == 10
    assert [e.seq for e in history.since(6) or []] == [7, 8, 9, 10]


def test_since_is_none_when_an_event_after_the_seq_was_evicted() -> None:
    history = filled(10, max_events=4)  # keeps 7..10
    assert history.since(5) is None
    assert history.since(0) is None


def test_since_just_before_the_oldest_kept_event_still_answers() -> None:
    history = filled(10, max_events=4)  # keeps 7..10
    assert [e.seq for e in history.since(6) or []] == [7, 8, 9, 10]
    assert [e.seq for e in history.since(9) or []] == [10]
    assert history.since(10) == []


def test_the_default_history_keeps_512_events() -> None:
    history = filled(600)
    assert [e.seq for e in history.since(88) or []] == list(range(89, 601))
    assert history.since(87) is None


def test_a_history_that_keeps_no_events_still_numbers_them() -> None:
    history = filled(3, max_events=0)
    assert history.last_seq == 3
    assert history.since(3) == []
    assert history.since(2) is None


def test_since_returns_the_same_event_objects_that_were_appended() -> None:
    history = History()
    appended = history.append(event())
    assert (history.since(0) or [None])[0] is appended


@given(st.integers(0, 60), st.integers(1, 20), st.integers(0, 70))
def test_since_is_exactly_the_missing_events_or_none_when_some_are_gone(
    count: int, max_events: int, seq: int
) -> None:
    history = filled(count, max_events=max_events)
    oldest_kept = max(1, count - max_events + 1)
    answer = history.since(seq)
    if seq > count:
        assert answer is None
    elif seq == count:
        assert answer == []
    elif seq + 1 < oldest_kept:
        assert answer is None
    else:
        assert answer is not None
        assert [e.seq for e in answer] == list(range(seq + 1, count + 1))
