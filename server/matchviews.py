"""What clients see of a match: the wire views of its state, without I/O.

Progress objects (what everyone may know of a player), a player's own game, the match's
summary, snapshots and the ranking, and the acknowledgement of an action, exactly as
docs/protocol.md describes them. Pure functions of the state and the time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from gaps import Game
from gaps.ranking import Finish, rank
from gaps_protocol.messages.replies import ActionOk, Seated, Snapshot
from gaps_protocol.messages.views import (
    GameView,
    MatchSummary,
    Progress,
    RankedProgress,
    You,
)
from server.clock import iso
from server.matchstate import MatchState, Seat, seed_revealed
from server.records import ActionRow, Ms

# The state keeps the protocol's choices (a ruleset's name, a status, a kind...) as text;
# each is one of the type's values by construction, which mypy cannot see: ``arg-type``.

P = TypeVar("P", bound=Progress)
#: A reply that is a match as you see it (``joined``, ``snapshot``, ``matched``...).
S = TypeVar("S", bound=Seated)


def wire_grid(game: Game) -> list[str]:
    """The grid as four rows of 13 cells (``--`` a gap), as it goes on the wire."""
    return game.layout().splitlines()


def ack_of(code: str, row: ActionRow, game: Game) -> ActionOk:
    """The acknowledgement of the action ``row``, ``game`` being the game right after it:
    live and rebuilt after a restart alike. Its ``id`` is the request's, set as it is
    sent: the same action sent again is answered with its first acknowledgement."""
    return ActionOk(
        id=None,
        match=code,
        seq=row.seq,
        action=row.action,
        kind=row.kind,
        t_ms=row.t_ms,
        score=game.score,
        placed=game.placed,
        redeals_used=game.redeals_used,
        redeals_left=game.redeals_left,
        moves_made=game.moves_made,
        status=game.result(),
        can_undo=game.can_undo(),
        # A move or undo says what moved; a redeal sends the new grid.
        card=msgspec.UNSET if row.card is None else row.card,
        from_=msgspec.UNSET if row.from_slot is None else row.from_slot,
        to=msgspec.UNSET if row.to_slot is None else row.to_slot,
        grid=wire_grid(game) if row.kind == "redeal" else msgspec.UNSET,
    )


def progress(seat: Seat, kind: type[P] = Progress, /, **event: Any) -> P:  # type: ignore[assignment]
    """What everyone may know of ``seat``'s player: a ``Progress``, or the event ``kind``
    that is one (``progress``, ``player_finished``, with the event's members)."""
    game = seat.game
    return kind(
        player_id=seat.player_id,
        name=seat.name,
        bot=seat.bot,
        ready=seat.ready,
        connected=seat.connections > 0,
        placed=game.placed if game else 0,
        score=game.score if game else 0,
        redeals_used=game.redeals_used if game else 0,
        moves_made=game.moves_made if game else 0,
        status=seat.status,
        finished=seat.finished,
        won=bool(game and game.is_won()),
        end_reason=seat.end_reason,
        finish_ms=seat.finish_ms,
        **event,
    )


def game_view(seat: Seat) -> GameView:
    game = seat.game
    assert game is not None
    return GameView(
        grid=wire_grid(game),
        score=game.score,
        placed=game.placed,
        redeals_used=game.redeals_used,
        redeals_left=game.redeals_left,
        moves_made=game.moves_made,
        status=seat.status,
        can_undo=game.can_undo(),
    )


def summary(state: MatchState, now: Ms) -> MatchSummary:
    options = state.options
    return MatchSummary(
        id=state.id,
        code=state.code,
        ruleset=options.ruleset.name,
        max_players=options.max_players,
        time_limit_s=options.time_limit_s,
        win_by=options.win_by,
        public=options.public,
        rated=state.rated,
        countdown_s=options.countdown_s,
        bots=options.bots,
        host_id=state.host_id,
        kind=state.kind,
        status=state.status,
        players=len(state.seats),
        commitment=state.seed.commitment if state.phase != "lobby" else None,
        started_at=iso(state.started_at) if state.started_at is not None else None,
        t_ms=state.t_ms(now),
        seed=str(state.seed) if seed_revealed(state, now) else msgspec.UNSET,
    )


def snapshot(state: MatchState, player_id: int | None, now: Ms, *, seq: int) -> Snapshot:
    """Everything a client needs to draw the match at ``now``, as ``player_id`` sees it;
    ``seq`` is the last event's. The reply ``snapshot`` (its ``id`` the request's, set as
    it is sent), which ``seated`` makes any other reply that is a match as you see it."""
    seat = state.seat(player_id) if player_id is not None else None
    if seat is None:
        you = You(role="spectator")
    elif seat.game is None:
        you = You(role="player")
    else:
        you = You(role="player", game=game_view(seat), last_seq=seat.last_seq)
    return Snapshot(
        id=None,
        match=summary(state, now),
        players=[progress(s) for s in state.seats],
        spectators=state.spectators,
        you=you,
        seq=seq,
    )


def seated(kind: type[S], snapshot: Snapshot, /, **reply: Any) -> S:
    """``snapshot`` as the reply ``kind`` (``joined``, ``matched``, ``rematch``...), with
    that reply's own members ``reply``."""
    return kind(
        match=snapshot.match,
        players=snapshot.players,
        spectators=snapshot.spectators,
        you=snapshot.you,
        seq=snapshot.seq,
        **reply,
    )


def ranking(state: MatchState, reviews: Mapping[int, str] | None = None) -> list[RankedProgress]:
    """Every seat with its rank (``gaps.ranking``), best first, and its result's review
    (``reviews``, by player: none counts)."""
    finishes = []
    for seat in state.seats:
        game = seat.game
        finishes.append(
            Finish(
                player_id=seat.player_id,
                won=bool(game and game.is_won()),
                score=game.score if game else 0,
                finish_ms=seat.finish_ms or 0,
                score_ms=seat.score_ms,
            )
        )
    by_id = {seat.player_id: seat for seat in state.seats}
    reviews = reviews or {}
    return [
        progress(
            by_id[finish.player_id], RankedProgress,
            rank=position, review=reviews.get(finish.player_id),
        )
        for position, finish in rank(finishes, state.options.win_by)
    ]
