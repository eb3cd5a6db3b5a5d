"""A round's deal sheet for a table in the room: printed in the terminal, or a one-page PDF.

``gaps tournament sheet CODE --round N`` asks the server for the round's deal (the host's
``tournament_deal_sheet``, answered once the round has started, docs/protocol.md) and
turns the reply into a ``gaps.dealsheet.DealSheet``: the layout is dealt here from the
seed, by the same engine that dealt it to the players online.

The PDF uses only PDF's standard fonts, which every viewer has and none needs embedded:
Helvetica for the words and ZapfDingbats for the suit symbols (its ♣ ♦ ♥ ♠ extract as
those characters; Helvetica has none of them). Hearts and diamonds are red. Each row of
the layout is one line of text in the PDF (its number, then each card or ``gap``), so the
text a PDF reader extracts from the sheet reads back with ``parse_layout``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Paragraph
from rich.console import Console
from rich.text import Text

from client_cli.connection import ClientError, Connection, ProtocolError, expect
from gaps import Ruleset, Seed
from gaps.dealsheet import GAP_WORD, RED_SUITS, SUIT_ORDER, DealSheet, rank_text
from gaps.errors import NotationError
from gaps.slot import COLUMNS
from gaps_protocol.messages import ServerReply
from gaps_protocol.messages.replies import DealSheet as SheetReply
from gaps_protocol.messages.requests import GetDealSheet

PAPERS: Final = {"a4": A4, "letter": LETTER}
RED_HEX: Final = "#c0001a"
RED: Final = colors.HexColor(RED_HEX)
GREY: Final = colors.HexColor("#777777")
MARGIN: Final = 40.0  # points: 14 mm, inside what every printer can print
WORDS: Final = "Helvetica"
BOLD: Final = "Helvetica-Bold"
SUITS_FONT: Final = "ZapfDingbats"
# The layout: a column for the row numbers, then 13 card boxes; a box is a card's shape.
ROW_LABEL_WIDTH: Final = 18.0
BOX_HEIGHT: Final = 56.0
BOX_GAP: Final = 4.0
RANK_SIZE: Final = 15.0
SUIT_SIZE: Final = 15.0
_SUIT_RUN: Final = re.compile(f"([{SUIT_ORDER}])")


class SheetError(ClientError):
    """The sheet could not be written (a file that cannot be written, an unknown paper)."""


def sheet_from_reply(reply: ServerReply, *, code: str, round: int) -> DealSheet:
    """The sheet of the server's ``deal_sheet`` reply to ``tournament_deal_sheet``.

    Raises ``ProtocolError`` when the reply is not the sheet of round ``round`` of
    tournament ``code``, or its seed does not read.
    """
    sheet = expect(reply, SheetReply, "tournament_deal_sheet")
    if sheet.tournament.upper() != code.upper() or sheet.round != round:
        raise ProtocolError(f"asked for round {round} of tournament {code.upper()}, the "
                            f"server sent round {sheet.round} of tournament {sheet.tournament}")
    try:
        seed = Seed.parse(sheet.seed)
        return DealSheet.of(seed, Ruleset.named(sheet.ruleset), sheet.tournament, sheet.round)
    except NotationError as error:
        raise ProtocolError(f"the server's deal sheet does not read: {error}") from None


async def fetch_and_write_sheet(
    connection: Connection, code: str, round: int, *, out: Console,
    pdf: Path | None = None, paper: str = "a4",
) -> DealSheet:
    """Ask the server for round ``round``'s deal sheet of tournament ``code``; print it on
    ``out``, or with ``pdf``, save it there as a PDF on ``paper`` and say so on ``out``.

    Raises ``ServerRefused`` with the server's reason (not the host, the round has not
    started, ...), ``ProtocolError`` for a reply that is no such sheet, ``SheetError``
    when the PDF cannot be written.
    """
    reply = await connection.request(GetDealSheet(code=code.upper(), round=round),
                                     retry=True)
    sheet = sheet_from_reply(reply, code=code, round=round)
    if pdf is None:
        out.print(sheet_text(sheet))
        return sheet
    write_deal_sheet_pdf(sheet, pdf, paper=paper)
    out.print(Text(f"Saved the deal sheet of round {sheet.round} of tournament "
                   f"{sheet.tournament} (deal {sheet.seed}, {paper_name(paper)}) to {pdf}."))
    return sheet


def sheet_text(sheet: DealSheet) -> Text:
    """The whole sheet for the terminal, hearts and diamonds in red."""
    text = Text(str(sheet))
    text.highlight_regex(r"\S*[" + "".join(RED_SUITS) + "]", "bold red")
    return text


def paper_name(paper: str) -> str:
    return {"a4": "A4", "letter": "Letter"}.get(paper, paper)


def write_deal_sheet_pdf(sheet: DealSheet, path: Path | str, *, paper: str = "a4") -> None:
    """Write ``sheet`` to ``path`` as a one-page PDF on ``paper`` (``a4`` or ``letter``)."""
    size = PAPERS.get(paper)
    if size is None:
        raise SheetError(f"{paper!r} is not a paper size: expected one of {', '.join(PAPERS)}")
    canvas = Canvas(str(path), pagesize=size, pageCompression=1)
    canvas.setTitle(f"Deal sheet: {sheet.title}")
    canvas.setSubject(f"Deal {sheet.seed}, {sheet.ruleset.name}")
    canvas.setAuthor("Gaps Arena")
    _draw(canvas, sheet, width=size[0], height=size[1])
    canvas.showPage()
    try:
        canvas.save()
    except OSError as error:
        raise SheetError(f"cannot write {path}: {error.strerror or error}") from None


def _draw(canvas: Canvas, sheet: DealSheet, *, width: float, height: float) -> None:
    y = height - MARGIN
    canvas.setFont(BOLD, 20)
    y -= 20
    canvas.drawString(MARGIN, y, "Deal sheet")
    canvas.setFont(BOLD, 14)
    y -= 22
    canvas.drawString(MARGIN, y, sheet.title)
    canvas.setFont(WORDS, 11)
    for line in sheet.details:
        y -= 15
        canvas.drawString(MARGIN, y, line)
    y = _draw_layout(canvas, sheet, top=y - 26, width=width)
    canvas.setFillColor(colors.black)  # the last card may have left it red
    y -= 28
    canvas.setFont(BOLD, 13)
    canvas.drawString(MARGIN, y, "How to lay it out from a sorted deck")
    y -= 8
    style = ParagraphStyle("step", fontName=WORDS, fontSize=10.5, leading=14,
                           leftIndent=16, firstLineIndent=-16)
    for number, step in enumerate(sheet.instructions(), start=1):
        paragraph = Paragraph(f"{number}.&nbsp;&nbsp;{_with_suits(step)}", style)
        _, used = paragraph.wrap(width - 2 * MARGIN, y - MARGIN)
        y -= used + 5
        paragraph.drawOn(canvas, MARGIN, y)
    canvas.setFont(WORDS, 8)
    canvas.setFillColor(GREY)
    canvas.drawString(MARGIN, MARGIN / 2, f"Gaps Arena · tournament {sheet.tournament} · round "
                                          f"{sheet.round} · deal {sheet.seed}")


def _draw_layout(canvas: Canvas, sheet: DealSheet, *, top: float, width: float) -> float:
    """Draw the numbered 4 x 13 grid of card boxes from ``top`` down; returns its bottom."""
    pitch = (width - 2 * MARGIN - ROW_LABEL_WIDTH) / COLUMNS
    box_width = pitch - BOX_GAP
    left = MARGIN + ROW_LABEL_WIDTH

    def centre(column: int) -> float:
        return left + (column - 1) * pitch + box_width / 2

    header = canvas.beginText()
    header.setFont(WORDS, 9)
    header.setFillColor(GREY)
    for column in range(1, COLUMNS + 1):
        label = str(column)
        header.setTextOrigin(centre(column) - canvas.stringWidth(label, WORDS, 9) / 2, top)
        header.textOut(label + " ")
    canvas.drawText(header)
    y = top - 6
    for number, row in enumerate(sheet.layout.rows(), start=1):
        y -= BOX_HEIGHT
        baseline = y + BOX_HEIGHT / 2 - RANK_SIZE / 3
        line = canvas.beginText()
        line.setTextOrigin(MARGIN, baseline)
        line.setFont(BOLD, 12)
        line.setFillColor(colors.black)
        line.textOut(f"{number} ")
        for column, card in enumerate(row, start=1):
            x = left + (column - 1) * pitch
            canvas.setLineWidth(0.8)
            if card is None:
                canvas.setStrokeColor(GREY)
                canvas.setDash(3, 2)
                canvas.roundRect(x, y, box_width, BOX_HEIGHT, 4, stroke=1, fill=0)
                canvas.setDash()
                line.setFont(WORDS, 9)
                line.setFillColor(GREY)
                line.setTextOrigin(centre(column) - canvas.stringWidth(GAP_WORD, WORDS, 9) / 2,
                                   baseline)
                line.textOut(GAP_WORD + " ")
                continue
            canvas.setStrokeColor(colors.black)
            canvas.roundRect(x, y, box_width, BOX_HEIGHT, 4, stroke=1, fill=0)
            rank = rank_text(card)
            shown = (canvas.stringWidth(rank, BOLD, RANK_SIZE)
                     + canvas.stringWidth(card.symbol, SUITS_FONT, SUIT_SIZE))
            line.setFillColor(RED if card.symbol in RED_SUITS else colors.black)
            line.setTextOrigin(centre(column) - shown / 2, baseline)
            line.setFont(BOLD, RANK_SIZE)
            line.textOut(rank)
            line.setFont(SUITS_FONT, SUIT_SIZE)
            line.textOut(card.symbol)
            line.setFont(WORDS, 9)
            line.textOut(" ")  # so that a reader's extracted text has the cells apart
        canvas.drawText(line)
        y -= BOX_GAP
    return y


def _with_suits(step: str) -> str:
    """``step`` as Paragraph markup: its suit symbols in ZapfDingbats, red ones in red."""
    parts = _SUIT_RUN.split(step)
    return "".join(
        f'<font face="{SUITS_FONT}" color="{RED_HEX if part in RED_SUITS else "black"}">'
        f"{part}</font>" if index % 2 else escape(part)
        for index, part in enumerate(parts)
    )
