"""The protocol's published documents, generated from the message types.

- ``json_schema()``: JSON Schema (2020-12) of every client message (``ClientMessage``)
  and every server message (``ServerMessage``), each type under ``$defs``;
- ``asyncapi()``: an AsyncAPI 3.0 document of the WebSocket API: one channel, the
  requests sent on it, the replies and events received;
- ``openapi()``: an OpenAPI 3.1 document of the HTTP reads (docs/protocol.md, HTTP).

``documents()`` gives all three by file name; ``scripts/protocol-docs`` writes them to
docs/protocol/ and the server serves them at ``/protocol/NAME``. Pure: no I/O.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final, get_args

import msgspec

from gaps_protocol import limits
from gaps_protocol.messages import ClientMessage, MatchEvent, ServerReply, TournamentEvent
from gaps_protocol.messages.views import MatchSummary, Replay, SigningKey

TITLE: Final = "Gaps Arena wire protocol"
VERSION: Final = str(limits.PROTOCOL_VERSION)
DESCRIPTION: Final = (
    "The contract between the Gaps Arena server and its clients: docs/protocol.md says "
    "what each message means; these documents are generated from gaps_protocol.messages."
)
#: The file names, as docs/protocol/ holds them and the server serves them.
SCHEMA: Final = "schema.json"
ASYNCAPI: Final = "asyncapi.json"
OPENAPI: Final = "openapi.json"
#: Where the server serves each document (``/protocol/NAME``).
PATH_PREFIX: Final = "/protocol/"

_UNIONS: Final = {
    "ClientMessage": ClientMessage,
    "ServerReply": ServerReply,
    "MatchEvent": MatchEvent,
    "TournamentEvent": TournamentEvent,
}


def _components(ref_prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the unions' schemas by name, every type's schema by name), refs under
    ``ref_prefix``."""
    unions, components = msgspec.json.schema_components(
        [*_UNIONS.values(), MatchSummary, Replay, SigningKey],
        ref_template=ref_prefix + "{name}",
    )
    for schema in components.values():
        _constants_required(schema)
    return dict(zip(_UNIONS, unions, strict=False)), components


def _constants_required(schema: dict[str, Any]) -> None:
    """A member whose type is one value and whose default is that value (an event's
    ``type``) is written always: required, with no default, as the frames have it."""
    members = schema.get("properties", {})
    constants = [name for name, member in members.items()
                 if "default" in member and member.get("enum") == [member["default"]]]
    if not constants:
        return
    for name in constants:
        del members[name]["default"]
    required = {*schema.get("required", ()), *constants}
    schema["required"] = [name for name in members if name in required]


def json_schema() -> dict[str, Any]:
    """Every message both ways: ``$defs/ClientMessage`` and ``$defs/ServerMessage``."""
    prefix = "#/$defs/"
    unions, components = _components(prefix)
    server = {
        "description": "Any frame the server sends: a reply (or the unasked `matched`), "
        "a match's event or a tournament's.",
        "anyOf": [{"$ref": prefix + name} for name in ("ServerReply", "MatchEvent",
                                                       "TournamentEvent")],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": PATH_PREFIX + SCHEMA,
        "title": f"{TITLE}, version {VERSION}",
        "description": DESCRIPTION,
        "anyOf": [{"$ref": prefix + "ClientMessage"}, {"$ref": prefix + "ServerMessage"}],
        "$defs": {**unions, "ServerMessage": server, **components},
    }


def _tags(union: str, tag_field: str) -> list[tuple[str, str]]:
    """(tag, type name) of every member of ``union``."""
    return [
        (str(info.tag), info.cls.__name__)
        for info in msgspec.inspect.multi_type_info(get_args(_UNIONS[union]))
        if isinstance(info, msgspec.inspect.StructType) and info.tag_field == tag_field
    ]


def asyncapi() -> dict[str, Any]:
    """The WebSocket API: requests sent, replies and events received, on one channel."""
    prefix = "#/components/schemas/"
    _, components = _components(prefix)
    groups = {
        "request": ("ClientMessage", "type", "send", "Send a request"),
        "reply": ("ServerReply", "type", "receive", "Receive a reply"),
        "event": ("MatchEvent", "event", "receive", "Receive a match's events"),
        "tournament_event": (
            "TournamentEvent", "event", "receive", "Receive a tournament's events"),
    }
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for group, (union, tag_field, action, summary) in groups.items():
        names = []
        for tag, type_name in _tags(union, tag_field):
            key = f"{group}.{tag}" if group in ("event", "tournament_event") else tag
            if key in messages:  # a reply named as its request (rating...): keep both
                key = f"{group}.{tag}"
            messages[key] = {
                "name": tag,
                "title": type_name,
                "payload": {"$ref": prefix + type_name},
            }
            names.append(key)
        operations[group] = {
            "action": action,
            "channel": {"$ref": "#/channels/arena"},
            "summary": summary,
            "messages": [{"$ref": f"#/channels/arena/messages/{key}"} for key in names],
        }
    return {
        "asyncapi": "3.0.0",
        "info": {"title": TITLE, "version": VERSION, "description": DESCRIPTION},
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": "localhost:8765",
                "protocol": "ws",
                "description": "gaps-server's default port; HTTP reads share it",
            }
        },
        "channels": {
            "arena": {
                "address": "/",
                "description": "One WebSocket per client; every frame is one JSON object.",
                "messages": {
                    key: {"$ref": f"#/components/messages/{key}"} for key in messages
                },
            }
        },
        "operations": operations,
        "components": {
            "schemas": {name: _asyncapi_schema(schema) for name, schema in components.items()},
            "messages": messages,
        },
    }


def _asyncapi_schema(schema: Any) -> Any:
    """``schema`` as an AsyncAPI Schema Object: its ``discriminator`` is the property's
    name alone (JSON Schema draft 7 with AsyncAPI's own keywords)."""
    if isinstance(schema, list):
        return [_asyncapi_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    found = {key: _asyncapi_schema(value) for key, value in schema.items()}
    if isinstance(found.get("discriminator"), dict):
        found["discriminator"] = found["discriminator"]["propertyName"]
    return found


def _body(components: dict[str, Any], name: str) -> dict[str, Any]:
    """The schema of reply ``name`` without its envelope (``type``, ``id``): what HTTP
    serves as that reply's body."""
    body: dict[str, Any] = copy.deepcopy(components[name])
    for member in ("type", "id"):
        body["properties"].pop(member)
        if member in body.get("required", []):
            body["required"].remove(member)
    body["title"] = name + "Body"
    return body


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _json_response(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _read(summary: str, ok: dict[str, Any], *, parameters: list[dict[str, Any]] | None = None,
          errors: dict[str, str] | None = None) -> dict[str, Any]:
    responses = {"200": ok, "400": _error_response("a query field is wrong (bad_message)"),
                 "429": {**_error_response("rate_limited: wait `Retry-After` seconds"),
                         "headers": {"Retry-After": {"schema": {"type": "integer"}}}}}
    for status, description in (errors or {}).items():
        responses[status] = _error_response(description)
    operation: dict[str, Any] = {"summary": summary, "responses": responses}
    if parameters:
        operation["parameters"] = parameters
    return {"get": operation}


def _path_parameter(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string"}}


def _query(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema}


def _enum(choices: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "string", "enum": list(choices)}


def openapi() -> dict[str, Any]:
    """The HTTP reads on the WebSocket's port (docs/protocol.md, HTTP)."""
    prefix = "#/components/schemas/"
    _, components = _components(prefix)
    bodies = {
        name + "Body": _body(components, name)
        for name in ("Matches", "Leaderboard", "Rating", "Tournaments", "Standings",
                     "DailyBoard")
    }
    schemas = {**components, **bodies}

    def ref(name: str) -> dict[str, Any]:
        return {"$ref": prefix + name}

    export = {
        "type": "object",
        "description": "A tournament's export (docs/protocol.md, Exports).",
        "required": ["format", "export", "round", "generated_at", "tournament", "columns",
                     "rows", "signature"],
        "properties": {
            "format": {"const": "gaps-tournament-export/1"},
            "export": _enum(("standings", "rounds")),
            "round": {"type": ["integer", "null"]},
            "generated_at": {"type": "string", "format": "date-time"},
            "tournament": {"type": "object"},
            "columns": {"type": "array", "items": {"type": "string"}},
            "tie_breaks": {"type": "array", "items": {
                "type": "object", "required": ["column", "order"],
                "properties": {"column": {"type": "string"}, "order": {"type": "string"}}}},
            "rows": {"type": "array", "items": {"type": "object"}},
            "signature": ref("Signature"),
        },
    }
    export_file = {
        "description": "the file to save (Content-Disposition: attachment)",
        "content": {
            "application/json": {"schema": export},
            "text/csv": {"schema": {"type": "string"}},
        },
    }
    code = _path_parameter("code", "the tournament's code, in any case")
    unknown_tournament = {"404": "no_such_tournament (or no_such_resource)"}
    document_paths = {
        PATH_PREFIX + name: _read(summary, _json_response(summary, {"type": "object"}))
        for name, summary in ((SCHEMA, "this protocol's JSON Schema"),
                              (ASYNCAPI, "this protocol's AsyncAPI document"),
                              (OPENAPI, "this document"))
    }
    paths: dict[str, Any] = {
        "/livez": {"get": {"summary": "liveness", "responses": {"200": _json_response(
            "the process serves requests",
            {"type": "object", "required": ["status"],
             "properties": {"status": {"const": "alive"}}})}}},
        "/healthz": {"get": {"summary": "readiness", "responses": {
            "200": _json_response("the database and the broker answer", {
                "type": "object", "required": ["status"],
                "properties": {"status": {"const": "ok"}}}),
            "503": _json_response("a part the server needs does not answer", {
                "type": "object", "required": ["status", "failing"],
                "properties": {"status": {"const": "unavailable"},
                               "failing": {"type": "array", "items": _enum(
                                   ("database", "broker"))}}})}}},
        "/matches": _read("the open public matches, as list_matches",
                          _json_response("the matches", ref("MatchesBody"))),
        "/matches/{code}/replay": _read(
            "a finished match's signed replay",
            _json_response("the replay document", ref("Replay")),
            parameters=[_path_parameter("code", "the match's code")],
            errors={"404": "no_such_match", "409": "not_finished"}),
        "/leaderboards/{ruleset}": _read(
            "a leaderboard, as the leaderboard request",
            _json_response("a leaderboard reply's body", ref("LeaderboardBody")),
            parameters=[
                _path_parameter("ruleset", "the ruleset's name"),
                _query("by", "which board", _enum(limits.BOARDS)),
                _query("period", "which period", _enum(limits.PERIODS)),
                _query("day", "the day picking the period", {"type": "string",
                                                              "format": "date"}),
                _query("limit", "rows per page", {"type": "integer", "minimum": 1,
                                                  "maximum": limits.MAX_PAGE_ROWS}),
                _query("cursor", "the previous page's next_cursor", {"type": "string"}),
                _query("kind", "people's boards or the bots'", _enum(limits.KINDS)),
                _query("player", "the rows around this player", {"type": "string"}),
            ],
            errors={"404": "no_such_player"}),
        "/ratings/{name}": _read(
            "a player's ratings and their history",
            _json_response("a rating reply's body", ref("RatingBody")),
            parameters=[_path_parameter("name", "the player's name, in any case")],
            errors={"404": "no_such_player"}),
        "/tournaments": _read(
            "tournaments, as tournament_list",
            _json_response("the tournaments' views", ref("TournamentsBody")),
            parameters=[_query("status", "which tournaments", _enum(limits.TOURNAMENT_LISTS))]),
        "/tournaments/{code}": _read(
            "a tournament's view and standings",
            _json_response("a standings reply's body", ref("StandingsBody")),
            parameters=[code], errors=unknown_tournament),
        "/tournaments/{code}/standings.{format}": _read(
            "the standings' export", export_file,
            parameters=[code, _path_parameter("format", "csv or json")],
            errors=unknown_tournament),
        "/tournaments/{code}/rounds.{format}": _read(
            "every round dealt so far, one row per player of each round's match",
            export_file, parameters=[code, _path_parameter("format", "csv or json")],
            errors=unknown_tournament),
        "/tournaments/{code}/rounds/{number}.{format}": _read(
            "round `number` only", export_file,
            parameters=[code, _path_parameter("number", "the round, from 1"),
                        _path_parameter("format", "csv or json")],
            errors={"404": "no_such_tournament, or no_such_resource before it is dealt"}),
        "/daily/{ruleset}": _read(
            "a day's signed board of the daily challenge",
            _json_response("a daily_board reply's body", ref("DailyBoardBody")),
            parameters=[_path_parameter("ruleset", "the ruleset's name"),
                        _query("day", "the day (default: today, UTC)",
                               {"type": "string", "format": "date"})]),
        "/keys": _read(
            "every key the server has signed with, newest first",
            _json_response("the keys", {
                "type": "object", "required": ["keys"],
                "properties": {"keys": {"type": "array", "items": ref("SigningKey")}}})),
        **document_paths,
    }
    # The calendar file is ``/tournaments/CODE.ics``: a template with a suffix would
    # match the same paths as ``/tournaments/{code}``, so it is told there.
    paths["/tournaments/{code}"]["get"]["description"] = (
        "With `.ics` after the code: the tournament's iCalendar file (RFC 5545, "
        "text/calendar), for a scheduled tournament (404 no_such_resource for one its "
        "host starts).")
    paths["/tournaments/{code}"]["get"]["responses"]["200"]["content"]["text/calendar"] = {
        "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": f"{TITLE}: HTTP reads", "version": VERSION,
                 "description": DESCRIPTION + " Any method but GET is answered 405 "
                 "(method_not_allowed) with `Allow: GET`."},
        "servers": [{"url": "http://localhost:8765", "description": "gaps-server's "
                     "default port, shared with the WebSocket"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def documents() -> dict[str, dict[str, Any]]:
    """Every published document by its file name."""
    return {SCHEMA: json_schema(), ASYNCAPI: asyncapi(), OPENAPI: openapi()}


def render(document: dict[str, Any]) -> str:
    """A document as its file holds it: indented JSON, one newline at the end."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


#: The fields whose requests are too many to list.
_EVERY: Final = {
    "id": "every request",
    "code": "every request about a match or a tournament",
}


def ranges_table() -> str:
    """The range of every bounded field of the requests, as docs/protocol.md's table
    (Schema, Ranges) lists them: one row per field and range, naming its requests."""
    import msgspec.inspect as mi  # only this table reads the types' bounds

    rows: dict[tuple[str, str], list[str]] = {}
    for info in mi.multi_type_info(get_args(ClientMessage)):
        assert isinstance(info, mi.StructType)
        for field in info.fields:
            shown = _range_of(field.type)
            if shown is not None:
                rows.setdefault((field.name, shown), []).append(f"`{info.tag}`")
    lines = ["| field | range | in |", "|---|---|---|"]
    for (name, shown), kinds in sorted(rows.items()):
        where = _EVERY.get(name) or ", ".join(kinds)
        lines.append(f"| `{name}` | {shown} | {where} |")
    return "\n".join(lines)


def _range_of(info: Any) -> str | None:
    """A field's bounds in words, or None for a field without any (a choice, a flag)."""
    import msgspec.inspect as mi

    if isinstance(info, mi.UnionType):
        shown = [_range_of(member) for member in info.types]
        bounded = [words for words in shown if words is not None]
        return "; ".join(bounded) or None
    if isinstance(info, mi.IntType) and info.ge is not None and info.le is not None:
        return f"integer {_number(info.ge)} to {_number(info.le)}"
    if isinstance(info, mi.StrType) and (info.max_length or info.pattern) is not None:
        length = (None if info.max_length is None
                  else f"{info.min_length or 0} to {info.max_length} characters")
        pattern = None if info.pattern is None else f"matching `{info.pattern}`"
        return "text of " + ", ".join(words for words in (length, pattern) if words)
    return None


def _number(value: int) -> str:
    """An integer as the docs write it: the large bounds as powers of two."""
    for exponent in (31, 53):
        if abs(value) == 2**exponent - 1:
            return f"{'-' if value < 0 else ''}(2^{exponent} - 1)"
    return str(value)
