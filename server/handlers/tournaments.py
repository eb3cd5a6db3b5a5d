"""Tournaments: create, join, remove an entrant, start, the host's hand (reinstate,
cancel, pause, resume, announce), tables in the room (arbiters, entrants at tables,
deal sheets, the tables' results), list, standings, resync.

Every tournament runs on the cluster's leader (server/leadership.py): these requests
are sent there as they came, typed (``server.desk`` answers them), with who asks, and
the connection follows the tournament's events on its channel."""

from __future__ import annotations

from typing import Final

import msgspec

from gaps_protocol.messages import ServerReply
from gaps_protocol.messages.replies import (
    DealSheet,
    Standings,
    Tournament,
    TournamentEvents,
)
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
from server.handlers.context import Connection, Handler, R, answering
from server.relaymessages import TournamentCode, TournamentRequest
from server.tournament import tournament_channel


async def create(session: Connection, request: CreateTournament) -> ServerReply:
    created = await _ask(session, request, Tournament)
    await session.follow(tournament_channel(created.tournament.code))
    return created


async def join(session: Connection, request: JoinTournament) -> ServerReply:
    # Followed first: what is published from now on comes after the reply.
    await _follow(session, request.code)
    return await _ask(session, request, Tournament)


async def name_arbiter(session: Connection, request: NameArbiter) -> ServerReply:
    session.require_player()
    arbiter = await session.services.reads.player_named(request.player)
    return await _ask(session, request, Tournament, arbiter=arbiter)


async def steer(session: Connection, request: TournamentRequest) -> ServerReply:
    """The host's (or an arbiter's) hand: the tournament's view and standings back."""
    return await _ask(session, request, Tournament)


async def enter_result(session: Connection, request: EnterTableResult) -> ServerReply:
    return await _ask(session, request, Standings)


async def deal_sheet(session: Connection, request: GetDealSheet) -> ServerReply:
    return await _ask(session, request, DealSheet)


async def listed(session: Connection, request: ListTournaments) -> ServerReply:
    return answering(request, await session.services.reads.tournaments(request.status))


async def standings(session: Connection, request: GetStandings) -> ServerReply:
    return answering(request, await session.services.reads.tournament_standings(request.code))


async def resync(session: Connection, request: ResyncTournament) -> ServerReply:
    await _follow(session, request.code)
    return await _ask(session, request, TournamentEvents | Tournament)  # type: ignore[arg-type]  # a union


async def _ask(
    session: Connection,
    request: TournamentRequest,
    kind: type[R],
    arbiter: tuple[int, str] | None = None,
) -> R:
    """The leader's answer to ``request`` of this connection's player, the reply
    ``kind``: typed again if it crossed the relay (as JSON), with the request's id."""
    answer = await ask_desk(
        session.services.leadership, request, session.require_player(), arbiter=arbiter
    )
    return answering(request, msgspec.convert(answer, kind))


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
