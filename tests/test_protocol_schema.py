"""The published documents (docs/protocol/): generated from the message types and never
drifting from them, valid as JSON Schema, AsyncAPI 3.0 and OpenAPI 3.1, served by the
server, and true of docs/protocol.md's example session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate as validate_openapi
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from gaps_protocol import schema
from server.app import Server
from tests.client import http_get
from tests.test_protocol_doc import ANY, session_lines

ROOT = Path(__file__).resolve().parents[1]
ASYNCAPI_SCHEMA = ROOT / "tests" / "data" / "asyncapi" / "3.0.0-without-id.json"


@pytest.fixture(scope="module")
def documents() -> dict[str, dict[str, Any]]:
    return schema.documents()


def test_the_checked_in_documents_are_what_the_types_generate(
    documents: dict[str, dict[str, Any]],
) -> None:
    for name, document in documents.items():
        path = ROOT / "docs" / "protocol" / name
        assert path.read_text(encoding="utf-8") == schema.render(document), (
            f"{path.relative_to(ROOT)} is out of date: run scripts/protocol-docs"
        )


def test_the_script_finds_the_checked_in_documents_up_to_date() -> None:
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "protocol-docs"), "--check"],
        capture_output=True, text=True, check=False,
    )
    assert (checked.returncode, checked.stdout) == (0, "")


def test_the_json_schema_is_valid_and_names_both_directions(
    documents: dict[str, dict[str, Any]],
) -> None:
    document = documents[schema.SCHEMA]
    jsonschema.Draft202012Validator.check_schema(document)
    assert {"ClientMessage", "ServerMessage", "ServerReply", "MatchEvent",
            "TournamentEvent"} <= set(document["$defs"])


def _asyncapi_errors(document: dict[str, Any]) -> list[str]:
    meta = json.loads(ASYNCAPI_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(meta)
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(document)]


def test_the_asyncapi_document_is_valid_asyncapi_3(
    documents: dict[str, dict[str, Any]],
) -> None:
    assert _asyncapi_errors(documents[schema.ASYNCAPI]) == []


def test_the_asyncapi_check_refuses_a_broken_document(
    documents: dict[str, dict[str, Any]],
) -> None:
    broken = json.loads(json.dumps(documents[schema.ASYNCAPI]))
    broken["operations"]["request"]["action"] = "publish"  # AsyncAPI 2's word
    assert _asyncapi_errors(broken)


def test_every_message_type_is_a_message_of_the_asyncapi_channel(
    documents: dict[str, dict[str, Any]],
) -> None:
    document = documents[schema.ASYNCAPI]
    titles = {m["title"] for m in document["components"]["messages"].values()}
    defs = documents[schema.SCHEMA]["$defs"]
    for union in ("ClientMessage", "ServerReply", "MatchEvent", "TournamentEvent"):
        members = {ref["$ref"].rsplit("/", 1)[1] for ref in defs[union]["anyOf"]}
        assert members <= titles, members - titles
    sent = document["operations"]["request"]["messages"]
    assert len(sent) == len(defs["ClientMessage"]["anyOf"])


def test_the_openapi_document_is_valid_openapi_3_1(
    documents: dict[str, dict[str, Any]],
) -> None:
    validate_openapi(documents[schema.OPENAPI])


def test_the_openapi_check_refuses_a_broken_document(
    documents: dict[str, dict[str, Any]],
) -> None:
    broken = json.loads(json.dumps(documents[schema.OPENAPI]))
    del broken["paths"]["/keys"]["get"]["responses"]["200"]["description"]
    with pytest.raises(OpenAPIValidationError):
        validate_openapi(broken)


def test_the_openapi_document_lists_every_read_the_server_serves(
    documents: dict[str, dict[str, Any]],
) -> None:
    paths = set(documents[schema.OPENAPI]["paths"])
    assert {
        "/livez", "/healthz", "/matches", "/matches/{code}/replay", "/leaderboards/{ruleset}",
        "/ratings/{name}", "/tournaments", "/tournaments/{code}",
        "/tournaments/{code}/standings.{format}", "/tournaments/{code}/rounds.{format}",
        "/tournaments/{code}/rounds/{number}.{format}", "/daily/{ruleset}", "/keys",
        "/protocol/schema.json", "/protocol/asyncapi.json", "/protocol/openapi.json",
    } == paths


async def test_the_server_serves_the_documents(
    server: Server, documents: dict[str, dict[str, Any]]
) -> None:
    for name, document in documents.items():
        assert await http_get(server.port, f"/protocol/{name}") == (200, document)


# -- docs/protocol.md's example session, against the schema ------------------------------


def _definition(message: dict[str, Any], defs: dict[str, Any]) -> str:
    """The name of the type ``message`` is, by its tags (as a decoder picks it)."""
    if message["type"] in ("event", "tournament_event"):
        union = "MatchEvent" if message["type"] == "event" else "TournamentEvent"
        tag = message["event"]
    else:
        union = "ServerReply" if message["type"] in _reply_types(defs) else "ClientMessage"
        tag = message["type"]
    mapping = defs[union]["discriminator"]["mapping"]
    assert tag in mapping, f"{tag!r} is no {union} of the schema"
    return str(mapping[tag].rsplit("/", 1)[1])


def _reply_types(defs: dict[str, Any]) -> set[str]:
    return set(defs["ServerReply"]["discriminator"]["mapping"])


def _is_placeholder(error: jsonschema.ValidationError) -> bool:
    """Whether ``error`` is only the example's ``"…"`` (any value; as a member: any
    further members)."""
    if error.instance == ANY:
        return True
    if isinstance(error.instance, dict) and ANY in error.instance:
        return error.validator in ("required", "additionalProperties")
    return False


def test_every_frame_of_the_documented_session_is_one_the_schema_allows(
    documents: dict[str, dict[str, Any]],
) -> None:
    document = documents[schema.SCHEMA]
    defs = document["$defs"]
    checked = 0
    for name, arrow, message in session_lines():
        sent = arrow == "→"
        if sent and message["type"] not in defs["ClientMessage"]["discriminator"]["mapping"]:
            continue  # the session's unknown type, which the server refuses
        message = json.loads(json.dumps(message).replace("<code>", "K7QX2M").replace(
            "<token>", "Zq3secret"))
        kind = _definition(message, defs)
        if sent:
            assert kind in {r["$ref"].rsplit("/", 1)[1] for r in defs["ClientMessage"]["anyOf"]}
        validator = jsonschema.Draft202012Validator(
            {"$ref": f"#/$defs/{kind}", "$defs": defs},
            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
        )
        errors = [e for e in validator.iter_errors(message) if not _is_placeholder(e)]
        assert not errors, (f"{name} {arrow} {message}: " + "; ".join(
            f"{list(e.absolute_path)}: {e.message}" for e in errors))
        checked += 1
    assert checked >= 40
