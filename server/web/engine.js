// The rules of Gaps (docs/rules.md) in JavaScript, for practice offline and for checking a
// move before it is sent. tests/test_web_engine.py holds it to the Python engine (gaps/):
// the docs/rules.md test vectors and a differential test over random games.
// A synchronous SHA-256 is needed because a deal must be computed without awaiting
// (SubtleCrypto is asynchronous); it is used only for the portable generator.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of ``bytes`` (a Uint8Array), as a Uint8Array of 32 bytes. */
export function sha256(bytes) {
  const length = bytes.length;
  const padded = new Uint8Array(((length + 72) >> 6) << 6);
  padded.set(bytes);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length << 3) >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + 4 * i);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    const next = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i] + next[i]) >>> 0;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(4 * i, h[i]);
  return out;
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function fromHex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

// -- seeds and share codes (rules.md section 10) --------------------------------------

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export class NotationError extends Error {}

/** The share code of ``bytes``: base32, no padding, groups of four joined by ``-``. */
export function shareCode(bytes) {
  let bits = 0;
  let value = 0;
  let letters = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      letters += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) letters += BASE32[(value << (5 - bits)) & 31];
  return letters.match(/.{1,4}/g).join('-');
}

/** The seed bytes of a share code; raises NotationError for anything not canonical. */
export function parseShareCode(text) {
  const letters = String(text)
    .replace(/[ \t\n\r\f\v-]/g, '')
    .replace(/[a-z]/g, (c) => c.toUpperCase())
    .replace(/0/g, 'O').replace(/1/g, 'I').replace(/8/g, 'B');
  const out = [];
  let bits = 0;
  let value = 0;
  for (const letter of letters) {
    const digit = BASE32.indexOf(letter);
    if (digit < 0) throw new NotationError(`not a share code: ${JSON.stringify(text)}`);
    value = (value << 5) | digit;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
      value &= (1 << bits) - 1;
    }
  }
  const bytes = Uint8Array.from(out);
  if (bytes.length === 0 || shareCode(bytes).replace(/-/g, '') !== letters) {
    throw new NotationError(`not a share code: ${JSON.stringify(text)}`);
  }
  return bytes;
}

export function randomSeed() {
  const bytes = new Uint8Array(10);
  globalThis.crypto.getRandomValues(bytes);
  return bytes;
}

// -- the portable generator (rules.md section 11) --------------------------------------

/** The stream of 32-bit words of (seed, label). */
export class Stream {
  constructor(seed, label) {
    this.key = sha256(seed);
    this.label = new TextEncoder().encode(label);
    this.block = 0;
    this.words = [];
    this.used = 0; // words taken so far, rejected ones included
    this.rejected = [];
  }

  next() {
    if (this.words.length === 0) {
      const input = new Uint8Array(32 + this.label.length + 8);
      input.set(this.key);
      input.set(this.label, 32);
      new DataView(input.buffer).setUint32(input.length - 4, this.block);
      this.block += 1;
      const digest = new DataView(sha256(input).buffer);
      for (let i = 7; i >= 0; i--) this.words.push(digest.getUint32(4 * i));
    }
    this.used += 1;
    return this.words.pop();
  }

  below(n) {
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const x = this.next();
      if (x < limit) return x % n;
      this.rejected.push(this.used - 1);
    }
  }
}

export function shuffle(items, stream) {
  for (let i = items.length - 1; i >= 1; i--) {
    const j = stream.below(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

// -- cards, slots, actions (rules.md section 7) -----------------------------------------

export const GAP = 255;
export const RANKS = 'A23456789TJQK';
export const SUITS = 'CDHS';
export const SUIT_NAMES = ['clubs', 'diamonds', 'hearts', 'spades'];
export const RANK_NAMES = ['ace', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'jack', 'queen', 'king'];
const SYMBOLS = { '♣': 'C', '♦': 'D', '♥': 'H', '♠': 'S' };

export const rankOf = (code) => (code % 13) + 1;
export const suitOf = (code) => Math.floor(code / 13);
export const cardText = (code) => RANKS[code % 13] + SUITS[suitOf(code)];
export const cardName = (code) => `${RANK_NAMES[code % 13]} of ${SUIT_NAMES[suitOf(code)]}`;
export const slotText = (index) => `r${Math.floor(index / 13) + 1}c${(index % 13) + 1}`;

export function parseCard(text) {
  let t = String(text).replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '');
  const suit = SYMBOLS[t.slice(-1)] ?? t.slice(-1).replace(/[a-z]/, (c) => c.toUpperCase());
  let rank = t.slice(0, -1).replace(/[a-z]/, (c) => c.toUpperCase());
  if (rank === '10') rank = 'T';
  const r = RANKS.indexOf(rank);
  const s = SUITS.indexOf(suit);
  if (rank.length !== 1 || r < 0 || s < 0 || suit.length !== 1) {
    throw new NotationError(`not a card: ${JSON.stringify(text)}`);
  }
  return s * 13 + r;
}

/** A grid (52 codes) from layout text or a list of 4 row strings. */
export function parseLayout(text) {
  const rows = Array.isArray(text) ? text : String(text).split('\n');
  const cells = rows
    .filter((row) => row.trim() !== '')
    .flatMap((row) => row.trim().split(/[ \t\r\f\v]+/));
  if (cells.length !== 52) throw new NotationError('a layout has 52 cells');
  return cells.map((cell) => (cell === '--' ? GAP : parseCard(cell)));
}

export function layoutRows(grid) {
  const rows = [];
  for (let r = 0; r < 4; r++) {
    rows.push(grid.slice(r * 13, r * 13 + 13).map((c) => (c === GAP ? '--' : cardText(c))).join(' '));
  }
  return rows;
}

// -- rulesets (rules.md section 5) -------------------------------------------------------

export const RULESETS = {
  classic: { redeals: 2, anyTime: false, keep: 'run', gaps: 'after', undo: false, montana: false },
  'no-redeal': { redeals: 0, anyTime: false, keep: 'run', gaps: 'after', undo: false, montana: false },
  addiction: { redeals: 3, anyTime: true, keep: 'run', gaps: 'aces', undo: true, montana: false },
  spaces: { redeals: 2, anyTime: false, keep: 'none', gaps: 'column1', undo: false, montana: false },
  montana: { redeals: 2, anyTime: false, keep: 'run', gaps: 'after', undo: false, montana: true },
  paganini: { redeals: 3, anyTime: false, keep: 'final', gaps: 'after', undo: false, montana: false },
};

export class IllegalAction extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

export function dealtGrid(seed, rulesetName) {
  const deck = shuffle(Array.from({ length: 52 }, (_, i) => i), new Stream(seed, 'deal'));
  const grid = deck.map((code) => (code % 13 === 0 ? GAP : code));
  if (RULESETS[rulesetName].montana) {
    const twos = grid.filter((code) => code !== GAP && rankOf(code) === 2);
    twos.forEach((two, r) => {
      const at = grid.indexOf(two);
      [grid[at], grid[r * 13]] = [grid[r * 13], grid[at]];
    });
  }
  return grid;
}

/** The gaps of ``grid`` in index order: how gaps/game.py lists them after a deal. */
function gapIndexes(grid) {
  const gaps = [];
  grid.forEach((code, index) => { if (code === GAP) gaps.push(index); });
  return gaps;
}

function runLength(grid, start) {
  const first = grid[start];
  if (first === GAP || rankOf(first) !== 2) return 0;
  let n = 1;
  while (n < 12 && grid[start + n] === first + n) n += 1;
  return n;
}

export function redealtGrid(grid, rulesetName, seed, number) {
  const rules = RULESETS[rulesetName];
  const kept = new Array(52).fill(false);
  const newGap = new Array(52).fill(false);
  for (let r = 0; r < 4; r++) {
    const start = r * 13;
    const run = runLength(grid, start);
    if (rules.keep === 'run') for (let c = 0; c < run; c++) kept[start + c] = true;
    if (rules.keep === 'final' && run > 0) {
      const two = grid[start];
      for (let c = 0; c < 12; c++) if (grid[start + c] === two + c) kept[start + c] = true;
    }
    if (rules.gaps === 'after') newGap[start + run] = true;
    if (rules.gaps === 'column1') newGap[start] = true;
  }
  const collected = grid.filter((code, i) => code !== GAP && !kept[i]);
  if (rules.gaps === 'aces') collected.push(0, 13, 26, 39);
  collected.sort((a, b) => a - b);
  shuffle(collected, new Stream(seed, `redeal-${number}`));
  let next = 0;
  return grid.map((code, i) => {
    if (kept[i]) return code;
    if (newGap[i]) return GAP;
    const card = collected[next++];
    return card % 13 === 0 ? GAP : card;
  });
}

/** One player's game: the position, the counters, the undo stack. */
export class Game {
  constructor(seed, rulesetName = 'classic') {
    if (!(rulesetName in RULESETS)) throw new NotationError(`no ruleset ${JSON.stringify(rulesetName)}`);
    this.seed = seed;
    this.ruleset = rulesetName;
    this.rules = RULESETS[rulesetName];
    this.grid = seed ? dealtGrid(seed, rulesetName) : new Array(52).fill(GAP);
    // The gaps in the order gaps/game.py keeps them (a move puts the slot it left where
    // the gap it filled was): the order of ``legalMovesInGapOrder``, from which the
    // random bot picks as the Python one does.
    this.gapOrder = gapIndexes(this.grid);
    this.redealsUsed = 0;
    this.movesMade = 0;
    this.stopped = false;
    this.undoStack = [];
  }

  /** A game shown from the server's view (grid rows and counters), for pre-checks only. */
  static fromView(rulesetName, rows, { redealsUsed = 0, stopped = false } = {}) {
    const game = new Game(null, rulesetName);
    game.grid = parseLayout(rows);
    game.gapOrder = gapIndexes(game.grid);
    game.redealsUsed = redealsUsed;
    game.stopped = stopped;
    return game;
  }

  isDeadGap(index) {
    if (this.grid[index] !== GAP || index % 13 === 0) return false;
    const left = this.grid[index - 1];
    return left === GAP || rankOf(left) === 13;
  }

  runLengths() {
    return [0, 1, 2, 3].map((r) => runLength(this.grid, r * 13));
  }

  get placed() {
    return this.runLengths().reduce((a, b) => a + b, 0);
  }

  get isWon() {
    return this.placed === 48;
  }

  get score() {
    const bonus = this.isWon && this.redealsUsed === 0 ? 10 : 0;
    return this.placed - 5 * this.redealsUsed + bonus;
  }

  get redealsLeft() {
    return this.rules.redeals - this.redealsUsed;
  }

  get isBlocked() {
    return this.candidateMoves().length === 0;
  }

  get isLost() {
    return !this.isWon && this.redealsLeft === 0 && this.isBlocked;
  }

  get isOver() {
    return this.isWon || this.stopped || this.isLost;
  }

  get status() {
    if (this.isWon) return 'won';
    if (this.stopped) return 'stopped';
    if (this.isLost) return 'lost';
    if (this.isBlocked) return 'blocked';
    return 'playing';
  }

  get canUndo() {
    return this.rules.undo && !this.isOver && this.undoStack.length > 0;
  }

  get canRedeal() {
    if (this.isOver || this.redealsLeft <= 0) return false;
    return this.rules.anyTime || this.isBlocked;
  }

  /** Every legal move, each once: ``{card, to}`` with slot indexes (none once over). */
  legalMoves() {
    return this.isOver ? [] : this.candidateMoves();
  }

  /** The moves the position allows, whether or not the game is over. */
  candidateMoves() {
    const moves = [];
    for (let to = 0; to < 52; to++) {
      if (this.grid[to] !== GAP) continue;
      if (to % 13 === 0) {
        for (let from = 0; from < 52; from++) {
          const code = this.grid[from];
          if (code !== GAP && rankOf(code) === 2) moves.push({ card: code, to });
        }
      } else {
        const left = this.grid[to - 1];
        if (left !== GAP && rankOf(left) !== 13) moves.push({ card: left + 1, to });
      }
    }
    return moves;
  }

  /** ``legalMoves()`` in the order of gaps/game.py's ``legal_moves``: gap by gap as
   * ``gapOrder`` keeps them, the 2s of a column-1 gap in suit order. */
  legalMovesInGapOrder() {
    if (this.isOver) return [];
    const moves = [];
    for (const to of this.gapOrder) {
      if (to % 13 === 0) {
        for (const two of [1, 14, 27, 40]) moves.push({ card: two, to });
      } else {
        const left = this.grid[to - 1];
        if (left !== GAP && rankOf(left) !== 13) moves.push({ card: left + 1, to });
      }
    }
    return moves;
  }

  /** The legal destinations of ``card`` (slot indexes). */
  destinations(card) {
    return this.legalMoves().filter((m) => m.card === card).map((m) => m.to);
  }

  /** The move's notation in the engine's shortest form. */
  moveText(card, to) {
    if (rankOf(card) === 2) return `${cardText(card)}>${Math.floor(to / 13) + 1}`;
    return cardText(card);
  }

  /** Parse and apply an action text (``8C``, ``2H>3``, ``8C>r2c6``, ``redeal``, ``undo``, ``stop``). */
  push(text) {
    const t = String(text).replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '');
    const word = t.replace(/[A-Z]/g, (c) => c.toLowerCase());
    if (word === 'redeal') return this.redeal();
    if (word === 'undo') return this.undo();
    if (word === 'stop') return this.stop();
    const [cardPart, slotPart] = t.split('>');
    const card = parseCard(cardPart);
    let to = null;
    if (slotPart !== undefined) {
      const s = slotPart.replace(/[ \t\n\r\f\v]/g, '').toLowerCase();
      const named = /^r([1-4])c([1-9]|1[0-3])$/.exec(s);
      const row = /^([1-4])$/.exec(s);
      if (named) to = (Number(named[1]) - 1) * 13 + Number(named[2]) - 1;
      else if (row) to = (Number(row[1]) - 1) * 13;
      else throw new NotationError(`not a move: ${JSON.stringify(text)}`);
    }
    return this.play(card, to);
  }

  /** Move ``card`` into slot ``to`` (null: the short form, for a card other than a 2). */
  play(card, to = null) {
    if (this.isOver) throw new IllegalAction('game_over', 'the game is over');
    if (rankOf(card) === 1) throw new IllegalAction('not_in_play', `${cardText(card)} is out of play`);
    if (to === null) {
      if (rankOf(card) === 2) throw new IllegalAction('row_required', `${cardText(card)} needs a row`);
      const lower = this.grid.indexOf(card - 1);
      if (lower % 13 === 12) throw new IllegalAction('not_a_gap', 'no slot right of column 13');
      to = lower + 1;
    }
    if (this.grid[to] !== GAP) throw new IllegalAction('not_a_gap', `${slotText(to)} holds a card`);
    if (to % 13 === 0) {
      if (rankOf(card) !== 2) throw new IllegalAction('wrong_card', `${slotText(to)} takes a 2`);
    } else {
      const left = this.grid[to - 1];
      if (left === GAP || rankOf(left) === 13) throw new IllegalAction('dead_gap', `${slotText(to)} is dead`);
      if (card !== left + 1) throw new IllegalAction('wrong_card', `${slotText(to)} takes ${cardText(left + 1)}`);
    }
    const from = this.grid.indexOf(card);
    this.grid[to] = card;
    this.grid[from] = GAP;
    this.gapOrder[this.gapOrder.indexOf(to)] = from;
    this.movesMade += 1;
    if (this.rules.undo) this.undoStack.push([card, from]);
    return { kind: 'move', card, from, to };
  }

  redeal() {
    if (this.isOver) throw new IllegalAction('game_over', 'the game is over');
    if (this.rules.redeals === 0) throw new IllegalAction('redeal_not_allowed', 'no redeals in this ruleset');
    if (this.redealsLeft <= 0) throw new IllegalAction('no_redeals_left', 'every redeal is used');
    if (!this.rules.anyTime && !this.isBlocked) {
      throw new IllegalAction('redeal_not_allowed', 'a redeal only when blocked');
    }
    this.grid = redealtGrid(this.grid, this.ruleset, this.seed, this.redealsUsed + 1);
    this.gapOrder = gapIndexes(this.grid);
    this.redealsUsed += 1;
    this.undoStack = [];
    return { kind: 'redeal' };
  }

  undo() {
    if (!this.rules.undo) throw new IllegalAction('undo_not_allowed', 'no undo in this ruleset');
    if (this.isOver) throw new IllegalAction('game_over', 'the game is over');
    if (this.undoStack.length === 0) throw new IllegalAction('nothing_to_undo', 'nothing to undo');
    const [card, from] = this.undoStack.pop();
    const to = this.grid.indexOf(card);
    this.grid[from] = card;
    this.grid[to] = GAP;
    this.gapOrder[this.gapOrder.indexOf(from)] = to;
    return { kind: 'undo', card, from: to, to: from };
  }

  stop() {
    if (this.isOver) throw new IllegalAction('game_over', 'the game is over');
    this.stopped = true;
    return { kind: 'stop' };
  }
}
