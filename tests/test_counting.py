"""Which results count (server/storage/counting.py): the bot rule over every seat, then
the review rule."""

from __future__ import annotations

import pytest

from server.storage.counting import counted_seats, kept_by_bot_rule

#: The storage is what these tests check: on PostgreSQL and on SQLite.
pytestmark = pytest.mark.both_backends


def test_a_match_with_a_bot_in_it_counts_for_its_bots_only() -> None:
    assert kept_by_bot_rule([1, 2, 3], bots=set()) == [1, 2, 3]
    assert kept_by_bot_rule([1, 2, 3], bots={2}) == [2]
    assert kept_by_bot_rule([1, 2, 3], bots={2, 3, 9}) == [2, 3]
    assert kept_by_bot_rule([4], bots={4}) == [4]
    assert kept_by_bot_rule([], bots={4}) == []


def test_a_seat_whose_review_keeps_it_out_does_not_count() -> None:
    assert counted_seats([1, 2, 3], bots=set(), reviewed_out={2}) == [1, 3]
    assert counted_seats([1, 2, 3], bots={3}, reviewed_out=set()) == [3]
    assert counted_seats([1, 2, 3], bots={2, 3}, reviewed_out={3}) == [2]


def test_a_game_a_bot_played_in_stays_one_when_the_bots_result_is_kept_out() -> None:
    # The bot rule looks at every seat: a held or voided bot does not hand its match to
    # the people's boards.
    assert counted_seats([1, 2], bots={2}, reviewed_out={2}) == []
    assert counted_seats([1, 2, 3], bots={3}, reviewed_out={3}) == []
