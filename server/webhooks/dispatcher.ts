import { lookup } from 'node:dns/promises';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { EventEnvelope } from '../../shared/events.js';
import { maskPersonalData } from '../../shared/masking.js';
import { signWebhookPayload } from '../../shared/verify-webhook.js';
import { toIso, type Deps } from '../deps.js';
import { getEvent, purgeEventsBefore } from '../events/service.js';
import { decryptSecret } from '../secrets/cipher.js';
import { getCabinetSettings } from '../tenancy/service.js';
import { createHttpSender, type HttpSender } from './sender.js';
import { DELIVERY_RETENTION_MS, fanOutEvents, purgeOldDeliveries } from './service.js';
import * as store from './store.js';
import { BlockedTargetError, createTargetGuard, type Resolver } from './target.js';

/** A subscription failing without a single success for this long is deactivated. */
const DEACTIVATE_AFTER_MS = 5 * 24 * 3600 * 1000;
const FANOUT_BATCH = 500;
const MAX_SLEEP_MS = 60_000;
const PURGE_EVERY_MS = 24 * 3600 * 1000;
export const WEBHOOK_USER_AGENT = 'Service-Webhook/1.0';

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
}

/** How an attempt went, for its delivery's record. */
interface Outcome {
  delivery: store.DeliveryRow;
  subscription: store.SubscriptionRow;
  attemptedAt: number;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  responseBody: string | null;
  succeeded: boolean;
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
  const jitter = options.jitter ?? ((delay: number) => Math.floor(Math.random() * delay * 0.1));
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

  function signingSecrets(subscription: store.SubscriptionRow, now: number): string[] {
    const secrets = [decryptSecret(deps.keys.webhookSecrets, subscription.secretEnc)];
    if (subscription.previousSecretEnc && subscription.previousSecretExpiresAt !== null && subscription.previousSecretExpiresAt > now) {
      secrets.push(decryptSecret(deps.keys.webhookSecrets, subscription.previousSecretEnc));
    }
    return secrets;
  }

  /** The body receivers get: masked unless the cabinet shares personal data with LLMs, read now. */
  function bodyOf(event: EventEnvelope): string {
    const { llm_data_sharing } = getCabinetSettings(deps, event.cabinet_id);
    return JSON.stringify(llm_data_sharing ? event : { ...event, data: maskPersonalData(event.type, event.data) });
  }

  /**
   * What the attempts started in one synchronous pass of a pump share: an event goes to ten
   * subscriptions, and each used to read it, its cabinet's switch and its own secrets again.
   * Nothing outlives the pass, so a rotated secret or a switch turned off applies from the next one.
   */
  function passReads() {
    const subscriptions = new Map<string, store.SubscriptionRow | undefined>();
    const bodies = new Map<string, { event: EventEnvelope; body: string } | undefined>();
    const secrets = new Map<string, string[]>();
    return {
      subscription(delivery: store.DeliveryRow) {
        if (!subscriptions.has(delivery.subscriptionId)) {
          subscriptions.set(delivery.subscriptionId, store.findSubscription(deps.db.orm, delivery.cabinetId, delivery.subscriptionId));
        }
        return subscriptions.get(delivery.subscriptionId);
      },
      body(delivery: store.DeliveryRow) {
        if (!bodies.has(delivery.eventId)) {
          const event = getEvent(deps, delivery.cabinetId, delivery.eventId);
          bodies.set(delivery.eventId, event && { event, body: bodyOf(event) });
        }
        return bodies.get(delivery.eventId);
      },
      secrets(subscription: store.SubscriptionRow) {
        let found = secrets.get(subscription.id);
        if (!found) {
          found = signingSecrets(subscription, clock.now());
          secrets.set(subscription.id, found);
        }
        return found;
      },
    };
  }
  type PassReads = ReturnType<typeof passReads>;

  async function post(subscription: store.SubscriptionRow, delivery: store.DeliveryRow, event: EventEnvelope, body: string, secrets: readonly string[]) {
    const url = new URL(subscription.url);
    const address = await guard(url);
    const timestamp = Math.floor(clock.now() / 1000);
    const signatures = secrets.map((secret) => `v1=${signWebhookPayload(secret, timestamp, body)}`);
    return send({
      url: url.toString(),
      address,
      body,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        'Service-Timestamp': String(timestamp),
        'Service-Signature': [`t=${timestamp}`, ...signatures].join(','),
        'Service-Event-Id': event.id,
        'Service-Event-Type': event.type,
        'Service-Delivery-Id': delivery.id,
      },
    });
  }

  /**
   * Sends one delivery; its outcome is for `recordOutcomes`, undefined when its subscription is
   * gone. Everything it reads, it reads before its first await, within the pass that started it.
   */
  async function attempt(delivery: store.DeliveryRow, reads: PassReads): Promise<Outcome | undefined> {
    const subscription = reads.subscription(delivery);
    if (!subscription) return undefined; // deleted meanwhile: its deliveries went with it
    const message = reads.body(delivery);
    const secrets = message && reads.secrets(subscription);
    const attemptedAt = clock.now();
    const started = performance.now();
    let httpStatus: number | null = null;
    let error: string | null = null;
    let responseBody: string | null = null;
    if (!message || !secrets) {
      error = 'event_purged: the event is older than the retention period';
    } else {
      try {
        const result = await post(subscription, delivery, message.event, message.body, secrets);
        if (result.kind === 'response') {
          httpStatus = result.status;
          responseBody = result.body;
        } else {
          error = result.error;
        }
      } catch (err) {
        error = err instanceof BlockedTargetError ? `blocked_target: ${err.message}` : `network_error: ${(err as Error).message}`;
      }
    }
    const succeeded = httpStatus !== null && httpStatus >= 200 && httpStatus < 300;
    return { delivery, subscription, attemptedAt, durationMs: Math.round(performance.now() - started), httpStatus, error, responseBody, succeeded };
  }

  /**
   * Records outcomes in one transaction: under load, the attempts that ended in one turn of the
   * event loop share a commit instead of paying one each. An outcome not yet recorded when the
   * process dies is an attempt whose lease runs out: it is sent again, as after a crash mid-attempt.
   */
  function recordOutcomes(outcomes: readonly Outcome[]): void {
    if (outcomes.length === 0) return;
    deps.db.sqlite.transaction(() => {
      // Each subscription's health is read once per transaction, and kept up to date here as it changes.
      const health = new Map<string, store.SubscriptionRow | undefined>();
      const current = (subscription: store.SubscriptionRow) => {
        if (!health.has(subscription.id)) health.set(subscription.id, store.findSubscription(deps.db.orm, subscription.cabinetId, subscription.id));
        return health.get(subscription.id);
      };
      const update = (row: store.SubscriptionRow, changes: Partial<store.SubscriptionRow>) => {
        store.updateSubscription(deps.db.orm, row.cabinetId, row.id, changes);
        health.set(row.id, { ...row, ...changes });
      };
      for (const outcome of outcomes) recordOutcome(outcome, current, update);
    })();
  }

  function recordOutcome(
    outcome: Outcome,
    currentOf: (subscription: store.SubscriptionRow) => store.SubscriptionRow | undefined,
    update: (row: store.SubscriptionRow, changes: Partial<store.SubscriptionRow>) => void,
  ): void {
    const { delivery, subscription } = outcome;
    const now = clock.now();
    const attemptCount = delivery.attemptCount + 1;
    const exhausted = attemptCount >= delivery.maxAttempts;
    const delay = (config.webhookRetryDelays[attemptCount] ?? 0) * 1000;
    const progress: store.DeliveryProgress = outcome.succeeded
      ? { status: 'succeeded', attemptCount, nextAttemptAt: null, leaseUntil: null, updatedAt: now }
      : exhausted
        ? { status: 'failed', attemptCount, nextAttemptAt: null, leaseUntil: null, updatedAt: now }
        : { status: 'pending', attemptCount, nextAttemptAt: now + delay + (delay > 0 ? jitter(delay) : 0), leaseUntil: null, updatedAt: now };
    const recorded = store.recordAttempt(
      deps.db.orm,
      {
        deliveryId: delivery.id,
        attemptedAt: outcome.attemptedAt,
        durationMs: outcome.durationMs,
        httpStatus: outcome.httpStatus,
        error: outcome.error,
        responseBody: outcome.responseBody,
      },
      { id: delivery.id, progress },
    );
    // Test deliveries say nothing about the endpoint's health over time.
    if (!recorded || delivery.maxAttempts === 1) return;
    const current = currentOf(subscription);
    if (!current) return;
    if (outcome.succeeded) {
      if (current.failingSince !== null) update(current, { failingSince: null });
      return;
    }
    const failingSince = current.failingSince ?? now;
    if (now - failingSince >= DEACTIVATE_AFTER_MS && current.active) {
      const reason =
        `Deactivated on ${toIso(now)}: every delivery failed since ${toIso(failingSince)} (5 days). ` +
        `Last error: ${outcome.error ?? `HTTP ${outcome.httpStatus}`}. Fix the endpoint, then set active to true.`;
      update(current, { failingSince, active: false, disabledReason: reason, updatedAt: now });
      options.logger.warn({ webhook_id: current.id }, 'webhook subscription deactivated after failing for 5 days');
    } else if (current.failingSince === null) {
      update(current, { failingSince });
    }
  }

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

  function pump(): void {
    recordOutcomes(unrecorded.splice(0));
    while (fanOutEvents(deps, FANOUT_BATCH) === FANOUT_BATCH);
    const slots = config.webhookConcurrency - inFlight.size;
    const claimed =
      slots > 0 ? store.claimDueDeliveries(deps.db, clock.now(), { leaseMs, limit: slots, perSubscription: config.webhookConcurrencyPerEndpoint, busy }) : [];
    const reads = passReads();
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
    try {
      pump();
    } catch (err) {
      options.logger.error({ err }, 'webhook dispatcher error; retrying shortly');
      clearTimeout(timer);
      timer = setTimeout(safePump, 1000);
      timer.unref();
    }
  }

  function purge(): void {
    try {
      const deliveries = purgeOldDeliveries(deps);
      const events = purgeEventsBefore(deps, clock.now() - DELIVERY_RETENTION_MS);
      if (deliveries + events > 0) options.logger.info({ deliveries, events }, 'purged webhook history older than 90 days');
    } catch (err) {
      options.logger.error({ err }, 'webhook purge failed');
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      unlisten = deps.outbox.listen(safePump);
      purge();
      purgeTimer = setInterval(purge, PURGE_EVERY_MS);
      purgeTimer.unref();
      safePump();
    },
    async stop() {
      running = false;
      unlisten?.();
      clearTimeout(timer);
      clearInterval(purgeTimer);
      await Promise.allSettled([...inFlight]);
      recordOutcomes(unrecorded.splice(0));
      ownSender?.close();
    },
    async drain() {
      for (;;) {
        pump();
        if (inFlight.size === 0) return;
        await Promise.allSettled([...inFlight]);
      }
    },
    async attemptNow(cabinetId, deliveryId) {
      const delivery = store.findDelivery(deps.db.orm, cabinetId, deliveryId);
      if (!delivery || delivery.status !== 'pending') return;
      store.leaseDelivery(deps.db.orm, delivery.id, clock.now() + leaseMs);
      const outcome = await attempt(delivery, passReads());
      if (outcome) recordOutcomes([outcome]);
    },
  };
}
