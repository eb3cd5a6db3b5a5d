// The board a player plays by clicks or keys, its controls, and how a game is told in a
// line: shared by the race, the replay and practice.
import * as engine from './engine.js';
import { el, say } from './dom.js';

const SUIT_SYMBOLS = ['♣', '♦', '♥', '♠'];
const RANK_LABELS = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];

/** A card as the board shows it: "J♥", "10♠". */
export const cardShown = (code) => `${RANK_LABELS[code % 13]}${SUIT_SYMBOLS[engine.suitOf(code)]}`;

/** A card as it is read: "7 of hearts"; an ace or a face card starts with the letter it
 * shows ("J, jack of hearts"), so its name holds its visible text. */
export function cardLabel(code) {
  const shown = RANK_LABELS[code % 13];
  return /^\d/.test(shown) ? engine.cardName(code) : `${shown}, ${engine.cardName(code)}`;
}

const where = (index) => `row ${Math.floor(index / 13) + 1}, column ${(index % 13) + 1}`;

function cardFace(code) {
  return [el('span', { class: 'rank' }, RANK_LABELS[code % 13]), el('span', { class: 'suit' }, SUIT_SYMBOLS[engine.suitOf(code)])];
}

/** A board the player plays by clicks or keys; ``onAction(text)`` sends or applies an action. */
export class Board {
  constructor({ ruleset, onAction, readOnly = false, id = null, label = 'The board' }) {
    this.ruleset = ruleset;
    this.onAction = onAction;
    this.readOnly = readOnly;
    this.selected = null;
    this.hint = null; // the slot a hint names: its card is selected, the slot marked
    this.marks = false; // whether every card that can move now is marked (M)
    this.pending = null; // the card of an action the server has not confirmed yet
    this.node = el('div', { class: 'board', id, role: 'group', 'aria-label': `${label}: 4 rows of 13 slots` });
    this.node.addEventListener('keydown', (event) => this.key(event));
    this.cells = [];
    for (let index = 0; index < 52; index++) {
      // One slot of the board is in the Tab order (a roving tabindex): Tab enters the
      // board and leaves it in one press, the arrows move within it.
      const cell = el('button', { class: 'cell', type: 'button', 'data-slot': engine.slotText(index), tabindex: index === 0 ? 0 : -1 });
      cell.addEventListener('click', () => this.click(index));
      cell.addEventListener('focus', () => this.rove(index));
      this.cells.push(cell);
      this.node.append(cell);
    }
  }

  show(game) {
    this.game = game;
    const placed = new Set();
    game.runLengths().forEach((length, row) => { for (let c = 0; c < length; c++) placed.add(row * 13 + c); });
    const targets = this.selected === null || this.readOnly ? [] : game.destinations(this.selected);
    const movable = new Set(this.marks ? game.legalMoves().map((move) => move.card) : []);
    game.grid.forEach((code, index) => {
      const cell = this.cells[index];
      const label = [];
      if (code === engine.GAP) {
        const dead = game.isDeadGap(index);
        cell.className = `cell gap${dead ? ' dead' : ''}`;
        cell.replaceChildren();
        label.push(dead ? 'dead gap' : 'gap', where(index));
      } else {
        cell.className = `cell suit-${engine.SUITS[engine.suitOf(code)]}`;
        cell.replaceChildren(...cardFace(code));
        label.push(cardLabel(code), where(index));
        if (placed.has(index)) { cell.classList.add('placed'); label.push('placed'); }
        if (movable.has(code)) { cell.classList.add('movable'); label.push('can move'); }
        if (code === this.pending) { cell.classList.add('pending'); label.push('waiting for the server'); }
      }
      cell.classList.toggle('selected', code === this.selected && code !== engine.GAP);
      cell.classList.toggle('target', targets.includes(index));
      cell.classList.toggle('hint', index === this.hint);
      if (index === this.hint) label.push('the hint');
      cell.setAttribute('aria-label', label.join(', '));
      cell.setAttribute('aria-pressed', code === this.selected ? 'true' : 'false');
    });
  }

  rove(index) {
    for (const cell of this.cells) cell.tabIndex = -1;
    this.cells[index].tabIndex = 0;
  }

  click(index) {
    if (this.readOnly || !this.game || this.game.isOver) return;
    this.hint = null; // taken, or passed over for a choice of one's own
    const code = this.game.grid[index];
    if (code !== engine.GAP) {
      this.selected = this.selected === code ? null : code;
      const targets = this.selected === null ? [] : this.game.destinations(code);
      if (this.selected !== null && targets.length === 1 && engine.rankOf(code) !== 2) {
        // One destination and no choice to make: play it at once.
        this.selected = null;
        this.onAction(this.game.moveText(code, targets[0]));
        return;
      }
      if (this.selected !== null && targets.length === 0) say(`${engine.cardName(code)} has no legal move.`);
      this.show(this.game);
      return;
    }
    if (this.selected !== null && this.game.destinations(this.selected).includes(index)) {
      const card = this.selected;
      this.selected = null;
      this.onAction(this.game.moveText(card, index));
      return;
    }
    const fillers = this.game.legalMoves().filter((move) => move.to === index);
    if (fillers.length === 1) this.onAction(this.game.moveText(fillers[0].card, index));
    else if (fillers.length > 1) say('Choose the 2 to put here first, then this gap.');
    else say(this.game.isDeadGap(index) ? 'This gap is dead: no card can ever fill it.' : 'No card can fill this gap now.');
  }

  key(event) {
    const index = this.cells.indexOf(document.activeElement);
    if (index < 0) return;
    const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -13, ArrowDown: 13 }[event.key];
    if (step !== undefined) {
      const next = index + step;
      if (next >= 0 && next < 52) this.cells[next].focus();
      event.preventDefault();
    } else if (event.key === 'Escape') {
      this.selected = null;
      this.hint = null;
      this.show(this.game);
    }
  }
}

/** What an action does, in words: "3 of diamonds to row 3, column 4", "redeal". */
export function actionWords(game, text) {
  if (['redeal', 'undo', 'stop'].includes(text)) return text;
  const move = game.legalMoves().find((m) => game.moveText(m.card, m.to) === text);
  return move ? `${engine.cardName(move.card)} to ${where(move.to)}` : text;
}

/** The card an action moves, or null (a redeal, an undo, a stop). */
export function actionCard(game, text) {
  const move = game.legalMoves().find((m) => game.moveText(m.card, m.to) === text);
  return move ? move.card : null;
}

export function gameControls(game, act, { hint = false } = {}) {
  const controls = el('div', { class: 'controls' });
  const button = (action, key, text) => el('button', {
    type: 'button', 'data-action': action, 'aria-keyshortcuts': key, on: { click: () => act(action) },
  }, `${text} (${key})`);
  controls.append(button('redeal', 'R', 'Redeal'));
  if (engine.RULESETS[game.ruleset].undo) controls.append(button('undo', 'U', 'Undo'));
  controls.append(button('stop', 'S', 'Stop'));
  controls.append(button('marks', 'M', 'Marks'));
  if (hint) controls.append(button('hint', 'H', 'Hint'));
  return controls;
}

/** Ask before an action that costs points or ends the game. */
export function confirmed(action, game) {
  // A redeal the rules refuse costs nothing: it is refused with its reason at once.
  if (action === 'redeal') return !game.canRedeal || window.confirm(`Redeal? It costs 5 points (${game.redealsLeft} left).`);
  if (action === 'stop') return window.confirm(`Stop now? Your score stands at ${game.score}.`);
  return true;
}

/** Mark every card that can move now on ``board``, or (again) no card. */
export function toggleMarks(board) {
  board.marks = !board.marks;
  if (board.game) board.show(board.game);
  say(board.marks ? 'Marked: every card that can move now.' : 'No marks.');
}

export function shortcuts(act, keys = { r: 'redeal', u: 'undo', s: 'stop', m: 'marks' }) {
  const handler = (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const action = keys[event.key.toLowerCase()];
    if (action) { event.preventDefault(); act(action); }
  };
  document.addEventListener('keydown', handler);
  return () => document.removeEventListener('keydown', handler);
}

// A game's state in words; the last four end a game from outside its play.
const STATES = {
  playing: 'playing',
  blocked: 'blocked: redeal or stop',
  won: 'won',
  lost: 'lost: blocked, no redeal left',
  stopped: 'stopped',
  time: 'ended: time is up',
  disconnected: 'ended: disconnected too long',
  left: 'ended: left the match',
};
export const stateWords = (state) => STATES[state] ?? state;

/** A game in one line; ``ended`` (the server's ``end_reason``) overrides what the board
 * alone can tell (a time limit, a disconnection). */
export function summaryLine(game, ended = null) {
  return `Score ${game.score} · placed ${game.placed}/48 · redeals left ${game.redealsLeft} · moves ${game.movesMade} · ${stateWords(ended || game.status)}`;
}

// -- par ------------------------------------------------------------------------------------

/** The deal's par (docs/protocol.md: ``{score, exact}``, null until solved) in a few
 * words: "58", "at least 31" (a lower bound: the solver's budget ran out). */
export function parWords(par) {
  if (!par) return 'not solved yet';
  return par.exact ? String(par.score) : `at least ${par.score}`;
}

/** The deal's par in a sentence, and ``score`` (if given, ``who``'s) against it. */
export function parSentence(par, score = null, who = 'You') {
  if (!par) return 'Par: not solved yet (the server solves each deal after its match).';
  const against = score === null ? '' : ` ${who}: ${toPar(score, par)}.`;
  if (par.exact) return `Par ${par.score}: the best score this deal allows.${against}`;
  return `Par: at least ${par.score}. The solver ran out of budget before proving the best score this deal allows, so ${par.score} is a lower bound.${against}`;
}

/** A score against par: "3 below par", "at par"; with a lower bound, "at least 3 below
 * par". Par is never below a score that was reached. */
export function toPar(score, par) {
  if (!par) return '';
  const gap = par.score - score;
  if (gap < 0) return `${-gap} above par`; // never, by the protocol; said as it is
  if (par.exact) return gap === 0 ? 'at par' : `${gap} below par`;
  return gap === 0 ? 'at par or below it' : `at least ${gap} below par`;
}
