"""Quick match: queue, cancel, and the ``matched`` message a queued player gets.

The queue runs on the cluster's leader (``server.matchmaker``). A queued connection
says every few seconds that its player still waits, with the ticket of their request:
the queue forgets players nobody asks for, and a new leader's queue starts empty.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Final

from gaps_protocol.messages.replies import Matched, Ok, Queued
from gaps_protocol.messages.requests import CancelQuickMatch, QuickMatch
from server import relaymessages as leader
from server.broker import BrokerUnavailable
from server.errors import ServerError, bots_not_allowed
from server.handlers.context import Connection, Handler
from server.matchviews import seated
from server.protocol import ruleset_of
from server.remote import MatchHandle

log = logging.getLogger("gaps.server")


async def queue(session: Connection, request: QuickMatch) -> Queued:
    player = session.require_player()
    services = session.services
    if player.bot and not services.settings.quick_match_bots:
        raise bots_not_allowed(
            "quick match is for people on this server: bots may not queue",
            refused_by="quick_match",
        )
    ruleset = ruleset_of(request).name
    ticket = secrets.token_hex(8)
    waiting = await _enqueue(session, ruleset, ticket, waited_s=0.0)
    session.queued = (ruleset, ticket, services.clock.monotonic())
    if session.requeueing is None:
        session.requeueing = asyncio.create_task(_stay_queued(session))
    return Queued(id=request.id, ruleset=ruleset, waiting=waiting or 0)


async def cancel(session: Connection, request: CancelQuickMatch) -> Ok:
    player = session.require_player()
    _leave_queue(session)
    cancelled = await session.services.leadership.ask(leader.CancelQuickMatch(player_id=player.id))
    return Ok(id=request.id, cancelled=bool(cancelled))


async def matched(session: Connection, match: MatchHandle) -> None:
    """The queue seated this connection's player in ``match``: say so, unasked, with the
    match's snapshot."""
    _leave_queue(session)
    await session.send_then_forward(seated(Matched, await session.seat(match)))


async def forget(session: Connection) -> None:
    """The connection closed: its player leaves the queue (if the leader cannot be
    reached, the queue forgets players nobody asks for)."""
    if session.queued is None or session.player is None:
        return
    _leave_queue(session)
    try:
        await session.services.leadership.ask(
            leader.CancelQuickMatch(player_id=session.player.id)
        )
    except (ServerError, BrokerUnavailable):
        pass


async def _enqueue(
    session: Connection, ruleset: str, ticket: str, *, waited_s: float
) -> int | None:
    player = session.require_player()
    waiting = await session.services.leadership.ask(
        leader.EnqueueQuickMatch(
            ruleset=ruleset, player_id=player.id, name=player.name, ticket=ticket,
            waited_s=waited_s, bot=player.bot,
        )
    )
    return None if waiting is None else int(waiting)


async def _stay_queued(session: Connection) -> None:
    """Say every few seconds that the player still waits."""
    clock = session.services.clock
    while session.queued is not None:
        await clock.sleep(session.services.settings.lease_renew_s)
        if session.queued is None:
            break
        ruleset, ticket, since = session.queued
        try:
            waiting = await _enqueue(session, ruleset, ticket, waited_s=clock.monotonic() - since)
        except (ServerError, BrokerUnavailable) as error:  # the leader changes: again
            log.info("quick match queue not reached", extra={"error": str(error)})
            continue
        if waiting is None:  # grouped (``matched`` is on its way), or asked for anew
            _leave_queue(session)


def _leave_queue(session: Connection) -> None:
    session.queued = None
    if session.requeueing is not None:
        if session.requeueing is not asyncio.current_task():
            session.requeueing.cancel()
        session.requeueing = None


HANDLERS: Final[dict[type, Handler]] = {QuickMatch: queue, CancelQuickMatch: cancel}
