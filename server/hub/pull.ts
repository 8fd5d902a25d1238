import { MAX_PULL_PAGE_BYTES, type PullResponse } from '../../shared/sync-protocol.js';
import { ApiError } from '../errors.js';
import { hubTime, type HubDeps } from './deps.js';
import type { AuthenticatedDevice } from './devices.js';
import { assertProtocolServed } from './protocol.js';
import { deviceRevoked, raiseProtocol, readChanges, type StoredChange } from './store.js';
import type { ChangeWaiters } from './waiters.js';

export interface Pull {
  after: number;
  limit: number;
  /** Seconds to hold the request while nothing is there. */
  wait: number;
  /** The caller's own changes too. */
  own: boolean;
  /** The caller's wallet cursor: a new credits entry past it ends the wait too. */
  wallet_after?: number;
  protocol: number;
}

/**
 * A page of the other devices' changes after a seq. With `wait`, until one comes, the request is
 * held until a push to the cabinet commits on any hub process (its NOTIFY, sent after the commit),
 * the wait ends, or the client goes away; the caller's own pushes wake it but only move its
 * cursor. The page's last_seq is past the caller's own changes too, so that it never pulls them again.
 */
export async function pullChanges(
  deps: HubDeps,
  waiters: ChangeWaiters,
  caller: AuthenticatedDevice,
  pull: Pull,
  signal: AbortSignal,
): Promise<string> {
  assertProtocolServed(pull.protocol, caller.highestProtocol);
  // Pushes raise the cabinet's protocol in their transaction; a newer install that only pulls so far raises it here.
  if (pull.protocol > caller.highestProtocol) await raiseProtocol(deps.sql, caller.cabinetId, pull.protocol);
  // Moves past the caller's own changes while it waits: a wake by its own push reads from there.
  let after = pull.after;
  let newestSeq = pull.after;
  let cut = false;
  let walletSeq = 0;
  // A grant, or another install's debit, ends the wait: the install then exchanges its wallet.
  const walletMoved = () => pull.wallet_after !== undefined && walletSeq > pull.wallet_after;
  const read = async () => {
    const found = await readChanges(deps.sql, caller.cabinetId, caller.deviceId, after, pull.limit + 1, MAX_PULL_PAGE_BYTES, pull.own);
    walletSeq = found.walletSeq;
    // A cursor past the cabinet's newest seq: the hub went back (restored from a backup); the answer's last_seq says so.
    if (found.newestSeq < pull.after) wentBack = found.newestSeq;
    // Read in the same snapshot as the rows: a compaction that deleted changes after the cursor is always seen.
    if (after < found.retainedFromSeq - 1) throw cursorExpired(found.retainedFromSeq - 1);
    newestSeq = Math.max(after, found.newestSeq);
    cut = found.cut;
    if (found.rows.length === 0) after = newestSeq;
    return found.rows;
  };
  let wentBack: number | undefined;
  let rows = await read();
  if (wentBack !== undefined)
    return pullAnswer([], {
      last_seq: wentBack,
      more: false,
      device_last_number: caller.lastNumber,
      wallet_seq: walletSeq,
      hub_time: hubTime(deps),
    });
  // Wall time, not the injected clock: this is how long a socket stays open.
  const deadline = Date.now() + pull.wait * 1000;
  // A cursor behind the caller's own changes only is answered at once, so that it moves on; while
  // waiting, the caller's own pushes only move it here.
  const behindItsOwn = rows.length === 0 && after > pull.after;
  let waited = false;
  while (!behindItsOwn && rows.length === 0 && !walletMoved() && !signal.aborted && Date.now() < deadline) {
    waited = true;
    // Registered before the second read: a push that commits between the two is not missed.
    const waiting = waiters.wait(caller.cabinetId, caller.deviceId, deadline - Date.now(), signal);
    rows = await read();
    if (rows.length > 0 || walletMoved()) {
      waiting.cancel();
      break;
    }
    const end = await waiting.done;
    if (end === 'revoked') throw revokedWhileWaiting();
    rows = await read();
    // A timeout, a client gone or a hub stopping ends the wait; a wake with nothing new (the
    // caller's own push, another cursor's rows, a reconnect of LISTEN) waits again for what is left of it.
    if (end !== 'woken') break;
  }
  // A revocation whose notification was missed (LISTEN reconnecting) still ends a wait with nothing.
  if (waited && rows.length > 0 && (await deviceRevoked(deps.sql, caller.deviceId))) throw revokedWhileWaiting();
  const changes = rows.slice(0, pull.limit);
  const more = rows.length > pull.limit || cut;
  return pullAnswer(changes, {
    // With nothing more, every change up to the newest seq read was served or is the caller's own.
    last_seq: more ? (changes[changes.length - 1]?.seq ?? after) : newestSeq,
    more,
    device_last_number: caller.lastNumber,
    wallet_seq: walletSeq,
    hub_time: hubTime(deps),
  });
}

/**
 * The pull's JSON, with each change's fields spliced in as PostgreSQL's text of them: a page of up
 * to 4 MiB is not parsed into objects only to be written out again (a large share of the hub's work
 * on a pull, and most of what it would hold in memory).
 */
function pullAnswer(changes: readonly StoredChange[], rest: Omit<PullResponse, 'changes'>): string {
  const items = changes.map(({ fieldsJson, ...change }) => `${JSON.stringify(change).slice(0, -1)},"fields":${fieldsJson}}`);
  return `{"changes":[${items.join(',')}],${JSON.stringify(rest).slice(1)}`;
}

function cursorExpired(oldestSeq: number): ApiError {
  return new ApiError(
    'cursor_expired',
    `The hub no longer holds every change after this cursor: it keeps those after seq ${oldestSeq}. Read the cabinet’s current state, then pull after its as_of_seq.`,
    { oldest_seq: oldestSeq },
  );
}

function revokedWhileWaiting(): ApiError {
  return new ApiError('device_revoked', 'This device was revoked on the hub while it waited: nothing more syncs from or to it.');
}
