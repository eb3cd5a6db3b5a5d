"""A server's refusal in the words of the person who typed the command.

The server names what it refused in the protocol's terms (``field 'time_limit_s' must be
an integer from 1 to 86400, got 90000``): the client checks its options before sending
(``client_cli.arguments``), but a server may have other limits. ``refusal_words`` says
which option it was and its limits in the option's own units (``--time: the time limit
is 1 second to 24 hours``), and how long to wait when the server is busy; any other
refusal is the server's own message, which is written for people.
"""

from __future__ import annotations

import re
from typing import Final

from client_cli.arguments import spoken_duration
from client_cli.connection import ClientError, ServerRefused
from client_cli.render import printable

#: A request field (docs/protocol.md) -> the option that sets it, what it is, and
#: whether it counts seconds.
FIELDS: Final = {
    "time_limit_s": ("--time", "the time limit", True),
    "round_time_limit_s": ("--round-time", "a round's time limit", True),
    "countdown_s": ("--countdown", "the countdown", True),
    "max_players": ("--players", "the number of players", False),
    "rounds": ("--rounds", "the number of rounds", False),
    "limit": ("--limit", "the rows per page", False),
    "name": ("--name", "a tournament's name", False),
    "reason": ("--reason", "the reason", False),
    "start_at": ("--start-at", "the start", False),
    "day": ("--day", "the day", False),
    "seed": ("--seed", "the deal's share code", False),
}
#: The protocol's words for a number out of range.
RANGE: Final = re.compile(r"must be an integer from (\d+) to (\d+)")
#: What follows "must be" in a refusal of a field.
EXPECTED: Final = re.compile(r"must be (.+?)(?:, got .*)?$")


def refusal_words(refusal: ServerRefused) -> str:
    """What ``refusal`` means for the person who asked, in one line."""
    if refusal.code == "bad_message" and refusal.field in FIELDS:
        option, what, seconds = FIELDS[refusal.field]
        bounds = RANGE.search(refusal.message)
        if bounds is not None:
            low, high = int(bounds[1]), int(bounds[2])
            shown = ((spoken_duration(low), spoken_duration(high)) if seconds
                     else (str(low), str(high)))
            return f"the server refused {option}: {what} is {shown[0]} to {shown[1]} there"
        expected = EXPECTED.search(refusal.message)
        if expected is not None:
            return f"the server refused {option}: {what} must be {printable(expected[1])}"
        return f"the server refused {option}: {printable(refusal.message)}"
    if refusal.code == "rate_limited":
        after_ms = refusal.reply.retry_after_ms
        wait = (f"try again in {max(1, round(after_ms / 1000))} s"
                if isinstance(after_ms, int) else "try again in a moment")
        return f"the server is busy (too many requests from you): {wait}"
    return printable(str(refusal))


def error_words(error: ClientError) -> str:
    """A failure to talk to the server, in one line: a refusal in ``refusal_words``."""
    return refusal_words(error) if isinstance(error, ServerRefused) else printable(str(error))
