import type { PulledChange } from '../../shared/sync-protocol.js';
import { stateChange, type ApplicableChange } from './apply.js';
import { recordAudit } from '../audit/service.js';
import { HubRefusal } from './hub-client.js';
import { applyPage, PULL_PAGE, stageBlobs, type PullContext } from './pull.js';
import { HubEpochChanged, resyncWithHub } from './resync.js';
import * as stagedBlobs from './staged-blobs.js';
import * as store from './store.js';

/**
 * How an install catches up with the hub: a page at a time after its cursor (the engine's pull
 * loop), everything at once (join, reconnect), and, for a download from nothing (cursor 0) or a
 * cursor older than the changes the hub keeps (410 cursor_expired), the cabinet's current state
 * first, then the changes after the state's as_of_seq. The engine's pulls from 0 (a cabinet just
 * connected, a resync) read changes, so that the hub leaves this device's own out, until the hub
 * answers cursor_expired.
 */

/** A staged PDF older than this was left by a crash: no pull takes an hour between fetching a page and applying it. */
const STAGED_BLOBS_KEPT_MS = 3600_000;

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
  answeredAt: number;
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
  const page = await context.client.pull(
    { after, limit: PULL_PAGE, wait: options.wait, ...(own ? { own } : {}), ...walletAfter },
    options.signal,
  );
  const answeredAt = context.deps.clock.now();
  // A cursor past the cabinet's newest seq: the hub lost changes this install applied (restored from a backup).
  if (page.last_seq < after) throw new HubWentBack();
  // Read after the answer: a number given while the pull was on its way may already be on the hub.
  const nextNumber = store.findConnection(context.deps.db.orm, cabinetId)?.nextNumber;
  if (page.device_last_number !== undefined && nextNumber !== undefined && page.device_last_number >= nextNumber)
    throw new InstallWentBack(page.device_last_number);
  const changes = own ? page.changes : page.changes.filter((change) => change.device_id !== connection.deviceId);
  return {
    after,
    lastSeq: page.last_seq,
    more: page.more,
    changes,
    staged: await stageBlobs(context, cabinetId, changes),
    walletSeq: page.wallet_seq,
    answeredAt,
  };
}

/**
 * Reads the cabinet's current state from the hub and applies it, page by page, each page as pulled
 * changes are (field by field by stamp, every device's, the unpushed queue untouched), the next
 * page on its way while one is applied; then moves the cursor to the first page's as_of_seq, where
 * the pull goes on. A record changed while the pages are read comes newer in a later page and
 * again after as_of_seq: stamps merge it either way. A record that needs one further on (a contract
 * before its quote) is applied with the last page. Interrupted, it starts again from the first page.
 */
async function pullState(context: PullContext, cabinetId: string, progress: (applied: number) => void = () => undefined): Promise<number> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return 0;
  const pageAfter = (kind: string, id: string) => {
    const next = context.client.state({ after_kind: kind, after_id: id, limit: PULL_PAGE }).then(async (page) => {
      const changes = page.records.map(stateChange);
      return { page, changes, staged: await stageBlobs(context, cabinetId, changes) };
    });
    next.catch(() => undefined);
    return next;
  };
  const deferred: ApplicableChange[] = [];
  let asOf: number | undefined;
  let applied = 0;
  for (let next = pageAfter('', ''); ;) {
    const { page, changes, staged } = await next;
    asOf ??= page.as_of_seq;
    const last = page.records.at(-1);
    if (page.more && last) next = pageAfter(last.kind, last.record_id);
    const final = !page.more || !last;
    const count = applyPage(context, cabinetId, {
      after: start.pullCursor,
      lastSeq: final ? asOf : start.pullCursor,
      more: true,
      changes: final ? [...changes, ...deferred.splice(0)] : changes,
      staged,
      everyDevice: true,
      ...(final ? {} : { deferMissing: deferred }),
    });
    applied += count;
    if (count > 0) progress(applied);
    if (final) return applied;
  }
}

/** A cursor older than the changes the hub keeps: the state, then the changes after it; audited as a resync. */
async function readStateAgain(context: PullContext, cabinetId: string, details: unknown): Promise<void> {
  const from = store.findConnection(context.deps.db.orm, cabinetId)?.pullCursor ?? 0;
  const applied = await pullState(context, cabinetId);
  const oldest = (details as { oldest_seq?: unknown } | undefined)?.oldest_seq;
  recordAudit(context.deps, {
    cabinetId,
    action: 'sync.resynced',
    actor: { kind: 'system', id: null, label: 'sync', address: null, listener: 'internal' },
    details: {
      reason: 'cursor_expired',
      pulled_from: from,
      hub_oldest_seq: typeof oldest === 'number' ? oldest : null,
      records_read: applied,
    },
  });
}

/**
 * Runs a pull; a hub that went back in time (a new epoch, or a cursor past its newest seq), or an
 * install that did (the hub holds later changes of its device), makes this install start over with
 * it, and a cursor the hub no longer serves reads the state. The pull finds a restored install
 * before it pushes anything, so that the jobs it holds are known to have run elsewhere before its
 * robots could start them (cabinetsAwaitingHub).
 */
async function resyncingOnRewind<T>(context: PullContext, cabinetId: string, pull: () => Promise<T>, resynced: T): Promise<T> {
  try {
    return await pull();
  } catch (err) {
    if (err instanceof HubEpochChanged)
      resyncWithHub(context.deps, context.records, cabinetId, { reason: 'hub_restored', epoch: err.epoch, reupload: true });
    else if (err instanceof HubWentBack)
      resyncWithHub(context.deps, context.records, cabinetId, { reason: 'hub_went_back', reupload: true });
    else if (err instanceof InstallWentBack)
      resyncWithHub(context.deps, context.records, cabinetId, {
        reason: 'install_restored',
        renumberFrom: err.hubLastNumber + 1,
        reupload: false,
      });
    else if (err instanceof HubRefusal && err.code === 'cursor_expired') await readStateAgain(context, cabinetId, err.details);
    else throw err;
    return resynced;
  }
}

/**
 * Pulls one page of the cabinet's changes after this install's cursor and applies it. The changes and the cursor's move commit in one transaction, so a
 * crash leaves either both or neither (a cursor that moved before the writes were stored would skip
 * them for good). This device's own changes are already here: the hub leaves them out, and one that
 * came anyway would be skipped. With `wait`, the hub holds the request until there is something (a
 * long poll). Returns whether the hub has more.
 */
export async function pullOnce(
  context: PullContext,
  cabinetId: string,
  options: { wait: number; signal?: AbortSignal; walletAfter?: number },
): Promise<{ applied: number; more: boolean; walletSeq?: number }> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return { applied: 0, more: false };
  stagedBlobs.clearStaleStagedBlobs(context.deps.db.orm, cabinetId, context.deps.clock.now() - STAGED_BLOBS_KEPT_MS);
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
 * Pulls and applies everything the hub holds after this install's cursor (join, a restore): the
 * state first when it has nothing yet, then the changes after it, each page as pullOnce does; the
 * next page is on its way while one is applied, so that the hub reads and sends while this install
 * writes. Returns how many changes and records were applied.
 */
export async function pullEverything(context: PullContext, cabinetId: string, progress: (applied: number) => void): Promise<number> {
  const start = store.findConnection(context.deps.db.orm, cabinetId);
  if (!start) return 0;
  stagedBlobs.clearStaleStagedBlobs(context.deps.db.orm, cabinetId, context.deps.clock.now() - STAGED_BLOBS_KEPT_MS);
  const fromState =
    start.pullCursor === 0 ? await resyncingOnRewind(context, cabinetId, () => pullState(context, cabinetId, progress), -1) : 0;
  if (fromState < 0) return pullEverything(context, cabinetId, progress);
  const tail = (applied: number) => progress(fromState + applied);
  const current = store.findConnection(context.deps.db.orm, cabinetId) ?? start;
  const resynced = await resyncingOnRewind(context, cabinetId, () => pullPages(context, cabinetId, current, tail), -1);
  // Started over, or read the state again: what is left, from there.
  return resynced >= 0 ? fromState + resynced : fromState + (await pullEverything(context, cabinetId, tail));
}

async function pullPages(
  context: PullContext,
  cabinetId: string,
  start: store.ConnectionRow,
  progress: (applied: number) => void,
): Promise<number> {
  const pageAfter = (after: number) => {
    const next = fetchPage(context, cabinetId, start, after, { wait: 0 });
    // Awaited on the next turn of the loop; a failure meanwhile is not an unhandled rejection.
    next.catch(() => undefined);
    return next;
  };
  let applied = 0;
  for (let next = pageAfter(start.pullCursor); ;) {
    const fetched = await next;
    if (fetched.more) next = pageAfter(fetched.lastSeq);
    const count = applyPage(context, cabinetId, fetched);
    applied += count;
    if (count > 0) progress(applied);
    if (!fetched.more) return applied;
  }
}
