import type { FastifyInstance, FastifyReply } from 'fastify';
import { createDevis, downloadDevisPdf, getDevis, getDevisPdf, listDevis, signDevis } from '../../shared/devis.js';
import { downloadDevisDocument, getDevisDocument } from '../../shared/devis-documents.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { listDevis as listQuotes } from './list.js';
import * as devis from './service.js';
import { createDocumentLink, createPdfLink, readPdfFromLink } from './pdf-link.js';

export async function devisRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  registerEndpoint(app, createDevis, (request) => respond(201, devis.createDevis(deps, requestKey(request).cabinetId, request.body)));
  registerEndpoint(app, listDevis, (request) => listQuotes(deps, requestKey(request).cabinetId, request.query));
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
    return sendPdf(reply, `devis-${request.params.devis_id}.pdf`, pdf);
  });
  registerEndpoint(app, getDevisDocument, (request, reply) =>
    reply.redirect(createDocumentLink(deps, requestKey(request).cabinetId, request.params.devis_id, request.params.position), 302),
  );
  registerEndpoint(app, downloadDevisDocument, (request, reply) => {
    const { devis_id, position } = request.params;
    const { cabinet_id, expires, signature } = request.query;
    const pdf = readPdfFromLink(deps, { devisId: devis_id, position, cabinetId: cabinet_id, expires, signature });
    return sendPdf(reply, `devis-${devis_id}-document-${position}.pdf`, pdf);
  });
}

function sendPdf(reply: FastifyReply, fileName: string, pdf: Buffer): FastifyReply {
  return reply
    .type('application/pdf')
    .header('Content-Disposition', `attachment; filename="${fileName}"`)
    .header('Cache-Control', 'private, no-store')
    .send(pdf);
}
