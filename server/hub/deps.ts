import { randomBytes as nodeRandomBytes } from 'node:crypto';
import type { Sql } from 'postgres';
import { MAX_RECORD_BYTES, SYNC_PROTOCOL_VERSION } from '../../shared/sync-protocol.js';
import type { Clock } from '../deps.js';
import type { HubDatabase } from './database.js';

/**
 * What the hub's services need from outside. Not the agent's Deps: the hub has no data dir, no
 * server secret and no SQLite. Tests inject the clock (codes expire without sleeping).
 */
export interface HubDeps {
  sql: Sql;
  clock: Clock;
  randomBytes: (size: number) => Buffer;
  /** This build's version, for /healthz and the OpenAPI document. */
  version: string;
  /** The newest sync protocol this hub speaks (SYNC_PROTOCOL_VERSION; tests play a newer hub). */
  protocol: number;
  limits: HubLimits;
}

/**
 * What one cabinet may store on a shared hub, and what one device may have in progress at once on
 * one hub process: so that one device (a stolen laptop among them) cannot exhaust the hub for the
 * other cabinets. Quotas count what the cabinet's devices sent, less what compaction deleted (an
 * erasure gives back the PDFs it deletes, not the bytes of the changes it empties).
 */
export interface HubLimits {
  cabinetChanges: number;
  cabinetChangeBytes: number;
  cabinetBlobs: number;
  cabinetBlobBytes: number;
  /** One record's state, fields and stamps (MAX_RECORD_BYTES; tests lower it). */
  recordBytes: number;
  /** Entries of the cabinet's credits ledger: each debit of a new job adds one, whatever the device says it ran. */
  cabinetWalletEntries: number;
  /** Requests of one device in progress at once, long polls included. */
  deviceRequests: number;
  /** Long polls (pulls with a wait) of one device at once. */
  deviceLongPolls: number;
  /** Pushes and PDF uploads of one device at once: an install sends two batches at a time; its pushes run one after the other anyway. */
  deviceUploads: number;
  /**
   * A push of this many changes or more is staged before it takes its locks (store.ts
   * stageChanges); a smaller one is stored straight from its JSON, where the two more statements
   * would cost more than the lock time they spare. Tests lower it to run both paths.
   */
  stagedPushChanges: number;
}

export const DEFAULT_HUB_LIMITS: HubLimits = {
  cabinetChanges: 10_000_000,
  cabinetChangeBytes: 4 * 1024 ** 3,
  cabinetBlobs: 200_000,
  cabinetBlobBytes: 8 * 1024 ** 3,
  recordBytes: MAX_RECORD_BYTES,
  cabinetWalletEntries: 1_000_000,
  deviceRequests: 8,
  deviceLongPolls: 2,
  deviceUploads: 2,
  stagedPushChanges: 100,
};

export function hubDeps(
  database: Pick<HubDatabase, 'sql'>,
  version: string,
  overrides: Partial<Pick<HubDeps, 'clock' | 'randomBytes' | 'protocol'>> & { limits?: Partial<HubLimits> } = {},
): HubDeps {
  return {
    sql: database.sql,
    clock: overrides.clock ?? { now: () => Date.now() },
    randomBytes: overrides.randomBytes ?? nodeRandomBytes,
    version,
    protocol: overrides.protocol ?? SYNC_PROTOCOL_VERSION,
    limits: { ...DEFAULT_HUB_LIMITS, ...overrides.limits },
  };
}

/** The hub's time as the bodies carry it. */
export function hubTime(deps: Pick<HubDeps, 'clock'>): string {
  return new Date(deps.clock.now()).toISOString();
}
