import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { createAfterCommitSignal, type AfterCommitSignal } from './platform/after-commit-signal.js';
import { createJobQueueSignal, createJobSignal, type JobQueueSignal, type JobSignal } from './automation/job-signal.js';
import type { Config } from './config.js';
import type { Database } from './platform/db/open.js';
import { pooledRandomBytes } from './platform/random-pool.js';
import { createInsurerRegistry, type InsurerAdapter, type InsurerRegistry } from './robots/adapter.js';
import { builtInInsurers, localPortalUrl } from './robots/insurers/index.js';
import { createEncryptedFileStore, loadMasterKey, type SecretStore } from './secrets/secret-store.js';
import { deriveKey, loadServerSecret } from './secrets/server-secret.js';

/** Time, injected so that tests drive expiries and windows without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

const systemClock: Clock = { now: () => Date.now() };

/** The console's live feed reads job changes under this name; the signals are the automation module's. */
export type { JobChange } from './automation/job-signal.js';

/** What services need from the outside world; built once by the CLI or a test and passed down. */
export interface Deps {
  db: Database;
  config: Config;
  clock: Clock;
  randomBytes: (size: number) => Buffer;
  /** Per-purpose keys derived from the data dir's server secret. */
  keys: { cursor: Buffer; downloadLink: Buffer; webhookSecrets: Buffer; csrf: Buffer; auditChain: Buffer };
  /** The outbox has new events (recordEvent notifies inside its transaction). */
  outbox: AfterCommitSignal;
  /** A change was queued for the sync hub (the sync engine's push loops listen). */
  syncChanges: AfterCommitSignal;
  /** A cabinet's sync link was made, paused, resumed or removed here (the sync engine re-reads its links). */
  syncLinks: AfterCommitSignal;
  /** Job rows changed (the console's live feed listens). */
  jobSignal: JobSignal;
  /** A job may be claimable (the robot worker listens). */
  jobQueue: JobQueueSignal;
  /** The insurers this install prices with (their robots). */
  insurers: InsurerRegistry;
  /** Insurer passwords: the encrypted file store, or the OS keychain in the desktop app. */
  secrets: SecretStore;
}

/**
 * The webhook dispatcher's fan-out is a write transaction of its own: run after every create, it
 * doubled the commits of a busy API. At most once per 10 ms, events are fanned out in batches, for
 * at most 10 ms more before their delivery (the goal is 250 ms at p99).
 */
const OUTBOX_MIN_INTERVAL_MS = 10;

export function defaultDeps(
  db: Database,
  config: Config,
  options: { insurers?: readonly InsurerAdapter[]; secrets?: SecretStore; env?: NodeJS.ProcessEnv } = {},
): Deps {
  const secret = loadServerSecret(config.dataDir, nodeRandomBytes);
  return {
    db,
    config,
    clock: systemClock,
    randomBytes: pooledRandomBytes(),
    insurers: createInsurerRegistry(
      options.insurers ?? builtInInsurers({ portalUrl: config.sandbox ? () => localPortalUrl(config.host, config.port) : undefined }),
    ),
    secrets:
      options.secrets ??
      createEncryptedFileStore(config.dataDir, loadMasterKey(config.dataDir, options.env ?? process.env, nodeRandomBytes)),
    keys: {
      cursor: deriveKey(secret, 'cursor'),
      downloadLink: deriveKey(secret, 'download-link'),
      webhookSecrets: deriveKey(secret, 'webhook-secrets'),
      csrf: deriveKey(secret, 'csrf'),
      auditChain: deriveKey(secret, 'audit-chain'),
    },
    outbox: createAfterCommitSignal({ minIntervalMs: OUTBOX_MIN_INTERVAL_MS }),
    syncChanges: createAfterCommitSignal(),
    syncLinks: createAfterCommitSignal(),
    jobSignal: createJobSignal(),
    jobQueue: createJobQueueSignal(),
  };
}

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the years toISOString writes with four digits. */
const FIRST_FOUR_DIGIT_MS = -62_167_219_200_000;
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999;

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * What `new Date(ms).toISOString()` writes, by arithmetic: V8's toISOString formats through a
 * printf-like stream, and a create writes three dates, a queued job four. Days become a civil date
 * by Howard Hinnant's `civil_from_days`. Times outside the four-digit years, and invalid ones, are
 * left to Date (which throws a RangeError for the latter).
 */
export function toIso(time: number): string {
  if (!(time >= FIRST_FOUR_DIGIT_MS && time <= LAST_FOUR_DIGIT_MS)) return new Date(time).toISOString();
  const ms = Math.trunc(time);
  const msOfDay = ((ms % DAY_MS) + DAY_MS) % DAY_MS;
  const shifted = (ms - msOfDay) / DAY_MS + 719_468; // days since 0000-03-01
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const milliseconds = msOfDay % 1000;
  return (
    `${String(year).padStart(4, '0')}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(Math.floor(msOfDay / 3_600_000))}:` +
    `${twoDigits(Math.floor(msOfDay / 60_000) % 60)}:${twoDigits(Math.floor(msOfDay / 1000) % 60)}.${String(milliseconds).padStart(3, '0')}Z`
  );
}

export function toIsoOrNull(ms: number | null): string | null {
  return ms === null ? null : toIso(ms);
}
