"""The wire protocol's messages: one parser for every client message, one encoder out.

Pure: no I/O. docs/protocol.md is the contract this module implements; a test replays
the documented example session against the real server.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final, Union

import orjson

from gaps import Action, GapsError, Ruleset, Seed, parse_action
from gaps.board import ALL_PLACED
from gaps_protocol.limits import (
    BOARDS,
    CODE_REGEX,
    DEALS,
    IF_EMPTY,
    KINDS,
    MAX_ANNOUNCEMENT_LENGTH,
    MAX_BREAK_S,
    MAX_COUNTDOWN_S,
    MAX_DEPTH,
    MAX_FRAME_BYTES,
    MAX_ID_LENGTH,
    MAX_PAGE_ROWS,
    MAX_PLAYERS,
    MAX_REASON_LENGTH,
    MAX_ROUNDS,
    MAX_SAFE_INTEGER,
    MAX_SEQ,
    MAX_TABLE_REDEALS,
    MAX_TIME_LIMIT_S,
    MAX_TOURNAMENT_PLAYERS,
    NAME_REGEX,
    PERIODS,
    ROLES,
    TOURNAMENT_LISTS,
    UNPRINTABLE_CATEGORIES,
    WIN_BY,
)

# Re-exported for the connection's max_size (app.py, bench) and the welcome's version.
from gaps_protocol.limits import (
    MAX_READ_BYTES as MAX_READ_BYTES,
)
from gaps_protocol.limits import (
    PROTOCOL_VERSION as PROTOCOL_VERSION,
)
from server.errors import ServerError
from server.identity import MAX_TOKEN_LENGTH, is_token_text

#: The bounds and choices a client needs too are gaps_protocol.limits'.
NAME_PATTERN: Final = re.compile(NAME_REGEX)
#: A match's or tournament's code, before it is upper-cased.
CODE_PATTERN: Final = re.compile(CODE_REGEX)


@dataclass(frozen=True)
class Register:
    id: Any
    name: str
    #: A declared bot (docs/fair-play.md): fixed for good at registration.
    bot: bool = False


@dataclass(frozen=True)
class Hello:
    id: Any
    token: str


@dataclass(frozen=True)
class CreateMatch:
    id: Any
    ruleset: Ruleset
    max_players: int
    time_limit_s: int
    win_by: str
    public: bool
    countdown_s: int | None
    seed: Seed | None
    #: Whether bots may sit (the host's choice; no by default).
    bots: bool = False


@dataclass(frozen=True)
class ListMatches:
    id: Any


@dataclass(frozen=True)
class JoinMatch:
    id: Any
    code: str
    role: str


@dataclass(frozen=True)
class LeaveMatch:
    id: Any
    code: str


@dataclass(frozen=True)
class Ready:
    id: Any
    code: str
    ready: bool


@dataclass(frozen=True)
class StartMatch:
    id: Any
    code: str


@dataclass(frozen=True)
class Rematch:
    id: Any
    code: str
    same_seed: bool


@dataclass(frozen=True)
class Play:
    id: Any
    code: str
    seq: int
    action: Action


@dataclass(frozen=True)
class Resync:
    id: Any
    code: str
    since: int


@dataclass(frozen=True)
class GetReplay:
    id: Any
    code: str


@dataclass(frozen=True)
class Ping:
    id: Any


@dataclass(frozen=True)
class GetLeaderboard:
    id: Any
    ruleset: Ruleset
    by: str
    period: str
    day: date | None
    cursor: str | None
    limit: int
    around_me: bool
    #: The people's boards or the bots' (``KINDS``).
    kind: str = "people"


@dataclass(frozen=True)
class GetRating:
    id: Any
    name: str | None


@dataclass(frozen=True)
class CreateTournament:
    id: Any
    name: str
    ruleset: Ruleset
    rounds: int
    max_players: int
    round_time_limit_s: int
    start_at: datetime | None
    #: Whether bots may enter (the host's choice; no by default).
    bots: bool = False
    #: What the scheduled start does with nobody entered: ``cancel`` or ``wait``.
    if_empty: str = "cancel"
    #: ``any`` deal, or only ``winnable`` ones (proven so by the solver, without redeal).
    deals: str = "any"
    #: The countdown of each round and the break between rounds (None: the server's).
    countdown_s: int | None = None
    break_s: int | None = None
    #: Players may enter the running tournament until this round is dealt (0: never).
    late_entry_until_round: int = 0


@dataclass(frozen=True)
class SteerTournament:
    """One of the host's commands to their tournament ``code``: ``what`` is ``cancel``
    (with ``reason``), ``pause``, ``resume``, ``announce`` (with ``text``) or
    ``reinstate`` (with ``player``)."""

    id: Any
    what: str
    code: str
    reason: str | None = None
    text: str | None = None
    player: str | None = None


# -- tables in the room (docs/tables.md): the host's and the arbiters' requests ------------


@dataclass(frozen=True)
class NameArbiter:
    """The host names ``player`` an arbiter of tournament ``code``."""

    id: Any
    code: str
    player: str


@dataclass(frozen=True)
class SetTable:
    """The host or an arbiter seats ``player`` at a table (``at_table``) or online."""

    id: Any
    code: str
    player: str
    at_table: bool


@dataclass(frozen=True)
class EnterTableResult:
    """The host or an arbiter enters ``player``'s result at a table in ``round``."""

    id: Any
    code: str
    round: int
    player: str
    placed: int
    redeals: int
    finish_ms: int
    won: bool


@dataclass(frozen=True)
class GetDealSheet:
    """The host or an arbiter asks for ``round``'s deal sheet."""

    id: Any
    code: str
    round: int



_TABLE_PARSERS: Final[dict[str, Callable[[Any, _Fields], Request]]] = {
    "tournament_arbiter": lambda i, f: NameArbiter(
        i, f.match_code(), f.text("player", max_length=64)
    ),
    "tournament_table": lambda i, f: SetTable(
        i, f.match_code(), f.text("player", max_length=64), f.boolean("at_table", default=True)
    ),
    "tournament_enter_result": lambda i, f: EnterTableResult(
        i,
        f.match_code(),
        round=f.integer("round", low=1, high=MAX_ROUNDS),
        player=f.text("player", max_length=64),
        placed=f.integer("placed", low=0, high=ALL_PLACED),
        redeals=f.integer("redeals", low=0, high=MAX_TABLE_REDEALS),
        finish_ms=f.integer("finish_ms", low=0, high=MAX_TIME_LIMIT_S * 1000),
        won=f.boolean("won", default=False),
    ),
    "tournament_deal_sheet": lambda i, f: GetDealSheet(
        i, f.match_code(), f.integer("round", low=1, high=MAX_ROUNDS)
    ),
}


@dataclass(frozen=True)
class JoinTournament:
    id: Any
    code: str


@dataclass(frozen=True)
class StartTournament:
    id: Any
    code: str


@dataclass(frozen=True)
class RemoveEntrant:
    """The host removes an entrant between rounds, with a reason shown to all."""

    id: Any
    code: str
    player: str
    reason: str


@dataclass(frozen=True)
class ListTournaments:
    id: Any
    #: Which: ``active`` (open and running, the default), ``ended`` (finished and
    #: cancelled, newest first) or ``all``.
    status: str = "active"


@dataclass(frozen=True)
class GetStandings:
    id: Any
    code: str


@dataclass(frozen=True)
class ResyncTournament:
    id: Any
    code: str
    since: int


@dataclass(frozen=True)
class PlayDaily:
    id: Any
    ruleset: Ruleset


@dataclass(frozen=True)
class GetDailyBoard:
    id: Any
    ruleset: Ruleset
    day: date | None


@dataclass(frozen=True)
class QuickMatch:
    id: Any
    ruleset: Ruleset


@dataclass(frozen=True)
class CancelQuickMatch:
    id: Any


@dataclass(frozen=True)
class ListReviews:
    """Operators: the results held for review."""

    id: Any


@dataclass(frozen=True)
class DecideReview:
    """Operators: clear (it counts) or void a player's result in a match."""

    id: Any
    decision: str  # clear or void
    code: str
    name: str
    reason: str


@dataclass(frozen=True)
class Suspend:
    """Operators: suspend an account from rated play."""

    id: Any
    name: str
    reason: str


@dataclass(frozen=True)
class GetAuditLog:
    """Operators: the latest decisions."""

    id: Any


Request = Union[
    Register,
    Hello,
    CreateMatch,
    ListMatches,
    JoinMatch,
    LeaveMatch,
    Ready,
    StartMatch,
    Rematch,
    Play,
    Resync,
    GetReplay,
    Ping,
    GetLeaderboard,
    GetRating,
    CreateTournament,
    JoinTournament,
    StartTournament,
    RemoveEntrant,
    SteerTournament,
    NameArbiter,
    SetTable,
    EnterTableResult,
    GetDealSheet,
    ListTournaments,
    GetStandings,
    ResyncTournament,
    PlayDaily,
    GetDailyBoard,
    QuickMatch,
    CancelQuickMatch,
    ListReviews,
    DecideReview,
    Suspend,
    GetAuditLog,
]

class _Fields:
    """Typed access to a message's fields; every refusal names the field."""

    def __init__(self, kind: str, data: dict[str, Any]) -> None:
        self.kind = kind
        self.data = data

    def fail(self, field: str, expected: str) -> ServerError:
        got = self.data.get(field, "nothing")
        return ServerError(
            "bad_message",
            f"{self.kind}: field {field!r} must be {expected}, got {got!r}"[:300],
            field=field,
        )

    def string(self, field: str, *, default: str | None = None, max_length: int = 200) -> str:
        """The field as sent: a non-empty string of at most ``max_length`` characters."""
        value = self.data.get(field, default)
        if not isinstance(value, str) or not value or len(value) > max_length:
            raise self.fail(field, f"a non-empty string of at most {max_length} characters")
        return value

    def text(self, field: str, *, default: str | None = None, max_length: int = 200) -> str:
        """The field without the spaces around it: printable text, not only spaces."""
        value = self.string(field, default=default, max_length=max_length).strip()
        if not value or not is_printable(value):
            raise self.fail(field, f"printable text of at most {max_length} characters")
        return value

    def display(self, field: str, *, default: str | None = None, max_length: int) -> str:
        """A text that people will see (a tournament's name): see ``display_text``."""
        try:
            shown = display_text(self.string(field, default=default, max_length=max_length))
        except ValueError:
            shown = ""
        if not shown:
            raise self.fail(field, f"printable text of at most {max_length} characters")
        return shown

    def integer(self, field: str, *, low: int, high: int, default: int | None = None) -> int:
        value = self.data.get(field, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(field, f"an integer from {low} to {high}")
        return value

    def optional_integer(self, field: str, *, low: int, high: int) -> int | None:
        if self.data.get(field) is None:
            return None
        return self.integer(field, low=low, high=high)

    def boolean(self, field: str, *, default: bool | None = None) -> bool:
        value = self.data.get(field, default)
        if not isinstance(value, bool):
            raise self.fail(field, "true or false")
        return value

    def choice(self, field: str, choices: tuple[str, ...], *, default: str | None = None) -> str:
        value = self.data.get(field, default)
        if value not in choices:
            raise self.fail(field, "one of " + ", ".join(choices))
        return str(value)

    def match_code(self) -> str:
        """A match's or tournament's code, in any case (the server's are upper case)."""
        code = self.text("code", max_length=16)
        if CODE_PATTERN.fullmatch(code) is None:
            raise self.fail("code", "a code of letters and digits, like K7QX2M")
        return code.upper()

    def since(self) -> int:
        """The ``since`` of a resync: the last event seq the client saw (0: none)."""
        return self.integer("since", low=0, high=MAX_SEQ)

    def ruleset(self) -> Ruleset:
        try:
            return Ruleset.named(self.text("ruleset", default="classic", max_length=32))
        except GapsError as error:
            raise ServerError("bad_message", f"{self.kind}: {error}", field="ruleset") from None

    def optional_day(self, field: str) -> date | None:
        value = self.data.get(field)
        if value is None:
            return None
        try:
            return date.fromisoformat(self.text(field, max_length=10))
        except ValueError:
            raise self.fail(field, "a date like 2026-11-29") from None

    def optional_time(self, field: str) -> datetime | None:
        value = self.data.get(field)
        if value is None:
            return None
        try:
            moment = datetime.fromisoformat(self.text(field, max_length=40))
            # In UTC, as stored: a time near year 1 or 9999 may not be one in UTC.
            return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
        except (ValueError, OverflowError):
            raise self.fail(field, "an ISO 8601 time like 2026-11-29T18:00:00Z") from None

    def optional_text(self, field: str, *, max_length: int) -> str | None:
        return None if self.data.get(field) is None else self.text(field, max_length=max_length)


def is_printable(text: str) -> bool:
    """Whether ``text`` holds no character of ``UNPRINTABLE_CATEGORIES``."""
    # isprintable() is also false for spaces other than " " (no-break...), which are fine.
    return text.isprintable() or all(
        unicodedata.category(char) not in UNPRINTABLE_CATEGORIES for char in text
    )


def display_text(text: str) -> str:
    """``text`` as shown to people: every run of spaces one " ", none around.

    The one check of every string a user chooses for others to see; raises ``ValueError``
    naming the first character that is not printable (see ``UNPRINTABLE_CATEGORIES``)."""
    if not is_printable(text):
        char = next(c for c in text if unicodedata.category(c) in UNPRINTABLE_CATEGORIES)
        raise ValueError(f"{text!r} holds U+{ord(char):04X}, which is not printable text")
    return " ".join(text.split())


def parse_request(frame: str | bytes) -> Request:
    """Parse one client frame into its request, or raise ``ServerError``."""
    data = _json_object(frame)
    request_id = _request_id(data.get("id"))
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ServerError(
            "bad_message", "field 'type' must be a string", id=request_id, field="type"
        )
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ServerError("unknown_type", f"unknown message type {kind[:40]!r}", id=request_id)
    try:
        return parser(request_id, _Fields(kind, data))
    except ServerError as error:
        error.details.setdefault("id", request_id)
        raise


def _json_object(frame: str | bytes) -> dict[str, Any]:
    """The frame's JSON object, of text that any strict JSON reader takes as it is."""
    if isinstance(frame, bytes):
        raise ServerError("bad_json", "frames are JSON text, not binary")
    try:
        too_long = len(frame) > MAX_FRAME_BYTES or len(frame.encode()) > MAX_FRAME_BYTES
    except UnicodeEncodeError:  # surrogates in the text itself: it did not come off a socket
        raise ServerError("bad_json", "a frame is UTF-8 text") from None
    if too_long:
        raise ServerError("bad_json", f"a frame is at most {MAX_FRAME_BYTES} bytes of UTF-8")
    if _nesting_depth(frame) > MAX_DEPTH:
        raise ServerError("bad_json", f"a frame nests arrays and objects at most {MAX_DEPTH} deep")
    try:
        if frame.startswith("\ufeff"):  # what json.loads says; the decoder would not
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", frame, 0)
        data = _DECODER.decode(frame)
    except (ValueError, RecursionError) as error:
        raise ServerError("bad_json", f"not JSON: {error}"[:300]) from None
    if not isinstance(data, dict):
        raise ServerError("bad_json", "a frame is one JSON object")
    if _SURROGATE_ESCAPE.search(frame) and _holds_lone_surrogate(data):
        # "\ud800" is valid JSON syntax but no Unicode text: it cannot be echoed as UTF-8.
        raise ServerError("bad_json", "a frame's strings are Unicode text: no lone surrogates")
    return data


_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


def _nesting_depth(frame: str) -> int:
    """How deeply the frame's arrays and objects nest (brackets in strings do not count)."""
    if frame.count("[") + frame.count("{") <= MAX_DEPTH:
        return 0
    depth = deepest = 0
    for char in _STRING.sub("", frame):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _holds_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_holds_lone_surrogate(k) or _holds_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_lone_surrogate(item) for item in value)
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:40]} is out of range")
    return number


def _request_id(value: Any) -> Any:
    """The request's ``id``, if it is one the reply can echo to any client as it is."""
    if value is None or (isinstance(value, str) and len(value) <= MAX_ID_LENGTH):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        if abs(value) <= MAX_SAFE_INTEGER:
            return value
    raise ServerError(
        "bad_message",
        f"field 'id' must be null, a number from -(2**53 - 1) to 2**53 - 1 or a string of "
        f"at most {MAX_ID_LENGTH} characters, got {value!r}"[:300],
        id=None,
        field="id",
    )


def _register(request_id: Any, fields: _Fields) -> Register:
    name = fields.string("name", max_length=MAX_FRAME_BYTES).strip()
    if not name:
        raise fields.fail("name", "a name, not only spaces")
    if NAME_PATTERN.fullmatch(name) is None:
        raise ServerError(
            "bad_name",
            f"{name[:40]!r}: a name is 2-24 letters, digits, '_', '-' or '.', starting with "
            "a letter or digit",
        )
    return Register(request_id, name, fields.boolean("bot", default=False))


def _hello(request_id: Any, fields: _Fields) -> Hello:
    # The token exactly as sent: a token with a space around it is not the token.
    token = fields.string("token", max_length=MAX_TOKEN_LENGTH)
    if not is_token_text(token):
        raise ServerError("bad_token", "a token is URL-safe text, as register gave it")
    return Hello(request_id, token)


def _create_match(request_id: Any, fields: _Fields) -> CreateMatch:
    ruleset = fields.ruleset()
    seed_text = fields.data.get("seed")
    seed = None
    if seed_text is not None:
        try:
            seed = Seed.parse(fields.text("seed", max_length=64))
        except GapsError as error:
            raise ServerError("bad_message", f"create_match: {error}", field="seed") from None
    return CreateMatch(
        request_id,
        ruleset=ruleset,
        max_players=fields.integer("max_players", low=1, high=MAX_PLAYERS, default=2),
        time_limit_s=fields.integer("time_limit_s", low=1, high=MAX_TIME_LIMIT_S, default=600),
        win_by=fields.choice("win_by", WIN_BY, default="time"),
        public=fields.boolean("public", default=False),
        countdown_s=fields.optional_integer("countdown_s", low=0, high=MAX_COUNTDOWN_S),
        seed=seed,
        bots=fields.boolean("bots", default=False),
    )


def _play(request_id: Any, fields: _Fields) -> Play:
    text = fields.text("action", max_length=16)
    try:
        action = _parse_action(text)
    except GapsError as error:
        raise ServerError("bad_message", f"action: {error}", field="action") from None
    return Play(
        request_id,
        code=fields.match_code(),
        seq=fields.integer("seq", low=1, high=MAX_SEQ),
        action=action,
    )


def _leaderboard(request_id: Any, f: _Fields) -> GetLeaderboard:
    return GetLeaderboard(
        request_id,
        ruleset=f.ruleset(),
        by=f.choice("by", BOARDS, default="score"),
        period=f.choice("period", PERIODS, default="all"),
        day=f.optional_day("day"),
        cursor=f.optional_text("cursor", max_length=512),
        limit=f.integer("limit", low=1, high=MAX_PAGE_ROWS, default=20),
        around_me=f.boolean("around_me", default=False),
        kind=f.choice("kind", KINDS, default="people"),
    )


def _create_tournament(request_id: Any, f: _Fields) -> CreateTournament:
    return CreateTournament(
        request_id,
        name=f.display("name", default="Tournament", max_length=64),
        ruleset=f.ruleset(),
        rounds=f.integer("rounds", low=1, high=MAX_ROUNDS, default=3),
        max_players=f.integer("max_players", low=1, high=MAX_TOURNAMENT_PLAYERS, default=16),
        round_time_limit_s=f.integer(
            "round_time_limit_s", low=1, high=MAX_TIME_LIMIT_S, default=600
        ),
        start_at=f.optional_time("start_at"),
        bots=f.boolean("bots", default=False),
        if_empty=f.choice("if_empty", IF_EMPTY, default="cancel"),
        deals=f.choice("deals", DEALS, default="any"),
        countdown_s=f.optional_integer("countdown_s", low=0, high=MAX_COUNTDOWN_S),
        break_s=f.optional_integer("break_s", low=0, high=MAX_BREAK_S),
        late_entry_until_round=f.integer(
            "late_entry_until_round", low=0, high=MAX_ROUNDS, default=0
        ),
    )


def _remove_entrant(request_id: Any, f: _Fields) -> RemoveEntrant:
    return RemoveEntrant(
        request_id,
        code=f.match_code(),
        player=f.text("player", max_length=64),
        reason=f.display("reason", max_length=MAX_REASON_LENGTH),
    )


def _reason(f: _Fields) -> str:
    return f.text("reason", max_length=MAX_REASON_LENGTH)


def _decide_review(request_id: Any, f: _Fields, decision: str) -> DecideReview:
    return DecideReview(
        request_id, decision, f.match_code(), f.text("name", max_length=64), _reason(f)
    )


_PARSERS: Final[dict[str, Callable[[Any, _Fields], Request]]] = {
    "register": _register,
    "hello": _hello,
    "create_match": _create_match,
    "list_matches": lambda i, f: ListMatches(i),
    "join_match": lambda i, f: JoinMatch(
        i, f.match_code(), f.choice("role", ROLES, default="player")
    ),
    "leave_match": lambda i, f: LeaveMatch(i, f.match_code()),
    "ready": lambda i, f: Ready(i, f.match_code(), f.boolean("ready", default=True)),
    "start_match": lambda i, f: StartMatch(i, f.match_code()),
    "rematch": lambda i, f: Rematch(i, f.match_code(), f.boolean("same_seed", default=False)),
    "action": _play,
    "resync": lambda i, f: Resync(i, f.match_code(), f.since()),
    "get_replay": lambda i, f: GetReplay(i, f.match_code()),
    "ping": lambda i, f: Ping(i),
    "leaderboard": _leaderboard,
    "rating": lambda i, f: GetRating(i, f.optional_text("name", max_length=64)),
    "tournament_create": _create_tournament,
    "tournament_join": lambda i, f: JoinTournament(i, f.match_code()),
    "tournament_start": lambda i, f: StartTournament(i, f.match_code()),
    "tournament_remove": _remove_entrant,
    "tournament_reinstate": lambda i, f: SteerTournament(
        i, "reinstate", f.match_code(), player=f.text("player", max_length=64)
    ),
    "tournament_cancel": lambda i, f: SteerTournament(
        i, "cancel", f.match_code(), reason=f.display("reason", max_length=MAX_REASON_LENGTH)
    ),
    "tournament_pause": lambda i, f: SteerTournament(i, "pause", f.match_code()),
    "tournament_resume": lambda i, f: SteerTournament(i, "resume", f.match_code()),
    "tournament_announce": lambda i, f: SteerTournament(
        i, "announce", f.match_code(), text=f.display("text", max_length=MAX_ANNOUNCEMENT_LENGTH)
    ),
    **_TABLE_PARSERS,
    "tournament_list": lambda i, f: ListTournaments(
        i, status=f.choice("status", TOURNAMENT_LISTS, default="active")
    ),
    "tournament_standings": lambda i, f: GetStandings(i, f.match_code()),
    "tournament_resync": lambda i, f: ResyncTournament(i, f.match_code(), f.since()),
    "daily": lambda i, f: PlayDaily(i, f.ruleset()),
    "daily_board": lambda i, f: GetDailyBoard(i, f.ruleset(), f.optional_day("day")),
    "quick_match": lambda i, f: QuickMatch(i, f.ruleset()),
    "quick_cancel": lambda i, f: CancelQuickMatch(i),
    "review_list": lambda i, f: ListReviews(i),
    "review_clear": lambda i, f: _decide_review(i, f, "clear"),
    "review_void": lambda i, f: _decide_review(i, f, "void"),
    "suspend": lambda i, f: Suspend(i, f.text("name", max_length=64), _reason(f)),
    "audit_log": lambda i, f: GetAuditLog(i),
}

#: Every client message type, in the order docs/protocol.md lists them.
REQUEST_TYPES: Final = tuple(_PARSERS)


def encode(message: dict[str, Any]) -> str:
    """One server frame: compact JSON text that strict readers take (RFC 8259), in UTF-8.

    It never raises: a float that is not finite goes out as null, a lone surrogate as
    U+FFFD and a value JSON has no form for as its ``str``, so that no reply can break the
    connection that asked for it (the parser refuses such input; this is the last line)."""
    try:
        text = _dumps(message)
        if not text.isascii():
            text.encode()  # lone surrogates would fail here, in send, otherwise
        return text
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError is a ValueError
        return _dumps(_strict(message, MAX_DEPTH * 4))


def _dumps(message: Any) -> str:
    try:
        return orjson.dumps(message, option=_ORJSON_OPTIONS).decode()
    except TypeError:  # orjson.JSONEncodeError: what only the standard library writes
        return _ENCODER.encode(message)


#: orjson writes a frame in a tenth of the time. Whatever it refuses (integers past 64
#: bits, keys that are not strings, lone surrogates) goes to the standard library's
#: encoder, and so does what it would write its own way (dataclasses, dates): the text is
#: the standard library's in every case orjson declines.
_ORJSON_OPTIONS: Final = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

# One encoder and one decoder for every frame: ``json.dumps`` and ``json.loads`` build a
# new one for each call when given options, a few microseconds of every request's reply.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)

#: ``parse_action``, remembering the actions it parsed (values, shared safely): a game
#: uses a few thousand texts at most, and parsing one took about a third of a request's
#: parsing.
_parse_action: Final = functools.lru_cache(maxsize=4096)(parse_action)


def _strict(value: Any, depth: int) -> Any:
    """``value`` with only what strict JSON in UTF-8 can hold (see ``encode``)."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if depth <= 0:  # a cycle, or nesting no reply has
        return None
    if isinstance(value, dict):
        return {_key(key): _strict(item, depth - 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(item, depth - 1) for item in value]
    return _strict(str(value), depth)


def _key(key: Any) -> str:
    """A member name as ``json.dumps`` writes it (``1``, ``true``), in strict JSON."""
    if isinstance(key, str):
        return _SURROGATE.sub("\ufffd", key)
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)
    return _SURROGATE.sub("\ufffd", str(key))


def error_message(error: ServerError, request_id: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "error",
        "id": error.details.get("id", request_id),
        "code": error.code,
        "message": error.message,
    }
    message.update({k: v for k, v in error.details.items() if k != "id"})
    return message
