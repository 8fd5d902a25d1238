import type { Wallet } from '../../shared/wallet.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import { ApiError } from '../errors.js';
import { cabinetExists } from '../tenancy/service.js';
import * as store from './store.js';

type WalletDeps = Pick<Deps, 'db' | 'clock' | 'randomBytes' | 'syncChanges'>;

export function creditBalance(deps: Pick<Deps, 'db'>, cabinetId: string): number {
  return store.balance(deps.db.orm, cabinetId);
}

/** Whether the cabinet's wallet is the one its hub keeps (the cabinet syncs, and linked its wallet). */
export function walletOnHub(deps: Pick<Deps, 'db'>, cabinetId: string): boolean {
  return store.findLink(deps.db.orm, cabinetId)?.linked === true;
}

/**
 * Appends an entry made on this install: with sync on, it is pending until the hub acknowledges it
 * (an entry of no credits stays here: the hub has nothing to count), and the sync is woken to send it.
 */
function appendOwn(
  deps: WalletDeps,
  row: Pick<store.LedgerRow, 'cabinetId' | 'kind' | 'amount' | 'jobId' | 'note'>,
  onHub: boolean,
): boolean {
  const now = deps.clock.now();
  const synced = onHub && row.amount !== 0;
  const appended = store.appendEntry(deps.db.orm, {
    ...row,
    createdAt: now,
    entryId: timeOrderedUuid(now, deps.randomBytes),
    hubState: synced ? 'pending' : null,
    hubSeq: null,
    deviceId: null,
  });
  if (appended && synced) deps.syncChanges.notify();
  return appended;
}

/**
 * A refund, with sync on, of a debit the cabinet's wallet never held (made before this link, or
 * refused by the hub): the hub would refuse it, and the cabinet never paid it, so it is kept on this
 * install's ledger (the job counts as refunded), neither sent nor counted in the balance.
 */
function appendOutside(deps: WalletDeps, row: Pick<store.LedgerRow, 'cabinetId' | 'kind' | 'amount' | 'jobId' | 'note'>): boolean {
  const now = deps.clock.now();
  const note = `${row.note ?? 'refund'} (not counted: the cabinet's wallet never held its debit)`;
  return store.mirrorEntry(deps.db.orm, {
    ...row,
    note,
    createdAt: now,
    entryId: timeOrderedUuid(now, deps.randomBytes),
    hubState: 'outside',
    hubSeq: null,
    deviceId: null,
  });
}

export function grantCredits(deps: Deps, cabinetId: string, amount: number, note?: string): number {
  if (!Number.isInteger(amount) || amount <= 0 || amount > 10_000_000)
    throw new ApiError('validation_error', 'amount must be a whole number of credits, 1 or more.');
  if (!cabinetExists(deps, cabinetId)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  if (walletOnHub(deps, cabinetId)) {
    throw new ApiError(
      'credits_on_hub',
      `The cabinet ${cabinetId} syncs through a hub, which keeps its one wallet: credits are granted there, by the hub's operator (courtier hub credits grant --cabinet ${cabinetId} --amount N). Nothing was granted on this install.`,
    );
  }
  return deps.db.transaction(() => {
    appendOwn(deps, { cabinetId, kind: 'grant', amount, jobId: null, note: note ?? null }, false);
    return store.balance(deps.db.orm, cabinetId);
  });
}

/** Why a debit was refused: the wallet cannot cover it, or this install spent its offline allowance. */
export type DebitRefusal =
  | { code: 'credits_exhausted'; balance: number }
  | { code: 'offline_allowance_exhausted'; balance: number; unconfirmed: number; allowance: number };

/**
 * Debits a job's cost, inside the enqueue transaction. Refused, debiting nothing, when the balance
 * cannot cover it (the balance never goes negative here), or, with sync on, when this install's
 * spending the hub has not acknowledged would pass the offline allowance (docs/SYNC.md, Credits).
 * `onHub`: walletOnHub, when the caller has read it in this transaction.
 */
export function debitForJob(
  deps: WalletDeps & Pick<Deps, 'config'>,
  cabinetId: string,
  jobId: string,
  amount: number,
  onHub = walletOnHub(deps, cabinetId),
): DebitRefusal | null {
  const balance = store.balance(deps.db.orm, cabinetId);
  if (balance < amount) return { code: 'credits_exhausted', balance };
  if (onHub && amount > 0) {
    const unconfirmed = store.pendingSpend(deps.db.orm, cabinetId);
    const allowance = deps.config.offlineCreditsAllowance;
    // With nothing unconfirmed, one run goes whatever it costs: an allowance below a run's cost must not stop every run.
    if (unconfirmed > 0 && unconfirmed + amount > allowance)
      return { code: 'offline_allowance_exhausted', balance, unconfirmed, allowance };
  }
  appendOwn(deps, { cabinetId, kind: 'debit', amount: -amount, jobId, note: null }, onHub);
  return null;
}

/** Refunds a job's debit; a second refund of the same job is refused by the ledger itself. */
export function refundJob(deps: WalletDeps, cabinetId: string, jobId: string, note: string): boolean {
  return deps.db.transaction(() => {
    const debit = store.jobEntries(deps.db.orm, cabinetId, jobId).find((e) => e.kind === 'debit');
    if (!debit) return false;
    const refund = { cabinetId, kind: 'refund' as const, amount: -debit.amount, jobId, note };
    if (!walletOnHub(deps, cabinetId)) return appendOwn(deps, refund, false);
    return debit.amount === 0 || debit.hubState === 'pending' || debit.hubState === 'held'
      ? appendOwn(deps, refund, true)
      : appendOutside(deps, refund);
  });
}

/**
 * Whether the running balance is what the ledger says (it always should be): the sum of the
 * entries without sync; with a link to the hub, the base it holds (the hub's last balance, or the
 * balance at a disconnect) plus what this install made since that the base does not count.
 */
export function walletConsistent(deps: Pick<Deps, 'db'>, cabinetId: string): boolean {
  const link = store.findLink(deps.db.orm, cabinetId);
  const expected = link
    ? link.hubBalance + store.countedOnTop(deps.db.orm, cabinetId, link.sinceEntry)
    : store.ledgerSum(deps.db.orm, cabinetId);
  return store.balance(deps.db.orm, cabinetId) === expected;
}

/** Debited minus refunded, for the job's credits_consumed. */
export function creditsConsumed(deps: Pick<Deps, 'db'>, cabinetId: string, jobId: string): number {
  return -store.jobEntries(deps.db.orm, cabinetId, jobId).reduce((total, e) => total + e.amount, 0);
}

export function getWallet(deps: Pick<Deps, 'db'>, cabinetId: string): Wallet {
  const synced = walletOnHub(deps, cabinetId);
  return {
    balance: store.balance(deps.db.orm, cabinetId),
    synced,
    unconfirmed_credits: synced ? store.pendingSpend(deps.db.orm, cabinetId) : 0,
    ledger: store.recentEntries(deps.db.orm, cabinetId, 50).map((e) => ({
      id: e.id,
      kind: e.kind,
      amount: e.amount,
      job_id: e.jobId,
      note: e.note,
      created_at: toIso(e.createdAt),
    })),
  };
}

/** What a job was debited and refunded on this install's wallet (zeros for a job another install ran). */
export function jobCredits(
  deps: Pick<Deps, 'db'>,
  cabinetId: string,
  jobId: string,
): { debited: number; refunded: number; recorded: boolean } {
  const entries = store.jobEntries(deps.db.orm, cabinetId, jobId);
  const sum = (kind: string) => entries.filter((e) => e.kind === kind).reduce((total, e) => total + Math.abs(e.amount), 0);
  return { debited: sum('debit'), refunded: sum('refund'), recorded: entries.length > 0 };
}

/** Debited minus refunded of each of these jobs that this install's wallet recorded, in one query (the jobs dashboard). */
export function creditsConsumedByJob(deps: Pick<Deps, 'db'>, cabinetId: string, jobIds: readonly string[]): Map<string, number> {
  if (jobIds.length === 0) return new Map();
  return new Map(store.jobsConsumed(deps.db.orm, cabinetId, jobIds).flatMap((r) => (r.jobId === null ? [] : [[r.jobId, r.consumed]])));
}
