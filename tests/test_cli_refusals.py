"""A server's refusal in the words of the options (client_cli.refusals), and the options'
own limits (client_cli.arguments)."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from client_cli import arguments
from client_cli.connection import ConnectError, ServerRefused
from client_cli.refusals import error_words, refusal_words
from gaps_protocol.messages import Error, decode_server_message


def refused(**reply: object) -> ServerRefused:
    """The refusal of an ``error`` reply, decoded as the connection decodes it."""
    error = decode_server_message(json.dumps({"type": "error", "id": 1, **reply}))
    assert isinstance(error, Error)
    return ServerRefused(error)


@pytest.mark.parametrize(("reply", "words"), [
    ({"code": "bad_message", "field": "round_time_limit_s",
      "message": "tournament_create: field 'round_time_limit_s' must be an integer from 60 to "
                 "7200, got 9000"},
     "the server refused --round-time: a round's time limit is 60 seconds to 2 hours there"),
    ({"code": "bad_message", "field": "max_players",
      "message": "create_match: field 'max_players' must be an integer from 1 to 8, got 9"},
     "the server refused --players: the number of players is 1 to 8 there"),
    ({"code": "bad_message", "field": "name",
      "message": "tournament_create: field 'name' must be printable text of at most 32 "
                 "characters, got 'x'"},
     "the server refused --name: a tournament's name must be printable text of at most 32 "
     "characters"),
    ({"code": "bad_message", "field": "start_at", "message": "start_at must be in the future"},
     "the server refused --start-at: the start must be in the future"),
    ({"code": "rate_limited", "message": "too many requests", "retry_after_ms": 2400},
     "the server is busy (too many requests from you): try again in 2 s"),
    ({"code": "rate_limited", "message": "too many requests"},
     "the server is busy (too many requests from you): try again in a moment"),
    ({"code": "bad_message", "field": "id", "message": "field 'id' must be null"},
     "field 'id' must be null"),  # no option sets it: the server's words
    ({"code": "illegal_action", "message": "2S>1: r1c1 holds 3C", "reason": "not_a_gap"},
     "2S>1: r1c1 holds 3C (not_a_gap)"),
])
def test_a_refusal_names_the_option_and_its_limits_in_its_units(
    reply: dict[str, object], words: str,
) -> None:
    assert refusal_words(refused(**reply)) == words


def test_other_failures_are_their_own_words_made_printable() -> None:
    assert error_words(ConnectError("cannot reach \x1b[2J")) == "cannot reach \ufffd[2J"


@pytest.mark.parametrize(("parse", "text", "value"), [
    (arguments.match_clock, "24h", 86_400),
    (arguments.round_clock, "1h30m", 5_400),
    (arguments.countdown, "0", 0),
    (arguments.countdown, "60s", 60),
    (arguments.tournament_name, "Friday's cup", "Friday's cup"),
    (arguments.reason, "café night ♣", "café night ♣"),
    (arguments.player_name, "ana", "ana"),
    (arguments.match_code, "k7qx2m", "K7QX2M"),  # codes are in any case; sent as written
    (arguments.tournament_code, "Q4M2ZK", "Q4M2ZK"),
    (arguments.seed, "aaaa bbbb cccc dddd", "AAAA-BBBB-CCCC-DDDD"),
])
def test_options_within_the_limits_pass(parse: object, text: str, value: object) -> None:
    assert callable(parse) and parse(text) == value


@pytest.mark.parametrize(("parse", "text", "words"), [
    (arguments.match_clock, "25h", "'25h': the time limit is at most 24 hours"),
    (arguments.countdown, "61s", "'61s': the countdown is at most 60 seconds"),
    (arguments.match_clock, "soon", "'soon' is not a duration"),
    (arguments.reason, "x" * 201, "the reason is at most 200 characters, not 201"),
    (arguments.tournament_name, "\x1b[2J",
     "a tournament's name: '\\x1b[2J' holds U+001B at character 1, which is not printable"),
    (arguments.tournament_name, "  Friday   cup ", "a tournament's name: '  Friday   cup ' "
                                                   "begins with a space"),
    (arguments.tournament_name, "Friday   cup", "a tournament's name: 'Friday   cup' holds "
                                               "two spaces in a row"),
    (arguments.reason, "cheats\xa0", "the reason: 'cheats\\xa0' holds U+00A0 NO-BREAK SPACE"),
    (arguments.announcement, "", "an announcement: '' is empty"),
    (arguments.player_name, "\u202eana", "a player's name: '\\u202eana' holds U+202E "
                                         "RIGHT-TO-LEFT OVERRIDE at character 1"),
    (arguments.match_code, "K7QX2M ", "a match code: 'K7QX2M ' ends with a space"),
    (arguments.tournament_code, "Q4 M2", "'Q4 M2' is not a tournament code (like Q4M2ZK)"),
    (arguments.seed, " AAAA-BBBB-CCCC-DDDD", "a share code: ' AAAA-BBBB-CCCC-DDDD' begins"),
])
def test_options_past_the_limits_say_so_in_their_units(
    parse: object, text: str, words: str,
) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(words)):
        assert callable(parse)
        parse(text)


@pytest.mark.parametrize(("seconds", "spoken"), [
    (1, "1 second"), (60, "60 seconds"), (600, "10 minutes"), (7200, "2 hours"),
    (86_400, "24 hours"), (3_660, "61 minutes"), (3_661, "1:01:01"),
])
def test_a_limit_is_spoken_as_people_say_it(seconds: int, spoken: str) -> None:
    assert arguments.spoken_duration(seconds) == spoken
