import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { createAfterCommitSignal, type AfterCommitSignal } from './platform/after-commit-signal.js';
import { createJobQueueSignal, createJobSignal, type JobQueueSignal, type JobSignal } from './automation/job-signal.js';
import type { Config } from './config.js';
import type { Database } from './platform/db/open.js';
import { pooledRandomBytes } from './platform/random-pool.js';
import { createInsurerRegistry, type Insurer, type InsurerRegistry } from './insurers/registry.js';
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
  /** insurers: loaded from their packages by the caller (loadInsurers); none by default. */
  options: { insurers?: readonly Insurer[] | InsurerRegistry; secrets?: SecretStore; env?: NodeJS.ProcessEnv } = {},
): Deps {
  const secret = loadServerSecret(config.dataDir, nodeRandomBytes);
  return {
    db,
    config,
    clock: systemClock,
    randomBytes: pooledRandomBytes(),
    insurers: isRegistry(options.insurers) ? options.insurers : createInsurerRegistry(options.insurers ?? []),
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

function isRegistry(insurers: readonly Insurer[] | InsurerRegistry | undefined): insurers is InsurerRegistry {
  return insurers !== undefined && !Array.isArray(insurers);
}
