"""Boards: leaderboards, ratings, and the daily challenge (its deal and its board)."""

from __future__ import annotations

from typing import Final

from gaps_protocol.messages.replies import DailyBoard, DailyStarted, Leaderboard, Rating
from gaps_protocol.messages.requests import GetDailyBoard, GetLeaderboard, GetRating, PlayDaily
from server.handlers.context import Connection, Handler, answering
from server.matchviews import seated
from server.protocol import ruleset_of


async def leaderboard(session: Connection, request: GetLeaderboard) -> Leaderboard:
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
    return answering(request, board)


async def rating(session: Connection, request: GetRating) -> Rating:
    player = session.require_player()
    return answering(request, await session.services.reads.rating(request.name or player.name))


async def play_daily(session: Connection, request: PlayDaily) -> DailyStarted:
    player = session.require_player()
    attempt = await session.services.daily.start(
        player.id, player.name, ruleset_of(request), bot=player.bot
    )
    snapshot = await session.seat(attempt.match)
    return seated(DailyStarted, snapshot, id=request.id, daily=attempt.view())


async def daily_board(session: Connection, request: GetDailyBoard) -> DailyBoard:
    board = await session.services.reads.daily_board(ruleset_of(request).name, request.day)
    return answering(request, board)


HANDLERS: Final[dict[type, Handler]] = {
    GetLeaderboard: leaderboard,
    GetRating: rating,
    PlayDaily: play_daily,
    GetDailyBoard: daily_board,
}
