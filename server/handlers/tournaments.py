"""Tournaments: create, join, remove an entrant, start, the host's hand (reinstate,
cancel, pause, resume, announce), tables in the room (arbiters, entrants at tables,
deal sheets, the tables' results), list, standings, resync.

Every tournament runs on the cluster's leader (server/leadership.py): these requests
are sent there (``server.desk`` answers them) and the connection follows the
tournament's events on its channel."""

from __future__ import annotations

from typing import Any, Final

from server.handlers.context import Connection, Handler
from server.protocol import (
    CreateTournament,
    EnterTableResult,
    GetDealSheet,
    GetStandings,
    JoinTournament,
    ListTournaments,
    NameArbiter,
    RemoveEntrant,
    ResyncTournament,
    SetTable,
    StartTournament,
    SteerTournament,
)
from server.tournament import tournament_channel


async def create(session: Connection, request: CreateTournament) -> dict[str, Any]:
    player = session.require_player()
    created = await session.services.leadership.ask(
        "tournament_create",
        {
            "host_id": player.id,
            "name": request.name,
            "ruleset": request.ruleset.name,
            "rounds": request.rounds,
            "max_players": request.max_players,
            "round_time_limit_s": request.round_time_limit_s,
            "start_at": request.start_at.isoformat() if request.start_at else None,
            "bots": request.bots,
            "if_empty": request.if_empty,
            "deals": request.deals,
            "countdown_s": request.countdown_s,
            "break_s": request.break_s,
            "late_entry_until_round": request.late_entry_until_round,
        },
    )
    await session.follow(tournament_channel(created["tournament"]["code"]))
    return {"type": "tournament", **created}


async def join(session: Connection, request: JoinTournament) -> dict[str, Any]:
    player = session.require_player()
    # Followed first: what is published from now on comes after the reply.
    await _follow(session, request.code)
    joined = await session.services.leadership.ask(
        "tournament_join",
        {"code": request.code, "player_id": player.id, "name": player.name, "bot": player.bot},
    )
    return {"type": "tournament", **joined}


async def remove(session: Connection, request: RemoveEntrant) -> dict[str, Any]:
    player = session.require_player()
    answer = await session.services.leadership.ask(
        "tournament_remove",
        {"code": request.code, "player_id": player.id, "player": request.player,
         "reason": request.reason},
    )
    return {"type": "tournament", **answer}


async def steer(session: Connection, request: SteerTournament) -> dict[str, Any]:
    player = session.require_player()
    answer = await session.services.leadership.ask(
        "tournament_steer",
        {"code": request.code, "player_id": player.id, "what": request.what,
         "reason": request.reason, "text": request.text, "player": request.player},
    )
    return {"type": "tournament", **answer}


async def name_arbiter(session: Connection, request: NameArbiter) -> dict[str, Any]:
    session.require_player()
    arbiter_id, name = await session.services.reads.player_named(request.player)
    return await _steer_tables(session, request.code, "arbiter", arbiter_id=arbiter_id,
                               player=name)


async def set_table(session: Connection, request: SetTable) -> dict[str, Any]:
    session.require_player()
    return await _steer_tables(session, request.code, "table", player=request.player,
                               at_table=request.at_table)


async def enter_result(session: Connection, request: EnterTableResult) -> dict[str, Any]:
    session.require_player()
    answer = await _steer_tables(
        session, request.code, "enter_result", round=request.round, player=request.player,
        placed=request.placed, redeals=request.redeals, finish_ms=request.finish_ms,
        won=request.won,
    )
    return {**answer, "type": "standings"}


async def _steer_tables(session: Connection, code: str, what: str, **args: Any) -> dict[str, Any]:
    player = session.require_player()
    answer = await session.services.leadership.ask(
        "tournament_steer", {"code": code, "player_id": player.id, "what": what, **args}
    )
    return {"type": "tournament", **answer}


async def deal_sheet(session: Connection, request: GetDealSheet) -> dict[str, Any]:
    player = session.require_player()
    return dict(
        await session.services.leadership.ask(
            "tournament_deal_sheet",
            {"code": request.code, "player_id": player.id, "round": request.round},
        )
    )


async def start(session: Connection, request: StartTournament) -> dict[str, Any]:
    player = session.require_player()
    started = await session.services.leadership.ask(
        "tournament_start", {"code": request.code, "player_id": player.id}
    )
    return {"type": "tournament", **started}


async def listed(session: Connection, request: ListTournaments) -> dict[str, Any]:
    return {"type": "tournaments", **await session.services.reads.tournaments(request.status)}


async def standings(session: Connection, request: GetStandings) -> dict[str, Any]:
    return {"type": "standings", **await session.services.reads.tournament_standings(request.code)}


async def resync(session: Connection, request: ResyncTournament) -> dict[str, Any]:
    await _follow(session, request.code)
    return dict(
        await session.services.leadership.ask(
            "tournament_resync", {"code": request.code, "since": request.since}
        )
    )


async def _follow(session: Connection, code: str) -> str:
    """Follow tournament ``code``'s events on this connection; its channel."""
    stored = await session.services.leadership.ask("tournament_code", {"code": code})
    channel = tournament_channel(stored)
    await session.follow(channel)
    return channel


HANDLERS: Final[dict[type, Handler]] = {
    CreateTournament: create,
    JoinTournament: join,
    RemoveEntrant: remove,
    StartTournament: start,
    SteerTournament: steer,
    NameArbiter: name_arbiter,
    SetTable: set_table,
    EnterTableResult: enter_result,
    GetDealSheet: deal_sheet,
    ListTournaments: listed,
    GetStandings: standings,
    ResyncTournament: resync,
}
