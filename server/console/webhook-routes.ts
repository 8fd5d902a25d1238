import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CONSOLE_PAGE_SIZE,
  createConsoleWebhook,
  deleteConsoleWebhook,
  listConsoleDeliveries,
  listConsoleWebhooks,
  replayConsoleDelivery,
  rotateConsoleWebhookSecret,
  testConsoleWebhook,
  updateConsoleWebhook,
  type ConsoleWebhook,
} from '../../shared/console-webhooks.js';
import { DEFAULT_ROTATION_OVERLAP_SECONDS } from '../../shared/webhooks.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import type { Dispatcher } from '../webhooks/dispatcher.js';
import { auditWebhook } from '../webhooks/audit.js';
import * as webhooks from '../webhooks/service.js';
import { sendTestDelivery } from '../webhooks/test-delivery.js';
import { consoleUser } from './guard.js';

/**
 * Console API of the webhooks slice: subscriptions, their deliveries, tests and replays. The same
 * services as the REST routes (server/webhooks/routes.ts), for the signed-in admin's cabinet, with
 * the session cookie and the CSRF header instead of an API key.
 */
export async function webhookConsoleRoutes(
  app: FastifyInstance,
  { deps, dispatcher }: { deps: Deps; dispatcher: Dispatcher },
): Promise<void> {
  const cabinetOf = (request: FastifyRequest) => consoleUser(request).cabinetId;

  registerEndpoint(app, listConsoleWebhooks, (request) => {
    const cabinetId = cabinetOf(request);
    const page = webhooks.listWebhooks(deps, cabinetId, { limit: CONSOLE_PAGE_SIZE, cursor: request.query.cursor });
    const data: ConsoleWebhook[] = page.data.map((webhook) => ({
      ...webhook,
      last_delivery: webhooks.listDeliveries(deps, cabinetId, webhook.id, { limit: 1 }).data[0] ?? null,
    }));
    return { ...page, data };
  });
  registerEndpoint(app, createConsoleWebhook, (request) => {
    const created = webhooks.createWebhook(deps, cabinetOf(request), request.body);
    auditWebhook(deps, request, cabinetOf(request), 'webhook.created', created.id, created.url);
    return respond(201, created);
  });
  registerEndpoint(app, updateConsoleWebhook, (request) =>
    webhooks.updateWebhook(deps, cabinetOf(request), request.params.id, request.body),
  );
  registerEndpoint(app, deleteConsoleWebhook, (request, reply) => {
    webhooks.deleteWebhook(deps, cabinetOf(request), request.params.id);
    auditWebhook(deps, request, cabinetOf(request), 'webhook.deleted', request.params.id);
    return reply.code(204).send();
  });
  registerEndpoint(app, rotateConsoleWebhookSecret, (request) =>
    webhooks.rotateWebhookSecret(
      deps,
      cabinetOf(request),
      request.params.id,
      request.body?.overlap_seconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS,
    ),
  );
  registerEndpoint(app, testConsoleWebhook, (request) => sendTestDelivery(deps, dispatcher, cabinetOf(request), request.params.id));
  registerEndpoint(app, listConsoleDeliveries, (request) =>
    webhooks.listDeliveries(deps, cabinetOf(request), request.params.id, { limit: CONSOLE_PAGE_SIZE, cursor: request.query.cursor }),
  );
  // replayDelivery wakes the dispatcher (outbox signal): the new delivery is due at once.
  registerEndpoint(app, replayConsoleDelivery, (request) =>
    respond(202, webhooks.replayDelivery(deps, cabinetOf(request), request.params.id, request.params.delivery_id)),
  );
}
