import { z } from 'zod';
import { LIMIT_MAX, pageSchema } from './pagination.js';
import { consoleTwin, defineEndpoint } from './endpoint.js';
import {
  createWebhook,
  deleteWebhook,
  deliverySchema,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  webhookSchema,
} from './webhooks.js';

/** A subscription as the console lists it: the REST shape plus its latest delivery. */
const consoleWebhookSchema = webhookSchema.extend({
  last_delivery: deliverySchema.nullable().describe('The newest delivery of this subscription, or null.'),
});
export type ConsoleWebhook = z.infer<typeof consoleWebhookSchema>;

export const consoleWebhookPageSchema = pageSchema(consoleWebhookSchema, 'ConsoleWebhookPage');
export const consoleDeliveryPageSchema = pageSchema(deliverySchema, 'ConsoleWebhookDeliveryPage');

/** The console lists up to this many per page (the REST maximum). */
export const CONSOLE_PAGE_SIZE = LIMIT_MAX;

const consoleListQuery = z.object({ cursor: z.string().min(1).max(1000).optional() });

/** How long the previous secret may keep signing, as the console offers it (seconds). */
export const ROTATION_OVERLAP_CHOICES = [0, 3600, 86_400, 7 * 86_400] as const;

// ---- Endpoints: the REST routes' twins for the signed-in admin's cabinet ----

const TAG = 'Console: webhooks';
const twin = { tag: TAG, auth: 'console_admin' } as const;

export const listConsoleWebhooks = defineEndpoint({
  ...consoleTwin(listWebhooks, { ...twin, operationId: 'consoleListWebhooks' }),
  summary: 'The cabinet’s subscriptions, each with its latest delivery',
  query: consoleListQuery,
  responses: { 200: { description: 'A page.', schema: consoleWebhookPageSchema } },
});
export const createConsoleWebhook = consoleTwin(createWebhook, { ...twin, operationId: 'consoleCreateWebhook' });
export const updateConsoleWebhook = consoleTwin(updateWebhook, { ...twin, operationId: 'consoleUpdateWebhook' });
export const deleteConsoleWebhook = consoleTwin(deleteWebhook, { ...twin, operationId: 'consoleDeleteWebhook' });
export const rotateConsoleWebhookSecret = consoleTwin(rotateWebhookSecret, { ...twin, operationId: 'consoleRotateWebhookSecret' });
export const testConsoleWebhook = consoleTwin(testWebhook, { ...twin, operationId: 'consoleTestWebhook' });
export const listConsoleDeliveries = defineEndpoint({
  ...consoleTwin(listDeliveries, { ...twin, operationId: 'consoleListDeliveries' }),
  query: consoleListQuery,
  responses: { 200: { description: 'A page.', schema: consoleDeliveryPageSchema } },
});
export const replayConsoleDelivery = consoleTwin(replayDelivery, { ...twin, operationId: 'consoleReplayDelivery' });

export const CONSOLE_WEBHOOK_ENDPOINTS = [
  listConsoleWebhooks,
  createConsoleWebhook,
  updateConsoleWebhook,
  deleteConsoleWebhook,
  rotateConsoleWebhookSecret,
  testConsoleWebhook,
  listConsoleDeliveries,
  replayConsoleDelivery,
] as const;
