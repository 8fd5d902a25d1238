import { performance } from 'node:perf_hooks';
import type { EventEnvelope } from '../../shared/events.js';
import { maskPersonalData } from '../../shared/masking.js';
import { signWebhookPayload } from '../../shared/verify-webhook.js';
import type { Deps } from '../deps.js';
import { getEvent } from '../events/service.js';
import { decryptSecret } from '../secrets/cipher.js';
import { getCabinetSettings } from '../tenancy/service.js';
import type { HttpSender } from './sender.js';
import * as store from './store.js';
import { BlockedTargetError, type TargetGuard } from './target.js';

/** What receivers see as the User-Agent of every delivery. */
export const WEBHOOK_USER_AGENT = 'Service-Webhook/1.0';

/** How an attempt went, for its delivery's record (outcomes.ts). */
export interface Outcome {
  delivery: store.DeliveryRow;
  subscription: store.SubscriptionRow;
  attemptedAt: number;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  responseBody: string | null;
  succeeded: boolean;
}

export type PassReads = ReturnType<typeof passReads>;
export type Attempt = (delivery: store.DeliveryRow, reads: PassReads) => Promise<Outcome | undefined>;

function signingSecrets(deps: Pick<Deps, 'keys'>, subscription: store.SubscriptionRow, now: number): string[] {
  const secrets = [decryptSecret(deps.keys.webhookSecrets, subscription.secretEnc)];
  if (subscription.previousSecretEnc && subscription.previousSecretExpiresAt !== null && subscription.previousSecretExpiresAt > now) {
    secrets.push(decryptSecret(deps.keys.webhookSecrets, subscription.previousSecretEnc));
  }
  return secrets;
}

/** The body receivers get: masked unless the cabinet shares personal data with LLMs, read now. */
function bodyOf(deps: Deps, event: EventEnvelope): string {
  const { llm_data_sharing } = getCabinetSettings(deps, event.cabinet_id);
  return JSON.stringify(llm_data_sharing ? event : { ...event, data: maskPersonalData(event.type, event.data) });
}

/**
 * What the attempts started in one synchronous pass of a pump share: an event may go to many
 * subscriptions, each of which would otherwise read it, its cabinet's switch and its own secrets
 * again. Nothing outlives the pass, so a rotated secret or a switch turned off applies from the
 * next one.
 */
export function passReads(deps: Deps) {
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
        bodies.set(delivery.eventId, event && { event, body: bodyOf(deps, event) });
      }
      return bodies.get(delivery.eventId);
    },
    secrets(subscription: store.SubscriptionRow) {
      let found = secrets.get(subscription.id);
      if (!found) {
        found = signingSecrets(deps, subscription, deps.clock.now());
        secrets.set(subscription.id, found);
      }
      return found;
    },
  };
}

/**
 * One attempt of a delivery, for the dispatcher: reads what it needs through the pass's reads,
 * signs the body at send time, POSTs it with `send` to the address `guard` vetted, and says how
 * it went. Recording that is outcomes.ts's.
 */
export function createAttempt(deps: Deps, io: { send: HttpSender; guard: TargetGuard }): Attempt {
  const { clock } = deps;
  const { send, guard } = io;

  async function post(
    subscription: store.SubscriptionRow,
    delivery: store.DeliveryRow,
    event: EventEnvelope,
    body: string,
    secrets: readonly string[],
  ) {
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
    return {
      delivery,
      subscription,
      attemptedAt,
      durationMs: Math.round(performance.now() - started),
      httpStatus,
      error,
      responseBody,
      succeeded,
    };
  }

  return attempt;
}
