import { lookup } from 'node:dns/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../deps.js';
import { purgeEventsBefore } from '../events/service.js';
import { createAttempt, passReads, type Outcome, type PassReads } from './attempt.js';
import { recordOutcomes } from './outcomes.js';
import { createHttpSender, type HttpSender } from './sender.js';
import { DELIVERY_RETENTION_MS, fanOutEvents, purgeOldDeliveries } from './service.js';
import * as store from './store.js';
import { createTargetGuard, type Resolver } from './target.js';

const FANOUT_BATCH = 500;
const MAX_SLEEP_MS = 60_000;
const PURGE_EVERY_MS = 24 * 3600 * 1000;

export interface DispatcherOptions {
  logger: FastifyBaseLogger;
  /** Outbound HTTP; defaults to node:https with a keep-alive agent. */
  send?: HttpSender;
  /** DNS; defaults to the system resolver. */
  resolve?: Resolver;
  /** Extra trusted CA certificates (PEM), on top of Node's and NODE_EXTRA_CA_CERTS. */
  extraCa?: readonly string[];
  /** Random extra delay for a retry of the given delay; defaults to up to 10 %. */
  jitter?: (delayMs: number) => number;
  /**
   * True while a writer that goes first is in a transaction: the pump waits for the next turn.
   * On its thread, the dispatcher lets the API's connection go first (db/write-priority.ts).
   */
  yieldTo?: () => boolean;
}

export interface Dispatcher {
  start(): void;
  /** Stops taking work and waits for attempts in flight (each is bounded by the timeout). */
  stop(): Promise<void>;
  /** Fans out and sends everything due now, and waits until nothing is in flight (tests, shutdown). */
  drain(): Promise<void>;
  /** Attempts one delivery at once (test deliveries) and resolves when the attempt is recorded. */
  attemptNow(cabinetId: string, deliveryId: string): Promise<void>;
}

const isBusy = (err: unknown) => (err as { code?: string } | undefined)?.code === 'SQLITE_BUSY';
/** As long as SQLite's busy timeout (5 s), on a connection that does not wait for the lock itself. */
const BUSY_RETRY_MS = 5000;

/** Runs work that writes, again on the next turn while another writer holds the lock (the dispatcher's thread: see dispatcher-worker.ts). */
async function whileBusy<T>(work: () => T): Promise<T> {
  const until = performance.now() + BUSY_RETRY_MS;
  for (;;) {
    try {
      return work();
    } catch (err) {
      if (!isBusy(err) || performance.now() > until) throw err;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/** Creates the deliveries of every outbox event not fanned out yet, a transaction per batch (savepoints in the caller's). */
export function fanOutPending(deps: Deps): void {
  while (fanOutEvents(deps, FANOUT_BATCH) === FANOUT_BATCH);
}

/** Deliveries and events past their 90 days. */
async function purgeWebhookHistory(deps: Deps, logger: FastifyBaseLogger): Promise<void> {
  try {
    const deliveries = await whileBusy(() => purgeOldDeliveries(deps));
    const events = await whileBusy(() => purgeEventsBefore(deps, deps.clock.now() - DELIVERY_RETENTION_MS));
    if (deliveries + events > 0) logger.info({ deliveries, events }, 'purged webhook history older than 90 days');
  } catch (err) {
    logger.error({ err }, 'webhook purge failed');
  }
}

/** Purges the history now and every day, while `due()` says so; stop it with clearInterval. */
export function purgeDaily(deps: Deps, logger: FastifyBaseLogger, due: () => boolean = () => true): NodeJS.Timeout {
  const purge = () => {
    if (due()) void purgeWebhookHistory(deps, logger);
  };
  purge();
  const timer = setInterval(purge, PURGE_EVERY_MS);
  timer.unref();
  return timer;
}

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/**
 * The webhook dispatcher: reads the outbox, creates deliveries, leases due ones, signs and POSTs
 * them, records every attempt, and schedules retries. Everything it knows is in SQLite, so a
 * crash loses nothing: leases run out and the work is picked up again.
 */
export function createDispatcher(deps: Deps, options: DispatcherOptions): Dispatcher {
  const { config, clock } = deps;
  const ownSender = options.send ? undefined : createHttpSender({ timeoutMs: config.webhookTimeoutMs, extraCa: options.extraCa ?? [] });
  const send = options.send ?? (ownSender as HttpSender);
  const guard = createTargetGuard({ resolve: options.resolve ?? systemResolver, allowPrivate: config.webhookAllowPrivateTargets });
  const attempt = createAttempt(deps, { send, guard });
  const outcomeOptions = { logger: options.logger, jitter: options.jitter ?? ((delay: number) => Math.floor(Math.random() * delay * 0.1)) };
  // Longer than any attempt can take (the timeout), so that a live attempt never loses its lease.
  const leaseMs = config.webhookTimeoutMs * 2 + 1000;
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  /** Outcomes of attempts that ended since the last pump, recorded by the next one. */
  const unrecorded: Outcome[] = [];
  let pumpQueued = false;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;

  function track(delivery: store.DeliveryRow, reads: PassReads): void {
    busy.set(delivery.subscriptionId, (busy.get(delivery.subscriptionId) ?? 0) + 1);
    const work = attempt(delivery, reads)
      .then((outcome) => void (outcome && unrecorded.push(outcome)))
      .catch((err: unknown) => options.logger.error({ err, delivery_id: delivery.id }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        const left = (busy.get(delivery.subscriptionId) ?? 1) - 1;
        if (left <= 0) busy.delete(delivery.subscriptionId);
        else busy.set(delivery.subscriptionId, left);
        inFlight.delete(work);
        if (running) pumpSoon();
      });
    inFlight.add(work);
  }

  /** One pump for every attempt that ended in this turn of the event loop. */
  function pumpSoon(): void {
    if (pumpQueued) return;
    pumpQueued = true;
    setImmediate(() => {
      pumpQueued = false;
      if (running) safePump();
    });
  }

  /**
   * Records what ended, fans out new events and leases due deliveries in one write transaction:
   * they dirty the same pages of the deliveries table, and under load a commit each cost more
   * than the work. The attempts start once it has committed.
   */
  const recordFanOutAndClaim = (slots: number): store.DeliveryRow[] =>
    deps.db.immediateTransaction(() => {
      recordOutcomes(deps, unrecorded.splice(0), outcomeOptions);
      fanOutPending(deps);
      return slots > 0
        ? store.claimDueDeliveries(deps.db, clock.now(), {
            leaseMs,
            limit: slots,
            perSubscription: config.webhookConcurrencyPerEndpoint,
            busy,
          })
        : [];
    });

  function pump(): void {
    const slots = config.webhookConcurrency - inFlight.size;
    const claimed = recordFanOutAndClaim(slots);
    const reads = passReads(deps);
    for (const delivery of claimed) track(delivery, reads);
    // With every slot taken, the next attempt to end pumps again: no need to look for the next due time.
    if (running && claimed.length < slots) scheduleWake();
  }

  function scheduleWake(): void {
    clearTimeout(timer);
    const due = store.nextDueAt(deps.db.orm);
    if (due === null) return;
    const wait = Math.min(MAX_SLEEP_MS, Math.max(0, due - clock.now()));
    timer = setTimeout(safePump, wait);
    timer.unref();
  }

  function safePump(): void {
    if (options.yieldTo?.()) {
      pumpSoon();
      return;
    }
    try {
      pump();
    } catch (err) {
      if (isBusy(err)) {
        // On the thread's connection, which does not sleep waiting for the lock: another writer holds it; next turn.
        pumpSoon();
        return;
      }
      options.logger.error({ err }, 'webhook dispatcher error; retrying shortly');
      clearTimeout(timer);
      timer = setTimeout(safePump, 1000);
      timer.unref();
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      unlisten = deps.outbox.listen(pumpSoon);
      purgeTimer = purgeDaily(deps, options.logger);
      safePump();
    },
    async stop() {
      running = false;
      unlisten?.();
      clearTimeout(timer);
      clearInterval(purgeTimer);
      await Promise.allSettled([...inFlight]);
      const outcomes = unrecorded.splice(0);
      await whileBusy(() => recordOutcomes(deps, outcomes, outcomeOptions));
      ownSender?.close();
    },
    async drain() {
      for (;;) {
        await whileBusy(pump);
        if (inFlight.size === 0) return;
        await Promise.allSettled([...inFlight]);
      }
    },
    async attemptNow(cabinetId, deliveryId) {
      const delivery = store.findDelivery(deps.db.orm, cabinetId, deliveryId);
      if (!delivery || delivery.status !== 'pending') return;
      await whileBusy(() => store.leaseDelivery(deps.db.orm, delivery.id, clock.now() + leaseMs));
      const outcome = await attempt(delivery, passReads(deps));
      if (outcome) await whileBusy(() => recordOutcomes(deps, [outcome], outcomeOptions));
    },
  };
}
