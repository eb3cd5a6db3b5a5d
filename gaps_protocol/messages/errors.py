"""The refusal: ``{"type": "error", "id", "code", "message", ...}`` and its codes, in the
order of docs/protocol.md's table (a test checks that the table, the server's own list
and every code the server raises agree with ``ERROR_CODES``)."""

from __future__ import annotations

from typing import Annotated, Final, Literal, TypeGuard, get_args

import msgspec

from gaps_protocol.messages.common import BotRefuser, Message, RequestId, Time

ErrorCode = Literal[
    "bad_json", "bad_message", "unknown_type", "not_authenticated", "already_authenticated",
    "bad_token", "bad_name", "name_taken", "no_such_match", "match_unavailable",
    "match_full", "not_in_match", "not_host", "not_a_player", "already_started",
    "not_started", "match_finished", "game_over", "illegal_action", "stale_seq",
    "not_finished", "no_such_tournament", "tournament_full", "bots_not_allowed",
    "deals_not_ready", "round_in_play", "not_an_entrant", "not_removed", "late_entry_closed",
    "not_running", "already_paused", "not_paused", "not_arbiter", "round_not_started",
    "not_at_table", "tournament_finished", "removed",
    "daily_already_played", "no_such_player", "no_such_resource", "storage_unavailable",
    "shutting_down", "not_watchable", "too_many_matches", "broker_unavailable",
    "rate_limited", "method_not_allowed", "not_operator", "no_such_result",
    "already_decided", "internal_error",
]
ERROR_CODES: Final[tuple[str, ...]] = get_args(ErrorCode)


def is_error_code(code: str) -> TypeGuard[ErrorCode]:
    """Whether ``code`` is one of the protocol's error codes (a newer peer may send
    another)."""
    return code in ERROR_CODES


class Error(Message, tag_field="type", tag="error", kw_only=True, frozen=True):
    """A refused request (it changed nothing). ``code`` is stable; ``message`` is for
    people. The other members come with some codes only."""

    #: The request's id (null when the id itself was wrong, or over HTTP).
    id: RequestId
    code: ErrorCode
    message: str
    #: ``bad_message``: the request's field that was wrong.
    field: str | msgspec.UnsetType = msgspec.UNSET
    #: ``illegal_action``: the engine's reason; ``tournament_finished`` (cancelled): why;
    #: ``removed``: the host's reason.
    reason: str | None | msgspec.UnsetType = msgspec.UNSET
    #: ``bots_not_allowed``: who said no.
    refused_by: BotRefuser | msgspec.UnsetType = msgspec.UNSET
    #: ``match_finished`` (``finished``, ``abandoned``), ``tournament_finished``
    #: (``finished``, ``cancelled``), ``not_running`` (the tournament's status).
    status: str | msgspec.UnsetType = msgspec.UNSET
    #: ``rate_limited``, ``match_unavailable``, ``deals_not_ready``: when to try again.
    retry_after_ms: Annotated[int, msgspec.Meta(ge=1)] | msgspec.UnsetType = msgspec.UNSET
    #: ``too_many_matches``: how many lobby matches one player may host.
    limit: int | msgspec.UnsetType = msgspec.UNSET
    #: ``round_in_play``: the round being played; ``round_not_started``,
    #: ``not_at_table``: the round asked for.
    round: int | msgspec.UnsetType = msgspec.UNSET
    #: ``round_not_started``: when the round's play begins (null: not dealt yet).
    starts_at: Time | None | msgspec.UnsetType = msgspec.UNSET
    #: ``not_an_entrant``: the name asked for; ``not_removed``: the entrant's name;
    #: ``not_at_table``: the entrant's.
    player: str | msgspec.UnsetType = msgspec.UNSET
    #: ``late_entry_closed``: the round until which the tournament took late entrants.
    late_entry_until_round: int | msgspec.UnsetType = msgspec.UNSET
