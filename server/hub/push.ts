import type { FastifyBaseLogger } from 'fastify';
import { MAX_CHANGE_BYTES, type PushResponse, type SyncChange } from '../../shared/sync-protocol.js';
import { parseHlc } from '../../shared/hlc.js';
import { changeRuleBroken } from '../../shared/sync-rules.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';
import { hubTime, type HubDeps } from './deps.js';
import type { AuthenticatedDevice } from './devices.js';
import { assertClockNotAhead, assertProtocolServed } from './protocol.js';
import { assertWithinQuota } from './quota.js';
import { assertStorable } from './storable.js';
import { hasFollowUp, withoutErasedData } from './erasure.js';
import { followErasures } from './erasure-follow-up.js';
import { foldIntoRecords, type OversizedRecord } from './records.js';
import {
  allocateSeqs,
  insertChanges,
  insertStagedChanges,
  lockDevice,
  restageChanges,
  notifyChanges,
  scrubBeforeErasures,
  setLastNumber,
  stageChanges,
  storedStamps,
  type SizedChange,
  type StagedRange,
  type StoredBatch,
} from './store.js';
import type { TransactionSql } from 'postgres';

export interface Push {
  changes: readonly SyncChange[];
  protocol: number;
  /** X-Courtier-Device-Time, when the install sent it. */
  deviceTime: number | null;
}

/**
 * Stores a batch of one device's changes in one transaction and answers up to which number the
 * hub holds them. A replayed batch (a lost acknowledgement) stores nothing and gets the same
 * answer; a batch that skips numbers is refused with the number to start from. Once committed, the
 * cabinet's long polls are woken (notifyChanges), before the answer.
 */
export async function pushChanges(
  deps: HubDeps,
  caller: AuthenticatedDevice,
  push: Push,
  log: Pick<FastifyBaseLogger, 'warn'>,
): Promise<PushResponse> {
  assertProtocolServed(push.protocol, caller.highestProtocol);
  assertConsecutive(push.changes);
  assertStorable(push.changes, 'body.changes');
  const sized = push.changes.map(withSize);
  assertWithinRules(sized, caller.deviceId);
  const now = deps.clock.now();
  const latestHlc = push.changes.reduce((max, c) => (c.hlc > max ? c.hlc : max), '');
  assertClockNotAhead(now, [parseHlc(latestHlc).time, ...(push.deviceTime === null ? [] : [push.deviceTime])]);
  const acknowledged = await deps.sql.begin(async (tx) => {
    // A replay of what the hub held when the device was authenticated stores nothing: not staged.
    const staging = push.changes.length >= deps.limits.stagedPushChanges && (push.changes.at(-1)?.number ?? 0) > caller.lastNumber;
    if (staging) await stageChanges(tx, push.changes);
    const device = await lockDevice(tx, caller.cabinetId, caller.deviceId);
    if (!device || device.revoked)
      throw new ApiError('device_revoked', 'This device was revoked on the hub while it pushed; nothing was stored.');
    const first = push.changes[0]?.number ?? 0;
    if (first > device.lastNumber + 1) {
      throw new ApiError(
        'sync_gap',
        `The hub holds this device’s changes up to ${device.lastNumber}; send from ${device.lastNumber + 1}.`,
        {
          expected_number: device.lastNumber + 1,
        },
      );
    }
    await assertSameReplay(tx, caller, sized, device.lastNumber);
    const fresh = sized.filter((c) => c.number > device.lastNumber);
    if (fresh.length === 0) return device.lastNumber;
    const allocated = await allocateSeqs(tx, caller.cabinetId, fresh.length, push.protocol);
    // A newer install of the cabinet may have spoken since this request was authenticated.
    assertProtocolServed(push.protocol, allocated.highestProtocol);
    // Counted in the same UPDATE, under the cabinet's lock: concurrent pushes cannot pass the quota together.
    assertWithinQuota('changes', allocated.changesCount, deps.limits.cabinetChanges);
    const { firstSeq } = allocated;
    // Read under the cabinet's lock: an erasure committed by another device is seen, and one
    // committed after this push scrubs what it stores.
    const erasure = await withoutErasedData(tx, caller.cabinetId, fresh);
    const range = { firstSeq, from: device.lastNumber + 1, to: device.lastNumber + fresh.length };
    const receivedAt = new Date(now).toISOString();
    const { stored, changesBytes } = staging
      ? await insertRestaged(tx, caller, range, receivedAt, { fresh, stored: erasure.changes })
      : await insertChanges(tx, caller.cabinetId, caller.deviceId, firstSeq, receivedAt, erasure.changes);
    // Sizes as PostgreSQL writes the fields out, which is what a pull sends: JSON's 1e308 is 309 digits there.
    const largest = stored.reduce((max, change) => (change.bytes > max.bytes ? change : max), { number: 0, bytes: 0 });
    if (largest.bytes > MAX_CHANGE_BYTES) throw changeTooLarge(largest.number, largest.bytes);
    assertWithinQuota('change_bytes', changesBytes, deps.limits.cabinetChangeBytes);
    // What the new erasures reach further (the client's email and SIRET find opportunities: before scrubBeforeErasures empties them).
    const followsUp = hasFollowUp(erasure.followUp);
    if (followsUp) await followErasures(tx, caller.cabinetId, erasure.followUp);
    const erases = fresh.some((c) => c.op === 'erase');
    if (erases) await scrubBeforeErasures(tx, caller.cabinetId, firstSeq, firstSeq + fresh.length - 1);
    // From the changes as stored, once every scrub is done: the state is what they make. Without a
    // scrub, the staged rows are what was stored, with the sizes and stamps already worked out.
    const staged = !staging || followsUp || erases ? undefined : { deviceId: caller.deviceId, range };
    const contracts = fresh.some((c) => c.kind === 'contract');
    const oversized = await foldIntoRecords(tx, caller.cabinetId, firstSeq, firstSeq + fresh.length - 1, deps.limits.recordBytes, {
      staged,
      contracts,
    });
    if (oversized) throw recordTooLarge(fresh, oversized, deps.limits.recordBytes);
    const last = fresh[fresh.length - 1]?.number ?? device.lastNumber;
    await setLastNumber(tx, caller.cabinetId, caller.deviceId, last);
    return last;
  });
  // After the commit, so that pushes of different cabinets commit side by side (see notifyChanges);
  // a long poll woken by it reads after the commit, so it finds the changes. A replay notifies
  // again: its first attempt may have committed and lost its answer and its notification together
  // (the process stopped between the two). A rolled-back push never gets here.
  await notifyChanges(deps.sql, caller.cabinetId).catch((err: unknown) => {
    // The changes are stored: the answer says so. Long polls elsewhere end at their wait's end
    // (30 s at most), or at once if their LISTEN was cut too and reconnects.
    log.warn({ err, cabinet_id: caller.cabinetId }, 'hub: a push committed but its long polls could not be woken');
  });
  return { acknowledged_number: acknowledged, hub_time: hubTime(deps) };
}

/**
 * Stores the staged changes, those an erasure emptied staged again first: withoutErasedData returns
 * a change it keeps as it came and a copy of one it empties.
 */
async function insertRestaged(
  tx: TransactionSql,
  caller: AuthenticatedDevice,
  range: StagedRange,
  receivedAt: string,
  changes: { fresh: readonly SyncChange[]; stored: readonly SyncChange[] },
): Promise<StoredBatch> {
  const emptied = changes.stored.filter((change, i) => change !== changes.fresh[i]);
  if (emptied.length > 0) await restageChanges(tx, emptied);
  return insertStagedChanges(tx, caller.cabinetId, caller.deviceId, range, receivedAt);
}

/**
 * Numbers the hub holds come again in a replay (a lost acknowledgement) with the same changes; other
 * changes under them mean the install was restored from a backup and numbers again from there:
 * skipping them as a replay would lose them, so the install is told where to number from.
 */
async function assertSameReplay(
  tx: TransactionSql,
  caller: AuthenticatedDevice,
  changes: readonly SizedChange[],
  lastNumber: number,
): Promise<void> {
  const replayed = changes.filter((change) => change.number <= lastNumber);
  const first = replayed[0];
  const last = replayed[replayed.length - 1];
  if (!first || !last) return;
  const stored = await storedStamps(tx, caller.cabinetId, caller.deviceId, first.number, last.number);
  // A number compaction deleted cannot be compared: a replay comes seconds after its batch, never
  // past the retention, so such a batch is taken for a restored install's (sent again, it merges by stamp).
  if (replayed.every((change) => stored.get(change.number) === change.hlc)) return;
  throw new ApiError(
    'device_rewound',
    `The hub holds other changes of this device under numbers up to ${lastNumber}: this install was restored from a backup. Number its queue from ${lastNumber + 1}; nothing was stored.`,
    {
      expected_number: lastNumber + 1,
    },
  );
}

/** A change with the size of its fields, as the hub stores and counts it. */
function withSize(change: SyncChange): SizedChange {
  return { ...change, bytes: Buffer.byteLength(JSON.stringify(change.fields)) };
}

/**
 * The protocol's rules (changeRuleBroken), a size per change, and a clock stamped by the caller
 * itself: a device cannot win ties in another device's name. Nothing of the batch is stored.
 */
function assertWithinRules(changes: readonly SizedChange[], deviceId: string): void {
  const issues = changes.flatMap((change, i) => {
    const broken = changeRuleBroken(change);
    if (broken) return [{ path: `body.changes.${i}`, message: broken }];
    if (parseHlc(change.hlc).device !== deviceId)
      return [{ path: `body.changes.${i}.hlc`, message: 'the clock must be stamped with the sending device’s id' }];
    return [];
  });
  if (issues.length > 0) throw validationError(issues.slice(0, 20));
  // As sent: refused before any work. What is stored is measured again once written (see pushChanges).
  const largest = changes.find((change) => change.bytes > MAX_CHANGE_BYTES);
  if (largest) throw changeTooLarge(largest.number, largest.bytes);
}

function changeTooLarge(number: number, bytes: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `Change ${number} has ${bytes} bytes of fields; at most ${MAX_CHANGE_BYTES} are taken. Nothing was stored.`,
    {
      number,
      bytes,
      limit: MAX_CHANGE_BYTES,
    },
  );
}

/**
 * The batch's largest change of a record whose state it grew past the limit (the newest among
 * equals), refused as a change over the size limit is: the install sets it aside and sends the rest
 * again, so that a small edit beside the change that grew the record still goes (another change of
 * the record is named in turn if the state is still too large without it).
 */
function recordTooLarge(batch: readonly SizedChange[], record: OversizedRecord, limit: number): ApiError {
  const ofRecord = batch.filter((change) => change.kind === record.kind && change.record_id === record.record_id);
  const number =
    ofRecord.reduce<SizedChange | undefined>(
      (largest, change) => (largest === undefined || change.bytes >= largest.bytes ? change : largest),
      undefined,
    )?.number ?? 0;
  return new ApiError(
    'payload_too_large',
    `Change ${number} would make the state of ${record.kind} ${record.record_id} ${record.bytes} bytes of fields and stamps; a record holds at most ${limit}. Nothing was stored.`,
    { number, bytes: record.bytes, limit },
  );
}

/** Numbers follow each other by one: a batch with a hole would acknowledge a change never sent. */
function assertConsecutive(changes: readonly SyncChange[]): void {
  const issues = changes.flatMap((change, i) => {
    const previous = changes[i - 1];
    return previous && change.number !== previous.number + 1
      ? [
          {
            path: `body.changes.${i}.number`,
            message: `numbers must be consecutive: ${previous.number + 1} expected after ${previous.number}`,
          },
        ]
      : [];
  });
  if (issues.length > 0) throw validationError(issues);
}
