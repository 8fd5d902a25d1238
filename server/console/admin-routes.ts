import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';

/** Console API of the admin slice: first-run setup, users, API keys, settings, wallet and status, connected apps. */
export async function adminConsoleRoutes(_app: FastifyInstance, _options: { deps: Deps }): Promise<void> {}
