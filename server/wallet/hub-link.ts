import { MAX_GRANT_CREDITS, type HubWalletEntry, type SentWalletEntry, type WalletExchangeResponse } from '../../shared/sync-wallet.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import type { Deps } from '../deps.js';
import * as store from './store.js';

/**
 * This install's side of the cabinet's one wallet on the hub (docs/SYNC.md, Credits): the link made
 * when the cabinet connects or joins, what to send, and the hub's answer written into the ledger.
 * The sync module carries the requests; everything here runs in this install's transactions.
 */

type LinkDeps = Pick<Deps, 'db' | 'clock' | 'randomBytes'>;

/** The balance is the hub's last word plus what this install made that the hub has not acknowledged. */
function settleBalance(orm: Deps['db']['orm'], cabinetId: string): void {
  const link = store.findLink(orm, cabinetId);
  if (link) store.setBalance(orm, cabinetId, link.hubBalance + store.countedOnTop(orm, cabinetId, link.sinceEntry));
}

/** How a link begins: the registering install brings its balance and its debits of jobs that have not finished; one that joins or reconnects brings nothing. */
export type WalletLinking = { bringsBalance: false } | { bringsBalance: true; unfinishedJobIds: readonly string[] };

/**
 * Links the cabinet's wallet to the hub's, in the transaction that links the cabinet. The install
 * that registers the cabinet brings its balance as an opening entry, sent once, and its debits of
 * jobs not finished yet as ordinary debits, the opening raised by as much (the balance is the same,
 * and a refund of such a job then finds its debit on the hub). One that joins or reconnects takes
 * the cabinet's balance, which it has once it hears from the hub (0 until then: its own history, or
 * what it did while disconnected, never adds to the cabinet's).
 */
export function linkWallet(deps: LinkDeps, cabinetId: string, deviceId: string, how: WalletLinking): void {
  const orm = deps.db.orm;
  store.keepOwnHere(orm, cabinetId);
  // The hub takes an opening of at most MAX_GRANT_CREDITS: a larger one would be refused at every exchange.
  const balance = store.balance(orm, cabinetId);
  const carried = how.bringsBalance ? carryUnfinishedDebits(deps, cabinetId, how.unfinishedJobIds, MAX_GRANT_CREDITS - balance) : 0;
  const brought = how.bringsBalance ? Math.min(balance + carried, MAX_GRANT_CREDITS) : 0;
  store.saveLink(orm, { cabinetId, linked: true, deviceId, hubBalance: 0, cursor: 0, sinceEntry: store.newestEntryId(orm, cabinetId) });
  if (brought > 0) {
    const now = deps.clock.now();
    store.mirrorEntry(orm, {
      cabinetId,
      kind: 'opening',
      amount: brought,
      jobId: null,
      note: 'the balance this install brought to the cabinet',
      createdAt: now,
      entryId: timeOrderedUuid(now, deps.randomBytes),
      hubState: 'pending',
      hubSeq: null,
      deviceId: null,
    });
  }
  settleBalance(orm, cabinetId);
}

/**
 * This install's debits of its unfinished jobs become entries to send, as long as the opening they
 * raise stays within `room` (one left out is refunded here only); returns the credits they took.
 */
function carryUnfinishedDebits(deps: LinkDeps, cabinetId: string, jobIds: readonly string[], room: number): number {
  let carried = 0;
  for (const debit of store.unsentDebits(deps.db.orm, cabinetId, jobIds)) {
    if (carried - debit.amount > room) continue;
    store.markPending(deps.db.orm, debit.id, debit.entryId ?? timeOrderedUuid(deps.clock.now(), deps.randomBytes));
    carried -= debit.amount;
  }
  return carried;
}

/**
 * The cabinet stops syncing: the install keeps the balance it last knew, what it made that the hub
 * never acknowledged stays counted here, and later grants and debits are this install's alone.
 */
export function unlinkWallet(deps: Pick<Deps, 'db'>, cabinetId: string): void {
  const orm = deps.db.orm;
  const link = store.findLink(orm, cabinetId);
  if (!link?.linked) return;
  store.keepOwnHere(orm, cabinetId);
  store.updateLink(orm, cabinetId, {
    linked: false,
    hubBalance: store.balance(orm, cabinetId),
    sinceEntry: store.newestEntryId(orm, cabinetId),
  });
}

/** What the next exchange sends: the wallet cursor and this install's entries the hub has not acknowledged; null without a link. */
export function walletToSend(
  deps: Pick<Deps, 'db'>,
  cabinetId: string,
  limit: number,
): { after: number; entries: SentWalletEntry[] } | null {
  const link = store.findLink(deps.db.orm, cabinetId);
  if (!link?.linked) return null;
  const entries = store
    .pendingEntries(deps.db.orm, cabinetId, limit)
    .flatMap((e) =>
      e.entryId === null || e.kind === 'grant'
        ? []
        : [{ entry_id: e.entryId, kind: e.kind, amount: e.amount, job_id: e.jobId, note: e.note }],
    );
  return { after: link.cursor, entries };
}

/** The wallet cursor, for the long poll (a new entry past it ends the wait); null without a link. */
export function walletCursor(deps: Pick<Deps, 'db'>, cabinetId: string): number | null {
  const link = store.findLink(deps.db.orm, cabinetId);
  return link?.linked ? link.cursor : null;
}

/** Whether this install has entries to send. */
export function walletHasPending(deps: Pick<Deps, 'db'>, cabinetId: string): boolean {
  return store.pendingEntries(deps.db.orm, cabinetId, 1).length > 0;
}

function mirrored(cabinetId: string, entry: HubWalletEntry, ownDevice: string): Omit<store.LedgerRow, 'id'> {
  const own = entry.device_id === ownDevice;
  return {
    cabinetId,
    kind: entry.kind,
    amount: entry.amount,
    jobId: entry.job_id,
    note: entry.note,
    createdAt: Date.parse(entry.created_at),
    entryId: entry.entry_id,
    // This device's own entry that this install lacks (restored from a backup) is its own again.
    hubState: own ? 'held' : 'mirrored',
    hubSeq: entry.seq,
    deviceId: own ? null : entry.device_id,
  };
}

/**
 * Writes the hub's answer, in one transaction: the entries sent are acknowledged, the cabinet's
 * entries after the cursor join the ledger, the cursor moves and the balance becomes the hub's plus
 * what is still pending here. A cursor the hub is behind (it was restored from a backup) starts the
 * exchange over: everything this install made is sent again (the hub keeps each once). An answer
 * to an exchange sent from another cursor (another process's exchange moved it meanwhile) only
 * acknowledges: its entries and cursor are not this install's any more.
 */
export function applyWalletAnswer(
  deps: Pick<Deps, 'db' | 'clock'>,
  cabinetId: string,
  answer: WalletExchangeResponse,
  sentAfter: number,
): { more: boolean } {
  const orm = deps.db.orm;
  return deps.db.immediateTransaction(() => {
    const link = store.findLink(orm, cabinetId);
    if (!link?.linked) return { more: false };
    const acknowledge = () => {
      for (const { entry_id, seq } of answer.acknowledged) store.setHubState(orm, cabinetId, entry_id, { hubState: 'held', hubSeq: seq });
    };
    if (link.cursor !== sentAfter) {
      acknowledge();
      settleBalance(orm, cabinetId);
      return { more: true };
    }
    if (answer.last_seq < sentAfter) {
      restartWalletExchange(deps, cabinetId);
      return { more: true };
    }
    acknowledge();
    for (const entry of answer.entries) store.mirrorEntry(orm, mirrored(cabinetId, entry, link.deviceId));
    store.updateLink(orm, cabinetId, { hubBalance: answer.balance, cursor: answer.last_seq });
    settleBalance(orm, cabinetId);
    return { more: answer.more };
  });
}

/** The hub refused these entries for what they are: set aside here (not counted, never sent again), so that the others go. */
export function setAsideRefusedEntries(deps: Pick<Deps, 'db'>, cabinetId: string, entryIds: readonly string[]): void {
  const orm = deps.db.orm;
  deps.db.immediateTransaction(() => {
    for (const entryId of entryIds) store.setHubState(orm, cabinetId, entryId, { hubState: 'refused' });
    settleBalance(orm, cabinetId);
  });
}

/** The hub may have lost what it acknowledged (restored from a backup): the whole ledger again, and this install's entries sent again. */
export function restartWalletExchange(deps: Pick<Deps, 'db'>, cabinetId: string): void {
  const orm = deps.db.orm;
  if (!store.findLink(orm, cabinetId)?.linked) return;
  store.resendHeld(orm, cabinetId);
  store.updateLink(orm, cabinetId, { cursor: 0 });
}
