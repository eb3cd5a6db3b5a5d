"""The wire protocol's messages: one parser for every client message, one encoder out.

Pure: no I/O. docs/protocol.md is the contract this module implements; a test replays
the documented example session against the real server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Final, Union

from gaps import Action, GapsError, Ruleset, Seed, parse_action
from server.errors import ServerError

PROTOCOL_VERSION: Final = 1
MAX_FRAME_BYTES: Final = 4096
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_.\-]{2,24}")
WIN_BY: Final = ("time", "score")
ROLES: Final = ("player", "spectator")
MAX_PLAYERS: Final = 16
MAX_TIME_LIMIT_S: Final = 24 * 3600
MAX_COUNTDOWN_S: Final = 60
MAX_SEQ: Final = 2**31 - 1


@dataclass(frozen=True)
class Register:
    id: Any
    name: str


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


@dataclass(frozen=True)
class JoinTournament:
    id: Any
    code: str


@dataclass(frozen=True)
class StartTournament:
    id: Any
    code: str


@dataclass(frozen=True)
class ListTournaments:
    id: Any


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


Request = Union[
    Register,
    Hello,
    CreateMatch,
    ListMatches,
    JoinMatch,
    LeaveMatch,
    Ready,
    StartMatch,
    Play,
    Resync,
    GetReplay,
    Ping,
    GetLeaderboard,
    GetRating,
    CreateTournament,
    JoinTournament,
    StartTournament,
    ListTournaments,
    GetStandings,
    ResyncTournament,
    PlayDaily,
    GetDailyBoard,
    QuickMatch,
    CancelQuickMatch,
]

BOARDS: Final = ("score", "time", "wins", "rating")
PERIODS: Final = ("all", "month", "day")
MAX_ROUNDS: Final = 20
MAX_TOURNAMENT_PLAYERS: Final = 64
MAX_PAGE_ROWS: Final = 100


class _Fields:
    """Typed access to a message's fields; every refusal names the field."""

    def __init__(self, kind: str, data: dict[str, Any]) -> None:
        self.kind = kind
        self.data = data

    def _fail(self, field: str, expected: str) -> ServerError:
        got = self.data.get(field, "nothing")
        return ServerError(
            "bad_message",
            f"{self.kind}: field {field!r} must be {expected}, got {got!r}"[:300],
            field=field,
        )

    def text(self, field: str, *, default: str | None = None, max_length: int = 200) -> str:
        value = self.data.get(field, default)
        if not isinstance(value, str) or not value.strip() or len(value) > max_length:
            raise self._fail(field, f"a non-empty string of at most {max_length} characters")
        return value.strip()

    def integer(self, field: str, *, low: int, high: int, default: int | None = None) -> int:
        value = self.data.get(field, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._fail(field, f"an integer from {low} to {high}")
        return value

    def optional_integer(self, field: str, *, low: int, high: int) -> int | None:
        if self.data.get(field) is None:
            return None
        return self.integer(field, low=low, high=high)

    def boolean(self, field: str, *, default: bool | None = None) -> bool:
        value = self.data.get(field, default)
        if not isinstance(value, bool):
            raise self._fail(field, "true or false")
        return value

    def choice(self, field: str, choices: tuple[str, ...], *, default: str | None = None) -> str:
        value = self.data.get(field, default)
        if value not in choices:
            raise self._fail(field, "one of " + ", ".join(choices))
        return str(value)

    def match_code(self) -> str:
        return self.text("code", max_length=16).upper()

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
            raise self._fail(field, "a date like 2026-11-29") from None

    def optional_time(self, field: str) -> datetime | None:
        value = self.data.get(field)
        if value is None:
            return None
        try:
            moment = datetime.fromisoformat(self.text(field, max_length=40))
        except ValueError:
            raise self._fail(field, "an ISO 8601 time like 2026-11-29T18:00:00Z") from None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    def optional_text(self, field: str, *, max_length: int) -> str | None:
        return None if self.data.get(field) is None else self.text(field, max_length=max_length)


def parse_request(frame: str | bytes) -> Request:
    """Parse one client frame into its request, or raise ``ServerError``."""
    if isinstance(frame, bytes):
        raise ServerError("bad_json", "frames are JSON text, not binary")
    if len(frame) > MAX_FRAME_BYTES or len(frame.encode()) > MAX_FRAME_BYTES:
        raise ServerError("bad_json", f"a frame is at most {MAX_FRAME_BYTES} bytes of UTF-8")
    try:
        data = json.loads(frame, parse_constant=_refuse_constant)
    except ValueError as error:
        raise ServerError("bad_json", f"not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ServerError("bad_json", "a frame is one JSON object")
    kind = data.get("type")
    request_id = data.get("id")
    if not isinstance(kind, str):
        raise ServerError(
            "bad_message", "field 'type' must be a string", id=request_id, field="type"
        )
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ServerError("unknown_type", f"unknown message type {kind!r}", id=request_id)
    try:
        return parser(request_id, _Fields(kind, data))
    except ServerError as error:
        error.details.setdefault("id", request_id)
        raise


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _register(request_id: Any, fields: _Fields) -> Register:
    name = fields.text("name", max_length=MAX_FRAME_BYTES)
    if NAME_PATTERN.fullmatch(name) is None:
        raise ServerError("bad_name", f"{name!r}: a name is 2-24 letters, digits, '_', '-' or '.'")
    return Register(request_id, name)


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
    )


def _play(request_id: Any, fields: _Fields) -> Play:
    text = fields.text("action", max_length=16)
    try:
        action = parse_action(text)
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
    )


def _create_tournament(request_id: Any, f: _Fields) -> CreateTournament:
    return CreateTournament(
        request_id,
        name=f.text("name", default="Tournament", max_length=64),
        ruleset=f.ruleset(),
        rounds=f.integer("rounds", low=1, high=MAX_ROUNDS, default=3),
        max_players=f.integer("max_players", low=1, high=MAX_TOURNAMENT_PLAYERS, default=16),
        round_time_limit_s=f.integer(
            "round_time_limit_s", low=1, high=MAX_TIME_LIMIT_S, default=600
        ),
        start_at=f.optional_time("start_at"),
    )


_PARSERS: Final[dict[str, Callable[[Any, _Fields], Request]]] = {
    "register": _register,
    "hello": lambda i, f: Hello(i, f.text("token", max_length=128)),
    "create_match": _create_match,
    "list_matches": lambda i, f: ListMatches(i),
    "join_match": lambda i, f: JoinMatch(
        i, f.match_code(), f.choice("role", ROLES, default="player")
    ),
    "leave_match": lambda i, f: LeaveMatch(i, f.match_code()),
    "ready": lambda i, f: Ready(i, f.match_code(), f.boolean("ready", default=True)),
    "start_match": lambda i, f: StartMatch(i, f.match_code()),
    "action": _play,
    "resync": lambda i, f: Resync(i, f.match_code(), f.since()),
    "get_replay": lambda i, f: GetReplay(i, f.match_code()),
    "ping": lambda i, f: Ping(i),
    "leaderboard": _leaderboard,
    "rating": lambda i, f: GetRating(i, f.optional_text("name", max_length=64)),
    "tournament_create": _create_tournament,
    "tournament_join": lambda i, f: JoinTournament(i, f.match_code()),
    "tournament_start": lambda i, f: StartTournament(i, f.match_code()),
    "tournament_list": lambda i, f: ListTournaments(i),
    "tournament_standings": lambda i, f: GetStandings(i, f.match_code()),
    "tournament_resync": lambda i, f: ResyncTournament(i, f.match_code(), f.since()),
    "daily": lambda i, f: PlayDaily(i, f.ruleset()),
    "daily_board": lambda i, f: GetDailyBoard(i, f.ruleset(), f.optional_day("day")),
    "quick_match": lambda i, f: QuickMatch(i, f.ruleset()),
    "quick_cancel": lambda i, f: CancelQuickMatch(i),
}

#: Every client message type, in the order docs/protocol.md lists them.
REQUEST_TYPES: Final = tuple(_PARSERS)


def encode(message: dict[str, Any]) -> str:
    """One server frame: compact JSON text."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def error_message(error: ServerError, request_id: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "error",
        "id": error.details.get("id", request_id),
        "code": error.code,
        "message": error.message,
    }
    message.update({k: v for k, v in error.details.items() if k != "id"})
    return message
