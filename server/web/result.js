// The end of a match: the ranking against the deal's par, the revealed seed checked
// against the commitment, and where to go next (the replay, a rematch, the tournament).
import * as engine from './engine.js';
import { el, formatClock, formatMs, link, named, parseTime, put, scrolling, table } from './dom.js';
import { parSentence, stateWords, toPar } from './board.js';
import { getJson, retrying } from './net.js';

// A result's ``review`` (match_ended's ranking, replays): null or "cleared" counts as
// usual and shows nothing; the others show a short mark and a sentence saying why.
export const REVIEWS = {
  held: ['under review', (name) => `${name}'s result is under review: it is held off the boards and ratings until an operator reviews it.`],
  voided: ['voided by an operator', (name) => `${name}'s result was voided by an operator: it counts on no board and no rating.`],
  suspended: ['suspended', (name) => `${name} is suspended from rated play: this result counts on no board and no rating.`],
};
export const reviewMark = (result) => (Object.hasOwn(REVIEWS, result.review)
  ? el('span', { class: 'review', 'data-review': result.review }, REVIEWS[result.review][0]) : null);
/** The sentences saying why results of ``players`` do not count (now), or null. */
export function reviewNotes(players, id) {
  const lines = players.filter((p) => Object.hasOwn(REVIEWS, p.review)).map((p) => el('li', {}, REVIEWS[p.review][1](p.name)));
  return lines.length ? el('ul', { id, class: 'review-notes' }, lines) : null;
}

// The server solves a deal's par after its match ends, within seconds (docs/protocol.md,
// get_replay): it is asked for again after these pauses, then no more on this page.
export const PAR_RETRIES_MS = [1000, 2000, 3000, 5000, 8000, 13000];

/** Ask ``read()`` for the par (null: not solved yet) until it is known, at growing
 * intervals, while ``wanted()``; ``onPar(par)`` once it is. */
export async function pollPar(read, onPar, wanted, firstAfterMs = 0) {
  for (const pauseMs of [firstAfterMs, ...PAR_RETRIES_MS]) {
    await new Promise((resolve) => { setTimeout(resolve, pauseMs); });
    if (!wanted()) return;
    let par;
    try { par = await read(); } catch { return; } // no replay (yet): the par line says so
    if (!wanted()) return;
    if (par) { onPar(par); return; }
  }
}

/** Where a match's par is read: its replay, or (a daily challenge, whose replay is
 * secret until the day is over) the day's board. */
export function parReader(match, wanted) {
  const path = match.kind === 'daily'
    ? `/daily/${encodeURIComponent(match.ruleset)}?day=${dailyDay(match)}`
    : `/matches/${encodeURIComponent(match.code)}/replay`;
  return async () => {
    const body = await retrying(() => getJson(path), { wanted, what: 'the par' });
    return (match.kind === 'daily' ? body.par : body.match?.par) ?? null;
  };
}

/** How the match line says a match is unrated: a daily challenge is only when its
 * player's account is newer than its day (docs/fair-play.md). */
export const unratedWords = (match) => (match.kind === 'daily' ? 'unranked: an account newer than the day' : 'unrated');

/** Why a daily challenge's result is off its board, said at the end. */
export const UNRANKED_DAILY = 'Unranked: this account was registered after the day began (midnight UTC), so its result stays off the day\'s board. Only accounts older than the day are ranked, so that nobody can look at the deal first with a new one; your results count from tomorrow\'s challenge.';

/** The UTC day of a daily challenge ("2026-11-29"): the day it was dealt. */
export const dailyDay = (match) => (parseTime(match.started_at) ?? new Date()).toISOString().slice(0, 10);

/** When the daily challenge of ``match`` stops being secret: the end of its UTC day. */
function dailyOpensAt(match) {
  const day = parseTime(`${dailyDay(match)}T00:00:00.000Z`);
  return new Date(day.getTime() + 24 * 3600 * 1000);
}

/** A sentence saying who won, or who leads the ranking. */
function headline(ranking, me) {
  const first = ranking[0];
  if (!first) return 'The match is over.';
  const who = first.player_id === me.id ? 'You' : first.name;
  const winners = ranking.filter((p) => p.rank === 1);
  if (winners.length > 1) return `A tie for first: ${winners.map((p) => (p.player_id === me.id ? 'you' : p.name)).join(', ')}.`;
  if (first.won) return `${who} won${first.finish_ms !== null && first.finish_ms !== undefined ? ` in ${formatMs(first.finish_ms)}` : ''}.`;
  return `${who} ${who === 'You' ? 'rank' : 'ranks'} first, with ${first.score} points.`;
}

/**
 * Show the end of ``match`` in ``section`` from ``ended`` (a ``match_ended`` event, or
 * the same fields read from the replay). ``rematch(sameSeed)`` asks for a rematch (for a
 * player), ``tournament`` is the code of the tournament this match is a round of, if
 * known. Returns ``{setPar}``, to show the deal's par once it is known.
 */
export function renderEnd(section, { match, ended, me, role, rematch, tournament, offer }) {
  const ranking = ended.ranking;
  const parLine = el('p', { id: 'par' }, parSentence(null));
  const gaps = new Map();
  const rows = ranking.map((p) => {
    const gap = el('td', { class: 'to-par' });
    gaps.set(gap, p.score);
    return el('tr', { class: p.player_id === me.id ? 'me' : null }, el('td', {}, p.rank),
      el('td', {}, named(p), p.player_id === me.id ? ' (you)' : '', reviewMark(p) ? [' · ', reviewMark(p)] : null),
      el('td', {}, p.score), gap, el('td', {}, p.won ? 'won' : stateWords(p.end_reason)),
      el('td', {}, typeof p.finish_ms === 'number' ? formatMs(p.finish_ms) : ''));
  });
  const daily = match.kind === 'daily';
  const verdict = el('span', { id: 'commitment-check' }, ended.seed ? 'checking…' : '');
  const mine = ranking.find((p) => p.player_id === me.id);
  const next = el('p', { class: 'controls', id: 'next' });
  if (ended.seed) next.append(link(`/replay/${match.code}`, 'Replay'));
  else if (daily) {
    const opens = dailyOpensAt(match);
    next.append(el('span', { id: 'replay-opens' }, `The replay and the seed are secret until the day is over: they open at ${formatClock(opens)} your time (midnight UTC).`));
  }
  if (tournament) next.append(link(`/t/${tournament}`, 'Back to the tournament', { id: 'back-to-tournament' }));
  else if (match.kind === 'tournament') next.append(link('/lobby', 'Tournaments, in the lobby'));
  if (role === 'player' && (match.kind === 'race' || match.kind === 'quick')) {
    const button = (sameSeed, text) => el('button', { type: 'button', 'data-rematch': sameSeed ? 'same' : 'new', on: { click: () => rematch(sameSeed) } }, text);
    next.append(button(false, 'Rematch'));
    if (ended.seed) next.append(button(true, 'Rematch, same deal (unrated)'));
  }
  put(section, el('h2', {}, 'Result'),
    el('p', { id: 'headline', class: 'headline' }, headline(ranking, me)),
    daily && !match.rated ? el('p', { id: 'unranked' }, UNRANKED_DAILY) : null,
    scrolling('Ranking', table('ranking', ['Rank', 'Player', 'Score', 'To par', 'End', 'Time'], rows)),
    parLine,
    reviewNotes(ranking, 'review-notes'),
    el('p', { class: 'seed-line' }, 'Seed: ', el('code', { id: 'seed' }, ended.seed || 'secret'), ' · commitment ',
      el('code', { class: 'commitment' }, ended.commitment), ended.seed ? [' · ', verdict] : null),
    next, offer);
  if (ended.seed) {
    crypto.subtle.digest('SHA-256', engine.parseShareCode(ended.seed)).then((digest) => {
      verdict.textContent = engine.toHex(new Uint8Array(digest)) === ended.commitment
        ? '✓ the seed matches the commitment' : '✗ the seed does NOT match the commitment';
    });
  }
  const setPar = (par) => {
    parLine.textContent = parSentence(par, mine ? mine.score : null);
    for (const [cell, score] of gaps) cell.textContent = toPar(score, par);
  };
  if (ended.par) setPar(ended.par);
  return { setPar };
}
