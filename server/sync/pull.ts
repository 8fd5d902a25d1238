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

/** A page pulled after `after`, with the PDFs it names that this install lacks: ready to apply. */
interface FetchedPage {
  after: number;
  lastSeq: number;
  more: boolean;
  changes: PulledChange[];
  blobs: Map<string, Buffer>;
}

async function fetchPage(context: PullContext, cabinetId: string, deviceId: string, after: number, options: { wait: number; signal?: AbortSignal }): Promise<FetchedPage> {
  const page = await context.client.pull({ after, limit: PULL_PAGE, wait: options.wait }, options.signal);
  const changes = page.changes.filter((change) => change.device_id !== deviceId);
  return { after, lastSeq: page.last_seq, more: page.more, changes, blobs: await fetchBlobs(context, cabinetId, changes) };
}

/**
 * Pulls one page of the cabinet's changes after this install's cursor and applies it. The changes
 * and the cursor's move commit in one transaction, so a crash leaves either both or neither (a
 * cursor that moved before the writes were stored would skip them for good). This device's own
 * changes are already here: the hub leaves them out, and one that came anyway would be skipped.
 * With `wait`, the hub holds the request until there is something (a long poll). Returns whether
 * the hub has more.
 */
export async function pullOnce(context: PullContext, cabinetId: string, options: { wait: number; signal?: AbortSignal }): Promise<{ applied: number; more: boolean }> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return { applied: 0, more: false };
  const fetched = await fetchPage(context, cabinetId, start.deviceId, start.pullCursor, options);
  return { applied: applyPage(context, cabinetId, fetched, fetched.blobs), more: fetched.more };
}

/**
 * Pulls and applies everything the hub holds after this install's cursor (join, a restore), each
 * page as pullOnce does; the next page is on its way while one is applied, so that the hub reads
 * and sends while this install writes. Returns how many changes were applied.
 */
export async function pullEverything(context: PullContext, cabinetId: string, progress: (applied: number) => void): Promise<number> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return 0;
  const pageAfter = (after: number) => {
    const next = fetchPage(context, cabinetId, start.deviceId, after, { wait: 0 });
    // Awaited on the next turn of the loop; a failure meanwhile is not an unhandled rejection.
    next.catch(() => undefined);
    return next;
  };
  let applied = 0;
  for (let next = pageAfter(start.pullCursor); ; ) {
    const fetched = await next;
    if (fetched.more) next = pageAfter(fetched.lastSeq);
    const count = applyPage(context, cabinetId, fetched, fetched.blobs);
    applied += count;
    if (count > 0) progress(applied);
    if (!fetched.more) return applied;
  }
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
  const applied = context.deps.db.immediateTransaction(() => {
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
  });
  if (page.changes.some((change) => change.kind === 'event')) context.deps.outbox.notify();
  return applied;
}
