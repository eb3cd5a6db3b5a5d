"""The leader's desk: the cluster-wide requests (tournaments, quick match), answered.

Every process sends these through ``Leadership.ask`` (server/leadership.py); the leader
answers here, from its ``Tournaments`` and ``Matchmaker``, in JSON, since the answer may
cross the relay. The caller's process name comes with each request: the matchmaker
tells a player of their match on the process their connection is on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gaps import Ruleset
from server.clock import ms_of
from server.errors import ServerError
from server.matchmaker import Matchmaker
from server.tournament import Tournaments, host_command


class Desk:
    def __init__(self, *, tournaments: Tournaments, matchmaker: Matchmaker) -> None:
        self._tournaments = tournaments
        self._matchmaker = matchmaker

    async def answer(self, method: str, args: dict[str, Any], caller: str) -> Any:
        tournaments = self._tournaments
        match method:
            case "tournament_create":
                start_at = args["start_at"]
                return await tournaments.create(
                    args["host_id"],
                    name=args["name"],
                    ruleset=Ruleset.named(args["ruleset"]),
                    rounds=args["rounds"],
                    max_players=args["max_players"],
                    round_time_limit_s=args["round_time_limit_s"],
                    start_at_ms=ms_of(datetime.fromisoformat(start_at)) if start_at else None,
                    bots=bool(args.get("bots", False)),
                    if_empty=args.get("if_empty", "cancel"),
                    deals=args.get("deals", "any"),
                    countdown_s=args.get("countdown_s"),
                    break_s=args.get("break_s"),
                    late_entry_until_round=args.get("late_entry_until_round", 0),
                )
            case "tournament_join":
                return await tournaments.join(
                    args["code"], args["player_id"], args["name"], bot=bool(args.get("bot", False))
                )
            case "tournament_start":
                return await tournaments.start_by(args["code"], args["player_id"])
            case "tournament_remove":
                return await tournaments.remove(
                    args["code"], args["player_id"], args["player"], args["reason"]
                )
            case "tournament_steer":
                return await tournaments.steer(args["code"], host_command(args))
            case "tournament_deal_sheet":
                return await tournaments.deal_sheet(
                    args["code"], args["player_id"], args["round"]
                )
            case "tournament_list":
                return {"tournaments": await tournaments.listed(args.get("status", "active"))}
            case "tournament_standings":
                return await tournaments.standings(args["code"])
            case "tournament_resync":
                return await tournaments.resync(args["code"], args["since"])
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
