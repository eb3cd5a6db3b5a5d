"""Which results count on the boards and ratings: every seat of a finished rated match,
but those whose review (``seat_reviews``) holds, voids or marks them as played while
suspended. The fold as a match ends, the rebuilds and the operators' decisions all ask
this one module."""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import ColumnElement

from server.storage.models import MatchPlayer, SeatReview

HELD: Final = "held"
CLEARED: Final = "cleared"
VOIDED: Final = "voided"
SUSPENDED: Final = "suspended"
#: The statuses of a review whose result does not count.
NOT_COUNTED: Final = (HELD, VOIDED, SUSPENDED)


def counted() -> ColumnElement[bool]:
    """That a seat (``MatchPlayer`` outer-joined to ``SeatReview``: ``with_reviews``)
    counts."""
    return SeatReview.status.is_(None) | SeatReview.status.not_in(NOT_COUNTED)


def with_reviews(query: Any) -> Any:
    """``query`` (over ``MatchPlayer``) with each seat's review outer-joined."""
    return query.outerjoin(
        SeatReview,
        (SeatReview.match_id == MatchPlayer.match_id)
        & (SeatReview.player_id == MatchPlayer.player_id),
    )
