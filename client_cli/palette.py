"""The screen's colours, in the two colour settings: ``dark`` (the default) and ``light``.

Each setting is a Textual theme (its background is the screen's) and the colours drawn on
it: the cards, the gaps, the board's highlights and the text of the screens. Every
colour a card, a gap or a line of text is drawn in reads at least ``MIN_CONTRAST`` (WCAG
2's 4.5:1 for text) against what it is drawn on; ``contrast_ratio`` computes it, and the
tests check every pair the board draws. The setting is kept in the config file
(``colours``) and switched from the command palette.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from textual.theme import BUILTIN_THEMES, Theme

#: WCAG 2's least contrast for text (level AA), and for shapes that are not text.
MIN_CONTRAST: Final = 4.5
MIN_SHAPE_CONTRAST: Final = 3.0


@dataclass(frozen=True)
class Palette:
    """The colours of one setting, as ``#rrggbb``."""

    name: str
    #: The Textual theme the screens use (``theme_of``: Textual's own, ``base``, with
    #: the keys of the footer in ``footer_key``), and its background (``$background``).
    theme: str
    base: str
    background: str
    footer_key: str
    # -- the board ------------------------------------------------------------------------
    black_suit: str  # ♣ ♠
    red_suit: str  # ♥ ♦
    face: str  # a card's face, on a board large enough to draw cards as tiles
    preserved: str  # behind a card of its row's preserved sequence
    selected: str  # behind the selected card
    target: str  # behind a place the selected card may go (▼), drawn in ``background``
    gap: str  # a live gap's mark (·), on ``gap_ground``
    gap_ground: str
    dead: str  # a dead gap's mark (✕), on ``dead_ground``
    dead_ground: str
    label: str  # the row and column numbers
    # -- text ------------------------------------------------------------------------------
    text: str
    muted: str  # the log, what matters less
    error: str
    warning: str
    good: str
    you: str  # your name wherever players are listed
    bot: str  # the [bot] mark
    bar_empty: str  # the empty part of a progress bar: a shape, not text (3:1 is enough)
    medals: tuple[str, str, str]  # the ranks 1, 2 and 3

    def suit(self, suit: str) -> str:
        """The colour of suit ``C``, ``D``, ``H`` or ``S``."""
        return self.red_suit if suit in ("D", "H") else self.black_suit


DARK: Final = Palette(
    name="dark", theme="gaps-dark", base="textual-dark", background="#121212",
    footer_key="#ffa62b",
    black_suit="#eeeeee", red_suit="#ff8a8a", face="#262626", preserved="#173f22",
    selected="#1f3a70", target="#ffd75f", gap="#7fe0ff", gap_ground="#0e3340",
    dead="#ffb08a", dead_ground="#3a1616", label="#a8a8a8",
    text="#d0d0d0", muted="#a8a8a8", error="#ff8a8a", warning="#ffd75f", good="#6fd08c",
    you="#8fd3ff", bot="#c9a0ff", bar_empty="#6a6a6a",
    medals=("#e0c040", "#c0c0c0", "#d09060"),
)
LIGHT: Final = Palette(
    name="light", theme="gaps-light", base="textual-light", background="#E0E0E0",
    footer_key="#00528f",
    black_suit="#1a1a1a", red_suit="#a00000", face="#f7f7f7", preserved="#b7dfbf",
    selected="#b4cdf2", target="#ffd75f", gap="#004a73", gap_ground="#c4e4f0",
    dead="#7a2e00", dead_ground="#f0d0c4", label="#4f4f4f",
    text="#1f1f1f", muted="#4a4a4a", error="#a00000", warning="#6b4a00", good="#1d6b35",
    you="#00528f", bot="#6a2a9a", bar_empty="#707070",
    medals=("#6b5000", "#4f4f4f", "#8a4a1a"),
)
PALETTES: Final = {palette.name: palette for palette in (DARK, LIGHT)}
#: The title bar is dark in both settings (``$primary-darken-3``): its text, what the
#: match is part of, the clock's last minute, a spectator's word.
TITLE_TEXT: Final = "#f0f0f0"
TITLE_HEADING: Final = "#ffd75f"
TITLE_ALERT: Final = "#ff9f9f"
TITLE_WATCHING: Final = "#8fd3ff"
#: The mode label's text on its grounds: ``$primary-darken-2``, ``$warning-darken-2``.
ON_DARK_BAR: Final = TITLE_TEXT
ON_WARNING_BAR: Final = "#121212"
#: The other setting (the command palette's switch).
OTHER: Final = {"dark": "light", "light": "dark"}


def palette_named(name: str | None) -> Palette:
    """The palette of setting ``name``; the dark one for anything else."""
    return PALETTES.get(name or "", DARK)


def theme_of(palette: Palette) -> Theme:
    """The Textual theme of ``palette``: Textual's own, the footer's keys and the muted
    text (``$gaps-muted``: the input line's placeholder) in colours that read."""
    base = BUILTIN_THEMES[palette.base]
    return dataclasses.replace(base, name=palette.theme, variables={
        **base.variables, "footer-key-foreground": palette.footer_key,
        "gaps-muted": palette.muted})


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of ``#rrggbb``: 0 for black, 1 for white."""
    red, green, blue = (int(colour.lstrip("#")[index:index + 2], 16) / 255
                        for index in (0, 2, 4))

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)),
                             reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
