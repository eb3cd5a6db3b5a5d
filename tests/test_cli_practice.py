"""Practice: offline play with gaps alone, hints and undo, on the same board as matches."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot

from client_cli.help import HelpScreen
from client_cli.layout import board_alone
from client_cli.practice import PracticeApp, PracticeSession, suggest
from client_cli.widgets import BoardView, MessageLine
from gaps import Game, IllegalAction, Move, NotationError, Seed
from tests.cli_support import screen_text, winning_line

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


async def test_a_typed_line_is_taken_as_typed_or_refused_saying_why() -> None:
    """The one rule for text (gaps_protocol.text), as the server applies it: a space
    around a move is refused, never stripped; the same move typed plainly is played."""
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("colon", "space", "3", "h", "enter")
        assert said(app) == "' 3h' begins with a space"
        await pilot.press("colon", "3", "h", "space", "space", "enter")
        assert said(app) == "'3h  ' ends with a space"
        assert app.session.actions == []
        await pilot.press("colon", "3", "h", "enter")
        assert app.session.actions == ["3H"]


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


SIZES = [(60, 20), (80, 24), (120, 40), (200, 50)]


async def wait_for_hint(app: PracticeApp, pilot: Pilot[Any]) -> None:
    deadline = asyncio.get_running_loop().time() + 10
    while app.last_hint is None:
        assert asyncio.get_running_loop().time() < deadline
        await pilot.pause(0.02)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_practice_board_fits_every_size_and_follows_resizes(
    size: tuple[int, int],
) -> None:
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=size) as pilot:
        board = app.query_one(BoardView)
        for columns, lines in (size, (200, 50), (60, 20), size):
            await pilot.resize_terminal(columns, lines)
            await pilot.pause()
            assert board.geometry == board_alone(columns, lines)
            assert board.region.right <= columns  # all 13 columns, and the border
            assert board.region.bottom <= lines - 4  # the stats, message, input, footer
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert board.geometry.tiles and board.region.width > 150  # it grows with the terminal


async def test_a_hint_selects_its_card_and_marks_where_it_goes() -> None:
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("h")
        await wait_for_hint(app, pilot)
        await pilot.pause()
        hint = app.last_hint
        assert isinstance(hint, Move)
        game, board = app.session.game, app.query_one(BoardView)
        assert board.selected == game.slot_of(hint.card).index
        assert board.targets == {game.destination(hint).index}
        assert said(app).endswith("(Enter plays it)")
        await pilot.press("enter")
        assert app.session.actions == [str(hint)]


async def test_marks_underline_every_card_that_can_move() -> None:
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        board = app.query_one(BoardView)
        assert board.marks and said(app).startswith("Marked")
        await pilot.press("m")
        assert not board.marks


async def test_throwing_a_game_away_asks_first() -> None:
    """Bug 4: ``n`` threw the game away, ``ctrl+q`` too, without asking."""
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("3", "h", "enter")
        await pilot.press("n")
        assert said(app) == "Press n again for a new deal: this game is thrown away."
        assert app.session.share_code == str(KNOWN)
        await pilot.press("n")
        assert app.session.share_code != str(KNOWN)
        app.submit(str(app.session.game.legal_moves()[0]))  # the new deal's first move
        await pilot.press("s")
        assert "Press s again" in said(app) and not app.session.game.is_over()
        await pilot.press("z")
        assert said(app).startswith("'z' is not a key here")
        await pilot.press("ctrl+q")
        assert app.is_running and said(app) == ("Press ctrl+q again to quit: this game is "
                                                "thrown away.")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_practice_screen_looks_as_it_did(size: tuple[int, int], snap_compare: Any) -> None:
    """An SVG snapshot (pytest-textual-snapshot): a layout change fails here."""
    assert snap_compare(PracticeApp(PracticeSession(KNOWN, "classic")), terminal_size=size,
                        press=["m", "right", "right"])


async def test_ctrl_s_saves_the_screen_and_ctrl_p_opens_the_command_palette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await pilot.pause()
        [saved] = tmp_path.glob("*.svg")
        assert saved.read_text().startswith("<svg") and "AAAA-BBBB-CCCC-DDDD" in \
            saved.read_text().replace("&#45;", "-")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert titles.count("Screenshot") == 1 and "Theme" not in titles
        assert "Colours: light" in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"marks", "enter")
        await pilot.pause(0.3)
        assert app.query_one(BoardView).marks


def blocked(session: PracticeSession) -> PracticeSession:
    """``session`` played on until no move is left: any move but a 2's from column 1 to
    another row's column 1 (which could go back and forth for ever)."""
    for _ in range(200):
        game = session.game
        moves = [move for move in game.legal_moves()
                 if not (move.card.rank == 2 and game.slot_of(move.card).column == 1)]
        if not moves:
            break
        session.play(str(moves[0]))
    assert session.game.result() == "blocked" and session.game.can_redeal()
    return session


async def test_enter_plays_a_hint_that_is_no_move_and_moving_the_cursor_drops_it() -> None:
    """Issue 31: after "Hint: redeal", Enter acted on the cursor's cell instead."""
    app = PracticeApp(blocked(PracticeSession(KNOWN, "classic")))
    async with app.run_test(size=(80, 24)) as pilot:
        before = list(app.session.actions)
        await pilot.press("h")
        await wait_for_hint(app, pilot)
        hint = str(app.last_hint)
        assert hint in ("redeal", "stop") and said(app).startswith(f"Hint: {hint}")
        assert "⏎ play the hint" in screen_text(app)
        await pilot.press("right")  # looking elsewhere: Enter picks the cell again
        assert "⏎ play the hint" not in screen_text(app)
        app.last_hint = None
        await pilot.press("h")
        await wait_for_hint(app, pilot)
        await pilot.press("enter")
        assert app.session.actions == [*before, hint]


async def test_a_won_practice_game_has_a_headline_and_says_what_next() -> None:
    """Issue 31: a practice win said "this game is over"."""
    seed, line = winning_line()
    session = PracticeSession(Seed.parse(seed), "classic")
    for action in line[:-1]:
        session.play(action)
    app = PracticeApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        app.submit(line[-1])
        await pilot.pause()
        score = app.session.game.score
        assert said(app) == f"You won! Score {score}. n deals a new game."
        assert f"You won! Score {score}" in screen_text(app)
        await pilot.press("enter")
        assert said(app) == f"You won this deal (score {score}): n deals a new one."
        await pilot.press("8")  # no move can be typed: the key says what the screen does
        assert said(app) == "'8' does nothing now: ? lists the keys, ctrl+q quits"


async def test_a_key_whose_action_the_rules_refuse_says_why_and_is_not_in_the_footer() -> None:
    app = PracticeApp(PracticeSession(KNOWN, "classic"))
    async with app.run_test(size=(80, 24)) as pilot:
        assert "r redeal" not in screen_text(app) and "u undo" not in screen_text(app)
        await pilot.press("u")
        assert said(app) == "Nothing to take back"
        await pilot.press("r")
        assert said(app).endswith("[redeal_not_allowed]")
