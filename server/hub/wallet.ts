import type { TransactionSql } from 'postgres';
import {
  MAX_GRANT_CREDITS,
  type HubWalletEntry,
  type SentWalletEntry,
  type WalletExchangeBody,
  type WalletExchangeResponse,
} from '../../shared/sync-wallet.js';
import { timeOrderedUuid } from '../platform/db/time-ordered-id.js';
import { ApiError } from '../errors.js';
import { assertWithinQuota } from './quota.js';
import { hubTime, type HubDeps } from './deps.js';
import type { AuthenticatedDevice } from './devices.js';
import { assertProtocolServed } from './protocol.js';
import { notifyChanges } from './store.js';
import {
  appendWalletEntries,
  closeOpening,
  hasOpening,
  lockWallet,
  recentWalletEntries,
  relatedEntries,
  walletEntriesAfter,
  type NewWalletEntry,
  type StoredWalletEntry,
} from './wallet-store.js';

/**
 * The cabinet's one wallet, kept by the hub: the installs send their own debits and refunds (and,
 * once, the balance the registering install brought), the operator grants, and every install
 * mirrors the ledger and spends against the balance the hub last gave it (docs/SYNC.md, Credits).
 */

/** Where a wake-up that failed after a commit is told (a request's logger, the CLI's stderr). */
export interface WarnLog {
  warn(details: object, message: string): void;
}

/** Entries served per exchange; the install exchanges again at once while `more`. */
const WALLET_PAGE = 500;

/** What an entry sent by a device must not be; the first reason found is given. */
type Refusal =
  | 'entry_id_taken'
  | 'debit_not_negative'
  | 'job_missing'
  | 'job_already_debited'
  | 'job_already_refunded'
  | 'no_matching_debit'
  | 'refund_amount'
  | 'opening_refused';

const REASONS: Record<Refusal, string> = {
  entry_id_taken: 'the cabinet holds another entry under this id',
  debit_not_negative: 'a debit takes credits: its amount must be negative',
  job_missing: 'a debit or refund names its job',
  job_already_debited: 'this device already debited this job',
  job_already_refunded: 'this device already refunded this job',
  no_matching_debit: 'a refund gives back this device’s debit of the job, which the hub does not hold',
  refund_amount: 'a refund gives back exactly what its debit took',
  opening_refused: 'only the install that registered the cabinet brings an opening balance, once',
};

interface Held {
  /** Entries the cabinet holds by id, and those of this device by job and kind (held, or earlier in the batch). */
  byId: Map<string, StoredWalletEntry>;
  byJob: Map<string, StoredWalletEntry>;
  opening: boolean;
  registeredBy: string | null;
}

const jobKey = (jobId: string, kind: string) => `${kind}:${jobId}`;

/** Whether an entry held under the same id is this very entry (sent again after a lost answer). */
function sameEntry(held: StoredWalletEntry, entry: SentWalletEntry, deviceId: string): boolean {
  return held.deviceId === deviceId && held.kind === entry.kind && held.amount === entry.amount && held.jobId === entry.job_id;
}

function refusalOf(entry: SentWalletEntry, deviceId: string, held: Held): Refusal | null {
  if (entry.kind === 'opening')
    return entry.job_id === null && entry.amount >= 0 && held.registeredBy === deviceId && !held.opening ? null : 'opening_refused';
  if (entry.job_id === null) return 'job_missing';
  if (entry.kind === 'debit') {
    if (entry.amount >= 0) return 'debit_not_negative';
    return held.byJob.has(jobKey(entry.job_id, 'debit')) ? 'job_already_debited' : null;
  }
  const debit = held.byJob.get(jobKey(entry.job_id, 'debit'));
  if (!debit) return 'no_matching_debit';
  if (entry.amount !== -debit.amount) return 'refund_amount';
  return held.byJob.has(jobKey(entry.job_id, 'refund')) ? 'job_already_refunded' : null;
}

/**
 * Sorts the entries sent into those the hub holds already (acknowledged again) and new ones,
 * checking each new one against what is held and what came before it in the batch. Any refusal
 * refuses the whole exchange: nothing is stored.
 */
function sortSent(
  entries: readonly SentWalletEntry[],
  deviceId: string,
  held: Held,
): { fresh: SentWalletEntry[]; again: Map<string, number> } {
  const fresh: SentWalletEntry[] = [];
  const again = new Map<string, number>();
  const refused: { entry_id: string; reason: Refusal; message: string }[] = [];
  for (const entry of entries) {
    const same = held.byId.get(entry.entry_id);
    const reason = same ? (sameEntry(same, entry, deviceId) ? null : 'entry_id_taken') : refusalOf(entry, deviceId, held);
    if (reason) {
      refused.push({ entry_id: entry.entry_id, reason, message: REASONS[reason] });
      continue;
    }
    if (same) {
      again.set(entry.entry_id, same.seq);
      continue;
    }
    fresh.push(entry);
    const pending = { seq: 0, entryId: entry.entry_id, kind: entry.kind, amount: entry.amount, jobId: entry.job_id, deviceId };
    held.byId.set(entry.entry_id, pending);
    if (entry.job_id !== null) held.byJob.set(jobKey(entry.job_id, entry.kind), pending);
    if (entry.kind === 'opening') held.opening = true;
  }
  if (refused.length > 0) {
    throw new ApiError(
      'wallet_entry_refused',
      `The hub refused ${refused.length} credits entr${refused.length === 1 ? 'y' : 'ies'} (${refused[0]?.message ?? ''}); nothing was stored.`,
      {
        refused: refused.slice(0, 20),
      },
    );
  }
  return { fresh, again };
}

/**
 * One wallet exchange of a device, in one transaction under the cabinet's lock: stores what it sent
 * that the hub lacks, then answers the balance and the entries after its cursor. Once committed,
 * the cabinet's long polls are woken (as after a push), so that the other installs exchange too.
 */
export async function exchangeWallet(
  deps: HubDeps,
  caller: AuthenticatedDevice,
  request: WalletExchangeBody & { protocol: number },
  log: WarnLog,
): Promise<WalletExchangeResponse> {
  assertProtocolServed(request.protocol, caller.highestProtocol);
  const jobIds = [...new Set(request.entries.flatMap((e) => (e.job_id === null ? [] : [e.job_id])))];
  const answer = await deps.sql.begin(async (tx) => {
    const wallet = await lockWallet(tx, caller.cabinetId);
    if (!wallet) throw new Error(`cabinet ${caller.cabinetId} vanished during a wallet exchange`);
    const related = await relatedEntries(
      tx,
      caller.cabinetId,
      caller.deviceId,
      request.entries.map((e) => e.entry_id),
      jobIds,
    );
    const held: Held = {
      byId: new Map(related.map((e) => [e.entryId, e])),
      byJob: new Map(
        related.filter((e) => e.deviceId === caller.deviceId && e.jobId !== null).map((e) => [jobKey(e.jobId ?? '', e.kind), e]),
      ),
      opening: request.entries.some((e) => e.kind === 'opening') && (await hasOpening(tx, caller.cabinetId)),
      registeredBy: wallet.registeredBy,
    };
    const { fresh, again } = sortSent(request.entries, caller.deviceId, held);
    if (wallet.registeredBy === caller.deviceId) await closeOpening(tx, caller.cabinetId);
    let balance = wallet.balance;
    let newestSeq = wallet.newestSeq;
    if (fresh.length > 0) {
      // Seqs are handed out one by one from 1 and entries never deleted: the newest seq is the ledger's size.
      assertWithinQuota('wallet_entries', newestSeq + fresh.length, deps.limits.cabinetWalletEntries);
      const rows: NewWalletEntry[] = fresh.map((e) => ({
        entryId: e.entry_id,
        kind: e.kind,
        amount: e.amount,
        jobId: e.job_id,
        deviceId: caller.deviceId,
        note: e.note,
      }));
      const stored = await appendWalletEntries(tx, caller.cabinetId, rows, hubTime(deps));
      stored.seqs.forEach((seq, i) => again.set(fresh[i]?.entry_id ?? '', seq));
      balance = stored.balance;
      newestSeq += fresh.length;
    }
    // A cursor past the newest seq (the hub was restored from a backup) gets last_seq below it: the install starts over.
    const entries = await walletEntriesAfter(tx, caller.cabinetId, Math.min(request.after, newestSeq), WALLET_PAGE + 1);
    const page = entries.slice(0, WALLET_PAGE);
    const more = entries.length > WALLET_PAGE;
    return {
      stored: fresh.length,
      body: {
        balance,
        acknowledged: request.entries.map((e) => ({ entry_id: e.entry_id, seq: again.get(e.entry_id) ?? 0 })),
        entries: page,
        last_seq: more ? (page[page.length - 1]?.seq ?? newestSeq) : newestSeq,
        more,
        hub_time: hubTime(deps),
      },
    };
  });
  if (answer.stored > 0) await wakeCabinet(deps, caller.cabinetId, log);
  return answer.body;
}

/** After the commit, as a push does: the cabinet's long polls on every hub process see the wallet moved. */
async function wakeCabinet(deps: Pick<HubDeps, 'sql'>, cabinetId: string, log: WarnLog): Promise<void> {
  await notifyChanges(deps.sql, cabinetId).catch((err: unknown) => {
    log.warn({ err, cabinet_id: cabinetId }, 'hub: a wallet entry committed but its long polls could not be woken');
  });
}

export interface HubGrant {
  cabinet_id: string;
  granted: number;
  balance: number;
  seq: number;
  entry_id: string;
}

/**
 * The operator mints credits for a cabinet (`courtier hub credits grant`): the one way credits enter
 * a synced cabinet. `record` writes what the grant's audit says in the grant's transaction: a grant
 * is never stored unaudited, nor granted twice by an operator who saw an error and ran it again.
 */
export async function grantHubCredits(
  deps: HubDeps,
  cabinetId: string,
  amount: number,
  note: string | null,
  log: WarnLog,
  record: (tx: TransactionSql, grant: HubGrant) => Promise<void> = async () => undefined,
): Promise<HubGrant> {
  if (!Number.isInteger(amount) || amount < 1 || amount > MAX_GRANT_CREDITS)
    throw new ApiError('validation_error', `The amount must be a whole number of credits from 1 to ${MAX_GRANT_CREDITS}.`);
  const entryId = timeOrderedUuid(deps.clock.now(), deps.randomBytes);
  const granted = await deps.sql.begin(async (tx) => {
    if (!(await lockWallet(tx, cabinetId)))
      throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub (courtier hub cabinets list shows them).`);
    const stored = await appendWalletEntries(
      tx,
      cabinetId,
      [{ entryId, kind: 'grant', amount, jobId: null, deviceId: null, note }],
      hubTime(deps),
    );
    const grant = { cabinet_id: cabinetId, granted: amount, balance: stored.balance, seq: stored.seqs[0] ?? 0, entry_id: entryId };
    await record(tx, grant);
    return grant;
  });
  await wakeCabinet(deps, cabinetId, log);
  return granted;
}

/** The cabinet's balance on the hub and its newest entries (`courtier hub credits balance`). */
export async function hubWalletBalance(
  deps: HubDeps,
  cabinetId: string,
  limit = 20,
): Promise<{ cabinet_id: string; balance: number; entries: HubWalletEntry[] }> {
  const [cabinet] = await deps.sql<{ wallet_balance: string }[]>`SELECT wallet_balance FROM hub_cabinets WHERE id = ${cabinetId}`;
  if (!cabinet) throw new ApiError('not_found', `No cabinet ${cabinetId} on this hub (courtier hub cabinets list shows them).`);
  return { cabinet_id: cabinetId, balance: Number(cabinet.wallet_balance), entries: await recentWalletEntries(deps.sql, cabinetId, limit) };
}
