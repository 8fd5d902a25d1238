import type { FastifyInstance } from 'fastify';
import { createDevis, downloadDevisPdf, getDevis, getDevisPdf, listDevis, signDevis } from '../../shared/devis.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import * as devis from './service.js';
import { createPdfLink, readPdfFromLink } from './pdf-link.js';

export async function devisRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  registerEndpoint(app, createDevis, (request) => respond(201, devis.createDevis(deps, requestKey(request).cabinetId, request.body)));
  registerEndpoint(app, listDevis, (request) => devis.listDevis(deps, requestKey(request).cabinetId, request.query));
  registerEndpoint(app, getDevis, (request) => devis.getDevis(deps, requestKey(request).cabinetId, request.params.devis_id));
  registerEndpoint(app, signDevis, (request) =>
    devis.signDevis(deps, requestKey(request).cabinetId, request.params.devis_id, request.body),
  );
  registerEndpoint(app, getDevisPdf, (request, reply) =>
    reply.redirect(createPdfLink(deps, requestKey(request).cabinetId, request.params.devis_id), 302),
  );
  registerEndpoint(app, downloadDevisPdf, (request, reply) => {
    const { cabinet_id, expires, signature } = request.query;
    const pdf = readPdfFromLink(deps, { devisId: request.params.devis_id, cabinetId: cabinet_id, expires, signature });
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="devis-${request.params.devis_id}.pdf"`)
      .header('Cache-Control', 'private, no-store')
      .send(pdf);
  });
}
