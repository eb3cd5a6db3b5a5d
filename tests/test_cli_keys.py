"""The match screen's keys: each means one thing on its screen, the footer lists only those
that work now, a key that does nothing says why, and messages that no longer apply go.
Driven by Textual's Pilot against a scripted server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.binding import Binding
from textual.widgets import Input, Static

from client_cli.match_state import Phase
from client_cli.palette import LIGHT
from client_cli.screen import MatchApp, RankingScreen
from client_cli.widgets import BoardView
from gaps import Card, Game, Seed
from tests.cli_support import (
    BOB,
    CAROL,
    DEAL,
    ME,
    dealt,
    lobby,
    message,
    race,
    racing,
    screen_text,
    seated,
    until,
)

ENDED = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "match_ended",
         "t_ms": 300_000, "seed": DEAL, "commitment": Seed.parse(DEAL).commitment, "ranking": [
             {**BOB, "rank": 1}, {**seated(ME["id"], "me"), "rank": 2, "moves_made": 0,
                                  "end_reason": "time", "finish_ms": 300_000}]}


def footer(app: MatchApp) -> str:
    """The footer's line, its keys one space apart."""
    return " ".join(screen_text(app).rstrip().splitlines()[-1].split())


async def test_after_the_ranking_b_goes_back_and_forth_and_only_ctrl_q_quits_the_board() -> None:
    """Issue 31: ``q`` quit in the lobby but was a Queen in play; on the board's screen it
    never quits (ctrl+q does); on the ranking, a screen of its own, q quits."""
    async with race((80, 24)) as (app, pilot, hostile):
        await hostile.push(ENDED)
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        await pilot.press("b")
        assert app.screen is app.default_screen
        await pilot.pause()
        assert "b ranking" in footer(app) and " q quit" not in f" {footer(app)}"
        await pilot.press("q")
        assert app.is_running and message(app) == ("'q' does nothing now: ? lists the keys, "
                                                   "ctrl+q quits")
        await pilot.press("b")
        assert isinstance(app.screen, RankingScreen)
        await pilot.pause()
        assert footer(app).startswith("q quit b the board")
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running)
        assert app.query_one("#command", Input).value == ""


async def test_keys_on_the_board_never_act_unasked() -> None:
    """A key that is no command says so; a redeal and quitting ask first (the question
    first, so that a narrow terminal keeps it); ctrl+c quits as ctrl+q does; a rank (``q``
    too) starts a typed move."""
    async with race((80, 24), game=dealt("addiction")) as (app, pilot, hostile):
        await pilot.press("z")
        assert message(app).startswith("'z' is not a key here")
        await pilot.press("r")
        assert message(app) == "Press r again to redeal: -5 points (3 left)."
        await pilot.press("escape")  # let go: a press later is a first press again
        await pilot.press("q")
        assert app.query_one("#command", Input).value == "q"
        await pilot.press("escape")
        assert app.query_one("#command", Input).value == ""
        await pilot.press("ctrl+q")
        assert app.is_running and message(app) == (
            "Press ctrl+q again to quit: your game ends unless you come back soon.")
        assert "Press ctrl+q again to quit" in screen_text(app)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running)
        assert hostile.sent("action") == []


async def test_a_key_that_cannot_act_now_says_why_and_is_not_in_the_footer() -> None:
    async with race((80, 24)) as (app, pilot, _):  # classic: a redeal once blocked only
        assert "r redeal" not in footer(app) and "u undo" not in footer(app)
        await pilot.press("r")
        assert message(app).startswith("No redeal: ") and "[redeal_not_allowed]" in message(app)
        await pilot.press("u")
        assert message(app) == "No undo in classic (docs/rules.md)."


async def test_while_a_move_is_typed_the_footer_shows_only_what_works() -> None:
    """Issue 31: the footer listed ``r redeal s stop`` while a move was being typed."""
    async with race((80, 24), game=dealt("addiction")) as (app, pilot, _):
        def mode() -> str:
            return str(app.query_one("#mode", Static).render())

        # The footer is drawn after the key that changes it: a loaded machine may take
        # more than one pause to draw it, so each footer is waited for.
        assert mode() == "BOARD"
        await until(pilot, lambda: "↑↓←→ cursor" in footer(app) and "r redeal" in footer(app))
        assert "esc let go" not in footer(app)  # nothing to let go yet
        await pilot.press("8")
        assert mode() == "MOVE"
        await until(pilot, lambda: footer(app) == "⏎ play it esc drop it ^q quit")
        await pilot.press("r", "s")  # letters of the move: nothing is redealt or stopped
        assert app.query_one("#command", Input).value == "8rs"
        await pilot.press("escape", "colon")
        assert mode() == "COMMAND"
        await until(pilot, lambda: footer(app) == "^q quit esc back to the board")
        await pilot.press("escape")
        assert mode() == "BOARD"
        board = app.query_one(BoardView)
        board.point_at(board.game.slot_of(Card.parse("4D")).index if board.game else 0)
        await until(pilot, lambda: "esc let go" in footer(app) and "? help" in footer(app))


async def test_at_60_columns_the_footer_keeps_help_and_quit() -> None:
    async with race((60, 20)) as (app, pilot, _):
        # The footer composes its keys for the width once laid out: a loaded machine may
        # draw the screen before it has.
        await until(pilot, lambda: "quit" in footer(app))
        line = footer(app)
        assert "? help" in line and "^q quit" in line and len(line) <= 60


async def test_a_redeal_asks_first_and_goes_on_the_second_press() -> None:
    game = dealt("addiction")
    ack = {"type": "action_ok", "match": "K7QX2M", "seq": 1, "kind": "redeal", "t_ms": 62_000,
           "grid": game.layout().splitlines(), "score": -5, "placed": 0, "redeals_used": 1,
           "redeals_left": game.redeals_left - 1, "moves_made": 1, "status": "playing",
           "can_undo": False}
    async with race((80, 24), game=game, answers={"action": [ack]}) as (app, pilot, hostile):
        await pilot.press("r")
        assert hostile.sent("action") == []
        await pilot.press("r")
        await until(pilot, lambda: len(hostile.sent("action")) == 1)
        assert hostile.sent("action")[0]["action"] == "redeal"


async def test_a_question_goes_when_its_time_to_answer_is_over() -> None:
    async with race((80, 24)) as (app, pilot, hostile):
        app.CONFIRM_S = 0.5
        await pilot.press("s")
        assert message(app).startswith("Press s again to stop")
        await until(pilot, lambda: message(app) == "")
        await pilot.press("s")  # a first press again: it asks again, and stops nothing
        assert message(app).startswith("Press s again") and hostile.sent("action") == []


async def test_in_the_lobby_r_asks_before_starting_with_empty_seats() -> None:
    """The lobby shows seats and clock; ``r`` alone does not start a 4-seat match."""
    ready = {"type": "ok"}
    async with race((80, 24), snapshot=lobby("K7QX2M", max_players=4),
                    answers={"ready": [ready]}) as (app, pilot, hostile):
        assert "Seats 1/4 · clock 10:00 · classic · win by time" in screen_text(app)
        await pilot.press("r")
        assert message(app) == ("Press r again to start now with 1 of 4 seats taken (the "
                                "others are ready).")
        assert hostile.sent("ready") == []
        await pilot.press("r")
        await until(pilot, lambda: len(hostile.sent("ready")) == 1)


async def test_a_message_about_a_moment_gone_goes_with_it() -> None:
    """Issue 31: "'g' does nothing now" stayed after the deal."""
    snapshot = lobby("K7QX2M", seated(8, "bob"), host_id=8, max_players=2)
    game = dealt()
    started = {"type": "event", "match": "K7QX2M", "seq": 1, "event": "started",
               "t_ms": 0, "ruleset": "classic", "time_limit_s": 600, "commitment": "c" * 64,
               "started_at": "2026-11-30T18:00:00.000Z", "grid": game.layout().splitlines(),
               "players": [seated(ME["id"], "me", status="playing"),
                           seated(8, "bob", status="playing")]}
    async with race((80, 24), snapshot=snapshot) as (app, pilot, hostile):
        await pilot.press("g")
        assert message(app) == "Only the host starts the match (g); r says you are ready."
        await hostile.push(started)
        await until(pilot, lambda: app.state.phase is Phase.RUNNING)
        await until(pilot, lambda: message(app) == "")


async def test_a_refusal_speaks_the_board_notation() -> None:
    """``TH``, ``9H`` and a card already in place, as the board names them."""
    refusals = [{"type": "error", "code": "illegal_action", "reason": "not_a_gap",
                 "message": "TH: 9H stands in column 13, so TH has no slot to go to"}]
    async with race((80, 24), answers={"action": refusals}) as (app, pilot, _):
        await pilot.press("1", "0", "h", "enter")
        await until(pilot, lambda: "[not_a_gap]" in message(app))
        assert message(app) == "10♥ has no slot: 9♥ ends its row, in column 13 [not_a_gap]"
        await pilot.press("colon", *"stop now", "enter")
        assert message(app) == "'stop now' is not an action: type stop alone"


async def test_a_game_over_while_others_play_says_so_and_quitting_asks() -> None:
    """How the game ended has a line of its own, the title keeps "quick match" after a
    rejoin, and quitting says the ranking comes later."""
    game = dealt()
    game.stop()
    snapshot = racing("K7QX2M", game, BOB, CAROL, kind="quick")
    snapshot["players"][0].update(end_reason="stopped", finish_ms=240_800, finished=True)
    async with race((120, 40), snapshot=snapshot) as (app, pilot, _):
        text = screen_text(app)
        assert "Finished: stopped at 4:00.8 · waiting for the others…" in text
        assert "quick match" in text
        await pilot.press("enter")
        assert message(app) == "Your game is over (stopped): waiting for the others."
        await pilot.press("ctrl+q")
        assert "the others still play" in message(app) and app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running)


async def test_a_won_game_has_a_headline_and_the_match_its_winner() -> None:
    game = Game(Seed.parse(DEAL), "classic")
    snapshot = racing("K7QX2M", game, BOB)
    snapshot["players"][0].update(end_reason="won", finish_ms=200_000, finished=True)
    snapshot["you"]["game"]["status"] = "won"
    async with race((80, 24), snapshot=snapshot) as (app, pilot, hostile):
        assert "You won in 3:20.0! · waiting for the others…" in screen_text(app)
        won = {**ENDED, "ranking": [{**seated(ME["id"], "me"), "rank": 1, "end_reason": "won",
                                     "finish_ms": 200_000}, {**BOB, "rank": 2}]}
        await hostile.push(won)
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        await pilot.pause()
        assert "Match K7QX2M: You win! (won in 3:20.0)" in screen_text(app)
        await pilot.press("b")
        await asyncio.sleep(0.1)
        assert "You win! (won in 3:20.0) · b: the ranking" in screen_text(app)


def test_the_docs_key_table_is_the_screens_bindings() -> None:
    """Every key docs/client.md lists for the match screen is bound, and every key bound
    (the screen's, the board's Enter and Esc) is in the docs."""
    docs = (Path(__file__).parent.parent / "docs" / "client.md").read_text()
    section = docs.split("### Keys", 1)[1].split("\n\n")
    table = next(block for block in section if block.startswith("| key |"))
    documented = {key for line in table.splitlines()[2:]
                  for key in line.split("|")[1].strip().strip("`").split("` `")}
    names = {"question_mark": "?", "colon": ":", "slash": "/", "enter": "Enter",
             "escape": "Esc"}
    bound = {names.get(key, key) for binding in MatchApp.BINDINGS if isinstance(binding, Binding)
             for key in binding.key.split(",")}
    board = {names.get(key, key) for binding in BoardView.BINDINGS
             if isinstance(binding, Binding) for key in binding.key.split(",")}
    assert documented == bound | {"Enter", "Esc"}, (documented, bound)
    assert {"Enter", "Esc", "up", "down", "left", "right"} <= board


async def test_the_colours_switch_on_any_screen() -> None:
    async with race((80, 24)) as (app, pilot, hostile):
        await hostile.push(ENDED)
        await until(pilot, lambda: isinstance(app.screen, RankingScreen))
        app.action_switch_colours()  # from the command palette, over the ranking
        await pilot.pause()
        assert app.palette is LIGHT and app.current_theme.name == "gaps-light"
        assert isinstance(app.screen, RankingScreen) and app.screen.palette is LIGHT
        await pilot.press("b")
        await pilot.pause()
        assert app.query_one(BoardView).palette is LIGHT
