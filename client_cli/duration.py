"""Durations as people type them: ``10m``, ``90s``, ``1h``, ``1h30m``, ``2m30s``, ``45``."""

from __future__ import annotations

import re
from typing import Final

_PART: Final = re.compile(r"(\d+)\s*([hms]?)", re.IGNORECASE)
_UNIT_SECONDS: Final = {"h": 3600, "m": 60, "s": 1, "": 1}


class DurationError(ValueError):
    """Text that is not a duration; the message quotes it and shows the accepted forms."""


def parse_duration(text: str) -> int:
    """Seconds in ``text``: numbers with units h, m, s (a bare number is seconds)."""
    cleaned = text.strip().lower()
    hint = "expected a duration like 10m, 90s, 1h or 1h30m"
    if not cleaned:
        raise DurationError(f"{text!r} is not a duration: {hint}")
    total = 0
    position = 0
    seen: list[str] = []
    while position < len(cleaned):
        if cleaned[position].isspace():
            position += 1
            continue
        match = _PART.match(cleaned, position)
        if match is None:
            raise DurationError(f"{text!r} is not a duration: {hint}")
        unit = match[2]
        if unit in seen or (not unit and seen):
            raise DurationError(f"{text!r} is not a duration: {hint}")
        if seen and "hms".index(unit) <= "hms".index(seen[-1]):
            raise DurationError(f"{text!r} is not a duration: units go h, m, s in that order")
        seen.append(unit)
        total += int(match[1]) * _UNIT_SECONDS[unit]
        position = match.end()
    if total <= 0:
        raise DurationError(f"{text!r} is not a duration: it must be longer than 0 s")
    return total


def format_duration(seconds: float) -> str:
    """``1:05:09``, ``4:07`` or ``0:42``: a clock reading, hours only when needed."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def format_ms(milliseconds: int | None) -> str:
    """A match-clock time with tenths: ``2:31.4``; ``-`` for none."""
    if milliseconds is None:
        return "-"
    minutes, rest = divmod(max(0, milliseconds), 60_000)
    return f"{minutes}:{rest // 1000:02d}.{rest % 1000 // 100}"


def starts_in(seconds: float) -> str:
    """A countdown in words: ``in 0:12`` (a second started counts whole), or ``any moment
    now`` once it is over."""
    return f"in {format_duration(seconds + 0.999)}" if seconds > 0 else "any moment now"
