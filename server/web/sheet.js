// `/sheet/CODE/N`: round N's deal sheet of tournament CODE, for a table in the room
// (docs/tables.md): the host asks the server for the round's deal (`tournament_deal_sheet`,
// answered once the round has started) and the deal is dealt here by engine.js, exactly as
// the players online get it. Printed, the sheet is one A4 or Letter page.
// gaps/dealsheet.py makes the same sheet for the terminal client and its PDF:
// tests/test_dealsheet_web.py holds this module's layout and steps to it, word for word.
import { GAP, RANKS, RULESETS, cardName, dealtGrid, parseShareCode, rankOf, suitOf, SUITS } from './engine.js';
import { el, formatWhen, link, parseTime, say, show } from './dom.js';
import { connection, needPlayer, retrying } from './net.js';

const SYMBOLS = '♣♦♥♠';
const PAPER_KEY = 'gaps.sheetPaper';
export const PAPERS = { a4: 'A4', letter: 'Letter' };

export const rankText = (code) => (rankOf(code) === 10 ? '10' : RANKS[code % 13]);
/** A card as the sheet prints it: "10♥", "K♠". */
export const cardText = (code) => rankText(code) + SYMBOLS[suitOf(code)];

/** The starting grid of a deal (its share code) under a ruleset, as engine.js deals it. */
export const sheetGrid = (seedCode, rulesetName) => dealtGrid(parseShareCode(seedCode), rulesetName);

/** The grid as text, column numbers then rows 1-4 ("--" for a gap): gaps.dealsheet's
 * ``str(Layout)``, which ``parse_layout`` reads back. */
export function layoutText(grid) {
  const line = (texts) => texts.map((text) => text.padStart(3)).join('  ');
  const lines = [line(['', ...Array.from({ length: 13 }, (_, i) => String(i + 1))])];
  for (let row = 0; row < 4; row++) {
    const cells = grid.slice(row * 13, row * 13 + 13).map((code) => (code === GAP ? '--' : cardText(code)));
    lines.push(line([String(row + 1), ...cells]));
  }
  return lines.join('\n');
}

/** "row 1 column 4, row 3 column 2 and row 4 column 13": where the gaps are. */
function gapPlaces(grid) {
  const names = [];
  grid.forEach((code, index) => { if (code === GAP) names.push(`row ${Math.floor(index / 13) + 1} column ${(index % 13) + 1}`); });
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** How to lay the deal out from a sorted deck: gaps.dealsheet's ``instructions()``. */
export function instructions(grid, rulesetName) {
  return [
    'Take one full deck of 52 cards, without jokers.',
    `Sort it by suit, each suit from the Ace to the King, and spread each suit face up in a line of its own (${[...SYMBOLS].join(' ')}), so that every card can be seen.`,
    `Put the four Aces away: they are not in play, and the layout has four gaps in their stead: ${gapPlaces(grid)}.`,
    "Lay the layout out row by row, from row 1 at the top, each row from column 1 on the left: for each place, take the card the sheet shows from its suit's line and put it face up there; for a gap, leave the space of one card empty.",
    'Check: the suit lines are empty, each row has 13 places (cards and gaps together), and every card stands where the sheet shows it.',
    RULESETS[rulesetName].montana
      ? 'The sheet shows the deal as Montana starts, the 2s already moved to column 1: lay it out as shown and move nothing before the round starts.'
      : 'Move nothing before the round starts.',
    'Only this first deal is shared with the other players: a redeal, if the rules allow one, is shuffled at the table.',
  ];
}

/** The reply's sheet, or an Error saying what in it does not read. */
function checkedSheet(reply, code, round) {
  if (reply.tournament !== code || reply.round !== round) {
    throw new Error(`The server sent round ${reply.round} of tournament ${reply.tournament}, not round ${round} of ${code}.`);
  }
  if (!Object.hasOwn(RULESETS, reply.ruleset)) throw new Error(`The server's sheet names no known ruleset: ${JSON.stringify(reply.ruleset)}.`);
  try {
    return { ...reply, grid: sheetGrid(reply.seed, reply.ruleset) };
  } catch {
    throw new Error(`The server's sheet has no deal's code: ${JSON.stringify(reply.seed)}.`);
  }
}

function layoutTable(grid) {
  const columns = Array.from({ length: 13 }, (_, i) => el('th', { scope: 'col' }, String(i + 1)));
  const rows = [0, 1, 2, 3].map((row) => el('tr', {}, el('th', { scope: 'row' }, String(row + 1)),
    grid.slice(row * 13, row * 13 + 13).map((code) => (code === GAP
      ? el('td', { class: 'sheet-gap' }, 'gap')
      : el('td', { class: `sheet-card suit-${SUITS[suitOf(code)]}`, 'aria-label': cardName(code) }, cardText(code))))));
  return el('table', { id: 'sheet-layout', class: 'sheet-layout' },
    el('caption', {}, 'The layout: rows 1 to 4 from the top, columns 1 to 13 from the left'),
    el('thead', {}, el('tr', {}, el('td', {}), columns)), el('tbody', {}, rows));
}

function sheetView(sheet) {
  const started = parseTime(sheet.started_at) !== null;
  const paper = Object.hasOwn(PAPERS, localStorage.getItem(PAPER_KEY) ?? '') ? localStorage.getItem(PAPER_KEY) : 'a4';
  const article = el('article', { id: 'deal-sheet', class: `deal-sheet paper-${paper}` },
    el('h1', {}, 'Deal sheet'),
    el('p', { class: 'sheet-title' }, `Tournament ${sheet.tournament} · round ${sheet.round}`),
    el('p', { id: 'sheet-deal' }, `Deal ${sheet.seed} · ruleset ${sheet.ruleset}`,
      started ? ` · started ${formatWhen(sheet.started_at)}` : null),
    layoutTable(sheet.grid),
    el('h2', {}, 'How to lay it out from a sorted deck'),
    el('ol', { id: 'sheet-steps' }, instructions(sheet.grid, sheet.ruleset).map((step) => el('li', {}, step))),
    el('p', { class: 'sheet-footer' }, `Gaps Arena · tournament ${sheet.tournament} · round ${sheet.round} · deal ${sheet.seed}`));
  const choice = el('select', { id: 'sheet-paper', on: { change: () => {
    localStorage.setItem(PAPER_KEY, choice.value);
    article.className = `deal-sheet paper-${choice.value}`;
  } } }, Object.entries(PAPERS).map(([value, name]) => el('option', { value, selected: value === paper }, name)));
  const tools = el('p', { class: 'row sheet-tools' },
    el('label', { for: 'sheet-paper' }, 'Paper'), choice,
    el('button', { type: 'button', on: { click: () => window.print() } }, 'Print'),
    link(`/t/${encodeURIComponent(sheet.tournament)}`, 'Back to the tournament'));
  return [tools, article];
}

export async function sheetPage(code, roundText) {
  if (!/^[1-9][0-9]{0,3}$/.test(roundText)) {
    throw new Error(`"${roundText}" is no round: a deal sheet's address is /sheet/CODE/N, N the round's number.`);
  }
  const round = Number(roundText);
  await needPlayer();
  const refused = (message) => {
    show(el('h1', {}, `Deal sheet: tournament ${code}, round ${round}`),
      el('p', { id: 'sheet-refused', class: 'error' }, `No sheet: ${message}`),
      el('p', {}, link(`/t/${encodeURIComponent(code)}`, 'Back to the tournament')));
    say(message, true);
  };
  let reply;
  try {
    reply = await retrying(() => connection.request({ type: 'tournament_deal_sheet', code, round }), { what: 'the deal sheet' });
  } catch (error) {
    if (error.code === 'closed') throw error; // the router loads the page again once back
    refused(error.message);
    return;
  }
  let sheet;
  try { sheet = checkedSheet(reply, code, round); } catch (error) { refused(error.message); return; }
  show(...sheetView(sheet));
}
