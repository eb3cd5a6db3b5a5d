"""Ratings: moved to ``server.storage.ratings`` (the ratings repository).

These names stay importable from here until every caller imports them from there.
"""

from server.storage.ratings import (
    MODEL,
    PROVISIONAL_GAMES,
    Ratings,
    changes_of_match,
    lock_ratings,
    rating_of,
    update_ratings,
    view,
)

__all__ = [
    "MODEL",
    "PROVISIONAL_GAMES",
    "Ratings",
    "changes_of_match",
    "lock_ratings",
    "rating_of",
    "update_ratings",
    "view",
]
