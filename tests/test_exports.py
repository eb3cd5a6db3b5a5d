"""A tournament's exports: the standings and the rounds as JSON and CSV over HTTP,
parsed back (the csv module, json) and equal to the standings and to the round matches'
replays, for a tournament running and finished; CSV that no spreadsheet runs as a
formula; and a scheduled tournament's iCalendar file, parsed back (RFC 5545)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import random
import re
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

from server.app import Server
from server.exports import (
    ROUND_COLUMNS,
    STANDINGS_COLUMNS,
    calendar_text,
    csv_cell,
    csv_text,
    fold,
)
from tests.client import Client, http_get
from tests.fake_clock import FakeClock
from tests.races import Connect, registered
from tests.test_tournament import play_round


async def fetch(server: Server, path: str) -> tuple[int, dict[str, str], bytes]:
    """A plain GET: the status, the headers and the body's bytes."""

    def get() -> tuple[int, dict[str, str], bytes]:
        url = f"http://127.0.0.1:{server.port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    return await asyncio.to_thread(get)


def parsed_csv(body: bytes) -> list[dict[str, str]]:
    text = body.decode("utf-8")  # UTF-8, and no byte order mark before the header
    assert not text.startswith("\ufeff") and text.endswith("\r\n")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def as_text(value: Any) -> str:
    """A JSON value as docs/protocol.md says the CSV writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return str(value)


async def export(
    server: Server, code: str, name: str, *, settled: bool = True
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Tournament ``code``'s export ``name`` (``standings``, ``rounds``, ``rounds/2``) as
    JSON and as CSV, each checked for its headers, and the CSV for its rows equal to the
    JSON's when the tournament is ``settled`` (else a round may start between the two
    requests)."""
    status, headers, body = await fetch(server, f"/tournaments/{code.lower()}/{name}.json")
    assert status == 200, body
    assert headers["Content-Type"] == "application/json; charset=utf-8"
    document = json.loads(body)
    status, headers, body = await fetch(server, f"/tournaments/{code}/{name}.csv")
    assert status == 200, body
    assert headers["Content-Type"] == "text/csv; charset=utf-8; header=present"
    saved = name.replace("rounds/", "round-")
    assert headers["Content-Disposition"] == f'attachment; filename="{code}-{saved}.csv"'
    rows = parsed_csv(body)
    if rows:
        assert list(rows[0]) == document["columns"]
    if settled:
        columns = document["columns"]
        assert rows == [{k: as_text(row[k]) for k in columns} for row in document["rows"]]
    return document, rows


async def test_the_exports_equal_the_standings_and_the_round_replays_running_and_finished(
    connect: Connect, server: Server
) -> None:
    host, ana, bob = await registered(connect, "host", "ana", "bob")
    made = await host.ok("tournament_create", name='Club night, "spring"', rounds=2,
                         max_players=2)
    code = made["tournament"]["code"]
    for client in (ana, bob):
        await client.ok("tournament_join", code=code)
    await host.ok("tournament_start", code=code)
    rng = random.Random(7)
    await asyncio.gather(*(play_round(c, 1, bot_level=None, rng=rng) for c in (ana, bob)))
    await host.event("round_ended", round=1)
    starting = await host.event("round_starting", round=2)

    # Running: round 1 counted and its seed revealed, round 2 dealt and secret.
    running, _ = await export(server, code, "rounds", settled=False)
    assert running["tournament"]["status"] == "running"
    by_round = {row["round"]: row for row in running["rows"]}
    assert set(by_round) == {1, 2} and by_round[2]["match"] == starting["match"]
    assert by_round[1]["seed"] is not None and by_round[2]["seed"] is None
    await asyncio.gather(*(play_round(c, 2, bot_level=None, rng=rng) for c in (ana, bob)))
    await host.event("tournament_ended")

    standings = (await host.ok("tournament_standings", code=code))["standings"]
    document, rows = await export(server, code, "standings")
    assert (document["format"], document["export"]) == ("gaps-tournament-export/1", "standings")
    assert document["columns"] == list(STANDINGS_COLUMNS)
    assert [t["column"] for t in document["tie_breaks"]] == [
        "removed", "total_score", "total_time_ms"
    ]
    assert document["rows"] == [{k: row[k] for k in STANDINGS_COLUMNS} for row in standings]
    assert [row["name"] for row in rows] == [row["name"] for row in standings]
    assert document["tournament"]["name"] == 'Club night, "spring"'

    rounds, rows = await export(server, code, "rounds")
    assert rounds["columns"] == list(ROUND_COLUMNS) and len(rows) == 4
    seeds = rounds["tournament"]["seeds"]
    for number in (1, 2):
        mine = [row for row in rounds["rows"] if row["round"] == number]
        status, replay = await http_get(server.port, f"/matches/{mine[0]['match']}/replay")
        assert status == 200
        match = replay["match"]
        assert {row["seed"] for row in mine} == {match["seed"]} == {seeds[number - 1]}
        assert {row["commitment"] for row in mine} == {match["commitment"]}
        assert {row["round_status"] for row in mine} == {"finished"}
        fields = ("player_id", "name", "bot", "rank", "score", "placed", "redeals", "won",
                  "end_reason", "finish_ms")
        assert [{f: row[f] for f in fields} for row in mine] == [
            {f: player[f] for f in fields} for player in replay["players"]
        ]
        par = match["par"]
        assert {(row["par"], row["par_exact"]) for row in mine} == {
            (None, None) if par is None else (par["score"], par["exact"])
        }
        one, one_rows = await export(server, code, f"rounds/{number}")
        assert one["round"] == number and one["rows"] == mine
    # Each entrant's total is the sum of their round scores.
    for row in standings:
        assert row["total_score"] == sum(
            r["score"] for r in rounds["rows"] if r["player_id"] == row["player_id"]
        )
    status, _, body = await fetch(server, f"/tournaments/{code}/rounds/3.csv")
    assert status == 404 and json.loads(body)["code"] == "no_such_resource"
    status, _, body = await fetch(server, "/tournaments/ZZZZZZ/standings.json")
    assert status == 404 and json.loads(body)["code"] == "no_such_tournament"
    listed = (await http_get(server.port, "/tournaments?status=ended"))[1]["tournaments"]
    assert [t["code"] for t in listed] == [code]  # a finished tournament stays listed


async def test_a_name_or_reason_a_spreadsheet_would_run_is_kept_as_text(
    connect: Connect, server: Server
) -> None:
    host, ana = await registered(connect, "host", "ana")
    code = (await host.ok("tournament_create", rounds=1))["tournament"]["code"]
    await ana.ok("tournament_join", code=code)
    reason = '=HYPERLINK("http://evil","click"), then more'
    await host.ok("tournament_remove", code=code, player="ana", reason=reason)
    _, rows = await export(server, code, "standings")
    assert rows[0]["removed_reason"] == "'" + reason
    assert rows[0]["removed"] == "true"


def test_csv_fields_are_quoted_as_rfc_4180_says_and_formulas_defused() -> None:
    assert [csv_cell(v) for v in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "ana")] == [
        "'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx", "'\rx", "ana"
    ]
    assert [csv_cell(v) for v in (None, True, False, -3, 0)] == ["", "true", "false", "-3", "0"]
    document = {
        "columns": ["name", "note"],
        "rows": [{"name": "a,b", "note": 'say "hi"'}, {"name": "c", "note": "two\r\nlines"}],
    }
    text = csv_text(document)
    assert text == 'name,note\r\n"a,b","say ""hi"""\r\nc,"two\r\nlines"\r\n'
    assert list(csv.DictReader(io.StringIO(text, newline=""))) == document["rows"]


# -- iCalendar -----------------------------------------------------------------------------

CONTENT_LINE = re.compile(r"([A-Z][A-Z0-9-]*)((?:;[^:]*)?):(.*)")


def parse_ics(body: bytes) -> list[dict[str, str]]:
    """The components of an iCalendar file (RFC 5545), strictly: CRLF line ends, content
    lines of at most 75 octets, folded lines unfolded, BEGIN/END nested, TEXT values
    unescaped. Each component's properties by name, with ``BEGIN`` its type."""
    text = body.decode("utf-8")
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    raw = text.split("\r\n")[:-1]
    assert all(len(line.encode()) <= 75 for line in raw)
    lines: list[str] = []
    for line in raw:
        if line.startswith(" "):
            lines[-1] += line[1:]
        else:
            lines.append(line)
    components: list[dict[str, str]] = []
    stack: list[dict[str, str]] = []
    for line in lines:
        found = CONTENT_LINE.fullmatch(line)
        assert found is not None, line
        name, value = found.group(1), found.group(3)
        if name == "BEGIN":
            stack.append({"BEGIN": value})
        elif name == "END":
            component = stack.pop()
            assert component["BEGIN"] == value
            components.append(component)
        else:
            assert name not in stack[-1], f"{name} twice"
            stack[-1][name] = re.sub(
                r"\\([\\;,nN])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), value
            )
    assert not stack
    return components


def utc(value: str) -> datetime:
    return datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)


async def test_a_scheduled_tournament_offers_a_calendar_file_that_parses_back(
    connect: Connect, server: Server, clock: FakeClock
) -> None:
    (host,) = await registered(connect, "host")
    start = (clock.now() + timedelta(hours=2)).replace(microsecond=0)
    name = "Évening cup; tables, 1-4 — folded across two lines ♠♥♦♣ ♠♥♦♣"
    made = await host.ok("tournament_create", name=name, rounds=3, round_time_limit_s=600,
                         start_at=start.isoformat())
    view = made["tournament"]
    status, headers, body = await fetch(server, f"/tournaments/{view['code'].lower()}.ics")
    assert status == 200
    assert headers["Content-Type"] == "text/calendar; charset=utf-8"
    assert headers["Content-Disposition"] == f'attachment; filename="{view["code"]}.ics"'
    event, calendar = parse_ics(body)
    assert (calendar["BEGIN"], calendar["VERSION"], calendar["METHOD"]) == (
        "VCALENDAR", "2.0", "PUBLISH"
    )
    assert calendar["PRODID"] == "-//Gaps Arena//Tournaments//EN"
    assert event["BEGIN"] == "VEVENT" and event["STATUS"] == "CONFIRMED"
    assert event["UID"] == f"tournament-{view['id']}-{view['code']}@gaps-arena"
    assert event["SUMMARY"] == f"{name} (Gaps tournament {view['code']})"
    assert utc(event["DTSTART"]) == start
    assert utc(event["DTSTAMP"]) == clock.now().replace(microsecond=0)
    # The latest it can end: 3 rounds of countdown and time limit, 2 breaks between.
    latest = 3 * (view["countdown_s"] + 600) + 2 * view["break_s"]
    assert utc(event["DTEND"]) == start + timedelta(seconds=latest)
    assert f"gaps tournament join {view['code']}" in event["DESCRIPTION"]
    unscheduled = (await host.ok("tournament_create"))["tournament"]["code"]
    status, _, body = await fetch(server, f"/tournaments/{unscheduled}.ics")
    assert status == 404 and "has no start time" in json.loads(body)["message"]


def test_a_cancelled_tournament_s_calendar_event_says_so_and_folds_whole_characters() -> None:
    view = {
        "id": 9, "code": "Q4M2ZK", "name": "Cup", "ruleset": "classic", "rounds": 1,
        "round_time_limit_s": 60, "countdown_s": 10, "break_s": 15.0,
        "start_at": "2026-12-24T18:00:00.000Z", "status": "cancelled",
        "cancel_reason": "nobody entered before the start time",
    }
    stamp = datetime(2026, 12, 24, 18, 0, 5, tzinfo=UTC)
    [event, _] = parse_ics(calendar_text(view, stamp=stamp).encode())
    assert (event["STATUS"], event["SEQUENCE"]) == ("CANCELLED", "1")
    assert event["DESCRIPTION"].startswith("Cancelled: nobody entered before the start time.")
    assert utc(event["DTEND"]) == datetime(2026, 12, 24, 18, 1, 10, tzinfo=UTC)
    line = "DESCRIPTION:" + "é" * 100
    folded = fold(line).split("\r\n ")
    assert "".join(folded) == line and all(len(part.encode()) <= 74 for part in folded[1:])
    assert len(folded[0].encode()) <= 75


async def test_finished_and_cancelled_tournaments_stay_listed_over_the_protocol(
    connect: Connect, clock: FakeClock
) -> None:
    (ana,) = await registered(connect, "ana")
    start = (clock.now() + timedelta(minutes=1)).isoformat()
    cancelled = (await ana.ok("tournament_create", start_at=start))["tournament"]["code"]
    active = (await ana.ok("tournament_create"))["tournament"]["code"]
    clock.advance(60)
    await ana.event("tournament_cancelled", tournament=cancelled)
    everything = (await ana.ok("tournament_list", status="all"))["tournaments"]
    assert [(t["code"], t["status"]) for t in everything] == [
        (active, "open"), (cancelled, "cancelled")
    ]
    await Client.close(ana)
