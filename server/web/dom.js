// The page's building blocks: el() makes elements and only ever sets textContent, so
// nothing from the server or a player is parsed as HTML; the status line; and how
// figures, times and dates are written for people.

export const main = document.getElementById('main');
const statusLine = document.getElementById('status');
const statusHome = statusLine.previousElementSibling; // where it sits on pages without a board

/** The children worth putting in the page: nested lists flattened, and null, undefined
 * and false left out (``Element.append(null)`` would print "null"). */
function present(children) {
  return children.flat(Infinity).filter((child) => child !== null && child !== undefined && child !== false)
    .map((child) => (child instanceof Node ? child : document.createTextNode(String(child))));
}

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'on') for (const [name, handler] of Object.entries(value)) node.addEventListener(name, handler);
    else if (key === 'class') { if (value) node.className = value; } else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value === true ? '' : value);
  }
  node.append(...present(children));
  return node;
}

/** Replace the children of ``node`` (null and undefined among them are left out). */
export const put = (node, ...children) => { node.replaceChildren(...present(children)); };
export const add = (node, ...children) => { node.append(...present(children)); };
export const show = (...children) => put(main, ...children);
export const link = (href, text, attributes = {}) => el('a', { href, ...attributes }, text);

/** A player's name as text, with a "bot" badge when the server says a bot plays (``bot``
 * absent or false: a person). ``name`` may be a node (a link) showing the name. */
export const named = (entry, name = entry.name) => (entry.bot === true
  ? el('span', { class: 'named' }, name, ' ', el('span', { class: 'badge-bot', role: 'img', 'aria-label': '(a bot)', title: 'a bot plays this seat' }, 'bot'))
  : name);

/** A table that may be wider than a phone: it scrolls sideways in a region the keyboard
 * reaches (Tab, then the arrows), named for screen readers. */
export const scrolling = (label, table) => el('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': label }, table);

/** A table with a heading per column; ``body`` is its rows, or a tbody to fill later. */
export function table(id, headings, body) {
  return el('table', { id },
    el('thead', {}, el('tr', {}, headings.map((h) => el('th', { scope: 'col' }, h)))),
    body instanceof HTMLTableSectionElement ? body : el('tbody', {}, body));
}

// -- the status line ----------------------------------------------------------------------

export function say(text, isError = false) {
  statusLine.textContent = text;
  statusLine.className = isError ? 'error' : '';
}

/** Put the status line first in ``place`` (over a board, where the player looks during
 * a race); ``homeStatus()`` brings it back under the header (the router does, between
 * pages). */
export const placeStatus = (place) => { place.prepend(statusLine); };
export const homeStatus = () => { statusHome.after(statusLine); };

// -- figures, times and dates for people ----------------------------------------------------

export const plural = (count, one, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** Milliseconds as minutes and seconds: 81200 is "1:21". */
export function formatMs(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const rest = `${String(Math.floor(s / 60) % 60).padStart(h ? 2 : 1, '0')}:${String(s % 60).padStart(2, '0')}`;
  return h ? `${h}:${rest}` : rest;
}

/** Milliseconds to wait, in whole seconds (at least 1). */
export const seconds = (ms) => `${Math.max(1, Math.round(ms / 1000))} s`;

const DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const MONTH = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const WHEN = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
const CLOCK = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' });
const CLOCK_SECONDS = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** The one form of an instant on the wire (docs/protocol.md, "Times"): RFC 3339, in UTC,
 * to the millisecond, with Z, as ``Date.toISOString()`` writes it. */
const TIME_FORM = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_FORM = /^\d{4}-\d\d-\d\d$/;

/** A time the server wrote ("2026-11-29T14:05:09.123Z") as a Date; null for any other
 * text: another form is not guessed at (gaps_protocol.times.parse_time). */
export function parseTime(text) {
  if (typeof text !== 'string' || !TIME_FORM.test(text)) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A calendar day ("2026-11-29") or an instant as a Date (a day: its start, UTC); null if neither. */
const dayOrTime = (text) => (typeof text === 'string' && DAY_FORM.test(text) ? parseTime(`${text}T00:00:00.000Z`) : parseTime(text));
/** ``format`` of what ``text`` writes, or the text as it came if it is no time. */
const shown = (format, date, text) => (date === null ? String(text) : format.format(date));

/** A calendar day ("2026-11-29", or an instant: its UTC day) as "29 Nov 2026". */
export const formatDay = (text) => shown(DAY, dayOrTime(text), text);
/** The UTC month of a day as "November 2026". */
export const formatMonth = (text) => shown(MONTH, dayOrTime(text), text);
/** An instant, in the reader's time zone, to the minute: "29 Nov 2026, 14:05". */
export const formatWhen = (text) => shown(WHEN, parseTime(text), text);
/** A time of day in the reader's time zone: "14:05" (with ``withSeconds``, "14:05:09"). */
export const formatClock = (date, withSeconds = false) => (withSeconds ? CLOCK_SECONDS : CLOCK).format(date);
/** The time of day of an instant the server wrote, as ``formatClock`` says it. */
export const formatClockOf = (text, withSeconds = false) => shown(withSeconds ? CLOCK_SECONDS : CLOCK, parseTime(text), text);

/** A rating figure: one decimal ("23.4"), the precision that tells players apart. */
export const formatRating = (value) => Number(value).toFixed(1);
