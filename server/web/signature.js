// The server's signature on a published document (a replay, a day's board), checked in
// the browser: the canonical JSON of docs/protocol.md ("Signatures": RFC 8785 on
// documents of integers only) and Ed25519 from WebCrypto, with the server's keys (/keys).
import { toHex } from './engine.js';
import { getJson } from './net.js';

/** The canonical JSON of ``value``: members sorted by their names' UTF-16 code units
 * (JavaScript's own string order), no whitespace, strings as JSON.stringify writes them. */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((name) => `${JSON.stringify(name)}:${canonical(value[name])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// The server's keys, read once per visit; again when a document names a key not among
// them (a key made since).
let keysRead = null;
async function serverKey(keyId) {
  for (const fresh of [false, true]) {
    if (fresh || !keysRead) keysRead = getJson('/keys').catch((error) => { keysRead = null; throw error; });
    const found = (await keysRead).keys.find((k) => k.key_id === keyId);
    if (found || fresh) return found;
  }
  return undefined;
}

const fromBase64url = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

/** What the signature of ``document`` says: ``{ verdict, keyId, status }``, the verdict
 * being 'holds', 'broken' (the content is not what the key signed), 'unknown' (no key
 * of the server's has that id), 'unsigned', or 'unchecked' (this browser has no Ed25519,
 * or the keys could not be read). */
export async function checkSignature(document) {
  const signature = document.signature;
  if (!signature) return { verdict: 'unsigned' };
  const keyId = String(signature.key_id);
  try {
    if (signature.alg !== 'Ed25519') return { verdict: 'broken', keyId };
    const key = await serverKey(keyId);
    if (!key) return { verdict: 'unknown', keyId };
    const raw = fromBase64url(key.public_key);
    if (toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', raw))).slice(0, 16) !== keyId) return { verdict: 'unknown', keyId };
    const { signature: _, ...unsigned } = document;
    const publicKey = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
    const holds = await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, fromBase64url(signature.value),
      new TextEncoder().encode(canonical(unsigned)));
    return { verdict: holds ? 'holds' : 'broken', keyId, status: key.status };
  } catch {
    return { verdict: 'unchecked', keyId };
  }
}

/** The verdict in words. */
export function signatureWords({ verdict, keyId, status }) {
  switch (verdict) {
    case 'holds': return `✓ Signed by the server, key ${keyId}${status === 'retired' ? ' (a retired key: what it signed still holds)' : ''}: this is the replay as the server published it.`;
    case 'broken': return `✗ The signature does NOT hold: this is not what the server's key ${keyId} signed.`;
    case 'unknown': return `✗ Signed by key ${keyId}, which is not one of the server's keys.`;
    case 'unchecked': return `Signed by key ${keyId} (not checked in this browser: gaps verify checks it).`;
    default: return 'Unsigned: this document proves only its own consistency.';
  }
}
