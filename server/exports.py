"""A tournament's exports: its standings and its rounds as a JSON document, the same as
CSV, and a scheduled tournament's iCalendar file (docs/protocol.md, Exports).

``export_document`` builds every export document, in one place: the JSON served is that
document, and the CSV is its ``columns`` and ``rows`` (``csv_text``). Anything said of an
export (a signature, one day) is said of that document.

CSV is RFC 4180: a header row, fields separated by commas, records ended by CRLF, a
field holding a comma, a quote or a line break quoted with its quotes doubled; UTF-8,
without a byte order mark; ``true``/``false`` for booleans and an empty field for none.
So that a spreadsheet never runs a name as a formula, a text field that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets an apostrophe before it.

A result entered for a table in the room (docs/tables.md) is marked ``entered``: a
standings row that counts one, and a round's row of one (its ``rank`` is empty: a rank
is the round match's, and a table is not in it).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from gaps_protocol.times import parse_time
from server.errors import ServerError
from server.storage.tournaments import PlayedRound

FORMAT: Final = "gaps-tournament-export/1"
#: The exports of a tournament: ``standings``, and ``rounds`` (all, or one).
EXPORTS: Final = ("standings", "rounds")
#: The standings' columns, the tie-breaks in the order they apply.
STANDINGS_COLUMNS: Final = (
    "rank", "name", "player_id", "bot", "removed", "total_score", "total_time_ms",
    "rounds_played", "removed_reason", "entered",
)  # fmt: skip
#: How the standings rank: each rule breaks the ties the ones before it leave; rows
#: equal on all share a rank (listed by player id).
TIE_BREAKS: Final = (
    {"column": "removed", "order": "false first: the entrants still in, then those removed"},
    {"column": "total_score", "order": "descending"},
    {"column": "total_time_ms", "order": "ascending"},
)
#: A round's columns: one row per player of the round's match, then one per table's
#: result entered (``entered``).
ROUND_COLUMNS: Final = (
    "round", "match", "round_status", "seed", "commitment", "par", "par_exact", "rank",
    "name", "player_id", "bot", "score", "placed", "redeals", "won", "end_reason",
    "finish_ms", "entered",
)  # fmt: skip
#: What the export says of the tournament itself: these fields of its view.
TOURNAMENT_FIELDS: Final = (
    "id", "code", "name", "host_id", "ruleset", "rounds", "round_time_limit_s", "start_at",
    "status", "cancel_reason", "current_round", "deals", "commitment", "round_commitments",
    "seeds",
)  # fmt: skip
#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")


def export_document(
    export: str,
    *,
    view: Mapping[str, Any],
    standings: Sequence[Mapping[str, Any]],
    played: Sequence[PlayedRound],
    generated_at: str,
    number: int | None = None,
    entered: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The ``export`` of a tournament (``standings``, or ``rounds``: every round played
    so far, or round ``number`` only): from its ``view`` and ``standings`` (as
    ``tournament_standings`` gives them, with its ``entered`` results), and its rounds
    as ``played`` (their matches as stored), at ``generated_at``. A round's seed is
    shown once the view reveals it."""
    document: dict[str, Any] = {
        "format": FORMAT,
        "export": export,
        "round": number,
        "generated_at": generated_at,
        "tournament": {name: view.get(name) for name in TOURNAMENT_FIELDS},
    }
    if export == "standings":
        return {
            **document,
            "columns": list(STANDINGS_COLUMNS),
            "tie_breaks": [dict(rule) for rule in TIE_BREAKS],
            "rows": [{name: row.get(name) for name in STANDINGS_COLUMNS} for row in standings],
        }
    if export != "rounds":
        raise ValueError(f"an export is one of {', '.join(EXPORTS)}, not {export!r}")
    matches = {r.number: r for r in played}
    numbers = sorted({*matches, *(int(row["round"]) for row in entered)})
    if number is not None:
        numbers = [n for n in numbers if n == number]
        if not numbers:
            raise ServerError(
                "no_such_resource",
                f"tournament {view['code']} has no round {number} yet "
                f"({view['current_round']} of {view['rounds']} dealt)",
            )
    seeds = list(view.get("seeds") or [])
    rows: list[dict[str, Any]] = []
    for n in numbers:
        match = matches.get(n)
        if match is not None:
            rows.extend(_round_row(match, seat, seeds) for seat in match.seats)
        rows.extend(
            _entered_row(view, n, match, result, seeds)
            for result in entered if result["round"] == n
        )
    return {**document, "columns": list(ROUND_COLUMNS), "rows": rows}


def _round_row(played: PlayedRound, seat: Any, seeds: list[str | None]) -> dict[str, Any]:
    return {
        "round": played.number,
        "match": played.code,
        "round_status": played.status,
        "seed": seeds[played.number - 1] if played.number <= len(seeds) else None,
        "commitment": played.commitment,
        "par": played.par_score,
        "par_exact": played.par_exact,
        "rank": seat.rank,
        "name": seat.name,
        "player_id": seat.player_id,
        "bot": seat.bot,
        "score": seat.score,
        "placed": seat.placed,
        "redeals": seat.redeals,
        "won": seat.won,
        "end_reason": seat.end_reason,
        "finish_ms": seat.finish_ms,
        "entered": False,
    }


def _entered_row(
    view: Mapping[str, Any],
    number: int,
    match: PlayedRound | None,
    result: Mapping[str, Any],
    seeds: list[str | None],
) -> dict[str, Any]:
    """A table's result entered in round ``number`` (``match``: the round's, if any)."""
    commitments = list(view.get("round_commitments") or [])
    return {
        "round": number,
        "match": None if match is None else match.code,
        "round_status": None if match is None else match.status,
        "seed": seeds[number - 1] if number <= len(seeds) else None,
        "commitment": match.commitment if match is not None else (
            commitments[number - 1] if number <= len(commitments) else None
        ),
        "par": None if match is None else match.par_score,
        "par_exact": None if match is None else match.par_exact,
        "rank": None,
        "name": result["name"],
        "player_id": result["player_id"],
        "bot": False,
        "score": result["score"],
        "placed": result["placed"],
        "redeals": result["redeals"],
        "won": result["won"],
        "end_reason": None,
        "finish_ms": result["finish_ms"],
        "entered": True,
    }


def csv_text(document: Mapping[str, Any]) -> str:
    """``document``'s rows as CSV (RFC 4180), its columns as the header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    columns = document["columns"]
    writer.writerow(columns)
    for row in document["rows"]:
        writer.writerow([csv_cell(row.get(column)) for column in columns])
    return out.getvalue()


def csv_cell(value: Any) -> str:
    """One value as a CSV field's text: never read as a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    return str(value)


def file_name(view: Mapping[str, Any], export: str, number: int | None, suffix: str) -> str:
    """``Q4M2ZK-standings.csv``, ``Q4M2ZK-rounds.json``, ``Q4M2ZK-round-2.csv``."""
    part = export if number is None else f"round-{number}"
    return f"{view['code']}-{part}.{suffix}"


# -- iCalendar ------------------------------------------------------------------------------

#: RFC 5545: a content line is at most 75 octets, then folded.
_LINE_OCTETS: Final = 75


def calendar_text(view: Mapping[str, Any], *, stamp: datetime) -> str:
    """A scheduled tournament as an iCalendar file (RFC 5545): one event from its start
    to the latest it can end (every round run to its time limit, with its countdown, and
    the breaks between), cancelled if it was; ``stamp`` is when the file is made."""
    start_text = view.get("start_at")
    if not start_text:
        raise ServerError(
            "no_such_resource",
            f"tournament {view['code']} has no start time (its host starts it): "
            "it has no calendar file",
        )
    start = parse_time(str(start_text))
    rounds = int(view["rounds"])
    latest = start + timedelta(
        seconds=rounds * (int(view["countdown_s"]) + int(view["round_time_limit_s"]))
        + (rounds - 1) * float(view["break_s"])
    )
    cancelled = view.get("status") == "cancelled"
    minutes = int(view["round_time_limit_s"]) / 60
    description = (
        f"A duplicate tournament of Gaps: {view['ruleset']}, {rounds} round(s) of at most "
        f"{minutes:g} min, every entrant dealt the same deals. Enter with: gaps tournament "
        f"join {view['code']} (or on the web page /t/{view['code']}). The end is the latest "
        "it can be: every round played to its time limit."
    )
    if cancelled:
        description = f"Cancelled: {view.get('cancel_reason')}. " + description
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Gaps Arena//Tournaments//EN",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        "BEGIN:VEVENT",
        f"UID:tournament-{view['id']}-{view['code']}@gaps-arena",
        f"DTSTAMP:{_utc_text(stamp)}",
        f"DTSTART:{_utc_text(start)}",
        f"DTEND:{_utc_text(latest)}",
        f"SUMMARY:{ics_escape(str(view['name']))} (Gaps tournament {view['code']})",
        f"DESCRIPTION:{ics_escape(description)}",
        f"STATUS:{'CANCELLED' if cancelled else 'CONFIRMED'}",
        # A calendar that has the event already takes the cancellation as a change.
        f"SEQUENCE:{1 if cancelled else 0}",
        "END:VEVENT",
        "END:VCALENDAR",
    ]
    return "".join(fold(line) + "\r\n" for line in lines)


def _utc_text(moment: datetime) -> str:
    """A DATE-TIME in UTC (RFC 5545, 3.3.5, form 2)."""
    if moment.tzinfo is None:  # the server's times are UTC
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def ics_escape(text: str) -> str:
    """A TEXT value (RFC 5545, 3.3.11): backslash, semicolon, comma and line breaks
    escaped."""
    return (
        text.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
        .replace("\r", "\\n")
    )


def fold(line: str) -> str:
    """``line`` folded after every 75 octets (RFC 5545, 3.1): each further part on a
    line of its own, after a space; never inside a UTF-8 character."""
    parts: list[str] = []
    current, size = "", 0
    limit = _LINE_OCTETS
    for char in line:
        octets = len(char.encode())
        if size + octets > limit:
            parts.append(current)
            current, size = "", 0
            limit = _LINE_OCTETS - 1  # the space that starts a folded line counts
        current += char
        size += octets
    parts.append(current)
    return "\r\n ".join(parts)
