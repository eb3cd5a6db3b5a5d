// `/lobby`: quick match, join by code, the public matches, create a match, the
// tournaments (open and running, or ended: a filter), host one.
import * as engine from './engine.js';
import { el, formatMs, link, plural, put, say, scrolling, show, table } from './dom.js';
import { connection, needPlayer, retrying } from './net.js';
import { navigate, onLeave } from './nav.js';
import { textRefusal, typed } from './text.js';

export const RULESET_NAMES = Object.keys(engine.RULESETS);

const field = (label, input) => [el('label', { for: input.id }, label), input];

/** The code in what a player pasted or typed: a code in any case, or a link to a match
 * ("k7qx2m", "https://host/m/K7QX2M"); null if none is there. */
export function codeIn(text) {
  const last = text.split(/[/?#]/).filter(Boolean).pop() ?? '';
  const code = last.toUpperCase();
  return /^[A-Z0-9]{6}$/.test(code) ? code : null;
}

function createForm(onCreate) {
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
    try {
      if (seed.value !== '') options.seed = typed('The seed', seed.value);
    } catch (error) { say(error.message, true); return; }
    onCreate(options);
  } } },
  field('Ruleset', ruleset), field('Seats', maxPlayers), field('Time limit (s)', timeLimit), field('Ranking', winBy),
  field('Public', isPublic), field('Countdown (s)', countdown), field('Seed (share code)', seed),
  field('Bots may sit', bots), el('span'), el('button', { type: 'submit' }, 'Create match'));
}

/** The form of ``tournament_create``: every option; the host then joins to play. */
function tournamentForm() {
  const name = el('input', { id: 't-name', maxlength: 64, placeholder: 'Tournament' });
  const ruleset = el('select', { id: 't-ruleset' }, RULESET_NAMES.map((n) => el('option', { value: n }, n)));
  const rounds = el('input', { id: 't-rounds', type: 'number', min: 1, max: 20, value: 3 });
  const maxPlayers = el('input', { id: 't-max-players', type: 'number', min: 1, max: 64, value: 16 });
  const roundTime = el('input', { id: 't-round-time', type: 'number', min: 1, max: 86400, value: 600 });
  const startAt = el('input', { id: 't-start-at', type: 'datetime-local' });
  const bots = el('input', { id: 't-bots', type: 'checkbox' });
  const winnable = el('input', { id: 't-winnable', type: 'checkbox' });
  return el('form', { class: 'grid', 'aria-label': 'Host a tournament', on: { submit: async (event) => {
    event.preventDefault();
    const options = { ruleset: ruleset.value, rounds: Number(rounds.value), max_players: Number(maxPlayers.value), round_time_limit_s: Number(roundTime.value), bots: bots.checked };
    if (winnable.checked) options.deals = 'winnable';
    if (startAt.value) options.start_at = new Date(startAt.value).toISOString(); // local time, sent in UTC
    try {
      if (name.value !== '') options.name = typed("The tournament's name", name.value);
      const reply = await retrying(() => connection.request({ type: 'tournament_create', ...options }));
      navigate(`/t/${reply.tournament.code}`);
    } catch (error) { say(error.message, true); }
  } } },
  field('Name', name), field('Ruleset', ruleset), field('Rounds', rounds), field('Entrants', maxPlayers),
  field('Round time limit (s)', roundTime), field('Starts by itself at', startAt), field('Bots may enter', bots),
  field('Winnable deals only', winnable), el('span'), el('button', { type: 'submit' }, 'Host tournament'));
}

/** The tournaments: the open and running ones, the ended ones (finished or cancelled,
 * newest first), or all; each links to its page. */
function tournamentList() {
  const which = el('select', { id: 't-filter' },
    el('option', { value: 'active' }, 'open and running'), el('option', { value: 'ended' }, 'ended'),
    el('option', { value: 'all' }, 'all'));
  const list = el('div', { id: 'tournament-list', 'aria-live': 'polite' });
  const empty = { active: 'No tournament is open or running: host one.', ended: 'No tournament has ended yet.', all: 'No tournament yet: host one.' };
  async function load() {
    const status = which.value;
    try {
      const { tournaments } = await retrying(() => connection.request({ type: 'tournament_list', status }));
      if (which.value !== status) return; // another filter was chosen meanwhile
      put(list, tournaments.length === 0 ? el('p', {}, empty[status])
        : el('ul', {}, tournaments.map((t) => el('li', {}, link(`/t/${t.code}`, t.name),
          ` (${t.ruleset}, ${t.status === 'cancelled' ? `cancelled: ${t.cancel_reason || 'by the host'}` : t.status}, `,
          `${plural(t.entrant_count ?? t.entrants.filter((e) => e.removed !== true).length, 'entrant')}`,
          t.deals === 'winnable' ? ', winnable deals' : '', ')'))));
    } catch (error) { say(error.message, true); }
  }
  which.addEventListener('change', load);
  return { element: el('div', { id: 'tournaments' }, el('p', { class: 'row' }, el('label', { for: 't-filter' }, 'Show'), which), list), load };
}

/** Create a match with ``options`` and go to it (the options are kept for a rematch). */
export async function createMatch(options) {
  try {
    const reply = await retrying(() => connection.request({ type: 'create_match', ...options }));
    sessionStorage.setItem(`gaps.options.${reply.match.code}`, JSON.stringify(options));
    navigate(`/m/${reply.match.code}`);
  } catch (error) { say(error.message, true); }
}

/** Quick match: wait in a ruleset's queue until the server seats the player (``matched``). */
function quickMatch() {
  const ruleset = el('select', { id: 'quick-ruleset' }, RULESET_NAMES.map((n) => el('option', { value: n }, n)));
  const line = el('p', { id: 'quick-status', 'aria-live': 'polite' });
  const find = el('button', { type: 'submit', id: 'quick-find' }, 'Find a match');
  const cancel = el('button', { type: 'button', id: 'quick-cancel', hidden: true }, 'Cancel');
  let queued = false;
  const waiting = (is) => { queued = is; find.hidden = is; cancel.hidden = !is; ruleset.disabled = is; };
  cancel.addEventListener('click', async () => {
    try { await connection.request({ type: 'quick_cancel' }); } catch (error) { say(error.message, true); }
    waiting(false);
    line.textContent = 'Left the queue.';
  });
  const listener = (message) => {
    if (message.type !== 'matched' || !queued) return;
    waiting(false);
    navigate(`/m/${message.match.code}`);
  };
  // Closing the connection leaves the queue (docs/protocol.md): say so.
  const dropped = () => { if (queued) { waiting(false); line.textContent = 'The connection was lost, and with it your place in the queue: find a match again.'; } };
  connection.listeners.add(listener);
  connection.onLost.add(dropped);
  onLeave(() => {
    connection.listeners.delete(listener);
    connection.onLost.delete(dropped);
    if (queued) connection.request({ type: 'quick_cancel' }).catch(() => {}); // left the page: leave the queue
  });
  return el('form', { class: 'row', 'aria-label': 'Quick match', on: { submit: async (event) => {
    event.preventDefault();
    try {
      const reply = await retrying(() => connection.request({ type: 'quick_match', ruleset: ruleset.value }));
      waiting(true);
      const others = Math.max(0, reply.waiting - 1);
      line.textContent = `Waiting for players of close rating in ${reply.ruleset}… (${others ? plural(others, 'other player') : 'nobody else yet'} waiting)`;
    } catch (error) { say(error.message, true); }
  } } }, el('label', { for: 'quick-ruleset' }, 'Ruleset'), ruleset, find, cancel, line);
}

export async function lobbyPage() {
  await needPlayer();
  const list = el('tbody');
  // No maxlength: a pasted link or a code with spaces around it is cut after trimming.
  const code = el('input', { id: 'code', placeholder: 'K7QX2M or a link', autocomplete: 'off', spellcheck: 'false' });
  const tournaments = tournamentList();
  show(
    el('h1', {}, 'Lobby'),
    el('h2', {}, 'Quick match'),
    el('p', {}, 'The server seats you with 1 to 3 players of close rating, for a race to the fastest win.'),
    quickMatch(),
    el('h2', {}, 'Join a match'),
    el('form', { class: 'row', 'aria-label': 'Join by code', on: { submit: (event) => {
      event.preventDefault();
      const refused = textRefusal('The code', code.value);
      const found = refused === null ? codeIn(code.value) : null;
      if (refused !== null) say(refused, true);
      else if (found) navigate(`/m/${found}`);
      else say('A match code is 6 letters or digits, such as K7QX2M (or paste the invite link).', true);
    } } }, el('label', { for: 'code' }, 'Join by code'), code, el('button', { type: 'submit' }, 'Join')),
    el('h2', {}, 'Public matches'),
    scrolling('Public matches', table('public-matches', ['Code', 'Ruleset', 'Seats', 'Time', 'Ranking', 'Join'], list)),
    el('h2', {}, 'Create a match'),
    createForm(createMatch),
    el('h2', {}, 'Tournaments'),
    tournaments.element,
    el('h3', {}, 'Host a tournament'),
    tournamentForm(),
  );
  const { matches } = await retrying(() => connection.request({ type: 'list_matches' }));
  put(list, matches.map((m) => el('tr', {},
    el('td', {}, m.code), el('td', {}, m.ruleset), el('td', {}, `${m.players}/${m.max_players}`),
    el('td', {}, formatMs(m.time_limit_s * 1000)), el('td', {}, m.win_by === 'time' ? 'fastest win' : 'best score'),
    el('td', {}, link(`/m/${m.code}`, `Join ${m.code}`)))));
  if (matches.length === 0) list.append(el('tr', {}, el('td', { colspan: 6 }, 'No public match is waiting: create one.')));
  await tournaments.load();
}
