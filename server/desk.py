"""The leader's desk: the cluster-wide requests (tournaments, quick match), answered.

Every process sends these through ``Leadership.ask`` (server/leadership.py); the leader
answers here, from its ``Tournaments`` and ``Matchmaker``, in JSON, since the answer may
cross the relay. A player's tournament request travels as it came, typed
(``ask_desk``: its wire form, decoded again here), with who asks. The caller's process
name comes with each request: the matchmaker tells a player of their match on the
process their connection is on.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import msgspec

from gaps import Ruleset
from gaps_protocol.messages.requests import (
    Announce,
    CancelTournament,
    CreateTournament,
    EnterTableResult,
    GetDealSheet,
    JoinTournament,
    NameArbiter,
    PauseTournament,
    ReinstateEntrant,
    RemoveEntrant,
    ResumeTournament,
    ResyncTournament,
    SetTable,
    StartTournament,
)
from server import tournamentcommands as commands
from server.clock import ms_of
from server.errors import ServerError
from server.leadership import Leadership
from server.matchmaker import Matchmaker
from server.storage.players import PlayerRecord
from server.tournament import Tournaments

#: A player's request that the leader answers for a tournament.
TournamentRequest: TypeAlias = (
    CreateTournament | JoinTournament | StartTournament | RemoveEntrant | ReinstateEntrant
    | CancelTournament | PauseTournament | ResumeTournament | Announce | NameArbiter
    | SetTable | EnterTableResult | GetDealSheet | ResyncTournament
)
_TOURNAMENT_REQUESTS: Final = msgspec.json.Decoder(TournamentRequest)


async def ask_desk(
    leadership: Leadership,
    request: TournamentRequest,
    player: PlayerRecord,
    *,
    arbiter: tuple[int, str] | None = None,
) -> Any:
    """The leader's answer to ``player``'s ``request`` (``arbiter``: the id and the name
    of the player a ``NameArbiter`` names, found on the asking process)."""
    return await leadership.ask(
        "tournament_request",
        {
            "player": [player.id, player.name, player.bot],
            "request": msgspec.json.encode(request).decode(),
            "arbiter": arbiter,
        },
    )


class Desk:
    def __init__(self, *, tournaments: Tournaments, matchmaker: Matchmaker) -> None:
        self._tournaments = tournaments
        self._matchmaker = matchmaker

    async def answer(self, method: str, args: dict[str, Any], caller: str) -> Any:
        tournaments = self._tournaments
        match method:
            case "tournament_request":
                request = _TOURNAMENT_REQUESTS.decode(args["request"])
                player_id, name, bot = args["player"]
                return await self._tournament(request, player_id, name, bot, args["arbiter"])
            case "tournament_list":
                return {"tournaments": await tournaments.listed(args.get("status", "active"))}
            case "tournament_standings":
                return await tournaments.standings(args["code"])
            case "tournament_code":
                return await tournaments.code_of(args["code"])
            case "quick_enqueue":
                return await self._matchmaker.enqueue(
                    Ruleset.named(args["ruleset"]),
                    args["player_id"],
                    args["name"],
                    node=caller,
                    ticket=args["ticket"],
                    waited_s=args["waited_s"],
                    bot=bool(args.get("bot", False)),
                )
            case "quick_cancel":
                return await self._matchmaker.cancel(args["player_id"])
        raise ServerError("internal_error", f"the leader has no method {method!r}")

    async def _tournament(
        self,
        request: TournamentRequest,
        by: int,
        name: str,
        bot: bool,
        arbiter: list[Any] | None,
    ) -> dict[str, Any]:
        """The answer to the request of player ``by`` (called ``name``, a bot or not)."""
        tournaments = self._tournaments
        match request:
            case CreateTournament():
                return await tournaments.create(
                    by,
                    name=request.name,
                    ruleset=Ruleset.named(request.ruleset),
                    rounds=request.rounds,
                    max_players=request.max_players,
                    round_time_limit_s=request.round_time_limit_s,
                    start_at_ms=None if request.start_at is None else ms_of(request.start_at),
                    bots=request.bots,
                    if_empty=request.if_empty,
                    deals=request.deals,
                    countdown_s=request.countdown_s,
                    break_s=request.break_s,
                    late_entry_until_round=request.late_entry_until_round,
                )
            case JoinTournament(code=code):
                return await tournaments.join(code, by, name, bot=bot)
            case StartTournament(code=code):
                return await tournaments.start_by(code, by)
            case RemoveEntrant(code=code, player=player, reason=reason):
                return await tournaments.remove(code, by, player, reason)
            case GetDealSheet(code=code, round=number):
                return await tournaments.deal_sheet(code, by, number)
            case ResyncTournament(code=code, since=since):
                return await tournaments.resync(code, since)
            case NameArbiter(code=code):
                assert arbiter is not None, "the asking process finds the arbiter"
                arbiter_id, arbiter_name = arbiter
                naming = commands.NameArbiter(by, arbiter_id, arbiter_name)
                return await tournaments.steer(code, naming)
        return await tournaments.steer(request.code, _host_command(request, by))


def _host_command(request: TournamentRequest, by: int) -> commands.Command:
    """The core's command for the host's (or an arbiter's) ``request``."""
    match request:
        case ReinstateEntrant(player=player):
            return commands.Reinstate(by, player)
        case CancelTournament(reason=reason):
            return commands.Cancel(by, reason)
        case PauseTournament():
            return commands.Pause(by)
        case ResumeTournament():
            return commands.Resume(by)
        case Announce(text=text):
            return commands.Announce(by, text)
        case SetTable(player=player, at_table=at_table):
            return commands.SetTable(by, player, at_table)
        case EnterTableResult():
            return commands.EnterResult(
                by, request.round, request.player, request.placed, request.redeals,
                request.finish_ms, request.won,
            )
    raise ServerError("internal_error", f"no tournament command for {type(request).__name__}")
