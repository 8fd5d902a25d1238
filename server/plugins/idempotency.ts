import { randomUUID } from 'node:crypto';
import fp from 'fastify-plugin';
import type { Deps } from '../deps.js';
import { createIdempotency, type Idempotency } from '../idempotency/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Idempotency-Key on every POST of the public API; registerEndpoint runs POST handlers through it. */
    idempotency: Idempotency;
  }
}

const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * Idempotency-Key (part 4.1 rules 1-3), scoped to the API key that sends it: the same caller,
 * endpoint, key and request replay the stored response with HTTP 200; another request with the key
 * is 422; a duplicate of a request still running is 409. Expired keys are swept every hour.
 */
export const idempotencyPlugin = fp<{ deps: Deps }>(
  async (app, { deps }) => {
    // Tells this process's running claims from those of a process that died.
    app.decorate(
      'idempotency',
      createIdempotency(deps, randomUUID(), (details, message) => app.log.warn(details, message)),
    );
    let sweeper: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      sweeper = setInterval(() => app.idempotency.purge(), SWEEP_EVERY_MS);
      sweeper.unref();
    });
    app.addHook('onClose', async () => clearInterval(sweeper));
  },
  { name: 'courtier-idempotency' },
);
