"""Matches: create, list, join, leave, ready, start, act, resync, rematch, replays."""

from __future__ import annotations

from typing import Any, Final

from gaps import Ruleset, Seed
from gaps_protocol.messages.requests import (
    CreateMatch,
    GetReplay,
    JoinMatch,
    LeaveMatch,
    ListMatches,
    Play,
    Ready,
    Rematch,
    Resync,
    StartMatch,
)
from server.broker import BrokerUnavailable
from server.errors import ServerError, bots_not_allowed
from server.handlers.context import Connection, Handler
from server.match import Match, MatchOptions
from server.protocol import action_of, ruleset_of, seed_of
from server.remote import MatchHandle
from server.storage.players import PlayerRecord

#: Refusals to join an offered rematch that mean another is to be offered instead.
_REMATCH_GONE: Final = frozenset(
    {"already_started", "match_full", "match_finished", "no_such_match"}
)


async def create(session: Connection, request: CreateMatch) -> dict[str, Any]:
    player = session.require_player()
    if player.bot and not request.bots:
        raise bots_not_allowed(
            "you are a declared bot: a match you create must let bots sit (bots: true)",
            refused_by="match",
        )
    countdown_s = request.countdown_s
    options = MatchOptions(
        ruleset=ruleset_of(request),
        max_players=request.max_players,
        time_limit_s=request.time_limit_s,
        win_by=request.win_by,
        public=request.public,
        countdown_s=(
            countdown_s if countdown_s is not None else session.services.settings.countdown_s
        ),
        bots=request.bots,
    )
    match = await _hosted(session, player, options, seed_of(request))
    return {"type": "match_created", **await match.snapshot(player.id)}


async def _hosted(
    session: Connection, player: PlayerRecord, options: MatchOptions, seed: Seed | None
) -> Match:
    """A new match that ``player`` hosts, seated and followed on this connection."""
    lobby = session.services.lobby
    seat = (player.id, player.name, player.bot)
    match = await lobby.create(player.id, options, seed, seats=[seat])
    try:
        await session.follow(match.channel)
    except BrokerUnavailable:
        await match.leave(player.id)  # refused: the match goes with its only seat
        raise
    session.seats.add(match.code)
    session.services.routes.follow(match)
    return match


async def list_open(session: Connection, request: ListMatches) -> dict[str, Any]:
    return {"type": "matches", "matches": await session.services.reads.open_matches()}


async def join(session: Connection, request: JoinMatch) -> dict[str, Any]:
    match = await session.match(request.code)
    if request.role == "spectator" and match.code not in session.seats:
        return {"type": "joined", **await session.spectate(match)}
    return {"type": "joined", **await session.seat(match)}


async def leave(session: Connection, request: LeaveMatch) -> dict[str, Any]:
    match = await session.match(request.code)
    await session.stop_following(match)
    return {"type": "left", "match": match.code}


async def ready(session: Connection, request: Ready) -> dict[str, Any]:
    player = session.require_player()
    await (await session.match(request.code)).set_ready(player.id, request.ready)
    return {"type": "ok"}


async def start(session: Connection, request: StartMatch) -> dict[str, Any]:
    player = session.require_player()
    await (await session.match(request.code)).start_by(player.id)
    return {"type": "ok"}


async def play(session: Connection, request: Play) -> dict[str, Any]:
    player = session.require_player()
    match = await session.match(request.code)
    return await match.play(player.id, request.seq, action_of(request))


async def resync(session: Connection, request: Resync) -> dict[str, Any]:
    player = session.require_player()
    return await (await session.match(request.code)).resync(player.id, request.since)


async def replay(session: Connection, request: GetReplay) -> dict[str, Any]:
    return {"type": "replay", "replay": await session.services.reads.replay(request.code)}


async def rematch(session: Connection, request: Rematch) -> dict[str, Any]:
    """Seat the player in the rematch of a finished match: the one offered already, if
    it still takes them, else a new one, offered to the others (``rematch_offered`` on
    the finished match's events). The finished match's actor keeps the offer, so that
    players who ask at once, on any process, meet in one match."""
    player = session.require_player()
    try:
        finished = await session.match(request.code)
    except ServerError as error:
        if error.code != "match_finished":
            raise
        raise ServerError(
            "no_such_match",
            f"match {request.code} is no longer kept for a rematch (10 minutes after its end):"
            " create a match instead",
        ) from None
    same_seed = request.same_seed
    offer = await finished.offer_rematch(player.id, same_seed)
    stale = None
    while True:
        if offer["code"] is not None and offer["code"] != stale:
            try:
                snapshot = await session.seat(await session.match(offer["code"]))
            except ServerError as error:
                if error.code not in _REMATCH_GONE:
                    raise
                stale = offer["code"]  # started, full or gone: another one is offered
            else:
                return _rematch_reply(finished, same_seed, snapshot)
        created = await _hosted(session, player, _options(offer), _seed(offer))
        try:
            offer = await finished.offer_rematch(player.id, same_seed, created.code, stale)
        except BaseException:
            await session.stop_following(created)
            raise
        if offer["code"] == created.code:
            snapshot = await created.snapshot(player.id)
            return _rematch_reply(finished, same_seed, snapshot)
        # Someone else's offer came first: theirs is the rematch, this one goes.
        await session.stop_following(created)


def _options(offer: dict[str, Any]) -> MatchOptions:
    options = offer["options"]
    return MatchOptions(
        ruleset=Ruleset.named(options["ruleset"]),
        max_players=options["max_players"],
        time_limit_s=options["time_limit_s"],
        win_by=options["win_by"],
        public=options["public"],
        countdown_s=options["countdown_s"],
        bots=options.get("bots", False),
    )


def _seed(offer: dict[str, Any]) -> Seed | None:
    return Seed.parse(offer["seed"]) if offer["seed"] is not None else None


def _rematch_reply(
    finished: MatchHandle, same_seed: bool, snapshot: dict[str, Any]
) -> dict[str, Any]:
    return {"type": "rematch", "of": finished.code, "same_seed": same_seed, **snapshot}


HANDLERS: Final[dict[type, Handler]] = {
    CreateMatch: create,
    ListMatches: list_open,
    JoinMatch: join,
    LeaveMatch: leave,
    Ready: ready,
    StartMatch: start,
    Play: play,
    Resync: resync,
    GetReplay: replay,
    Rematch: rematch,
}
