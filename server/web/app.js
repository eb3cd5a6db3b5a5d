// The Gaps Arena web client: one page per URL, routed here; the wire protocol of
// docs/protocol.md is its only contract. Each page is a module of its own; dom.js puts
// every string from the server or a player in the page as text, never as HTML.
import { homeStatus, main, say } from './dom.js';
import { connection, knownPlayer, showSuspension } from './net.js';
import { leave, navigate, onLeave, setRouter } from './nav.js';
import { accountPage } from './account.js';
import { lobbyPage } from './lobby.js';
import { matchPage } from './match.js';
import { replayPage } from './replay.js';
import { tournamentPage } from './tournament.js';
import { sheetPage } from './sheet.js';
import { boardsPage, playerPage } from './boards.js';
import { todayPage } from './today.js';
import { practicePage } from './practice.js';

const PAGES = {
  '': () => accountPage(),
  lobby: () => lobbyPage(),
  m: (code) => matchPage(code.toUpperCase(), 'player'),
  watch: (code) => matchPage(code.toUpperCase(), 'spectator'),
  replay: (code) => replayPage(code.toUpperCase()),
  t: (code) => tournamentPage(code.toUpperCase()),
  sheet: (code, round) => sheetPage(code.toUpperCase(), round),
  boards: () => boardsPage(),
  player: (name) => playerPage(name),
  today: () => todayPage(),
  practice: () => practicePage(),
};

/** Load the page the URL names. A page that could not load for want of a connection
 * loads again by itself once the connection is back; any other failure is said. */
async function route() {
  leave();
  homeStatus();
  say('');
  main.replaceChildren(document.createTextNode('Loading…'));
  const parts = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const page = PAGES[parts[0] ?? ''];
  try {
    if (!page) throw new Error('No page here: the links at the top lead to every page.');
    await page(...parts.slice(1));
    main.focus({ preventScroll: true });
  } catch (error) {
    if (error.code === 'signed_out') return; // sent to the sign-up page, which says why
    if (main.textContent === 'Loading…') main.replaceChildren(document.createTextNode('This page could not be loaded.'));
    say(error.message, true);
    if (error.code === 'closed') {
      const again = () => { connection.onReconnect.delete(again); route(); };
      connection.onReconnect.add(again);
      onLeave(() => connection.onReconnect.delete(again));
    }
  }
}

setRouter(route);
document.addEventListener('click', (event) => {
  const anchor = event.target.closest('a');
  // A link to a file to save (``download``: an export) is the browser's, not a page's.
  if (!anchor || anchor.origin !== location.origin || anchor.hasAttribute('download') || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
});
window.addEventListener('popstate', route);
const fourColour = document.getElementById('four-colour');
fourColour.checked = localStorage.getItem('gaps.fourColour') === '1';
document.body.classList.toggle('four-colour', fourColour.checked);
fourColour.addEventListener('change', () => {
  localStorage.setItem('gaps.fourColour', fourColour.checked ? '1' : '0');
  document.body.classList.toggle('four-colour', fourColour.checked);
});
showSuspension(knownPlayer()?.suspended ?? null); // as the last welcome said; each hello says again
route();
