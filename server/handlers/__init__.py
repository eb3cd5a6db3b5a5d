"""The handlers of client requests, one small module per noun: accounts, matches,
tournaments, quick match, boards (leaderboards, ratings, the daily challenge) and
operators. ``dispatch`` hands a parsed request to its handler; each handler takes the
session and the request and returns the reply's fields."""

from __future__ import annotations

from typing import Final

from gaps_protocol.messages import ServerReply, requests
from server.handlers import accounts, boards, matches, operators, quick, tournaments
from server.handlers.context import Connection, Handler

#: Every request's handler, by the request's type.
HANDLERS: Final[dict[type, Handler]] = {
    **accounts.HANDLERS,
    **matches.HANDLERS,
    **tournaments.HANDLERS,
    **quick.HANDLERS,
    **boards.HANDLERS,
    **operators.HANDLERS,
}

#: Requests that cost the server a database round trip or a large reply: each also
#: takes from the player's and the address's budget of costly requests.
COSTLY_REQUESTS: Final = (
    requests.Register,
    requests.Hello,
    requests.CreateMatch,
    requests.Rematch,
    requests.CreateTournament,
    requests.GetReplay,
    requests.GetLeaderboard,
    requests.GetRating,
    requests.GetDailyBoard,
    requests.GetStandings,
)

__all__ = ["COSTLY_REQUESTS", "HANDLERS", "dispatch", "quick"]


async def dispatch(session: Connection, request: requests.ClientMessage) -> ServerReply:
    """The reply to ``request`` (every request but the account's needs a
    player: ``not_authenticated`` before)."""
    handler = HANDLERS.get(type(request))
    if handler is None:
        raise AssertionError(f"no handler for {type(request).__name__}")
    if type(request) not in accounts.HANDLERS:
        session.require_player()
    return await handler(session, request)
