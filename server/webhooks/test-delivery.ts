import type { z } from 'zod';
import type { testDeliverySchema } from '../../shared/webhooks.js';
import type { Deps } from '../deps.js';
import type { Dispatcher } from './dispatcher.js';
import * as webhooks from './service.js';

/**
 * A test event to one subscription, its single attempt made now rather than on the dispatcher's
 * next turn, so that the answer carries it (the REST route and the console's).
 */
export async function sendTestDelivery(
  deps: Deps,
  dispatcher: Dispatcher,
  cabinetId: string,
  webhookId: string,
): Promise<z.input<typeof testDeliverySchema>> {
  const deliveryId = webhooks.createTestDelivery(deps, cabinetId, webhookId);
  await dispatcher.attemptNow(cabinetId, deliveryId);
  const delivery = webhooks.getDelivery(deps, cabinetId, deliveryId);
  return { delivery, succeeded: delivery.status === 'succeeded' };
}
