// A tournament's deals checked against the commitment its server published before anyone
// entered (docs/protocol.md, Committed deals): each revealed seed against its round's
// commitment, SHA-256 of the seed's bytes, and all of them, once revealed, against the
// tournament's, SHA-256 of the seeds' bytes one after the other. The same check as
// gaps.commitment.check_deals, which the terminal client runs.
import { parseShareCode, sha256, toHex } from './engine.js';

/** What the seeds ``view`` reveals say of its commitment: ``verified`` (the rounds whose
 * seed matches), ``mismatches`` (one sentence each) and ``complete`` (true once all are
 * revealed and match the tournament's commitment, false if they do not, null before). */
export function checkDeals(view) {
  const rounds = Array.isArray(view.round_commitments) ? view.round_commitments : [];
  const seeds = Array.isArray(view.seeds) ? view.seeds : [];
  const verified = [];
  const mismatches = [];
  const revealed = [];
  if (typeof view.commitment !== 'string') return { verified, mismatches, complete: null };
  if (seeds.length !== rounds.length) mismatches.push(`${rounds.length} round commitments were published but ${seeds.length} seeds`);
  seeds.forEach((code, index) => {
    if (code === null || code === undefined || index >= rounds.length) return;
    let bytes;
    try { bytes = parseShareCode(code); } catch (error) { mismatches.push(`round ${index + 1}: ${error.message}`); return; }
    revealed.push(bytes);
    const hash = toHex(sha256(bytes));
    if (hash === String(rounds[index]).toLowerCase()) verified.push(index + 1);
    else mismatches.push(`round ${index + 1}: seed ${code} hashes to ${hash.slice(0, 16)}…, not to the published ${String(rounds[index]).slice(0, 16)}…`);
  });
  let complete = null;
  if (seeds.length > 0 && revealed.length === seeds.length && seeds.length === rounds.length) {
    const all = new Uint8Array(revealed.reduce((size, bytes) => size + bytes.length, 0));
    revealed.reduce((at, bytes) => { all.set(bytes, at); return at + bytes.length; }, 0);
    const hash = toHex(sha256(all));
    complete = hash === view.commitment.toLowerCase();
    if (!complete) mismatches.push(`the revealed seeds hash to ${hash.slice(0, 16)}…, not to the published commitment ${view.commitment.slice(0, 16)}…`);
  }
  return { verified, mismatches, complete };
}
