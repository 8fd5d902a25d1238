import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import type { Dispatcher } from '../webhooks/dispatcher.js';

/** Console API of the webhooks slice: subscriptions, their deliveries, tests and replays. */
export async function webhookConsoleRoutes(_app: FastifyInstance, _options: { deps: Deps; dispatcher: Dispatcher }): Promise<void> {}
