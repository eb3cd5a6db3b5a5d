// The bots and the hint of gaps/bots.py (with gaps/board.py, gaps/lookahead.py and
// gaps/search_bot.py) and gaps/hint.py in JavaScript, for practice offline: a hint on
// demand, and a bot to race or to watch on the same deal.
// tests/test_web_bots.py holds them to the Python ones: the same position gets the same
// hint, and a bot of the same seed plays the same game, action by action. So this is a
// port line for line, down to Python's random generator (the Mersenne Twister of
// random.Random), because the bots draw tie-breaks and sample redeals from it.
// No bot reads game.seed: a redeal's outcome is guessed under seeds the bot draws itself.

import { GAP, RULESETS, redealtGrid } from './engine.js';

const COLUMNS = 13;
const CELLS = 52;
const KING = 12; // code % 13 of a King
const THREE = 2; // code % 13 of a 3
const TWOS = [1, 14, 27, 40];
const ROW_STARTS = [0, 13, 26, 39];
const ALL_PLACED = 48;
const REDEAL_COST = 5;
const WIN_BONUS = 10;
const SEED_BYTES = 10;
/** A game still going after this many actions is stopped (as gaps.bots.play_game does). */
export const MAX_ACTIONS = 20000;
export const SEARCH_NODES = 10000;
export const REDEAL_SAMPLES = 8;
export const ROLLOUT_NODES = 300;
export const HINT_NODES = 1500;
export const HINT_SAMPLES = 6;

// -- Python's random.Random --------------------------------------------------------------

/** CPython's ``random.Random(seed)`` for a non-negative integer seed (below 2**53): the
 * same MT19937 stream, and the same ``random``, ``getrandbits``, ``randbytes`` and
 * ``randrange`` built on it. */
export class PyRandom {
  constructor(seed = 0) {
    this.mt = new Uint32Array(624);
    this.index = 624;
    const key = [];
    for (let n = Math.abs(Math.trunc(seed)); n > 0; n = Math.floor(n / 4294967296)) key.push(n % 4294967296);
    this.initByArray(key.length ? key : [0]);
  }

  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < 624; i++) {
      mt[i] = (Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i) >>> 0;
    }
    this.index = 624;
  }

  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) >>> 0) + key[j] + j;
      i += 1;
      j += 1;
      if (i >= 624) { mt[0] = mt[623]; i = 1; }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) >>> 0) - i;
      i += 1;
      if (i >= 624) { mt[0] = mt[623]; i = 1; }
    }
    mt[0] = 0x80000000;
  }

  /** The next 32-bit word of the stream. */
  next32() {
    const mt = this.mt;
    if (this.index >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7fffffff);
        mt[k] = mt[(k + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** A float in [0, 1) with 53 random bits, as ``random.random()``. */
  random() {
    const a = this.next32() >>> 5;
    const b = this.next32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** ``getrandbits(k)`` for 0 <= k <= 32. */
  getrandbits(k) {
    return k === 0 ? 0 : this.next32() >>> (32 - k);
  }

  /** ``randbytes(n)``: ``getrandbits(8 * n)`` as n little-endian bytes. */
  randbytes(n) {
    const out = new Uint8Array(n);
    let at = 0;
    for (let k = 8 * n; k > 0; k -= 32) {
      let word = this.next32();
      if (k < 32) word >>>= 32 - k;
      for (let b = 0; b < 4 && at < n; b++) {
        out[at++] = word & 255;
        word >>>= 8;
      }
    }
    return out;
  }

  /** ``randrange(n)`` for 0 < n < 2**32: ``getrandbits(n.bit_length())`` until below n. */
  randrange(n) {
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }
}

// -- a flat board for fast look-ahead (gaps.board) ------------------------------------------

/** The index right after the preserved sequence of the row starting at ``start``. */
function runEnd(grid, start) {
  const first = grid[start];
  if (first === GAP || first % 13 !== 1) return start;
  let end = start + 1;
  while (end - start < COLUMNS - 1 && grid[end] === grid[end - 1] + 1) end += 1;
  return end;
}

/** The rank of the row starting at ``start`` in the shuffle order (gaps.board.shuffle_rank):
 * rows whose column 2 is a gap first, then another card, then a 3; within each, by row. */
function shuffleRank(grid, start) {
  const second = grid[start + 1];
  const draw = second === GAP ? 0 : second % 13 === THREE ? 2 : 1;
  return 4 * draw + Math.floor(start / COLUMNS);
}

/** A position as flat arrays, with fast moves and take-backs. ``ends[row]`` is the index
 * right after the row's preserved sequence; ``key`` is the grid as a string (exact, where
 * Python uses a 64-bit Zobrist hash: the same set of positions up to a hash collision). */
export class Board {
  constructor(grid) {
    this.grid = grid;
    this.where = new Array(CELLS).fill(GAP);
    this.gaps = [];
    grid.forEach((code, index) => {
      if (code === GAP) this.gaps.push(index);
      else this.where[code] = index;
    });
    this.ends = ROW_STARTS.map((start) => runEnd(grid, start));
  }

  static of(game) {
    return new Board(game.grid.slice());
  }

  get key() {
    return String.fromCharCode(...this.grid);
  }

  get placed() {
    return this.ends[0] + this.ends[1] + this.ends[2] + this.ends[3] - 78;
  }

  /** Whether the legal move of card ``code`` into the gap at ``to`` is onward (see
   * gaps/board.py: no sequence of onward moves comes back to a position). */
  isOnward(code, to) {
    if (code % 13 !== 1) return true;
    const at = this.where[code];
    if (at % COLUMNS !== 0) return true;
    const grid = this.grid;
    if (grid[at + 1] === code + 1) return false;
    return grid[to + 1] === code + 1 || shuffleRank(grid, at) > shuffleRank(grid, to);
  }

  /** The onward moves, as [card, destination]; see gaps.board.Board.moves. */
  moves() {
    const { grid, ends } = this;
    const found = [];
    for (const gap of this.gaps) {
      if (gap % COLUMNS === 0) {
        for (const two of TWOS) {
          if (this.isOnward(two, gap)) found.push([two, gap]);
        }
      } else {
        const left = grid[gap - 1];
        if (left !== GAP && left % 13 !== KING) {
          if (gap === ends[Math.floor(gap / COLUMNS)]) return [[left + 1, gap]];
          found.push([left + 1, gap]);
        }
      }
    }
    return found;
  }

  isBlocked() {
    const grid = this.grid;
    for (const gap of this.gaps) {
      if (gap % COLUMNS === 0) return false;
      const left = grid[gap - 1];
      if (left !== GAP && left % 13 !== KING) return false;
    }
    return true;
  }

  /** How promising a move looks one ply ahead (higher is better). */
  scoreMove(code, to) {
    const { grid, ends } = this;
    const cameFrom = this.where[code];
    let score = 0;
    const rowTo = Math.floor(to / COLUMNS);
    if (to === ends[rowTo]) {
      let gain = 1;
      let after = to + 1;
      while (after - rowTo * COLUMNS < COLUMNS - 1 && grid[after] === code + gain) {
        gain += 1;
        after += 1;
      }
      score += 100 * gain;
    }
    if (cameFrom % COLUMNS === 0) {
      score -= 30;
    } else if (cameFrom === ends[Math.floor(cameFrom / COLUMNS)]) {
      score += 60;
    } else {
      const left = grid[cameFrom - 1];
      score += left === GAP || left % 13 === KING ? -20 : 5;
    }
    if (code % 13 === KING && to % COLUMNS !== COLUMNS - 1 && grid[to + 1] === GAP) score -= 20;
    return score;
  }

  /** Make a legal move; returns what ``takeBack`` needs to undo it. */
  play(code, to) {
    const { grid, where, ends } = this;
    const cameFrom = where[code];
    grid[to] = code;
    grid[cameFrom] = GAP;
    where[code] = to;
    this.gaps[this.gaps.indexOf(to)] = cameFrom;
    const rowFrom = Math.floor(cameFrom / COLUMNS);
    const rowTo = Math.floor(to / COLUMNS);
    const oldFrom = ends[rowFrom];
    const oldTo = ends[rowTo];
    if (cameFrom < oldFrom) ends[rowFrom] = rowFrom * COLUMNS; // a lone 2 left column 1
    if (to === ends[rowTo]) {
      const start = rowTo * COLUMNS;
      let end = to + 1;
      while (end - start < COLUMNS - 1 && grid[end] === grid[end - 1] + 1) end += 1;
      ends[rowTo] = end;
    }
    return [code, cameFrom, oldFrom, oldTo];
  }

  takeBack([code, cameFrom, oldFrom, oldTo]) {
    const { grid, where } = this;
    const to = where[code];
    grid[to] = GAP;
    grid[cameFrom] = code;
    where[code] = cameFrom;
    this.gaps[this.gaps.indexOf(cameFrom)] = to;
    this.ends[Math.floor(to / COLUMNS)] = oldTo;
    this.ends[Math.floor(cameFrom / COLUMNS)] = oldFrom;
  }

  /** ``moves()`` with the most promising last (a search pops from the end); the sort is
   * stable, as Python's. */
  orderedMoves() {
    const found = this.moves();
    if (found.length > 1) {
      const scored = found.map((move) => [this.scoreMove(move[0], move[1]), move]);
      scored.sort((a, b) => a[0] - b[0]);
      return scored.map((pair) => pair[1]);
    }
    return found;
  }
}

/** The best position of this deal a depth-first search of ``maxNodes`` positions finds:
 * [its placed cards, the moves that reach it]; ``board`` is left as it was. */
export function searchDeal(board, maxNodes) {
  const seen = new Set([board.key]);
  let bestPlaced = board.placed;
  let bestBlocked = board.isBlocked();
  let best = [];
  if (bestPlaced === ALL_PLACED) return [ALL_PLACED, best];
  const path = [];
  const undos = [];
  const stack = [board.orderedMoves()];
  let nodes = 0;
  while (stack.length) {
    const pending = stack[stack.length - 1];
    if (pending.length === 0) {
      stack.pop();
      if (undos.length) {
        board.takeBack(undos.pop());
        path.pop();
      }
      continue;
    }
    const [code, to] = pending.pop();
    const undo = board.play(code, to);
    const key = board.key;
    if (seen.has(key)) {
      board.takeBack(undo);
      continue;
    }
    seen.add(key);
    nodes += 1;
    path.push([code, to]);
    undos.push(undo);
    const placed = board.placed;
    const children = board.orderedMoves();
    const blocked = placed === ALL_PLACED || (children.length === 0 && board.isBlocked());
    if (placed > bestPlaced || (placed === bestPlaced && blocked && !bestBlocked)) {
      bestPlaced = placed;
      bestBlocked = blocked;
      best = path.slice();
      if (placed === ALL_PLACED) break;
    }
    if (nodes >= maxNodes) break;
    stack.push(children);
  }
  while (undos.length) board.takeBack(undos.pop());
  return [bestPlaced, best];
}

/** The best-looking onward move (ties broken by ``rng``), or null when blocked; a move
 * to a position in ``avoid`` (keys) is passed over. */
function greedyMove(board, rng, avoid = null) {
  let best = null;
  let bestScore = -(10 ** 9);
  for (const [code, to] of board.moves()) {
    const score = board.scoreMove(code, to) * 8 + rng.randrange(8);
    if (score > bestScore) {
      if (avoid !== null) {
        const undo = board.play(code, to);
        const fresh = !avoid.has(board.key);
        board.takeBack(undo);
        if (!fresh) continue;
      }
      best = [code, to];
      bestScore = score;
    }
  }
  return best;
}

/** Greedy moves on ``board`` until it is blocked. */
function greedyDeal(board, rng) {
  for (let move = greedyMove(board, rng); move !== null; move = greedyMove(board, rng)) {
    board.play(move[0], move[1]);
  }
}

// -- redeal or stop: expected score ---------------------------------------------------------

function finalScore(placed, redealsUsed) {
  const bonus = placed === ALL_PLACED && redealsUsed === 0 ? WIN_BONUS : 0;
  return placed - REDEAL_COST * redealsUsed + bonus;
}

function rolloutGreedy(grid, ruleset, redealsUsed, rng) {
  const board = new Board(grid);
  greedyDeal(board, rng);
  return finalScore(board.placed, redealsUsed);
}

function rolloutSearch(maxNodes) {
  return (grid, ruleset, redealsUsed, rng) => {
    const rules = RULESETS[ruleset];
    for (;;) {
      const board = new Board(grid);
      const [placed, plan] = searchDeal(board, maxNodes);
      for (const [code, to] of plan) board.play(code, to);
      const mayRedeal = rules.anyTime || board.isBlocked();
      if (ALL_PLACED - placed >= 2 * REDEAL_COST && mayRedeal && redealsUsed < rules.redeals) {
        redealsUsed += 1;
        grid = redealtGrid(board.grid, ruleset, rng.randbytes(SEED_BYTES), redealsUsed);
        continue;
      }
      return finalScore(placed, redealsUsed);
    }
  };
}

/** Whether a redeal now has a higher expected score than stopping now (sampled). */
function redealPays(game, rng, samples, rollout) {
  if (ALL_PLACED - game.placed <= REDEAL_COST || game.redealsLeft <= 0) return false;
  const used = game.redealsUsed + 1;
  let total = 0;
  for (let i = 0; i < samples; i++) {
    const dealt = redealtGrid(game.grid, game.ruleset, rng.randbytes(SEED_BYTES), used);
    total += rollout(dealt, game.ruleset, used, rng);
  }
  return total / samples > game.score;
}

// -- the bots: choose(game) returns an action text (engine.js Game.push reads it) ----------

function moveText(code, to) {
  const text = 'A23456789TJQK'[code % 13] + 'CDHS'[Math.floor(code / 13)];
  return code % 13 === 1 ? `${text}>${Math.floor(to / COLUMNS) + 1}` : text;
}

/** Level 1: a uniformly random legal move to a position new to this deal; when there is
 * none, redeal if it can, else stop. */
export class RandomBot {
  constructor(seed = 0) {
    this.name = 'random';
    this.rng = new PyRandom(seed);
    this.deal = -1;
    this.seen = new Set(); // the positions this deal has been in, the current one too
  }

  choose(game) {
    if (game.redealsUsed !== this.deal) {
      this.deal = game.redealsUsed;
      this.seen = new Set();
    }
    const board = Board.of(game);
    this.seen.add(board.key);
    const moves = game.legalMovesInGapOrder().filter((move) => {
      const undo = board.play(move.card, move.to);
      const fresh = !this.seen.has(board.key);
      board.takeBack(undo);
      return fresh;
    });
    if (moves.length) {
      const move = moves[Math.floor(this.rng.random() * moves.length)];
      return moveText(move.card, move.to);
    }
    return game.canRedeal ? 'redeal' : 'stop';
  }
}

/** Level 2: the best-looking move one ply ahead; a redeal only if it should pay. */
export class GreedyBot {
  constructor(seed = 0, { samples = REDEAL_SAMPLES } = {}) {
    this.name = 'greedy';
    this.rng = new PyRandom(seed);
    this.samples = samples;
  }

  choose(game) {
    const move = greedyMove(Board.of(game), this.rng);
    if (move !== null) return moveText(move[0], move[1]);
    if (game.canRedeal && redealPays(game, this.rng, this.samples, rolloutGreedy)) return 'redeal';
    return 'stop';
  }
}

/** Level 3: searches the deal for its best position, plays its way there, then redeals or
 * stops by expected score (or, with ``playToWin``, redeals whenever it may). */
export class SearchBot {
  constructor(seed = 0, {
    maxNodes = SEARCH_NODES, samples = REDEAL_SAMPLES, rolloutNodes = ROLLOUT_NODES, playToWin = false,
  } = {}) {
    this.name = playToWin ? 'search-win' : 'search';
    this.rng = new PyRandom(seed);
    this.maxNodes = maxNodes;
    this.samples = samples;
    this.rollout = rolloutNodes > 0 ? rolloutSearch(rolloutNodes) : rolloutGreedy;
    this.playToWin = playToWin;
    this.plan = []; // the moves still to play, last first
    this.board = null; // the position the plan expects
    this.deal = -1;
    this.seen = new Set(); // as gaps/search_bot.py keeps them (there for its solver bot)
    this.wander = null;
  }

  choose(game) {
    const grid = game.grid.slice();
    if (game.redealsUsed !== this.deal) {
      this.deal = game.redealsUsed;
      this.plan = [];
      this.seen = new Set();
      this.wander = null;
    }
    let board = this.board;
    if (!this.plan.length || board === null || board.grid.some((code, i) => code !== grid[i])) {
      board = new Board(grid);
      this.board = board;
      this.plan = searchDeal(board, this.maxNodes)[1].reverse();
    }
    this.seen.add(board.key);
    if (this.plan.length) {
      const [code, to] = this.plan.pop();
      board.play(code, to);
      return moveText(code, to);
    }
    // Nothing better to reach in this deal: redeal or stop.
    if (game.canRedeal) return this.redealPays(game) ? 'redeal' : 'stop';
    if (game.redealsLeft <= 0) return 'stop';
    // Stuck short of blocked while a redeal waits for a blocked position (classic):
    // wander to new positions until blocked, if the redeal is worth it.
    if (this.wander === null) this.wander = this.redealPays(game);
    const move = this.wander ? greedyMove(board, this.rng, this.seen) : null;
    if (move === null) return 'stop';
    board.play(move[0], move[1]);
    return moveText(move[0], move[1]);
  }

  redealPays(game) {
    if (this.playToWin) return game.redealsLeft > 0;
    return redealPays(game, this.rng, this.samples, this.rollout);
  }
}

export const BOT_NAMES = ['random', 'greedy', 'search', 'search-win'];

/** A bot by name (``BOT_NAMES``), seeded: the same seed plays the same game. */
export function botNamed(name, seed = 0) {
  if (name === 'random') return new RandomBot(seed);
  if (name === 'greedy') return new GreedyBot(seed);
  if (name === 'search') return new SearchBot(seed);
  if (name === 'search-win') return new SearchBot(seed, { playToWin: true });
  throw new Error(`${JSON.stringify(name)} is not a bot: expected one of ${BOT_NAMES.join(', ')}`);
}

/** The hint of gaps/hint.py: an action text, or null once the game is over. The first
 * step of a small search (1,500 positions); when it finds nothing better to reach, a
 * redeal or a stop, whichever has the higher expected score (6 greedy samples). The same
 * position always gets the same hint, and following it never comes back to a position
 * without a redeal in between: every move it gives is onward. */
export function hint(game) {
  if (game.isOver) return null;
  return new SearchBot(0, { maxNodes: HINT_NODES, samples: HINT_SAMPLES, rolloutNodes: 0 }).choose(game);
}
