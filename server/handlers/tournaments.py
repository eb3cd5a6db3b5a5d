"""Tournaments: create, join, remove an entrant, start, the host's hand (reinstate,
cancel, pause, resume, announce), tables in the room (arbiters, entrants at tables,
deal sheets, the tables' results), list, standings, resync.

Every tournament runs on the cluster's leader (server/leadership.py): these requests
are sent there as they came, typed (``server.desk`` answers them), with who asks, and
the connection follows the tournament's events on its channel."""

from __future__ import annotations

from typing import Any, Final

from gaps_protocol.messages.requests import (
    Announce,
    CancelTournament,
    CreateTournament,
    EnterTableResult,
    GetDealSheet,
    GetStandings,
    JoinTournament,
    ListTournaments,
    NameArbiter,
    PauseTournament,
    ReinstateEntrant,
    RemoveEntrant,
    ResumeTournament,
    ResyncTournament,
    SetTable,
    StartTournament,
)
from server.desk import ask_desk
from server.handlers.context import Connection, Handler
from server.relaymessages import TournamentCode, TournamentRequest
from server.tournament import tournament_channel


async def create(session: Connection, request: CreateTournament) -> dict[str, Any]:
    created = await _ask(session, request)
    await session.follow(tournament_channel(created["tournament"]["code"]))
    return {"type": "tournament", **created}


async def join(session: Connection, request: JoinTournament) -> dict[str, Any]:
    # Followed first: what is published from now on comes after the reply.
    await _follow(session, request.code)
    return {"type": "tournament", **await _ask(session, request)}


async def name_arbiter(session: Connection, request: NameArbiter) -> dict[str, Any]:
    session.require_player()
    arbiter = await session.services.reads.player_named(request.player)
    return {"type": "tournament", **await _ask(session, request, arbiter=arbiter)}


async def steer(session: Connection, request: TournamentRequest) -> dict[str, Any]:
    """The host's (or an arbiter's) hand: the tournament's view and standings back."""
    return {"type": "tournament", **await _ask(session, request)}


async def enter_result(session: Connection, request: EnterTableResult) -> dict[str, Any]:
    return {**await _ask(session, request), "type": "standings"}


async def deal_sheet(session: Connection, request: GetDealSheet) -> dict[str, Any]:
    return dict(await _ask(session, request))


async def listed(session: Connection, request: ListTournaments) -> dict[str, Any]:
    return {"type": "tournaments", **await session.services.reads.tournaments(request.status)}


async def standings(session: Connection, request: GetStandings) -> dict[str, Any]:
    return {"type": "standings", **await session.services.reads.tournament_standings(request.code)}


async def resync(session: Connection, request: ResyncTournament) -> dict[str, Any]:
    await _follow(session, request.code)
    return dict(await _ask(session, request))


async def _ask(
    session: Connection, request: TournamentRequest, arbiter: tuple[int, str] | None = None
) -> Any:
    """The leader's answer to ``request`` of this connection's player."""
    return await ask_desk(
        session.services.leadership, request, session.require_player(), arbiter=arbiter
    )


async def _follow(session: Connection, code: str) -> str:
    """Follow tournament ``code``'s events on this connection; its channel."""
    stored = await session.services.leadership.ask(TournamentCode(code=code))
    channel = tournament_channel(stored)
    await session.follow(channel)
    return channel


HANDLERS: Final[dict[type, Handler]] = {
    CreateTournament: create,
    JoinTournament: join,
    RemoveEntrant: steer,
    StartTournament: steer,
    ReinstateEntrant: steer,
    CancelTournament: steer,
    PauseTournament: steer,
    ResumeTournament: steer,
    Announce: steer,
    NameArbiter: name_arbiter,
    SetTable: steer,
    EnterTableResult: enter_result,
    GetDealSheet: deal_sheet,
    ListTournaments: listed,
    GetStandings: standings,
    ResyncTournament: resync,
}
