"""Operators' requests: the results held for review, decisions on them, suspensions and
the audit log (docs/fair-play.md). Anyone but an operator is refused."""

from __future__ import annotations

import logging
from typing import Final

from gaps_protocol.messages.replies import AuditLog, Ok, Reviews
from gaps_protocol.messages.requests import (
    ClearReview,
    GetAuditLog,
    ListReviews,
    Suspend,
    VoidReview,
)
from server.errors import ServerError
from server.handlers.context import Connection, Handler, from_document

log = logging.getLogger("gaps.server")


async def operate(
    session: Connection, request: ListReviews | ClearReview | VoidReview | Suspend | GetAuditLog
) -> Reviews | AuditLog | Ok:
    player = session.require_player()
    services = session.services
    if not services.is_operator(player.name):
        raise ServerError("not_operator", f"{player.name} is not an operator of this server")
    reviews = services.store.reviews
    now = services.clock.now()
    match request:
        case ListReviews():
            return from_document(Reviews, request, {"reviews": await reviews.held()})
        case ClearReview(code=code, name=name, reason=reason):
            await reviews.clear(code=code, name=name, operator=player.name, reason=reason, at=now)
        case VoidReview(code=code, name=name, reason=reason):
            await reviews.void(code=code, name=name, operator=player.name, reason=reason, at=now)
        case Suspend(name=name, reason=reason):
            await reviews.suspend(name=name, operator=player.name, reason=reason, at=now)
        case GetAuditLog():
            entries = [entry.to_json() for entry in await reviews.audit_log()]
            return from_document(AuditLog, request, {"entries": entries})
    log.info(
        "operator decision", extra={"operator": player.name, "request": type(request).__name__}
    )
    return Ok(id=request.id)


HANDLERS: Final[dict[type, Handler]] = {
    ListReviews: operate,
    ClearReview: operate,
    VoidReview: operate,
    Suspend: operate,
    GetAuditLog: operate,
}
