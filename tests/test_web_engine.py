"""server/web/engine.js against the Python engine: the docs/rules.md vectors, and random
games played by node and checked move by move with gaps (the differential test).

node runs a small driver that imports engine.js; this module feeds it the vectors parsed
from docs/rules.md and replays every game it emits with ``gaps``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gaps import RULESETS, Game, IllegalAction, Seed, parse_action
from tests.test_rules_doc import VECTORS

ENGINE = Path(__file__).resolve().parent.parent / "server" / "web" / "engine.js"
GAMES_PER_RULESET = 2_000

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# The driver reads one JSON command on stdin and prints the games it played. They use
# a seeded generator (mulberry32) so that a failure can be replayed from its number.
DRIVER = """
import * as e from %(engine)s;
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const command = JSON.parse(Buffer.concat(chunks).toString());

function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomGame(ruleset, number) {
  const random = mulberry32(number * 7919 + ruleset.length);
  const seed = Uint8Array.from({ length: 10 }, () => Math.floor(random() * 256));
  const game = new e.Game(seed, ruleset);
  const actions = [];
  const refusals = [];
  const orders = []; // now and then, the legal moves in gap order (see check_game)
  const texts = ['redeal', 'undo', 'stop'];
  while (!game.isOver && actions.length < 400) {
    if (random() < 0.15) {
      // An attempt that may well be illegal: a random card into a random slot, or a word.
      const card = Math.floor(random() * 52);
      const to = Math.floor(random() * 52);
      const text = random() < 0.3 ? texts[Math.floor(random() * 3)]
        : random() < 0.5 ? e.cardText(card) : `${e.cardText(card)}>${e.slotText(to)}`;
      try {
        game.push(text);
        actions.push(text);
      } catch (error) {
        if (!(error instanceof e.IllegalAction)) throw error;
        refusals.push([actions.length, text, error.reason]);
      }
      continue;
    }
    const moves = game.legalMoves();
    if (random() < 0.05) {
      const order = game.legalMovesInGapOrder().map((m) => game.moveText(m.card, m.to));
      orders.push([actions.length, order]);
    }
    let text;
    if (game.canUndo && random() < 0.1) text = 'undo';
    else if (random() < 0.01 || (moves.length > 0 && actions.length > 300)) text = 'stop';
    else if (game.canRedeal && (moves.length === 0 || random() < 0.02)) text = 'redeal';
    else if (moves.length === 0) text = 'stop';
    else {
      const move = moves[Math.floor(random() * moves.length)];
      text = game.moveText(move.card, move.to);
    }
    game.push(text);
    actions.push(text);
  }
  return {
    hex: e.toHex(seed), ruleset, actions, refusals, orders,
    layout: e.layoutRows(game.grid).join('\\n'),
    score: game.score, status: game.status, placed: game.placed, moves: game.movesMade,
    redeals: game.redealsUsed, can_undo: game.canUndo,
    legal: game.legalMoves().map((m) => game.moveText(m.card, m.to)).sort(),
  };
}

const games = [];
for (let i = 0; i < command.games; i++) games.push(randomGame(command.ruleset, i));
console.log(JSON.stringify(games));
"""


def run_node(tmp_path: Path, command: dict[str, Any]) -> Any:
    script = tmp_path / "driver.mjs"
    script.write_text(DRIVER % {"engine": json.dumps(ENGINE.as_uri())}, encoding="utf-8")
    done = subprocess.run(
        ["node", str(script)],
        input=json.dumps(command),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


# The vectors run under node's own test runner (``node --test``): one test per vector, each
# comparing engine.js's answer with the value docs/rules.md gives.
NODE_TESTS = """
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as e from %(engine)s;
const cases = JSON.parse(readFileSync(%(cases)s, 'utf-8'));
for (const c of cases) {
  test(c.name, () => {
    const v = c.vector;
    const seed = e.fromHex(v.hex);
    if (v.kind === 'stream') {
      const stream = new e.Stream(seed, v.label);
      const words = [];
      for (let i = 0; i < 8; i++) words.push(stream.next().toString(16).padStart(8, '0'));
      assert.equal(words.join(' '), v.words);
    } else if (v.kind === 'shuffle') {
      const stream = new e.Stream(seed, v.label);
      const items = e.shuffle(Array.from({ length: 52 }, (_, i) => i), stream);
      assert.equal(items.join(' '), v.result);
      assert.equal(stream.rejected.length ? stream.rejected.join(' ') : 'none', v.rejected);
    } else if (v.kind === 'deal') {
      assert.equal(e.layoutRows(e.dealtGrid(seed, v.ruleset)).join('\\n'), v.grid);
      if (v.seed) assert.equal(e.shareCode(seed), v.seed);
    } else if (v.kind === 'redeal') {
      const grid = e.redealtGrid(e.parseLayout(v.before), v.ruleset, seed, Number(v.redeal));
      assert.equal(e.layoutRows(grid).join('\\n'), v.after);
    } else if (v.kind === 'state') {
      const game = new e.Game(seed, v.ruleset);
      for (const action of v.actions.split(' ')) game.push(action);
      assert.equal(e.layoutRows(game.grid).join('\\n'), c.layout);
    } else {
      assert.fail(`no check for a vector of kind ${v.kind}`);
    }
  });
}
"""


def test_the_javascript_engine_reproduces_every_rules_vector_under_node_test(
    tmp_path: Path,
) -> None:
    cases = []
    for number, vector in enumerate(VECTORS):
        case: dict[str, Any] = {"name": f"vector {number}: {vector['kind']}", "vector": vector}
        if vector["kind"] == "state":
            # The state vector gives bytes; the layout they hold comes from gaps.
            game = Game(Seed(bytes.fromhex(vector["hex"])), vector["ruleset"])
            for action in vector["actions"].split():
                game.push(parse_action(action))
            case["layout"] = game.layout()
        cases.append(case)
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    script = tmp_path / "vectors.test.mjs"
    script.write_text(
        NODE_TESTS
        % {
            "engine": json.dumps(ENGINE.as_uri()),
            "cases": json.dumps(str(tmp_path / "cases.json")),
        },
        encoding="utf-8",
    )
    done = subprocess.run(
        ["node", "--test", "--test-reporter=tap", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"# pass {len(VECTORS)}" in done.stdout, done.stdout


def check_game(emitted: dict[str, Any]) -> None:
    """Replay one game node played, and hold every refusal and the end to gaps."""
    game = Game(Seed(bytes.fromhex(emitted["hex"])), emitted["ruleset"])
    refusals = {(index, text): reason for index, text, reason in emitted["refusals"]}
    refused_at: dict[int, list[tuple[str, str]]] = {}
    for (index, text), reason in refusals.items():
        refused_at.setdefault(index, []).append((text, reason))
    orders = dict(emitted["orders"])
    for index, text in enumerate([*emitted["actions"], None]):
        if index in orders:
            # The order too, gap by gap: bots.js's random bot picks from it by index.
            assert [str(move) for move in game.legal_moves()] == orders[index], emitted["hex"]
        for refused, reason in refused_at.get(index, []):
            before = game.state_key()
            with pytest.raises(IllegalAction) as caught:
                game.push(parse_action(refused))
            assert caught.value.reason == reason, (emitted["hex"], refused)
            assert game.state_key() == before
        if text is not None:
            game.push(parse_action(text))
    assert game.layout() == emitted["layout"], emitted["hex"]
    assert (game.score, game.placed, game.moves_made, game.redeals_used) == (
        emitted["score"], emitted["placed"], emitted["moves"], emitted["redeals"]
    )
    assert game.result() == emitted["status"]
    assert game.can_undo() == emitted["can_undo"]
    assert sorted(str(move) for move in game.legal_moves()) == emitted["legal"]


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_random_games_in_javascript_replay_identically_in_python(
    tmp_path: Path, ruleset: str
) -> None:
    games = run_node(tmp_path, {"ruleset": ruleset, "games": GAMES_PER_RULESET})
    assert len(games) == GAMES_PER_RULESET
    for emitted in games:
        check_game(emitted)
    # The games must reach the states that matter, or the comparison proves little.
    statuses = {emitted["status"] for emitted in games}
    assert "stopped" in statuses
    if RULESETS[ruleset].redeals:
        assert any(emitted["redeals"] for emitted in games)
