import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import { EVENT_TYPES, type EventType } from './events.js';
import { idParam, listQueryBase, pageSchema } from './pagination.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOK_SECRET_RANDOM_LENGTH = 40;
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 60 * 60;
export const SECRET_WARNING = 'Store this secret now: it is shown only once. It signs every delivery (Service-Signature).';

/** Event types a subscription may list: the catalogue of part 6.4, or the single value "*". */
const SUBSCRIBABLE = new Set<string>(EVENT_TYPES);

const webhookUrlSchema = z.string().max(2000).describe('HTTPS endpoint that receives the deliveries.');
const webhookEventsSchema = z
  .array(z.string().max(100))
  .min(1)
  .max(50)
  .describe('Event types, or ["*"] for every event except webhook.test.');

const createWebhookBody = z
  .strictObject({ url: webhookUrlSchema, events: webhookEventsSchema, description: z.string().trim().max(500).optional() })
  .meta({ id: 'CreateWebhook' });
export type CreateWebhookInput = z.output<typeof createWebhookBody>;

const updateWebhookBody = z
  .strictObject({
    url: webhookUrlSchema.optional(),
    events: webhookEventsSchema.optional(),
    description: z.string().trim().max(500).nullable().optional(),
    active: z.boolean().optional().describe('false pauses deliveries; true resumes (and clears a deactivation).'),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change')
  .meta({ id: 'UpdateWebhook' });
export type UpdateWebhookInput = z.output<typeof updateWebhookBody>;

export const webhookSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    active: z.boolean(),
    disabled_reason: z.string().nullable().describe('Why the service deactivated it (e.g. failing for 5 days), or null.'),
    failing_since: z.iso.datetime().nullable().describe('Start of the current run of failed attempts, or null.'),
    secret_rotation_ends_at: z.iso.datetime().nullable().describe('While set, the previous secret also signs.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof webhookSchema>;

export const createdWebhookSchema = webhookSchema
  .extend({ secret: z.string().describe('whsec_…; returned only here.'), _warning: z.string() })
  .meta({ id: 'CreatedWebhook' });

/** Secrets are shown once: an idempotent replay of a creation or rotation answers secret: null. */
const NO_SECRET_IN_REPLAY = z
  .null()
  .describe('Never kept for replays: the secret was in the first response only. Rotate it if it was lost.');

export const createdWebhookReplaySchema = createdWebhookSchema.extend({ secret: NO_SECRET_IN_REPLAY }).meta({ id: 'CreatedWebhookReplay' });

const rotateSecretBody = z
  .strictObject({
    overlap_seconds: z
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(DEFAULT_ROTATION_OVERLAP_SECONDS)
      .describe('How long the previous secret keeps signing too (default 86400; 0 ends it now).'),
  })
  .optional()
  .meta({ id: 'RotateWebhookSecret' });

export const rotatedSecretSchema = z
  .object({
    id: z.uuid(),
    secret: z.string().describe('The new whsec_…, returned only here.'),
    previous_secret_expires_at: z.iso.datetime().describe('Until then every delivery carries two v1= signatures, new first.'),
    _warning: z.string(),
  })
  .meta({ id: 'RotatedWebhookSecret' });

export const rotatedSecretReplaySchema = rotatedSecretSchema
  .extend({ secret: NO_SECRET_IN_REPLAY })
  .meta({ id: 'RotatedWebhookSecretReplay' });

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const attemptSchema = z
  .object({
    attempted_at: z.iso.datetime(),
    http_status: z.int().nullable(),
    duration_ms: z.int(),
    error: z.string().nullable().describe('blocked_target, timeout, or the network error; null when the receiver answered.'),
    response_body: z.string().nullable().describe('The first 1 KiB of the response body.'),
  })
  .meta({ id: 'WebhookAttempt' });

export const deliverySchema = z
  .object({
    id: z.uuid().describe('Same as delivery_id; sent as Service-Delivery-Id.'),
    delivery_id: z.uuid(),
    webhook_id: z.uuid(),
    event_id: z.uuid().describe('Envelope id, the same across retries and replays.'),
    event_type: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempt_count: z.int(),
    next_attempt_at: z.iso.datetime().nullable(),
    replay_of: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    attempts: z.array(attemptSchema),
  })
  .meta({ id: 'WebhookDelivery' });
export type Delivery = z.infer<typeof deliverySchema>;

const webhookParams = idParam('id');
const ERRORS_ON_BODY = ['invalid_webhook_url', 'unknown_event_type'] as const;

export const createWebhook = defineEndpoint({
  method: 'POST',
  path: '/webhooks',
  operationId: 'createWebhook',
  summary: 'Subscribe an HTTPS endpoint to events',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  body: createWebhookBody,
  responses: {
    201: { description: 'Created; the secret is shown this once.', schema: createdWebhookSchema },
    200: {
      description: 'Replay of an earlier request with the same Idempotency-Key: secret is null (shown once, never kept).',
      schema: createdWebhookReplaySchema,
    },
  },
  errors: [...ERRORS_ON_BODY, 'idempotency_conflict', 'idempotency_key_reused'],
  secretsShownOnce: ['secret'],
});

export const listWebhooks = defineEndpoint({
  method: 'GET',
  path: '/webhooks',
  operationId: 'listWebhooks',
  summary: 'List subscriptions, newest first',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  query: z.object(listQueryBase),
  responses: { 200: { description: 'A page.', schema: pageSchema(webhookSchema, 'WebhookPage') } },
  errors: ['invalid_cursor'],
});

export const getWebhook = defineEndpoint({
  method: 'GET',
  path: '/webhooks/{id}',
  operationId: 'getWebhook',
  summary: 'Get a subscription (never its secret)',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: webhookParams,
  responses: { 200: { description: 'The subscription.', schema: webhookSchema } },
  errors: ['not_found'],
});

export const updateWebhook = defineEndpoint({
  method: 'PATCH',
  path: '/webhooks/{id}',
  operationId: 'updateWebhook',
  summary: 'Change, pause or resume a subscription',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: webhookParams,
  body: updateWebhookBody,
  responses: { 200: { description: 'The subscription after the change.', schema: webhookSchema } },
  errors: ['not_found', ...ERRORS_ON_BODY],
});

export const deleteWebhook = defineEndpoint({
  method: 'DELETE',
  path: '/webhooks/{id}',
  operationId: 'deleteWebhook',
  summary: 'Delete a subscription and its delivery history',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: webhookParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['not_found'],
});

export const rotateWebhookSecret = defineEndpoint({
  method: 'POST',
  path: '/webhooks/{id}/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'Rotate the signing secret without downtime',
  description: 'During the overlap both secrets sign (two v1= entries, new first); after it only the new one.',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: webhookParams,
  body: rotateSecretBody,
  responses: {
    200: {
      description: 'The new secret, shown this once; in an idempotent replay (Idempotent-Replayed: true) secret is null, never kept.',
      schema: z.union([rotatedSecretSchema, rotatedSecretReplaySchema]),
    },
  },
  errors: ['not_found', 'idempotency_conflict', 'idempotency_key_reused'],
  secretsShownOnce: ['secret'],
});

export const testDeliverySchema = z.object({ delivery: deliverySchema, succeeded: z.boolean() }).meta({ id: 'WebhookTestResult' });

export const testWebhook = defineEndpoint({
  method: 'POST',
  path: '/webhooks/{id}/test',
  operationId: 'testWebhook',
  summary: 'Send a webhook.test delivery now and return its outcome',
  description: 'Goes to this subscription only, whatever its event list or state; one attempt, no retry.',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: webhookParams,
  responses: { 200: { description: 'The delivery and its single attempt.', schema: testDeliverySchema } },
  errors: ['not_found', 'idempotency_conflict', 'idempotency_key_reused'],
});

export const listDeliveries = defineEndpoint({
  method: 'GET',
  path: '/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: 'Delivery history, newest first (kept 90 days)',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: webhookParams,
  query: z.object({ ...listQueryBase, status: z.enum(DELIVERY_STATUSES).optional(), event_type: z.enum(EVENT_TYPES).optional() }),
  responses: { 200: { description: 'A page.', schema: pageSchema(deliverySchema, 'WebhookDeliveryPage') } },
  errors: ['not_found', 'invalid_cursor'],
});

export const replayDelivery = defineEndpoint({
  method: 'POST',
  path: '/webhooks/{id}/deliveries/{delivery_id}/replay',
  operationId: 'replayWebhookDelivery',
  summary: 'Send an event again now, as a new delivery with the same event id',
  tag: 'Webhooks',
  auth: 'api_key',
  scope: 'webhooks:manage',
  params: z.object({ id: z.uuid({ error: 'id must be a UUID' }), delivery_id: z.uuid({ error: 'delivery_id must be a UUID' }) }),
  responses: { 202: { description: 'The new delivery, pending.', schema: deliverySchema } },
  errors: ['not_found', 'idempotency_conflict', 'idempotency_key_reused'],
});

export function isSubscribable(type: string): type is EventType {
  return SUBSCRIBABLE.has(type);
}
