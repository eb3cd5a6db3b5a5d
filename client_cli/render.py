"""Rich rendering of cards and the 4 x 13 grid: suit symbols, red hearts and diamonds.

Pure functions from a ``gaps.Game`` (and what the player has selected) to ``rich.Text``;
the Textual widgets and the plain command output both use them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping
from typing import Final

from rich.text import Text

from gaps import Card, Game, Slot

SYMBOLS: Final = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_STYLES: Final = {"C": "bold #e8e8e8", "D": "bold #ff5f5f", "H": "bold #ff5f5f",
                      "S": "bold #e8e8e8"}
PRESERVED_STYLE: Final = "on #1d4d2b"
CURSOR_STYLE: Final = "reverse"
SELECTED_STYLE: Final = "on #2d4f8f"
TARGET_STYLE: Final = "bold black on #e0c040"
MOVABLE_STYLE: Final = "underline"
GAP_STYLE: Final = "#7a7a7a"
DEAD_STYLE: Final = "#b05050"

#: Characters per cell on the board, and the width of the row label before them.
CELL_WIDTH: Final = 5
#: Characters per cell on a compact board (a narrow terminal): the label and one space.
COMPACT_CELL_WIDTH: Final = 4
LABEL_WIDTH: Final = 3
ROWS: Final = 4
COLUMNS: Final = 13

#: Characters a terminal may act on instead of showing: controls (ESC begins the
#: sequences that clear the screen or retitle the window), format characters (a bidi
#: override reverses what follows, zero-width ones hide), surrogates, private-use and
#: unassigned code points, line and paragraph separators.
UNPRINTABLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: What ``printable`` shows in their place.
REPLACEMENT: Final = "\ufffd"


def printable(value: object) -> str:
    """``str(value)`` safe to print: each character of ``UNPRINTABLE_CATEGORIES`` becomes
    U+FFFD. For every text from the server (names are the players'), however the server
    checked it."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(
        REPLACEMENT if unicodedata.category(char) in UNPRINTABLE_CATEGORIES else char
        for char in text
    )


def printable_text(value: object, style: str = "") -> Text:
    """A text from the server as ``Text`` of its ``printable`` characters: printed or drawn,
    it is shown as it is, never read as Rich or Textual markup (``[bold]`` stays
    ``[bold]``)."""
    return Text(printable(value), style=style)


#: What marks a bot's name wherever players are listed.
BOT_MARK: Final = "[bot]"
BOT_STYLE: Final = "#c090e0"


def is_bot(entry: object) -> bool:
    """Whether a player entry (a seat, a standings, board or ranking row, a player page)
    is a bot's: the server says so with ``bot: true``; without the field, a person."""
    return isinstance(entry, Mapping) and entry.get("bot") is True


def bot_mark(entry: object) -> str:
    """`` [bot]`` after a bot's name in plain text; nothing after a person's."""
    return f" {BOT_MARK}" if is_bot(entry) else ""


def append_bot_mark(text: Text, entry: object) -> Text:
    """``text`` (a name) with `` [bot]`` after it, dimmed, if ``entry`` is a bot's."""
    if is_bot(entry):
        text.append(f" {BOT_MARK}", style=BOT_STYLE)
    return text


#: What a result's ``review`` (docs/fair-play.md) says beside it; a result cleared, or
#: never flagged, says nothing.
REVIEW_WORDS = {
    "held": "under review",
    "voided": "voided",
    "suspended": "not counted (suspended)",
}


def review_words(entry: object) -> str | None:
    """How a ranking entry's result stands with the operators, if it is not plain."""
    review = entry.get("review") if isinstance(entry, dict) else None
    return REVIEW_WORDS.get(review) if isinstance(review, str) else None


def result_words(entry: object) -> str:
    """A ranking entry's end reason, with its review if it has one: ``stopped · under
    review``."""
    reason = printable(entry.get("end_reason")) if isinstance(entry, dict) else ""
    review = review_words(entry)
    return f"{reason} · {review}" if review else reason


def card_label(card: Card) -> str:
    """``10♥``, `` 8♣``: rank (10 for ten) and suit symbol, three characters wide."""
    rank = "10" if card.rank == 10 else str(card)[0]
    return f"{rank:>2}{SYMBOLS[card.suit]}"


def card_text(card: Card) -> Text:
    return Text(card_label(card), style=SUIT_STYLES[card.suit])


def action_text(action: str) -> Text:
    """An action as people read it: ``8C`` as ``8♣``, ``2H>3`` as ``2♥ → row 3``, and
    ``8C>1`` (any other card sent to column 1) as ``8♣ → r1c1``, as the board names it."""
    card_part, arrow, target = printable(action).partition(">")
    try:
        card = Card.parse(card_part)
    except ValueError:
        return Text(printable(action))
    text = Text()
    text.append(card_label(card).strip(), style=SUIT_STYLES[card.suit])
    if arrow and target.isdigit():
        text.append(f" → row {target}" if card.rank == 2 else f" → r{target}c1")
    elif arrow:
        text.append(f" → {target}")
    return text


def _cell(inner: str, width: int, style: str) -> Text:
    """``inner`` (three characters) as a cell ``width`` wide: centred in 5, left in 4."""
    return Text(f" {inner} " if width >= CELL_WIDTH else f"{inner} ", style=style)


def cell_text(
    game: Game, slot: Slot, *, preserved: Collection[int] = (), cursor: bool = False,
    selected: bool = False, target: bool = False, movable: bool = False,
    width: int = CELL_WIDTH,
) -> Text:
    """One cell, ``width`` wide: a card, a gap (``·``), a dead gap (``✕``); a card that
    can move now is underlined when ``movable``."""
    card = game.card_at(slot)
    if card is not None:
        cell = _cell(card_label(card), width, SUIT_STYLES[card.suit])
        if slot.index in preserved:
            cell.stylize(PRESERVED_STYLE)
        if movable:
            cell.stylize(MOVABLE_STYLE, 0, len(cell.plain.rstrip()))
    elif target:
        cell = _cell(" ▼ ", width, TARGET_STYLE)
    elif game.is_dead_gap(slot):
        cell = _cell(" ✕ ", width, DEAD_STYLE)
    else:
        cell = _cell(" · ", width, GAP_STYLE)
    if selected:
        cell.stylize(SELECTED_STYLE)
    if target and card is not None:
        cell.stylize(TARGET_STYLE)
    if cursor:
        cell.stylize(CURSOR_STYLE)
    return cell


def preserved_indices(game: Game) -> set[int]:
    """Flat indices of every card inside its row's preserved sequence."""
    return {
        (row - 1) * COLUMNS + column
        for row, length in enumerate(game.run_lengths(), start=1)
        for column in range(length)
    }


def movable_indices(game: Game) -> set[int]:
    """Flat indices of every card that has a legal move now."""
    if game.is_over():
        return set()
    return {game.slot_of(move.card).index for move in game.legal_moves()}


def board_lines(
    game: Game, *, cursor: int | None = None, selected: int | None = None,
    targets: Collection[int] = (), movable: Collection[int] = (), width: int = CELL_WIDTH,
    spaced: bool = True,
) -> list[Text]:
    """The board: a header of column numbers, then each row, a blank line between rows
    when ``spaced``; each cell ``width`` wide (``CELL_WIDTH``, or ``COMPACT_CELL_WIDTH``
    for a narrow terminal)."""
    preserved = preserved_indices(game)
    header = Text(" " * LABEL_WIDTH, style="dim")
    for column in range(1, COLUMNS + 1):
        header.append(f"{column:^{width}}" if width >= CELL_WIDTH else f"{column:>2}  ",
                      style="dim")
    lines = [header]
    for row in range(1, ROWS + 1):
        line = Text(f"{row:>2} ", style="dim")
        for column in range(1, COLUMNS + 1):
            slot = Slot(row, column)
            line.append_text(cell_text(
                game, slot, preserved=preserved, cursor=slot.index == cursor,
                selected=slot.index == selected, target=slot.index in targets,
                movable=slot.index in movable, width=width,
            ))
        lines.append(line)
        if spaced and row < ROWS:
            lines.append(Text(""))
    return lines


def board_text(
    game: Game, *, cursor: int | None = None, selected: int | None = None,
    targets: Collection[int] = (), movable: Collection[int] = (), width: int = CELL_WIDTH,
    spaced: bool = True,
) -> Text:
    lines = board_lines(game, cursor=cursor, selected=selected, targets=targets,
                        movable=movable, width=width, spaced=spaced)
    return Text("\n").join(lines)


def board_size(*, width: int = CELL_WIDTH, spaced: bool = True) -> tuple[int, int]:
    """Columns and lines that ``board_lines`` takes."""
    return LABEL_WIDTH + width * COLUMNS, 1 + (ROWS * 2 - 1 if spaced else ROWS)


def slot_at(x: int, y: int, *, width: int = CELL_WIDTH, spaced: bool = True) -> Slot | None:
    """The slot under a point of ``board_lines`` (x, y from its top-left), if any."""
    if y < 1 or (spaced and (y - 1) % 2) or x < LABEL_WIDTH:
        return None
    row = (y - 1) // 2 + 1 if spaced else y
    column = (x - LABEL_WIDTH) // width + 1
    if not (1 <= row <= ROWS and 1 <= column <= COLUMNS):
        return None
    return Slot(row, column)


def progress_bar(placed: int, width: int = 16, total: int = 48) -> Text:
    """``█████░░░░`` for placed cards out of 48."""
    filled = round(width * max(0, min(placed, total)) / total)
    bar = Text()
    bar.append("█" * filled, style="#4fb86b")
    bar.append("░" * (width - filled), style="#444444")
    return bar


def par_text(par: object) -> str:
    """A deal's par as shown beside a score: ``58`` when exact, ``≥31`` when only a
    lower bound is known (the server's solver ran out of budget: unknown), ``…`` while
    it is not computed yet (``None``), ``?`` for anything else a server sent."""
    if par is None:
        return "…"
    if not isinstance(par, dict):
        return "?"
    score, exact = par.get("score"), par.get("exact")
    if not isinstance(score, int) or isinstance(score, bool) or not isinstance(exact, bool):
        return "?"
    return str(score) if exact else f"≥{score}"
