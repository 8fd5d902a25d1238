import type { FastifyInstance } from 'fastify';
import type { Worker } from '../automation/worker.js';
import type { Deps } from '../deps.js';
import type { BrowserRuntime } from '../robots/browser.js';

/** Console API of the automation slice: insurers and credentials, pricing, jobs with live events, MFA answers. */
export async function automationConsoleRoutes(_app: FastifyInstance, _options: { deps: Deps; worker: Worker; runtime: BrowserRuntime }): Promise<void> {}
