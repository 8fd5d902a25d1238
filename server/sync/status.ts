import { parseHlc } from '../../shared/hlc.js';
import type { SyncStatus } from '../../shared/console-sync.js';
import type { Deps } from '../deps.js';
import { toIsoOrNull } from '../platform/iso-time.js';
import * as conflictsStore from './conflicts-store.js';
import * as refused from './store-refused.js';
import * as store from './store.js';

/* A cabinet's link as others read it: its status for the console and the CLI, and what the robots and the hourly quota learn from it. */

function timeOfDay(ms: number): string {
  const date = new Date(ms);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

/** The last error in words a person at a desk understands. */
function describeError(connection: store.ConnectionRow): string | null {
  if (connection.state === 'offline' && connection.offlineSince !== null)
    return `hub unreachable since ${timeOfDay(connection.offlineSince)}`;
  if (connection.lastErrorCode === 'clock_skew' && connection.hubClockOffset !== null) {
    return `this machine's clock is ${Math.round(-connection.hubClockOffset / 60_000)} minutes ahead of the hub's; set it right (changes stay queued)`;
  }
  return connection.lastError;
}

export function syncStatus(deps: Pick<Deps, 'db'>, cabinetId: string): SyncStatus {
  const connection = store.findConnection(deps.db.orm, cabinetId);
  if (!connection) {
    return {
      cabinet_id: cabinetId,
      state: 'off',
      paused: false,
      hub_url: null,
      device_id: null,
      device_name: null,
      pending_changes: 0,
      last_push_at: null,
      last_pull_at: null,
      last_error: null,
      last_error_code: null,
      offline_since: null,
      clock_ahead_seconds: null,
      resyncing: false,
      refused_by_hub: 0,
      set_aside_changes: 0,
    };
  }
  return {
    cabinet_id: cabinetId,
    state: connection.state,
    paused: connection.paused,
    hub_url: connection.hubUrl,
    device_id: connection.deviceId,
    device_name: connection.deviceName,
    pending_changes: store.countOutbox(deps.db.orm, cabinetId),
    last_push_at: toIsoOrNull(connection.lastPushAt),
    last_pull_at: toIsoOrNull(connection.lastPullAt),
    last_error: describeError(connection),
    last_error_code: connection.state === 'offline' ? 'hub_unreachable' : connection.lastErrorCode,
    offline_since: connection.state === 'offline' ? toIsoOrNull(connection.offlineSince) : null,
    clock_ahead_seconds: connection.hubClockOffset === null ? null : Math.round(-connection.hubClockOffset / 1000),
    resyncing: connection.resyncing,
    refused_by_hub: refused.countRefused(deps.db.orm, cabinetId),
    set_aside_changes: conflictsStore.countConflicts(deps.db.orm, cabinetId),
  };
}

/**
 * Since when the cabinet's installs may not know each other's jobs (null: the cabinet does not
 * sync, or this install never caught up): the older of when a pull last brought this install every
 * change of the cabinet and when its oldest change the hub has not acknowledged was made. The
 * hourly quota's offline allowance counts this install's jobs from then: an install whose pushes
 * fail while its pulls work must not have its count start again at every pull.
 */
export function othersKnownUntil(deps: Pick<Deps, 'db'>, cabinetId: string): number | null {
  const caughtUpAt = store.findConnection(deps.db.orm, cabinetId)?.caughtUpAt ?? null;
  const oldestQueued = store.readOutboxAfter(deps.db.orm, cabinetId, 0, 1)[0];
  if (caughtUpAt === null || oldestQueued === undefined) return caughtUpAt;
  return Math.min(caughtUpAt, parseHlc(oldestQueued.hlc).time);
}

/** How long, after the service starts, robots wait for the hub's first answer before starting the jobs queued earlier. */
const FIRST_ANSWER_WAIT_MS = 30_000;

/**
 * The synced cabinets whose robots hold back the jobs queued before `startedAt` (the service's
 * start): until the hub has answered a pull since, for at most FIRST_ANSWER_WAIT_MS, and while the
 * install starts over with the hub. An install restored from a backup learns there that jobs it
 * holds as pending ran after the backup: started, they would ask the insurer a second time.
 */
export function cabinetsAwaitingHub(deps: Pick<Deps, 'db' | 'clock'>, startedAt: number): string[] {
  const waitingForFirstAnswer = deps.clock.now() - startedAt < FIRST_ANSWER_WAIT_MS;
  return store
    .listConnections(deps.db.orm)
    .filter(
      (connection) => !connection.paused && (connection.resyncing || (waitingForFirstAnswer && (connection.lastPullAt ?? 0) < startedAt)),
    )
    .map((connection) => connection.cabinetId);
}
