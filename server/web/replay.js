// `/replay/CODE`: a finished match, action by action, for each player, replayed by
// engine.js from the revealed seed, against the deal's par; and whether the server's
// signature holds over it (signature.js).
import * as engine from './engine.js';
import { el, formatMs, link, show } from './dom.js';
import { Board, parSentence, summaryLine } from './board.js';
import { getJson, readJson } from './net.js';
import { onLeave } from './nav.js';
import { REVIEWS, pollPar } from './result.js';
import { checkSignature, signatureWords } from './signature.js';

export async function replayPage(code) {
  let here = true;
  onLeave(() => { here = false; });
  let documentBody;
  try {
    documentBody = await readJson(`/matches/${encodeURIComponent(code)}/replay`, 'the replay', () => here);
  } catch (error) {
    if (error.code !== 'not_finished' && error.code !== 'no_such_match') throw error;
    // Not a dead end: say why, and where the match is.
    show(el('h1', {}, `Replay of ${code}`), el('p', { id: 'refused' }, error.message),
      el('p', {}, error.code === 'not_finished' ? link(`/watch/${code}`, `Watch match ${code}`) : link('/lobby', 'The lobby')));
    return;
  }
  const { match, players } = documentBody;
  const seed = engine.parseShareCode(match.seed);
  const picker = el('select', { id: 'replay-player' }, players.map((p, i) => el('option', { value: i },
    `${p.rank}. ${p.name}${p.bot === true ? ' [bot]' : ''} (${p.score})${Object.hasOwn(REVIEWS, p.review) ? ` · ${REVIEWS[p.review][0]}` : ''}`)));
  // Why the chosen player's result does not count, when it does not.
  const review = el('p', { id: 'replay-review', class: 'review' });
  const parLine = el('p', { id: 'par' });
  const board = new Board({ ruleset: match.ruleset, readOnly: true, onAction: () => {} });
  const position = el('p', { id: 'replay-step', 'aria-live': 'polite' });
  let par = match.par ?? null;
  let step = 0;
  const chosen = () => players[Number(picker.value)];
  const render = () => {
    const player = chosen();
    review.textContent = Object.hasOwn(REVIEWS, player.review) ? REVIEWS[player.review][1](player.name) : '';
    review.hidden = !review.textContent;
    parLine.textContent = parSentence(par, player.score, player.name);
    const game = new engine.Game(seed, match.ruleset);
    player.actions.slice(0, step).forEach((a) => game.push(a.action));
    board.show(game);
    const last = player.actions[step - 1];
    position.textContent = `Action ${step}/${player.actions.length}${last ? `: ${last.action} at ${formatMs(last.t_ms)}` : ''} · ${summaryLine(game)}`;
  };
  const go = (delta) => () => { const n = chosen().actions.length; step = Math.max(0, Math.min(n, step + delta)); render(); };
  picker.addEventListener('change', () => { step = 0; render(); });
  const signed = el('p', { id: 'signature' }, 'Checking the server\'s signature…');
  checkSignature(documentBody).then((found) => { signed.textContent = signatureWords(found); });
  show(el('h1', {}, `Replay of ${match.code}`), el('p', {}, `${match.ruleset} · seed `, el('code', {}, match.seed)), signed,
    el('div', { class: 'row' }, el('label', { for: 'replay-player' }, 'Player'), picker,
      el('button', { type: 'button', on: { click: go(-1e9) } }, '◀◀ Start'), el('button', { type: 'button', on: { click: go(-1) } }, '◀ Back'),
      el('button', { type: 'button', on: { click: go(1) } }, 'Next ▶'), el('button', { type: 'button', on: { click: go(1e9) } }, 'End ▶▶')),
    review, parLine, position, board.node);
  render();
  if (par === null && 'par' in match) {
    // Solved a few seconds after the end: asked again for a while (documents exported
    // before par existed have no field, and no par to wait for).
    const wanted = () => here;
    pollPar(async () => (await getJson(`/matches/${encodeURIComponent(code)}/replay`)).match.par ?? null,
      (found) => { par = found; render(); }, wanted, 1000);
  }
}
