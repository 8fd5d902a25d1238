import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { canonicalJson } from '../http/canonical-json.js';
import { validationError } from '../http/validation.js';
import { beginRequest, completeRequest, purgeExpired, releaseRequest, type IdempotencyId } from '../idempotency/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyId | null;
  }
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim older than this belongs to a request whose process died; the key may be used again. */
const ABANDONED_CLAIM_MS = 60_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
const REPLAYED_HEADERS = ['content-type', 'location'];

/**
 * Idempotency-Key on every POST of the public API (part 4.1 rules 1-3): the same key, cabinet,
 * endpoint and body replay the stored 2xx response with HTTP 200; another body is 422; a
 * concurrent duplicate is 409. Failed requests release their key so the same call can be retried.
 */
export const idempotencyPlugin = fp<{ deps: Deps }>(
  async (app, { deps }) => {
    app.decorateRequest('idempotency', null);

    app.addHook('preHandler', async (request, reply) => {
      if (request.method !== 'POST' || !request.apiKey) return;
      const header = request.headers['idempotency-key'];
      if (header === undefined) return;
      if (typeof header !== 'string' || !KEY_SHAPE.test(header)) {
        throw validationError([{ path: 'header.Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters (a UUID is best)' }]);
      }
      const id: IdempotencyId = { cabinetId: request.apiKey.cabinetId, endpoint: `POST ${request.routeOptions.url ?? request.url}`, key: header };
      const hash = createHash('sha256')
        .update(canonicalJson({ params: request.params, body: request.body }))
        .digest('hex');
      const outcome = beginRequest(deps.db, id, hash, deps.clock.now(), { ttlMs: IDEMPOTENCY_TTL_MS, lockMs: ABANDONED_CLAIM_MS });
      switch (outcome.kind) {
        case 'started':
          request.idempotency = id;
          return;
        case 'in_progress':
          throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress; retry the same request in a moment.');
        case 'reused':
          throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request on this endpoint; use a fresh key.');
        case 'replay':
          return reply.code(200).headers(outcome.headers).header('Idempotent-Replayed', 'true').send(outcome.body);
      }
    });

    app.addHook('onSend', async (request, reply, payload) => {
      const id = request.idempotency;
      if (!id) return payload;
      request.idempotency = null;
      if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = reply.getHeader(name);
          if (typeof value === 'string') headers[name] = value;
        }
        completeRequest(deps.db, id, { statusCode: reply.statusCode, body: payload, headers });
      } else {
        releaseRequest(deps.db, id);
      }
      return payload;
    });

    let sweeper: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      sweeper = setInterval(() => purgeExpired(deps.db, deps.clock.now()), 60 * 60 * 1000);
      sweeper.unref();
    });
    app.addHook('onClose', async () => clearInterval(sweeper));
  },
  { name: 'courtier-idempotency' },
);
