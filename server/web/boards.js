// `/boards` (the leaderboards, read again in place when a filter changes) and
// `/player/NAME` (a player's ratings and their history): public reads over HTTP, one
// costly request each, with no connection to sign in on.
import { el, formatDay, formatMonth, formatMs, formatRating, formatWhen, link, named, put, say, scrolling, show, table } from './dom.js';
import { knownPlayer, readJson } from './net.js';
import { onLeave } from './nav.js';
import { RULESET_NAMES } from './lobby.js';

const skill = (entry) => `${formatRating(entry.mu)} ± ${formatRating(entry.sigma)}`;
const ratingText = (entry) => `${formatRating(entry.ordinal)}${entry.provisional ? ' (provisional)' : ''}`;

// Each board's columns after the rank and the player: a heading and how a row shows it
// (docs/protocol.md, leaderboard: the figures of each board).
const COLUMNS = {
  score: [['Best score', (e) => e.best_score], ['Its time', (e) => formatMs(e.best_score_ms)], ['Games', (e) => e.games]],
  time: [['Fastest win', (e) => formatMs(e.fastest_win_ms)], ['Its score', (e) => e.fastest_win_score], ['Wins', (e) => e.wins]],
  wins: [['Wins', (e) => e.wins], ['Games', (e) => e.games]],
  rating: [['Rating', ratingText], ['Skill (μ ± σ)', skill], ['Games', (e) => e.games]],
};
const BOARD_NAMES = { score: 'best score', time: 'fastest win', wins: 'most wins', rating: 'rating' };
const PERIOD_NAMES = { all: 'all time', month: 'this month', day: 'today' };

/** The period a board covers, for people: "all time", "November 2026", "29 Nov 2026". */
function periodWords(body) {
  if (body.board === 'rating' || body.period === 'all' || !body.period_start) return 'all time';
  return body.period === 'month' ? formatMonth(body.period_start) : formatDay(body.period_start);
}

/** The filters as the page's URL says them. */
function filtersFromUrl() {
  const params = new URLSearchParams(location.search);
  const pick = (name, allowed, otherwise) => (allowed.includes(params.get(name)) ? params.get(name) : otherwise);
  return {
    ruleset: pick('ruleset', RULESET_NAMES, 'classic'),
    by: pick('by', Object.keys(COLUMNS), 'score'),
    period: pick('period', Object.keys(PERIOD_NAMES), 'all'),
    kind: pick('kind', ['people', 'bots'], 'people'), // whose boards: people's or declared bots'
    around: params.get('around') === '1',
    cursor: params.get('cursor') || '',
  };
}

export async function boardsPage() {
  const me = knownPlayer(); // "you" and "around me", without signing in
  const filters = filtersFromUrl();
  let here = true;
  onLeave(() => { here = false; });
  const heading = el('h1');
  const select = (id, label, values, names) => {
    const node = el('select', { id, name: id }, values.map((v) => el('option', { value: v, selected: v === filters[id] }, names[v] ?? v)));
    node.addEventListener('change', () => { filters[id] = node.value; filters.cursor = ''; reload(); });
    return [el('label', { for: id }, label), node];
  };
  const periodNote = el('span', { id: 'period-note', class: 'quiet' });
  // The switch between people's boards and bots': links, so the URL says which.
  const kindLink = (value, text) => el('a', { href: '#', 'data-kind': value, on: { click: (event) => {
    event.preventDefault();
    event.stopPropagation();
    filters.kind = value; filters.cursor = ''; filters.around = false;
    reload();
  } } }, text);
  const kinds = [kindLink('people', 'People'), kindLink('bots', 'Bots')];
  const around = el('button', { type: 'button', id: 'around-me', 'aria-pressed': 'false', on: { click: () => {
    filters.around = !filters.around; filters.cursor = ''; reload();
  } } }, 'Around me');
  const caption = el('p', { id: 'board-caption' });
  const results = el('div', { id: 'board-results' });
  const pager = el('p', { class: 'row', id: 'pager' });
  show(heading,
    el('nav', { class: 'row switch', id: 'board-kind', 'aria-label': 'Whose boards' }, kinds),
    el('form', { class: 'row filters', 'aria-label': 'Which board', on: { submit: (event) => event.preventDefault() } },
      select('ruleset', 'Ruleset', RULESET_NAMES, {}), select('by', 'Board', Object.keys(COLUMNS), BOARD_NAMES),
      select('period', 'Period', Object.keys(PERIOD_NAMES), PERIOD_NAMES), periodNote, me ? around : null),
    caption, results, pager);

  const reload = () => load().catch((error) => say(error.message, true));

  /** Read the board the filters name, put them in the URL, and show it. */
  async function load(first = false) {
    const { ruleset, by, period, kind } = filters;
    const url = new URLSearchParams({ ruleset, by, period, kind });
    if (filters.around && me) url.set('around', '1');
    if (filters.cursor) url.set('cursor', filters.cursor);
    // A new URL per board read, so Back returns to the one before (the router reads it).
    if (first) history.replaceState(null, '', `/boards?${url}`);
    else if (location.search !== `?${url}`) history.pushState(null, '', `/boards?${url}`);
    heading.textContent = kind === 'bots' ? 'Leaderboards: bots' : 'Leaderboards';
    for (const node of kinds) {
      const current = node.dataset.kind === kind;
      node.setAttribute('href', `/boards?${new URLSearchParams({ ruleset, by, period, kind: node.dataset.kind })}`);
      node.className = current ? 'current' : '';
      if (current) node.setAttribute('aria-current', 'page'); else node.removeAttribute('aria-current');
    }
    document.getElementById('period').disabled = by === 'rating';
    periodNote.textContent = by === 'rating' ? 'ratings count all time' : '';
    around.setAttribute('aria-pressed', String(filters.around && Boolean(me)));
    const query = new URLSearchParams({ by, period, limit: '20', kind });
    if (filters.cursor) query.set('cursor', filters.cursor);
    if (filters.around && me) query.set('player', me.name);
    results.setAttribute('aria-busy', 'true');
    const body = await readJson(`/leaderboards/${ruleset}?${query}`, 'the leaderboard', () => here);
    if (!here) return;
    results.removeAttribute('aria-busy');
    render(body);
  }

  function render(body) {
    const columns = COLUMNS[filters.by];
    const mine = (entry) => me !== null && entry.player_id === me.id;
    caption.textContent = `${BOARD_NAMES[filters.by][0].toUpperCase()}${BOARD_NAMES[filters.by].slice(1)} in ${filters.ruleset}, ${periodWords(body)}${filters.kind === 'bots' ? ', declared bots' : ''}.`;
    const rows = body.entries.map((e) => el('tr', { class: mine(e) ? 'me' : null }, el('td', {}, e.rank),
      el('td', {}, named(e, link(`/player/${encodeURIComponent(e.name)}`, e.name)), mine(e) ? ' (you)' : ''),
      columns.map(([, shown]) => el('td', {}, shown(e)))));
    if (rows.length === 0) {
      const empty = filters.around ? 'You have no row on this board yet: play a rated game.' : 'Nobody is on this board yet.';
      rows.push(el('tr', {}, el('td', { colspan: 2 + columns.length }, empty)));
    }
    put(results, scrolling('Leaderboard', table('leaderboard', ['Rank', 'Player', ...columns.map(([name]) => name)], rows)));
    const page = (cursor, text) => el('button', { type: 'button', on: { click: () => { filters.cursor = cursor; reload(); } } }, text);
    put(pager, filters.cursor ? page('', 'First page') : null, body.next_cursor ? page(body.next_cursor, 'Next page') : null);
  }

  await load(true);
}

export async function playerPage(name) {
  const body = await readJson(`/ratings/${encodeURIComponent(name)}`, `${name}'s ratings`);
  const ratings = body.ratings.map((r) => el('tr', {}, el('td', {}, r.ruleset), el('td', {}, ratingText(r)),
    el('td', {}, skill(r)), el('td', {}, r.games)));
  const history = body.history.map((h) => el('tr', {}, el('td', {}, formatWhen(h.at)), el('td', {}, h.ruleset),
    el('td', {}, h.match_code ? link(`/replay/${h.match_code}`, h.match_code) : ''), el('td', {}, h.rank), el('td', {}, formatRating(h.ordinal))));
  const none = (text, columns) => [el('tr', {}, el('td', { colspan: columns }, text))];
  show(el('h1', {}, named(body.player)),
    el('p', {}, 'A rating is μ − 3σ: the skill μ, less three times its uncertainty σ. It is provisional until 10 rated games.'),
    el('h2', {}, 'Ratings'),
    scrolling('Ratings', table('ratings', ['Ruleset', 'Rating', 'Skill (μ ± σ)', 'Games'], ratings.length ? ratings : none('No rated game yet.', 4))),
    el('h2', {}, 'History'),
    scrolling('Rating history', table('rating-history', ['When', 'Ruleset', 'Match', 'Rank', 'Rating after'], history.length ? history : none('No rated game yet.', 5))));
}
