"""Leaderboards: moved to ``server.storage.boards`` (the boards repository).

These names stay importable from here until every caller imports them from there.
"""

from server.storage.boards import (
    ALL_TIME,
    BOARDS,
    MAX_RANK,
    PERIODS,
    Board,
    Boards,
    Result,
    around,
    board_named,
    decode_cursor,
    encode_cursor,
    page,
    period_start,
    rebuild,
    record_results,
)

__all__ = [
    "ALL_TIME",
    "BOARDS",
    "MAX_RANK",
    "PERIODS",
    "Board",
    "Boards",
    "Result",
    "around",
    "board_named",
    "decode_cursor",
    "encode_cursor",
    "page",
    "period_start",
    "rebuild",
    "record_results",
]
