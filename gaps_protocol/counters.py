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


_WHOLE: Final = WHOLE_NUMBERS | WHOLE_OR_NULL
_WHOLE_OR_COUNTER: Final = _WHOLE | COUNTERS


def check_message(message: dict[str, Any]) -> None:
    """Raise ``ProtocolViolation`` if a field a client counts with is not a whole number."""
    kind = str(message.get("type", "message"))
    _check_object(message, kind, "", _WHOLE_OR_COUNTER if kind == "action_ok" else _WHOLE)


_CONTAINERS: Final = frozenset({dict, list})


# Every frame a client reads goes through here, so each object costs two scans in C (its
# keys against the counters' names, its values' types against the containers') and a
# look at each counter; only an object holding objects or lists is walked key by key.
def _check_object(value: dict[str, Any], kind: str, path: str, whole: frozenset[str]) -> None:
    for key in whole.intersection(value):
        item = value[key]
        if type(item) is not int and not (item is None and key in WHOLE_OR_NULL) and (
                not isinstance(item, int) or isinstance(item, bool)):
            _violation(kind, f"{path}.{key}" if path else str(key), item)
    if _CONTAINERS.isdisjoint(map(type, value.values())):
        return
    for key, item in value.items():
        if key in whole:
            continue
        if type(item) is dict:
            inner = _WHOLE_OR_COUNTER if key == "game" and path == "you" else _WHOLE
            _check_object(item, kind, f"{path}.{key}" if path else str(key), inner)
        elif type(item) is list:
            _check_list(item, kind, f"{path}.{key}" if path else str(key))


def _check_list(value: list[Any], kind: str, path: str) -> None:
    if _CONTAINERS.isdisjoint(map(type, value)):
        return
    for index, item in enumerate(value):
        if type(item) is dict:
            _check_object(item, kind, f"{path}[{index}]", _WHOLE)
        elif type(item) is list:
            _check_list(item, kind, f"{path}[{index}]")


def _violation(kind: str, where: str, value: Any) -> None:
    shown = repr(value)
    if len(shown) > SHOWN_AT_MOST:
        shown = shown[:SHOWN_AT_MOST - 3] + "..."
    raise ProtocolViolation(f"the server broke the protocol: in a {kind!r} message, "
                            f"{where} is {shown}, not a whole number")
