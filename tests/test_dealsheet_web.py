"""The web deal sheet (server/web/sheet.js) against gaps.dealsheet: node deals a few seeds
under every ruleset with engine.js and prints the layout and the steps, which must be the
Python sheet's, word for word; and the page's address is served."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gaps import RULESETS, Seed
from gaps.dealsheet import DealSheet, parse_layout
from server.web import page_file

SHEET_JS = Path(__file__).resolve().parent.parent / "server" / "web" / "sheet.js"
SEEDS = [Seed.derive(f"web deal sheet {number}") for number in range(5)]

# sheet.js is a page module: dom.js and net.js, which it imports, find their elements in
# the document when loaded. The driver gives them a document with empty elements: only
# the pure half of sheet.js runs.
DRIVER = """
globalThis.document = { getElementById: () => ({}) };
const sheet = await import(%(sheet)s);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const deals = JSON.parse(Buffer.concat(chunks).toString());
const printed = deals.map(([seed, ruleset]) => {
  const grid = sheet.sheetGrid(seed, ruleset);
  return { layout: sheet.layoutText(grid), steps: sheet.instructions(grid, ruleset) };
});
process.stdout.write(JSON.stringify(printed));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_web_sheet_prints_the_layout_and_steps_of_gaps_dealsheet(tmp_path: Path) -> None:
    deals = [(str(seed), ruleset) for seed in SEEDS for ruleset in RULESETS]
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER % {"sheet": json.dumps(SHEET_JS.as_uri())})
    ran = subprocess.run(
        ["node", str(driver)], input=json.dumps(deals), capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert ran.returncode == 0, ran.stderr
    printed = json.loads(ran.stdout)
    assert len(printed) == len(deals)
    for (seed, ruleset), web in zip(deals, printed, strict=True):
        sheet = DealSheet.of(Seed.parse(seed), ruleset, "Q4M2ZK", 1)
        assert web["layout"] == str(sheet.layout), (seed, ruleset)
        assert parse_layout(web["layout"]) == sheet.layout
        assert tuple(web["steps"]) == sheet.instructions(), (seed, ruleset)


def test_the_sheet_page_is_served_at_sheet_code_round() -> None:
    assert page_file("/sheet/Q4M2ZK/2") == ("index.html", "text/html; charset=utf-8")
    assert page_file("/sheet/Q4M2ZK") is None
    assert page_file("/web/sheet.js") == ("sheet.js", "text/javascript; charset=utf-8")
