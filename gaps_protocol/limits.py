"""The protocol's bounds and choices, named once for the server and every client.

docs/protocol.md states each of them; the server's parser (``server.protocol``) refuses
what falls outside them, and the message types (``gaps_protocol.messages``) and the
published schema state them for clients. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1

#: A request is at most this many bytes of UTF-8; a longer one is answered with bad_json.
MAX_FRAME_BYTES: Final = 4096
#: The largest frame the server reads at all (websockets' ``max_size``): past it, the
#: connection closes with 1009 instead of spending memory on a frame it would refuse.
MAX_READ_BYTES: Final = 4 * MAX_FRAME_BYTES
#: How deeply arrays and objects may nest in a frame (requests need 2): deeper ones are
#: refused before parsing, which would otherwise recurse once per level.
MAX_DEPTH: Final = 32

#: A request id is null, a number of at most this magnitude (what every JSON reader holds
#: exactly), or a string of at most ``MAX_ID_LENGTH`` characters.
MAX_SAFE_INTEGER: Final = 2**53 - 1
MAX_ID_LENGTH: Final = 64

#: A player's name: 2-24 letters, digits, ``_``, ``-`` or ``.``, from a letter or digit
#: (so that no name is ``.`` or ``..``, which URL paths such as ``/ratings/NAME`` cannot
#: hold). Names are unique in any case.
NAME_REGEX: Final = r"[A-Za-z0-9][A-Za-z0-9_.\-]{1,23}"
MAX_NAME_LENGTH: Final = 24
#: A match's or tournament's code, in any case (the server's are upper case).
CODE_REGEX: Final = r"[A-Za-z0-9]{1,16}"
MAX_CODE_LENGTH: Final = 16
#: What a token is made of (URL-safe base64), and the longest a client may send.
TOKEN_REGEX: Final = r"[A-Za-z0-9_\-]+"
MAX_TOKEN_LENGTH: Final = 128

#: Unicode categories that no text of a request may hold: controls (NUL, ESC...), format
#: characters (bidi overrides, zero-width ones), surrogates, private use, unassigned code
#: points, and line and paragraph separators. A terminal acts on some of them.
UNPRINTABLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: Matches.
MAX_PLAYERS: Final = 16
MAX_TIME_LIMIT_S: Final = 24 * 3600
MAX_COUNTDOWN_S: Final = 60
#: An action's ``seq`` (from 1) and a resync's ``since`` (from 0) are at most this.
MAX_SEQ: Final = 2**31 - 1
MAX_ACTION_LENGTH: Final = 16
MAX_SEED_LENGTH: Final = 64
MAX_RULESET_LENGTH: Final = 32

#: Tournaments.
MAX_ROUNDS: Final = 20
MAX_TOURNAMENT_PLAYERS: Final = 64
MAX_TOURNAMENT_NAME_LENGTH: Final = 64
#: The longest reason, characters: a host's for removing an entrant, an operator's for a
#: decision.
MAX_REASON_LENGTH: Final = 200
#: The longest announcement a tournament's host makes, characters.
MAX_ANNOUNCEMENT_LENGTH: Final = 280
#: The longest break between a tournament's rounds the organiser chooses, seconds.
MAX_BREAK_S: Final = 3600
#: A player's name as a request names someone else (any case; looked up, not checked).
MAX_PLAYER_REFERENCE_LENGTH: Final = 64

#: Boards.
MAX_PAGE_ROWS: Final = 100
MAX_CURSOR_LENGTH: Final = 512

#: The choices of the requests' fields, in the order docs/protocol.md lists them.
WIN_BY: Final = ("time", "score")
ROLES: Final = ("player", "spectator")
#: What a scheduled tournament does when its start comes with nobody entered.
IF_EMPTY: Final = ("cancel", "wait")
#: Which tournaments ``tournament_list`` lists.
TOURNAMENT_LISTS: Final = ("active", "ended", "all")
#: Which deals a tournament deals: any, or only deals the solver proved winnable.
DEALS: Final = ("any", "winnable")
BOARDS: Final = ("score", "time", "wins", "rating")
#: Whose boards: people's (the default) or declared bots' (docs/fair-play.md).
KINDS: Final = ("people", "bots")
PERIODS: Final = ("all", "month", "day")

#: The most redeals a table's entered result may claim: more than any ruleset allows (the
#: tournament's own ruleset checks further).
MAX_TABLE_REDEALS: Final = 9
#: The cards a game places at most (a won game: every card but the four Aces).
MAX_PLACED: Final = 48
