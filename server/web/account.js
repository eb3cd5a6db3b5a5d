// `/`: sign up with a name, or come back with a token; once signed in, the token to
// copy to another device, and signing out.
import { el, link, say, show } from './dom.js';
import { connection, retrying, signOut, storedToken, welcomed } from './net.js';
import { navigate } from './nav.js';
import { typed } from './text.js';

/** Put the token on the clipboard; where the browser has none for this page (plain http
 * from another machine), show it selected, for Ctrl+C. */
async function copyToken(token, shown) {
  try {
    await navigator.clipboard.writeText(token);
    say('Token copied: paste it under "Or paste your token" on the other device.');
  } catch {
    shown.hidden = false;
    getSelection().selectAllChildren(shown);
    say('This browser cannot copy here: the token is shown and selected, copy it with Ctrl+C.');
  }
}

function signedIn(token) {
  const me = connection.player;
  const shown = el('p', { class: 'token', id: 'token' }, token);
  shown.hidden = true;
  show(
    el('h1', {}, 'Welcome back, ', el('span', { id: 'me' }, me.name)),
    el('p', {}, 'Your token is your account: copy it to play from another device. Keep it secret.'),
    el('div', { class: 'row' },
      el('button', { type: 'button', on: { click: () => { shown.hidden = !shown.hidden; } } }, 'Show token'),
      el('button', { type: 'button', on: { click: () => copyToken(token, shown) } }, 'Copy token'),
      el('button', { type: 'button', on: { click: () => { signOut(); location.assign('/'); } } }, 'Sign out on this device')),
    shown,
    el('p', {}, link('/lobby', 'Go to the lobby'), ' · ', link(`/player/${encodeURIComponent(me.name)}`, 'your ratings')),
  );
}

function signUp() {
  const name = el('input', { id: 'name', name: 'name', autocomplete: 'nickname', required: true, minlength: 2, maxlength: 24 });
  const tokenInput = el('input', { id: 'token-input', name: 'token', autocomplete: 'off', required: true });
  const form = (label, onSubmit, ...fields) => el('form', { class: 'grid', 'aria-label': label, on: { submit: async (event) => {
    event.preventDefault();
    try { await onSubmit(); } catch (error) { say(error.message, true); }
  } } }, ...fields);
  show(
    el('h1', {}, 'Gaps Arena'),
    el('p', {}, 'Race the same deal of Gaps (Montana) against others. ', link('/practice', 'Practice'),
      ', the ', link('/boards', 'leaderboards'), ' and the ', link('/today', 'daily board'), ' need no account.'),
    form('Sign up', async () => {
      const chosen = typed('The name', name.value);
      const reply = await retrying(() => connection.request({ type: 'register', name: chosen }));
      welcomed(connection, reply, reply.token);
      say(`Signed up as ${reply.player.name}.`);
      navigate('/', true);
    }, el('label', { for: 'name' }, 'Choose a name'), name, el('span'), el('button', { type: 'submit' }, 'Sign up')),
    form('Come back', async () => {
      const token = typed('The token', tokenInput.value);
      const reply = await retrying(() => connection.request({ type: 'hello', token }));
      welcomed(connection, reply, token);
      navigate('/', true);
    }, el('label', { for: 'token-input' }, 'Or paste your token'), tokenInput, el('span'), el('button', { type: 'submit' }, 'Come back')),
  );
}

export async function accountPage() {
  const token = storedToken();
  if (token) await connection.open(); // hello: is the token still good?
  if (connection.player && storedToken()) signedIn(token);
  else signUp();
}
