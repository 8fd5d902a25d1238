import type { PulledChange } from '../../shared/sync-protocol.js';
import { applyChange, stateChange } from './apply.js';
import type { ApplyContext } from './synced-table.js';
import { HubRefusal } from './hub-client.js';
import { setAsideChange } from './set-aside.js';
import * as stagedBlobs from './staged-blobs.js';
import * as store from './store.js';
import { auditPage, isMachineError, PULL_PAGE, stageBlobs, type PullContext } from './pull.js';
import * as conflictsStore from './conflicts-store.js';

/** What became of a set-aside change tried again. */
export type RetryOutcome = 'applied' | 'set_aside' | 'gone';

/**
 * Tries set-aside changes again, oldest first: they are fetched whole from the hub (this install
 * kept an excerpt only), by pages, with their PDFs, and applied as a pulled change is, each in a
 * savepoint; the cursor does not move; one the hub compacted, or a record set aside as its state
 * (a join, a resync), as the record it holds now (retryFromState). One that applies leaves the list; one still refused stays, with the new reason;
 * one the hub holds no more, change nor record, stays. Per-field clocks make a late apply safe: a
 * field changed since keeps its later value.
 */
export async function retrySetAside(context: PullContext, cabinetId: string, seqs: readonly number[]): Promise<Map<number, RetryOutcome>> {
  const { db } = context.deps;
  const outcomes = new Map<number, RetryOutcome>();
  const connection = store.findConnection(db.orm, cabinetId);
  if (!connection) return outcomes;
  const targets = [...new Set(seqs)].flatMap((seq) => {
    const conflict = conflictsStore.findConflict(db.orm, cabinetId, seq);
    return conflict ? [{ seq, kind: conflict.kind, recordId: conflict.recordId, fromState: conflict.fromState }] : [];
  });
  // A record set aside from the hub's state is tried as its state again: the change under its seq holds only that change's fields.
  for (const target of targets) if (target.fromState) outcomes.set(target.seq, 'gone');
  const wanted = targets
    .filter((target) => !target.fromState)
    .map((target) => target.seq)
    .sort((x, y) => x - y);
  for (let next = 0; next < wanted.length;) {
    const first = wanted[next] as number;
    const page = await context.client.pull({ after: first - 1, limit: PULL_PAGE, wait: 0 }).catch((err: unknown) => {
      // Compacted on the hub: the change's effect is in the records' state, and it is gone.
      if (err instanceof HubRefusal && err.code === 'cursor_expired') return { changes: [], more: false, last_seq: 0, hub_time: '' };
      throw err;
    });
    // What this page answers for: up to its last change while the hub has more, else everything.
    const covered = page.more ? (page.changes.at(-1)?.seq ?? first) : Number.MAX_SAFE_INTEGER;
    const found = page.changes.filter((change) => change.device_id !== connection.deviceId && wanted.includes(change.seq));
    const staged = await stageBlobs(context, cabinetId, found);
    db.immediateTransaction(() => {
      const now = context.deps.clock.now();
      const applyContext = { blob: (sha: string) => stagedBlobs.readStagedBlob(db.orm, cabinetId, sha), now, deps: context.deps };
      for (const change of found) outcomes.set(change.seq, retryOne(context, cabinetId, change, applyContext));
      stagedBlobs.clearStagedBlobs(db.orm, cabinetId, staged);
    });
    if (found.some((change) => change.kind === 'event')) context.deps.outbox.notify();
    for (; next < wanted.length && (wanted[next] as number) <= Math.max(covered, first); next += 1) {
      const seq = wanted[next] as number;
      if (!outcomes.has(seq)) outcomes.set(seq, 'gone');
    }
  }
  await retryFromState(context, cabinetId, targets, outcomes);
  return outcomes;
}

/**
 * A change tried again that the hub no longer has (compacted: its effect is in the record's state),
 * or a record set aside as its state, is tried as the record the hub holds now. Only then: the
 * state also holds the record's other fields, which may carry a value this install refuses for its
 * own reason. One still refused stays aside under its seq.
 */
async function retryFromState(
  context: PullContext,
  cabinetId: string,
  targets: readonly { seq: number; kind: string; recordId: string }[],
  outcomes: Map<number, RetryOutcome>,
): Promise<void> {
  const { db } = context.deps;
  for (const target of targets) {
    if (outcomes.get(target.seq) !== 'gone') continue;
    const [record] = (await context.client.state({ kind: target.kind, record_id: target.recordId })).records;
    if (!record) continue;
    const change = { ...stateChange(record), seq: target.seq };
    const staged = await stageBlobs(context, cabinetId, [change]);
    db.immediateTransaction(() => {
      const applyContext = {
        blob: (sha: string) => stagedBlobs.readStagedBlob(db.orm, cabinetId, sha),
        now: context.deps.clock.now(),
        deps: context.deps,
      };
      outcomes.set(target.seq, retryOne(context, cabinetId, change, applyContext));
      stagedBlobs.clearStagedBlobs(db.orm, cabinetId, staged);
    });
  }
}

/** One set-aside change applied again, in a savepoint of the caller's transaction. */
function retryOne(
  context: Pick<PullContext, 'deps' | 'records'>,
  cabinetId: string,
  change: PulledChange,
  applyContext: ApplyContext,
): RetryOutcome {
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
  conflictsStore.deleteConflict(db.orm, cabinetId, change.seq);
  if (outcome === 'applied' && change.op === 'erase' && change.kind === 'client') auditPage(context.deps, cabinetId, [change], 0, []);
  return 'applied';
}

/**
 * Applies the changes a newer version sent once this install knows their kind and fields (it was
 * updated): what it could not store then arrives now, and a change it still cannot stays aside.
 */
export async function applyNowUnderstood(context: PullContext, cabinetId: string): Promise<number> {
  const understood = conflictsStore.listNotUnderstood(context.deps.db.orm, cabinetId).filter((conflict) => {
    const adapter = context.records.get(conflict.kind);
    return (
      adapter !== undefined && adapter.unknownFields(Object.fromEntries(conflict.notUnderstood.map((field) => [field, null]))).length === 0
    );
  });
  if (understood.length === 0) return 0;
  const outcomes = await retrySetAside(
    context,
    cabinetId,
    understood.map((conflict) => conflict.seq),
  );
  return [...outcomes.values()].filter((outcome) => outcome === 'applied').length;
}
