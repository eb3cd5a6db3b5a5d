"""server.protocol: every request type decoded into its type of gaps_protocol.messages, or
refused, as docs/protocol.md says."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gaps import RULESETS, Move, Redeal, Ruleset, Seed, Stop, Undo, parse_action
from gaps_protocol.limits import MAX_ID_LENGTH, MAX_SAFE_INTEGER
from gaps_protocol.messages import Error, decode_server_message
from gaps_protocol.messages.common import Message
from gaps_protocol.messages.events import Countdown, RoundStarting, TournamentAnnouncement
from gaps_protocol.messages.replies import Ok
from gaps_protocol.messages.requests import (
    ClearReview,
    CreateMatch,
    CreateTournament,
    GetAuditLog,
    GetReplay,
    Hello,
    JoinMatch,
    LeaveMatch,
    ListMatches,
    ListReviews,
    Ping,
    Play,
    Ready,
    Register,
    Rematch,
    RemoveEntrant,
    Resync,
    ResyncTournament,
    StartMatch,
    Suspend,
    VoidReview,
)
from gaps_protocol.messages.views import RatingView
from gaps_protocol.text import text_problem
from gaps_protocol.times import format_time, parse_time
from server.errors import ERROR_CODES, ServerError
from server.identity import new_token
from server.protocol import (
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    MAX_READ_BYTES,
    PROTOCOL_VERSION,
    REQUEST_TYPES,
    action_of,
    encode,
    error_message,
    parse_request,
    ruleset_of,
    seed_of,
)


def frame(**fields: Any) -> str:
    return json.dumps(fields)


def refusal(text: str | bytes) -> ServerError:
    with pytest.raises(ServerError) as caught:
        parse_request(text)
    return caught.value


def refused_field(**fields: Any) -> ServerError:
    """The refusal of a frame that must be ``bad_message``; returns the error."""
    error = refusal(frame(**fields))
    assert error.code == "bad_message", error.message
    return error


# A valid frame of every request type, with every field it needs.
VALID: dict[str, dict[str, Any]] = {
    "register": {"type": "register", "id": 1, "name": "ana"},
    "hello": {"type": "hello", "id": 1, "token": "secret-token"},
    "create_match": {"type": "create_match", "id": 1},
    "list_matches": {"type": "list_matches", "id": 1},
    "join_match": {"type": "join_match", "id": 1, "code": "K7QX2M"},
    "leave_match": {"type": "leave_match", "id": 1, "code": "K7QX2M"},
    "ready": {"type": "ready", "id": 1, "code": "K7QX2M"},
    "start_match": {"type": "start_match", "id": 1, "code": "K7QX2M"},
    "rematch": {"type": "rematch", "id": 1, "code": "K7QX2M"},
    "action": {"type": "action", "id": 1, "code": "K7QX2M", "seq": 1, "action": "8C"},
    "resync": {"type": "resync", "id": 1, "code": "K7QX2M", "since": 0},
    "get_replay": {"type": "get_replay", "id": 1, "code": "K7QX2M"},
    "ping": {"type": "ping", "id": 1},
    "tournament_resync": {"type": "tournament_resync", "id": 1, "code": "Q4M2ZK", "since": 0},
    "review_list": {"type": "review_list", "id": 1},
    "review_clear": {
        "type": "review_clear", "id": 1, "code": "K7QX2M", "name": "ana", "reason": "typist"
    },
    "review_void": {
        "type": "review_void", "id": 1, "code": "K7QX2M", "name": "ana", "reason": "a script"
    },
    "suspend": {"type": "suspend", "id": 1, "name": "ana", "reason": "a script"},
    "audit_log": {"type": "audit_log", "id": 1},
}

PROTOCOL_DOC = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()
#: The request types docs/protocol.md documents: one "### `type`" heading each.
DOCUMENTED_REQUEST_TYPES = set(re.findall(r"^### `([a-z_]+)`", PROTOCOL_DOC, re.MULTILINE))
#: The error codes of docs/protocol.md's Errors table.
DOCUMENTED_ERROR_CODES = set(re.findall(
    r"^\| `([a-z_]+)` \|",
    PROTOCOL_DOC.split("\n## Errors", 1)[1].split("\n## ", 1)[0],
    re.MULTILINE,
))

CODE_TYPES = ["join_match", "leave_match", "ready", "start_match", "rematch", "action", "resync",
              "get_replay"]


# --- the request types -------------------------------------------------------------------


def test_every_documented_request_type_is_parsed() -> None:
    assert set(VALID) <= DOCUMENTED_REQUEST_TYPES
    assert DOCUMENTED_REQUEST_TYPES <= set(REQUEST_TYPES)


def test_every_request_type_the_server_parses_is_documented() -> None:
    # docs/protocol.md: "unknown_type: the type is not one listed here".
    assert set(REQUEST_TYPES) <= DOCUMENTED_REQUEST_TYPES


def test_the_protocol_version_is_one() -> None:
    assert PROTOCOL_VERSION == 1


def test_a_register_request_carries_its_name_and_id() -> None:
    assert parse_request(frame(type="register", id=1, name="ana")) == Register(id=1, name="ana")


def test_a_register_request_declares_a_bot_only_when_it_says_so() -> None:
    assert parse_request(frame(type="register", name="ana")).bot is False
    assert parse_request(frame(type="register", name="beep", bot=True)) == Register(
        name="beep", bot=True
    )
    assert refused_field(type="register", name="beep", bot="yes").details["field"] == "bot"


def test_bots_are_kept_out_of_a_match_or_tournament_unless_the_host_says_so() -> None:
    assert parse_request(frame(type="create_match")).bots is False
    assert parse_request(frame(type="create_match", bots=True)).bots is True
    assert parse_request(frame(type="tournament_create")).bots is False
    assert parse_request(frame(type="tournament_create", bots=True)).bots is True
    assert refused_field(type="create_match", bots=1).details["field"] == "bots"


def test_a_leaderboard_is_the_peoples_unless_the_bots_are_asked_for() -> None:
    assert parse_request(frame(type="leaderboard")).kind == "people"
    assert parse_request(frame(type="leaderboard", kind="bots")).kind == "bots"
    assert refused_field(type="leaderboard", kind="robots").details["field"] == "kind"


def test_a_tournament_remove_names_the_entrant_and_a_reason_shown_to_all() -> None:
    request = parse_request(frame(
        type="tournament_remove", id=4, code="q4m2zk", player="bob", reason="left early"
    ))
    assert request == RemoveEntrant(id=4, code="Q4M2ZK", player="bob", reason="left early")
    for reason in ("  left early", "left early ", "left   early", "left\u00a0early"):
        refused = refused_field(type="tournament_remove", code="Q4M2ZK", player="bob",
                                reason=reason)
        assert refused.details["field"] == "reason"
    for missing in ("player", "reason"):
        fields = {"type": "tournament_remove", "code": "Q4M2ZK", "player": "bob", "reason": "x"}
        del fields[missing]
        assert refused_field(**fields).details["field"] == missing
    too_long = refused_field(
        type="tournament_remove", code="Q4M2ZK", player="bob", reason="x" * 201
    )
    assert too_long.details["field"] == "reason"


def test_a_register_name_may_use_letters_digits_underscore_dash_and_dot() -> None:
    assert parse_request(frame(type="register", name="Ana_b-2.x")).name == "Ana_b-2.x"


def test_a_register_name_of_two_and_of_twenty_four_characters_is_accepted() -> None:
    assert parse_request(frame(type="register", name="ab")).name == "ab"
    assert parse_request(frame(type="register", name="a" * 24)).name == "a" * 24


@pytest.mark.parametrize(
    "name",
    ["a", "a" * 25, "ana bob", "ana!", "ana\u200b", "ana/..", "<script>", "a\tb", "..", ".",
     ".ana", "_ana", "-ana", "\u202eana", "ana\x1b[2J", "ánа", "", "   ", "  ana  ", "ana ",
     "\u00a0ana", "ana\n"],
)
def test_a_register_name_outside_the_name_rule_is_refused_as_bad_name(name: str) -> None:
    error = refusal(frame(type="register", id=4, name=name))
    assert error.code == "bad_name"
    assert error.details["id"] == 4


def test_a_register_name_far_too_long_is_still_a_bad_name() -> None:
    # docs/protocol.md: bad_name is "a display name is 2-24 letters, digits, ...": a
    # 100-letter name is a display name breaking that rule, like a 25-letter one.
    assert refusal(frame(type="register", name="a" * 100)).code == "bad_name"


@pytest.mark.parametrize("name", [None, 7, True, ["ana"], {"n": "ana"}])
def test_a_register_name_that_is_missing_or_not_text_is_a_bad_message_naming_the_field(
    name: Any,
) -> None:
    fields = {"type": "register"} if name is None else {"type": "register", "name": name}
    assert refused_field(**fields).details["field"] == "name"


def test_a_hello_request_carries_its_token() -> None:
    assert parse_request(frame(type="hello", id="h", token="abc")) == Hello(id="h", token="abc")


@pytest.mark.parametrize("token", [None, "", 12, "t" * 129, ["abc"]])
def test_a_hello_token_that_is_missing_empty_too_long_or_not_text_is_refused(token: Any) -> None:
    fields = {"type": "hello"} if token is None else {"type": "hello", "token": token}
    assert refused_field(**fields).details["field"] == "token"


def test_a_hello_token_of_the_length_new_tokens_have_is_accepted() -> None:
    token = new_token()
    assert parse_request(frame(type="hello", token=token)) == Hello(token=token)


@pytest.mark.parametrize(
    "change", [" {}", "{} ", " {} ", "{}\n", "\t{}", "{}\u00a0", "{}\u200b", "{}=", "{}/x"]
)
def test_a_hello_token_with_anything_around_or_in_it_is_not_the_token(change: str) -> None:
    # docs/protocol.md: the token is compared exactly as sent.
    error = refusal(frame(type="hello", id=3, token=change.format(new_token())))
    assert error.code == "bad_token"
    assert error.details["id"] == 3


def test_a_hello_token_of_only_spaces_is_a_bad_token() -> None:
    assert refusal(frame(type="hello", token="  ")).code == "bad_token"


def test_a_bare_create_match_takes_every_documented_default() -> None:
    request = parse_request(frame(type="create_match", id=2))
    assert request == CreateMatch(
        id=2, ruleset="classic", max_players=2, time_limit_s=600, win_by="time",
        public=False, countdown_s=None, seed=None, bots=False,
    )
    assert isinstance(request, CreateMatch)
    assert ruleset_of(request) is Ruleset.named("classic") and seed_of(request) is None


def test_a_create_match_with_every_field_set_keeps_them_all() -> None:
    request = parse_request(frame(
        type="create_match", id=2, ruleset="addiction", max_players=16, time_limit_s=86400,
        win_by="score", public=True, countdown_s=60, seed="AAAA-BBBB-CCCC-DDDD",
    ))
    assert request == CreateMatch(
        id=2, ruleset="addiction", max_players=16, time_limit_s=86400,
        win_by="score", public=True, countdown_s=60, seed="AAAA-BBBB-CCCC-DDDD",
    )
    assert isinstance(request, CreateMatch)
    assert seed_of(request) == Seed.parse("AAAA-BBBB-CCCC-DDDD")


@pytest.mark.parametrize("name", ["classic", "no-redeal", "addiction", "spaces", "montana",
                                  "paganini"])
def test_create_match_accepts_every_documented_ruleset(name: str) -> None:
    request = parse_request(frame(type="create_match", ruleset=name))
    assert isinstance(request, CreateMatch)
    assert ruleset_of(request).name == name


def test_the_documented_rulesets_are_all_the_engine_has() -> None:
    assert set(RULESETS) == {"classic", "no-redeal", "addiction", "spaces", "montana",
                             "paganini"}


def test_a_ruleset_name_is_read_in_any_case_but_not_with_spaces_around() -> None:
    request = parse_request(frame(type="create_match", ruleset="Montana"))
    assert isinstance(request, CreateMatch)
    assert ruleset_of(request) is Ruleset.named("montana")
    assert refused_field(type="create_match", ruleset="  montana ").details["field"] == "ruleset"


@pytest.mark.parametrize("ruleset", ["gaps", "", "classic2", 3, None, True, "x" * 40, " classic"])
def test_an_unknown_or_malformed_ruleset_is_refused_naming_the_ruleset_field(
    ruleset: Any,
) -> None:
    error = refused_field(type="create_match", id=9, ruleset=ruleset)
    assert error.details["field"] == "ruleset"
    assert error.details["id"] == 9


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("max_players", [1, 2, 16], [0, -1, 17, 2.0, "2", True, None, [2]]),
        ("time_limit_s", [1, 600, 86400], [0, -1, 86401, 600.5, "600", False, None]),
        ("countdown_s", [0, 3, 60], [-1, 61, 1.5, "3", True]),
    ],
)
def test_create_match_integers_accept_their_range_and_refuse_the_rest_naming_the_field(
    field: str, good: list[Any], bad: list[Any]
) -> None:
    for value in good:
        request = parse_request(frame(type="create_match", **{field: value}))
        assert getattr(request, field) == value
    for value in bad:
        if field == "countdown_s" and value is None:
            continue
        error = refused_field(type="create_match", **{field: value})
        assert error.details["field"] == field, value


def test_a_null_countdown_means_the_servers_default() -> None:
    request = parse_request(frame(type="create_match", countdown_s=None))
    assert isinstance(request, CreateMatch)
    assert request.countdown_s is None


@pytest.mark.parametrize("win_by", ["fastest", "best", "TIME", "", 1, None, True])
def test_win_by_is_only_time_or_score(win_by: Any) -> None:
    assert refused_field(type="create_match", win_by=win_by).details["field"] == "win_by"


@pytest.mark.parametrize("public", [0, 1, "true", "yes", None, []])
def test_public_must_be_a_json_boolean(public: Any) -> None:
    assert refused_field(type="create_match", public=public).details["field"] == "public"


def test_a_seed_is_read_as_a_share_code_in_any_case_with_or_without_dashes() -> None:
    seed = Seed.parse("AAAA-BBBB-CCCC-DDDD")
    for text in ["AAAA-BBBB-CCCC-DDDD", "aaaabbbbccccdddd", "aaaa bbbb cccc dddd"]:
        request = parse_request(frame(type="create_match", seed=text))
        assert isinstance(request, CreateMatch)
        assert request.seed == text and seed_of(request) == seed


def test_a_seed_round_trips_through_its_share_code() -> None:
    seed = Seed.generate()
    request = parse_request(frame(type="create_match", seed=str(seed)))
    assert isinstance(request, CreateMatch)
    assert seed_of(request) == seed


def test_a_null_seed_means_a_secret_seed() -> None:
    request = parse_request(frame(type="create_match", seed=None))
    assert isinstance(request, CreateMatch)
    assert request.seed is None


@pytest.mark.parametrize(
    "seed", ["", "   ", "AAAA-BBBB-CCCC-DDD!", "AAAAB", "----", 12345, ["AAAA"], "A" * 65,
             " AAAA-BBBB-CCCC-DDDD", "AAAA\u00a0BBBB-CCCC-DDDD"]
)
def test_a_seed_that_is_not_a_share_code_is_refused_naming_the_seed_field(seed: Any) -> None:
    error = refused_field(type="create_match", id=5, seed=seed)
    assert error.details["field"] == "seed"
    assert error.details["id"] == 5


def test_list_matches_needs_nothing_but_its_type() -> None:
    assert parse_request(frame(type="list_matches", id="l-2")) == ListMatches(id="l-2")


def test_join_match_defaults_to_the_player_role_and_upper_cases_the_code() -> None:
    assert parse_request(frame(type="join_match", id=3, code="k7qx2m")) == JoinMatch(
        id=3, code="K7QX2M", role="player"
    )
    assert refused_field(type="join_match", code=" k7qx2m ").details["field"] == "code"


def test_a_rematch_is_of_a_new_deal_unless_it_asks_for_the_same_seed() -> None:
    request = parse_request(frame(type="rematch", id=1, code="k7qx2m"))
    assert request == Rematch(id=1, code="K7QX2M", same_seed=False)
    same = parse_request(frame(type="rematch", id=1, code="K7QX2M", same_seed=True))
    assert isinstance(same, Rematch) and same.same_seed is True
    assert refused_field(type="rematch", id=1, code="K7QX2M", same_seed="yes").details[
        "field"] == "same_seed"


def test_join_match_accepts_the_spectator_role() -> None:
    request = parse_request(frame(type="join_match", code="K7QX2M", role="spectator"))
    assert isinstance(request, JoinMatch)
    assert request.role == "spectator"


@pytest.mark.parametrize("role", ["host", "Player", "", 1, None])
def test_join_match_refuses_any_other_role(role: Any) -> None:
    assert refused_field(type="join_match", code="K7QX2M", role=role).details["field"] == "role"


@pytest.mark.parametrize("kind", CODE_TYPES)
@pytest.mark.parametrize(
    "code", [None, "", "   ", 123456, ["K7QX2M"], "K" * 17, "K7-QX2", "K7QX2\x00", "../x", "K7 QX",
             "K7QX2M\n", " K7QX2M"]
)
def test_every_request_about_a_match_needs_a_code_of_letters_and_digits(
    kind: str, code: Any
) -> None:
    fields = dict(VALID[kind])
    if code is None:
        del fields["code"]
    else:
        fields["code"] = code
    assert refused_field(**fields).details["field"] == "code"


def test_leave_match_start_match_and_get_replay_carry_the_code() -> None:
    assert parse_request(frame(type="leave_match", id=4, code="abc")) == LeaveMatch(
        id=4, code="ABC")
    assert parse_request(frame(type="start_match", id=6, code="abc")) == StartMatch(
        id=6, code="ABC")
    assert parse_request(frame(type="get_replay", id=9, code="abc")) == GetReplay(
        id=9, code="ABC")


def test_ready_defaults_to_true_and_takes_false() -> None:
    assert parse_request(frame(type="ready", id=5, code="K7QX2M")) == Ready(
        id=5, code="K7QX2M", ready=True)
    assert parse_request(frame(type="ready", code="K7QX2M", ready=False)).ready is False


@pytest.mark.parametrize("ready", [0, 1, "false", None])
def test_ready_refuses_anything_but_a_boolean(ready: Any) -> None:
    assert refused_field(type="ready", code="K7QX2M", ready=ready).details["field"] == "ready"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8C", Move.parse("8C")),
        ("3h", Move.parse("3H")),
        ("10d", Move.parse("TD")),
        ("8♣", Move.parse("8C")),
        ("2H>3", Move.parse("2H>3")),
        ("8C>r2c6", Move.parse("8C>r2c6")),
        ("redeal", Redeal()),
        ("UNDO", Undo()),
        ("Stop", Stop()),
    ],
)
def test_an_action_is_read_in_the_rules_notation(text: str, expected: Any) -> None:
    request = parse_request(frame(type="action", id=7, code="k7qx2m", seq=1, action=text))
    assert request == Play(id=7, code="K7QX2M", seq=1, action=text)
    assert isinstance(request, Play) and action_of(request) == expected


@pytest.mark.parametrize(
    "text",
    ["", "  ", "8", "8X", "1C", "ZZ", "2H>5", "2H>0", "8C>r5c1", "8C>r1c14", "8C>r0c1",
     "8C>x", "2H>", ">3", "redeal now", "8C>r٣c1", "2H>٣", "a" * 17, " stop ", "8C ",
     "\u00a08C", "8C\u2028", "8C\u0085"],
)
def test_an_action_not_in_the_rules_notation_is_refused_naming_the_action_field(
    text: str,
) -> None:
    error = refused_field(type="action", id=7, code="K7QX2M", seq=1, action=text)
    assert error.details["field"] == "action"
    assert error.details["id"] == 7
    assert error.message


@pytest.mark.parametrize("action", [None, 8, ["8C"], {"card": "8C"}])
def test_an_action_that_is_missing_or_not_text_is_refused(action: Any) -> None:
    fields = dict(VALID["action"])
    if action is None:
        del fields["action"]
    else:
        fields["action"] = action
    assert refused_field(**fields).details["field"] == "action"


def test_an_action_read_again_is_the_same_action_and_a_bad_one_is_refused_every_time() -> None:
    # Parsed actions are remembered: a remembered one must equal a fresh parse, and a
    # refusal must not be remembered as an action.
    for _ in range(3):
        request = parse_request(frame(type="action", code="K7QX2M", seq=1, action="8C>r2c6"))
        assert isinstance(request, Play) and action_of(request) == parse_action("8C>r2c6")
        error = refused_field(type="action", id=7, code="K7QX2M", seq=1, action="8C>r5c1")
        assert error.details["field"] == "action"


def test_an_action_seq_is_accepted_from_one_up_to_the_largest_32_bit_integer() -> None:
    for seq in (1, 2, 2**31 - 1):
        request = parse_request(frame(type="action", code="K7QX2M", seq=seq, action="8C"))
        assert isinstance(request, Play)
        assert request.seq == seq


@pytest.mark.parametrize("seq", [None, 0, -1, 2**31, 1.0, 1.5, "1", True, [1]])
def test_an_action_seq_outside_one_to_two_to_the_31_is_refused(seq: Any) -> None:
    fields = dict(VALID["action"])
    if seq is None:
        del fields["seq"]
    else:
        fields["seq"] = seq
    assert refused_field(**fields).details["field"] == "seq"


def test_resync_carries_the_seq_to_resume_after() -> None:
    assert parse_request(frame(type="resync", id=8, code="k7qx2m", since=12)) == Resync(
        id=8, code="K7QX2M", since=12
    )
    assert parse_request(frame(type="resync", code="K7QX2M", since=0)).since == 0


@pytest.mark.parametrize("since", [None, -1, 2**31, 1.5, "12", False])
def test_resync_refuses_a_missing_or_bad_since(since: Any) -> None:
    fields = dict(VALID["resync"])
    if since is None:
        del fields["since"]
    else:
        fields["since"] = since
    assert refused_field(**fields).details["field"] == "since"


def test_tournament_resync_carries_the_tournament_code_and_the_seq_to_resume_after() -> None:
    request = parse_request(frame(type="tournament_resync", id=8, code="q4m2zk", since=12))
    assert request == ResyncTournament(id=8, code="Q4M2ZK", since=12)
    assert parse_request(frame(type="tournament_resync", code="Q4M2ZK", since=0)) == (
        ResyncTournament(code="Q4M2ZK", since=0)
    )
    assert parse_request(frame(type="tournament_resync", code="Q4M2ZK", since=2**31 - 1)) == (
        ResyncTournament(code="Q4M2ZK", since=2**31 - 1)
    )


@pytest.mark.parametrize("since", [None, -1, 2**31, 1.5, "12", False])
def test_tournament_resync_refuses_a_missing_or_bad_since(since: Any) -> None:
    fields = dict(VALID["tournament_resync"])
    if since is None:
        del fields["since"]
    else:
        fields["since"] = since
    error = refused_field(**fields)
    assert error.details["field"] == "since" and "tournament_resync" in error.message


@pytest.mark.parametrize("code", [None, "", "   ", 123456, ["Q4M2ZK"], "Q" * 17])
def test_tournament_resync_refuses_a_missing_or_bad_code(code: Any) -> None:
    fields = dict(VALID["tournament_resync"])
    if code is None:
        del fields["code"]
    else:
        fields["code"] = code
    assert refused_field(**fields).details["field"] == "code"


def test_a_ping_needs_nothing_but_its_type() -> None:
    assert parse_request(frame(type="ping", id=9)) == Ping(id=9)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_every_valid_request_keeps_its_id(kind: str) -> None:
    fields = dict(VALID[kind], id="client-x/42")
    assert parse_request(json.dumps(fields)).id == "client-x/42"


@pytest.mark.parametrize(
    "request_id",
    [0, 7, -7, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, "x" * MAX_ID_LENGTH, "zoë", "a b/42",
     "\U0001f600", None],
)
def test_an_id_is_null_an_integer_in_the_safe_range_or_a_short_text(request_id: Any) -> None:
    assert parse_request(frame(type="ping", id=request_id)).id == request_id


@pytest.mark.parametrize(
    "request_id",
    [MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 10**400, 1e300, -1e16, "x" * (MAX_ID_LENGTH + 1),
     True, False, [1, 2], {"n": 1}, [], 2.5, 1e15, 7.0, "", "a\x00", "a\x1b[2J", "\u202eab",
     "a\u200b", "a\u2028", " a", "a ", "a  b", "a\u00a0b"],
)
def test_any_other_id_is_a_bad_message_on_the_id_field_answered_with_the_id_null(
    request_id: Any,
) -> None:
    for kind in ("ping", "dance", None):
        fields = {"id": request_id} if kind is None else {"type": kind, "id": request_id}
        error = refusal(json.dumps(fields))
        assert error.code == "bad_message"
        assert error.details == {"id": None, "field": "id"}
        assert len(error.message) <= 300


@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_request_without_an_id_has_the_id_none(kind: str) -> None:
    fields = {k: v for k, v in VALID[kind].items() if k != "id"}
    assert parse_request(json.dumps(fields)).id is None


@pytest.mark.parametrize("kind", sorted(VALID))
def test_unknown_extra_fields_are_ignored(kind: str) -> None:
    fields = dict(VALID[kind], extra="ignored", another=[1, 2, 3])
    assert parse_request(json.dumps(fields)) == parse_request(json.dumps(VALID[kind]))


# --- bad frames --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "not json", "{", '{"type": "ping",}', "{'type': 'ping'}",
                                  '{"type": "ping"} {"type": "ping"}'])
def test_a_frame_that_is_not_json_is_bad_json(text: str) -> None:
    assert refusal(text).code == "bad_json"


@pytest.mark.parametrize("text", ["[]", '[{"type": "ping"}]', '"ping"', "1", "null", "true"])
def test_a_json_frame_that_is_not_an_object_is_bad_json(text: str) -> None:
    assert refusal(text).code == "bad_json"


def test_a_frame_that_starts_with_a_byte_order_mark_is_bad_json_saying_so() -> None:
    error = refusal('\ufeff{"type": "ping", "id": 1}')
    assert error.code == "bad_json" and "BOM" in error.message


def test_a_binary_frame_is_bad_json_even_when_it_holds_valid_json() -> None:
    assert refusal(b'{"type": "ping", "id": 1}').code == "bad_json"


def test_a_frame_of_exactly_the_maximum_size_is_read() -> None:
    head = '{"type": "ping", "pad": "'
    text = head + "x" * (MAX_FRAME_BYTES - len(head) - 2) + '"}'
    assert len(text.encode()) == MAX_FRAME_BYTES
    assert isinstance(parse_request(text), Ping)


def test_the_transport_doc_gives_the_request_size_and_the_read_limit() -> None:
    # Frames between the two are read, to answer bad_json; past the second, close 1009.
    transport = PROTOCOL_DOC.split("\n## Transport", 1)[1].split("\n## ", 1)[0]
    assert MAX_FRAME_BYTES < MAX_READ_BYTES
    assert f"A request is at most {MAX_FRAME_BYTES} bytes" in transport
    assert f"frames of up to {MAX_READ_BYTES} bytes" in transport
    assert f"over {MAX_READ_BYTES} bytes closes the connection" in transport
    assert f"nest\n  at most {MAX_DEPTH} deep" in transport


def test_a_frame_one_byte_over_the_maximum_is_bad_json() -> None:
    head = '{"type": "ping", "pad": "'
    text = head + "x" * (MAX_FRAME_BYTES - len(head) - 1) + '"}'
    assert len(text.encode()) == MAX_FRAME_BYTES + 1
    assert refusal(text).code == "bad_json"


def test_the_frame_limit_counts_utf8_bytes_not_characters() -> None:
    # docs/protocol.md: "Frames are at most 4096 bytes". 3000 'é' are 6000 bytes.
    text = json.dumps({"type": "ping", "id": "é" * 3000}, ensure_ascii=False)
    assert len(text) < MAX_FRAME_BYTES < len(text.encode())
    assert refusal(text).code == "bad_json"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_frame_using_non_json_number_constants_is_bad_json(constant: str) -> None:
    # NaN and Infinity are not JSON (RFC 8259): echoing such an id would make the reply
    # itself a frame that strict JSON clients cannot read.
    assert refusal('{"type": "ping", "id": ' + constant + '}').code == "bad_json"


@pytest.mark.parametrize("number", ["1e309", "-1e309", "1E400", "123456789e999"])
def test_a_number_past_a_doubles_range_is_refused_in_a_field_and_ignored_elsewhere(
    number: str,
) -> None:
    # An id or a count is an integer written as one: never read as inf, never echoed.
    error = refusal(f'{{"type": "ping", "id": {number}}}')
    assert (error.code, error.details) == ("bad_message", {"id": None, "field": "id"})
    error = refusal(f'{{"type": "create_match", "id": 3, "max_players": {number}}}')
    assert (error.code, error.details) == ("bad_message", {"id": 3, "field": "max_players"})
    assert parse_request(f'{{"type": "ping", "id": 4, "extra": [[{number}]]}}') == Ping(id=4)


@pytest.mark.parametrize("written", ["1e2", "1E2", "1.0", "-0", "100.0", "1e0", "0.0", "-0.0"])
def test_an_id_is_an_integer_written_as_one_so_that_it_comes_back_as_sent(written: str) -> None:
    # docs/protocol.md, Transport: 1e2 would come back as 100.0, -0 as 0.
    error = refusal(f'{{"type": "ping", "id": {written}}}')
    assert (error.code, error.details) == ("bad_message", {"id": None, "field": "id"})
    assert refusal(f'{{"type": "dance", "id": {written}}}').details == {"id": None, "field": "id"}


def test_an_id_of_zero_written_as_zero_is_taken() -> None:
    assert parse_request('{"type": "ping", "id": 0}') == Ping(id=0)
    assert parse_request('{"type": "ping", "id" : 0 , "x": -0}') == Ping(id=0)


@pytest.mark.parametrize("field", ["seq", "max_players", "since", "limit", "rounds"])
@pytest.mark.parametrize("written", ["1.0", "1e2", "2E0", "1.5"])
def test_every_number_of_a_request_is_an_integer_written_as_one(field: str, written: str) -> None:
    kind = {"seq": "action", "max_players": "create_match", "since": "resync",
            "limit": "leaderboard", "rounds": "tournament_create"}[field]
    fields = dict(VALID.get(kind, {"type": kind, "id": 1}))
    fields[field] = "NUMBER"
    error = refusal(json.dumps(fields).replace('"NUMBER"', written))
    assert (error.code, error.details["field"]) == ("bad_message", field)


@pytest.mark.parametrize(
    "text",
    ['{"type": "ping", "id": "\\ud800"}', '{"type": "ping", "id": "a\\udfff"}',
     '{"type": "ping", "id": "\\ude00\\ud83d"}', '{"type": "\\ud800", "id": 1}',
     '{"type": "ping", "\\udc00": 1}', '{"type": "register", "name": "an\\uDBFFa"}',
     '{"type": "ping", "x": [{"y": ["\\ud800"]}]}'],
)
def test_an_escaped_lone_surrogate_anywhere_is_bad_json(text: str) -> None:
    # json.loads reads "\ud800" as a lone surrogate, which UTF-8 cannot encode: the reply
    # echoing it would fail to be sent at all.
    error = refusal(text)
    assert error.code == "bad_json"
    assert error.details == {}


def test_an_escaped_surrogate_pair_is_the_character_it_encodes() -> None:
    assert parse_request('{"type": "ping", "id": "\\ud83d\\ude00"}').id == "\U0001f600"


def test_a_backslash_before_u_d800_in_a_string_is_no_surrogate() -> None:
    assert parse_request('{"type": "ping", "id": "\\\\ud800"}').id == "\\ud800"


def nested(depth: int) -> str:
    """A ping whose ``extra`` field makes the frame nest ``depth`` arrays and objects."""
    return '{"type": "ping", "id": 1, "extra": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_a_frame_nested_as_deep_as_allowed_is_read() -> None:
    assert parse_request(nested(MAX_DEPTH)) == Ping(id=1)


def test_a_frame_nested_one_level_too_deep_is_bad_json() -> None:
    error = refusal(nested(MAX_DEPTH + 1))
    assert error.code == "bad_json"
    assert str(MAX_DEPTH) in error.message


@pytest.mark.parametrize("opening", ["[", '{"a":', '[{"a":'])
def test_a_frame_nested_two_thousand_deep_within_the_size_limit_is_bad_json(opening: str) -> None:
    # The case: json.loads would recurse until RecursionError (internal_error).
    closing = {"[": "]", '{"a":': "}", '[{"a":': "}]"}[opening]
    count = (MAX_FRAME_BYTES - 40) // (len(opening) + len(closing))
    text = '{"type": "ping", "x": ' + opening * count + "1" + closing * count + "}"
    assert len(text.encode()) <= MAX_FRAME_BYTES and count >= 500
    assert refusal(text).code == "bad_json"


def test_an_unbalanced_deep_frame_is_bad_json_too() -> None:
    assert refusal("[" * 3000).code == "bad_json"
    assert refusal('{"a":' * 800).code == "bad_json"


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"type": "ping", "id": 2, "x": ["[{" * 300 + '\\"' + "[" * 3]})
    assert parse_request(text) == Ping(id=2)


@pytest.mark.parametrize("fields", [{}, {"id": 3}, {"type": None, "id": 3}, {"type": 7, "id": 3},
                                    {"type": ["ping"], "id": 3}])
def test_a_frame_without_a_text_type_is_a_bad_message_naming_the_type_field(
    fields: dict[str, Any],
) -> None:
    error = refusal(json.dumps(fields))
    assert error.code == "bad_message"
    assert error.details.get("field") == "type"
    assert error.details.get("id") == fields.get("id")


@pytest.mark.parametrize("kind", ["dance", "", "PING", "Register", "event", "error"])
def test_an_unknown_type_is_refused_as_unknown_type_with_the_id(kind: str) -> None:
    error = refusal(frame(type=kind, id=11))
    assert error.code == "unknown_type"
    assert error.details["id"] == 11


def test_the_unknown_type_message_quotes_the_type_as_the_example_session_shows() -> None:
    assert refusal(frame(type="dance", id=11)).message == "unknown message type 'dance'"


@pytest.mark.parametrize("kind", sorted(VALID))
def test_every_request_type_refuses_a_bad_field_with_bad_message_and_the_id(kind: str) -> None:
    bad = {
        "register": {"name": 5}, "hello": {"token": 5}, "create_match": {"max_players": 0},
        "list_matches": None, "join_match": {"role": "x"}, "leave_match": {"code": 5},
        "ready": {"ready": "yes"}, "start_match": {"code": ""}, "rematch": {"same_seed": 1},
        "action": {"seq": 0},
        "resync": {"since": -1}, "get_replay": {"code": None}, "ping": None,
        "tournament_resync": {"since": "12"}, "review_list": None, "audit_log": None,
        "review_clear": {"reason": ""}, "review_void": {"name": 5}, "suspend": {"name": ""},
    }[kind]
    if bad is None:  # nothing to get wrong in list_matches and ping
        return
    error = refusal(json.dumps(dict(VALID[kind], id="req-1", **bad)))
    assert error.code == "bad_message"
    assert error.details["id"] == "req-1"
    assert error.details["field"] == next(iter(bad))
    assert kind in error.message


def test_a_bad_message_explains_what_the_field_must_be_and_what_it_got() -> None:
    error = refused_field(type="create_match", max_players=99)
    assert "max_players" in error.message
    assert "1 to 16" in error.message
    assert "99" in error.message


def test_a_bad_message_is_short_even_when_the_bad_value_is_long() -> None:
    error = refused_field(type="hello", token="t" * 3000)
    assert len(error.message) <= 300


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_any_text_frame_is_parsed_or_refused_with_a_documented_error(text: str) -> None:
    try:
        parse_request(text)
    except ServerError as error:
        assert error.code in ERROR_CODES


#: Unicode text, as a text frame can carry it (lone surrogates are tested on their own).
unicode_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | unicode_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_text, inner,
                                                               max_size=3),
    max_leaves=6,
)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(sorted(VALID)),
    st.dictionaries(
        st.sampled_from(["name", "token", "ruleset", "max_players", "time_limit_s", "win_by",
                         "public", "countdown_s", "seed", "code", "role", "ready", "seq",
                         "action", "since"]),
        json_values | st.sampled_from(["8C", "2H>3", "redeal", "classic", "K7QX2M"]),
        max_size=4,
    ),
)
def test_any_request_with_any_field_values_is_parsed_or_refused_as_bad_message(
    kind: str, changes: dict[str, Any]
) -> None:
    fields = dict(VALID[kind], id=77, **{k: v for k, v in changes.items()})
    fields["type"] = kind
    try:
        parse_request(json.dumps(fields))
    except ServerError as error:
        assert error.code in ("bad_message", "bad_name", "bad_token")
        assert error.details["id"] == 77
        if error.code == "bad_message":
            assert error.details["field"] in changes


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=20))
def test_any_action_text_is_a_play_or_a_bad_message_on_the_action_field(text: str) -> None:
    try:
        request = parse_request(frame(type="action", code="K7QX2M", seq=1, action=text))
    except ServerError as error:
        assert error.code == "bad_message"
        assert error.details["field"] == "action"
    else:
        assert isinstance(request, Play)
        assert action_of(request) == parse_action(text) and text_problem(text) is None


# --- errors and encoding -----------------------------------------------------------------


def wire(message: Message) -> Any:
    """``message`` as a client reads it: the frame ``encode`` writes, parsed."""
    return json.loads(encode(message))


def test_an_error_message_has_type_id_code_and_message() -> None:
    error = ServerError("no_such_match", "no live match has the code ZZZZZZ")
    assert wire(error_message(error, 7)) == {
        "type": "error", "id": 7, "code": "no_such_match",
        "message": "no live match has the code ZZZZZZ",
    }


def test_an_error_message_without_a_request_id_has_the_id_null() -> None:
    message = error_message(ServerError("bad_json", "not JSON"))
    assert message.id is None
    assert wire(message)["id"] is None


def test_an_error_message_adds_the_reason_of_an_illegal_action_as_documented() -> None:
    error = ServerError("illegal_action", "2S>1: r1c1 holds 3C, not a gap", reason="not_a_gap")
    assert wire(error_message(error, 7)) == {
        "type": "error", "id": 7, "code": "illegal_action",
        "message": "2S>1: r1c1 holds 3C, not a gap", "reason": "not_a_gap",
    }


def test_an_error_message_adds_the_field_of_a_bad_message() -> None:
    error = refusal(frame(type="action", id="a1", code="K7QX2M", seq=0, action="8C"))
    message = error_message(error)
    assert (message.id, message.code, message.field) == ("a1", "bad_message", "seq")
    sent = wire(message)
    assert sent["type"] == "error"
    assert set(sent) == {"type", "id", "code", "message", "field"}


def test_an_error_message_echoes_the_id_the_parser_found_over_the_callers() -> None:
    error = refusal(frame(type="dance", id=11))
    assert error_message(error, None).id == 11
    assert error_message(error, 99).id == 11


def test_an_error_message_echoes_any_valid_id_as_is() -> None:
    for request_id in (0, "x", -3, None, "é" * MAX_ID_LENGTH):
        error = refusal(json.dumps({"type": "nope", "id": request_id}))
        assert error_message(error).id == request_id
        assert wire(error_message(error))["id"] == request_id


def test_the_id_key_never_appears_twice_or_as_a_detail() -> None:
    error = ServerError("bad_message", "m", field="seq", id=5)
    message = error_message(error, 6)
    assert message.id == 5
    pairs = json.loads(encode(message), object_pairs_hook=lambda pairs: pairs)
    assert [key for key, _ in pairs].count("id") == 1


def test_an_error_of_an_unknown_code_cannot_be_made() -> None:
    with pytest.raises(ValueError):
        ServerError("made_up", "no such code")


def test_every_documented_error_code_exists() -> None:
    assert {"bad_json", "bad_message", "unknown_type", "bad_name"} <= DOCUMENTED_ERROR_CODES
    assert DOCUMENTED_ERROR_CODES <= set(ERROR_CODES)


def test_every_error_code_the_server_may_send_is_documented() -> None:
    assert set(ERROR_CODES) <= DOCUMENTED_ERROR_CODES


def countdown(players: list[int]) -> Countdown:
    return Countdown(
        match="K7QX2M", seq=3, t_ms=0, countdown_ms=5000, commitment="0" * 64, players=players
    )


def test_encode_writes_compact_json_with_no_spaces() -> None:
    assert encode(countdown([1, 2])) == (
        '{"event":"countdown","type":"event","match":"K7QX2M","seq":3,"t_ms":0,'
        f'"countdown_ms":5000,"commitment":"{"0" * 64}","players":[1,2]}}'
    )


def test_encode_writes_the_members_in_the_order_the_type_declares_them() -> None:
    message = Error(id=9, code="rate_limited", message="slow down", retry_after_ms=500)
    assert list(wire(message)) == ["type", "id", "code", "message", "retry_after_ms"]


def test_encode_writes_non_ascii_text_as_is() -> None:
    text = encode(Error(id="8♣", code="bad_name", message="zoë is taken"))
    assert "8♣" in text and "zoë" in text
    assert wire(Error(id="8♣", code="bad_name", message="zoë is taken"))["message"] == (
        "zoë is taken"
    )


def test_encode_round_trips_an_error_reply() -> None:
    message = error_message(refusal(frame(type="dance", id=11)))
    assert wire(message) == {
        "type": "error", "id": 11, "code": "unknown_type",
        "message": "unknown message type 'dance'",
    }
    assert decode_server_message(encode(message)) == message


def rating(mu: float, sigma: float, ordinal: float) -> RatingView:
    return RatingView(
        player_id=1, ruleset="classic", mu=mu, sigma=sigma, ordinal=ordinal, games=3,
        provisional=True,
    )


def test_encode_writes_a_float_that_is_not_finite_as_null_not_as_infinity() -> None:
    message = rating(float("inf"), float("-inf"), float("nan"))
    assert json.loads(encode(message), parse_constant=refuse_constant) == {
        "player_id": 1, "ruleset": "classic", "mu": None, "sigma": None, "ordinal": None,
        "games": 3, "provisional": True,
    }
    assert wire(rating(1.5, 0.25, -2.0))["mu"] == 1.5


def test_encode_writes_a_lone_surrogate_as_the_replacement_character() -> None:
    starting = RoundStarting(
        tournament="TQ4M2Z", seq=1, round=1, match=None, countdown_ms=0,
        tables=["\udfff", "zoë"],
    )
    assert json.loads(encode(starting).encode().decode())["tables"] == ["\ufffd", "zoë"]
    error = Error(id="a\ud800b", code="bad_message", message="\ude00", field="x")
    assert json.loads(encode(error).encode().decode()) == {
        "type": "error", "id": "a\ufffdb", "code": "bad_message", "message": "\ufffd",
        "field": "x",
    }


def test_encode_writes_a_time_in_the_protocols_one_form() -> None:
    moment = datetime(2026, 11, 29, 8, 5, 3, 120_000, tzinfo=UTC)
    said = TournamentAnnouncement(tournament="TQ4M2Z", seq=1, text="hi", at=format_time(moment))
    assert wire(said)["at"] == "2026-11-29T08:05:03.120Z"
    assert parse_time(wire(said)["at"]) == moment


def test_encode_writes_integers_past_64_bits_whole() -> None:
    for request_id in (2**70, -(2**64), 2**63):
        assert wire(Error(id=request_id, code="bad_json", message="x"))["id"] == request_id


def refuse_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


#: Any text, lone surrogates included: what a buggy row or request might put in a reply.
any_text = st.text(max_size=10)
#: Replies and events carrying anything their members' Python types allow, and worse
#: than the protocol's constraints allow (no frame is validated on its way out).
server_messages = st.one_of(
    st.builds(
        Error,
        id=st.none() | st.integers() | any_text,
        code=st.sampled_from(sorted(ERROR_CODES)),
        message=any_text,
        field=any_text,
        reason=st.none() | any_text,
    ),
    st.builds(
        RoundStarting,
        tournament=any_text, seq=st.integers(), round=st.integers(), match=st.none() | any_text,
        countdown_ms=st.integers(), tables=st.lists(any_text, max_size=3),
    ),
    st.builds(rating, st.floats(), st.floats(), st.floats()),
)


@settings(max_examples=200, deadline=None)
@given(server_messages)
def test_encode_always_gives_strict_json_that_utf8_holds(message: Message) -> None:
    text = encode(message)
    assert json.loads(text.encode().decode(), parse_constant=refuse_constant) is not None


@settings(max_examples=300, deadline=None)
@given(server_messages)
def test_encode_says_what_the_standard_library_says(message: Message) -> None:
    try:
        expected = json.dumps(msgspec.to_builtins(message), allow_nan=False, ensure_ascii=False)
        expected.encode()  # no lone surrogate
    except (ValueError, TypeError):
        assume(False)
    assert json.loads(encode(message)) == json.loads(expected)


# --- text fields and display strings -----------------------------------------------------


def tournament_name(name: Any) -> str:
    request = parse_request(frame(type="tournament_create", id=1, name=name))
    assert isinstance(request, CreateTournament)
    return request.name


@pytest.mark.parametrize(
    "name", ["Friday Cup", "Coupe d’été ♣", "東京 杯", "Cup 🏆", "x" * 64, "A - B"]
)
def test_a_tournament_name_is_taken_as_sent(name: str) -> None:
    assert tournament_name(name) == name


@pytest.mark.parametrize(
    "name",
    ["\x1b[2JCup", "Cup\x1b]0;owned\x07", "\u202eevil", "Cup\u200b", "Cup\u2066x\u2069", "a\nb",
     "a\tb", "a\rb", "\x00", "a\u2028b", "a\u2029b", "\ue000", "a\U000e0001", "a\u0378", "\x7f",
     "\u0085", "\ufeffCup", "   ", "", "x" * 65, "  Friday   Cup ", " Cup", "Cup ", "Friday  Cup",
     "Friday\u00a0Cup", "Friday\u3000Cup", "Friday\u2009Cup"],
)
def test_a_tournament_name_the_text_rule_refuses_is_a_bad_message_on_the_name(
    name: str,
) -> None:
    error = refused_field(type="tournament_create", id=6, name=name)
    assert error.details == {"id": 6, "field": "name"}


def test_a_tournament_without_a_name_is_called_tournament() -> None:
    request = parse_request(frame(type="tournament_create"))
    assert isinstance(request, CreateTournament)
    assert request.name == "Tournament"


@pytest.mark.parametrize(
    ("kind", "field"),
    [("create_match", "ruleset"), ("create_match", "seed"), ("action", "action"),
     ("leaderboard", "cursor"), ("leaderboard", "day"), ("rating", "name"),
     ("daily_board", "day"), ("tournament_create", "start_at"), ("join_match", "code")],
)
@pytest.mark.parametrize("bad", ["\x00", "\x1b[2J", "\u202e", "\u200b", "\ud7ff\u2028"])
def test_no_text_field_takes_control_or_format_characters(kind: str, field: str, bad: str) -> None:
    fields = dict(VALID.get(kind, {"type": kind}))
    fields[field] = "classic" + bad if field == "ruleset" else "ab" + bad
    assert refused_field(**fields).details["field"] == field


#: Every text field of a request that people choose, with a valid value of it.
FREE_TEXT_FIELDS: list[tuple[str, str, str]] = [
    ("create_match", "seed", "AAAA-BBBB-CCCC-DDDD"), ("action", "action", "8C"),
    ("leaderboard", "cursor", "W1tdLDBd"), ("rating", "name", "ana"),
    ("tournament_create", "name", "Cup"), ("tournament_remove", "player", "bob"),
    ("tournament_remove", "reason", "left early"), ("tournament_cancel", "reason", "rain"),
    ("tournament_announce", "text", "coffee"), ("tournament_reinstate", "player", "bob"),
    ("tournament_arbiter", "player", "bob"), ("tournament_table", "player", "bob"),
    ("review_clear", "name", "ana"), ("review_void", "reason", "a script"),
    ("suspend", "reason", "a script"),
]


@pytest.mark.parametrize(("kind", "field", "good"), FREE_TEXT_FIELDS)
@pytest.mark.parametrize("change", [" {}", "{} ", "{}\u00a0x", "{}  x", "{}\x1b", "\u202e{}",
                                    "{}\u0085", "{}\u2028"])
def test_every_text_field_is_taken_as_sent_or_refused_saying_why_by_the_one_rule(
    kind: str, field: str, good: str, change: str
) -> None:
    base = {"type": kind, "id": 5, "code": "K7QX2M", "seq": 1, "action": "8C", "player": "bob",
            "reason": "why", "text": "hi", "name": "ana"}
    assert getattr(parse_request(json.dumps({**base, field: good})), field) == good
    sent = change.format(good)
    error = refused_field(**{**base, field: sent})
    assert error.details == {"id": 5, "field": field}
    problem = text_problem(sent)
    assert problem is not None and problem in error.message and kind in error.message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=70))
def test_any_tournament_name_is_taken_as_sent_exactly_when_the_text_rule_takes_it(
    name: str,
) -> None:
    try:
        shown = tournament_name(name)
    except ServerError as error:
        assert error.code in ("bad_message", "bad_json")
        assert error.code == "bad_json" or text_problem(name) is not None or len(name) > 64
    else:
        assert shown == name and text_problem(name) is None


def test_a_start_time_is_kept_in_utc() -> None:
    request = parse_request(frame(type="tournament_create", start_at="2030-01-01T18:00:00+02:00"))
    assert isinstance(request, CreateTournament)
    assert request.start_at == datetime(2030, 1, 1, 16, tzinfo=UTC)
    assert request.start_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize("start_at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"])
def test_a_start_time_that_is_no_time_in_utc_is_a_bad_message(start_at: str) -> None:
    error = refused_field(type="tournament_create", start_at=start_at)
    assert error.details["field"] == "start_at"


# --- any frame ---------------------------------------------------------------------------


#: Any value a client's frame might carry, and worse (what JSON cannot hold included).
frame_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3),
    max_leaves=8,
)

frames = st.one_of(
    st.text(max_size=200),
    st.builds(
        lambda kind, fields, request_id: json.dumps({"type": kind, "id": request_id, **fields}),
        st.sampled_from(REQUEST_TYPES) | st.text(max_size=5),
        st.dictionaries(st.text(max_size=8), frame_values, max_size=4),
        frame_values,
    ),
)


@settings(max_examples=300, deadline=None)
@given(frames)
def test_any_frame_gets_a_request_or_an_error_whose_reply_is_strict_json(text: str) -> None:
    try:
        request = parse_request(text)
    except ServerError as error:
        assert error.code in DOCUMENTED_ERROR_CODES and error.code != "internal_error"
        reply: Message = error_message(error)
    else:
        reply = Ok(id=request.id)
    # Strict JSON in UTF-8 as it is, without encode's last-line repairs.
    members = msgspec.to_builtins(reply)
    sent = json.dumps(members, ensure_ascii=False, allow_nan=False).encode()
    assert json.loads(sent.decode(), parse_constant=refuse_constant) == members
    assert json.loads(encode(reply)) == members


def test_operators_decisions_parse_with_their_target_and_their_reason_as_sent() -> None:
    assert parse_request(frame(**VALID["review_clear"])) == (
        ClearReview(id=1, code="K7QX2M", name="ana", reason="typist")
    )
    assert parse_request(frame(**VALID["review_void"])) == VoidReview(
        id=1, code="K7QX2M", name="ana", reason="a script"
    )
    assert parse_request(frame(**VALID["suspend"])) == Suspend(id=1, name="ana", reason="a script")
    assert parse_request(frame(**VALID["review_list"])) == ListReviews(id=1)
    assert parse_request(frame(**VALID["audit_log"])) == GetAuditLog(id=1)


@pytest.mark.parametrize("kind", ["review_clear", "review_void", "suspend"])
@pytest.mark.parametrize("reason", [None, "", "   ", "x" * 201, "tab\there", 7, " a typist "])
def test_an_operators_decision_needs_a_printable_reason_of_at_most_200_characters(
    kind: str, reason: Any
) -> None:
    fields = {k: v for k, v in VALID[kind].items() if k != "reason"}
    if reason is not None:
        fields["reason"] = reason
    assert refused_field(**fields).details["field"] == "reason"
