"""Practice: offline play with gaps alone, hints and undo, on the same board as matches."""

from __future__ import annotations

import asyncio

import pytest

from client_cli.practice import PracticeApp, PracticeSession, suggest
from client_cli.widgets import BoardView, HelpScreen, MessageLine
from gaps import Game, IllegalAction, Move, NotationError, Seed

KNOWN = Seed.parse("AAAA-BBBB-CCCC-DDDD")


def said(app: PracticeApp) -> str:
    text = app.query_one(MessageLine).text
    return text if isinstance(text, str) else text.plain


def test_a_session_plays_takes_back_and_shows_its_share_code() -> None:
    session = PracticeSession(KNOWN, "classic")
    assert session.share_code == "AAAA-BBBB-CCCC-DDDD"
    session.play("3h")
    session.play("2c>4")
    assert session.game.score == 1 and session.actions == ["3H", "2C>4"]
    session.play("undo")  # classic has no undo, but practice takes back anything
    assert session.game.score == 0 and session.game.moves_made == 1
    with pytest.raises(IllegalAction) as refused:
        session.play("redeal")
    assert refused.value.reason == "redeal_not_allowed"
    with pytest.raises(NotationError):
        session.play("8x")
    assert session.actions == ["3H"]
    session.play("undo")
    with pytest.raises(IllegalAction):
        session.play("undo")


def test_a_hint_is_a_legal_action_until_the_game_is_over() -> None:
    game = Game(KNOWN, "classic")
    hint = suggest(game)
    assert isinstance(hint, Move) and game.is_legal(hint)
    game.stop()
    assert suggest(game) is None


async def test_the_practice_board_plays_hints_takes_back_and_deals_again() -> None:
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(100, 30)) as pilot:
        assert "AAAA-BBBB-CCCC-DDDD" in str(app.query_one("#title").render())
        await pilot.press("3", "h", "enter")
        assert app.session.actions == ["3H"] and said(app).startswith("3♥")
        await pilot.press("5", "c", "enter")
        assert "[not_a_gap]" in said(app)
        await pilot.press("r")
        assert "[redeal_not_allowed]" in said(app)

        await pilot.press("h")
        deadline = asyncio.get_running_loop().time() + 10
        while app.last_hint is None:
            assert asyncio.get_running_loop().time() < deadline
            await pilot.pause(0.02)
        assert said(app).startswith("Hint: ")
        app.session.game.copy().push(app.last_hint)  # the hint is legal

        board = app.query_one(BoardView)
        board.point_at(board.game.gaps()[0].index if board.game else 0)  # a gap: its card
        await pilot.pause()
        await pilot.press("u", "u")
        assert app.session.actions == []
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("n")
        assert app.session.share_code != "AAAA-BBBB-CCCC-DDDD"
        await pilot.press("ctrl+q")
