"""A spectator sees every player's progress live and, once the match is over, every final
board, replayed from the match's replay (the protocol sends nobody another's grid)."""

from __future__ import annotations

from typing import Any

from client_cli.connection import Connection
from client_cli.finals import FinalBoards, final_boards
from client_cli.render import card_label
from client_cli.screen import MatchApp, RankingScreen
from gaps import Game, Seed, Slot, parse_action
from gaps_protocol.messages.views import Replay
from tests.cli_support import (
    BOB,
    DEAL,
    Hostile,
    message,
    racing,
    screen_text,
    seated,
    typed,
    until,
)

#: ana moved one card; bob's first action is no legal move (a forged document).
ANA_MOVE = "3H"


def replay_document(par: dict[str, Any] | None) -> dict[str, Any]:
    return {"format": "gaps-replay/1",
            "match": {"code": "K7QX2M", "ruleset": "classic", "seed": DEAL, "par": par},
            "players": [
                {"player_id": 9, "name": "bob", "rank": 2, "score": 0, "bot": True,
                 "actions": [{"seq": 1, "action": "KS", "t_ms": 10, "score": 0}]},
                {"player_id": 8, "name": "ana", "rank": 1, "score": 0,
                 "actions": [{"seq": 1, "action": ANA_MOVE, "t_ms": 10, "score": 0}]}]}


def test_each_final_board_is_replayed_from_the_seed_in_the_rankings_order() -> None:
    ana, bob = final_boards(typed(Replay, **replay_document(None)))
    assert ana.entry.name == "ana" and bob.entry.name == "bob"
    expected = Game(Seed.parse(DEAL), "classic")
    expected.push(parse_action(ANA_MOVE))
    assert ana.game is not None and ana.game.grid_codes() == expected.grid_codes()
    assert bob.why is not None and bob.why.startswith("stops at")  # a refused action


def test_a_document_whose_seed_is_no_deal_has_no_boards() -> None:
    document = replay_document(None)
    document["match"]["seed"] = "AAAB"  # a share code's form, but a mistyped letter
    assert final_boards(typed(Replay, **document)) == []


async def test_a_spectator_sees_every_board_with_its_gap_to_par_once_the_match_ends() -> None:
    watching = racing("K7QX2M", Game(Seed.parse(DEAL), "classic"), BOB)
    watching["you"] = {"role": "spectator"}
    watching["spectators"] = 1
    ended = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "match_ended",
             "t_ms": 300_000, "seed": DEAL, "commitment": Seed.parse(DEAL).commitment,
             "ranking": [{**seated(8, "ana"), "rank": 1, "end_reason": "time",
                          "finish_ms": 300_000},
                         {**seated(9, "bob", bot=True), "rank": 2, "end_reason": "time",
                          "finish_ms": 300_000}]}
    document = replay_document({"score": 31, "exact": False})
    async with Hostile({"join_match": [watching],
                        "get_replay": [{"type": "replay", "replay": document}]}) as hostile:
        connection = await Connection.open(hostile.url, token="t")
        try:
            app = MatchApp(connection, await connection.join_match("K7QX2M"))
            app.state.clock.freeze(61_000)
            async with app.run_test(size=(130, 40)) as pilot:
                await pilot.pause()
                assert message(app).startswith("Watching: every player's progress, live")
                shown = screen_text(app)
                assert "watching (1 spectating)" in shown and "20/48" in shown
                await hostile.push(ended)
                await until(pilot, lambda: isinstance(app.screen, RankingScreen)
                            and app.state.replay is not None)
                await pilot.pause()
                assert "Par: at least 31 (a lower bound" in screen_text(app)
                await pilot.press("b")
                await until(pilot, lambda: app.query_one(FinalBoards).boards != ())
                await pilot.pause()
                shown = screen_text(app)
                assert "1. ana · 0 · at least 31 below par" in shown
                assert "2. bob [bot] · 0 · at least 31 below par" in shown
                corner = Game(Seed.parse(DEAL), "classic").card_at(Slot(1, 1))
                assert corner is not None and card_label(corner).strip() in shown
        finally:
            await connection.close()
