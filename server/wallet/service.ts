import type { Wallet } from '../../shared/automation.js';
import { toIso, type Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { cabinetExists } from '../tenancy/service.js';
import * as store from './store.js';

export function creditBalance(deps: Pick<Deps, 'db'>, cabinetId: string): number {
  return store.balance(deps.db.orm, cabinetId);
}

export function grantCredits(deps: Deps, cabinetId: string, amount: number, note?: string): number {
  if (!Number.isInteger(amount) || amount <= 0 || amount > 10_000_000) throw new ApiError('validation_error', 'amount must be a whole number of credits, 1 or more.');
  if (!cabinetExists(deps, cabinetId)) throw new ApiError('not_found', `No cabinet with id ${cabinetId}.`);
  return deps.db.transaction(() => {
    store.appendEntry(deps.db.orm, { cabinetId, kind: 'grant', amount, jobId: null, note: note ?? null, createdAt: deps.clock.now() });
    return store.balance(deps.db.orm, cabinetId);
  });
}

/**
 * Debits a job's cost, inside the enqueue transaction. Returns false, debiting nothing, when the
 * balance cannot cover it: the balance never goes negative.
 */
export function debitForJob(deps: Deps, cabinetId: string, jobId: string, amount: number): boolean {
  if (store.balance(deps.db.orm, cabinetId) < amount) return false;
  return store.appendEntry(deps.db.orm, { cabinetId, kind: 'debit', amount: -amount, jobId, note: null, createdAt: deps.clock.now() });
}

/** Refunds a job's debit; a second refund of the same job is refused by the ledger itself. */
export function refundJob(deps: Deps, cabinetId: string, jobId: string, note: string): boolean {
  return deps.db.transaction(() => {
    const debit = store.jobEntries(deps.db.orm, cabinetId, jobId).find((e) => e.kind === 'debit');
    if (!debit) return false;
    return store.appendEntry(deps.db.orm, { cabinetId, kind: 'refund', amount: -debit.amount, jobId, note, createdAt: deps.clock.now() });
  });
}

/** Whether the running balance equals the ledger's sum (it always should). */
export function walletConsistent(deps: Pick<Deps, 'db'>, cabinetId: string): boolean {
  return store.balance(deps.db.orm, cabinetId) === store.ledgerSum(deps.db.orm, cabinetId);
}

/** Debited minus refunded, for the job's credits_consumed. */
export function creditsConsumed(deps: Pick<Deps, 'db'>, cabinetId: string, jobId: string): number {
  return -store.jobEntries(deps.db.orm, cabinetId, jobId).reduce((total, e) => total + e.amount, 0);
}

export function getWallet(deps: Pick<Deps, 'db'>, cabinetId: string): Wallet {
  return {
    balance: store.balance(deps.db.orm, cabinetId),
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
export function jobCredits(deps: Pick<Deps, 'db'>, cabinetId: string, jobId: string): { debited: number; refunded: number; recorded: boolean } {
  const entries = store.jobEntries(deps.db.orm, cabinetId, jobId);
  const sum = (kind: string) => entries.filter((e) => e.kind === kind).reduce((total, e) => total + Math.abs(e.amount), 0);
  return { debited: sum('debit'), refunded: sum('refund'), recorded: entries.length > 0 };
}
