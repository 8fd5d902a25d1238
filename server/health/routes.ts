import type { FastifyInstance } from 'fastify';
import { getHealth } from '../../shared/meta.js';
import { registerEndpoint } from '../platform/http/endpoint.js';

/** Liveness for supervisors and the desktop shell; outside the public API, no auth. */
export async function healthRoutes(app: FastifyInstance, options: { version: string }): Promise<void> {
  registerEndpoint(app, getHealth, () => ({ status: 'ok' as const, version: options.version }));
}
