"""The counters a client counts with: whole numbers, or the message breaks the protocol.

What a client only shows (names, a player's score in a table) is shown as sent; what it
counts with is checked here, once, so that a malformed message is a clear error naming
the field rather than a crash wherever the number is used."""

from __future__ import annotations

from typing import Any, Final

#: Fields a client counts with (``int``), wherever they come in a message: whole numbers.
WHOLE_NUMBERS: Final = frozenset({
    "seq", "last_seq", "player_id", "placed", "round", "rounds", "current_round",
    "rounds_played", "time_limit_s", "round_time_limit_s", "countdown_s", "countdown_ms",
    "t_ms", "spectators", "waiting", "wins", "games",
})
#: Whole numbers that may be null (a board's ``rank`` when you have no row).
WHOLE_OR_NULL: Final = frozenset({"rank"})
#: The counters of your own game (``action_ok`` and a snapshot's ``you.game``): whole numbers.
COUNTERS: Final = frozenset({"score", "placed", "redeals_used", "redeals_left", "moves_made"})
#: How much of a wrong value an error message quotes.
SHOWN_AT_MOST: Final = 40


class ProtocolViolation(ValueError):
    """The server sent what the protocol does not allow; the message names the field."""


def check_message(message: dict[str, Any]) -> None:
    """Raise ``ProtocolViolation`` if a field a client counts with is not a whole number."""
    kind = str(message.get("type", "message"))
    _check_fields(message, kind, "", counters=kind == "action_ok")


def _check_fields(value: Any, kind: str, path: str, *, counters: bool) -> None:
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_fields(item, kind, f"{path}[{index}]", counters=False)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        whole = key in WHOLE_NUMBERS or (counters and key in COUNTERS) or (
            key in WHOLE_OR_NULL and item is not None)
        if whole and (not isinstance(item, int) or isinstance(item, bool)):
            shown = repr(item)
            if len(shown) > SHOWN_AT_MOST:
                shown = shown[:SHOWN_AT_MOST - 3] + "..."
            raise ProtocolViolation(f"the server broke the protocol: in a {kind!r} message, "
                                    f"{where} is {shown}, not a whole number")
        _check_fields(item, kind, where, counters=key == "game" and path == "you")
