"""The web page's copy of the one rule for text (server/web/text.js) against
gaps_protocol.text: the same verdict and the same sentence for every case of
tests/test_text.py, a few more, and strings hypothesis draws; and a page that says why it
refuses a name instead of sending it or stripping it."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gaps_protocol.text import text_problem
from tests.test_text import REFUSED, TAKEN
from tests.web_support import WEB, Wire

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB

MORE = [
    "\ud800", "a\udfffb",  # lone surrogates
    "\u0378",  # unassigned in every Unicode so far
    "flag\U000e0067\U000e0062",  # tag characters: format, named
    "\u00ad", "\u180e", "\u1680x", "x\u205f", "\u2029", "\x7f", "\x00",
    "a b c", "  ", " ", "a ", "ok\U0001f600", "\u0300",  # an emoji, a lone combining mark
]
#: Characters the drawn strings are made of: the spaces and unprintable characters the
#: rule names, and any character Python's Unicode (the names' source) has assigned. A
#: character assigned by the browser's newer Unicode only would be told apart: Python
#: refuses it as unassigned.
AROUND_SPACES = st.sampled_from(" \u00a0\u2000\u3000\t\n\u0085\u2028\u200b\u202e\ue000ab♣")
ASSIGNED = st.characters(exclude_categories=("Cn", "Cs"))
DRAWN = st.text(st.one_of(AROUND_SPACES, ASSIGNED), max_size=8)


def drawn_texts(count: int) -> list[str]:
    """``count`` strings hypothesis draws (checked in the browser at once, one page)."""
    texts: list[str] = []

    @settings(max_examples=count, database=None,
              suppress_health_check=list(HealthCheck))
    @given(DRAWN)
    def collect(text: str) -> None:
        texts.append(text)

    collect()
    return texts


async def verdicts(page: Any, texts: list[str]) -> list[str | None]:
    """text.js's ``textProblem`` of each text, in the page (the strings cross as JSON
    escapes: a lone surrogate has no UTF-8)."""
    found: list[str | None] = await page.evaluate(
        """async (cases) => {
          const { textProblem } = await import('/web/text.js');
          return JSON.parse(cases).map(textProblem);
        }""",
        json.dumps(texts),
    )
    return found


async def test_text_js_says_what_gaps_protocol_text_says(open_page: Any) -> None:
    page = await open_page()
    await page.goto("/")
    texts = [*TAKEN, *REFUSED, *MORE, *drawn_texts(400)]
    found = await verdicts(page, texts)
    differing = [(text, mine, theirs) for text, mine, theirs
                 in zip(texts, [text_problem(text) for text in texts], found, strict=True)
                 if mine != theirs]
    assert differing == []
    assert sum(problem is None for problem in found) > 10  # the draws take some texts


async def test_text_js_names_every_character_python_names(open_page: Any) -> None:
    """Its table of names is the one of unicodedata: each spacing or format character of
    Python's Unicode, alone, is named alike."""
    page = await open_page()
    await page.goto("/")
    refused = [chr(point) for point in range(0x110000)
               if point != 0x20
               and unicodedata.category(chr(point)) in ("Zs", "Cf", "Zl", "Zp")]
    found = await verdicts(page, refused)
    assert found == [text_problem(char) for char in refused]


async def test_the_page_refuses_a_name_with_a_no_break_space_and_says_why(
    open_page: Any,
) -> None:
    page = await open_page()
    wire = Wire()
    await wire.attach(page)
    await page.goto("/")
    await page.fill("#name", "ana\u00a0b")
    await page.click("text=Sign up")
    await page.wait_for_selector("#status.error")
    assert await page.inner_text("#status") == (
        "The name holds U+00A0 NO-BREAK SPACE at character 4: the only space is U+0020 SPACE.")
    assert wire.requests("register") == []
    assert await page.input_value("#name") == "ana\u00a0b"  # kept as typed, to be mended
    await page.fill("#name", "anab ")
    await page.click("text=Sign up")
    await page.wait_for_selector("#status >> text=ends with a space")
    assert await page.inner_text("#status") == "The name ends with a space."
    assert wire.requests("register") == []
