// `/practice`: a deal played offline in the browser, with hints, and a bot racing the
// same deal on a board of its own (docs/web.md, "Hints and bots in practice").
import * as engine from './engine.js';
import * as bots from './bots.js';
import { el, link, placeStatus, say, show } from './dom.js';
import { Board, gameControls, confirmed, shortcuts, summaryLine, toggleMarks } from './board.js';
import { onLeave } from './nav.js';
import { RULESET_NAMES } from './lobby.js';

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

export function practicePage() {
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
  // The status line over the board: hints and refusals are said where the player looks.
  const play = el('div', { class: 'play' }, board.node, controls);
  placeStatus(play);
  const share = `/practice?${new URLSearchParams({ ruleset, seed: engine.shareCode(seed) })}`;
  show(el('h1', {}, 'Practice (offline)'),
    el('p', {}, `${ruleset} · deal `, link(share, engine.shareCode(seed)), ' · ',
      RULESET_NAMES.flatMap((r) => [link(`/practice?ruleset=${r}`, r), ' '])),
    line, play,
    el('h2', {}, 'Race or watch a bot'),
    el('p', {}, 'A bot plays this deal on its own board, in your browser: race it, or just watch.'),
    el('div', { class: 'row' }, el('label', { for: 'bot-name' }, 'Bot'), opponent),
    versus, race.node);
  const stopKeys = shortcuts(act, { r: 'redeal', u: 'undo', s: 'stop', m: 'marks', h: 'hint' });
  onLeave(() => { stopKeys(); race.pause(); });
  race.reset(opponent.value);
  render();
}
