"""The read-only queries clients make over the WebSocket and over HTTP alike: replays,
leaderboards, ratings, the daily board, the open matches and the tournaments, their
exports and calendar files; and the keys the documents published here are signed with.

Each answers with the protocol's type (a reply with ``id`` None, or a view), typed here
once from what storage or the leader gives: the WebSocket handlers answer with it (their
request's id set), HTTP serves its members (server/http.py)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any, TypeVar

import msgspec

from gaps_protocol.messages.common import Message
from gaps_protocol.messages.replies import DailyBoard, Leaderboard, Rating, Standings, Tournaments
from gaps_protocol.messages.views import MatchSummary, Replay
from server.clock import Clock, iso
from server.daily import Daily
from server.errors import ServerError
from server.exports import calendar_text, export_document
from server.leadership import Leadership
from server.relaymessages import GetStandings, ListTournaments
from server.replays import replay_document
from server.routes import Routes
from server.signing import Signer
from server.storage.store import Store

T = TypeVar("T", bound=Message)


def typed(kind: type[T], document: Any) -> T:
    """``document`` (builtins: a stored read, a signed document, the leader's answer once it
    crossed the relay as JSON; or ``kind`` already) as the protocol's ``kind``, a reply's
    ``id`` None. Checked as it is: a member the type has no room for, or one missing, is
    a bug."""
    if isinstance(document, Mapping) and "id" in kind.__struct_fields__:
        document = {**document, "id": None}
    return msgspec.convert(document, kind)


class Reads:
    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        daily: Daily,
        routes: Routes,
        leadership: Leadership,
        signer: Signer,
    ) -> None:
        self._store = store
        self._signer = signer
        self._clock = clock
        self._daily = daily
        self._routes = routes
        self._leadership = leadership

    async def replay(self, code: str) -> Replay:
        stored = await self._store.matches.replay(code.upper())
        if stored is None:
            raise ServerError("no_such_match", f"no match has code {code!r}")
        match = stored["match"]
        if match["status"] != "finished":
            raise ServerError("not_finished", f"match {code} has not finished: its seed is secret")
        if match["daily_date"] is not None and match["daily_date"] >= self._clock.today():
            raise ServerError(
                "not_finished",
                f"match {code} is a daily challenge: its seed is secret until "
                f"{match['daily_date']} is over",
            )
        return typed(Replay, await self._signer.sign(replay_document(stored)))

    async def leaderboard(
        self,
        *,
        ruleset: str,
        by: str,
        period: str,
        day: date | None,
        cursor: str | None,
        limit: int,
        around_player: int | None,
        kind: str = "people",
    ) -> Leaderboard:
        boards = self._store.boards
        day = day or self._clock.today()
        if around_player is not None:
            board = await boards.around(
                ruleset=ruleset,
                by=by,
                period=period,
                day=day,
                player_id=around_player,
                neighbours=limit // 2,
                kind=kind,
            )
        else:
            board = await boards.page(
                ruleset=ruleset, by=by, period=period, day=day, cursor=cursor, limit=limit,
                kind=kind,
            )
        return typed(Leaderboard, board)

    async def player_id(self, name: str) -> int:
        return (await self.player_named(name))[0]

    async def player_named(self, name: str) -> tuple[int, str]:
        """The id and the name (as registered) of the player called ``name``, any case."""
        player = await self._store.players.named(name)
        if player is None:
            raise ServerError("no_such_player", f"no player is called {name!r}")
        return player.id, player.name

    async def rating(self, name: str) -> Rating:
        player = await self._store.players.named(name)
        if player is None:
            raise ServerError("no_such_player", f"no player is called {name!r}")
        return typed(Rating, {
            "player": {"id": player.id, "name": player.name, "bot": player.bot},
            **await self._store.ratings.of_player(player.id),
        })

    async def daily_board(self, ruleset: str, day: date | None) -> DailyBoard:
        board = await self._daily.board(ruleset, day or self._clock.today())
        return typed(DailyBoard, await self._signer.sign(board))

    async def signing_keys(self) -> dict[str, Any]:
        return await self._signer.published()

    async def open_matches(self) -> list[MatchSummary]:
        return await self._routes.open_public()

    async def tournaments(self, status: str = "active") -> Tournaments:
        """The leader's answer, typed again if it crossed the relay (as JSON)."""
        answer = await self._leadership.ask(ListTournaments(status=status))
        return typed(Tournaments, answer)

    async def tournament_standings(self, code: str) -> Standings:
        return typed(Standings, await self._leadership.ask(GetStandings(code=code)))

    async def tournament_export(
        self, code: str, export: str, number: int | None = None
    ) -> dict[str, Any]:
        """The ``export`` document of tournament ``code`` (server/exports.py): its
        ``standings``, or its ``rounds`` (round ``number`` only, if given), signed (its
        CSV, made from the same document, carries no signature)."""
        # The exports are documents of their own (server/exports.py), made of builtins.
        found = msgspec.to_builtins(await self.tournament_standings(code))
        view = found["tournament"]
        played = [] if export == "standings" else await self._store.tournaments.played(view["id"])
        document = export_document(
            export,
            view=view,
            standings=found["standings"],
            played=played,
            entered=found.get("entered_results", []),
            generated_at=iso(self._clock.now_ms()),
            number=number,
        )
        return await self._signer.sign(document)

    async def tournament_calendar(self, code: str) -> str:
        """The iCalendar file of scheduled tournament ``code``."""
        view = msgspec.to_builtins((await self.tournament_standings(code)).tournament)
        return calendar_text(view, stamp=self._clock.now())
