"""The one form of an instant on the wire: RFC 3339, in UTC, to the millisecond, with ``Z``.

``2026-12-02T09:22:45.123Z``: every time the server writes (in a reply, an event, an HTTP
read, an export, an error's message) and every time a client sends is in this form, and
``parse_time`` reads it back. The form is the one JavaScript's ``Date.toISOString()``
writes, so the web page reads and writes it without a library; every string of it has the
same length, so sorting the strings sorts the instants. A calendar day is RFC 3339's
full-date, ``2026-12-02`` (``date.isoformat()``); the iCalendar export keeps RFC 5545's own
form. Pure: no I/O, and no clock (the server's is ``server.clock``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

#: An instant as the protocol writes it (see the module's docstring).
EXAMPLE: Final = "2026-12-02T09:22:45.123Z"
_FORM: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


class BadTime(ValueError):
    """A string that is not an instant in the protocol's form; the message quotes it."""


def format_time(moment: datetime) -> str:
    """``moment`` in the protocol's form, in UTC, its microseconds cut to milliseconds.

    A datetime without a zone is taken as UTC: every time the server keeps is UTC, and
    SQLite gives them back without their zone. A client gives an aware datetime.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    return f"{utc.replace(tzinfo=None).isoformat(timespec='milliseconds')}Z"


def parse_time(text: str) -> datetime:
    """The instant ``text`` writes (an aware datetime, in UTC); ``BadTime`` for anything
    but the protocol's form, such as another offset than ``Z`` or no milliseconds."""
    if _FORM.fullmatch(text) is None:
        raise BadTime(f"{text!r} is not a time in the protocol's form, like {EXAMPLE}")
    try:
        return datetime.fromisoformat(text)
    except ValueError:  # the right form, an impossible date: 2026-02-30, 24:00
        raise BadTime(f"{text!r} is not a time: no such day or time of day") from None
