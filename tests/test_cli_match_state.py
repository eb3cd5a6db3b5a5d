"""client_cli.match_state: a match built from snapshots, events and acks, as documented."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from client_cli.connection import ConnectionNotice
from client_cli.match_state import MatchState, OwnGame, Phase, ServerClock, parse_grid
from gaps import GAP, Card, Game, Move, Ruleset, Seed, Slot
from gaps_protocol.messages import MatchEvent
from gaps_protocol.messages.events import (
    Countdown,
    HostChanged,
    MatchEnded,
    PlayerFinished,
    PlayerJoined,
    PlayerLeft,
    Presence,
    ProgressMade,
    ReadyChanged,
    RematchOffered,
    Started,
)
from gaps_protocol.messages.replies import ActionOk, Joined, MatchCreated
from tests.cli_support import progress, ranked, typed

KNOWN = Seed.parse("AAAA-BBBB-CCCC-DDDD")
GRID = Game(KNOWN, "classic").layout().splitlines()
E = TypeVar("E", bound=MatchEvent)


def test_wire_grids_read_as_card_codes() -> None:
    codes = parse_grid(GRID)
    assert len(codes) == 52 and codes.count(GAP) == 4 and codes[0] == Card.parse("3C").code


def event(kind: type[E], seq: int, t_ms: int = 0, **fields: Any) -> E:
    """An event of match K7QX2M."""
    return typed(kind, match="K7QX2M", seq=seq, t_ms=t_ms, **fields)


def moved(kind: type[ProgressMade | PlayerFinished], seq: int, t_ms: int, player_id: int,
          name: str, **fields: Any) -> ProgressMade | PlayerFinished:
    """A ``progress`` or ``player_finished`` event: the player's progress itself."""
    return event(kind, seq, t_ms, **msgspec.to_builtins(progress(player_id, name, **fields)))


SUMMARY = {"id": 1, "code": "K7QX2M", "ruleset": "classic", "max_players": 2,
           "time_limit_s": 600, "win_by": "time", "public": False, "rated": True,
           "countdown_s": 0, "bots": False, "host_id": 1, "kind": "race", "status": "lobby",
           "players": 1, "commitment": None, "started_at": None, "t_ms": 0}


def created(*players: Any, seq: int = 1) -> MatchCreated:
    return typed(MatchCreated, id=2, match=SUMMARY,
                 players=list(players) or [progress(1, "ana")], spectators=0,
                 you={"role": "player"}, seq=seq)


def ack(seq: int, **fields: Any) -> ActionOk:
    return typed(ActionOk, **{
        "id": 3, "match": "K7QX2M", "seq": seq, "t_ms": 100 * seq, "action": "3H",
        "kind": "move", "score": 0, "placed": 0, "redeals_used": 0, "redeals_left": 2,
        "moves_made": seq, "status": "playing", "can_undo": False, **fields})


def test_a_match_goes_from_the_lobby_to_the_ranking() -> None:
    state = MatchState("K7QX2M", you_id=1)
    state.apply(created())
    assert state.phase is Phase.LOBBY and state.is_host and state.role == "player"
    state.apply(event(PlayerJoined, 2, player=progress(2, "bob")))
    state.apply(event(ReadyChanged, 3, player_id=2, ready=True))
    assert state.players[2].ready is True
    assert state.summary is not None and state.summary.players == 2
    state.apply(event(Countdown, 4, countdown_ms=0, commitment=KNOWN.commitment, players=[1, 2]))
    assert state.phase is Phase.COUNTDOWN and state.commitment == KNOWN.commitment
    state.apply(event(Started, 5, started_at="2026-01-01T00:00:00.000Z",
                      commitment=KNOWN.commitment, ruleset="classic", time_limit_s=300,
                      grid=GRID, players=[progress(1, "ana"), progress(2, "bob")]))
    assert state.phase is Phase.RUNNING and state.playing and state.time_limit_s == 300
    assert state.own is not None and state.own.game().layout() == "\n".join(GRID)
    state.apply_ack(ack(1, action="3H", kind="move", card="3H", **{"from": "r4c1", "to": "r3c5"}))
    assert state.own.grid[Slot(3, 5).index] == Card.parse("3H").code
    assert state.own.grid[Slot(4, 1).index] == GAP
    assert state.me is not None and state.me.moves_made == 1
    state.apply(moved(ProgressMade, 6, 900, 2, "bob", placed=3, score=3, moves_made=4))
    state.apply(moved(PlayerFinished, 7, 950, 2, "bob", status="stopped", placed=3, score=3,
                      moves_made=4, finished=True, end_reason="stopped", finish_ms=950))
    assert state.players[2].end_reason == "stopped"
    assert type(state.players[2]).__name__ == "Progress"  # the progress alone is kept
    state.apply(moved(PlayerFinished, 8, 990, 1, "ana", status="stopped", finished=True,
                      end_reason="stopped", finish_ms=990))
    assert not state.playing and state.own.end_reason == "stopped"
    state.apply(event(MatchEnded, 9, 1000, ranking=[
        ranked(1, 2, "bob", score=3, end_reason="stopped", finish_ms=950),
        ranked(2, 1, "ana", end_reason="stopped", finish_ms=990),
    ], seed=str(KNOWN), commitment=KNOWN.commitment, ended_at="2026-01-01T00:00:01.000Z",
        ratings=[]))
    assert state.phase is Phase.FINISHED and state.ranking is not None
    assert [row.rank for row in state.ranking] == [1, 2]
    assert state.verified_commitment() is True and state.clock.now_ms() == 1000
    assert "bob finished: stopped, score 3" in state.log


def test_acks_move_cards_redeal_and_are_applied_once() -> None:
    own = OwnGame.dealt(GRID, Ruleset.named("classic"))
    assert (own.score, own.placed, own.redeals_left, own.status) == (0, 0, 2, "playing")
    moved = ack(1, kind="move", card="3H", **{"from": "r4c1", "to": "r3c5"})
    assert own.apply_ack(moved) and not own.apply_ack(msgspec.structs.replace(
        moved, duplicate=True))
    assert own.game().card_at(Slot(3, 5)) == Card.parse("3H")
    assert own.moves_made == 1 and own.last_seq == 1
    redealt = Game.from_layout("\n".join(GRID))
    redealt_grid = redealt.layout().splitlines()[::-1]  # any grid of 48 cards and 4 gaps
    own.apply_ack(ack(2, action="r", kind="redeal", grid=redealt_grid, redeals_used=1,
                      redeals_left=1, score=-5, status="playing"))
    assert own.game().layout().splitlines() == redealt_grid and own.redeals_used == 1
    own.apply_ack(ack(3, action="s", kind="stop", status="stopped", score=-5, redeals_used=1,
                      redeals_left=1))
    assert own.over and own.game().is_over()


def rejoined(seq: int, last_seq: int, game: Game, **match: Any) -> Joined:
    """The ``joined`` snapshot of a running match K7QX2M, ana's game in it as ``game``."""
    return typed(Joined, id=2, match={
        **SUMMARY, "status": "running", "started_at": "2026-01-01T00:00:00.000Z",
        "t_ms": 5000, **match,
    }, players=[progress(1, "ana")], spectators=0, seq=seq, you={
        "role": "player", "last_seq": last_seq, "game": {
            "grid": game.layout().splitlines(), "score": game.score, "placed": game.placed,
            "redeals_used": 0, "redeals_left": 2, "moves_made": game.moves_made,
            "status": "playing", "can_undo": False}})


def test_a_rejoin_snapshot_is_not_undone_by_a_replayed_started_event() -> None:
    state = MatchState("K7QX2M", you_id=1)
    moved = Game(KNOWN, "classic")
    moved.play(Move.parse("3H"))
    state.apply(rejoined(1, 1, moved))
    state.apply(event(Started, 5, 0, started_at="2026-01-01T00:00:00.000Z",
                      commitment=KNOWN.commitment, ruleset="classic", time_limit_s=600,
                      grid=GRID, players=[progress(1, "ana")]))
    assert state.own is not None and state.own.game().layout() == moved.layout()
    assert state.own.last_seq == 1


def test_the_clock_runs_on_the_servers_time_and_never_goes_back() -> None:
    now = [100.0]
    clock = ServerClock(lambda: now[0])
    assert clock.now_ms() == 0 and not clock.running
    clock.sync(0)
    now[0] = 102.5
    assert clock.now_ms() == 2500
    clock.sync(2000)  # a late message: the earlier origin stays
    assert clock.now_ms() == 2500
    clock.sync(3000)  # the server is ahead of what we thought
    assert clock.now_ms() == 3000
    clock.freeze(3100)
    now[0] = 200.0
    assert clock.now_ms() == 3100


def test_a_snapshot_after_a_server_restart_numbers_anew_and_keeps_the_acknowledged_game() -> None:
    state = MatchState("K7QX2M", you_id=1)
    game = Game(KNOWN, "classic")
    state.apply(rejoined(40, 0, game))
    assert state.last_seq == 40
    game.play(Move.parse("3H"))
    # The restarted server numbers its events from 1: its snapshot is the count now.
    state.apply(rejoined(2, 1, game))
    assert state.last_seq == 2 and state.own is not None and state.own.last_seq == 1
    assert state.own.game().layout() == game.layout()
    state.apply(moved(ProgressMade, 3, 5100, 1, "ana", moves_made=1))
    assert state.last_seq == 3


def test_a_finished_snapshot_has_no_ranking_its_last_event_has_it() -> None:
    """A snapshot of a finished match carries no ranking (the protocol's snapshots have
    none): the screen and the bots fetch the ``match_ended`` event for it."""
    state = MatchState("K7QX2M", you_id=1)
    game = Game(KNOWN, "classic")
    state.apply(rejoined(3, 0, game, status="finished"))
    assert state.phase is Phase.FINISHED and state.ranking is None
    ranking = [ranked(1, 1, "ana", end_reason="time", finish_ms=600_000)]
    state.apply(event(MatchEnded, 3, 600_000, ranking=ranking, seed=None,
                      commitment=KNOWN.commitment, ended_at="2026-01-01T00:10:00.000Z",
                      ratings=[]))
    assert state.ranking == ranking


def test_connection_notices_are_logged_and_a_match_gone_says_which_and_why() -> None:
    state = MatchState("K7QX2M", you_id=1)
    state.apply(ConnectionNotice("lost", "the server is restarting; reconnecting"))
    state.apply(ConnectionNotice("restored", "reconnected to ws://x"))
    assert state.log == ["connection lost: the server is restarting; reconnecting",
                         "connection restored: back in the match"]
    state.apply(ConnectionNotice(
        "gone", "cannot rejoin match OTHER1: no live match has code 'OTHER1'", match="OTHER1"))
    assert state.gone is None
    state.apply(ConnectionNotice(
        "gone", "cannot rejoin match K7QX2M: no live match has code 'K7QX2M'", match="K7QX2M"))
    assert state.gone == ("match K7QX2M is gone: cannot rejoin match K7QX2M: "
                          "no live match has code 'K7QX2M'")
    assert state.log[-1] == state.gone
    failed = MatchState("K7QX2M", you_id=1)
    failed.apply(ConnectionNotice("failed",
                                  "could not reconnect to ws://x: connection refused"))
    assert failed.gone == "lost match K7QX2M: could not reconnect to ws://x: connection refused"


def test_rematches_offered_are_kept_by_deal_and_logged_and_a_bot_joining_is_named_so() -> None:
    state = MatchState("K7QX2M", you_id=1)
    state.apply(created())
    state.apply(event(PlayerJoined, 2, player=progress(2, "robo", bot=True)))
    new = event(RematchOffered, 3, code="R3MTCH", same_seed=False,
                by={"player_id": 2, "name": "robo"})
    same = event(RematchOffered, 4, code="S4MEDL", same_seed=True,
                 by={"player_id": 1, "name": "ana"})
    state.apply(new)
    state.apply(same)
    assert state.rematches == {False: new, True: same}
    assert state.log[-3:] == ["robo [bot] joined",
                              "robo offers a rematch (a new deal): match R3MTCH",
                              "ana offers a rematch (the same deal): match S4MEDL"]
    assert state.last_seq == 4


def test_a_player_away_and_back_and_the_host_handed_on_are_shown() -> None:
    state = MatchState("K7QX2M", you_id=2)
    state.apply(created(progress(1, "ana"), progress(2, "bob"), seq=2))
    assert not state.is_host
    state.apply(event(Presence, 3, player_id=1, connected=False))
    assert state.players[1].connected is False and state.log[-1] == "ana is away"
    state.apply(event(Presence, 4, player_id=1, connected=True))
    assert state.players[1].connected is True and state.log[-1] == "ana is back"
    state.apply(event(PlayerLeft, 5, player_id=1))
    state.apply(event(HostChanged, 6, host_id=2))
    assert state.is_host
    assert state.log[-1] == "you are the host now: start the match when you like"
