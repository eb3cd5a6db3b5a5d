"""Matches run by another process of the cluster: a handle that forwards, and the owner's side.

A connection may reach any process; the match it asks for is run by one (its lease's
owner). ``RemoteMatch`` has the async methods of a live ``Match`` and forwards each call
through the relay to the owner's ``MatchService``, which calls the match itself and
sends the answer back. Events do not come this way: they reach every process through the
broker, on the match's channel, as they always do.

A handle names the owner and the epoch of the lease it was found under. When the match
has moved on (its owner died and another took it over, raising the epoch), the old
owner no longer answers for it and the call is refused with ``match_unavailable``; the
handle then tells its routes (``server.routes``), which forget it and close the
connections that follow the match here, so that their clients reconnect and join it
afresh (the restore numbered its events anew). The routes also check every handle's
owner and epoch at each lease renewal, for a match that moved while nobody asked.

The owner counts the connections of every seat, remote ones included. A process that
dies cannot say that its connections closed, so the owner remembers which process each
remote connection came from and, at every lease renewal, treats the connections of a
process that no longer listens on the relay as closed (``MatchService.forget_gone``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias, TypeVar

import msgspec

from gaps import Action, parse_action
from gaps_protocol.messages.replies import ActionOk, Events, Snapshot
from server import relaymessages as messages
from server.errors import ServerError
from server.lobby import Lobby
from server.match import Match, channel_of
from server.relay import NodeUnavailable, Relay

SERVICE: Final = messages.MatchCommand.service
T = TypeVar("T")


class RemoteMatch:
    """A live match that another process runs; its methods are those of ``Match``."""

    def __init__(
        self,
        relay: Relay,
        *,
        node: str,
        match_id: int,
        code: str,
        epoch: int,
        retry_ms: int,
        on_moved: Callable[[RemoteMatch], None],
    ) -> None:
        """``on_moved``: told when the owner says the match is no longer its own."""
        self._relay = relay
        self.node = node
        self.id = match_id
        self.code = code
        self.epoch = epoch
        self._retry_ms = retry_ms
        self._on_moved = on_moved

    def __repr__(self) -> str:
        return f"<RemoteMatch {self.code} on {self.node} epoch {self.epoch}>"

    @property
    def channel(self) -> str:
        return channel_of(self.code)

    async def join(
        self, player_id: int, name: str, *, connected: bool = True, bot: bool = False
    ) -> Snapshot:
        return await self._read(
            messages.JoinMatch(
                **self._match, player_id=player_id, name=name, connected=connected, bot=bot
            ),
            Snapshot,
        )

    async def watch(self, player_id: int) -> Snapshot:
        return await self._read(messages.WatchMatch(**self._match, player_id=player_id), Snapshot)

    async def unwatch(self) -> None:
        await self._call(messages.UnwatchMatch(**self._match))

    async def disconnect(self, player_id: int) -> None:
        await self._call(messages.DisconnectFromMatch(**self._match, player_id=player_id))

    async def leave(self, player_id: int) -> None:
        await self._call(messages.LeaveMatch(**self._match, player_id=player_id))

    async def set_ready(self, player_id: int, ready: bool) -> None:
        await self._call(messages.SetReady(**self._match, player_id=player_id, ready=ready))

    async def start_by(self, player_id: int) -> None:
        await self._call(messages.StartMatch(**self._match, player_id=player_id))

    async def play(self, player_id: int, seq: int, action: Action) -> ActionOk:
        return await self._read(
            messages.Play(**self._match, player_id=player_id, seq=seq, action=str(action)),
            ActionOk,
        )

    async def snapshot(self, player_id: int | None) -> Snapshot:
        return await self._read(
            messages.Snapshot(**self._match, player_id=player_id), Snapshot
        )

    async def offer_rematch(
        self, player_id: int, same_seed: bool, code: str | None = None,
        replacing: str | None = None,
    ) -> dict[str, Any]:
        return await self._call(  # type: ignore[no-any-return]  # matchcore's offer
            messages.OfferRematch(
                **self._match,
                player_id=player_id,
                same_seed=same_seed,
                rematch=code,
                replacing=replacing,
            )
        )

    async def resync(self, player_id: int, since: int) -> Events | Snapshot:
        answer = await self._call(
            messages.Resync(**self._match, player_id=player_id, since=since)
        )
        return msgspec.convert(answer, Events | Snapshot)

    @property
    def _match(self) -> dict[str, Any]:
        """The fields that name the match in each of its commands."""
        return {"code": self.code, "epoch": self.epoch}

    async def _read(self, command: messages.AnyMatchCommand, answer: type[T]) -> T:
        """The owner's answer to ``command`` as the type ``answer``: the match's reply,
        which crossed the relay as JSON, typed again as the owner built it."""
        return msgspec.convert(await self._call(command), answer)

    async def _call(self, command: messages.AnyMatchCommand) -> Any:
        try:
            return await self._relay.call(self.node, command)
        except NodeUnavailable as error:
            # Dead or paused: whoever takes the match over is seen at a lease renewal.
            raise unavailable(self.code, self._retry_ms, str(error)) from None
        except ServerError as error:
            if error.code == "match_unavailable":  # the owner no longer runs it
                self._on_moved(self)
            raise


def unavailable(code: str, retry_ms: int, why: str) -> ServerError:
    return ServerError(
        "match_unavailable",
        f"match {code} is not served right now ({why}): retry in a moment",
        retry_after_ms=retry_ms,
    )


@dataclass
class _Presence:
    """The connections one process holds on one match: seats' and spectators'."""

    players: Counter[int] = field(default_factory=Counter)
    spectators: int = 0


class MatchService:
    """The owner's side: answers the relay's calls on the matches this process runs."""

    def __init__(self, lobby: Lobby, relay: Relay, *, retry_ms: int) -> None:
        self._lobby = lobby
        self._relay = relay
        self._retry_ms = retry_ms
        #: The remote connections on each match, by process, then match code.
        self._presence: defaultdict[str, dict[str, _Presence]] = defaultdict(dict)
        relay.serve(SERVICE, self.handle)
        lobby.on_retired(self.forget)
        lobby.on_dropped(self.forget)
        lobby.on_renewed(self.forget_gone)

    async def handle(self, command: messages.Command, caller: str) -> Any:
        if isinstance(command, messages.OpenPublic):
            return self._lobby.open_public_here()
        assert isinstance(command, messages.MatchCommand), command
        code = command.code
        match = self._lobby.matches.get(code)
        if match is None or self._lobby.epochs.get(match.id, command.epoch) != command.epoch:
            raise unavailable(code, self._retry_ms, "it moved to another process")
        presence = self._presence[caller].setdefault(code, _Presence())
        match command:
            case messages.JoinMatch(player_id=player_id, connected=connected):
                snapshot = await match.join(
                    player_id, command.name, connected=connected, bot=command.bot
                )
                if connected:
                    presence.players[player_id] += 1
                return snapshot
            case messages.WatchMatch(player_id=player_id):
                snapshot = await match.watch(player_id)
                presence.spectators += 1
                return snapshot
            case messages.UnwatchMatch():
                await match.unwatch()
                presence.spectators = max(0, presence.spectators - 1)
            case messages.DisconnectFromMatch(player_id=player_id):
                await match.disconnect(player_id)
                presence.players[player_id] -= 1
                if presence.players[player_id] <= 0:
                    del presence.players[player_id]
            case messages.LeaveMatch(player_id=player_id):
                await match.leave(player_id)
                presence.players.pop(player_id, None)
            case messages.SetReady(player_id=player_id, ready=ready):
                await match.set_ready(player_id, ready)
            case messages.StartMatch(player_id=player_id):
                await match.start_by(player_id)
            case messages.Play(player_id=player_id, seq=seq, action=action):
                return await match.play(player_id, seq, parse_action(action))
            case messages.Snapshot(player_id=player_id):
                return await match.snapshot(player_id)
            case messages.Resync(player_id=player_id, since=since):
                return await match.resync(player_id, since)
            case messages.OfferRematch(player_id=player_id, same_seed=same_seed):
                return await match.offer_rematch(
                    player_id, same_seed, command.rematch, command.replacing
                )
            case _:
                raise ServerError("internal_error", f"no match method {command.method!r}")
        return None

    async def forget_gone(self) -> None:
        """Count as closed every connection of a process that no longer listens."""
        for node in list(self._presence):
            if node == self._relay.node or await self._relay.listening(node):
                continue
            for code, presence in self._presence.pop(node).items():
                match = self._lobby.matches.get(code)
                if match is None:
                    continue
                for player_id, connections in presence.players.items():
                    for _ in range(connections):
                        await match.disconnect(player_id)
                for _ in range(presence.spectators):
                    await match.unwatch()

    def forget(self, code: str) -> None:
        """A match this process ran is gone from it (retired, or moved)."""
        for matches in self._presence.values():
            matches.pop(code, None)


#: What a session holds a match by: the match itself, or its handle on another process.
MatchHandle: TypeAlias = Match | RemoteMatch
