// `/m/CODE` and `/watch/CODE`: the race (its lobby, the board, the server's clock, every
// player's progress, the end), or a spectator's view of it; one match followed by its
// events, rejoined and resynced after a lost connection.
import * as engine from './engine.js';
import { el, formatMs, homeStatus, link, named, placeStatus, plural, put, say, scrolling, show, table } from './dom.js';
import { Board, actionCard, actionWords, confirmed, gameControls, shortcuts, stateWords, summaryLine, toggleMarks } from './board.js';
import { connection, getJson, needPlayer, retrying } from './net.js';
import { navigate, onLeave } from './nav.js';
import { createMatch } from './lobby.js';
import { parReader, pollPar, renderEnd, unratedWords } from './result.js';

const PENDING_KEY = 'gaps.pending'; // an action sent but not yet acknowledged, per match
/** Where the page keeps the tournament a round belongs to (the tournament page links to
 * its rounds), so that the round's end links back to it. */
export const roundKey = (code) => `gaps.round.${code}`;
// A reply slower than this is said to be awaited, beside the board.
const SLOW_REPLY_MS = 1000;
// The par is first asked for this long after the end: the server solves it meanwhile.
const PAR_FIRST_MS = 1500;

const KINDS = { quick: 'quick match', daily: 'daily challenge', tournament: 'tournament round' };

/** Why ``error`` keeps this browser out of match ``code``, with where to go instead; or
 * null for an error that says nothing of the kind. */
function refusedEntry(code, error) {
  const watch = link(`/watch/${code}`, `Watch match ${code}`);
  const reasons = {
    already_started: ['This match has started without you: you can watch it.', watch],
    match_full: ['Every seat of this match is taken: you can watch it.', watch],
    match_finished: ['This match is over.', link(`/replay/${code}`, `Its replay`)],
    no_such_match: ['No match is being played with this code. If it has finished, its replay is kept.',
      link(`/replay/${code}`, `The replay of ${code}`), ' · ', link('/lobby', 'the lobby')],
    not_watchable: ['This is another player\'s daily challenge: nobody may see its deal before the day is over.', link('/today', 'Play your own')],
    bots_not_allowed: ['The host lets no bot sit in this match.', link('/lobby', 'The lobby')],
  };
  const reason = reasons[error.code];
  return reason ? [el('h1', {}, `Match ${code}`), el('p', { id: 'refused' }, reason[0]), el('p', {}, reason.slice(1))] : null;
}

export async function matchPage(code, role) {
  const me = await needPlayer();
  const state = { seq: 0, lastSeq: 0, players: new Map(), match: null, game: null, clockBase: null, ended: null, over: null };
  let here = true; // false once the player has left this page
  const wanted = () => here;
  const heading = el('h1', {}, role === 'player' ? 'Race ' : 'Watching ', el('span', { id: 'match-code' }, code));
  const info = el('p', { id: 'match-info' });
  const clock = el('p', { class: 'clock', id: 'clock', 'aria-live': 'off' });
  const mine = el('p', { id: 'my-game', 'aria-live': 'polite' });
  const lobbyControls = el('div', { class: 'controls', id: 'lobby-controls' });
  const players = el('tbody', { id: 'players' });
  const endScreen = el('section', { id: 'end', 'aria-live': 'polite' });
  // A rematch another player (or this one, elsewhere) has made: a link to join it.
  const rematchOffer = el('p', { id: 'rematch-offer', hidden: true });
  // The action the server has not confirmed yet, said beside the board when it is slow.
  const waitingLine = el('p', { id: 'pending', class: 'pending-line', hidden: true });
  const board = new Board({ ruleset: 'classic', onAction: (text) => act(text) });
  board.node.hidden = true;
  const controls = el('div');
  // Where the player looks during a race: the status line over the board.
  const play = el('div', { class: 'play' }, waitingLine, board.node, controls);
  show(heading, info, clock, lobbyControls, mine, play,
    el('h2', {}, 'Players'),
    scrolling('Players', table('players-table', ['Player', 'Status', 'Placed', 'Score', 'Redeals', 'Moves'], players)),
    endScreen);
  placeStatus(play);

  const pendingKey = `${PENDING_KEY}.${code}`;
  const pendingAction = () => JSON.parse(sessionStorage.getItem(pendingKey) || 'null');
  let sending = false;
  let slowTimer = null;

  function progressWords(p) {
    if (state.match?.status === 'lobby') return p.ready ? 'ready' : 'not ready';
    const words = stateWords(p.end_reason || p.status);
    return p.connected === false && !p.finished ? `${words} · away` : words;
  }

  function renderPlayers() {
    put(players, [...state.players.values()].map((p) => el('tr', { class: p.player_id === me.id ? 'me' : null },
      el('td', {}, named(p), p.player_id === me.id ? ' (you)' : ''),
      el('td', {}, progressWords(p)),
      el('td', {}, `${p.placed}/48`), el('td', {}, p.score), el('td', {}, p.redeals_used), el('td', {}, p.moves_made))));
  }

  /** Whether this player's game has ended, and how (the server says: a time limit or a
   * disconnection is not on the board). */
  function noteMyEnd() {
    const progress = state.players.get(me.id);
    if (role === 'player' && progress?.finished) state.over = progress.end_reason || progress.status;
  }

  function renderGame() {
    if (!state.game) return;
    const done = Boolean(state.over) || state.ended !== null;
    board.ruleset = state.game.ruleset;
    board.readOnly = done;
    board.node.hidden = false;
    board.show(state.game);
    mine.textContent = summaryLine(state.game, state.over);
    if (!controls.firstChild) controls.append(gameControls(state.game, act));
    for (const button of controls.querySelectorAll('button')) button.disabled = done && button.dataset.action !== 'marks';
  }

  function setGame(view) {
    const game = engine.Game.fromView(state.match.ruleset, view.grid, { redealsUsed: view.redeals_used, stopped: view.status === 'stopped' });
    game.movesMade = view.moves_made;
    state.game = game;
    if (['time', 'disconnected', 'left'].includes(view.status)) state.over = view.status;
    renderGame();
  }

  function renderInfo() {
    const m = state.match;
    info.textContent = [m.ruleset, KINDS[m.kind], m.win_by === 'time' ? 'fastest win' : 'best score', plural(m.max_players, 'seat'),
      formatMs(m.time_limit_s * 1000), m.status, m.rated ? null : unratedWords(m), m.bots === true ? 'bots may sit' : null].filter(Boolean).join(' · ');
    if (m.status === 'lobby' && role === 'player') {
      const url = `${location.origin}/m/${code}`;
      const ask = (request) => () => retrying(() => connection.request(request), { wanted }).catch((e) => say(e.message, true));
      put(lobbyControls,
        el('button', { type: 'button', on: { click: ask({ type: 'ready', code, ready: true }) } }, 'Ready'),
        m.host_id === me.id ? el('button', { type: 'button', on: { click: ask({ type: 'start_match', code }) } }, 'Start now') : null,
        el('span', { class: 'invite' }, 'Invite: ', link(url, url)));
    } else put(lobbyControls);
  }

  function tick() {
    if (state.clockBase === null || !state.match || state.ended) return;
    const limitMs = state.match.time_limit_s * 1000;
    clock.textContent = `${formatMs(Math.min(performance.now() - state.clockBase, limitMs))} / ${formatMs(limitMs)}`;
  }
  const timer = setInterval(tick, 250);

  function syncClock(tMs) {
    if (typeof tMs === 'number' && tMs > 0) state.clockBase = performance.now() - tMs;
  }

  /** The tournament this match is a round of, when this browser knows it. */
  const tournament = () => sessionStorage.getItem(roundKey(code));

  function showEnd(ended) {
    state.ended = ended;
    controls.hidden = true; // nothing left to play: the board stays, as it ended
    renderGame();
    homeStatus(); // the race is over: the board needs no notice over it any more
    say('The match is over.');
    const view = renderEnd(endScreen, { match: state.match, ended, me, role, rematch: askRematch, tournament: tournament(), offer: rematchOffer });
    endScreen.scrollIntoView({ block: 'start' }); // the result, not the board, on a phone
    clock.textContent = 'Finished';
    if (!ended.par && (ended.seed || state.match.kind === 'daily')) {
      pollPar(parReader(state.match, wanted), view.setPar, wanted, ended.fromReplay ? 0 : PAR_FIRST_MS);
    }
  }

  /** Ask the server for the rematch (``rematch``: the players who ask meet in one match);
   * a server without that request gets a new match with the same options instead. */
  async function askRematch(sameSeed) {
    try {
      const reply = await retrying(() => connection.request({ type: 'rematch', code, same_seed: sameSeed }), { wanted });
      navigate(`/m/${reply.match.code}`);
    } catch (error) {
      if (error.code !== 'unknown_type') { say(error.message, true); return; }
      const saved = sessionStorage.getItem(`gaps.options.${code}`);
      const m = state.match;
      const options = saved ? JSON.parse(saved) : { ruleset: m.ruleset, max_players: m.max_players, time_limit_s: m.time_limit_s, win_by: m.win_by, public: m.public, countdown_s: m.countdown_s, bots: m.bots === true };
      delete options.seed; // a new secret seed, unless the same deal is asked for
      if (sameSeed) options.seed = state.ended.seed;
      createMatch(options);
    }
  }

  function offerRematch(event) {
    const next = String(event.code).toUpperCase();
    const by = typeof event.by === 'object' && event.by !== null ? event.by : { name: event.by };
    const who = by.player_id === me.id || by.name === me.name ? 'You' : by.name;
    const deal = event.same_seed ? 'a rematch on the same deal' : 'a rematch';
    put(rematchOffer, `${who} offered ${deal}: `, link(`/m/${encodeURIComponent(next)}`, `join match ${next}`));
    rematchOffer.hidden = false;
    say(`Rematch offered: match ${next}.`);
  }

  function applyEvent(event) {
    // A rematch offer may come outside the numbered events: show it either way.
    if (event.event === 'rematch_offered' && typeof event.seq !== 'number') { offerRematch(event); return; }
    if (event.seq <= state.seq) return;
    if (event.seq !== state.seq + 1) { resync().catch((error) => say(error.message, true)); return; }
    state.seq = event.seq;
    syncClock(event.t_ms);
    switch (event.event) {
      case 'player_joined': state.players.set(event.player.player_id, event.player); break;
      case 'player_left': state.players.delete(event.player_id); break;
      case 'host_changed':
        state.match.host_id = event.host_id;
        renderInfo();
        if (event.host_id === me.id) say('You host this match now: start it when you like.');
        break;
      case 'presence': {
        const p = state.players.get(event.player_id);
        if (p) p.connected = event.connected;
        break;
      }
      case 'match_abandoned': state.match.status = 'abandoned'; renderInfo(); say('Everyone left: the match is abandoned.'); break;
      case 'ready': { const p = state.players.get(event.player_id); if (p) p.ready = event.ready; break; }
      case 'countdown': state.match.status = 'countdown'; renderInfo(); say(`Starting in ${Math.round(event.countdown_ms / 1000)} s`); break;
      case 'started':
        state.match.status = 'running';
        state.match.started_at = event.started_at;
        state.clockBase = performance.now();
        for (const p of event.players) state.players.set(p.player_id, p);
        if (role === 'player') setGame({ grid: event.grid, redeals_used: 0, moves_made: 0, status: 'playing' });
        renderInfo();
        say('Go!');
        if (role === 'player') board.cells[0].focus();
        break;
      case 'progress': case 'player_finished':
        // Keep what the seat said that progress does not repeat (``bot``, ``ready``).
        state.players.set(event.player_id, { ...state.players.get(event.player_id), ...event });
        noteMyEnd();
        renderGame();
        break;
      case 'match_ended':
        state.match.status = 'finished';
        for (const p of event.ranking) state.players.set(p.player_id, { ...state.players.get(p.player_id), ...p });
        noteMyEnd();
        renderInfo();
        showEnd(event);
        break;
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
    noteMyEnd();
    if (reply.you?.game) {
      state.lastSeq = reply.you.last_seq ?? 0;
      setGame(reply.you.game);
    }
    renderInfo();
    renderPlayers();
  }

  async function resync() {
    const reply = await retrying(() => connection.request({ type: 'resync', code, since: state.seq }), { wanted });
    if (reply.type === 'events') reply.events.forEach(applyEvent);
    else fromSnapshot(reply);
  }

  /** The end of a match that ended before this page came: its ``match_ended`` while the
   * server keeps its events (no costly read), else its replay. */
  async function recoverEnd() {
    const reply = await retrying(() => connection.request({ type: 'resync', code, since: 0 }), { wanted });
    const ended = reply.type === 'events' ? reply.events.find((e) => e.event === 'match_ended') : null;
    if (ended) { showEnd(ended); return; }
    if (state.match.kind === 'daily' && !state.match.seed) {
      // Its replay is secret until the day is over; its one player is its ranking.
      showEnd({ ranking: [...state.players.values()].map((p) => ({ ...p, rank: 1 })), seed: null, commitment: state.match.commitment });
      return;
    }
    const replay = await retrying(() => getJson(`/matches/${code}/replay`), { wanted, what: 'the result' }).catch(() => null);
    if (replay) showEnd({ ranking: replay.players, seed: replay.match.seed, commitment: replay.match.commitment, par: replay.match.par, fromReplay: true });
  }

  /** A match over is joined by nobody: its result, from its replay, as its end screen
   * (false when the replay is not published: a daily challenge before its day is over). */
  async function endFromReplay() {
    const replay = await retrying(() => getJson(`/matches/${code}/replay`), { wanted, what: 'the result' }).catch(() => null);
    if (!replay || !here) return false;
    state.match = { ...replay.match, status: 'finished', kind: replay.match.kind ?? 'race', max_players: replay.players.length };
    state.players = new Map(replay.players.map((p) => [p.player_id, { ...p, redeals_used: p.redeals, moves_made: p.moves, finished: true }]));
    renderInfo();
    renderPlayers();
    showEnd({ ranking: replay.players, seed: replay.match.seed, commitment: replay.match.commitment, par: replay.match.par, fromReplay: true });
    return true;
  }

  /** Remember which tournament this round is part of, from the tournaments running now
   * (a free request), when the tournament page did not say. */
  async function findTournament() {
    if (state.match.kind !== 'tournament' || tournament()) return;
    const { tournaments } = await connection.request({ type: 'tournament_list' });
    const found = tournaments.find((t) => t.round_match === code);
    if (found) sessionStorage.setItem(roundKey(code), found.code);
  }

  async function join() {
    let reply;
    try {
      reply = await retrying(() => connection.request({ type: 'join_match', code, role }), { wanted });
    } catch (error) {
      if (error.code === 'match_finished' && error.status === 'finished' && await endFromReplay()) return;
      const refused = here ? refusedEntry(code, error) : null;
      if (!refused) throw error;
      homeStatus();
      show(...refused);
      return;
    }
    fromSnapshot(reply);
    await resync();
    // An action sent before a reload or a drop: send it again with its seq; the server
    // applies it at most once (a duplicate gets its first reply).
    const pending = pendingAction();
    if (pending && pending.seq > state.lastSeq) await send(pending.action, pending.seq);
    else clearPending();
    if (state.match.status === 'finished' && !state.ended) await recoverEnd();
    await findTournament().catch(() => {});
  }

  function clearPending() {
    sessionStorage.removeItem(pendingKey);
    board.pending = null;
    waitingLine.hidden = true;
    clearTimeout(slowTimer);
  }

  /** Say, beside the board, which action waits for the server, and until when. */
  function tellWaiting(action, until = '') {
    waitingLine.textContent = `Waiting for the server to confirm your last action: ${actionWords(state.game, action)}${until}.`;
    waitingLine.hidden = false;
  }
  const OFFLINE = ' (it is sent again once the connection is back)';

  async function send(action, seq) {
    sessionStorage.setItem(pendingKey, JSON.stringify({ seq, action }));
    board.pending = actionCard(state.game, action);
    renderGame();
    if (!connection.live) { tellWaiting(action, OFFLINE); return; }
    sending = true;
    slowTimer = setTimeout(() => tellWaiting(action), SLOW_REPLY_MS);
    try {
      // Refused "not now": the same action again with the same seq, applied at most once.
      const reply = await retrying(() => connection.send({ type: 'action', code, seq, action }), { wanted });
      clearPending();
      state.lastSeq = Math.max(state.lastSeq, reply.seq);
      syncClock(reply.t_ms);
      if (!reply.duplicate) applyReply(reply);
      else await join();
    } catch (error) {
      // Cut off, or the server is stopping: the action stays pending, and the rejoin
      // after the reconnect sends it again if the server has not applied it.
      if (error.code === 'closed' || error.code === 'shutting_down') tellWaiting(action, OFFLINE);
      else { clearPending(); renderGame(); say(error.message, true); }
    } finally {
      sending = false;
      clearTimeout(slowTimer);
    }
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
  }

  function act(action) {
    if (action === 'marks') { toggleMarks(board); return; }
    if (role !== 'player' || !state.game) return;
    if (state.over || state.ended) { say(`Your game is over (${stateWords(state.over || 'stopped')}): nothing more to play.`); return; }
    const waiting = pendingAction();
    if (sending || waiting) {
      if (waiting) tellWaiting(waiting.action, connection.live ? '' : OFFLINE);
      say('Waiting for the server to confirm your last action: one at a time.');
      return;
    }
    if (!confirmed(action, state.game)) return;
    send(action, state.lastSeq + 1);
  }

  const listener = (message) => { if (message.type === 'event' && message.match === code) applyEvent(message); };
  const rejoin = () => { play.classList.remove('offline'); return join().catch((error) => say(error.message, true)); };
  const dropped = () => {
    play.classList.add('offline');
    const waiting = pendingAction();
    if (waiting && state.game) tellWaiting(waiting.action, OFFLINE);
  };
  connection.listeners.add(listener);
  connection.onReconnect.add(rejoin);
  connection.onLost.add(dropped);
  const stopKeys = role === 'player' ? shortcuts(act) : () => {};
  onLeave(() => {
    here = false;
    clearInterval(timer);
    clearTimeout(slowTimer);
    connection.listeners.delete(listener);
    connection.onReconnect.delete(rejoin);
    connection.onLost.delete(dropped);
    stopKeys();
  });
  await join();
}
