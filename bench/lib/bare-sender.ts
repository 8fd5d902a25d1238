/**
 * The webhook baseline's sending side, run by the bare-webhooks target (bench/targets.ts): the
 * essential work of delivering events, with nothing else. Each body is an opportunity.created
 * envelope serialised and signed per delivery as the dispatcher does it, with the same headers,
 * POSTed with node:https over one keep-alive agent that trusts the receiver's CA, at the
 * dispatcher's limits (in flight in all, and per endpoint), each response read to the end. No
 * outbox, no delivery rows, no leases, no attempt records, no target checks.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { BareSendResult } from './protocol.js';
import type { EventEnvelope, EventPayload } from '../../shared/events.js';
import { signWebhookPayload } from '../../shared/verify-webhook.js';
import { WEBHOOK_SECRET_PREFIX, WEBHOOK_SECRET_RANDOM_LENGTH } from '../../shared/webhooks.js';
import { WEBHOOK_USER_AGENT } from '../../server/webhooks/attempt.js';

export interface SenderLimits {
  /** Requests in flight in all. */
  concurrency: number;
  /** Requests in flight to one endpoint (one subscription's URL). */
  perEndpoint: number;
  /** Socket inactivity before a request counts as failed. */
  timeoutMs: number;
}

export interface BareSender {
  /** POSTs `count` signed bodies spread evenly over the endpoints; resolves once each is answered. */
  send(count: number): Promise<BareSendResult>;
  close(): void;
}

/** One subscription as the sender sees it: its URL, its secret, and its share of the current send. */
interface Endpoint {
  url: URL;
  secret: string;
  left: number;
  busy: number;
}

type Outcome = { status: number } | { error: string };

/** A secret shaped like the service's (whsec_ + 40 characters): the HMAC key has the same length. */
function newSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_RANDOM_LENGTH).toString('base64url').slice(0, WEBHOOK_SECRET_RANDOM_LENGTH);
}

/** An opportunity.created envelope as the dispatcher sends it (same fields, same order), created now. */
function newEnvelope(cabinetId: string, n: number): EventEnvelope {
  const data: EventPayload<'opportunity.created'> = {
    opportunity_id: randomUUID(),
    title: `Opportunité ${n}`,
    stage: 'new',
    expected_value_eur: (n % 5000) + 0.5,
    source: 'api',
    contact: { last_name: `Client ${n}`, company_name: null, siret: null },
    tags: n % 3 === 0 ? ['bench'] : [],
    client_id: null,
    created_via: 'api',
  };
  return {
    id: randomUUID(),
    type: 'opportunity.created',
    version: 'v1',
    created_at: new Date().toISOString(),
    cabinet_id: cabinetId,
    data,
  };
}

/** The dispatcher's headers for one delivery, signed with the endpoint's secret at the current second. */
function signedHeaders(secret: string, body: string, event: EventEnvelope): Record<string, string> {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'Service-Timestamp': String(timestamp),
    'Service-Signature': `t=${timestamp},v1=${signWebhookPayload(secret, timestamp, body)}`,
    'Service-Event-Id': event.id,
    'Service-Event-Type': event.type,
    'Service-Delivery-Id': randomUUID(),
  };
}

/** One POST, its response body read to the end; never rejects. */
function post(agent: Agent, url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', agent, timeout: timeoutMs, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', (err) => resolve({ error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end(body);
  });
}

/** `count` split evenly over the endpoints, the first ones taking the remainder. */
function share(endpoints: Endpoint[], count: number): void {
  endpoints.forEach((endpoint, i) => {
    endpoint.left = Math.floor(count / endpoints.length) + (i < count % endpoints.length ? 1 : 0);
    endpoint.busy = 0;
  });
}

/**
 * Sends to `receiverUrl`/0 … /<subscriptions − 1>, the paths the courtier-webhooks target
 * subscribes. The agent and its secure context are built once, as the service's sender builds
 * them; its sockets stay open from one send to the next.
 */
export function createBareSender(options: { receiverUrl: string; ca: string; subscriptions: number; limits: SenderLimits }): BareSender {
  const { limits } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: limits.concurrency, secureContext: createSecureContext({ ca: options.ca }) });
  const endpoints: Endpoint[] = Array.from({ length: options.subscriptions }, (_, i) => ({
    url: new URL(`${options.receiverUrl}/${i}`),
    secret: newSecret(),
    left: 0,
    busy: 0,
  }));
  const cabinetId = randomUUID();
  let cursor = 0;
  let sent = 0;

  /** Round robin over the endpoints with work left and a free slot, as the dispatcher spreads its slots over subscriptions. */
  function nextEndpoint(): Endpoint | undefined {
    for (let tried = 0; tried < endpoints.length; tried++) {
      const endpoint = endpoints[cursor];
      cursor = (cursor + 1) % endpoints.length;
      if (endpoint && endpoint.left > 0 && endpoint.busy < limits.perEndpoint) return endpoint;
    }
    return undefined;
  }

  async function deliver(endpoint: Endpoint): Promise<Outcome> {
    const event = newEnvelope(cabinetId, sent++);
    const body = JSON.stringify(event);
    return post(agent, endpoint.url, signedHeaders(endpoint.secret, body, event), body, limits.timeoutMs);
  }

  return {
    async send(count) {
      share(endpoints, count);
      const result: BareSendResult = { ok: 0, failed: 0, concurrency: limits.concurrency, perEndpoint: limits.perEndpoint };
      // A worker stops when no endpoint can take more: an endpoint at its cap still has its own
      // workers, which come back for it, so nothing is left unsent.
      const worker = async () => {
        for (let endpoint = nextEndpoint(); endpoint; endpoint = nextEndpoint()) {
          endpoint.left -= 1;
          endpoint.busy += 1;
          const outcome = await deliver(endpoint);
          endpoint.busy -= 1;
          if ('status' in outcome && outcome.status === 200) result.ok += 1;
          else {
            result.failed += 1;
            result.firstError ??= 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
          }
        }
      };
      await Promise.all(Array.from({ length: limits.concurrency }, worker));
      return result;
    },
    close: () => agent.destroy(),
  };
}
