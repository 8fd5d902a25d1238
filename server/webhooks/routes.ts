import type { FastifyInstance } from 'fastify';
import {
  createWebhook,
  deleteWebhook,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
} from '../../shared/webhooks.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import type { Dispatcher } from './dispatcher.js';
import { auditWebhook } from './audit.js';
import * as webhooks from './service.js';
import { sendTestDelivery } from './test-delivery.js';

export async function webhookRoutes(app: FastifyInstance, { deps, dispatcher }: { deps: Deps; dispatcher: Dispatcher }): Promise<void> {
  registerEndpoint(app, createWebhook, (request) => {
    const created = webhooks.createWebhook(deps, requestKey(request).cabinetId, request.body);
    auditWebhook(deps, request, requestKey(request).cabinetId, 'webhook.created', created.id, created.url);
    return respond(201, created);
  });
  registerEndpoint(app, listWebhooks, (request) => webhooks.listWebhooks(deps, requestKey(request).cabinetId, request.query));
  registerEndpoint(app, getWebhook, (request) => webhooks.getWebhook(deps, requestKey(request).cabinetId, request.params.id));
  registerEndpoint(app, updateWebhook, (request) =>
    webhooks.updateWebhook(deps, requestKey(request).cabinetId, request.params.id, request.body),
  );
  registerEndpoint(app, deleteWebhook, (request, reply) => {
    webhooks.deleteWebhook(deps, requestKey(request).cabinetId, request.params.id);
    auditWebhook(deps, request, requestKey(request).cabinetId, 'webhook.deleted', request.params.id);
    return reply.code(204).send();
  });
  registerEndpoint(app, rotateWebhookSecret, (request) =>
    webhooks.rotateWebhookSecret(
      deps,
      requestKey(request).cabinetId,
      request.params.id,
      request.body?.overlap_seconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS,
    ),
  );
  registerEndpoint(app, testWebhook, (request) => sendTestDelivery(deps, dispatcher, requestKey(request).cabinetId, request.params.id), {
    asynchronous: true,
  });
  registerEndpoint(app, listDeliveries, (request) =>
    webhooks.listDeliveries(deps, requestKey(request).cabinetId, request.params.id, request.query),
  );
  registerEndpoint(app, replayDelivery, (request) =>
    respond(202, webhooks.replayDelivery(deps, requestKey(request).cabinetId, request.params.id, request.params.delivery_id)),
  );
}
