import { createHash } from 'node:crypto';
import type { PulledChange } from '../../shared/sync-protocol.js';
import { parseHlc } from '../../shared/hlc.js';
import type { Deps } from '../deps.js';
import { recordAudit, type AuditActor } from '../audit/service.js';
import { applyChange, type ApplicableChange, type RecordsByKind } from './apply.js';
import type { Refusal } from './synced-table.js';
import { storedSha256 } from './stored-values.js';
import { receive } from './hlc.js';
import { HubRefusal, type HubClient } from './hub-client.js';
import { setAsideChange, trimSetAside } from './set-aside.js';
import * as stagedBlobs from './staged-blobs.js';
import * as store from './store.js';
import * as conflictsStore from './conflicts-store.js';

/**
 * Refusals of a PDF that speak of this device or this moment (busy, revoked, a protocol to update):
 * the page is tried again later. Any other (unknown, too large, a redirect) lasts: the quote syncs without its PDF.
 */
const TRANSIENT_REFUSALS = new Set([
  'sync_too_many_requests',
  'device_revoked',
  'invalid_device_credential',
  'missing_credentials',
  'sync_protocol_too_old',
  'sync_protocol_unsupported',
  'hub_database_unavailable',
]);

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
export async function stageBlobs(context: PullContext, cabinetId: string, changes: PulledChange[]): Promise<string[]> {
  const orm = context.deps.db.orm;
  const staged: string[] = [];
  for (const change of changes) {
    const adapter = context.records.get(change.kind);
    for (const sha of adapter?.blobsOf?.(change.fields) ?? []) {
      if (
        !storedSha256.safeParse(sha).success ||
        staged.includes(sha) ||
        adapter?.hasBlob?.(orm, cabinetId, sha) ||
        stagedBlobs.hasStagedBlob(orm, cabinetId, sha)
      )
        continue;
      let bytes: Buffer;
      try {
        bytes = await context.client.getBlob(sha);
      } catch (err) {
        // A refusal about this device or this moment (busy, revoked, too old) is tried again with the page.
        if (err instanceof HubRefusal && !TRANSIENT_REFUSALS.has(err.code)) continue;
        throw err;
      }
      if (createHash('sha256').update(bytes).digest('hex') !== sha) continue;
      stagedBlobs.stageBlob(orm, cabinetId, sha, bytes, context.deps.clock.now());
      staged.push(sha);
    }
  }
  return staged;
}

/** What the audit log says of a page: each client erased by another install, and how much was set aside, from which devices. */
export function auditPage(
  deps: PullContext['deps'],
  cabinetId: string,
  erased: PulledChange[],
  setAside: number,
  changes: PulledChange[],
): void {
  for (const change of erased) {
    recordAudit(deps, {
      cabinetId,
      action: 'sync.erasure_applied',
      actor: SYNC_ACTOR,
      target: change.record_id,
      details: { kind: change.kind, device_id: change.device_id, seq: change.seq },
    });
  }
  if (setAside === 0) return;
  const conflicts = conflictsStore.conflictsOfSeqs(
    deps.db.orm,
    cabinetId,
    changes.map((change) => change.seq),
  );
  recordAudit(deps, {
    cabinetId,
    action: 'sync.changes_set_aside',
    result: 'failure',
    actor: SYNC_ACTOR,
    details: {
      count: conflicts.length,
      devices: [...new Set(conflicts.map((c) => c.deviceId))],
      reasons: [...new Set(conflicts.map((c) => c.reason))],
    },
  });
}

/** Who applies what the hub brings: the sync of this install, on another install's behalf. */
export const SYNC_ACTOR: AuditActor = {
  kind: 'system',
  id: null,
  label: 'sync (another install of the cabinet)',
  address: null,
  listener: 'internal',
};

/** What applyPage applies, and the cursor it moves from `after` to `lastSeq`. */
export interface AppliedPage {
  after: number;
  lastSeq: number;
  more?: boolean;
  changes: ApplicableChange[];
  staged?: string[];
  /** When the hub's answer arrived: a page that ends the history holds every change made until then (its PDFs may take longer). */
  answeredAt?: number;
  /** Records' states: applied whichever device made them (a state merges every device's changes). */
  everyDevice?: boolean;
  /** Changes a record they need is still missing for (a contract before its quote) go here instead of aside, to be applied with a later page. */
  deferMissing?: ApplicableChange[];
}

/** SQLite errors that say something about this machine, not about the change: the page is retried, never set aside. */
const MACHINE_ERRORS = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|NOMEM|READONLY|CANTOPEN|CORRUPT|NOTADB|INTERRUPT|PROTOCOL)/;

/** A change that threw while a page was applied without savepoints: the page is applied again, guarded. */
class UnguardedFailure extends Error {
  override name = 'UnguardedFailure';
}

export const isMachineError = (err: unknown) => {
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
export function applyPage(context: Pick<PullContext, 'deps' | 'records'>, cabinetId: string, page: AppliedPage): number {
  const { db } = context.deps;
  const orm = db.orm;
  const apply = (guarded: boolean) =>
    db.immediateTransaction(() => {
      const connection = store.findConnection(orm, cabinetId);
      // Another process (the CLI, the service) applied this page meanwhile, or sync was turned off.
      if (!connection || connection.pullCursor !== page.after) return 0;
      if (!guarded) db.sqlite.pragma('defer_foreign_keys = ON');
      const now = context.deps.clock.now();
      const applyContext = { blob: (sha: string) => stagedBlobs.readStagedBlob(orm, cabinetId, sha), now, deps: context.deps };
      let setAsideHere = 0;
      const setAside = (change: ApplicableChange, refusal: Refusal) => {
        setAsideHere += 1;
        setAsideChange(orm, cabinetId, change, refusal, now);
      };
      const erased: ApplicableChange[] = [];
      const settle = (change: ApplicableChange, outcome: ReturnType<typeof applyChange>) => {
        if (typeof outcome === 'object') setAside(change, outcome);
        else if (outcome === 'applied' && change.op === 'erase' && change.kind === 'client') erased.push(change);
      };
      const attempt = (change: ApplicableChange, lastTry: boolean): 'done' | 'retry' => {
        if (!guarded) {
          try {
            settle(change, applyChange(orm, cabinetId, context.records, change, applyContext));
            return 'done';
          } catch (err) {
            throw isMachineError(err) ? err : new UnguardedFailure((err as Error).message);
          }
        }
        try {
          settle(
            change,
            db.transaction(() => applyChange(orm, cabinetId, context.records, change, applyContext)),
          );
          return 'done';
        } catch (err) {
          if (isMachineError(err)) throw err;
          // A record the change needs may come further on in the page (a contract before its quote).
          const missing = (err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
          if (!lastTry && missing) return 'retry';
          if (missing && page.deferMissing) {
            page.deferMissing.push(change);
            return 'done';
          }
          setAside(change, { reason: 'not_applicable', message: `this install could not apply it: ${(err as Error).message}` });
          return 'done';
        }
      };
      let clock = { time: connection.clockTime, counter: connection.clockCounter };
      let remoteTime = connection.remoteClockTime;
      const retry: ApplicableChange[] = [];
      for (const change of page.changes) {
        if (change.device_id === connection.deviceId && !connection.resyncing && !page.everyDevice) continue;
        if (attempt(change, false) === 'retry') retry.push(change);
        const remote = parseHlc(change.hlc);
        clock = receive(clock, remote, now);
        remoteTime = Math.max(remoteTime, remote.time);
      }
      for (const change of retry) attempt(change, true);
      if (setAsideHere > 0) trimSetAside(orm, cabinetId);
      auditPage(context.deps, cabinetId, erased, setAsideHere, page.changes);
      stagedBlobs.clearStagedBlobs(orm, cabinetId, page.staged ?? []);
      // A resync ends once the history is pulled again up to the cabinet's newest change.
      const resyncing = connection.resyncing && page.more !== false;
      const caughtUp = page.more === false ? { caughtUpAt: page.answeredAt ?? now } : {};
      store.updateConnection(orm, cabinetId, {
        pullCursor: page.lastSeq,
        lastPullAt: now,
        ...caughtUp,
        clockTime: clock.time,
        clockCounter: clock.counter,
        remoteClockTime: remoteTime,
        resyncing,
      });
      return page.changes.length;
    });
  let applied: number;
  try {
    applied = apply(false);
  } catch (err) {
    // The commit's deferred foreign keys throw from the transaction itself, not from a change.
    if (isMachineError(err) || !(err instanceof UnguardedFailure || (err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY'))
      throw err;
    applied = apply(true);
  }
  if (page.changes.some((change) => change.kind === 'event')) context.deps.outbox.notify();
  return applied;
}
