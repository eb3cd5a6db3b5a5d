"""The server's errors: each carries a stable code that goes on the wire as is."""

from __future__ import annotations

from typing import Final

from gaps_protocol.messages.errors import ErrorCode

#: Every error code a client can receive, with what it means (docs/protocol.md lists them).
ERROR_CODES: Final[dict[str, str]] = {
    "bad_json": "the frame is not one strict JSON object of at most 4096 bytes",
    "bad_message": "a field is missing, of the wrong type or out of range",
    "unknown_type": "the message type is not one the server knows",
    "not_authenticated": "send hello (or register) first",
    "already_authenticated": "this connection is already someone's",
    "bad_token": "no player has this token (exactly as sent)",
    "bad_name": "a display name is 2-24 letters, digits, '_', '-' or '.', from a letter or digit",
    "name_taken": "another player has this display name, in some case",
    "no_such_match": "no match has this code (or id)",
    "match_unavailable": "the match is stored but no process serves it right now: retry",
    "match_full": "the match has all the players it takes",
    "not_in_match": "join the match first",
    "not_host": "only the host may do this",
    "not_a_player": "spectators watch; they do not play",
    "already_started": "the match has started: players can no longer join or ready",
    "not_started": "the match has not started yet",
    "match_finished": "the match is over",
    "game_over": "your game in this match has ended",
    "illegal_action": "the rules refuse this action; `reason` says why (docs/rules.md)",
    "stale_seq": "this action seq is older than the last one applied and not cached",
    "not_finished": "the replay of a match is published when it ends",
    "no_such_tournament": "no tournament has this code",
    "tournament_full": "the tournament has all the entrants it takes",
    "bots_not_allowed": "a declared bot may not sit here; `refused_by` says who said no",
    "round_in_play": "a round is being played: entrants are removed between rounds",
    "tournament_finished": "the tournament is over (finished or cancelled: `status` says which)",
    "removed": "the host removed you from this tournament; `reason` says why",
    "not_an_entrant": "this player is not (or no longer) in the tournament",
    "not_removed": "the entrant is in the tournament: only a removed one is reinstated",
    "late_entry_closed": "the tournament took late entrants until round "
    "`late_entry_until_round` was dealt; that round has passed",
    "not_running": "only a running tournament is paused or resumed; `status` says what it is",
    "already_paused": "the tournament is paused already",
    "not_paused": "the tournament is not paused: nothing to resume",
    "not_arbiter": "only the tournament's host or an arbiter they named may do this",
    "round_not_started": "the round's play has not begun (`starts_at` says when, null if it "
    "is not dealt yet): its deal sheet and its tables' results come after",
    "not_at_table": "this entrant did not play that round at a table: only a table's "
    "result is entered",
    "deals_not_ready": "the deals are not drawn yet (a tournament's winnable deals, a "
    "daily challenge's): retry in a moment",
    "daily_already_played": "you have played today's challenge in this ruleset",
    "no_such_player": "no player has this name",
    "no_such_resource": "(HTTP) nothing is at this path",
    "storage_unavailable": "the action could not be stored; it was not applied, retry",
    "not_watchable": "a daily challenge is watched by its own player only, until its day is over",
    "too_many_matches": "you host as many open lobby matches as a player may",
    "broker_unavailable": "the link between server processes is down; retry",
    "rate_limited": "too many requests: wait `retry_after_ms` before the next one",
    "method_not_allowed": "(HTTP) only GET is served",
    "shutting_down": "the server is stopping; the match resumes once it is back: retry then",
    "not_operator": "only an operator of this server (its --operators) may do this",
    "no_such_result": "the player has no result in a finished rated match of this code",
    "already_decided": "clear takes a held result only; a result is voided, an account "
    "suspended, once",
    "internal_error": "a bug on the server; the connection stays usable",
}


class ServerError(Exception):
    """A refusal to send to the client as ``{type: "error", code, message}``."""

    def __init__(self, code: ErrorCode, message: str, **details: object) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


#: What may refuse a declared bot a seat (``bots_not_allowed``'s ``refused_by``).
BOT_REFUSERS: Final = ("match", "tournament", "quick_match", "daily")


def bots_not_allowed(message: str, *, refused_by: str) -> ServerError:
    """The refusal of a declared bot's seat; ``refused_by`` is one of ``BOT_REFUSERS``."""
    assert refused_by in BOT_REFUSERS, refused_by
    return ServerError("bots_not_allowed", message, refused_by=refused_by)
