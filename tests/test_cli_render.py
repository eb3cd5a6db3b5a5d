"""client_cli.render: cards with suit symbols and colours, actions in the board's
notation, bot marks, and the server's text as inert ``Text``."""

from __future__ import annotations

import io

import msgspec
import pytest
from rich.console import Console
from rich.text import Text

from client_cli.palette import DARK, LIGHT
from client_cli.render import (
    action_text,
    append_bot_mark,
    bot_mark,
    card_label,
    is_bot,
    printable_text,
)
from gaps import Card, Move
from tests.cli_support import progress


def test_cards_read_with_symbols_and_red_hearts_and_diamonds() -> None:
    assert card_label(Card.parse("TH")) == "10♥"
    assert card_label(Card.parse("8C")) == " 8♣"
    text = action_text("2H>3")
    assert text.plain == "2♥ → row 3"
    assert DARK.red_suit in str(text.spans[0].style)
    assert LIGHT.red_suit in str(action_text("2H>3", LIGHT).spans[0].style)
    assert action_text("8c").plain == "8♣"


def test_a_card_sent_to_column_1_is_echoed_with_its_slot() -> None:
    """Bug 7 of issue 13: ``8c>r1c1`` was echoed ``8C>1``."""
    assert action_text(str(Move.parse("8c>r1c1"))).plain == "8♣ → r1c1"
    assert action_text("8C>r2c6").plain == "8♣ → r2c6"


def test_printable_text_prints_a_servers_text_as_typed_never_as_markup() -> None:
    hostile = "ana\x1b[2J\u202e[bold]x[/bold] [link=http://x]y[/link] :smile:"
    text = printable_text(hostile, "dim")
    assert text.plain == "ana\ufffd[2J\ufffd[bold]x[/bold] [link=http://x]y[/link] :smile:"
    assert text.style == "dim" and text.spans == []  # no bold, no link: markup is not read
    console = Console(file=io.StringIO(), width=200, force_terminal=True, color_system=None)
    console.print(text)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert printed == f"{text.plain}\n"  # no control sequence, no hyperlink, no emoji


def test_only_an_entry_that_says_bot_true_is_a_bots_and_gets_the_mark() -> None:
    robo, ana = progress(1, "robo", bot=True), progress(2, "ana")
    assert is_bot(robo) and bot_mark(robo) == " [bot]"
    assert not is_bot(ana) and bot_mark(ana) == ""
    assert append_bot_mark(Text("robo"), robo).plain == "robo [bot]"
    assert append_bot_mark(Text("ana"), ana).plain == "ana"
    for not_a_yes_or_no in ("yes", None, 1):  # the client reads no such entry
        with pytest.raises(msgspec.ValidationError, match=r"\$\.bot"):
            progress(3, "cy", bot=not_a_yes_or_no)
