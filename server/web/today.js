// `/today`: the daily challenge of each ruleset, and a day's board against its par. The
// board is a public read over HTTP; playing needs an account.
import { el, formatDay, formatMs, link, named, say, scrolling, show, table } from './dom.js';
import { parSentence, toPar } from './board.js';
import { connection, knownPlayer, needPlayer, readJson, retrying } from './net.js';
import { navigate, onLeave } from './nav.js';
import { RULESET_NAMES } from './lobby.js';

async function play(ruleset) {
  try {
    await needPlayer();
    const reply = await retrying(() => connection.request({ type: 'daily', ruleset }));
    navigate(`/m/${reply.match.code}`);
  } catch (error) {
    if (error.code !== 'signed_out') say(error.message, true);
  }
}

export async function todayPage() {
  const me = knownPlayer();
  const params = new URLSearchParams(location.search);
  const ruleset = RULESET_NAMES.includes(params.get('ruleset')) ? params.get('ruleset') : 'classic';
  let here = true;
  onLeave(() => { here = false; });
  const board = await readJson(`/daily/${ruleset}`, "the day's board", () => here);
  const rows = board.entries.map((e) => el('tr', { class: me && e.player_id === me.id ? 'me' : null },
    el('td', {}, e.rank), el('td', {}, named(e), me && e.player_id === me.id ? ' (you)' : ''),
    el('td', {}, e.score), el('td', {}, toPar(e.score, board.par)), el('td', {}, formatMs(e.finish_ms))));
  if (rows.length === 0) rows.push(el('tr', {}, el('td', { colspan: 5 }, 'Nobody has played this challenge yet today (of the accounts it ranks).')));
  const mine = me ? board.entries.find((e) => e.player_id === me.id) : null;
  show(el('h1', {}, 'The daily challenge'),
    el('p', {}, 'One deal a day per ruleset, the same for everyone, one attempt. Its seed and replays are secret until the day is over (midnight UTC).'),
    el('p', { id: 'daily-ranked' }, 'Only accounts registered before the day began (midnight UTC) are ranked on its board: a newer account may play, unranked, so that nobody can look at the deal first with a new one.'),
    el('div', { class: 'row', id: 'daily-play' }, me
      ? RULESET_NAMES.map((r) => el('button', { type: 'button', on: { click: () => play(r) } }, `Play ${r}`))
      : [link('/', 'Sign up'), ' to play it (the boards need no account).']),
    el('h2', {}, `The ${ruleset} board of ${formatDay(board.day)}`),
    el('nav', { class: 'row', 'aria-label': 'Other rulesets' }, RULESET_NAMES.map((r) => (r === ruleset
      ? el('span', { 'aria-current': 'page', class: 'current' }, r) : link(`/today?ruleset=${r}`, r)))),
    el('p', { id: 'par' }, board.par ? parSentence(board.par, mine ? mine.score : null)
      : 'Par: not solved yet: the server solves the deal once the first attempt of the day has ended.'),
    scrolling(`The ${ruleset} board`, table('daily-board', ['Rank', 'Player', 'Score', 'To par', 'Time'], rows)));
}
