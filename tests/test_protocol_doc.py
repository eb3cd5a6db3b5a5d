"""docs/protocol.md is the contract: its example session must run against the server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from gaps_protocol import limits
from gaps_protocol.schema import ranges_table
from server.config import Limits, limit_flags
from server.errors import ERROR_CODES
from server.protocol import REQUEST_TYPES

DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
ANY = "…"


def session_lines() -> list[tuple[str, str, Any]]:
    text = DOC.read_text()
    block = re.search(r"```session\n(.*?)```", text, re.S)
    assert block is not None, "docs/protocol.md has no ```session block"
    lines = []
    for line in block.group(1).splitlines():
        name, arrow, message = line.split(" ", 2)
        lines.append((name, arrow, json.loads(message)))
    return lines


def substitute(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str) and value in names:
        return names[value]
    if isinstance(value, dict):
        return {key: substitute(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, names) for item in value]
    return value


def assert_matches(expected: Any, actual: Any, path: str = "$") -> None:
    if expected == ANY:
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        keys = set(expected) - {ANY}
        if ANY in expected:
            missing = keys - set(actual)
            assert not missing, f"{path}: missing {sorted(missing)} in {actual!r}"
        else:
            assert set(actual) == keys, f"{path}: members {sorted(actual)} != {sorted(keys)}"
        for key in keys:
            assert_matches(expected[key], actual[key], f"{path}.{key}")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (
            f"{path}: expected {len(expected)} items, got {actual!r}"
        )
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            assert_matches(want, got, f"{path}[{index}]")
        return
    assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


async def test_the_documented_example_session_runs_against_the_server(connect) -> None:
    clients: dict[str, Any] = {}
    last_reply: dict[str, dict[str, Any]] = {}
    code = ""
    for name, arrow, message in session_lines():
        if name not in clients:
            clients[name] = await connect()
        client = clients[name]
        names = {"<code>": code, "<token>": client.token or ""}
        if arrow == "→":
            sent = substitute(message, names)
            last_reply[name] = await client.send_raw(json.dumps(sent), sent.get("id"))
        elif arrow == "←":
            reply = last_reply.pop(name)
            if reply.get("type") == "registered":
                client.token = reply["token"]
            if reply.get("type") == "match_created":
                code = reply["match"]["code"]
                names["<code>"] = code
            assert_matches(substitute(message, names), reply, f"{name}'s reply")
        elif arrow == "⇐":
            event = await client.event(message["event"], seq=message["seq"])
            assert_matches(substitute(message, names), event, f"{name}'s event")
        else:
            raise AssertionError(f"unknown arrow {arrow!r}")


def test_the_protocol_doc_lists_every_error_code() -> None:
    text = DOC.read_text()
    for code in ERROR_CODES:
        assert f"| `{code}` |" in text, f"docs/protocol.md does not document error {code}"


def test_the_protocol_doc_has_a_section_for_every_request_type() -> None:
    text = DOC.read_text()
    for kind in REQUEST_TYPES:
        assert f"### `{kind}`" in text, f"docs/protocol.md has no section for {kind}"


def test_the_limits_table_lists_every_limit_with_its_flag_variable_and_default() -> None:
    section = DOC.read_text().split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `(--[\w-]+)` \| `(\w+)` \| ([\d.]+) \|$", section, re.M)
    defaults = Limits()
    assert [(name, flag, variable) for name, flag, variable, _ in rows] == limit_flags()
    for name, _, _, default in rows:
        assert float(default) == getattr(defaults, name), f"{name}: the doc says {default}"


def test_the_ranges_table_is_the_one_the_message_types_give() -> None:
    section = DOC.read_text().split("\n### Ranges", 1)[1].split("\n## ", 1)[0]
    assert ranges_table() in section, (
        "docs/protocol.md's Ranges table is out of date: paste "
        "gaps_protocol.schema.ranges_table() there"
    )


def test_the_ranges_table_says_the_bounds_of_gaps_protocol_limits() -> None:
    table = ranges_table()
    for field, low, high in [
        ("seq", 1, "(2^31 - 1)"), ("since", 0, "(2^31 - 1)"), ("limit", 1, limits.MAX_PAGE_ROWS),
        ("id", "-(2^53 - 1)", "(2^53 - 1)"), ("rounds", 1, limits.MAX_ROUNDS),
        ("max_players", 1, limits.MAX_PLAYERS), ("max_players", 1, limits.MAX_TOURNAMENT_PLAYERS),
        ("time_limit_s", 1, limits.MAX_TIME_LIMIT_S), ("countdown_s", 0, limits.MAX_COUNTDOWN_S),
        ("break_s", 0, limits.MAX_BREAK_S), ("placed", 0, limits.MAX_PLACED),
        ("redeals", 0, limits.MAX_TABLE_REDEALS),
    ]:
        assert f"| `{field}` | integer {low} to {high}" in table, field
    assert limits.MAX_SEQ == 2**31 - 1 and limits.MAX_SAFE_INTEGER == 2**53 - 1
    for field, longest in [
        ("id", limits.MAX_ID_LENGTH), ("action", limits.MAX_ACTION_LENGTH),
        ("seed", limits.MAX_SEED_LENGTH), ("text", limits.MAX_ANNOUNCEMENT_LENGTH),
        ("reason", limits.MAX_REASON_LENGTH), ("cursor", limits.MAX_CURSOR_LENGTH),
        ("token", limits.MAX_TOKEN_LENGTH), ("code", limits.MAX_CODE_LENGTH),
    ]:
        assert re.search(rf"\| `{field}` \| [^|]*text of 1 to {longest} characters", table), field


async def test_a_player_who_takes_a_seat_receives_their_own_player_joined_with_the_replys_seq(
    connect: Any,
) -> None:
    # docs/protocol.md, join_match: the seat is that event; the client skips it as
    # reflected in the snapshot.
    ana, bob = await connect(), await connect()
    await ana.register("ana")
    await bob.register("bob")
    code = (await ana.ok("create_match", max_players=2))["match"]["code"]
    joined = await bob.ok("join_match", code=code)
    own = await bob.event("player_joined", seq=joined["seq"])
    assert own["player"]["name"] == "bob" and own["match"] == code
    assert [p["name"] for p in joined["players"]] == ["ana", "bob"]
    seen = await ana.event("player_joined", seq=joined["seq"])
    assert seen == own
