"""Which results count on the boards and ratings (docs/fair-play.md). Two rules, one
after the other, for every seat of a finished rated match:

1. the bot rule (``kept_by_bot_rule``), over every seat of the match: a match with a
   declared bot in it counts for its bots only, on the bots' boards;
2. the review rule (``kept_by_review``): a seat whose review (``seat_reviews``) holds,
   voids or marks it as played while suspended does not count.

``counted_seats`` applies both. The fold as a match ends, the rebuilds and the operators'
decisions all ask this one module, so they agree."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from sqlalchemy import ColumnElement

from server.storage.models import MatchPlayer, SeatReview

HELD: Final = "held"
CLEARED: Final = "cleared"
VOIDED: Final = "voided"
SUSPENDED: Final = "suspended"
#: The statuses of a review whose result does not count.
NOT_COUNTED: Final = (HELD, VOIDED, SUSPENDED)


def kept_by_review() -> ColumnElement[bool]:
    """That a seat's review lets its result count (SQL, over ``MatchPlayer``
    outer-joined to ``SeatReview``: ``with_reviews``)."""
    return SeatReview.status.is_(None) | SeatReview.status.not_in(NOT_COUNTED)


def with_reviews(query: Any) -> Any:
    """``query`` (over ``MatchPlayer``) with each seat's review outer-joined."""
    return query.outerjoin(
        SeatReview,
        (SeatReview.match_id == MatchPlayer.match_id)
        & (SeatReview.player_id == MatchPlayer.player_id),
    )


def kept_by_bot_rule(player_ids: Collection[int], bots: Collection[int]) -> list[int]:
    """Whose results of one match the bot rule lets count: in a match with a bot in it,
    the bots' only (on the bots' boards); otherwise everyone's. A person's boards and
    ratings never count a bot, nor a game a bot played in."""
    if any(player_id in bots for player_id in player_ids):
        return [player_id for player_id in player_ids if player_id in bots]
    return list(player_ids)


def counted_seats(
    player_ids: Collection[int], *, bots: Collection[int], reviewed_out: Collection[int]
) -> list[int]:
    """Whose results of one rated match go on the boards and ratings: the bot rule over
    every seat (``player_ids``, a seat held or voided included: a game a bot played in
    stays one), less the seats whose review does not let them count (``reviewed_out``)."""
    return [
        player_id
        for player_id in kept_by_bot_rule(player_ids, bots)
        if player_id not in reviewed_out
    ]
