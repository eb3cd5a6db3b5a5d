"""tests/frame_check.py, which holds every browser test's frames to the published
protocol: what it refuses, and that it sees a page's frames both ways (a routed page's
too)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.frame_check import FrameLog, mismatch
from tests.web_support import WEB, Wire, sign_up

pytest_plugins = ["tests.web_fixtures"]

PONG = {"type": "pong", "id": 1, "server_time": "2026-12-02T10:00:00.000Z"}


def test_a_request_and_a_reply_of_the_protocol_pass() -> None:
    assert mismatch("sent", json.dumps({"type": "ping", "id": 1})) is None
    assert mismatch("received", json.dumps(PONG)) is None


@pytest.mark.parametrize(
    ("way", "frame", "said"),
    [
        ("sent", "{not json", "not JSON"),
        ("sent", json.dumps({"type": "teleport", "id": 1}), "the schema refuses"),
        ("sent", json.dumps({"type": "join_match", "id": 1}), "the schema refuses"),
        ("received", json.dumps({**PONG, "server_time": "yesterday"}), "the schema refuses"),
        ("received", json.dumps({"type": "pong", "id": 1}), "the schema refuses"),
        ("received", json.dumps({**PONG, "extra": 2}), "refuses"),
        ("received", json.dumps({"type": "ping", "id": 1}), "the schema refuses"),
    ],
)
def test_a_frame_out_of_the_protocol_is_named_with_why(way: Any, frame: str, said: str) -> None:
    wrong = mismatch(way, frame)
    assert wrong is not None and wrong.startswith(way) and said in wrong, wrong
    assert repr(frame) in wrong


@WEB[0]
@WEB[1]
@pytest.mark.parametrize("routed", [False, True], ids=["direct", "routed"])
async def test_the_frames_of_a_page_are_seen_both_ways(open_page: Any, routed: bool) -> None:
    page = await open_page()
    if routed:
        await Wire().attach(page)
    frames = FrameLog()
    frames.watch(page)
    await sign_up(page, "ana")
    assert frames.checked["sent"] >= 1 and frames.checked["received"] >= 1, frames.checked
    assert frames.mismatches == []
