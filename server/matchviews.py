"""What clients see of a match: the wire views of its state, without I/O.

Progress objects (what everyone may know of a player), a player's own game, the match's
summary, snapshots and the ranking, and the acknowledgement of an action, exactly as
docs/protocol.md describes them. Pure functions of the state and the time.
"""

from __future__ import annotations

from typing import Any

from gaps import Game
from gaps.ranking import Finish, rank
from server.clock import iso
from server.matchstate import MatchState, Seat, seed_revealed
from server.records import ActionRow, Ms


def wire_grid(game: Game) -> list[str]:
    """The grid as four rows of 13 cells (``--`` a gap), as it goes on the wire."""
    return game.layout().splitlines()



def ack_of(code: str, row: ActionRow, game: Game) -> dict[str, Any]:
    """The acknowledgement of the action ``row``, ``game`` being the game right after it:
    live and rebuilt after a restart alike."""
    ack: dict[str, Any] = {
        "type": "action_ok",
        "match": code,
        "seq": row.seq,
        "action": row.action,
        "kind": row.kind,
        "t_ms": row.t_ms,
        # A move or undo says what moved; a redeal sends the new grid.
        **_game_view(game, game.result(), with_grid=row.kind == "redeal"),
    }
    if row.card is not None:
        ack.update({"card": row.card, "from": row.from_slot, "to": row.to_slot})
    return ack



def progress(seat: Seat) -> dict[str, Any]:
    game = seat.game
    return {
        "player_id": seat.player_id,
        "name": seat.name,
        "bot": seat.bot,
        "ready": seat.ready,
        "connected": seat.connections > 0,
        "placed": game.placed if game else 0,
        "score": game.score if game else 0,
        "redeals_used": game.redeals_used if game else 0,
        "moves_made": game.moves_made if game else 0,
        "status": seat.status,
        "finished": seat.finished,
        "won": bool(game and game.is_won()),
        "end_reason": seat.end_reason,
        "finish_ms": seat.finish_ms,
    }


def game_view(seat: Seat, *, with_grid: bool = True) -> dict[str, Any]:
    assert seat.game is not None
    return _game_view(seat.game, seat.status, with_grid=with_grid)


def _game_view(game: Game, status: str, *, with_grid: bool) -> dict[str, Any]:
    view: dict[str, Any] = {"grid": wire_grid(game)} if with_grid else {}
    return view | {
        "score": game.score,
        "placed": game.placed,
        "redeals_used": game.redeals_used,
        "redeals_left": game.redeals_left,
        "moves_made": game.moves_made,
        "status": status,
        "can_undo": game.can_undo(),
    }


def summary(state: MatchState, now: Ms) -> dict[str, Any]:
    options = state.options
    view: dict[str, Any] = {
        "id": state.id,
        "code": state.code,
        "ruleset": options.ruleset.name,
        "max_players": options.max_players,
        "time_limit_s": options.time_limit_s,
        "win_by": options.win_by,
        "public": options.public,
        "rated": state.rated,
        "countdown_s": options.countdown_s,
        "bots": options.bots,
        "host_id": state.host_id,
        "kind": state.kind,
        "status": state.status,
        "players": len(state.seats),
        "commitment": state.seed.commitment if state.phase != "lobby" else None,
        "started_at": iso(state.started_at) if state.started_at is not None else None,
        "t_ms": state.t_ms(now),
    }
    if seed_revealed(state, now):
        view["seed"] = str(state.seed)
    return view


def snapshot(state: MatchState, player_id: int | None, now: Ms, *, seq: int) -> dict[str, Any]:
    """Everything a client needs to draw the match at ``now``, as ``player_id`` sees it;
    ``seq`` is the last event's."""
    seat = state.seat(player_id) if player_id is not None else None
    you: dict[str, Any] = {"role": "player" if seat else "spectator"}
    if seat is not None and seat.game is not None:
        you["game"] = game_view(seat)
        you["last_seq"] = seat.last_seq
    return {
        "match": summary(state, now),
        "players": [progress(s) for s in state.seats],
        "spectators": state.spectators,
        "you": you,
        "seq": seq,
    }


def ranking(state: MatchState) -> list[dict[str, Any]]:
    """Every seat with its rank (``gaps.ranking``), best first."""
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
    return [
        {"rank": position, **progress(by_id[finish.player_id])}
        for position, finish in rank(finishes, state.options.win_by)
    ]

