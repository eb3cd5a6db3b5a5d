// The page's links to the server: the WebSocket (requests by id, events to listeners, a
// heartbeat, reconnecting) and the public HTTP reads; both retry a refusal that means
// "not now". docs/protocol.md is the contract.
import { el, put, say, seconds } from './dom.js';
import { navigate } from './nav.js';

const TOKEN_KEY = 'gaps.token';
// Who the token belongs to, as the last welcome said (public facts, not the token): the
// pages that only read (boards, a player, a replay, the daily board) need no connection,
// so they spend no `hello`, yet still mark "you" and offer "around me".
const ME_KEY = 'gaps.me';

export const storedToken = () => localStorage.getItem(TOKEN_KEY);

/** The player this browser signs in as ({id, name, bot, suspended}), or null. */
export function knownPlayer() {
  if (!storedToken()) return null;
  try { return JSON.parse(localStorage.getItem(ME_KEY)); } catch { return null; }
}

export function signOut() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(ME_KEY);
}

const notice = document.getElementById('notice');

/** Say whether an operator has suspended the account from rated play (``suspended``:
 * null, true, or since when and why), under the header of every page. */
export function showSuspension(suspended) {
  notice.hidden = !suspended;
  if (!suspended) { put(notice); return; }
  const reason = typeof suspended === 'object' && typeof suspended.reason === 'string' && suspended.reason ? suspended.reason : null;
  put(notice, el('strong', {}, 'Rated play is suspended for your account'),
    reason ? [': ', el('span', { id: 'suspended-reason' }, reason)] : null,
    '. You can still play, but your results count on no board and no rating.');
}

/** Take in a ``welcome`` or ``registered`` (and its token, when new). */
export function welcomed(connection, reply, token = null) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  connection.player = reply.player;
  const suspended = reply.suspended ?? null;
  localStorage.setItem(ME_KEY, JSON.stringify({ ...reply.player, suspended }));
  showSuspension(suspended);
}

// -- "not now" ---------------------------------------------------------------------------

// Refusals that say "not now" rather than "no": the request was not carried out (an
// action may have been stored: it is sent again with its seq), so it is sent again after
// ``retry_after_ms`` or a growing delay. ``shutting_down`` is not among them: the server
// closes the connection next, and the reconnect sends the action again. ``unreachable``
// is an HTTP read that found no server at all.
export const TRANSIENT = {
  match_unavailable: 'The match is moving to another server',
  storage_unavailable: 'The server could not store that yet',
  broker_unavailable: 'The servers are reconnecting to each other',
  rate_limited: 'Too many requests',
  unreachable: 'The server cannot be reached',
};
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 8000;

/** ``attempt()``, again while it is refused for a transient reason and ``wanted()``; the
 * status line says what it waits for (``what``: "the leaderboard"). */
export async function retrying(attempt, { wanted = () => true, what = null } = {}) {
  let delayMs = FIRST_RETRY_MS;
  for (let tries = 0; ; tries++) {
    try {
      const result = await attempt();
      if (tries > 0) say(what ? `Loaded ${what}.` : 'Done.');
      return result;
    } catch (error) {
      if (!(error.code in TRANSIENT) || !wanted()) throw error;
      const waitMs = Number.isFinite(error.retry_after_ms) ? error.retry_after_ms : delayMs;
      say(`${TRANSIENT[error.code]}: ${what ? `reading ${what} again` : 'trying again'} in ${seconds(waitMs)}…`);
      await new Promise((resolve) => { setTimeout(resolve, waitMs); });
      delayMs = Math.min(delayMs * 2, LAST_RETRY_MS);
    }
  }
}

const refusal = (code, message, extra = {}) => Object.assign(new Error(message), { code, ...extra });

/** One read of a public JSON resource (docs/protocol.md, HTTP): its body, or an error
 * with the server's ``code`` (and ``retry_after_ms`` when it says to wait). */
export async function getJson(path) {
  let reply;
  try {
    reply = await fetch(path, { headers: { Accept: 'application/json' } });
  } catch {
    throw refusal('unreachable', 'The server cannot be reached.');
  }
  const body = await reply.json().catch(() => ({}));
  if (reply.ok) return body;
  const after = Number(reply.headers.get('Retry-After'));
  const retryAfterMs = Number.isFinite(body.retry_after_ms) ? body.retry_after_ms : (after > 0 ? after * 1000 : undefined);
  throw refusal(body.code || `http_${reply.status}`, body.message || reply.statusText, { retry_after_ms: retryAfterMs });
}

/** Read ``path``, waiting out "not now" (a rate limit, a server away) while ``wanted()``. */
export const readJson = (path, what, wanted = () => true) => retrying(() => getJson(path), { wanted, what });

// -- the WebSocket -------------------------------------------------------------------------

// The heartbeat: a ping every few seconds; a connection that says nothing for a while
// after one is taken for stalled (a network that silently stopped forwarding: no close
// ever comes) and replaced. A stall is noticed within PING_EVERY_MS + SILENCE_MS.
export const PING_EVERY_MS = 3000;
export const SILENCE_MS = 5000;
// A connection that is not open this long after it was asked for is given up and tried again.
export const OPEN_WITHIN_MS = 5000;
const FIRST_RECONNECT_MS = 500;
const LAST_RECONNECT_MS = 8000;

const lost = () => refusal('closed', 'The connection to the server was lost.');

export class Connection {
  constructor() {
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = new Set(); // each server message that is not a reply
    this.onReconnect = new Set(); // run once a lost connection is back (and signed in)
    this.onLost = new Set(); // run when the connection is lost
    this.player = null;
    this.socket = null;
    this.ready = null;
    this.live = false; // open and signed in: requests may be sent
    this.timers = new Set();
    this.reconnectMs = FIRST_RECONNECT_MS;
    this.reconnectTimer = null;
    this.wasLost = false;
    this.heardAt = 0;
  }

  /** Open the connection and, with a stored token, sign in (``hello``); resolves with
   * this connection, or rejects (``code: 'closed'``) if it is lost first. */
  open() {
    if (this.ready) return this.ready;
    clearTimeout(this.reconnectTimer); // asked for before the timer came: this is the reconnect
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/`);
    this.socket = socket;
    this.ready = new Promise((resolve, reject) => {
      this.failOpen = reject;
      this.later(() => { if (socket.readyState === WebSocket.CONNECTING) this.lose(socket, 'stalled'); }, OPEN_WITHIN_MS);
      socket.onmessage = (message) => {
        this.heardAt = performance.now();
        this.receive(JSON.parse(message.data));
      };
      socket.onclose = () => this.lose(socket, 'closed');
      socket.onopen = async () => {
        this.heartbeat(socket);
        const token = storedToken();
        try {
          if (token) welcomed(this, await retrying(() => this.send({ type: 'hello', token }), { wanted: () => socket === this.socket }));
        } catch (error) {
          if (error.code === 'closed') return; // lose() has said so, and rejected
          if (error.code === 'bad_token') signOut();
        }
        this.live = true;
        this.reconnectMs = FIRST_RECONNECT_MS;
        resolve(this);
        if (this.wasLost) this.back();
      };
    });
    this.ready.catch(() => {});
    return this.ready;
  }

  later(step, ms) {
    const timer = setTimeout(() => { this.timers.delete(timer); step(); }, ms);
    this.timers.add(timer);
  }

  /** Ping every PING_EVERY_MS after the last answer; silence for SILENCE_MS after a ping
   * (no pong, nor anything else) means the connection stalled. */
  heartbeat(socket) {
    const ping = () => {
      if (socket !== this.socket) return;
      const sentAt = performance.now();
      let answered = false;
      const check = () => {
        if (answered || socket !== this.socket) return;
        const quietFor = performance.now() - Math.max(sentAt, this.heardAt);
        if (quietFor >= SILENCE_MS) this.lose(socket, 'stalled');
        else this.later(check, SILENCE_MS - quietFor); // busy but talking: wait on
      };
      this.later(check, SILENCE_MS);
      this.send({ type: 'ping' }).then(() => {
        answered = true;
        if (socket === this.socket) this.later(ping, PING_EVERY_MS);
      }, () => {});
    };
    this.later(ping, PING_EVERY_MS);
  }

  /** The connection ``socket`` is gone (closed, or ``why`` 'stalled'): fail what waits
   * on it, and reconnect later if anyone needs the connection. */
  lose(socket, why) {
    if (socket !== this.socket) return;
    this.socket = null;
    this.live = false;
    socket.onopen = socket.onmessage = socket.onclose = null;
    try { socket.close(); } catch { /* closing is best effort: it may never have opened */ }
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const pending of this.waiting.values()) pending.reject(lost());
    this.waiting.clear();
    this.ready = null;
    this.failOpen(lost());
    for (const hook of [...this.onLost]) hook();
    this.wasLost = true;
    // Back by itself only for someone signed in, or a page waiting for it (asked now:
    // a page that failed to load for want of the connection says so just after).
    this.reconnectTimer = setTimeout(() => { if (this.wanted()) this.open(); }, this.reconnectMs);
    this.reconnectMs = Math.min(this.reconnectMs * 2, LAST_RECONNECT_MS);
    if (this.wanted()) say(why === 'stalled' ? 'The connection stalled: reconnecting…' : 'Connection lost: reconnecting…', true);
  }

  wanted() { return storedToken() !== null || this.onReconnect.size > 0; }

  /** Back after a loss: say so, and let the page catch up (rejoin, resync). */
  async back() {
    this.wasLost = false;
    say('Reconnected.');
    for (const hook of [...this.onReconnect]) await hook();
  }

  receive(message) {
    if (message.id !== undefined && this.waiting.has(message.id)) {
      const pending = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.type === 'error') pending.reject(Object.assign(new Error(message.message), message));
      else pending.resolve(message);
      return;
    }
    for (const listener of [...this.listeners]) listener(message);
  }

  /** Send ``request`` on the connection as it is now (rejected at once without one). */
  send(request) {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.reject(lost());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      socket.send(JSON.stringify({ ...request, id }));
    });
  }

  /** Send ``request`` once the connection is open (and signed in). */
  async request(request) {
    await this.open();
    return this.send(request);
  }
}

export const connection = new Connection();

/** The player signed in on this connection (opened, ``hello`` sent); without an account,
 * the sign-up page instead. */
export async function needPlayer() {
  if (storedToken()) await connection.open();
  if (!connection.player) {
    navigate('/', true);
    throw Object.assign(new Error('Sign up or come back with your token first.'), { code: 'signed_out' });
  }
  return connection.player;
}
