import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { healthSchema } from '../../shared/meta.js';

/** Liveness for supervisors and the desktop shell; outside the public API, no auth. */
export async function healthRoutes(app: FastifyInstance, options: { version: string }): Promise<void> {
  app.get('/healthz', async (): Promise<z.infer<typeof healthSchema>> => ({ status: 'ok', version: options.version }));
}
