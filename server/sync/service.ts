import type { PairResponse } from '../../shared/sync-pairing.js';
import { formatHlc } from '../../shared/hlc.js';
import type { SyncStatus } from '../../shared/console-sync.js';
import { initCabinetSchema } from '../../shared/tenancy.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { toValidationIssues, validationError } from '../platform/http/validation.js';
import { adoptCabinet, cabinetName } from '../tenancy/service.js';
import { unfinishedJobIdsHere } from '../automation/sync.js';
import { recordAudit, type AuditActor } from '../audit/service.js';
import type { RecordsByKind } from './apply.js';
import { later, tick, type ClockState } from './hlc.js';
import { checkHubUrl, createHubClient, HubRefusal, type HubClient, type HubFetch } from './hub-client.js';
import { HubEpochChanged, queueOwnEdits } from './resync.js';
import * as store from './store.js';
import { linkWallet, unlinkWallet } from '../wallet/hub-link.js';
import { exchangeWallet } from './wallet-exchange.js';
import { syncStatus } from './status.js';

/** The device credential's name in the secret store (the OS keychain in the desktop app). */
export function deviceSecretName(cabinetId: string): string {
  return `sync-device:${cabinetId}`;
}

export type SyncDeps = Pick<Deps, 'db' | 'clock' | 'secrets' | 'syncChanges' | 'syncLinks' | 'keys' | 'randomBytes'>;

function hubUrlOrThrow(text: string): string {
  const url = checkHubUrl(text);
  if (typeof url === 'string') throw new ApiError('invalid_hub_url', `Hub URL refused: ${url}.`);
  return url.toString().replace(/\/+$/, '');
}

/** A client of the cabinet's hub, with the device credential from the secret store. */
export function hubClientFor(
  deps: SyncDeps,
  connection: store.ConnectionRow,
  fetch: HubFetch,
  onHubTime?: (hub: number, local: number) => void,
): HubClient {
  const credential = deps.secrets.get(deviceSecretName(connection.cabinetId));
  if (credential === undefined)
    throw new ApiError('sync_off', 'This device’s hub credential is missing from the secret store; disconnect and connect again.');
  return createHubClient({
    hubUrl: connection.hubUrl,
    credential,
    fetch,
    now: () => deps.clock.now(),
    onHubTime,
    onHubEpoch: (epoch) => checkHubEpoch(deps, connection.cabinetId, epoch),
  });
}

/** What an epoch looks like: anything else from a hub is ignored. */
const EPOCH_PATTERN = /^[0-9A-Za-z-]{1,64}$/;

/**
 * The hub's epoch in an answer: noted the first time; a different one means the hub's database was
 * restored from a backup, and the answer must not be used (HubEpochChanged: the caller resyncs).
 */
function checkHubEpoch(deps: Pick<Deps, 'db'>, cabinetId: string, epoch: string): void {
  if (!EPOCH_PATTERN.test(epoch)) return;
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection || connection.hubEpoch === epoch) return;
  if (connection.hubEpoch === null) return store.updateConnection(deps.db.orm, cabinetId, { hubEpoch: epoch });
  throw new HubEpochChanged(epoch);
}

function newConnection(deps: SyncDeps, cabinetId: string, hubUrl: string, paired: PairResponse, deviceName: string): store.ConnectionRow {
  const now = deps.clock.now();
  return {
    cabinetId,
    hubUrl,
    deviceId: paired.device_id,
    deviceName,
    paused: false,
    nextNumber: 1,
    acknowledgedNumber: 0,
    pullCursor: 0,
    clockTime: now,
    clockCounter: 0,
    acknowledgedClockTime: 0,
    remoteClockTime: 0,
    hubEpoch: null,
    resyncing: false,
    state: 'idle',
    lastError: null,
    lastErrorCode: null,
    lastErrorAt: null,
    offlineSince: null,
    hubClockOffset: Date.parse(paired.hub_time) - now,
    lastPushAt: null,
    lastPullAt: null,
    caughtUpAt: null,
    connectedAt: now,
  };
}

/**
 * Queues every record the cabinet holds, one change each, in the transaction that turns sync on: a
 * change made meanwhile is captured after them, never lost between the snapshot and the link.
 *
 * They write no field clocks (that would be a large share of the snapshot's time), as a creation
 * does not (capture.ts): no other device knows these records before it pulls them from this very
 * upload.
 */
function queueEverything(deps: SyncDeps, connection: store.ConnectionRow, records: RecordsByKind): number {
  const orm = deps.db.orm;
  let clock: ClockState = { time: connection.clockTime, counter: connection.clockCounter };
  let number = connection.nextNumber;
  for (const adapter of records.values()) {
    for (const { recordId, fields } of adapter.snapshot(deps.db, connection.cabinetId)) {
      clock = tick(clock, deps.clock.now());
      const hlc = formatHlc({ time: clock.time, counter: clock.counter, device: connection.deviceId });
      store.appendOutbox(orm, {
        cabinetId: connection.cabinetId,
        number,
        kind: adapter.kind,
        recordId,
        op: 'upsert',
        hlc,
        fields: JSON.stringify(fields),
      });
      number += 1;
    }
  }
  store.updateConnection(orm, connection.cabinetId, { nextNumber: number, clockTime: clock.time, clockCounter: clock.counter });
  return number - connection.nextNumber;
}

/**
 * The audit entry of a connect (or a join), in its transaction: which hub (its host, never a
 * credential), as which device: a cabinet uploaded to a hub is something its administrators must see.
 */
function auditConnected(
  deps: SyncDeps,
  connection: store.ConnectionRow,
  actor: AuditActor,
  details: { records_uploaded: number } | { joined: true } | { reconnected: true; changes_uploaded: number },
): void {
  recordAudit(deps, {
    cabinetId: connection.cabinetId,
    action: 'sync.connected',
    actor,
    target: connection.deviceId,
    details: { hub: new URL(connection.hubUrl).host, device_name: connection.deviceName, ...details },
  });
}

/**
 * Registers this install's cabinet on the hub (the hub's cabinet takes its id and name) and queues
 * everything it holds for upload. The caller then pushes (the CLI at once; the service in the background).
 */
export async function connectCabinet(
  deps: SyncDeps,
  input: { cabinetId: string; hubUrl: string; code: string; deviceName: string },
  io: { fetch: HubFetch; records: RecordsByKind },
  actor: AuditActor,
): Promise<{ device_id: string; cabinet_id: string; queued: number; reconnected: boolean }> {
  const hubUrl = hubUrlOrThrow(input.hubUrl);
  const name = cabinetName(deps, input.cabinetId);
  if (name === undefined) throw new ApiError('not_found', `No cabinet with id ${input.cabinetId} on this install.`);
  if (store.findConnection(deps.db.orm, input.cabinetId))
    throw new ApiError('sync_already_on', `The cabinet ${input.cabinetId} already syncs with a hub.`);
  const client = createHubClient({ hubUrl, fetch: io.fetch, now: () => deps.clock.now() });
  const { paired, reconnected } = await pairOwnCabinet(client, { ...input, name });
  deps.secrets.set(deviceSecretName(input.cabinetId), paired.device_secret);
  const connection = newConnection(deps, input.cabinetId, hubUrl, paired, input.deviceName);
  const detached = store.findDetached(deps.db.orm, input.cabinetId);
  // The link's clock starts past every change made here while disconnected.
  const clock = later(
    { time: connection.clockTime, counter: connection.clockCounter },
    { time: detached?.clockTime ?? 0, counter: detached?.clockCounter ?? 0 },
  );
  connection.clockTime = clock.time;
  connection.clockCounter = clock.counter;
  const queued = deps.db.immediateTransaction(() => {
    if (store.findConnection(deps.db.orm, input.cabinetId))
      throw new ApiError('sync_already_on', `The cabinet ${input.cabinetId} already syncs with a hub.`);
    store.insertConnection(deps.db.orm, connection);
    store.rememberOwnDevice(deps.db.orm, input.cabinetId, paired.device_id);
    store.endDetached(deps.db.orm, input.cabinetId);
    // The install that registers the cabinet brings its balance, once; one that reconnects takes the cabinet's.
    linkWallet(
      deps,
      input.cabinetId,
      paired.device_id,
      reconnected ? { bringsBalance: false } : { bringsBalance: true, unfinishedJobIds: unfinishedJobIdsHere(deps, input.cabinetId) },
    );
    if (reconnected) {
      const changes = queueOwnEdits(deps, connection, io.records);
      auditConnected(deps, connection, actor, { reconnected: true, changes_uploaded: changes });
      return changes;
    }
    const records = queueEverything(deps, connection, io.records);
    auditConnected(deps, connection, actor, { records_uploaded: records });
    return records;
  });
  deps.syncLinks.notify();
  return { device_id: paired.device_id, cabinet_id: input.cabinetId, queued, reconnected };
}

/**
 * Pairs this install's cabinet: registered on the hub with a code made for it, or, with a code that
 * joins the cabinet the hub already has under this very id (the way back after a revocation or a
 * hub restored from a backup), reconnected to it. The hub refuses a code that joins another cabinet.
 */
async function pairOwnCabinet(
  client: HubClient,
  input: { cabinetId: string; name: string; code: string; deviceName: string },
): Promise<{ paired: PairResponse; reconnected: boolean }> {
  const paired = await client.pair({ code: input.code, device_name: input.deviceName, cabinet: { id: input.cabinetId, name: input.name } });
  return { paired, reconnected: paired.reconnected === true };
}

/**
 * Joins a cabinet that is on the hub: creates it here with the hub's id and name and a local admin
 * account, and links it; the caller then downloads everything (this is also how a lost laptop is
 * restored). The account is checked before the pairing code is spent.
 */
export async function joinCabinet(
  deps: Deps,
  input: { hubUrl: string; code: string; deviceName: string; email: string; password: string },
  io: { fetch: HubFetch },
  actor: AuditActor,
): Promise<{ cabinet_id: string; user_id: string; device_id: string }> {
  const hubUrl = hubUrlOrThrow(input.hubUrl);
  const account = initCabinetSchema.safeParse({ cabinet: 'check', email: input.email, password: input.password });
  if (!account.success) throw validationError(toValidationIssues(account.error, undefined));
  const client = createHubClient({ hubUrl, fetch: io.fetch, now: () => deps.clock.now() });
  const paired = await client.pair({ code: input.code, device_name: input.deviceName });
  const connection = newConnection(deps, paired.cabinet_id, hubUrl, paired, input.deviceName);
  const created = await adoptCabinet(
    deps,
    { cabinetId: paired.cabinet_id, cabinet: paired.cabinet_name, email: input.email, password: input.password },
    () => {
      store.insertConnection(deps.db.orm, connection);
      store.rememberOwnDevice(deps.db.orm, paired.cabinet_id, paired.device_id);
      linkWallet(deps, paired.cabinet_id, paired.device_id, { bringsBalance: false });
      auditConnected(deps, connection, actor, { joined: true });
    },
  );
  deps.secrets.set(deviceSecretName(paired.cabinet_id), paired.device_secret);
  return { cabinet_id: created.cabinet_id, user_id: created.user_id, device_id: paired.device_id };
}

export function connectionOrThrow(deps: Pick<Deps, 'db'>, cabinetId: string): store.ConnectionRow {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) throw new ApiError('sync_off', `The cabinet ${cabinetId} does not sync with a hub.`);
  return connection;
}

/** How long disconnecting waits for the hub to hear that the device leaves. */
const LEAVE_TIMEOUT_MS = 5000;

/**
 * Turns sync off for the cabinet: the device leaves the hub (revoked there, so its credential
 * opens nothing any more), then its link, queue and clocks go; its records stay. A hub that cannot
 * be told (unreachable, or the credential gone from the secret store) does not stop the
 * disconnect: the answer says so, and the hub's operator can revoke the device.
 */
export async function disconnectCabinet(
  deps: SyncDeps,
  cabinetId: string,
  io: { fetch: HubFetch },
  actor: AuditActor,
): Promise<{ left_hub: boolean; device_id: string }> {
  const connection = connectionOrThrow(deps, cabinetId);
  let leftHub = false;
  try {
    const client = hubClientFor(deps, connection, io.fetch);
    // The credits spent here reach the cabinet's wallet before the device leaves, when the hub answers.
    await exchangeWallet({ deps, client }, cabinetId).catch(() => undefined);
    await client.leave(LEAVE_TIMEOUT_MS);
    leftHub = true;
  } catch (err) {
    // Already revoked is as good as leaving; anything else is said in the answer, and the local disconnect goes on.
    leftHub = err instanceof HubRefusal && err.code === 'device_revoked';
  }
  deps.db.immediateTransaction(() => {
    store.detachConnection(deps.db.orm, store.findConnection(deps.db.orm, cabinetId) ?? connection);
    unlinkWallet(deps, cabinetId);
    recordAudit(deps, { cabinetId, action: 'sync.disconnected', actor, target: connection.deviceId, details: { left_hub: leftHub } });
  });
  deps.secrets.delete(deviceSecretName(cabinetId));
  deps.syncLinks.notify();
  return { left_hub: leftHub, device_id: connection.deviceId };
}

/** Pauses or resumes the background sync; changes are queued meanwhile. */
export function setSyncPaused(deps: SyncDeps, cabinetId: string, paused: boolean, actor: AuditActor): SyncStatus {
  connectionOrThrow(deps, cabinetId);
  deps.db.immediateTransaction(() => {
    store.updateConnection(deps.db.orm, cabinetId, { paused });
    recordAudit(deps, { cabinetId, action: paused ? 'sync.paused' : 'sync.resumed', actor });
  });
  deps.syncLinks.notify();
  return syncStatus(deps, cabinetId);
}
