import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../deps.js';
import { toIso } from '../platform/iso-time.js';
import type { Outcome } from './attempt.js';
import * as store from './store.js';

/** A subscription failing without a single success for this long is deactivated. */
const DEACTIVATE_AFTER_MS = 5 * 24 * 3600 * 1000;

export interface OutcomeOptions {
  logger: FastifyBaseLogger;
  /** Random extra delay for a retry of the given delay. */
  jitter: (delayMs: number) => number;
}

/**
 * Records outcomes in one transaction: under load, the attempts that ended in one turn of the
 * event loop share a commit instead of paying one each. An outcome not yet recorded when the
 * process dies is an attempt whose lease runs out: it is sent again, as after a crash mid-attempt.
 */
export function recordOutcomes(deps: Deps, outcomes: readonly Outcome[], options: OutcomeOptions): void {
  if (outcomes.length === 0) return;
  deps.db.transaction(() => {
    // Each subscription's health is read once per transaction, and kept up to date here as it changes.
    const health = new Map<string, store.SubscriptionRow | undefined>();
    const current = (subscription: store.SubscriptionRow) => {
      if (!health.has(subscription.id))
        health.set(subscription.id, store.findSubscription(deps.db.orm, subscription.cabinetId, subscription.id));
      return health.get(subscription.id);
    };
    const update = (row: store.SubscriptionRow, changes: Partial<store.SubscriptionRow>) => {
      store.updateSubscription(deps.db.orm, row.cabinetId, row.id, changes);
      health.set(row.id, { ...row, ...changes });
    };
    for (const outcome of outcomes) recordOutcome(deps, outcome, options, current, update);
  });
}

function recordOutcome(
  deps: Deps,
  outcome: Outcome,
  options: OutcomeOptions,
  currentOf: (subscription: store.SubscriptionRow) => store.SubscriptionRow | undefined,
  update: (row: store.SubscriptionRow, changes: Partial<store.SubscriptionRow>) => void,
): void {
  const { delivery, subscription } = outcome;
  const now = deps.clock.now();
  const attemptCount = delivery.attemptCount + 1;
  const exhausted = attemptCount >= delivery.maxAttempts;
  const delay = (deps.config.webhookRetryDelays[attemptCount] ?? 0) * 1000;
  const progress: store.DeliveryProgress = outcome.succeeded
    ? { status: 'succeeded', attemptCount, nextAttemptAt: null, leaseUntil: null, updatedAt: now }
    : exhausted
      ? { status: 'failed', attemptCount, nextAttemptAt: null, leaseUntil: null, updatedAt: now }
      : {
          status: 'pending',
          attemptCount,
          nextAttemptAt: now + delay + (delay > 0 ? options.jitter(delay) : 0),
          leaseUntil: null,
          updatedAt: now,
        };
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
