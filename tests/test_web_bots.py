"""server/web/bots.js against gaps.bots and gaps.hint: the same hint for the same position,
and the same game, action by action, from a bot of the same seed (the differential test).

node runs a small driver that imports bots.js and engine.js and prints what they chose;
this module replays each choice with the Python bots. bots.js reproduces Python's
``random.Random`` too, so even the random bot's choices are compared, not only the
deterministic ones.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gaps import RULESETS, Game, Seed, parse_action
from gaps.bots import MAX_ACTIONS, bot_named
from gaps.hint import hint

WEB = Path(__file__).resolve().parent.parent / "server" / "web"
#: Positions per ruleset whose hint is compared.
HINT_POSITIONS = 100
#: Whole games per ruleset that each bot plays in JavaScript and Python alike.
GAMES = {"random": 100, "greedy": 12, "search": 3, "search-win": 2}

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# The driver reads one JSON command on stdin and prints one JSON answer. Deals and the
# random play that reaches the hinted positions come from a seeded generator (mulberry32),
# so a failure can be replayed from its number.
DRIVER = """
import * as e from %(engine)s;
import * as b from %(bots)s;
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

function deal(ruleset, number) {
  const random = mulberry32(number * 7919 + ruleset.length * 104729 + 17);
  const seed = Uint8Array.from({ length: 10 }, () => Math.floor(random() * 256));
  return [random, seed, new e.Game(seed, ruleset)];
}

// A position part-way through random play: random legal moves, a redeal now and then
// (or when blocked), stopping after a random number of actions, blocked ones included.
function hintedPosition(ruleset, number) {
  const [random, seed, game] = deal(ruleset, number);
  const length = Math.floor(random() * 90);
  const actions = [];
  while (!game.isOver && actions.length < length) {
    const moves = game.legalMoves();
    let text;
    if (game.canRedeal && (moves.length === 0 || random() < 0.03)) text = 'redeal';
    else if (moves.length === 0) break;
    else {
      const move = moves[Math.floor(random() * moves.length)];
      text = game.moveText(move.card, move.to);
    }
    game.push(text);
    actions.push(text);
  }
  return { hex: e.toHex(seed), ruleset, actions, hint: b.hint(game) };
}

function botGame(name, ruleset, number) {
  const [, seed, game] = deal(ruleset, number);
  const bot = b.botNamed(name, number);
  const actions = [];
  while (!game.isOver) {
    const text = actions.length < b.MAX_ACTIONS ? bot.choose(game) : 'stop';
    game.push(text);
    actions.push(text);
  }
  return { hex: e.toHex(seed), ruleset, bot: name, number, actions, score: game.score };
}

function randomCalls(seed) {
  const rng = new b.PyRandom(seed);
  const out = [];
  for (let i = 0; i < 3; i++) {
    out.push(rng.random());
    for (const k of [1, 4, 7, 24, 32]) out.push(rng.getrandbits(k));
    out.push(e.toHex(rng.randbytes(10)));
    out.push(e.toHex(rng.randbytes(3)));
    for (const n of [8, 3, 1000, 2 ** 31 + 1]) out.push(rng.randrange(n));
  }
  return out;
}

let answer;
if (command.kind === 'random') answer = command.seeds.map(randomCalls);
else if (command.kind === 'hint') {
  answer = [];
  for (const ruleset of command.rulesets) {
    for (let i = 0; i < command.count; i++) answer.push(hintedPosition(ruleset, i));
  }
} else {
  answer = [];
  for (const ruleset of command.rulesets) {
    for (let i = 0; i < command.count; i++) answer.push(botGame(command.bot, ruleset, i));
  }
}
console.log(JSON.stringify(answer));
"""


def run_node(tmp_path: Path, command: dict[str, Any]) -> Any:
    script = tmp_path / "driver.mjs"
    script.write_text(
        DRIVER
        % {
            "engine": json.dumps((WEB / "engine.js").as_uri()),
            "bots": json.dumps((WEB / "bots.js").as_uri()),
        },
        encoding="utf-8",
    )
    done = subprocess.run(
        ["node", str(script)],
        input=json.dumps(command),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def replayed(emitted: dict[str, Any], actions: list[str]) -> Game:
    game = Game(Seed(bytes.fromhex(emitted["hex"])), emitted["ruleset"])
    for text in actions:
        game.push(parse_action(text))
    return game


def python_calls(seed: int) -> list[Any]:
    rng = random.Random(seed)
    out: list[Any] = []
    for _ in range(3):
        out.append(rng.random())
        out.extend(rng.getrandbits(k) for k in (1, 4, 7, 24, 32))
        out.append(rng.randbytes(10).hex())
        out.append(rng.randbytes(3).hex())
        out.extend(rng.randrange(n) for n in (8, 3, 1000, 2**31 + 1))
    return out


def test_the_javascript_generator_draws_what_python_random_draws(tmp_path: Path) -> None:
    seeds = [0, 1, 42, 0xFFFFFFFF, 2**32, 2**40 + 5, 2**53 - 1]
    drawn = run_node(tmp_path, {"kind": "random", "seeds": seeds})
    assert drawn == [python_calls(seed) for seed in seeds]


def test_the_javascript_hint_is_the_python_hint_in_every_ruleset(tmp_path: Path) -> None:
    positions = run_node(
        tmp_path, {"kind": "hint", "rulesets": sorted(RULESETS), "count": HINT_POSITIONS}
    )
    assert len(positions) == HINT_POSITIONS * len(RULESETS)
    for emitted in positions:
        game = replayed(emitted, emitted["actions"])
        expected = hint(game)
        assert emitted["hint"] == (None if expected is None else str(expected)), emitted
    # The positions must call for every kind of hint, or the comparison proves little.
    hints = {emitted["hint"] for emitted in positions}
    assert {None, "redeal", "stop"} <= hints
    assert len(hints) > 20


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_javascript_bot_plays_the_game_its_python_twin_plays(tmp_path: Path, name: str) -> None:
    games = run_node(
        tmp_path,
        {"kind": "bot", "bot": name, "rulesets": sorted(RULESETS), "count": GAMES[name]},
    )
    assert len(games) == GAMES[name] * len(RULESETS)
    for emitted in games:
        game = replayed(emitted, [])
        bot = bot_named(name, seed=emitted["number"])
        for step, text in enumerate(emitted["actions"]):
            chosen = bot.choose(game) if step < MAX_ACTIONS else parse_action("stop")
            assert str(chosen) == text, (emitted["hex"], emitted["ruleset"], step)
            game.push(chosen)
        assert game.is_over()
        assert game.score == emitted["score"]
    assert any("redeal" in emitted["actions"] for emitted in games)
