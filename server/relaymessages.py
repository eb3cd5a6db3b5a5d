"""Every message between a cluster's processes, as a type: what the relay carries.

A request from one process to another (``server.relay``) travels as a ``Call``: its
number, the asking process, and one command of a service: the match service's
(``server.remote``: ``JoinMatch`` ... ``OfferRematch``, ``OpenPublic``), the leader's
(``server.leadership``, answered by ``server.desk``: ``AskTournament`` ...
``CancelQuickMatch``) or the sessions' (``Matched``, the quick-match queue's notice). Its
answer comes back as an ``Answered`` (the result, a JSON value) or a ``Refused`` (a
``ServerError``'s code, message and details); a ``Ping`` only asks whether a process
listens. Each is a frozen msgspec Struct, tagged, so that one ``encode`` and one
``decode`` (msgspec's JSON, checking every field on the way in) stand for the whole
traffic.

What a client sent is carried as it sent it, in the types of
``gaps_protocol.messages.requests``: a tournament request whole, of its own type; a
match's code, an action's ``seq`` and its text, a resync's ``since``. An action's text
is parsed once, on the process that runs the match.
What the server adds (a player's id and name, a lease's epoch) is its own.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, TypeAlias

import msgspec

from gaps_protocol.limits import MAX_ACTION_LENGTH
from gaps_protocol.messages import requests
from gaps_protocol.messages.requests import CodeText, Seq, Since

__all__ = [
    "AnyCommand",
    "AnyLeaderCommand",
    "AnyMatchCommand",
    "Answered",
    "Call",
    "Command",
    "Envelope",
    "LeaderCommand",
    "MatchCommand",
    "Ping",
    "Refused",
    "decode",
    "encode",
    "TournamentRequest",
]

#: A player's request that the leader answers for a tournament, as the player sent it.
TournamentRequest: TypeAlias = (
    requests.CreateTournament | requests.JoinTournament | requests.StartTournament
    | requests.RemoveEntrant | requests.ReinstateEntrant | requests.CancelTournament
    | requests.PauseTournament | requests.ResumeTournament | requests.Announce
    | requests.NameArbiter | requests.SetTable | requests.EnterTableResult
    | requests.GetDealSheet | requests.ResyncTournament
)

#: An action's text, as a client sends it in ``action`` (``Play.action``).
ActionText = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_ACTION_LENGTH)]


class Command(msgspec.Struct, tag_field="command", frozen=True, kw_only=True):
    """A request to a service of another process; ``service`` names the service."""

    service: ClassVar[str]

    @property
    def method(self) -> str:
        """The command's name (its tag), for logs and refusals."""
        return type(self).__struct_config__.tag  # type: ignore[return-value]


# -- the match service: one match, on the process that runs it --------------------------


class MatchCommand(Command, frozen=True, kw_only=True):
    """A command for match ``code``, as leased under ``epoch`` when its route was found:
    a process that no longer runs it under that epoch refuses it ``match_unavailable``."""

    service: ClassVar[str] = "match"
    code: CodeText
    epoch: int


class JoinMatch(MatchCommand, tag="join", frozen=True, kw_only=True):
    player_id: int
    name: str
    connected: bool = True
    bot: bool = False


class WatchMatch(MatchCommand, tag="watch", frozen=True, kw_only=True):
    player_id: int


class UnwatchMatch(MatchCommand, tag="unwatch", frozen=True, kw_only=True):
    pass


class DisconnectFromMatch(MatchCommand, tag="disconnect", frozen=True, kw_only=True):
    player_id: int


class LeaveMatch(MatchCommand, tag="leave", frozen=True, kw_only=True):
    player_id: int


class SetReady(MatchCommand, tag="set_ready", frozen=True, kw_only=True):
    player_id: int
    ready: bool


class StartMatch(MatchCommand, tag="start_by", frozen=True, kw_only=True):
    player_id: int


class Play(MatchCommand, tag="play", frozen=True, kw_only=True):
    player_id: int
    seq: Seq
    action: ActionText


class Snapshot(MatchCommand, tag="snapshot", frozen=True, kw_only=True):
    player_id: int | None  # None: a spectator's


class Resync(MatchCommand, tag="resync", frozen=True, kw_only=True):
    player_id: int
    since: Since


class OfferRematch(MatchCommand, tag="offer_rematch", frozen=True, kw_only=True):
    player_id: int
    same_seed: bool
    rematch: str | None = None
    replacing: str | None = None


class OpenPublic(Command, tag="open_public", frozen=True, kw_only=True):
    """The summaries of the public matches with a seat free that the process runs."""

    service: ClassVar[str] = "match"


# -- the leader's desk (server/desk.py) -----------------------------------------------------


class LeaderCommand(Command, frozen=True, kw_only=True):
    service: ClassVar[str] = "leader"


class AskTournament(LeaderCommand, tag="tournament_request", frozen=True, kw_only=True):
    """A player's tournament request, of the very type it came in, with who asks."""

    request: TournamentRequest
    player_id: int
    name: str
    bot: bool = False
    #: The id and the name of the player a ``NameArbiter`` names, found on the asking
    #: process (which knows the names).
    arbiter: tuple[int, str] | None = None


class ListTournaments(LeaderCommand, tag="tournament_list", frozen=True, kw_only=True):
    status: str = "active"


class GetStandings(LeaderCommand, tag="tournament_standings", frozen=True, kw_only=True):
    code: CodeText


class TournamentCode(LeaderCommand, tag="tournament_code", frozen=True, kw_only=True):
    """The stored code of tournament ``code`` (as typed, in any case)."""

    code: CodeText


class EnqueueQuickMatch(LeaderCommand, tag="quick_enqueue", frozen=True, kw_only=True):
    ruleset: str
    player_id: int
    name: str
    ticket: str
    waited_s: float
    bot: bool = False


class CancelQuickMatch(LeaderCommand, tag="quick_cancel", frozen=True, kw_only=True):
    player_id: int


# -- the sessions of a process ------------------------------------------------------------


class Matched(Command, tag="matched", frozen=True, kw_only=True):
    """The quick-match queue seated ``player_id``, connected to the process asked, in
    match ``code``."""

    service: ClassVar[str] = "sessions"
    player_id: int
    code: CodeText


AnyMatchCommand: TypeAlias = (
    JoinMatch
    | WatchMatch
    | UnwatchMatch
    | DisconnectFromMatch
    | LeaveMatch
    | SetReady
    | StartMatch
    | Play
    | Snapshot
    | Resync
    | OfferRematch
)

AnyLeaderCommand: TypeAlias = (
    AskTournament
    | ListTournaments
    | GetStandings
    | TournamentCode
    | EnqueueQuickMatch
    | CancelQuickMatch
)

#: Every command, of every service.
AnyCommand: TypeAlias = AnyMatchCommand | OpenPublic | AnyLeaderCommand | Matched


# -- the envelopes ---------------------------------------------------------------------------


class Envelope(msgspec.Struct, tag_field="kind", frozen=True, kw_only=True):
    """What goes on a process's relay channel (``node:NAME``)."""


class Call(Envelope, tag="call", frozen=True, kw_only=True):
    """Request number ``request`` of process ``caller``: ``command``."""

    request: int
    caller: str
    command: AnyCommand


class Answered(Envelope, tag="answered", frozen=True, kw_only=True):
    """The result of the caller's request number ``request`` (a JSON value)."""

    request: int
    result: Any = None


class Refused(Envelope, tag="refused", frozen=True, kw_only=True):
    """The refusal of the caller's request number ``request``: a ``ServerError``'s."""

    request: int
    code: str
    message: str
    details: dict[str, Any] = {}


class Ping(Envelope, tag="ping", frozen=True, kw_only=True):
    """Only whether anyone listens: ``publish`` counts the listeners, nobody answers."""

    caller: str


AnyEnvelope: TypeAlias = Call | Answered | Refused | Ping

_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder(AnyEnvelope)


def encode(envelope: Envelope) -> str:
    """``envelope`` as the relay publishes it."""
    return _encoder.encode(envelope).decode()


def decode(message: str | bytes) -> AnyEnvelope:
    """The envelope in ``message``; raises ``msgspec.DecodeError`` for a message that is
    not JSON, and its ``ValidationError`` for one that is no envelope or has a field out
    of its type or bounds."""
    return _decoder.decode(message)
