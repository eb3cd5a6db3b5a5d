"""Boards: leaderboards, ratings, and the daily challenge (its deal and its board)."""

from __future__ import annotations

from typing import Any, Final

from gaps_protocol.messages.requests import GetDailyBoard, GetLeaderboard, GetRating, PlayDaily
from server.handlers.context import Connection, Handler
from server.protocol import ruleset_of


async def leaderboard(session: Connection, request: GetLeaderboard) -> dict[str, Any]:
    player = session.require_player()
    board = await session.services.reads.leaderboard(
        ruleset=ruleset_of(request).name,
        by=request.by,
        period=request.period,
        day=request.day,
        cursor=request.cursor,
        limit=request.limit,
        around_player=player.id if request.around_me else None,
        kind=request.kind,
    )
    return {"type": "leaderboard", **board}


async def rating(session: Connection, request: GetRating) -> dict[str, Any]:
    player = session.require_player()
    return {"type": "rating", **await session.services.reads.rating(request.name or player.name)}


async def play_daily(session: Connection, request: PlayDaily) -> dict[str, Any]:
    player = session.require_player()
    attempt = await session.services.daily.start(
        player.id, player.name, ruleset_of(request), bot=player.bot
    )
    return {"type": "daily_started", **await session.seat(attempt.match), "daily": attempt.view()}


async def daily_board(session: Connection, request: GetDailyBoard) -> dict[str, Any]:
    board = await session.services.reads.daily_board(ruleset_of(request).name, request.day)
    return {"type": "daily_board", **board}


HANDLERS: Final[dict[type, Handler]] = {
    GetLeaderboard: leaderboard,
    GetRating: rating,
    PlayDaily: play_daily,
    GetDailyBoard: daily_board,
}
