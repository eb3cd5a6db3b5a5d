"""The leader's desk: the cluster-wide requests (tournaments, quick match), answered.

Every process sends these through ``Leadership.ask`` (server/leadership.py) as the
leader's commands of ``server.relaymessages``; the leader answers here, from its
``Tournaments`` and ``Matchmaker``, in JSON, since the answer may cross the relay. A
player's tournament request travels as it came, of its own type, in an
``AskTournament`` with who asks (``ask_desk``). The caller's process name comes with
each command: the matchmaker tells a player of their match on the process their
connection is on.
"""

from __future__ import annotations

from typing import Any

from gaps import Ruleset
from gaps_protocol.messages import ServerReply
from gaps_protocol.messages.replies import Tournaments as TournamentList
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
from server.relaymessages import (
    AnyLeaderCommand,
    AskTournament,
    CancelQuickMatch,
    EnqueueQuickMatch,
    GetStandings,
    ListTournaments,
    TournamentCode,
    TournamentRequest,
)
from server.storage.players import PlayerRecord
from server.tournament import Tournaments


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
        AskTournament(
            request=request, player_id=player.id, name=player.name, bot=player.bot,
            arbiter=arbiter,
        )
    )


class Desk:
    def __init__(self, *, tournaments: Tournaments, matchmaker: Matchmaker) -> None:
        self._tournaments = tournaments
        self._matchmaker = matchmaker

    async def answer(self, command: AnyLeaderCommand, caller: str) -> Any:
        tournaments = self._tournaments
        match command:
            case AskTournament(request=request, player_id=by, name=name, bot=bot):
                return await self._tournament(request, by, name, bot, command.arbiter)
            case ListTournaments(status=status):
                return TournamentList(id=None, tournaments=await tournaments.listed(status))
            case GetStandings(code=code):
                return await tournaments.standings(code)
            case TournamentCode(code=code):
                return await tournaments.code_of(code)
            case EnqueueQuickMatch():
                return await self._matchmaker.enqueue(
                    Ruleset.named(command.ruleset),
                    command.player_id,
                    command.name,
                    node=caller,
                    ticket=command.ticket,
                    waited_s=command.waited_s,
                    bot=command.bot,
                )
            case CancelQuickMatch(player_id=player_id):
                return await self._matchmaker.cancel(player_id)
        raise ServerError("internal_error", f"the leader has no command {command!r}")

    async def _tournament(
        self,
        request: TournamentRequest,
        by: int,
        name: str,
        bot: bool,
        arbiter: tuple[int, str] | None,
    ) -> ServerReply:
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
