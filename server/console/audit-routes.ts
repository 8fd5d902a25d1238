import type { FastifyInstance } from 'fastify';
import { listAuditEntries } from '../../shared/audit.js';
import { consoleUser } from './guard.js';
import type { Deps } from '../deps.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { listAudit } from '../audit/service.js';

/** The console's audit page: the signed-in admin's cabinet, and the install-wide entries. */
export async function auditRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  registerEndpoint(app, listAuditEntries, (request) => {
    const { action, user_id, since, until, limit } = request.query;
    const data = listAudit(deps, consoleUser(request).cabinetId, {
      action,
      userId: user_id,
      since: since === undefined ? undefined : Date.parse(since),
      until: until === undefined ? undefined : Date.parse(until),
      limit,
    });
    return { data };
  });
}
