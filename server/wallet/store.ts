import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, lt, notInArray, or, sql, sum } from 'drizzle-orm';
import type { Orm } from '../platform/db/open.js';
import { inJsonArray, placeholdersFor, preparedQuery } from '../platform/db/prepared-query.js';
import { walletBalances, walletHubLinks, walletLedger } from './schema.js';

export type LedgerRow = typeof walletLedger.$inferSelect;
export type HubLinkRow = typeof walletHubLinks.$inferSelect;

/**
 * Placeholders of the queries prepared once (prepared-query.ts): every enqueue debits, and every
 * finished job reads its entries. `.set()`'s types take no placeholder: there it is wrapped in an
 * `sql` fragment.
 */
const P = sql.placeholder;

/**
 * An entry waiting for the hub. The hub states a query compares are written in its SQL, not bound:
 * SQLite can use the partial index on `hub_state = 'pending'` for a literal only, and prepares a
 * statement that binds a value there again on every call.
 */
const PENDING = sql`${walletLedger.hubState} = 'pending'`;
/**
 * This install's own entries (made here): what its jobs were debited and refunded. Written as the
 * partial index on a job's own entries says it, so that SQLite reads a job's entries through it.
 */
const OWN = sql`${walletLedger.hubState} IS NOT 'mirrored'`;

const BALANCE = preparedQuery((orm) =>
  orm
    .select({ balance: walletBalances.balance })
    .from(walletBalances)
    .where(eq(walletBalances.cabinetId, P('cabinetId'))),
);

export function balance(orm: Orm, cabinetId: string): number {
  return BALANCE(orm).get({ cabinetId })?.balance ?? 0;
}

const SET_BALANCE = preparedQuery((orm) =>
  orm
    .insert(walletBalances)
    .values({ cabinetId: P('cabinetId'), balance: P('balance') })
    .onConflictDoUpdate({ target: walletBalances.cabinetId, set: { balance: sql`${P('balance')}` } }),
);

export function setBalance(orm: Orm, cabinetId: string, value: number): void {
  SET_BALANCE(orm).run({ cabinetId, balance: value });
}

/** Inserts an entry unless a unique index says it is there already. */
const INSERT_ENTRY = preparedQuery((orm) => orm.insert(walletLedger).values(placeholdersFor(walletLedger)).onConflictDoNothing());

const MOVE_BALANCE = preparedQuery((orm) =>
  orm
    .insert(walletBalances)
    .values({ cabinetId: P('cabinetId'), balance: P('amount') })
    .onConflictDoUpdate({ target: walletBalances.cabinetId, set: { balance: sql`${walletBalances.balance} + ${P('amount')}` } }),
);

/**
 * Appends an entry and moves the balance by its amount; false, changing nothing, when the job
 * already has an entry of that kind (the unique index said no). Callers run it in a transaction.
 */
export function appendEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  if (INSERT_ENTRY(orm).run(row).changes === 0) return false;
  MOVE_BALANCE(orm).run({ cabinetId: row.cabinetId, amount: row.amount });
  return true;
}

/** Writes an entry that came from the hub without moving the balance (the hub's balance is the authority); false if it is here already. */
export function mirrorEntry(orm: Orm, row: Omit<LedgerRow, 'id'>): boolean {
  return INSERT_ENTRY(orm).run(row).changes > 0;
}

/** The ledger's own sum, to check the running balance against (tests, audits). */
export function ledgerSum(orm: Orm, cabinetId: string): number {
  return Number(
    orm
      .select({ total: sum(walletLedger.amount) })
      .from(walletLedger)
      .where(eq(walletLedger.cabinetId, cabinetId))
      .get()?.total ?? 0,
  );
}

/** The sum of the amounts of the ledger's entries, 0 when there is none. */
const TOTAL = sql`coalesce(sum(${walletLedger.amount}), 0)`.mapWith(Number);

const COUNTED_ON_TOP = preparedQuery((orm) =>
  orm
    .select({ total: TOTAL })
    .from(walletLedger)
    .where(
      and(
        eq(walletLedger.cabinetId, P('cabinetId')),
        or(PENDING, and(isNull(walletLedger.hubState), gt(walletLedger.id, P('sinceEntry')))),
      ),
    ),
);

/** The sum of the entries made here that the balance counts on top of the link's base: pending ones, and those made after an unlink. */
export function countedOnTop(orm: Orm, cabinetId: string, sinceEntry: number): number {
  return COUNTED_ON_TOP(orm).get({ cabinetId, sinceEntry })?.total ?? 0;
}

const PENDING_SPEND = preparedQuery((orm) =>
  orm
    .select({ total: TOTAL })
    .from(walletLedger)
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), PENDING, inArray(walletLedger.kind, ['debit', 'refund']))),
);

/** Credits spent here (net of refunds) that the hub has not acknowledged: the offline allowance's count. */
export function pendingSpend(orm: Orm, cabinetId: string): number {
  return 0 - (PENDING_SPEND(orm).get({ cabinetId })?.total ?? 0);
}

const PENDING_ENTRIES = preparedQuery((orm) =>
  orm
    .select()
    .from(walletLedger)
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), PENDING))
    .orderBy(sql`${walletLedger.kind} <> 'opening'`, asc(walletLedger.id))
    .limit(P('limit')),
);

/** The entries to send, oldest first but an opening first of all: the hub takes it only in the registering device's first exchange. */
export function pendingEntries(orm: Orm, cabinetId: string, limit: number): LedgerRow[] {
  return PENDING_ENTRIES(orm).all({ cabinetId, limit });
}

/** One form with the hub's seq, one without (it is then left alone). */
const SET_HUB_STATE = preparedQuery((orm, withSeq: boolean) =>
  orm
    .update(walletLedger)
    .set(withSeq ? { hubState: sql`${P('hubState')}`, hubSeq: sql`${P('hubSeq')}` } : { hubState: sql`${P('hubState')}` })
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), eq(walletLedger.entryId, P('entryId')))),
);

export function setHubState(
  orm: Orm,
  cabinetId: string,
  entryId: string,
  changes: { hubState: LedgerRow['hubState']; hubSeq?: number },
): void {
  const { hubState, hubSeq } = changes;
  SET_HUB_STATE(orm, hubSeq !== undefined).run({ cabinetId, entryId, hubState, hubSeq });
}

const RESEND_HELD = preparedQuery((orm) =>
  orm
    .update(walletLedger)
    .set({ hubState: 'pending', hubSeq: null })
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), sql`${walletLedger.hubState} = 'held'`)),
);

/** Every entry made here and held by the hub goes back to pending (sent again: the hub may have lost it). */
export function resendHeld(orm: Orm, cabinetId: string): void {
  RESEND_HELD(orm).run({ cabinetId });
}

const KEEP_OWN_HERE = preparedQuery((orm) =>
  orm
    .update(walletLedger)
    .set({ hubState: null })
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), sql`${walletLedger.hubState} IN ('pending', 'held')`)),
);

/**
 * The link ends, or a new one begins: entries made here stay this install's history. Those the hub
 * never acknowledged are not sent any more, and those it held are an earlier device's, whose
 * refunds the next device could not make (the hub takes a refund of the sender's own debit only).
 */
export function keepOwnHere(orm: Orm, cabinetId: string): void {
  KEEP_OWN_HERE(orm).run({ cabinetId });
}

const UNSENT_DEBITS = preparedQuery((orm) =>
  orm
    .select()
    .from(walletLedger)
    .where(
      and(
        eq(walletLedger.cabinetId, P('cabinetId')),
        eq(walletLedger.kind, 'debit'),
        lt(walletLedger.amount, 0),
        isNull(walletLedger.hubState),
        inJsonArray(walletLedger.jobId, P('jobIds')),
        notInArray(
          walletLedger.jobId,
          orm
            .select({ jobId: walletLedger.jobId })
            .from(walletLedger)
            .where(
              and(
                eq(walletLedger.cabinetId, P('cabinetId')),
                eq(walletLedger.kind, 'refund'),
                isNotNull(walletLedger.jobId),
                sql`${walletLedger.hubState} IS NOT 'mirrored'`,
              ),
            ),
        ),
      ),
    ),
);

/** This install's debits of these jobs that are not the hub's (made before the link), took credits and were not refunded. */
export function unsentDebits(orm: Orm, cabinetId: string, jobIds: readonly string[]): LedgerRow[] {
  if (jobIds.length === 0) return [];
  return UNSENT_DEBITS(orm).all({ cabinetId, jobIds: JSON.stringify(jobIds) });
}

const MARK_PENDING = preparedQuery((orm) =>
  orm
    .update(walletLedger)
    .set({ hubState: 'pending', entryId: sql`${P('entryId')}` })
    .where(eq(walletLedger.id, P('id'))),
);

/** An entry made here becomes one to send, under this entry id. */
export function markPending(orm: Orm, id: number, entryId: string): void {
  MARK_PENDING(orm).run({ id, entryId });
}

const NEWEST_ENTRY_ID = preparedQuery((orm) =>
  orm
    .select({ id: sql`coalesce(max(${walletLedger.id}), 0)`.mapWith(Number) })
    .from(walletLedger)
    .where(eq(walletLedger.cabinetId, P('cabinetId'))),
);

export function newestEntryId(orm: Orm, cabinetId: string): number {
  return NEWEST_ENTRY_ID(orm).get({ cabinetId })?.id ?? 0;
}

export function recentEntries(orm: Orm, cabinetId: string, limit: number): LedgerRow[] {
  return orm.select().from(walletLedger).where(eq(walletLedger.cabinetId, cabinetId)).orderBy(desc(walletLedger.id)).limit(limit).all();
}

const JOB_ENTRIES = preparedQuery((orm) =>
  orm
    .select()
    .from(walletLedger)
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), eq(walletLedger.jobId, P('jobId')), OWN)),
);

/** This install's entries of one of its jobs (the other installs' entries of a job are theirs). */
export function jobEntries(orm: Orm, cabinetId: string, jobId: string): LedgerRow[] {
  return JOB_ENTRIES(orm).all({ cabinetId, jobId });
}

const JOBS_CONSUMED = preparedQuery((orm) =>
  orm
    .select({ jobId: walletLedger.jobId, consumed: sql`0 - sum(${walletLedger.amount})`.mapWith(Number) })
    .from(walletLedger)
    .where(and(eq(walletLedger.cabinetId, P('cabinetId')), inJsonArray(walletLedger.jobId, P('jobIds')), OWN))
    .groupBy(walletLedger.jobId),
);

/** Debited minus refunded per job, for this install's own jobs among `jobIds` (the others have no row). */
export function jobsConsumed(orm: Orm, cabinetId: string, jobIds: readonly string[]): { jobId: string | null; consumed: number }[] {
  return JOBS_CONSUMED(orm).all({ cabinetId, jobIds: JSON.stringify(jobIds) });
}

const LINK = preparedQuery((orm) =>
  orm
    .select()
    .from(walletHubLinks)
    .where(eq(walletHubLinks.cabinetId, P('cabinetId'))),
);

export function findLink(orm: Orm, cabinetId: string): HubLinkRow | undefined {
  return LINK(orm).get({ cabinetId });
}

export function saveLink(orm: Orm, row: HubLinkRow): void {
  orm.insert(walletHubLinks).values(row).onConflictDoUpdate({ target: walletHubLinks.cabinetId, set: row }).run();
}

/** Its columns vary per call, and it runs once per exchange with the hub: built each time. */
export function updateLink(orm: Orm, cabinetId: string, changes: Partial<HubLinkRow>): void {
  orm.update(walletHubLinks).set(changes).where(eq(walletHubLinks.cabinetId, cabinetId)).run();
}
