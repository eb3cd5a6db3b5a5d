"""Re-exports gaps.ranking; goes once server/match.py imports gaps.ranking itself."""

from gaps.ranking import Finish, rank

__all__ = ["Finish", "rank"]
