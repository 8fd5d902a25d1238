import type { FastifyInstance } from 'fastify';
import {
  createClient,
  createOpportunity,
  eraseClient,
  getClient,
  getOpportunity,
  listClients,
  listOpportunities,
  updateClient,
  updateOpportunity,
} from '../../shared/crm-endpoints.js';
import { requestKey } from '../api-keys/routes.js';
import type { Deps } from '../deps.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { addOpportunityNote, listOpportunityNotes } from '../../shared/opportunity-notes.js';
import * as clients from './clients.js';
import * as notes from './notes.js';
import * as crm from './service.js';
import * as erasure from '../erasure/service.js';

export async function crmRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  registerEndpoint(app, createOpportunity, (request) =>
    respond(201, crm.createOpportunity(deps, requestKey(request).cabinetId, request.body, 'api')),
  );
  registerEndpoint(app, listOpportunities, (request) => crm.listOpportunities(deps, requestKey(request).cabinetId, request.query));
  registerEndpoint(app, getOpportunity, (request) =>
    crm.getOpportunity(deps, requestKey(request).cabinetId, request.params.opportunity_id),
  );
  registerEndpoint(app, updateOpportunity, (request) =>
    crm.updateOpportunity(deps, requestKey(request).cabinetId, request.params.opportunity_id, request.body),
  );

  registerEndpoint(app, listOpportunityNotes, (request) =>
    notes.listNotes(deps, requestKey(request).cabinetId, request.params.opportunity_id),
  );
  registerEndpoint(app, addOpportunityNote, (request) =>
    respond(
      201,
      notes.addNote(deps, requestKey(request).cabinetId, request.params.opportunity_id, {
        author: request.body.author ?? 'API',
        body: request.body.body,
      }),
    ),
  );

  registerEndpoint(app, createClient, (request) => respond(201, clients.createClient(deps, requestKey(request).cabinetId, request.body)));
  registerEndpoint(app, listClients, (request) => clients.listClients(deps, requestKey(request).cabinetId, request.query));
  registerEndpoint(app, getClient, (request) => clients.getClient(deps, requestKey(request).cabinetId, request.params.client_id));
  registerEndpoint(app, updateClient, (request) =>
    clients.updateClient(deps, requestKey(request).cabinetId, request.params.client_id, request.body),
  );
  registerEndpoint(app, eraseClient, (request, reply) => {
    erasure.eraseClient(deps, requestKey(request).cabinetId, request.params.client_id);
    return reply.code(204).send();
  });
}
