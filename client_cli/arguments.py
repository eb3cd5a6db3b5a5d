"""What ``gaps`` accepts on its command line, checked before anything is sent.

Each argument type turns what people type into what the protocol takes, in the client's
own units and within the server's limits (docs/protocol.md), so that a bad value is a
usage error that says what is wrong in the words of the option (``--time 25h``: "the
time limit is at most 24 hours"), never a refusal in the protocol's words after a
connection. ``Parser`` makes every usage error one ``gaps:`` line.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Final, NoReturn

from client_cli.duration import DurationError, format_duration, parse_duration
from gaps import NotationError, Seed
from gaps_protocol.text import BadText, check_text

#: The server's limits (docs/protocol.md): a match's or a round's clock, the countdown,
#: a tournament's name, a removal's or cancel's reason, a host's announcement, and the
#: break between a tournament's rounds.
MAX_TIME_LIMIT_S: Final = 24 * 3600
MAX_COUNTDOWN_S: Final = 60
MAX_TOURNAMENT_NAME: Final = 64
MAX_REASON: Final = 200
MAX_ANNOUNCEMENT: Final = 280
MAX_BREAK_S: Final = 3600


class UsageError(Exception):
    """A command line ``gaps`` cannot run: the message is the whole ``gaps:`` line."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (no usage block): ``gaps create:
    argument --time: ... (gaps create --help lists the options)``. Its subcommands'
    parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("gaps").strip()
        raise UsageError(f"{command + ': ' if command else ''}{message} "
                         f"(`{self.prog} --help` lists the options)")


def duration_within(what: str, most_s: int) -> Callable[[str], int]:
    """A duration of at most ``most_s`` seconds; ``what`` names it in the error."""
    def parse(text: str) -> int:
        seconds = duration(text)
        if seconds > most_s:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {what} is at most {spoken_duration(most_s)}")
        return seconds

    return parse


def spoken_duration(seconds: int) -> str:
    """``24 hours``, ``10 minutes``, ``60 seconds``: a limit as people say it (in
    seconds up to two minutes, as a countdown is counted)."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size and seconds % size == 0:
            return f"{seconds // size} {unit}s"
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return format_duration(seconds)


def duration(text: str) -> int:
    try:
        return parse_duration(text)
    except DurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


match_clock = duration_within("the time limit", MAX_TIME_LIMIT_S)
round_clock = duration_within("a round's time limit", MAX_TIME_LIMIT_S)


def countdown(text: str) -> int:
    if text.strip() in ("0", "0s"):
        return 0
    return duration_within("the countdown", MAX_COUNTDOWN_S)(text)


def break_time(text: str) -> int:
    """The break between a tournament's rounds: 0 (none) to an hour."""
    if text.strip() in ("0", "0s"):
        return 0
    return duration_within("the break", MAX_BREAK_S)(text)


def pace(text: str) -> float:
    cleaned = text.strip().lower().removesuffix("s")
    try:
        value = float(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a pace: expected seconds per move, like 1.5 or 0"
        ) from None
    if not 0 <= value <= 600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pace: expected 0 to 600 seconds")
    return value


def bounded(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {what}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} {what} is not in {low}..{high}")
        return value

    return parse


_CLOCK_TIME = re.compile(r"(?:(\d+):)?(\d+):([0-5]\d)(?:\.(\d{1,3}))?")


def clock_time(text: str) -> int:
    """A time as a clock shows it, ``MM:SS`` (``H:MM:SS``, and tenths ``MM:SS.t``), in ms:
    how long a table's game took."""
    found = _CLOCK_TIME.fullmatch(text.strip())
    if found is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: expected minutes and seconds, like 12:34 (or 1:02:03)")
    hours, minutes, seconds, fraction = found.groups()
    if hours is not None and int(minutes) > 59:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time: at most 59 minutes an hour")
    total_s = int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)
    return total_s * 1000 + int((fraction or "0").ljust(3, "0"))


def typed_text(what: str) -> Callable[[str], str]:
    """Text as typed, taken by the protocol's one rule (``gaps_protocol.text``: no space
    around it, no two in a row, no other space than U+0020, nothing unprintable) or
    refused saying why, ``what`` naming it: nothing is stripped, as the server strips
    nothing."""
    def parse(text: str) -> str:
        try:
            return check_text(text)
        except BadText as error:
            raise argparse.ArgumentTypeError(f"{what}: {error}") from None

    return parse


def text_of_at_most(most: int, what: str) -> Callable[[str], str]:
    """Text taken by the one rule (``typed_text``), of at most ``most`` characters."""
    taken = typed_text(what)

    def parse(text: str) -> str:
        if len(taken(text)) > most:
            raise argparse.ArgumentTypeError(
                f"{what} is at most {most} characters, not {len(text)}")
        return text

    return parse


tournament_name = text_of_at_most(MAX_TOURNAMENT_NAME, "a tournament's name")
reason = text_of_at_most(MAX_REASON, "the reason")
announcement = text_of_at_most(MAX_ANNOUNCEMENT, "an announcement")
#: A player's name, as it is registered or as another player's is typed; the server says
#: which names it takes (2-24 letters, digits, _ - or .).
player_name = typed_text("a player's name")
_share_code = typed_text("a share code")


def seed(text: str) -> str:
    """A deal's share code, as ``Seed.parse`` reads it (groups between dashes or single
    spaces, any case), sent in its usual form."""
    try:
        return str(Seed.parse(_share_code(text)))
    except NotationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _code(what: str, example: str) -> Callable[[str], str]:
    """A match's or tournament's code (letters and digits, any case), sent in upper case
    as the server writes it."""
    taken = typed_text(what)

    def parse(text: str) -> str:
        if not taken(text).isalnum():
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (like {example})")
        return text.upper()

    return parse


match_code = _code("a match code", "K7QX2M")
tournament_code = _code("a tournament code", "Q4M2ZK")


def day(text: str) -> str:
    try:
        return date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day: expected YYYY-MM-DD") from None


def moment(text: str) -> datetime:
    """An ISO 8601 time; without an offset it is the user's local time."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time: expected ISO 8601, like 2026-11-29T18:00 or "
            "2026-11-29T18:00:00Z"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()  # local time
    return parsed.astimezone(UTC)
