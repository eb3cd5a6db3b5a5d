"""Matches: create, list, join, leave, ready, start, act, resync, rematch, replays."""

from __future__ import annotations

from typing import Any, Final

from gaps import Ruleset, Seed
from gaps_protocol.messages.replies import (
    ActionOk,
    Events,
    Joined,
    Left,
    MatchCreated,
    Matches,
    Ok,
    RematchJoined,
    ReplayReply,
    Snapshot,
)
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
from server.handlers.context import Connection, Handler, answering
from server.match import Match, MatchOptions
from server.matchviews import seated
from server.protocol import action_of, ruleset_of, seed_of
from server.remote import MatchHandle
from server.storage.players import PlayerRecord

#: Refusals to join an offered rematch that mean another is to be offered instead.
_REMATCH_GONE: Final = frozenset(
    {"already_started", "match_full", "match_finished", "no_such_match"}
)


async def create(session: Connection, request: CreateMatch) -> MatchCreated:
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
    return seated(MatchCreated, await match.snapshot(player.id), id=request.id)


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


async def list_open(session: Connection, request: ListMatches) -> Matches:
    return Matches(id=request.id, matches=await session.services.reads.open_matches())


async def join(session: Connection, request: JoinMatch) -> Joined:
    match = await session.match(request.code)
    if request.role == "spectator" and match.code not in session.seats:
        return seated(Joined, await session.spectate(match), id=request.id)
    return seated(Joined, await session.seat(match), id=request.id)


async def leave(session: Connection, request: LeaveMatch) -> Left:
    match = await session.match(request.code)
    await session.stop_following(match)
    return Left(id=request.id, match=match.code)


async def ready(session: Connection, request: Ready) -> Ok:
    player = session.require_player()
    await (await session.match(request.code)).set_ready(player.id, request.ready)
    return Ok(id=request.id)


async def start(session: Connection, request: StartMatch) -> Ok:
    player = session.require_player()
    await (await session.match(request.code)).start_by(player.id)
    return Ok(id=request.id)


async def play(session: Connection, request: Play) -> ActionOk:
    player = session.require_player()
    match = await session.match(request.code)
    return answering(request, await match.play(player.id, request.seq, action_of(request)))


async def resync(session: Connection, request: Resync) -> Events | Snapshot:
    player = session.require_player()
    match = await session.match(request.code)
    return answering(request, await match.resync(player.id, request.since))


async def replay(session: Connection, request: GetReplay) -> ReplayReply:
    replay = await session.services.reads.replay(request.code)
    return ReplayReply(id=request.id, replay=replay)


async def rematch(session: Connection, request: Rematch) -> RematchJoined:
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
                return _rematch_reply(request, finished, snapshot)
        created = await _hosted(session, player, _options(offer), _seed(offer))
        try:
            offer = await finished.offer_rematch(player.id, same_seed, created.code, stale)
        except BaseException:
            await session.stop_following(created)
            raise
        if offer["code"] == created.code:
            snapshot = await created.snapshot(player.id)
            return _rematch_reply(request, finished, snapshot)
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


def _rematch_reply(request: Rematch, finished: MatchHandle, snapshot: Snapshot) -> RematchJoined:
    return seated(
        RematchJoined, snapshot, id=request.id, of=finished.code, same_seed=request.same_seed
    )


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
