import { parseHlc, type PulledChange } from '../../shared/sync-protocol.js';
import type { Deps } from '../deps.js';
import { applyChange, type RecordsByKind } from './apply.js';
import { receive } from './hlc.js';
import { HubRefusal, type HubClient } from './hub-client.js';
import * as store from './store.js';

/** Changes asked for per pull (the hub serves at most 1000). */
export const PULL_PAGE = 1000;

export interface PullContext {
  deps: Pick<Deps, 'db' | 'clock' | 'outbox' | 'syncChanges'>;
  records: RecordsByKind;
  client: HubClient;
}

/** The PDFs the page names that this install lacks, fetched before the transaction that applies it. */
async function fetchBlobs(context: PullContext, cabinetId: string, changes: PulledChange[]): Promise<Map<string, Buffer>> {
  const blobs = new Map<string, Buffer>();
  for (const change of changes) {
    const adapter = context.records.get(change.kind);
    for (const sha of adapter?.blobsOf?.(change.fields) ?? []) {
      if (blobs.has(sha) || adapter?.hasBlob?.(context.deps.db.orm, cabinetId, sha)) continue;
      try {
        blobs.set(sha, await context.client.getBlob(sha));
      } catch (err) {
        // A quote whose PDF the hub lacks still syncs; its PDF stays unavailable here.
        if (!(err instanceof HubRefusal && err.code === 'not_found')) throw err;
      }
    }
  }
  return blobs;
}

/**
 * Pulls one page of the cabinet's changes after this install's cursor and applies it. The changes
 * and the cursor's move commit in one transaction, so a crash leaves either both or neither (a
 * cursor that moved before the writes were stored would skip them for good). This device's own
 * changes are already here: the hub leaves them out, and one that came anyway would be skipped. With `wait`, the hub holds the request until there
 * is something (a long poll). Returns whether the hub has more.
 */
export async function pullOnce(context: PullContext, cabinetId: string, options: { wait: number; signal?: AbortSignal }): Promise<{ applied: number; more: boolean }> {
  const { orm } = context.deps.db;
  const start = store.findConnection(orm, cabinetId);
  if (!start) return { applied: 0, more: false };
  const page = await context.client.pull({ after: start.pullCursor, limit: PULL_PAGE, wait: options.wait }, options.signal);
  const foreign = page.changes.filter((change) => change.device_id !== start.deviceId);
  const blobs = await fetchBlobs(context, cabinetId, foreign);
  const applied = applyPage(context, cabinetId, { after: start.pullCursor, lastSeq: page.last_seq, changes: foreign }, blobs);
  return { applied, more: page.more };
}

/**
 * Applies other devices' changes pulled after `after`, and moves the cursor to `lastSeq`, in one
 * transaction. The hybrid clock moves past every change applied, so that a change made here later
 * orders after them (without that, a local edit could win here and lose everywhere else).
 */
export function applyPage(
  context: Pick<PullContext, 'deps' | 'records'>,
  cabinetId: string,
  page: { after: number; lastSeq: number; changes: PulledChange[] },
  blobs: ReadonlyMap<string, Buffer>,
): number {
  const { orm, sqlite } = context.deps.db;
  const applied = sqlite
    .transaction(() => {
      const connection = store.findConnection(orm, cabinetId);
      // Another process (the CLI, the service) applied this page meanwhile, or sync was turned off.
      if (!connection || connection.pullCursor !== page.after) return 0;
      // Within a page, a contract may come before its quote's row is written: check references at commit.
      sqlite.pragma('defer_foreign_keys = ON');
      const now = context.deps.clock.now();
      let clock = { time: connection.clockTime, counter: connection.clockCounter };
      let remoteTime = connection.remoteClockTime;
      for (const change of page.changes) {
        if (change.device_id === connection.deviceId) continue;
        applyChange(orm, cabinetId, context.records, change, { blobs, now, deps: context.deps });
        const remote = parseHlc(change.hlc);
        clock = receive(clock, remote, now);
        remoteTime = Math.max(remoteTime, remote.time);
      }
      store.updateConnection(orm, cabinetId, { pullCursor: page.lastSeq, lastPullAt: now, clockTime: clock.time, clockCounter: clock.counter, remoteClockTime: remoteTime });
      return page.changes.length;
    })
    .immediate();
  if (page.changes.some((change) => change.kind === 'event')) context.deps.outbox.notify();
  return applied;
}
