import { createHash } from 'node:crypto';
import { parseHlc, type PulledChange } from '../../shared/sync-protocol.js';
import type { Deps } from '../deps.js';
import { recordAudit, type AuditActor } from '../audit/service.js';
import { applyChange, type RecordsByKind } from './apply.js';
import type { ApplyContext, Refusal } from './synced-table.js';
import { storedSha256 } from './stored-values.js';
import { receive } from './hlc.js';
import { HubRefusal, type HubClient } from './hub-client.js';
import { HubEpochChanged, resyncWithHub } from './resync.js';
import { setAsideChange, trimSetAside } from './set-aside.js';
import * as store from './store.js';

/** A staged PDF older than this was left by a crash: no pull takes an hour between fetching a page and applying it. */
const STAGED_BLOBS_KEPT_MS = 3600_000;

/**
 * Refusals of a PDF that speak of this device or this moment (busy, revoked, a protocol to update):
 * the page is tried again later. Any other (unknown, too large, a redirect) lasts: the quote syncs without its PDF.
 */
const TRANSIENT_REFUSALS = new Set(['sync_too_many_requests', 'device_revoked', 'invalid_device_credential', 'missing_credentials', 'sync_protocol_too_old', 'sync_protocol_unsupported', 'hub_database_unavailable']);

/** Changes asked for per pull (the hub serves at most 1000). */
export const PULL_PAGE = 1000;

export interface PullContext {
  deps: Pick<Deps, 'db' | 'clock' | 'outbox' | 'syncChanges' | 'keys'>;
  records: RecordsByKind;
  client: HubClient;
}

/**
 * Fetches the PDFs the page names that this install lacks, one at a time, and stages each in SQLite
 * as it arrives, so that a page's PDFs are never all in memory. A PDF the hub refuses (unknown,
 * malformed, behind a redirect), one too large or one whose bytes do not hash to its name is not
 * staged: its quote syncs, and its PDF stays unavailable here. Returns the SHA-256s staged.
 */
async function stageBlobs(context: PullContext, cabinetId: string, changes: PulledChange[]): Promise<string[]> {
  const orm = context.deps.db.orm;
  const staged: string[] = [];
  for (const change of changes) {
    const adapter = context.records.get(change.kind);
    for (const sha of adapter?.blobsOf?.(change.fields) ?? []) {
      if (!storedSha256.safeParse(sha).success || staged.includes(sha) || adapter?.hasBlob?.(orm, cabinetId, sha) || store.hasStagedBlob(orm, cabinetId, sha)) continue;
      let bytes: Buffer;
      try {
        bytes = await context.client.getBlob(sha);
      } catch (err) {
        // A refusal about this device or this moment (busy, revoked, too old) is tried again with the page.
        if (err instanceof HubRefusal && !TRANSIENT_REFUSALS.has(err.code)) continue;
        throw err;
      }
      if (createHash('sha256').update(bytes).digest('hex') !== sha) continue;
      store.stageBlob(orm, cabinetId, sha, bytes, context.deps.clock.now());
      staged.push(sha);
    }
  }
  return staged;
}

/** A page pulled after `after`, with the PDFs it names that this install lacks: ready to apply. */
interface FetchedPage {
  after: number;
  lastSeq: number;
  more: boolean;
  changes: PulledChange[];
  /** The SHA-256s of the PDFs staged for it. */
  staged: string[];
  /** The cabinet's newest credits entry on the hub, when it said. */
  walletSeq: number | undefined;
}

/** The hub went back in time: the page cannot be applied, and this install starts over with it. */
class HubWentBack extends Error {
  override name = 'HubWentBack';
}

/** The hub holds changes of this device past any number it gave: this install was restored from a backup. */
class InstallWentBack extends Error {
  override name = 'InstallWentBack';
  constructor(readonly hubLastNumber: number) {
    super('this install was restored from a backup (the hub holds later changes of its device)');
  }
}

/** A page after `after`; while resyncing, this device's own changes too (an install restored from a backup gets back what it made since). */
async function fetchPage(
  context: PullContext,
  cabinetId: string,
  connection: { deviceId: string; resyncing: boolean },
  after: number,
  options: { wait: number; signal?: AbortSignal; walletAfter?: number },
): Promise<FetchedPage> {
  const own = connection.resyncing;
  const walletAfter = options.walletAfter === undefined ? {} : { wallet_after: options.walletAfter };
  const page = await context.client.pull({ after, limit: PULL_PAGE, wait: options.wait, ...(own ? { own } : {}), ...walletAfter }, options.signal);
  // A cursor past the cabinet's newest seq: the hub lost changes this install applied (restored from a backup).
  if (page.last_seq < after) throw new HubWentBack();
  // Read after the answer: a number given while the pull was on its way may already be on the hub.
  const nextNumber = store.findConnection(context.deps.db.orm, cabinetId)?.nextNumber;
  if (page.device_last_number !== undefined && nextNumber !== undefined && page.device_last_number >= nextNumber) throw new InstallWentBack(page.device_last_number);
  const changes = own ? page.changes : page.changes.filter((change) => change.device_id !== connection.deviceId);
  return { after, lastSeq: page.last_seq, more: page.more, changes, staged: await stageBlobs(context, cabinetId, changes), walletSeq: page.wallet_seq };
}

/**
 * Runs a pull; a hub that went back in time (a new epoch, or a cursor past its newest seq), or an
 * install that did (the hub holds later changes of its device), makes this install start over with
 * it instead. The pull finds a restored install before it pushes anything, so that the jobs it
 * holds are known to have run elsewhere before its robots could start them (cabinetsAwaitingHub).
 */
async function resyncingOnRewind<T>(context: PullContext, cabinetId: string, pull: () => Promise<T>, resynced: T): Promise<T> {
  try {
    return await pull();
  } catch (err) {
    if (err instanceof HubEpochChanged) resyncWithHub(context.deps, context.records, cabinetId, { reason: 'hub_restored', epoch: err.epoch, reupload: true });
    else if (err instanceof HubWentBack) resyncWithHub(context.deps, context.records, cabinetId, { reason: 'hub_went_back', reupload: true });
    else if (err instanceof InstallWentBack) resyncWithHub(context.deps, context.records, cabinetId, { reason: 'install_restored', renumberFrom: err.hubLastNumber + 1, reupload: false });
    else throw err;
    return resynced;
  }
}

/**
 * Pulls one page of the cabinet's changes after this install's cursor and applies it. The changes
 * and the cursor's move commit in one transaction, so a crash leaves either both or neither (a
 * cursor that moved before the writes were stored would skip them for good). This device's own
 * changes are already here: the hub leaves them out, and one that came anyway would be skipped.
 * With `wait`, the hub holds the request until there is something (a long poll). Returns whether
 * the hub has more.
 */
export async function pullOnce(
  context: PullContext,
  cabinetId: string,
  options: { wait: number; signal?: AbortSignal; walletAfter?: number },
): Promise<{ applied: number; more: boolean; walletSeq?: number }> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return { applied: 0, more: false };
  store.clearStaleStagedBlobs(context.deps.db.orm, cabinetId, context.deps.clock.now() - STAGED_BLOBS_KEPT_MS);
  return resyncingOnRewind(
    context,
    cabinetId,
    async () => {
      const fetched = await fetchPage(context, cabinetId, start, start.pullCursor, options);
      return { applied: applyPage(context, cabinetId, fetched), more: fetched.more, walletSeq: fetched.walletSeq };
    },
    { applied: 0, more: true, walletSeq: undefined },
  );
}

/**
 * Pulls and applies everything the hub holds after this install's cursor (join, a restore), each
 * page as pullOnce does; the next page is on its way while one is applied, so that the hub reads
 * and sends while this install writes. Returns how many changes were applied.
 */
export async function pullEverything(context: PullContext, cabinetId: string, progress: (applied: number) => void): Promise<number> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return 0;
  store.clearStaleStagedBlobs(context.deps.db.orm, cabinetId, context.deps.clock.now() - STAGED_BLOBS_KEPT_MS);
  const resynced = await resyncingOnRewind(context, cabinetId, () => pullPages(context, cabinetId, start, progress), -1);
  // Started over: everything again, from the start.
  return resynced >= 0 ? resynced : pullEverything(context, cabinetId, progress);
}

async function pullPages(context: PullContext, cabinetId: string, start: store.ConnectionRow, progress: (applied: number) => void): Promise<number> {
  const pageAfter = (after: number) => {
    const next = fetchPage(context, cabinetId, start, after, { wait: 0 });
    // Awaited on the next turn of the loop; a failure meanwhile is not an unhandled rejection.
    next.catch(() => undefined);
    return next;
  };
  let applied = 0;
  for (let next = pageAfter(start.pullCursor); ; ) {
    const fetched = await next;
    if (fetched.more) next = pageAfter(fetched.lastSeq);
    const count = applyPage(context, cabinetId, fetched);
    applied += count;
    if (count > 0) progress(applied);
    if (!fetched.more) return applied;
  }
}

/** What the audit log says of a page: each client erased by another install, and how much was set aside, from which devices. */
function auditPage(deps: PullContext['deps'], cabinetId: string, erased: PulledChange[], setAside: number, changes: PulledChange[]): void {
  for (const change of erased) {
    recordAudit(deps, { cabinetId, action: 'sync.erasure_applied', actor: SYNC_ACTOR, target: change.record_id, details: { kind: change.kind, device_id: change.device_id, seq: change.seq } });
  }
  if (setAside === 0) return;
  const conflicts = store.conflictsOfSeqs(deps.db.orm, cabinetId, changes.map((change) => change.seq));
  recordAudit(deps, {
    cabinetId,
    action: 'sync.changes_set_aside',
    result: 'failure',
    actor: SYNC_ACTOR,
    details: { count: conflicts.length, devices: [...new Set(conflicts.map((c) => c.deviceId))], reasons: [...new Set(conflicts.map((c) => c.reason))] },
  });
}

/** Who applies what the hub brings: the sync of this install, on another install's behalf. */
export const SYNC_ACTOR: AuditActor = { kind: 'system', id: null, label: 'sync (another install of the cabinet)', address: null, listener: 'internal' };


/** SQLite errors that say something about this machine, not about the change: the page is retried, never set aside. */
const MACHINE_ERRORS = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|NOMEM|READONLY|CANTOPEN|CORRUPT|NOTADB|INTERRUPT|PROTOCOL)/;

/** A change that threw while a page was applied without savepoints: the page is applied again, guarded. */
class UnguardedFailure extends Error {
  override name = 'UnguardedFailure';
}

const isMachineError = (err: unknown) => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && MACHINE_ERRORS.test(code);
};

/**
 * Applies other devices' changes pulled after `after`, and moves the cursor to `lastSeq`, in one
 * transaction. The hybrid clock moves past every change applied, so that a change made here later
 * orders after them (without that, a local edit could win here and lose everywhere else).
 *
 * No change can stop the pull: one that its kind refuses is set aside (`sync_conflicts`) before
 * anything of it is written, and the page goes on. A page is first applied as it comes, foreign keys
 * checked at commit (a contract may come before its quote); should anything throw — a constraint,
 * the commit's foreign keys — the page is applied again with each change in a savepoint, so that
 * the one that fails is undone alone and set aside. In that guarded pass a missing foreign key may
 * only mean that the page holds what the change needs further on, so those are tried once more at its end.
 */
export function applyPage(context: Pick<PullContext, 'deps' | 'records'>, cabinetId: string, page: { after: number; lastSeq: number; more?: boolean; changes: PulledChange[]; staged?: string[] }): number {
  const { db } = context.deps;
  const orm = db.orm;
  const apply = (guarded: boolean) =>
    db.immediateTransaction(() => {
      const connection = store.findConnection(orm, cabinetId);
      // Another process (the CLI, the service) applied this page meanwhile, or sync was turned off.
      if (!connection || connection.pullCursor !== page.after) return 0;
      if (!guarded) db.sqlite.pragma('defer_foreign_keys = ON');
      const now = context.deps.clock.now();
      const applyContext = { blob: (sha: string) => store.readStagedBlob(orm, cabinetId, sha), now, deps: context.deps };
      let setAsideHere = 0;
      const setAside = (change: PulledChange, refusal: Refusal) => {
        setAsideHere += 1;
        setAsideChange(orm, cabinetId, change, refusal, now);
      };
      const erased: PulledChange[] = [];
      const settle = (change: PulledChange, outcome: ReturnType<typeof applyChange>) => {
        if (typeof outcome === 'object') setAside(change, outcome);
        else if (outcome === 'applied' && change.op === 'erase' && change.kind === 'client') erased.push(change);
      };
      const attempt = (change: PulledChange, lastTry: boolean): 'done' | 'retry' => {
        if (!guarded) {
          try {
            settle(change, applyChange(orm, cabinetId, context.records, change, applyContext));
            return 'done';
          } catch (err) {
            throw isMachineError(err) ? err : new UnguardedFailure((err as Error).message);
          }
        }
        try {
          settle(change, db.transaction(() => applyChange(orm, cabinetId, context.records, change, applyContext)));
          return 'done';
        } catch (err) {
          if (isMachineError(err)) throw err;
          // A record the change needs may come further on in the page (a contract before its quote).
          if (!lastTry && (err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'retry';
          setAside(change, { reason: 'not_applicable', message: `this install could not apply it: ${(err as Error).message}` });
          return 'done';
        }
      };
      let clock = { time: connection.clockTime, counter: connection.clockCounter };
      let remoteTime = connection.remoteClockTime;
      const retry: PulledChange[] = [];
      for (const change of page.changes) {
        if (change.device_id === connection.deviceId && !connection.resyncing) continue;
        if (attempt(change, false) === 'retry') retry.push(change);
        const remote = parseHlc(change.hlc);
        clock = receive(clock, remote, now);
        remoteTime = Math.max(remoteTime, remote.time);
      }
      for (const change of retry) attempt(change, true);
      if (setAsideHere > 0) trimSetAside(orm, cabinetId);
      auditPage(context.deps, cabinetId, erased, setAsideHere, page.changes);
      store.clearStagedBlobs(orm, cabinetId, page.staged ?? []);
      // A resync ends once the history is pulled again up to the cabinet's newest change.
      const resyncing = connection.resyncing && page.more !== false;
      store.updateConnection(orm, cabinetId, { pullCursor: page.lastSeq, lastPullAt: now, clockTime: clock.time, clockCounter: clock.counter, remoteClockTime: remoteTime, resyncing });
      return page.changes.length;
    });
  let applied: number;
  try {
    applied = apply(false);
  } catch (err) {
    // The commit's deferred foreign keys throw from the transaction itself, not from a change.
    if (isMachineError(err) || !(err instanceof UnguardedFailure || (err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY')) throw err;
    applied = apply(true);
  }
  if (page.changes.some((change) => change.kind === 'event')) context.deps.outbox.notify();
  return applied;
}

/** What became of a set-aside change tried again. */
export type RetryOutcome = 'applied' | 'set_aside' | 'gone';

/**
 * Tries set-aside changes again, oldest first: they are fetched whole from the hub (this install
 * kept an excerpt only), by pages, with their PDFs, and applied as a pulled change is, each in a
 * savepoint; the cursor does not move. One that applies leaves the list; one still refused stays,
 * with the new reason; one the hub no longer serves stays. Per-field clocks make a late apply safe:
 * a field changed since keeps its later value.
 */
export async function retrySetAside(context: PullContext, cabinetId: string, seqs: readonly number[]): Promise<Map<number, RetryOutcome>> {
  const { db } = context.deps;
  const outcomes = new Map<number, RetryOutcome>();
  const connection = store.findConnection(db.orm, cabinetId);
  if (!connection) return outcomes;
  const wanted = [...new Set(seqs)].filter((seq) => store.findConflict(db.orm, cabinetId, seq) !== undefined).sort((x, y) => x - y);
  for (let next = 0; next < wanted.length; ) {
    const first = wanted[next] as number;
    const page = await context.client.pull({ after: first - 1, limit: PULL_PAGE, wait: 0 });
    // What this page answers for: up to its last change while the hub has more, else everything.
    const covered = page.more ? (page.changes.at(-1)?.seq ?? first) : Number.MAX_SAFE_INTEGER;
    const found = page.changes.filter((change) => change.device_id !== connection.deviceId && wanted.includes(change.seq));
    const staged = await stageBlobs(context, cabinetId, found);
    db.immediateTransaction(() => {
      const now = context.deps.clock.now();
      const applyContext = { blob: (sha: string) => store.readStagedBlob(db.orm, cabinetId, sha), now, deps: context.deps };
      for (const change of found) outcomes.set(change.seq, retryOne(context, cabinetId, change, applyContext));
      store.clearStagedBlobs(db.orm, cabinetId, staged);
    });
    if (found.some((change) => change.kind === 'event')) context.deps.outbox.notify();
    for (; next < wanted.length && (wanted[next] as number) <= Math.max(covered, first); next += 1) {
      const seq = wanted[next] as number;
      if (!outcomes.has(seq)) outcomes.set(seq, 'gone');
    }
  }
  return outcomes;
}

/** One set-aside change applied again, in a savepoint of the caller's transaction. */
function retryOne(context: Pick<PullContext, 'deps' | 'records'>, cabinetId: string, change: PulledChange, applyContext: ApplyContext): RetryOutcome {
  const { db } = context.deps;
  let outcome: ReturnType<typeof applyChange>;
  try {
    outcome = db.transaction(() => applyChange(db.orm, cabinetId, context.records, change, applyContext));
  } catch (err) {
    if (isMachineError(err)) throw err;
    outcome = { reason: 'not_applicable', message: `this install could not apply it: ${(err as Error).message}` };
  }
  if (typeof outcome === 'object') {
    setAsideChange(db.orm, cabinetId, change, outcome, applyContext.now);
    return 'set_aside';
  }
  store.deleteConflict(db.orm, cabinetId, change.seq);
  if (outcome === 'applied' && change.op === 'erase' && change.kind === 'client') auditPage(context.deps, cabinetId, [change], 0, []);
  return 'applied';
}

/**
 * Applies the changes a newer version sent once this install knows their kind and fields (it was
 * updated): what it could not store then arrives now, and a change it still cannot stays aside.
 */
export async function applyNowUnderstood(context: PullContext, cabinetId: string): Promise<number> {
  const understood = store.listNotUnderstood(context.deps.db.orm, cabinetId).filter((conflict) => {
    const adapter = context.records.get(conflict.kind);
    return adapter !== undefined && adapter.unknownFields(Object.fromEntries(conflict.notUnderstood.map((field) => [field, null]))).length === 0;
  });
  if (understood.length === 0) return 0;
  const outcomes = await retrySetAside(context, cabinetId, understood.map((conflict) => conflict.seq));
  return [...outcomes.values()].filter((outcome) => outcome === 'applied').length;
}
