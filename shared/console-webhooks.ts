import { z } from 'zod';
import { idParam, LIMIT_MAX, pageSchema } from './pagination.js';
import { deliverySchema, webhookSchema } from './webhooks.js';

/** Console API of the webhooks slice, below this prefix (session cookie and CSRF, admins only). */
export const CONSOLE_WEBHOOKS_PREFIX = '/api/v1/console/webhooks';

/** A subscription as the console lists it: the REST shape plus its latest delivery. */
const consoleWebhookSchema = webhookSchema.extend({
  last_delivery: deliverySchema.nullable().describe('The newest delivery of this subscription, or null.'),
});
export type ConsoleWebhook = z.infer<typeof consoleWebhookSchema>;

export const consoleWebhookPageSchema = pageSchema(consoleWebhookSchema, 'ConsoleWebhookPage');
export const consoleDeliveryPageSchema = pageSchema(deliverySchema, 'ConsoleWebhookDeliveryPage');

/** The console lists up to this many per page (the REST maximum). */
export const CONSOLE_PAGE_SIZE = LIMIT_MAX;

export const consoleListQuery = z.object({ cursor: z.string().min(1).max(1000).optional() });
export const consoleWebhookParams = idParam('id');
export const consoleDeliveryParams = z.object({
  id: z.uuid({ error: 'id must be a UUID' }),
  delivery_id: z.uuid({ error: 'delivery_id must be a UUID' }),
});

/** How long the previous secret may keep signing, as the console offers it (seconds). */
export const ROTATION_OVERLAP_CHOICES = [0, 3600, 86_400, 7 * 86_400] as const;
