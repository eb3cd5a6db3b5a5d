"""Every card, gap and line of text reads against what it is drawn on (WCAG 2's contrast
ratio of at least 4.5:1), in both colour settings, computed from the themes' colours."""

from __future__ import annotations

import io
from collections.abc import Iterable

import pytest
from rich.console import Console
from rich.text import Text

from client_cli.board import GEOMETRIES, ON_TARGET, board_lines
from client_cli.palette import (
    DARK,
    LIGHT,
    MIN_CONTRAST,
    MIN_SHAPE_CONTRAST,
    ON_DARK_BAR,
    ON_WARNING_BAR,
    PALETTES,
    TITLE_ALERT,
    TITLE_HEADING,
    TITLE_TEXT,
    TITLE_WATCHING,
    Palette,
    contrast_ratio,
    palette_named,
    theme_of,
)
from client_cli.players import Look, players_table
from gaps import Game
from tests.cli_support import EVERY_CELL, at, progress

SETTINGS = list(PALETTES.values())
def theme_colours(palette: Palette) -> dict[str, str]:
    """The colours Textual computes from the setting's theme (``$background``, ...)."""
    return {name: value.upper() if value.startswith("#") else value
            for name, value in theme_of(palette).to_color_system().generate().items()}


def pairs(lines: Iterable[Text], background: str) -> set[tuple[str, str, str]]:
    """(colour, ground, what) of every visible character drawn: the ground is the
    screen's background where the text sets none."""
    console = Console(file=io.StringIO(), width=300, color_system="truecolor")
    found = set()
    for line in lines:
        for segment in line.render(console):
            if not segment.text.strip() or segment.style is None:
                continue
            style = segment.style
            assert style.color is not None, f"{segment.text!r} has no colour of its own"
            colour = style.color.triplet.hex if style.color.triplet else str(style.color)
            ground = (style.bgcolor.triplet.hex if style.bgcolor and style.bgcolor.triplet
                      else background)
            found.add((colour.upper(), ground.upper(), segment.text.strip()))
    return found


def test_the_contrast_ratio_is_wcags() -> None:
    assert contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert contrast_ratio("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)  # AA's grey
    assert palette_named("light") is LIGHT and palette_named("sepia") is DARK


@pytest.mark.parametrize("palette", SETTINGS, ids=lambda p: p.name)
def test_each_setting_draws_on_its_themes_background(palette: Palette) -> None:
    assert theme_colours(palette)["background"] == palette.background.upper()


@pytest.mark.parametrize("palette", SETTINGS, ids=lambda p: p.name)
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_every_card_and_gap_reads_against_its_ground(palette: Palette, geometry: object) -> None:
    """Every cell kind, and the cursor on each (its colours swapped), the selection, the
    targets, the marks: every mark drawn reads at 4.5:1 or more."""
    game = Game.from_layout(EVERY_CELL)
    drawn: set[tuple[str, str, str]] = set()
    for cursor in (at("r1c1"), at("r1c4"), at("r1c5"), at("r1c6"), at("r3c1"), at("r3c12"),
                   at("r4c10"), at("r2c13")):
        lines = board_lines(game, geometry=geometry, palette=palette,  # type: ignore[arg-type]
                            cursor=cursor, selected=at("r3c11"), targets={at("r2c13")},
                            movable={at("r3c11"), at("r4c9")})
        drawn |= pairs(lines, palette.background)
    marks = {mark for _, _, mark in drawn}
    assert {"·", "✕", "▼", "K♥", "10♥", "J♠", "2♣"} <= marks  # every kind was drawn
    for colour, ground, mark in drawn:
        ratio = contrast_ratio(colour, ground)
        assert ratio >= MIN_CONTRAST, f"{mark!r}: {colour} on {ground} is {ratio:.2f}:1"


@pytest.mark.parametrize("palette", SETTINGS, ids=lambda p: p.name)
def test_the_players_table_and_the_messages_read_on_the_background(palette: Palette) -> None:
    players = [
        progress(1, "me", placed=3, score=3, status="blocked"),
        progress(2, "robo", bot=True, placed=9, score=9, end_reason="won", finish_ms=1000),
        progress(3, "cy", connected=False),
        progress(4, "di", placed=1, score=1, end_reason="stopped", finish_ms=1000),
    ]
    table = players_table(players, width=70, look=Look(you_id=1, palette=palette))
    console = Console(file=io.StringIO(), width=70, color_system="truecolor")
    lines = [Text.assemble(*((s.text, s.style) for s in line))
             for line in console.render_lines(table, pad=False)]
    texts = [Text(word, style=colour) for word, colour in (
        ("text", palette.text), ("muted", palette.muted), ("error", palette.error),
        ("warning", palette.warning), ("good", palette.good), ("you", palette.you),
        ("bot", palette.bot), ("label", palette.label), *(
            (f"rank {rank}", medal) for rank, medal in enumerate(palette.medals, start=1)))]
    for colour, ground, what in pairs([*lines, *texts], palette.background):
        least = MIN_SHAPE_CONTRAST if set(what) <= {"░", "█"} else MIN_CONTRAST  # a bar
        assert contrast_ratio(colour, ground) >= least, (what, colour, ground)


@pytest.mark.parametrize("palette", SETTINGS, ids=lambda p: p.name)
def test_the_title_the_mode_label_and_the_footer_read_on_their_bars(palette: Palette) -> None:
    """The colours the screens' CSS sets (client_cli.boardapp, screen, footer)."""
    theme = theme_colours(palette)
    for text, ground in (
            (TITLE_TEXT, theme["primary-darken-3"]),
            (TITLE_HEADING, theme["primary-darken-3"]),
            (TITLE_ALERT, theme["primary-darken-3"]),
            (TITLE_WATCHING, theme["primary-darken-3"]),
            (ON_DARK_BAR, theme["primary-darken-2"]),  # BOARD
            (ON_WARNING_BAR, theme["warning-darken-2"]),  # MOVE, COMMAND
            (theme["foreground"], theme["panel"]),  # VIEW
            (theme["footer-key-foreground"], theme["footer-background"]),
            (palette.muted, palette.background),  # the input line's placeholder
            (ON_TARGET, palette.target)):
        ratio = contrast_ratio(text, ground)
        assert ratio >= MIN_CONTRAST, f"{text} on {ground} is {ratio:.2f}:1"
