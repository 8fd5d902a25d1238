import type { FastifyRequest } from 'fastify';
import { recordAudit, requestActor } from '../audit/service.js';
import type { Deps } from '../deps.js';

/** Names the endpoint by id and host: never its signing secret nor the URL's path or query (they may carry a token). */
export function auditWebhook(
  deps: Deps,
  request: FastifyRequest,
  cabinetId: string,
  action: 'webhook.created' | 'webhook.deleted',
  webhookId: string,
  url?: string,
): void {
  recordAudit(deps, {
    cabinetId,
    action,
    actor: requestActor(request),
    target: webhookId,
    details: url === undefined ? {} : { host: new URL(url).host },
  });
}
