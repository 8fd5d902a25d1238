import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { RecordsByKind } from './apply.js';
import { HubRefusal, HubUnreachable, type HubClient, type HubFetch } from './hub-client.js';
import { pullOnce } from './catch-up.js';
import { applyNowUnderstood } from './retry-set-aside.js';
import { pushQueued } from './push.js';
import { hubClientFor } from './service.js';
import * as store from './store.js';
import { exchangeWallet } from './wallet-exchange.js';
import { walletCursor, walletHasPending } from '../wallet/hub-link.js';

export interface SyncEngineOptions {
  logger: FastifyBaseLogger;
  records: RecordsByKind;
  fetch?: HubFetch;
  random?: () => number;
  /** How often the table of links is read (a connect or disconnect made by the CLI). */
  scanIntervalMs?: number;
  /** The long poll's length; the hub wakes it sooner when another install pushes. */
  pullWaitSeconds?: number;
  /** The outbox is looked at this often even without a local change (a retry after an outage). */
  pushIntervalMs?: number;
  /** After a push, changes made meanwhile are gathered this long before the next one. */
  pushGatherMs?: number;
  /** The longest wait between two attempts while the hub is unreachable. */
  maxBackoffMs?: number;
  /** The wait before trying again after a refusal that a person may fix (a clock, an update). */
  refusedRetryMs?: number;
}

export interface SyncEngine {
  start(): void;
  stop(): Promise<void>;
}

/** Refusals after which trying again cannot help until a person acts (a new pairing). */
const FINAL_REFUSALS = new Set(['device_revoked', 'invalid_device_credential']);

type Outcome = { kind: 'ok'; busy: boolean } | { kind: 'offline' } | { kind: 'refused'; code: string; message: string; final: boolean };

function classify(err: unknown): Outcome {
  if (err instanceof HubUnreachable) return { kind: 'offline' };
  if (err instanceof HubRefusal) {
    const message =
      err.code === 'device_revoked'
        ? 'this device was revoked on the hub'
        : err.code === 'sync_protocol_too_old'
          ? 'this Courtier is too old for the cabinet’s other installs: update it (changes stay queued)'
          : err.message;
    return { kind: 'refused', code: err.code, message, final: FINAL_REFUSALS.has(err.code) };
  }
  // The device credential is missing from the secret store: a person must connect again.
  if (err instanceof ApiError) return { kind: 'refused', code: err.code, message: err.message, final: true };
  // A bug must not take the service down with an unhandled rejection: shown, and retried slowly.
  return { kind: 'refused', code: 'internal_error', message: `sync failed on this install: ${(err as Error).message}`, final: false };
}

function sleep(ms: number, signal: AbortSignal, wake?: (resume: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      stopWaking?.();
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    const stopWaking = wake?.(done);
  });
}

/**
 * The background sync of a running service: one runner per linked cabinet, each with a push loop
 * (woken by a local change, and on a timer) and a pull loop (a long poll). An unreachable hub is
 * retried with exponential backoff and full jitter; a refusal is shown in words and retried
 * slowly, except a revocation, which waits for a person. The links are re-read every few seconds,
 * so a connect, a pause or a disconnect made by the CLI takes effect without a restart.
 */
export function createSyncEngine(deps: Deps, options: SyncEngineOptions): SyncEngine {
  const runners = new Map<string, { stop: () => Promise<void> }>();
  const scanEvery = options.scanIntervalMs ?? 2000;
  const random = options.random ?? Math.random;
  const maxBackoff = options.maxBackoffMs ?? 60_000;
  const fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  let scanner: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;

  const backoff = (failures: number) => Math.max(250, random() * Math.min(maxBackoff, 1000 * 2 ** Math.min(failures, 16)));

  const runnerKey = (connection: store.ConnectionRow) => `${connection.cabinetId}/${connection.deviceId}`;

  const startRunner = (connection: store.ConnectionRow) => {
    const cabinetId = connection.cabinetId;
    const abort = new AbortController();
    // The wallet's exchange reports apart: its refusal is shown without holding back the records.
    const reported = new Map<'push' | 'pull' | 'wallet', Outcome['kind']>();
    const report = (loop: 'push' | 'pull' | 'wallet', outcome: Outcome) => {
      const row = store.findConnection(deps.db.orm, cabinetId);
      if (!row || abort.signal.aborted) return;
      const now = deps.clock.now();
      if (outcome.kind === 'ok') {
        const othersFailing = [...reported].some(([name, kind]) => name !== loop && kind !== 'ok');
        reported.set(loop, 'ok');
        const state = outcome.busy ? 'syncing' : 'idle';
        if (othersFailing) return;
        if (row.state !== state || row.lastError !== null || row.offlineSince !== null)
          store.updateConnection(deps.db.orm, cabinetId, { state, lastError: null, lastErrorCode: null, offlineSince: null });
        return;
      }
      reported.set(loop, outcome.kind);
      if (outcome.kind === 'offline') {
        if (row.state !== 'offline')
          store.updateConnection(deps.db.orm, cabinetId, { state: 'offline', offlineSince: row.offlineSince ?? now });
        return;
      }
      if (row.lastErrorCode !== outcome.code) options.logger.warn({ cabinetId, code: outcome.code }, `sync: ${outcome.message}`);
      store.updateConnection(deps.db.orm, cabinetId, {
        state: 'error',
        lastError: outcome.message,
        lastErrorCode: outcome.code,
        lastErrorAt: now,
        offlineSince: null,
      });
    };
    // Made on first use and kept for the runner's life (its device's credential does not change: a
    // new pairing is a new device, so a new runner), rather than a read and a decryption of the
    // secret store before every push and pull; made again on the next loop while the secret is missing.
    let hubClient: HubClient | undefined;
    const client = (): HubClient =>
      (hubClient ??= hubClientFor(deps, connection, fetch, (hub, local) => {
        const offset = hub - local;
        const row = store.findConnection(deps.db.orm, cabinetId);
        if (row && (row.hubClockOffset === null || Math.abs(row.hubClockOffset - offset) > 1000))
          store.updateConnection(deps.db.orm, cabinetId, { hubClockOffset: offset });
      }));

    const loop = async (
      name: 'push' | 'pull',
      step: (hub: HubClient) => Promise<{ again: boolean; busy: boolean }>,
      idle: (signal: AbortSignal) => Promise<void>,
    ) => {
      let failures = 0;
      while (!abort.signal.aborted) {
        try {
          const result = await step(client());
          failures = 0;
          report(name, { kind: 'ok', busy: result.busy });
          if (!result.again) await idle(abort.signal);
        } catch (err) {
          if (abort.signal.aborted) return;
          const outcome = classify(err);
          report(name, outcome);
          if (outcome.kind === 'refused' && outcome.final) return;
          failures += 1;
          await sleep(
            outcome.kind === 'offline' ? backoff(failures) : Math.max(backoff(failures), options.refusedRetryMs ?? 30_000),
            abort.signal,
          );
        }
      }
    };
    const context = { deps, records: options.records };
    // Once per start: what an older version set aside as not understood applies if this one knows it.
    let understoodChecked = false;
    let answered = false;
    // The push loop's and the pull loop's wallet exchanges, one after the other.
    let walletTurn: Promise<unknown> = Promise.resolve();
    // Set while a refused exchange waits to be tried again (timed as every wait of the engine).
    let walletResting = false;
    /**
     * Whether the exchange went through. One the hub refuses (the cabinet at its quota of entries)
     * is shown and tried again after the refusal's wait, while the records go on being pushed and
     * pulled; an unreachable hub or a revoked device stops the loop that asked, as any call does.
     */
    const exchange = async (hub: HubClient): Promise<boolean> => {
      if (walletResting) return false;
      const next = walletTurn.then(() => exchangeWallet({ deps, client: hub }, cabinetId));
      walletTurn = next.catch(() => undefined);
      try {
        await next;
      } catch (err) {
        const outcome = classify(err);
        if (outcome.kind !== 'refused' || outcome.final) throw err;
        walletResting = true;
        void sleep(options.refusedRetryMs ?? 30_000, abort.signal).then(() => {
          walletResting = false;
        });
        report('wallet', outcome);
        return false;
      }
      if (reported.get('wallet') === 'refused') report('wallet', { kind: 'ok', busy: false });
      return true;
    };
    // At start, and until an exchange succeeds: the balance the hub gives may have moved meanwhile.
    let walletDue = true;
    const push = loop(
      'push',
      async (hub) => {
        const sent = await pushQueued({ ...context, client: hub }, cabinetId);
        // After the push, so the hub holds a debited job before its debit; the debit's arrival ends this install's long poll, whose answer moves the hourly quota's count.
        if ((walletDue || sent > 0 || walletHasPending(deps, cabinetId)) && (await exchange(hub))) walletDue = false;
        // Under a steady stream of changes, one push per moment rather than one per change (each
        // push costs this process more than a capture); a change after a quiet spell goes at once.
        if (sent > 0) await sleep(options.pushGatherMs ?? 50, abort.signal);
        return { again: sent > 0, busy: sent > 0 };
      },
      (signal) => sleep(options.pushIntervalMs ?? 5000, signal, (resume) => deps.syncChanges.listen(resume)),
    );
    const pull = loop(
      'pull',
      async (hub) => {
        if (!store.findConnection(deps.db.orm, cabinetId)) {
          abort.abort();
          return { again: false, busy: false };
        }
        if (!understoodChecked) {
          const applied = await applyNowUnderstood({ ...context, client: hub }, cabinetId);
          if (applied > 0) options.logger.info({ cabinetId, applied }, 'sync: applied changes an older version of Courtier had set aside');
          understoodChecked = true;
        }
        const walletAfter = walletCursor(deps, cabinetId) ?? undefined;
        // The first pull answers at once: until then, robots hold back the jobs queued before the start (cabinetsAwaitingHub).
        const { more, walletSeq } = await pullOnce({ ...context, client: hub }, cabinetId, {
          wait: answered ? (options.pullWaitSeconds ?? 25) : 0,
          signal: abort.signal,
          walletAfter,
        });
        answered = true;
        // A grant on the hub, or another install's debit: the balance is fetched at once.
        if (walletSeq !== undefined && walletAfter !== undefined && walletSeq > walletAfter) await exchange(hub);
        return { again: true, busy: more };
      },
      async () => {},
    );
    runners.set(runnerKey(connection), {
      stop: async () => {
        abort.abort();
        await Promise.allSettled([push, pull]);
      },
    });
  };

  const scan = () => {
    const wanted = new Map(
      store
        .listConnections(deps.db.orm)
        .filter((c) => !c.paused)
        .map((c) => [runnerKey(c), c]),
    );
    for (const [key, runner] of runners) {
      if (wanted.has(key)) continue;
      runners.delete(key);
      void runner.stop();
    }
    for (const [key, connection] of wanted) if (!runners.has(key)) startRunner(connection);
  };

  return {
    start() {
      scan();
      scanner = setInterval(scan, scanEvery);
      // A connect, pause or disconnect made in this process is taken up at once.
      unlisten = deps.syncLinks.listen(scan);
    },
    async stop() {
      clearInterval(scanner);
      unlisten?.();
      const stopping = [...runners.values()].map((runner) => runner.stop());
      runners.clear();
      await Promise.all(stopping);
    },
  };
}
