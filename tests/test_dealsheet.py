"""Deal sheets (gaps/dealsheet.py, client_cli/dealsheet_pdf.py): the layout a table lays
out is the deal the players online get, and it reads back from the printed sheet, as text
and from the PDF's text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pypdf
import pytest
from rich.console import Console

from client_cli.connection import ProtocolError
from client_cli.dealsheet_pdf import (
    PAPERS,
    SUIT_SIZE,
    SheetError,
    fetch_and_write_sheet,
    sheet_from_reply,
    write_deal_sheet_pdf,
)
from gaps import RULESETS, Card, Game, Seed
from gaps.dealsheet import DealSheet, Layout, card_text, parse_layout
from gaps.errors import NotationError
from gaps.game import GAP
from gaps_protocol.messages import (
    ClientMessage,
    MatchEvent,
    ServerReply,
    TournamentEvent,
    decode_server_message,
)
from gaps_protocol.messages.requests import GetDealSheet

SEEDS = [Seed.derive(f"deal sheet {number}") for number in range(4)]
SHEET = DealSheet.of(SEEDS[0], "classic", "Q4M2ZK", 2)


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_the_sheet_is_the_deal_online_players_get_and_its_printed_layout_reads_back(
    seed: Seed, ruleset: str
) -> None:
    sheet = DealSheet.of(seed, ruleset, "q4m2zk", 3)
    assert sheet.layout.codes() == Game(seed, ruleset).grid_codes()
    printed = str(sheet)
    assert str(sheet.layout) in printed
    assert parse_layout(str(sheet.layout)) == sheet.layout
    assert parse_layout(str(sheet.layout)).codes() == Game(seed, ruleset).grid_codes()
    assert f"Deal {seed} · ruleset {ruleset}" in printed
    assert sheet.title == "Tournament Q4M2ZK · round 3"


def test_the_printed_layout_numbers_rows_and_columns_and_shows_cards_as_people_read_them() -> None:
    lines = str(SHEET.layout).split("\n")
    assert lines[0].split() == [str(column) for column in range(1, 14)]
    assert [line.split()[0] for line in lines[1:]] == ["1", "2", "3", "4"]
    cells = [cell for line in lines[1:] for cell in line.split()[1:]]
    assert cells.count("--") == 4
    assert all(re.fullmatch(r"([2-9]|10|[JQK])[♣♦♥♠]|--", cell) for cell in cells)
    assert card_text(Card.parse("TH")) == "10♥"
    assert card_text(Card.parse("KS")) == "K♠"


def test_the_steps_name_the_gaps_and_say_a_redeal_is_shuffled_at_the_table() -> None:
    steps = SHEET.instructions()
    gaps = SHEET.layout.gaps()
    assert len(gaps) == 4
    places = [f"row {slot.row} column {slot.column}" for slot in gaps]
    gap_step = next(step for step in steps if "Aces" in step and "gaps" in step)
    assert all(place in gap_step for place in places)
    assert ", ".join(places[:3]) + " and " + places[3] in gap_step
    assert "shuffled at the table" in steps[-1]
    assert "\n1. Take one full deck" in str(SHEET)
    assert f"\n{len(steps)}. Only this first deal" in str(SHEET)


def test_a_montana_sheet_has_the_2s_in_column_1_and_says_so() -> None:
    sheet = DealSheet.of(SEEDS[1], "montana", "Q4M2ZK", 1)
    assert all(row[0] is not None and row[0].rank == 2 for row in sheet.layout.rows())
    assert any("Montana" in step and "column 1" in step for step in sheet.instructions())
    assert not any("Montana" in step for step in SHEET.instructions())


def test_a_layout_reads_in_the_engines_notation_and_with_the_gap_word() -> None:
    game = Game(SEEDS[2], "classic")
    assert parse_layout(game.layout()).codes() == game.grid_codes()
    worded = str(SHEET.layout).replace("--", "GAP", 1).replace("--", "gap")
    assert parse_layout(worded) == SHEET.layout
    no_header = "\n".join(str(SHEET.layout).split("\n")[1:])
    assert parse_layout("\n\n" + no_header + "\n") == SHEET.layout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda text: "", "not 0 rows"),
        (lambda text: text.rsplit("\n", 1)[0], "not 3 rows"),
        (lambda text: text.replace("\n  2 ", "\n  3 ", 1), "row 2 of a layout has 13 cells"),
        (lambda text: text + " 9♣", "row 4 of a layout has 13 cells"),
        (lambda text: text.replace("--", "X♣", 1), "'X♣' is not a card"),
        (lambda text: text.replace("--", "A♠", 1), "Aces AS"),
    ],
    ids=["empty", "three rows", "wrong row number", "a cell too many", "no card", "an Ace"],
)
def test_a_layout_that_does_not_read_is_refused_naming_what(change: Any, message: str) -> None:
    with pytest.raises(NotationError, match=re.escape(message)):
        parse_layout(change(str(SHEET.layout)))


def test_a_doubled_card_is_named() -> None:
    first = next(cell for cell in SHEET.layout.cells if cell is not None)
    second = next(cell for cell in SHEET.layout.cells if cell is not None and cell != first)
    text = str(SHEET.layout).replace(card_text(second), card_text(first))
    with pytest.raises(NotationError, match=f"missing {second}; doubled {first}"):
        parse_layout(text)
    with pytest.raises(NotationError, match="a grid holds the 48 cards"):
        Layout.from_codes([GAP] * 52)


def test_a_sheet_needs_a_tournament_code_and_a_round_number() -> None:
    with pytest.raises(NotationError, match="'Q4-M2' is not a tournament code"):
        DealSheet.of(SEEDS[0], "classic", "Q4-M2", 1)
    with pytest.raises(ValueError, match="round 0 is not a round number"):
        DealSheet.of(SEEDS[0], "classic", "Q4M2ZK", 0)
    with pytest.raises(NotationError, match="'solitaire' is not a ruleset"):
        DealSheet.of(SEEDS[0], "solitaire", "Q4M2ZK", 1)


# -- the PDF -------------------------------------------------------------------------------


def pdf_layout(text: str) -> str:
    """The layout's five lines (the column numbers, then rows 1-4) in a PDF's text."""
    lines = [line.strip() for line in text.split("\n")]
    start = lines.index(" ".join(str(column) for column in range(1, 14)))
    return "\n".join(lines[start : start + 5])


@pytest.mark.parametrize("paper", PAPERS)
@pytest.mark.parametrize("ruleset", ["classic", "montana"])
def test_the_pdf_is_one_page_whose_text_reads_back_as_the_deal(
    tmp_path: Path, paper: str, ruleset: str
) -> None:
    sheet = DealSheet.of(SEEDS[3], ruleset, "Q4M2ZK", 2)
    path = tmp_path / "sheet.pdf"
    write_deal_sheet_pdf(sheet, path, paper=paper)
    reader = pypdf.PdfReader(path)
    assert len(reader.pages) == 1
    page = reader.pages[0]
    width, height = PAPERS[paper]
    size = (float(page.mediabox.width), float(page.mediabox.height))
    assert size == pytest.approx((width, height), abs=0.01)
    places: list[tuple[float, float]] = []

    def visit(text: str, cm: Any, tm: Any, font: Any, size: Any) -> None:
        if text.strip():
            places.append((cm[4] + tm[4] * cm[0], cm[5] + tm[5] * cm[3]))

    text = page.extract_text(visitor_text=visit)
    assert parse_layout(pdf_layout(text)).codes() == Game(SEEDS[3], ruleset).grid_codes()
    assert sheet.title in text
    assert str(sheet.seed) in text
    assert "How to lay it out from a sorted deck" in text
    flat = " ".join(text.split())
    assert all(" ".join(step.split()) in flat for step in sheet.instructions())
    assert places and all(0 < x < width and 0 < y < height for x, y in places)
    assert reader.metadata is not None and reader.metadata.title == f"Deal sheet: {sheet.title}"


def test_the_pdf_shows_hearts_and_diamonds_in_red(tmp_path: Path) -> None:
    path = tmp_path / "sheet.pdf"
    write_deal_sheet_pdf(SHEET, path)
    content = pypdf.PdfReader(path).pages[0].get_contents()
    assert content is not None
    stream = content.get_data().decode("latin-1")
    # ZapfDingbats codes: \250 clubs, \251 diamonds, \252 hearts, \253 spades.
    # Each card's colour (``r g b rg``) is set before its rank and suit (no "g" between);
    # a card's suit is at SUIT_SIZE points (the steps' symbols are smaller).
    coloured = re.findall(
        rf"([.\d]+) ([.\d]+) ([.\d]+) rg [^g]*? {SUIT_SIZE:g} Tf [.\d]+ TL \((\\25[0-3])\) Tj",
        stream,
    )
    red = {suit for *rgb, suit in coloured if [round(float(c) * 255) for c in rgb] == [192, 0, 26]}
    black = {suit for *rgb, suit in coloured if [float(c) for c in rgb] == [0, 0, 0]}
    assert red == {"\\251", "\\252"} and black == {"\\250", "\\253"}
    assert len(coloured) == 48


def test_an_unknown_paper_and_an_unwritable_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match="'a3' is not a paper size: expected one of a4, letter"):
        write_deal_sheet_pdf(SHEET, tmp_path / "sheet.pdf", paper="a3")
    missing = tmp_path / "no such folder" / "sheet.pdf"
    with pytest.raises(SheetError, match=f"cannot write {re.escape(str(missing))}"):
        write_deal_sheet_pdf(SHEET, missing)


# -- the server's reply --------------------------------------------------------------------


def sheet_message(**changes: Any) -> dict[str, Any]:
    return {
        "type": "deal_sheet", "tournament": "Q4M2ZK", "round": 2, "seed": str(SEEDS[0]),
        "ruleset": "classic", "match": "ABCDEF", "started_at": "2026-12-02T19:00:00.000Z",
        "id": 7, **changes,
    }


def decode_reply(frame: dict[str, Any]) -> ServerReply:
    """A reply as the connection decodes it."""
    decoded = decode_server_message(json.dumps(frame))
    assert not isinstance(decoded, MatchEvent | TournamentEvent)
    return decoded


def reply(**changes: Any) -> ServerReply:
    return decode_reply(sheet_message(**changes))


def test_a_reply_becomes_the_sheet_of_its_seed() -> None:
    assert sheet_from_reply(reply(), code="q4m2zk", round=2) == SHEET


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"type": "pong", "id": 7, "server_time": "2026-12-02T19:00:00.000Z"},
         "answered tournament_deal_sheet with a 'pong' message, not a deal_sheet"),
        (sheet_message(round=3),
         "asked for round 2 of tournament Q4M2ZK, the server sent round 3"),
        (sheet_message(seed="AAAA-BBBB-CCCC-DDDD-EEEE"),
         "the server's deal sheet does not read: 'AAAA-BBBB-CCCC-DDDD-EEEE' is not a share code"),
    ],
)
def test_a_reply_that_is_not_the_sheet_asked_for_is_a_protocol_error(
    answer: dict[str, Any], message: str
) -> None:
    with pytest.raises(ProtocolError, match=re.escape(message)):
        sheet_from_reply(decode_reply(answer), code="Q4M2ZK", round=2)


@pytest.mark.parametrize(("changes", "path"), [
    ({"round": True}, "$.round"), ({"ruleset": None}, "$.ruleset"),
    ({"ruleset": "bridge"}, "$.ruleset"), ({"seed": "NOT A SEED!"}, "$.seed"),
])
def test_a_sheet_of_the_wrong_shape_never_reaches_the_client(
    changes: dict[str, Any], path: str,
) -> None:
    """The connection decodes every frame strictly: such a reply fails it, naming the
    member (the session's tests follow it from there)."""
    with pytest.raises(msgspec.ValidationError, match=re.escape(f"at `{path}`")):
        reply(**changes)


class OneReply:
    """A connection whose server answers one request with ``answer``."""

    def __init__(self, answer: ServerReply) -> None:
        self.answer = answer
        self.asked: list[ClientMessage] = []

    async def request(self, message: ClientMessage, *, retry: bool = False) -> ServerReply:
        self.asked.append(message)
        return self.answer


async def test_the_command_prints_the_sheet_or_saves_the_pdf(tmp_path: Path) -> None:
    out = Console(record=True, width=400)
    connection: Any = OneReply(reply())
    sheet = await fetch_and_write_sheet(connection, "q4m2zk", 2, out=out)
    assert connection.asked == [GetDealSheet(code="Q4M2ZK", round=2)]
    assert sheet == SHEET
    assert str(SHEET.layout) in out.export_text()
    path = tmp_path / "round-2.pdf"
    await fetch_and_write_sheet(connection, "Q4M2ZK", 2, out=out, pdf=path, paper="letter")
    assert "(deal " + str(SEEDS[0]) + ", Letter) to " + str(path) in out.export_text()
    assert parse_layout(pdf_layout(pypdf.PdfReader(path).pages[0].extract_text())) == SHEET.layout
