import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * How every demo portal behaves, all at once (COURTIER_SANDBOX_MODE): 'down' answers 503 everywhere,
 * 'flaky' every third request, 'slow' waits latencyMs() per request, 'changed' shows each portal's
 * redesign (labels renamed, fields moved, a step added), which robots written for the old pages must
 * report as portal_changed.
 */
export type SandboxMode = 'normal' | 'slow' | 'flaky' | 'down' | 'changed';

/** What the service gives each demo portal it serves. */
export interface SandboxPortalOptions {
  clock: { now(): number };
  randomBytes: (size: number) => Buffer;
  /** Read on every request, so that tests and demos switch it while the service runs. */
  mode: () => SandboxMode;
  latencyMs: () => number;
}

/**
 * Adds the outages of the modes to a portal: `unavailable` writes its own 503 page (a portal's outage
 * looks like that portal). The phone is the tester's device, not the portal: `exempt` URLs (its
 * route) are never affected.
 */
export function applyOutageModes(
  app: FastifyInstance,
  options: Pick<SandboxPortalOptions, 'mode' | 'latencyMs'>,
  portal: { exempt: (routeUrl: string | undefined) => boolean; unavailable: (reply: FastifyReply) => FastifyReply },
): void {
  let requestsInFlakyMode = 0;
  app.addHook('onRequest', async (request, reply) => {
    if (portal.exempt(request.routeOptions.url)) return;
    const mode = options.mode();
    if (mode === 'down') return portal.unavailable(reply.header('Retry-After', '60').code(503));
    if (mode === 'flaky') {
      requestsInFlakyMode += 1;
      if (requestsInFlakyMode % 3 === 0) return portal.unavailable(reply.header('Retry-After', '5').code(503));
    }
    if (mode === 'slow') await sleep(Math.max(0, options.latencyMs()));
  });
}
