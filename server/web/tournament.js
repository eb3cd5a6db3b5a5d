// `/t/CODE`: a tournament in large type, for a projector. Signed in, it follows the
// tournament's events live (join, start, remove an entrant, play or watch a round);
// without an account it reads the public standings over HTTP now and then. Either way it
// shows the commitment to the deals, checks every seed revealed against it (and says so
// loudly when one does not match), links to the exports, and shows the host's
// announcements. Its host steers the evening from it: announce, pause, resume, cancel
// with a reason, and reinstate an entrant they removed. The host and the arbiters they
// named run the tables in the room (docs/tables.md): who plays at a table, the round's
// deal sheet, and each table's result, entered; entered results are marked.
import { checkDeals } from './deals.js';
import { el, formatClock, formatClockOf, formatMs, link, named, plural, put, say, scrolling, show, table } from './dom.js';
import { connection, needPlayer, readJson, retrying, storedToken } from './net.js';
import { onLeave } from './nav.js';
import { roundKey } from './match.js';
import { textRefusal } from './text.js';

// How often a projector without an account reads the standings: each read is a costly
// request of its address (docs/protocol.md, Limits: 30 a minute by default).
export const PUBLIC_REFRESH_MS = 10000;

/** Entrants the host removed come after everyone still in, as the server sends them. */
const stillInFirst = (list) => [...list.filter((e) => e.removed !== true), ...list.filter((e) => e.removed === true)];
const removedNote = (entry) => el('span', { class: 'removed-note' }, `removed: ${entry.removed_reason || 'by the host'}`);
/** A result entered for a table in the room, not played online: marked wherever shown. */
const enteredNote = (rounds) => el('span', { class: 'entered-note', title: 'entered by the host or an arbiter: played at a table, not validated by the server' },
  `✎ entered${rounds && rounds.length ? ` (round ${rounds.join(', ')})` : ''}`);
const tableNote = () => el('span', { class: 'table-note' }, 'at a table');

/** A time as a clock shows it, MM:SS or H:MM:SS (tenths allowed), in ms; null if not one. */
export function clockMs(text) {
  const found = /^(?:(\d+):)?(\d+):([0-5]\d)(?:\.(\d{1,3}))?$/.exec(text.trim());
  if (!found) return null;
  const [, hours, minutes, seconds, fraction] = found;
  if (hours !== undefined && Number(minutes) > 59) return null;
  return ((Number(hours ?? 0) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 + Number((fraction ?? '0').padEnd(3, '0'));
}

/** The page's parts, drawn from a tournament view and its standings. */
function tournamentScreen() {
  const title = el('h1', { id: 'tournament-name' });
  const round = el('p', { id: 'round' });
  const actions = el('p', { class: 'row', id: 'tournament-actions' });
  const rows = el('tbody', { id: 'standings' });
  const entrants = el('ul', { id: 'entrants', 'aria-labelledby': 'entrants-heading' });
  const removing = el('div', { id: 'remove-entrant' }); // the host's form asking for a reason
  // The host's desk: announce, pause or resume, cancel with a reason.
  const desk = el('div', { id: 'host-desk' });
  // The tables in the room, for the host and the arbiters: the deal sheet, a result to enter.
  const tablesDesk = el('div', { id: 'tables-desk' });
  // What the host said to everyone, newest last.
  const announcements = el('ul', { id: 'announcements', 'aria-live': 'polite', 'aria-labelledby': 'announcements-heading' });
  const announcementsHeading = el('h2', { id: 'announcements-heading', hidden: true }, 'From the host');
  // What happened that the standings do not say: who the host removed, and why.
  const log = el('ul', { id: 'tournament-log', 'aria-live': 'polite' });
  const updated = el('p', { id: 'updated', class: 'quiet' });
  const standingsTable = scrolling('Standings', table('standings-table', ['Rank', 'Player', 'Score', 'Time', 'Rounds'], rows));
  const noRound = el('p', { id: 'no-round', hidden: true }, 'No round has been played yet: the standings start after the first.');
  // The commitment to the deals, each seed as it is revealed, and what the check found.
  const dealsAlarm = el('p', { id: 'deals-alarm', class: 'alarm', role: 'alert', hidden: true });
  const dealsStatus = el('p', { id: 'deals-status' });
  const dealSeeds = el('ul', { id: 'deal-seeds' });
  const exportLinks = el('p', { id: 'exports', class: 'row' });
  show(el('div', { class: 'projector' }, title, round, actions, desk, tablesDesk, announcementsHeading, announcements,
    dealsAlarm, log, standingsTable, noRound,
    el('h2', { id: 'entrants-heading' }, 'Entrants'), entrants, removing,
    el('h2', { id: 'deals-heading' }, 'Deals'), dealsStatus, dealSeeds,
    el('h2', {}, 'Results to save'), exportLinks, updated));
  const logged = new Set(); // the names whose removal the log shows already
  let alarmed = '';
  return {
    title, round, actions, entrants, removing, desk, tablesDesk, updated,
    /** The host's last announcements (the view keeps 10), each with its time. */
    announcements(view) {
      const said = Array.isArray(view.announcements) ? view.announcements : [];
      announcementsHeading.hidden = said.length === 0;
      put(announcements, said.map((a) => el('li', { class: 'announcement' },
        el('time', { datetime: a.at }, formatClockOf(a.at)), ' ', a.text)));
    },
    /** The commitment, the seeds revealed so far, and the check of each against it. */
    deals(view) {
      const { verified, mismatches, complete } = checkDeals(view);
      const winnable = view.deals === 'winnable' ? ' Only deals the solver proved winnable without redeal.' : '';
      dealsStatus.textContent = typeof view.commitment === 'string'
        ? `Committed before anyone entered: SHA-256 ${view.commitment}.${winnable}${complete ? ' Every seed is revealed, and they match it.' : ' Each seed is revealed when its round ends.'}`
        : view.deals_ready === false ? `Drawing the deals: entries open once they are committed.${winnable}`
          : 'No deals committed (a tournament from before commitments).';
      const seeds = Array.isArray(view.seeds) ? view.seeds : [];
      put(dealSeeds, seeds.map((seed, index) => el('li', {},
        `Round ${index + 1}: `, seed === null ? 'secret until the round ends'
          : [el('code', {}, seed), verified.includes(index + 1) ? ' ✓ matches its commitment' : ' ✗ does not match its commitment'])));
      dealsAlarm.hidden = mismatches.length === 0;
      dealsAlarm.textContent = mismatches.length === 0 ? ''
        : `The deals do not match the commitment: the server dealt other deals than it had committed to. ${mismatches.join('; ')}.`;
      if (mismatches.length > 0 && alarmed !== dealsAlarm.textContent) {
        alarmed = dealsAlarm.textContent;
        say(alarmed, true);
      }
    },
    /** Links to the exports: the standings and the rounds as CSV and JSON, and a
     * scheduled tournament's calendar file. */
    exports(view) {
      const base = `/tournaments/${encodeURIComponent(view.code)}`;
      const file = (path, text, name) => link(`${base}${path}`, text, { download: name });
      put(exportLinks,
        file('/standings.csv', 'Standings (CSV)', `${view.code}-standings.csv`),
        file('/standings.json', 'Standings (JSON)', `${view.code}-standings.json`),
        file('/rounds.csv', 'Rounds (CSV)', `${view.code}-rounds.csv`),
        file('/rounds.json', 'Rounds (JSON)', `${view.code}-rounds.json`),
        view.start_at ? file('.ics', 'Calendar', `${view.code}.ics`) : null);
    },
    standings(standings) {
      standingsTable.hidden = !standings;
      noRound.hidden = Boolean(standings);
      if (!standings) return;
      put(rows, stillInFirst(standings).map((s) => el('tr', { class: s.removed === true ? 'removed' : null },
        el('td', {}, s.rank), el('td', {}, named(s), s.removed === true ? [' · ', removedNote(s)] : null,
          s.entered === true ? [' · ', enteredNote(s.entered_rounds)] : null),
        el('td', {}, s.total_score ?? s.score ?? 0), el('td', {}, formatMs(s.total_time_ms ?? 0)), el('td', {}, s.rounds_played ?? 0))));
    },
    logRemoval(name, reason) {
      if (logged.has(name)) return; // told by the reply and by the event: one line
      logged.add(name);
      log.append(el('li', {}, `${name} was removed by the host: ${reason}`));
    },
    heading(view, nextRoundAt = null) {
      title.textContent = view.name;
      const count = view.entrant_count ?? view.entrants.filter((e) => e.removed !== true).length;
      let text = view.status === 'finished' ? 'Final standings'
        : view.status === 'cancelled' ? `Cancelled: ${view.cancel_reason || 'by the host'}`
          : view.status === 'open' ? `Waiting to start · ${plural(count, 'entrant')} of ${view.max_players}`
            : `Round ${view.current_round} of ${view.rounds}`;
      if (view.status === 'running' && view.paused) text += ' · paused by the host: the next round waits';
      if (view.status === 'open' && view.start_at) text += ` · starts at ${formatClockOf(view.start_at)}`;
      if (view.status === 'running' && !view.round_match && nextRoundAt && !view.paused) text += ` ended · the next round starts at ${formatClockOf(nextRoundAt, true)}`;
      round.textContent = text;
      // The rounds this browser opens from here link back to the tournament.
      if (view.round_match) sessionStorage.setItem(roundKey(view.round_match), view.code);
    },
    entrantList(view, removeButton = () => null, reinstateButton = () => null, tableButton = () => null) {
      put(entrants, stillInFirst(view.entrants).map((e) => el('li', { class: e.removed === true ? 'removed' : null },
        named(e), e.removed === true ? [' · ', removedNote(e)] : null, e.at_table === true && e.removed !== true ? [' · ', tableNote()] : null,
        e.removed === true ? reinstateButton(e) : [removeButton(e), tableButton(e)])));
    },
  };
}

/** The tournament for anyone, signed in or not: the public standings, read again every
 * PUBLIC_REFRESH_MS until it is over. */
async function publicTournament(code) {
  const screen = tournamentScreen();
  let here = true;
  let timer = null;
  onLeave(() => { here = false; clearTimeout(timer); });
  const wanted = () => here;
  async function refresh() {
    try {
      const body = await readJson(`/tournaments/${encodeURIComponent(code)}`, 'the standings', wanted);
      const view = body.tournament;
      const over = view.status === 'finished' || view.status === 'cancelled';
      screen.heading(view);
      put(screen.actions, over ? null
        : [link('/', view.status === 'open' ? 'Sign up to enter' : 'Sign up to watch the rounds')]);
      screen.entrantList(view);
      screen.announcements(view);
      screen.deals(view);
      screen.exports(view);
      screen.standings(view.current_round > 0 || view.status === 'finished' ? body.standings : null);
      screen.updated.textContent = over ? ''
        : `Updated at ${formatClock(new Date(), true)}; read again every ${PUBLIC_REFRESH_MS / 1000} s.`;
      if (over) return;
    } catch (error) {
      if (!here) return;
      if (screen.title.textContent === '') throw error; // the first read: the page says why
      say(`The standings could not be read again: ${error.message}`, true);
    }
    if (here) timer = setTimeout(() => refresh().catch((error) => say(error.message, true)), PUBLIC_REFRESH_MS);
  }
  await refresh();
}

export async function tournamentPage(code) {
  if (!storedToken()) { await publicTournament(code); return; }
  const me = await needPlayer();
  const screen = tournamentScreen();
  let seq = 0;
  let view = null;
  let nextRoundAt = null;
  const early = []; // events that came before the first view: applied once it is here
  const refreshStandings = () => retrying(() => connection.request({ type: 'tournament_standings', code }))
    .then((reply) => screen.standings(reply.standings)).catch((error) => say(error.message, true));
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
    const cancel = () => { put(screen.removing); button.focus(); };
    reason.addEventListener('keydown', (event) => { if (event.key === 'Escape') cancel(); });
    const form = el('form', { class: 'row', 'aria-label': `Remove ${entrant.name}`, on: { submit: async (event) => {
      event.preventDefault();
      const text = reason.value;
      if (!text) { say('Give a reason: everyone in the tournament sees it.', true); return; }
      const refused = textRefusal('The reason', text);
      if (refused !== null) { say(refused, true); return; }
      try {
        const reply = await retrying(() => connection.request({ type: 'tournament_remove', code, player: entrant.name, reason: text }));
        put(screen.removing);
        adopt(reply);
        screen.logRemoval(entrant.name, text);
        say(`${entrant.name} was removed.`);
        await refreshStandings();
      } catch (error) { say(`${entrant.name} was not removed: ${error.message}`, true); }
    } } },
    el('label', { for: 'remove-reason' }, `Why remove ${entrant.name}? (everyone sees it)`), reason,
    el('button', { type: 'submit' }, 'Confirm removal'), el('button', { type: 'button', on: { click: cancel } }, 'Cancel'));
    put(screen.removing, form);
    reason.focus();
  }

  /** The host's desk: a form to announce, pause or resume, and cancel (a reason asked). */
  function hostDesk() {
    const over = view.status === 'finished' || view.status === 'cancelled';
    if (view.host_id !== me.id || over) { put(screen.desk); return; }
    if (screen.desk.querySelector('form#cancel-form')) return; // the host is typing a reason
    const steer = async (request, done) => {
      try {
        adopt(await retrying(() => connection.request({ ...request, code })));
        if (done) say(done);
        return true;
      } catch (error) { say(error.message, true); return false; }
    };
    const text = el('input', { id: 'announce-text', maxlength: 280, autocomplete: 'off' });
    const announce = el('form', { id: 'announce-form', class: 'row', 'aria-label': 'Announce to everyone', on: { submit: async (event) => {
      event.preventDefault();
      const said = text.value;
      if (!said) { say('Type what to say to everyone first.', true); return; }
      const refused = textRefusal('The announcement', said);
      if (refused !== null) { say(refused, true); return; }
      if (await steer({ type: 'tournament_announce', text: said }, 'Announced.')) text.value = '';
    } } }, el('label', { for: 'announce-text' }, 'Say to everyone'), text, el('button', { type: 'submit' }, 'Announce'));
    const pause = view.status !== 'running' ? null : view.paused
      ? el('button', { type: 'button', id: 'resume', on: { click: () => steer({ type: 'tournament_resume' }, 'Resumed: the next round comes after the break.') } }, 'Resume')
      : el('button', { type: 'button', id: 'pause', on: { click: () => steer({ type: 'tournament_pause' }, 'Paused: the next round waits for you to resume.') } }, 'Pause after this round');
    const cancelButton = el('button', { type: 'button', id: 'cancel-tournament', class: 'danger' }, 'Cancel the tournament');
    cancelButton.addEventListener('click', () => {
      const reason = el('input', { id: 'cancel-reason', maxlength: 200, required: true, autocomplete: 'off' });
      const back = () => { hostDeskDrawn = false; put(screen.desk); hostDesk(); };
      reason.addEventListener('keydown', (event) => { if (event.key === 'Escape') back(); });
      put(screen.desk, el('form', { id: 'cancel-form', class: 'row', 'aria-label': 'Cancel the tournament', on: { submit: async (event) => {
        event.preventDefault();
        const why = reason.value;
        if (!why) { say('Give a reason: everyone in the tournament sees it.', true); return; }
        const refused = textRefusal('The reason', why);
        if (refused !== null) { say(refused, true); return; }
        await steer({ type: 'tournament_cancel', reason: why }, 'The tournament is cancelled.');
        back(); // cancelled: no desk; refused: the desk again
      } } }, el('label', { for: 'cancel-reason' }, 'Why cancel? (everyone sees it; a round being played is abandoned)'), reason,
      el('button', { type: 'submit', class: 'danger' }, 'Confirm the cancel'), el('button', { type: 'button', on: { click: back } }, 'Keep it')));
      reason.focus();
    });
    const key = `${view.status}|${view.paused}`;
    if (hostDeskDrawn === key) return; // redrawn only when it changes: a half-typed text stays
    hostDeskDrawn = key;
    put(screen.desk, announce, el('p', { class: 'row' }, pause, cancelButton));
  }
  let hostDeskDrawn = false;

  /** Whether this player runs the tables: the host, or an arbiter they named. */
  const runsTables = () => view.host_id === me.id || (view.arbiters || []).some((a) => a.player_id === me.id);

  /** The tables' desk: the current round's deal sheet, and a form to enter a table's result. */
  function tablesDesk() {
    const over = view.status === 'finished' || view.status === 'cancelled';
    if (!runsTables() || over || view.status !== 'running') { tablesDeskDrawn = ''; put(screen.tablesDesk); return; }
    const stillIn = view.entrants.filter((e) => e.removed !== true);
    const key = `${view.current_round}|${stillIn.map((e) => e.name).join(',')}`;
    if (tablesDeskDrawn === key) return; // redrawn only when it changes: a half-typed result stays
    tablesDeskDrawn = key;
    const field = (id, label, input) => [el('label', { for: id }, label), input];
    const roundInput = el('input', { id: 'result-round', type: 'number', min: 1, max: view.rounds, value: view.current_round, required: true });
    const player = el('select', { id: 'result-player', required: true }, stillIn.map((e) => el('option', { value: e.name }, e.name)));
    const placed = el('input', { id: 'result-placed', type: 'number', min: 0, max: 48, required: true });
    const redeals = el('input', { id: 'result-redeals', type: 'number', min: 0, max: 9, value: 0, required: true });
    const time = el('input', { id: 'result-time', placeholder: 'MM:SS', required: true, autocomplete: 'off', size: 8 });
    const won = el('input', { id: 'result-won', type: 'checkbox' });
    const form = el('form', { id: 'enter-result', class: 'row', 'aria-label': "Enter a table's result", on: { submit: async (event) => {
      event.preventDefault();
      const finishMs = clockMs(time.value);
      if (finishMs === null) { say('The time is minutes and seconds as a clock shows them, like 12:34.', true); time.focus(); return; }
      const request = { type: 'tournament_enter_result', code, round: Number(roundInput.value), player: player.value,
        placed: Number(placed.value), redeals: Number(redeals.value), finish_ms: finishMs, won: won.checked };
      try {
        const reply = await retrying(() => connection.request(request));
        adopt(reply);
        if (reply.standings && reply.standings.some((s) => s.rounds_played > 0)) screen.standings(reply.standings);
        const entered = (reply.entered_results || []).find((r) => r.round === request.round && r.name === request.player);
        say(`Entered: ${request.player}, round ${request.round}${entered ? `, ${entered.score} points` : ''}.`);
        placed.value = ''; time.value = ''; won.checked = false;
      } catch (error) { say(`${request.player}'s result was not entered: ${error.message}`, true); }
    } } },
    ...field('result-round', 'Round', roundInput), ...field('result-player', 'Player', player),
    ...field('result-placed', 'Cards placed', placed), ...field('result-redeals', 'Redeals', redeals),
    ...field('result-time', 'Time', time), el('label', { class: 'option' }, won, 'Won'),
    el('button', { type: 'submit' }, 'Enter the result'));
    const sheet = view.current_round > 0
      ? link(`/sheet/${encodeURIComponent(view.code)}/${view.current_round}`, `Deal sheet of round ${view.current_round}`, { id: 'deal-sheet-link' }) : null;
    put(screen.tablesDesk, el('h2', {}, 'Tables in the room'), el('p', { class: 'row' }, sheet), form);
  }
  let tablesDeskDrawn = '';

  function renderView() {
    screen.heading(view, nextRoundAt);
    screen.announcements(view);
    hostDesk();
    tablesDesk();
    screen.deals(view);
    screen.exports(view);
    // Join, start, and the round to play or watch: a projector needs none of them.
    const still = view.entrants.filter((e) => e.removed !== true);
    const entered = still.some((e) => e.player_id === me.id);
    const atTable = (view.round_tables || []).some((name) => name.toLowerCase() === me.name.toLowerCase());
    const removed = view.entrants.some((e) => e.player_id === me.id && e.removed === true);
    put(screen.actions,
      view.status === 'open' && !entered && !removed && view.deals_ready !== false
        ? el('button', { type: 'button', on: { click: () => ask({ type: 'tournament_join', code }) } }, 'Join this tournament') : null,
      view.status === 'open' && view.host_id === me.id
        ? el('button', { type: 'button', on: { click: () => ask({ type: 'tournament_start', code }) } }, 'Start now') : null,
      view.status === 'running' && view.round_match && entered && !atTable ? link(`/m/${view.round_match}`, `Play round ${view.current_round}`) : null,
      view.status === 'running' && entered && atTable ? el('span', { id: 'at-table' }, `You play round ${view.current_round} at a table in the room`) : null,
      view.status === 'running' && view.round_match ? link(`/watch/${view.round_match}`, `Watch round ${view.current_round}`) : null);
    // The host removes entrants before the start or between rounds, never while one is played.
    const canRemove = view.host_id === me.id && (view.status === 'open' || (view.status === 'running' && !view.round_match));
    if (!canRemove) put(screen.removing);
    const canReinstate = view.host_id === me.id && (view.status === 'open' || view.status === 'running');
    screen.entrantList(view, (e) => {
      if (!canRemove) return null;
      const button = el('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${e.name}` }, 'Remove');
      button.addEventListener('click', () => askReason(e, button));
      return [' ', button];
    }, (e) => (canReinstate ? [' ', el('button', { type: 'button', class: 'reinstate', 'aria-label': `Reinstate ${e.name}`,
      on: { click: () => retrying(() => connection.request({ type: 'tournament_reinstate', code, player: e.name }))
        .then((reply) => { adopt(reply); say(`${e.name} is back: they play from the next round.`); return refreshStandings(); })
        .catch((error) => say(`${e.name} was not reinstated: ${error.message}`, true)) } }, 'Reinstate')] : null),
    (e) => (runsTables() && (view.status === 'open' || view.status === 'running') ? [' ', el('button', {
      type: 'button', class: 'at-table', 'aria-pressed': String(e.at_table === true), 'aria-label': `${e.name} plays at a table`,
      on: { click: () => retrying(() => connection.request({ type: 'tournament_table', code, player: e.name, at_table: e.at_table !== true }))
        .then((reply) => { adopt(reply); say(`${e.name} plays ${e.at_table === true ? 'online' : 'at a table'} from the next round.`); })
        .catch((error) => say(`${e.name} was not moved: ${error.message}`, true)) } }, 'At a table')] : null));
  }

  function apply(event) {
    if (view === null) { early.push(event); return; }
    if (event.seq <= seq) return;
    if (event.seq !== seq + 1) { resync().catch((error) => say(error.message, true)); return; }
    seq = event.seq;
    const changed = absorb(event);
    renderView();
    if (changed === 'removed') refreshStandings();
  }

  /** Take ``event`` into the view and the standings; 'removed' when an entrant was. */
  function absorb(event) {
    // The view may have been read after the event (it came while loading): once.
    if (event.event === 'entrant_joined' && !view.entrants.some((e) => e.player_id === event.player_id)) {
      view.entrants.push({ player_id: event.player_id, name: event.name, bot: event.bot });
    }
    if (event.event === 'entrant_removed') {
      const entrant = view.entrants.find((e) => e.player_id === event.player_id);
      if (entrant) Object.assign(entrant, { removed: true, removed_reason: event.reason });
      view.entrant_count = view.entrants.filter((e) => e.removed !== true).length;
      screen.logRemoval(event.name, event.reason);
      return 'removed';
    }
    if (event.event === 'entrant_reinstated') {
      const entrant = view.entrants.find((e) => e.player_id === event.player_id);
      if (entrant) Object.assign(entrant, { removed: false, removed_reason: null });
      view.entrant_count = view.entrants.filter((e) => e.removed !== true).length;
      return 'removed'; // the standings list them again among those still in
    }
    if (event.event === 'tournament_announcement') {
      const said = Array.isArray(view.announcements) ? view.announcements : [];
      if (!said.some((a) => a.at === event.at && a.text === event.text)) {
        view.announcements = [...said, { text: event.text, at: event.at }].slice(-10);
        say(`The host says: ${event.text}`);
      }
    }
    if (event.event === 'entrant_table') {
      const entrant = view.entrants.find((e) => e.player_id === event.player_id);
      if (entrant) entrant.at_table = event.at_table;
    }
    if (event.event === 'arbiter_named' && !(view.arbiters || []).some((a) => a.player_id === event.player_id)) {
      view.arbiters = [...(view.arbiters || []), { player_id: event.player_id, name: event.name }];
    }
    if (event.event === 'result_entered' && event.standings) screen.standings(event.standings);
    if (event.event === 'tournament_paused') view.paused = true;
    if (event.event === 'tournament_resumed') { view.paused = false; nextRoundAt = event.next_round_at; }
    if (event.event === 'deals_committed') {
      Object.assign(view, { deals_ready: true, commitment: event.commitment, round_commitments: event.round_commitments, seeds: event.seeds });
    }
    if (Array.isArray(view.seeds) && typeof event.seed === 'string' && event.round >= 1 && event.round <= view.seeds.length) {
      view.seeds[event.round - 1] = event.seed; // a round_ended reveals its deal
    }
    if (Array.isArray(event.seeds) && event.event !== 'deals_committed') view.seeds = event.seeds; // the end reveals them all
    if (event.event === 'tournament_started') view.status = 'running';
    if (event.event === 'round_starting') { view.current_round = event.round; view.round_match = event.match; view.round_tables = event.tables || []; }
    if (event.event === 'round_ended') { view.round_match = null; nextRoundAt = event.next_round_at; screen.standings(event.standings); }
    if (event.event === 'tournament_ended') { view.status = 'finished'; screen.standings(event.standings); }
    if (event.event === 'tournament_cancelled') {
      Object.assign(view, { status: 'cancelled', cancel_reason: event.reason, round_match: null });
      say(`The tournament is cancelled: ${event.reason}.`);
    }
    if (event.event === 'entrant_joined') {
      view.entrant_count = view.entrants.filter((e) => e.removed !== true).length;
    }
    return null;
  }

  /** Catch up (the first time: all events, with the view of the tournaments running now,
   * both free requests; the standings are a costly read only when neither gives them). */
  async function resync() {
    const reply = await retrying(() => connection.request({ type: 'tournament_resync', code, since: seq }));
    if (reply.type === 'tournament') {
      view = reply.tournament; seq = reply.seq; renderView();
      screen.standings(view.current_round > 0 || view.status === 'finished' ? reply.standings : null);
    } else if (view !== null) {
      reply.events.forEach(apply);
    } else {
      const { tournaments } = await retrying(() => connection.request({ type: 'tournament_list' }));
      view = tournaments.find((t) => t.code === code) ?? null;
      let standings = null;
      if (view === null) { // over, so not listed: read it
        const read = await retrying(() => connection.request({ type: 'tournament_standings', code }));
        view = read.tournament;
        standings = read.standings;
      }
      for (const event of reply.events) {
        seq = event.seq;
        if (event.event === 'entrant_removed') screen.logRemoval(event.name, event.reason);
        if (event.event === 'round_ended') nextRoundAt = event.next_round_at;
        if (event.standings) standings = event.standings;
      }
      renderView();
      screen.standings(standings);
    }
    early.splice(0).forEach(apply);
  }

  const listener = (message) => { if (message.type === 'tournament_event' && message.tournament === code) apply(message); };
  const again = () => resync().catch((error) => say(error.message, true));
  connection.listeners.add(listener);
  connection.onReconnect.add(again);
  onLeave(() => { connection.listeners.delete(listener); connection.onReconnect.delete(again); });
  await resync();
}
