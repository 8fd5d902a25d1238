import type { FastifyInstance } from 'fastify';
import {
  CONSOLE_PAGE_SIZE,
  CONSOLE_WEBHOOKS_PREFIX,
  consoleDeliveryParams,
  consoleListQuery,
  consoleWebhookParams,
  type ConsoleWebhook,
} from '../../shared/console-webhooks.js';
import { createWebhookBody, DEFAULT_ROTATION_OVERLAP_SECONDS, rotateSecretBody, updateWebhookBody } from '../../shared/webhooks.js';
import type { z } from 'zod';
import type { Deps } from '../deps.js';
import type { Dispatcher } from '../webhooks/dispatcher.js';
import * as webhooks from '../webhooks/service.js';
import { consoleGuard, consoleUser } from './guard.js';

type Params = z.output<typeof consoleWebhookParams>;
type DeliveryParams = z.output<typeof consoleDeliveryParams>;
type ListQuery = z.output<typeof consoleListQuery>;

/**
 * Console API of the webhooks slice: subscriptions, their deliveries, tests and replays. The same
 * services as the REST routes (server/webhooks/routes.ts), for the signed-in admin's cabinet, with
 * the session cookie and the CSRF header instead of an API key.
 */
export async function webhookConsoleRoutes(app: FastifyInstance, { deps, dispatcher }: { deps: Deps; dispatcher: Dispatcher }): Promise<void> {
  // Encapsulated: these hooks apply to the routes of this plugin only.
  app.addHook('onRequest', consoleGuard(deps, { role: 'admin' }));

  const cabinetOf = (request: Parameters<typeof consoleUser>[0]) => consoleUser(request).cabinetId;

  app.get<{ Querystring: ListQuery }>(CONSOLE_WEBHOOKS_PREFIX, { schema: { querystring: consoleListQuery } }, (request) => {
    const cabinetId = cabinetOf(request);
    const page = webhooks.listWebhooks(deps, cabinetId, { limit: CONSOLE_PAGE_SIZE, cursor: request.query.cursor });
    const data: ConsoleWebhook[] = page.data.map((webhook) => ({
      ...webhook,
      last_delivery: webhooks.listDeliveries(deps, cabinetId, webhook.id, { limit: 1 }).data[0] ?? null,
    }));
    return { ...page, data };
  });

  app.post<{ Body: z.output<typeof createWebhookBody> }>(CONSOLE_WEBHOOKS_PREFIX, { schema: { body: createWebhookBody } }, (request, reply) =>
    reply.code(201).send(webhooks.createWebhook(deps, cabinetOf(request), request.body)),
  );

  app.patch<{ Params: Params; Body: z.output<typeof updateWebhookBody> }>(
    `${CONSOLE_WEBHOOKS_PREFIX}/:id`,
    { schema: { params: consoleWebhookParams, body: updateWebhookBody } },
    (request) => webhooks.updateWebhook(deps, cabinetOf(request), request.params.id, request.body),
  );

  app.delete<{ Params: Params }>(`${CONSOLE_WEBHOOKS_PREFIX}/:id`, { schema: { params: consoleWebhookParams } }, (request, reply) => {
    webhooks.deleteWebhook(deps, cabinetOf(request), request.params.id);
    return reply.code(204).send();
  });

  app.post<{ Params: Params; Body: z.output<typeof rotateSecretBody> }>(
    `${CONSOLE_WEBHOOKS_PREFIX}/:id/rotate-secret`,
    { schema: { params: consoleWebhookParams, body: rotateSecretBody } },
    (request) =>
      webhooks.rotateWebhookSecret(deps, cabinetOf(request), request.params.id, request.body?.overlap_seconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS),
  );

  app.post<{ Params: Params }>(`${CONSOLE_WEBHOOKS_PREFIX}/:id/test`, { schema: { params: consoleWebhookParams } }, async (request) => {
    const cabinetId = cabinetOf(request);
    const deliveryId = webhooks.createTestDelivery(deps, cabinetId, request.params.id);
    // The single attempt goes out now, not on the dispatcher's next turn: the answer carries it.
    await dispatcher.attemptNow(cabinetId, deliveryId);
    const delivery = webhooks.getDelivery(deps, cabinetId, deliveryId);
    return { delivery, succeeded: delivery.status === 'succeeded' };
  });

  app.get<{ Params: Params; Querystring: ListQuery }>(
    `${CONSOLE_WEBHOOKS_PREFIX}/:id/deliveries`,
    { schema: { params: consoleWebhookParams, querystring: consoleListQuery } },
    (request) => webhooks.listDeliveries(deps, cabinetOf(request), request.params.id, { limit: CONSOLE_PAGE_SIZE, cursor: request.query.cursor }),
  );

  app.post<{ Params: DeliveryParams }>(
    `${CONSOLE_WEBHOOKS_PREFIX}/:id/deliveries/:delivery_id/replay`,
    { schema: { params: consoleDeliveryParams } },
    // replayDelivery wakes the dispatcher (outbox signal): the new delivery is due at once.
    (request, reply) => reply.code(202).send(webhooks.replayDelivery(deps, cabinetOf(request), request.params.id, request.params.delivery_id)),
  );
}
