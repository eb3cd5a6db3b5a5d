// The Gaps Arena web client: one page per URL, routed here; the wire protocol of
// docs/protocol.md is its only contract. Every string from the server or a player is put
// in the page with textContent (el() below), never parsed as HTML.
import * as engine from './engine.js';
import * as bots from './bots.js';

const TOKEN_KEY = 'gaps.token';
const PENDING_KEY = 'gaps.pending'; // an action sent but not yet acknowledged, per match
const RULESET_NAMES = Object.keys(engine.RULESETS);
const main = document.getElementById('main');
const statusLine = document.getElementById('status');
const notice = document.getElementById('notice');

// -- DOM helpers -------------------------------------------------------------------------

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'on') for (const [name, handler] of Object.entries(value)) node.addEventListener(name, handler);
    else if (key === 'class') node.className = value;
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const link = (href, text) => el('a', { href }, text);
/** A player's name as text, with a "bot" badge when the server says a bot plays (``bot``
 * absent or false: a person). ``name`` may be a node (a link) showing the name. */
const named = (entry, name = entry.name) => (entry.bot === true
  ? el('span', { class: 'named' }, name, ' ', el('span', { class: 'badge-bot', role: 'img', 'aria-label': '(a bot)', title: 'a bot plays this seat' }, 'bot'))
  : name);
const say = (text, isError = false) => { statusLine.textContent = text; statusLine.className = isError ? 'error' : ''; };
const show = (...nodes) => { main.replaceChildren(...nodes); };
const formatMs = (ms) => {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// Refusals that say "not now" rather than "no": the request was not carried out (an
// action may have been stored: it is sent again with its seq), so it is sent again after
// ``retry_after_ms`` or a growing delay. ``shutting_down`` is not among them: the server
// closes the connection next, and the reconnect sends the action again.
const TRANSIENT = {
  match_unavailable: 'The match is moving to another server',
  storage_unavailable: 'The server could not store that yet',
  broker_unavailable: 'The servers are reconnecting to each other',
  rate_limited: 'Too many requests',
};

/** ``attempt()`` again while it is refused for a transient reason and ``wanted()``. */
async function retrying(attempt, wanted = () => true) {
  let delayMs = 250;
  for (let tries = 0; ; tries++) {
    try {
      const result = await attempt();
      if (tries > 0) say('Done.');
      return result;
    } catch (error) {
      if (!(error.code in TRANSIENT) || !wanted()) throw error;
      const waitMs = Number.isFinite(error.retry_after_ms) ? error.retry_after_ms : delayMs;
      say(`${TRANSIENT[error.code]}: trying again in ${Math.max(1, Math.round(waitMs / 1000))} s…`);
      await sleep(waitMs);
      delayMs = Math.min(delayMs * 2, 8000);
    }
  }
}

async function getJson(path) {
  const reply = await fetch(path, { headers: { Accept: 'application/json' } });
  const body = await reply.json();
  if (!reply.ok) throw new Error(body.message || reply.statusText);
  return body;
}

// -- the connection: requests by id, events to listeners, reconnect ---------------------

class Connection {
  constructor() {
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = new Set();
    this.onReconnect = new Set();
    this.player = null;
    this.ready = null;
    this.delayMs = 500;
  }

  open() {
    if (this.ready) return this.ready;
    this.ready = new Promise((resolve, reject) => {
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
      const socket = new WebSocket(`${scheme}://${location.host}/`);
      this.socket = socket;
      socket.onmessage = (message) => this.receive(JSON.parse(message.data));
      socket.onopen = async () => {
        try {
          const token = localStorage.getItem(TOKEN_KEY);
          if (token) welcomed(await retrying(() => this.send({ type: 'hello', token })));
          this.delayMs = 500;
          resolve(this);
        } catch (error) {
          if (error.code === 'bad_token') localStorage.removeItem(TOKEN_KEY);
          resolve(this);
        }
      };
      socket.onclose = () => {
        const wasOpen = this.socket === socket;
        for (const [, pending] of this.waiting) pending.reject(Object.assign(new Error('connection lost'), { code: 'closed' }));
        this.waiting.clear();
        this.ready = null;
        if (!wasOpen) return;
        reject(Object.assign(new Error('connection lost'), { code: 'closed' }));
        say('Connection lost: reconnecting…', true);
        setTimeout(() => this.reconnect(), this.delayMs);
        this.delayMs = Math.min(this.delayMs * 2, 8000);
      };
    });
    this.ready.catch(() => {});
    return this.ready;
  }

  async reconnect() {
    try {
      await this.open();
      say('Reconnected.');
      for (const hook of [...this.onReconnect]) await hook();
    } catch {
      // onclose schedules the next try
    }
  }

  receive(message) {
    if (message.id !== undefined && this.waiting.has(message.id)) {
      const pending = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.type === 'error') pending.reject(Object.assign(new Error(message.message), message));
      else pending.resolve(message);
      return;
    }
    for (const listener of this.listeners) listener(message);
  }

  send(request) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ ...request, id }));
    });
  }

  async request(request) {
    await this.open();
    return this.send(request);
  }
}

const connection = new Connection();
let leavePage = () => {};

/** Take in a ``welcome`` (or ``registered``): who this is, and whether an operator has
 * suspended the account from rated play (``suspended``: null, or since when and why). */
function welcomed(reply) {
  connection.player = reply.player;
  const suspended = reply.suspended;
  notice.hidden = !suspended;
  if (!suspended) { notice.replaceChildren(); return; }
  const reason = typeof suspended === 'object' && typeof suspended.reason === 'string' && suspended.reason ? suspended.reason : null;
  notice.replaceChildren(el('strong', {}, 'Rated play is suspended for your account'),
    ...(reason ? [': ', el('span', { id: 'suspended-reason' }, reason)] : []),
    '. You can still play, but your results count on no board and no rating.');
}

// A result's ``review`` (match_ended's ranking, replays): null or "cleared" counts as
// usual and shows nothing; the others show a short mark and a sentence saying why.
const REVIEWS = {
  held: ['under review', (name) => `${name}'s result is under review: it is held off the boards and ratings until an operator reviews it.`],
  voided: ['voided by an operator', (name) => `${name}'s result was voided by an operator: it counts on no board and no rating.`],
  suspended: ['suspended', (name) => `${name} is suspended from rated play: this result counts on no board and no rating.`],
};
const reviewMark = (result) => (Object.hasOwn(REVIEWS, result.review)
  ? el('span', { class: 'review', 'data-review': result.review }, REVIEWS[result.review][0]) : null);
/** The sentences saying why results of ``players`` do not count (now), or null. */
function reviewNotes(players, id) {
  const lines = players.filter((p) => Object.hasOwn(REVIEWS, p.review)).map((p) => el('li', {}, REVIEWS[p.review][1](p.name)));
  return lines.length ? el('ul', { id, class: 'review-notes' }, lines) : null;
}

async function needPlayer() {
  await connection.open();
  if (!connection.player) {
    navigate('/', true);
    throw new Error('sign up or come back first');
  }
  return connection.player;
}

// -- cards and the board ---------------------------------------------------------------

const SUIT_SYMBOLS = ['♣', '♦', '♥', '♠'];
const RANK_LABELS = ['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'];

function cardFace(code) {
  const suit = engine.suitOf(code);
  return [el('span', { class: 'rank' }, RANK_LABELS[code % 13]), el('span', { class: 'suit' }, SUIT_SYMBOLS[suit])];
}

/** A board the player plays by clicks or keys; ``play(text)`` sends or applies an action. */
class Board {
  constructor({ ruleset, onAction, readOnly = false, id = null, label = 'The board' }) {
    this.ruleset = ruleset;
    this.onAction = onAction;
    this.readOnly = readOnly;
    this.selected = null;
    this.hint = null; // the slot a hint names: its card is selected, the slot marked
    this.marks = false; // whether every card that can move now is marked (M)
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
      const where = `row ${Math.floor(index / 13) + 1}, column ${(index % 13) + 1}`;
      if (code === engine.GAP) {
        const dead = game.isDeadGap(index);
        cell.className = `cell gap${dead ? ' dead' : ''}`;
        cell.replaceChildren();
        cell.setAttribute('aria-label', `${dead ? 'dead gap' : 'gap'}, ${where}`);
      } else {
        cell.className = `cell suit-${engine.SUITS[engine.suitOf(code)]}`;
        cell.replaceChildren(...cardFace(code));
        cell.setAttribute('aria-label', `${engine.cardName(code)}, ${where}${placed.has(index) ? ', placed' : ''}`);
        if (placed.has(index)) cell.classList.add('placed');
        if (movable.has(code)) {
          cell.classList.add('movable');
          cell.setAttribute('aria-label', `${cell.getAttribute('aria-label')}, can move`);
        }
      }
      cell.classList.toggle('selected', code === this.selected && code !== engine.GAP);
      cell.classList.toggle('target', targets.includes(index));
      cell.classList.toggle('hint', index === this.hint);
      if (index === this.hint) cell.setAttribute('aria-label', `${cell.getAttribute('aria-label')}, the hint`);
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
    else say('No card can fill this gap.');
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

function gameControls(game, act, { hint = false } = {}) {
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
function confirmed(action, game) {
  // A redeal the rules refuse costs nothing: it is refused with its reason at once.
  if (action === 'redeal') return !game.canRedeal || window.confirm(`Redeal? It costs 5 points (${game.redealsLeft} left).`);
  if (action === 'stop') return window.confirm(`Stop now? Your score stands at ${game.score}.`);
  return true;
}

/** Mark every card that can move now on ``board``, or (again) no card. */
function toggleMarks(board) {
  board.marks = !board.marks;
  if (board.game) board.show(board.game);
  say(board.marks ? 'Marked: every card that can move now.' : 'No marks.');
}

function shortcuts(act, keys = { r: 'redeal', u: 'undo', s: 'stop', m: 'marks' }) {
  const handler = (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const action = keys[event.key.toLowerCase()];
    if (action) { event.preventDefault(); act(action); }
  };
  document.addEventListener('keydown', handler);
  return () => document.removeEventListener('keydown', handler);
}

function summaryLine(game) {
  return `Score ${game.score} · placed ${game.placed}/48 · redeals left ${game.redealsLeft} · moves ${game.movesMade} · ${game.status}`;
}

// -- pages --------------------------------------------------------------------------------

/** Put the token on the clipboard; where the browser has none for this page (plain http
 * from another machine), show it selected, for Ctrl+C. */
async function copyToken(token, shown) {
  try {
    await navigator.clipboard.writeText(token);
    say('Token copied: paste it under "Or paste your token" on the other device.');
  } catch {
    shown.hidden = false;
    getSelection().selectAllChildren(shown);
    say('This browser cannot copy here: the token is shown and selected, copy it with Ctrl+C.');
  }
}

async function accountPage() {
  await connection.open();
  const token = localStorage.getItem(TOKEN_KEY);
  if (connection.player && token) {
    const shown = el('p', { class: 'token', id: 'token' }, token);
    shown.hidden = true;
    show(
      el('h1', {}, `Welcome back, `, el('span', { id: 'me' }, connection.player.name)),
      el('p', {}, 'Your token is your account: copy it to play from another device. Keep it secret.'),
      el('div', { class: 'row' },
        el('button', { type: 'button', on: { click: () => { shown.hidden = !shown.hidden; } } }, 'Show token'),
        el('button', { type: 'button', on: { click: () => copyToken(token, shown) } }, 'Copy token'),
        el('button', { type: 'button', on: { click: () => { localStorage.removeItem(TOKEN_KEY); location.assign('/'); } } }, 'Sign out on this device')),
      shown,
      el('p', {}, link('/lobby', 'Go to the lobby'), ' · ', link(`/player/${encodeURIComponent(connection.player.name)}`, 'your ratings')),
    );
    return;
  }
  const name = el('input', { id: 'name', name: 'name', autocomplete: 'nickname', required: true, minlength: 2, maxlength: 24 });
  const tokenInput = el('input', { id: 'token-input', name: 'token', autocomplete: 'off', required: true });
  show(
    el('h1', {}, 'Gaps Arena'),
    el('form', { class: 'grid', on: { submit: async (event) => {
      event.preventDefault();
      try {
        const reply = await connection.request({ type: 'register', name: name.value });
        localStorage.setItem(TOKEN_KEY, reply.token);
        welcomed(reply);
        say(`Signed up as ${reply.player.name}.`);
        route();
      } catch (error) { say(error.message, true); }
    } } }, el('label', { for: 'name' }, 'Choose a name'), name, el('span'), el('button', { type: 'submit' }, 'Sign up')),
    el('form', { class: 'grid', on: { submit: async (event) => {
      event.preventDefault();
      try {
        const reply = await connection.request({ type: 'hello', token: tokenInput.value });
        localStorage.setItem(TOKEN_KEY, tokenInput.value);
        welcomed(reply);
        route();
      } catch (error) { say(error.message, true); }
    } } }, el('label', { for: 'token-input' }, 'Or paste your token'), tokenInput, el('span'), el('button', { type: 'submit' }, 'Come back')),
  );
}

function createForm(onCreate) {
  const field = (label, input) => [el('label', { for: input.id }, label), input];
  const ruleset = el('select', { id: 'ruleset' }, RULESET_NAMES.map((n) => el('option', { value: n }, n)));
  const maxPlayers = el('input', { id: 'max-players', type: 'number', min: 1, max: 16, value: 2 });
  const timeLimit = el('input', { id: 'time-limit', type: 'number', min: 1, max: 86400, value: 600 });
  const winBy = el('select', { id: 'win-by' }, el('option', { value: 'time' }, 'fastest win'), el('option', { value: 'score' }, 'best score'));
  const isPublic = el('input', { id: 'public', type: 'checkbox' });
  const countdown = el('input', { id: 'countdown', type: 'number', min: 0, max: 60, placeholder: 'server default' });
  const seed = el('input', { id: 'seed', placeholder: 'none: a secret seed (rated)' });
  const bots = el('input', { id: 'bots', type: 'checkbox' });
  return el('form', { class: 'grid', 'aria-label': 'Create a match', on: { submit: (event) => {
    event.preventDefault();
    const options = { ruleset: ruleset.value, max_players: Number(maxPlayers.value), time_limit_s: Number(timeLimit.value), win_by: winBy.value, public: isPublic.checked, bots: bots.checked };
    if (countdown.value !== '') options.countdown_s = Number(countdown.value);
    if (seed.value.trim()) options.seed = seed.value.trim();
    onCreate(options);
  } } },
  field('Ruleset', ruleset), field('Seats', maxPlayers), field('Time limit (s)', timeLimit), field('Ranking', winBy),
  field('Public', isPublic), field('Countdown (s)', countdown), field('Seed (share code)', seed),
  field('Bots may sit', bots), el('span'), el('button', { type: 'submit' }, 'Create match'));
}

/** The form of ``tournament_create``: every option; the host then joins to play. */
function tournamentForm() {
  const field = (label, input) => [el('label', { for: input.id }, label), input];
  const name = el('input', { id: 't-name', maxlength: 64, placeholder: 'Tournament' });
  const ruleset = el('select', { id: 't-ruleset' }, RULESET_NAMES.map((n) => el('option', { value: n }, n)));
  const rounds = el('input', { id: 't-rounds', type: 'number', min: 1, max: 20, value: 3 });
  const maxPlayers = el('input', { id: 't-max-players', type: 'number', min: 1, max: 64, value: 16 });
  const roundTime = el('input', { id: 't-round-time', type: 'number', min: 1, max: 86400, value: 600 });
  const startAt = el('input', { id: 't-start-at', type: 'datetime-local' });
  const bots = el('input', { id: 't-bots', type: 'checkbox' });
  return el('form', { class: 'grid', 'aria-label': 'Host a tournament', on: { submit: async (event) => {
    event.preventDefault();
    const options = { ruleset: ruleset.value, rounds: Number(rounds.value), max_players: Number(maxPlayers.value), round_time_limit_s: Number(roundTime.value), bots: bots.checked };
    if (name.value.trim()) options.name = name.value.trim();
    if (startAt.value) options.start_at = new Date(startAt.value).toISOString(); // local time, sent in UTC
    try {
      const reply = await connection.request({ type: 'tournament_create', ...options });
      navigate(`/t/${reply.tournament.code}`);
    } catch (error) { say(error.message, true); }
  } } },
  field('Name', name), field('Ruleset', ruleset), field('Rounds', rounds), field('Entrants', maxPlayers),
  field('Round time limit (s)', roundTime), field('Starts by itself at', startAt), field('Bots may enter', bots),
  el('span'), el('button', { type: 'submit' }, 'Host tournament'));
}

async function createMatch(options) {
  try {
    const reply = await connection.request({ type: 'create_match', ...options });
    sessionStorage.setItem(`gaps.options.${reply.match.code}`, JSON.stringify(options));
    navigate(`/m/${reply.match.code}`);
  } catch (error) { say(error.message, true); }
}

async function lobbyPage() {
  await needPlayer();
  const list = el('tbody');
  const code = el('input', { id: 'code', placeholder: 'K7QX2M', maxlength: 6, autocomplete: 'off' });
  show(
    el('h1', {}, 'Lobby'),
    el('form', { class: 'row', on: { submit: (event) => { event.preventDefault(); navigate(`/m/${code.value.trim().toUpperCase()}`); } } },
      el('label', { for: 'code' }, 'Join by code'), code, el('button', { type: 'submit' }, 'Join')),
    el('h2', {}, 'Public matches'),
    el('table', {}, el('thead', {}, el('tr', {}, ['Code', 'Ruleset', 'Seats', 'Time', 'Ranking', ''].map((h) => el('th', {}, h)))), list),
    el('h2', {}, 'Create a match'),
    createForm(createMatch),
    el('h2', {}, 'Tournaments'),
    el('div', { id: 'tournaments' }),
    el('h3', {}, 'Host a tournament'),
    tournamentForm(),
  );
  const { matches } = await connection.request({ type: 'list_matches' });
  list.replaceChildren(...matches.map((m) => el('tr', {},
    el('td', {}, m.code), el('td', {}, m.ruleset), el('td', {}, `${m.players}/${m.max_players}`),
    el('td', {}, formatMs(m.time_limit_s * 1000)), el('td', {}, m.win_by), el('td', {}, link(`/m/${m.code}`, 'Join')))));
  if (matches.length === 0) list.append(el('tr', {}, el('td', { colspan: 6 }, 'No public match is waiting: create one.')));
  const { tournaments } = await connection.request({ type: 'tournament_list' });
  document.getElementById('tournaments')?.replaceChildren(tournaments.length === 0
    ? el('p', {}, 'No tournament is open or running: host one.')
    : el('ul', {}, tournaments.map((t) =>
      el('li', {}, link(`/t/${t.code}`, t.name), ` (${t.ruleset}, ${t.status}, ${t.entrants.filter((e) => e.removed !== true).length} entrants)`))));
}

/** The race, or a spectator's view of it: one match followed by its events. */
async function matchPage(code, role) {
  const me = await needPlayer();
  const state = { code, role, seq: 0, lastSeq: 0, players: new Map(), match: null, game: null, clockBase: null, ended: null };
  const heading = el('h1', {}, role === 'player' ? 'Race ' : 'Watching ', el('span', { id: 'match-code' }, code));
  const info = el('p', { id: 'match-info' });
  const clock = el('p', { class: 'clock', id: 'clock', 'aria-live': 'off' });
  const mine = el('p', { id: 'my-game', 'aria-live': 'polite' });
  const lobbyControls = el('div', { class: 'controls' });
  const table = el('tbody', { id: 'players' });
  const endScreen = el('section', { id: 'end', 'aria-live': 'polite' });
  // A rematch another player (or this one, elsewhere) has made: a link to join it.
  const rematchOffer = el('p', { id: 'rematch-offer', hidden: true });
  let here = true; // false once the player has left this page
  const board = new Board({ ruleset: 'classic', onAction: (text) => act(text) });
  board.node.hidden = true;
  const controls = el('div');
  show(heading, info, clock, lobbyControls, mine, board.node, controls,
    el('h2', {}, 'Players'),
    el('table', {}, el('thead', {}, el('tr', {}, ['Player', 'Status', 'Placed', 'Score', 'Redeals', 'Moves'].map((h) => el('th', {}, h)))), table),
    endScreen);

  const pendingKey = `${PENDING_KEY}.${code}`;
  let sending = false;

  function renderPlayers() {
    table.replaceChildren(...[...state.players.values()].map((p) => el('tr', {},
      el('td', {}, named(p), p.player_id === me.id ? ' (you)' : ''),
      el('td', {}, p.end_reason || (state.match?.status === 'lobby' ? (p.ready ? 'ready' : 'not ready') : p.status)),
      el('td', {}, `${p.placed}/48`), el('td', {}, p.score), el('td', {}, p.redeals_used), el('td', {}, p.moves_made))));
  }

  function renderGame() {
    if (!state.game) return;
    board.ruleset = state.game.ruleset;
    board.node.hidden = false;
    board.show(state.game);
    mine.textContent = summaryLine(state.game);
    if (!controls.firstChild) controls.append(gameControls(state.game, act));
  }

  function setGame(view) {
    const game = engine.Game.fromView(state.match.ruleset, view.grid, { redealsUsed: view.redeals_used, stopped: view.status === 'stopped' });
    game.movesMade = view.moves_made;
    game.serverStatus = view.status;
    state.game = game;
    renderGame();
  }

  function renderInfo() {
    const m = state.match;
    info.textContent = `${m.ruleset} · ${m.win_by === 'time' ? 'fastest win' : 'best score'} · ${m.max_players} seats · ${formatMs(m.time_limit_s * 1000)} · ${m.status}${m.rated ? '' : ' · unrated'}${m.bots === true ? ' · bots may sit' : ''}`;
    lobbyControls.replaceChildren();
    if (m.status === 'lobby' && role === 'player') {
      const url = `${location.origin}/m/${code}`;
      lobbyControls.append(
        el('button', { type: 'button', on: { click: () => connection.request({ type: 'ready', code, ready: true }).catch((e) => say(e.message, true)) } }, 'Ready'),
        m.host_id === me.id ? el('button', { type: 'button', on: { click: () => connection.request({ type: 'start_match', code }).catch((e) => say(e.message, true)) } }, 'Start now') : null,
        el('span', {}, 'Invite: ', link(url, url)));
    }
  }

  function tick() {
    if (state.clockBase === null || !state.match || state.ended) return;
    const tMs = Math.min(performance.now() - state.clockBase, state.match.time_limit_s * 1000);
    clock.textContent = `${formatMs(tMs)} / ${formatMs(state.match.time_limit_s * 1000)}`;
  }
  const timer = setInterval(tick, 250);

  function syncClock(tMs) {
    if (typeof tMs === 'number' && tMs > 0) state.clockBase = performance.now() - tMs;
  }

  async function showEnd(event) {
    state.ended = event;
    controls.hidden = true; // nothing left to play: the board stays, as it ended
    say('The match is over.');
    const rows = event.ranking.map((p) => el('tr', {}, el('td', {}, p.rank), el('td', {}, named(p), reviewMark(p) ? [' · ', reviewMark(p)] : null), el('td', {}, p.score),
      el('td', {}, p.won ? 'won' : p.end_reason), el('td', {}, p.finish_ms === null ? '' : formatMs(p.finish_ms))));
    const verdict = el('span', { id: 'commitment-check' }, event.seed ? 'checking…' : 'the seed stays secret until the day is over');
    const rematch = (sameSeed, text) => el('button', { type: 'button', 'data-rematch': sameSeed ? 'same' : 'new', on: { click: () => askRematch(sameSeed, event.seed) } }, text);
    endScreen.replaceChildren(el('h2', {}, 'Result'),
      el('table', { id: 'ranking' }, el('thead', {}, el('tr', {}, ['Rank', 'Player', 'Score', 'End', 'Time'].map((h) => el('th', {}, h)))), el('tbody', {}, rows)),
      ...[reviewNotes(event.ranking, 'review-notes')].filter(Boolean),
      el('p', {}, 'Seed: ', el('code', { id: 'seed' }, event.seed || 'secret'), ' · commitment ', el('code', {}, event.commitment), ' · ', verdict),
      el('p', { class: 'controls' }, link(`/replay/${code}`, 'Replay'),
        role === 'player' ? rematch(false, 'Rematch') : null,
        role === 'player' && event.seed ? rematch(true, 'Rematch, same deal (unrated)') : null),
      rematchOffer);
    endScreen.scrollIntoView({ block: 'start' }); // the result, not the board, on a phone
    if (event.seed) {
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', engine.parseShareCode(event.seed)));
      verdict.textContent = engine.toHex(digest) === event.commitment ? '✓ the seed matches the commitment' : '✗ the seed does NOT match the commitment';
    }
    clock.textContent = 'Finished';
  }

  /** Ask the server for the rematch (``rematch``: the players who ask meet in one match);
   * a server without that request gets a new match with the same options instead. */
  async function askRematch(sameSeed, seed) {
    try {
      const reply = await retrying(() => connection.request({ type: 'rematch', code, same_seed: sameSeed }), wanted);
      navigate(`/m/${reply.match.code}`);
    } catch (error) {
      if (error.code !== 'unknown_type') { say(error.message, true); return; }
      const saved = sessionStorage.getItem(`gaps.options.${code}`);
      const m = state.match;
      const options = saved ? JSON.parse(saved) : { ruleset: m.ruleset, max_players: m.max_players, time_limit_s: m.time_limit_s, win_by: m.win_by, public: m.public, countdown_s: m.countdown_s, bots: m.bots === true };
      delete options.seed; // a new secret seed, unless the same deal is asked for
      if (sameSeed) options.seed = seed;
      createMatch(options);
    }
  }

  function offerRematch(event) {
    const next = String(event.code).toUpperCase();
    const by = typeof event.by === 'object' && event.by !== null ? event.by : { name: event.by };
    const who = by.player_id === me.id || by.name === me.name ? 'You' : by.name;
    const deal = event.same_seed ? 'a rematch on the same deal' : 'a rematch';
    rematchOffer.replaceChildren(`${who} offered ${deal}: `, link(`/m/${encodeURIComponent(next)}`, `join match ${next}`));
    rematchOffer.hidden = false;
    say(`Rematch offered: match ${next}.`);
  }

  function applyEvent(event) {
    // A rematch offer may come outside the numbered events: show it either way.
    if (event.event === 'rematch_offered' && typeof event.seq !== 'number') { offerRematch(event); return; }
    if (event.seq <= state.seq) return;
    if (event.seq !== state.seq + 1) { resync(); return; }
    state.seq = event.seq;
    syncClock(event.t_ms);
    switch (event.event) {
      case 'player_joined': state.players.set(event.player.player_id, event.player); break;
      case 'player_left': state.players.delete(event.player_id); break;
      case 'host_changed': state.match.host_id = event.host_id; renderInfo(); break;
      case 'ready': { const p = state.players.get(event.player_id); if (p) p.ready = event.ready; break; }
      case 'countdown': state.match.status = 'countdown'; renderInfo(); say(`Starting in ${Math.round(event.countdown_ms / 1000)} s`); break;
      case 'started':
        state.match.status = 'running';
        state.clockBase = performance.now();
        for (const p of event.players) state.players.set(p.player_id, p);
        if (role === 'player') setGame({ grid: event.grid, redeals_used: 0, moves_made: 0, status: 'playing' });
        renderInfo();
        say('Go!');
        board.cells[0].focus();
        break;
      case 'progress': case 'player_finished':
        // Keep what the seat said that progress does not repeat (``bot``, ``ready``).
        state.players.set(event.player_id, { ...state.players.get(event.player_id), ...event }); break;
      case 'match_ended': state.match.status = 'finished'; renderInfo(); showEnd(event); break;
      case 'rematch_offered': offerRematch(event); break;
      default: break;
    }
    renderPlayers();
  }

  function fromSnapshot(reply) {
    state.match = reply.match;
    state.seq = reply.seq;
    state.players = new Map(reply.players.map((p) => [p.player_id, p]));
    syncClock(reply.match.t_ms);
    if (reply.you?.game) {
      state.lastSeq = reply.you.last_seq ?? 0;
      setGame(reply.you.game);
    }
    renderInfo();
    renderPlayers();
  }

  const wanted = () => here;

  async function resync() {
    const reply = await retrying(() => connection.request({ type: 'resync', code, since: state.seq }), wanted);
    if (reply.type === 'events') reply.events.forEach(applyEvent);
    else fromSnapshot(reply);
  }

  async function join() {
    const reply = await retrying(() => connection.request({ type: 'join_match', code, role }), wanted);
    fromSnapshot(reply);
    await resync();
    // An action sent before a reload or a drop: send it again with its seq; the server
    // applies it at most once (a duplicate gets its first reply).
    const pending = JSON.parse(sessionStorage.getItem(pendingKey) || 'null');
    if (pending && pending.seq > state.lastSeq) await send(pending.action, pending.seq);
    else sessionStorage.removeItem(pendingKey);
    if (state.match.status === 'finished' && !state.ended) {
      const replay = await getJson(`/matches/${code}/replay`).catch(() => null);
      if (replay) showEnd({ ranking: replay.players, seed: replay.match.seed, commitment: replay.match.commitment });
    }
  }

  async function send(action, seq) {
    sessionStorage.setItem(pendingKey, JSON.stringify({ seq, action }));
    sending = true;
    try {
      // Refused "not now": the same action again with the same seq, applied at most once.
      const reply = await retrying(() => connection.request({ type: 'action', code, seq, action }), wanted);
      sessionStorage.removeItem(pendingKey);
      state.lastSeq = Math.max(state.lastSeq, reply.seq);
      syncClock(reply.t_ms);
      if (!reply.duplicate) applyReply(reply);
      else await join();
    } catch (error) {
      // Cut off, or the server is stopping: the action stays pending, and the rejoin
      // after the reconnect sends it again if the server has not applied it.
      if (error.code !== 'closed' && error.code !== 'shutting_down') { sessionStorage.removeItem(pendingKey); say(error.message, true); }
    } finally { sending = false; }
  }

  function applyReply(reply) {
    const game = state.game;
    if (reply.kind === 'move' || reply.kind === 'undo') {
      const index = (slot) => { const [, r, c] = /^r(\d+)c(\d+)$/.exec(slot); return (Number(r) - 1) * 13 + Number(c) - 1; };
      game.grid[index(reply.to)] = engine.parseCard(reply.card);
      game.grid[index(reply.from)] = engine.GAP;
    } else if (reply.kind === 'redeal') {
      game.grid = engine.parseLayout(reply.grid);
    } else if (reply.kind === 'stop') {
      game.stopped = true;
    }
    game.redealsUsed = reply.redeals_used;
    game.movesMade = reply.moves_made;
    renderGame();
    mine.textContent = `${summaryLine(game)}`;
  }

  function act(action) {
    if (action === 'marks') { toggleMarks(board); return; }
    if (role !== 'player' || !state.game || sending) return;
    if (sessionStorage.getItem(pendingKey)) { say('Waiting for the server to confirm your last action…'); return; }
    if (!confirmed(action, state.game)) return;
    send(action, state.lastSeq + 1);
  }

  const listener = (message) => { if (message.type === 'event' && message.match === code) applyEvent(message); };
  const rejoin = () => join().catch((error) => say(error.message, true));
  connection.listeners.add(listener);
  connection.onReconnect.add(rejoin);
  const stopKeys = role === 'player' ? shortcuts(act) : () => {};
  leavePage = () => { here = false; clearInterval(timer); connection.listeners.delete(listener); connection.onReconnect.delete(rejoin); stopKeys(); };
  await join();
}

async function replayPage(code) {
  const documentBody = await getJson(`/matches/${encodeURIComponent(code)}/replay`);
  const { match, players } = documentBody;
  const seed = engine.parseShareCode(match.seed);
  const picker = el('select', { id: 'replay-player' }, players.map((p, i) => el('option', { value: i },
    `${p.rank}. ${p.name}${p.bot === true ? ' [bot]' : ''} (${p.score})${Object.hasOwn(REVIEWS, p.review) ? ` · ${REVIEWS[p.review][0]}` : ''}`)));
  // Why the chosen player's result does not count, when it does not.
  const review = el('p', { id: 'replay-review', class: 'review' });
  const board = new Board({ ruleset: match.ruleset, readOnly: true, onAction: () => {} });
  const position = el('p', { id: 'replay-step', 'aria-live': 'polite' });
  let step = 0;
  const render = () => {
    const player = players[Number(picker.value)];
    review.textContent = Object.hasOwn(REVIEWS, player.review) ? REVIEWS[player.review][1](player.name) : '';
    review.hidden = !review.textContent;
    const game = new engine.Game(seed, match.ruleset);
    player.actions.slice(0, step).forEach((a) => game.push(a.action));
    board.show(game);
    const last = player.actions[step - 1];
    position.textContent = `Action ${step}/${player.actions.length}${last ? `: ${last.action} at ${formatMs(last.t_ms)}` : ''} · ${summaryLine(game)}`;
  };
  const go = (delta) => () => { const n = players[Number(picker.value)].actions.length; step = Math.max(0, Math.min(n, step + delta)); render(); };
  picker.addEventListener('change', () => { step = 0; render(); });
  show(el('h1', {}, `Replay of ${match.code}`), el('p', {}, `${match.ruleset} · seed `, el('code', {}, match.seed)),
    el('div', { class: 'row' }, el('label', { for: 'replay-player' }, 'Player'), picker,
      el('button', { type: 'button', on: { click: go(-1e9) } }, '◀◀ Start'), el('button', { type: 'button', on: { click: go(-1) } }, '◀ Back'),
      el('button', { type: 'button', on: { click: go(1) } }, 'Next ▶'), el('button', { type: 'button', on: { click: go(1e9) } }, 'End ▶▶')),
    review, position, board.node);
  render();
}

async function tournamentPage(code) {
  const me = await needPlayer();
  const title = el('h1', { id: 'tournament-name' });
  const round = el('p', { id: 'round' });
  const actions = el('p', { class: 'row', id: 'tournament-actions' });
  const rows = el('tbody', { id: 'standings' });
  const entrants = el('ul', { id: 'entrants' });
  const removing = el('div', { id: 'remove-entrant' }); // the host's form asking for a reason
  // What happened that the standings do not say: who the host removed, and why.
  const log = el('ul', { id: 'tournament-log', 'aria-live': 'polite' });
  show(el('div', { class: 'projector' }, title, round, actions, log,
    el('table', {}, el('thead', {}, el('tr', {}, ['Rank', 'Player', 'Score', 'Time', 'Rounds'].map((h) => el('th', {}, h)))), rows),
    el('h2', { id: 'entrants-heading' }, 'Entrants'), entrants, removing));
  entrants.setAttribute('aria-labelledby', 'entrants-heading');
  let seq = 0;
  let view = null;
  const logged = new Set(); // the names whose removal the log shows already
  const early = []; // events that came before the first view: applied once it is here
  /** Entrants the host removed come after everyone still in, as the server sends them. */
  const stillInFirst = (list) => [...list.filter((e) => e.removed !== true), ...list.filter((e) => e.removed === true)];
  const removedNote = (entry) => el('span', { class: 'removed-note' }, `removed: ${entry.removed_reason || 'by the host'}`);
  const renderStandings = (standings) => rows.replaceChildren(...stillInFirst(standings).map((s) => el('tr', { class: s.removed === true ? 'removed' : null },
    el('td', {}, s.rank), el('td', {}, named(s), s.removed === true ? [' · ', removedNote(s)] : null), el('td', {}, s.total_score ?? s.score ?? 0),
    el('td', {}, formatMs(s.total_time_ms ?? 0)), el('td', {}, s.rounds_played ?? ''))));
  const refreshStandings = () => retrying(() => connection.request({ type: 'tournament_standings', code }))
    .then((reply) => renderStandings(reply.standings)).catch((error) => say(error.message, true));
  function logRemoval(name, reason) {
    if (logged.has(name)) return; // told by the reply and by the event: one line
    logged.add(name);
    log.append(el('li', {}, `${name} was removed by the host: ${reason}`));
  }
  const adopt = (reply) => {
    if (!reply.tournament) return;
    view = reply.tournament;
    if (typeof reply.seq === 'number') seq = Math.max(seq, reply.seq);
    renderView();
  };
  const ask = (request) => retrying(() => connection.request(request)).then(adopt).catch((error) => say(error.message, true));

  /** The host's form for removing ``entrant``: the reason is asked for, shown to all. */
  function askReason(entrant, button) {
    const reason = el('input', { id: 'remove-reason', maxlength: 200, required: true, autocomplete: 'off' });
    const cancel = () => { removing.replaceChildren(); button.focus(); };
    reason.addEventListener('keydown', (event) => { if (event.key === 'Escape') cancel(); });
    const form = el('form', { class: 'row', 'aria-label': `Remove ${entrant.name}`, on: { submit: async (event) => {
      event.preventDefault();
      const text = reason.value.trim();
      if (!text) { say('Give a reason: everyone in the tournament sees it.', true); return; }
      try {
        const reply = await retrying(() => connection.request({ type: 'tournament_remove', code, player: entrant.name, reason: text }));
        removing.replaceChildren();
        adopt(reply);
        logRemoval(entrant.name, text);
        say(`${entrant.name} was removed.`);
        await refreshStandings();
      } catch (error) { say(`${entrant.name} was not removed: ${error.message}`, true); }
    } } },
    el('label', { for: 'remove-reason' }, `Why remove ${entrant.name}? (everyone sees it)`), reason,
    el('button', { type: 'submit' }, 'Confirm removal'), el('button', { type: 'button', on: { click: cancel } }, 'Cancel'));
    removing.replaceChildren(form);
    reason.focus();
  }

  const renderEntrants = () => {
    // The host removes entrants before the start or between rounds, never while one is played.
    const canRemove = view.host_id === me.id && (view.status === 'open' || (view.status === 'running' && !view.round_match));
    if (!canRemove) removing.replaceChildren();
    entrants.replaceChildren(...stillInFirst(view.entrants).map((e) => {
      const item = el('li', { class: e.removed === true ? 'removed' : null }, named(e), e.removed === true ? [' · ', removedNote(e)] : null);
      if (canRemove && e.removed !== true) {
        const button = el('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${e.name}` }, 'Remove');
        button.addEventListener('click', () => askReason(e, button));
        item.append(' ', button);
      }
      return item;
    }));
  };
  const renderView = () => {
    title.textContent = view.name;
    const still = view.entrants.filter((e) => e.removed !== true);
    round.textContent = view.status === 'finished' ? 'Final standings'
      : view.status === 'open' ? `Waiting to start · ${still.length} entrants` : `Round ${view.current_round} of ${view.rounds}`;
    // Join, start, and the round to play or watch: a projector needs none of them.
    const entered = still.some((e) => e.player_id === me.id);
    const removed = view.entrants.some((e) => e.player_id === me.id && e.removed === true);
    actions.replaceChildren();
    if (view.status === 'open' && !entered && !removed) {
      actions.append(el('button', { type: 'button', on: { click: () => ask({ type: 'tournament_join', code }) } }, 'Join this tournament'));
    }
    if (view.status === 'open' && view.host_id === me.id) {
      actions.append(el('button', { type: 'button', on: { click: () => ask({ type: 'tournament_start', code }) } }, 'Start now'));
    }
    if (view.status === 'running' && view.round_match) {
      if (entered) actions.append(link(`/m/${view.round_match}`, `Play round ${view.current_round}`));
      actions.append(link(`/watch/${view.round_match}`, `Watch round ${view.current_round}`));
    }
    renderEntrants();
  };
  async function resync() {
    const reply = await retrying(() => connection.request({ type: 'tournament_resync', code, since: seq }));
    if (reply.type === 'tournament_events' && view === null) {
      // The first load got the events, not a view: the standings now include them all.
      const standing = await retrying(() => connection.request({ type: 'tournament_standings', code }));
      view = standing.tournament;
      seq = reply.events.length ? reply.events[reply.events.length - 1].seq : 0;
      renderView();
      renderStandings(standing.standings);
    } else if (reply.type === 'tournament_events') reply.events.forEach(apply);
    else {
      view = reply.tournament; seq = reply.seq; renderView(); renderStandings(reply.standings);
    }
    if (view !== null) early.splice(0).forEach(apply);
  }
  function apply(event) {
    if (view === null) { early.push(event); return; }
    if (event.seq <= seq) return;
    if (event.seq !== seq + 1) { resync(); return; }
    seq = event.seq;
    // The first view may have been read after the event (it came while loading): once.
    if (event.event === 'entrant_joined' && !view.entrants.some((e) => e.player_id === event.player_id)) {
      view.entrants.push({ player_id: event.player_id, name: event.name, bot: event.bot });
    }
    if (event.event === 'entrant_removed') {
      const entrant = view.entrants.find((e) => e.player_id === event.player_id);
      if (entrant) Object.assign(entrant, { removed: true, removed_reason: event.reason });
      logRemoval(event.name, event.reason);
      refreshStandings();
    }
    if (event.event === 'tournament_started') view.status = 'running';
    if (event.event === 'round_starting') { view.current_round = event.round; view.round_match = event.match; }
    if (event.event === 'round_ended') { view.round_match = null; renderStandings(event.standings); }
    if (event.event === 'tournament_ended') { view.status = 'finished'; renderStandings(event.standings); }
    renderView();
  }
  const listener = (message) => { if (message.type === 'tournament_event' && message.tournament === code) apply(message); };
  const again = () => resync().catch((error) => say(error.message, true));
  connection.listeners.add(listener);
  connection.onReconnect.add(again);
  leavePage = () => { connection.listeners.delete(listener); connection.onReconnect.delete(again); };
  await resync();
}

async function boardsPage() {
  await connection.open(); // "around me" needs to know who is asking
  const params = new URLSearchParams(location.search);
  const ruleset = params.get('ruleset') || 'classic';
  const by = params.get('by') || 'score';
  const period = params.get('period') || 'all';
  const kind = params.get('kind') === 'bots' ? 'bots' : 'people'; // whose boards: people's or declared bots'
  const query = new URLSearchParams({ by, period, limit: '20', kind });
  if (params.get('cursor')) query.set('cursor', params.get('cursor'));
  if (params.get('around') && connection.player) query.set('player', connection.player.name);
  const select = (id, value, options) => el('select', { id, name: id }, options.map((o) => el('option', { value: o, selected: o === value }, o)));
  const body = await getJson(`/leaderboards/${ruleset}?${query}`);
  const figures = body.entries.length ? Object.keys(body.entries[0]).filter((k) => !['rank', 'player_id', 'name', 'bot'].includes(k)) : [];
  const next = new URLSearchParams({ ruleset, by, period, kind, cursor: body.next_cursor || '' });
  // The switch between people's boards and bots': links, so the URL says which.
  const kindLink = (value, text) => el('a', { href: `/boards?${new URLSearchParams({ ruleset, by, period, kind: value })}`,
    'data-kind': value, 'aria-current': value === kind ? 'page' : null, class: value === kind ? 'current' : null }, text);
  show(el('h1', {}, kind === 'bots' ? 'Leaderboards: bots' : 'Leaderboards'),
    el('nav', { class: 'row switch', id: 'board-kind', 'aria-label': 'Whose boards' },
      kindLink('people', 'People'), kindLink('bots', 'Bots')),
    el('form', { class: 'row', action: '/boards', method: 'get' }, el('input', { type: 'hidden', name: 'kind', value: kind }),
      select('ruleset', ruleset, RULESET_NAMES), select('by', by, ['score', 'time', 'wins', 'rating']),
      select('period', period, ['all', 'month', 'day']), el('button', { type: 'submit' }, 'Show'),
      connection.player ? el('button', { type: 'submit', name: 'around', value: '1' }, 'Around me') : null),
    el('table', { id: 'leaderboard' }, el('thead', {}, el('tr', {}, ['Rank', 'Player', ...figures].map((h) => el('th', {}, h)))),
      el('tbody', {}, body.entries.map((e) => el('tr', { class: e.player_id === connection.player?.id ? 'me' : null }, el('td', {}, e.rank),
        el('td', {}, named(e, link(`/player/${encodeURIComponent(e.name)}`, e.name)), e.player_id === connection.player?.id ? ' (you)' : ''),
        figures.map((f) => el('td', {}, e[f] ?? '')))))),
    body.next_cursor ? link(`/boards?${next}`, 'Next page') : null);
}

async function playerPage(name) {
  const body = await getJson(`/ratings/${encodeURIComponent(name)}`);
  show(el('h1', {}, named(body.player)),
    el('h2', {}, 'Ratings'),
    el('table', {}, el('tbody', {}, body.ratings.map((r) => el('tr', {}, el('td', {}, r.ruleset),
      el('td', {}, `ordinal ${Number(r.ordinal).toFixed(2)}`), el('td', {}, `${r.games} games`), el('td', {}, r.provisional ? 'provisional' : ''))))),
    el('h2', {}, 'History'),
    el('table', {}, el('tbody', {}, body.history.map((h) => el('tr', {}, el('td', {}, h.at), el('td', {}, h.ruleset),
      el('td', {}, `rank ${h.rank}`), el('td', {}, Number(h.ordinal).toFixed(2)))))));
}

async function todayPage() {
  await needPlayer();
  const ruleset = new URLSearchParams(location.search).get('ruleset') || 'classic';
  const board = await getJson(`/daily/${ruleset}`).catch(() => ({ entries: [] }));
  show(el('h1', {}, 'The daily challenge'),
    el('p', {}, 'One deal a day per ruleset, the same for everyone, one attempt.'),
    el('div', { class: 'row' }, RULESET_NAMES.map((r) => el('button', { type: 'button', on: { click: async () => {
      try {
        const reply = await connection.request({ type: 'daily', ruleset: r });
        navigate(`/m/${reply.match.code}`);
      } catch (error) { say(error.message, true); }
    } } }, `Play ${r}`))),
    el('h2', {}, `Today's ${ruleset} board`),
    el('table', {}, el('tbody', {}, board.entries.map((e) => el('tr', {}, el('td', {}, e.rank), el('td', {}, e.name), el('td', {}, e.score), el('td', {}, formatMs(e.finish_ms)))))));
}

const BOT_LABELS = {
  random: 'level 1: random', greedy: 'level 2: greedy', search: 'level 3: search', 'search-win': 'level 3: search, playing to win',
};
// Milliseconds between a bot's actions; 0 plays the game out at once.
const BOT_PACES = [[1500, 'slow'], [500, 'normal'], [100, 'fast'], [0, 'at once']];

/** Say the hint of ``game`` and show it on ``board``: a move selects its card and marks
 * its slot (focused, so Enter plays it); a redeal or a stop marks its button. */
function showHint(game, board, controls) {
  const text = bots.hint(game);
  for (const button of controls.querySelectorAll('button')) button.classList.toggle('hint', button.dataset.action === text);
  if (text === null) {
    say('No hint: the game is over.');
  } else if (text === 'redeal') {
    say('Hint: redeal (R). Nothing better is in reach, and a redeal is expected to score more than stopping.');
  } else if (text === 'stop') {
    say(`Hint: stop (S). Nothing better is in reach, and ${game.redealsLeft > 0 ? 'a redeal is not expected to pay' : 'no redeal is left'}.`);
  } else {
    const move = game.legalMoves().find((m) => game.moveText(m.card, m.to) === text);
    board.selected = move.card;
    board.hint = move.to;
    board.show(game);
    board.cells[move.to].focus();
    say(`Hint: ${engine.cardName(move.card)} to row ${Math.floor(move.to / 13) + 1}, column ${(move.to % 13) + 1} (Enter plays it).`);
  }
}

/** A bot playing the practice deal on a board of its own, at a pace, for the player to
 * race or to watch. Seeded with 0: on a deal it plays what ``bot_named(name, seed=0)``
 * of gaps.bots plays. */
class BotRace {
  constructor(seed, ruleset, onChange) {
    this.seed = seed;
    this.ruleset = ruleset;
    this.onChange = onChange;
    this.timer = null;
    this.board = new Board({ ruleset, readOnly: true, onAction: () => {}, id: 'bot-board', label: "The bot's board" });
    this.line = el('p', { id: 'bot-game' });
    this.pace = el('select', { id: 'bot-pace' }, BOT_PACES.map(([ms, label]) => el('option', { value: ms, selected: ms === 500 }, label)));
    this.start = el('button', { type: 'button', id: 'bot-start', on: { click: () => (this.timer === null ? this.run() : this.pause()) } }, 'Start');
    this.step = el('button', { type: 'button', id: 'bot-step', on: { click: () => { this.pause(); this.play(); } } }, 'One action');
    this.node = el('section', { id: 'bot', 'aria-label': 'The bot' },
      el('div', { class: 'row' }, el('label', { for: 'bot-pace' }, 'Pace'), this.pace, this.start, this.step),
      this.line, this.board.node);
    this.node.hidden = true;
  }

  /** A fresh game for the bot ``name`` ('' for none). */
  reset(name) {
    this.pause();
    this.name = name;
    this.node.hidden = !name;
    if (!name) return;
    this.game = new engine.Game(this.seed, this.ruleset);
    this.bot = bots.botNamed(name, 0);
    this.actions = 0;
    this.last = '';
    this.render();
  }

  render() {
    const game = this.game;
    this.board.show(game);
    this.line.textContent = `bot-${this.name} · ${summaryLine(game)}${this.last ? ` · last: ${this.last}` : ''}`;
    this.start.textContent = this.timer === null ? 'Start' : 'Pause';
    this.start.disabled = this.step.disabled = game.isOver;
    this.onChange();
  }

  play() {
    if (this.game.isOver) return;
    this.last = this.actions < bots.MAX_ACTIONS ? this.bot.choose(this.game) : 'stop';
    this.game.push(this.last);
    this.actions += 1;
    this.render();
    if (this.game.isOver) {
      this.pause();
      this.render();
      say(`bot-${this.name} finished: ${this.game.status}, score ${this.game.score}.`);
    }
  }

  run() {
    const pace = Number(this.pace.value);
    this.timer = setTimeout(() => {
      // At once: play for a frame's worth of time, then let the page breathe.
      const until = performance.now() + 15;
      do this.play(); while (pace === 0 && this.timer !== null && performance.now() < until);
      if (this.timer !== null) this.run();
    }, pace);
    this.render();
  }

  pause() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.game) this.start.textContent = 'Start';
  }
}

function practicePage() {
  const params = new URLSearchParams(location.search);
  const ruleset = RULESET_NAMES.includes(params.get('ruleset')) ? params.get('ruleset') : 'classic';
  let seed;
  try { seed = params.get('seed') ? engine.parseShareCode(params.get('seed')) : engine.randomSeed(); } catch { seed = engine.randomSeed(); }
  const game = new engine.Game(seed, ruleset);
  const line = el('p', { id: 'my-game', 'aria-live': 'polite' });
  const versus = el('p', { id: 'versus' });
  const board = new Board({ ruleset, onAction: (text) => act(text), id: 'practice-board' });
  const controls = gameControls(game, act, { hint: true });
  const race = new BotRace(seed, ruleset, () => compare());
  const render = () => {
    board.show(game);
    line.textContent = summaryLine(game);
    compare();
  };
  function compare() {
    if (!race.name) { versus.textContent = ''; return; }
    const theirs = race.game;
    const done = (g) => (g.isOver ? 'final' : 'so far');
    versus.textContent = `You: ${game.score} (${done(game)}) · bot-${race.name}: ${theirs.score} (${done(theirs)})`;
    if (game.isOver && theirs.isOver) {
      versus.textContent += game.score === theirs.score ? ' · a tie' : game.score > theirs.score ? ' · you win' : ` · bot-${race.name} wins`;
    }
  }
  function act(action) {
    if (action === 'hint') { showHint(game, board, controls); return; }
    if (action === 'marks') { toggleMarks(board); return; }
    if (game.isOver || !confirmed(action, game)) return;
    board.hint = null;
    for (const button of controls.querySelectorAll('button')) button.classList.remove('hint');
    try { game.push(action); } catch (error) { say(error.message, true); }
    render();
  }
  const opponent = el('select', { id: 'bot-name' }, el('option', { value: '' }, 'none'),
    bots.BOT_NAMES.map((name) => el('option', { value: name, selected: name === params.get('bot') }, BOT_LABELS[name])));
  opponent.addEventListener('change', () => {
    // The URL names the bot, so the race can be shared; the player's game goes on.
    const next = new URLSearchParams({ ruleset, seed: engine.shareCode(seed) });
    if (opponent.value) next.set('bot', opponent.value);
    history.replaceState(null, '', `/practice?${next}`);
    race.reset(opponent.value);
    compare();
  });
  const share = `/practice?${new URLSearchParams({ ruleset, seed: engine.shareCode(seed) })}`;
  show(el('h1', {}, 'Practice (offline)'),
    el('p', {}, `${ruleset} · deal `, link(share, engine.shareCode(seed)), ' · ',
      RULESET_NAMES.flatMap((r) => [link(`/practice?ruleset=${r}`, r), ' '])),
    line, board.node, controls,
    el('h2', {}, 'Race or watch a bot'),
    el('p', {}, 'A bot plays this deal on its own board, in your browser: race it, or just watch.'),
    el('div', { class: 'row' }, el('label', { for: 'bot-name' }, 'Bot'), opponent),
    versus, race.node);
  const stopKeys = shortcuts(act, { r: 'redeal', u: 'undo', s: 'stop', m: 'marks', h: 'hint' });
  leavePage = () => { stopKeys(); race.pause(); };
  race.reset(opponent.value);
  render();
}

// -- the router ---------------------------------------------------------------------------

function navigate(path, replace = false) {
  if (replace) history.replaceState(null, '', path); else history.pushState(null, '', path);
  route();
}

async function route() {
  leavePage();
  leavePage = () => {};
  say('');
  const parts = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const pages = {
    '': () => accountPage(),
    lobby: () => lobbyPage(),
    m: (code) => matchPage(code.toUpperCase(), 'player'),
    watch: (code) => matchPage(code.toUpperCase(), 'spectator'),
    replay: (code) => replayPage(code.toUpperCase()),
    t: (code) => tournamentPage(code.toUpperCase()),
    boards: () => boardsPage(),
    player: (name) => playerPage(name),
    today: () => todayPage(),
    practice: () => practicePage(),
  };
  const page = pages[parts[0] ?? ''];
  try {
    if (!page) throw new Error('No page here.');
    await page(...parts.slice(1));
    main.focus();
  } catch (error) {
    say(error.message, true);
    if (error.code === 'closed') {
      // The page could not load for want of a connection: load it again once back.
      leavePage();
      const again = () => { connection.onReconnect.delete(again); route(); };
      connection.onReconnect.add(again);
      leavePage = () => connection.onReconnect.delete(again);
    }
  }
}

document.addEventListener('click', (event) => {
  const anchor = event.target.closest('a');
  if (!anchor || anchor.origin !== location.origin || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
});
window.addEventListener('popstate', route);
const fourColour = document.getElementById('four-colour');
fourColour.checked = localStorage.getItem('gaps.fourColour') === '1';
document.body.classList.toggle('four-colour', fourColour.checked);
fourColour.addEventListener('change', () => {
  localStorage.setItem('gaps.fourColour', fourColour.checked ? '1' : '0');
  document.body.classList.toggle('four-colour', fourColour.checked);
});
route();
