import type { FastifyInstance } from 'fastify';
import {
  attachConsoleDevisClient,
  createConsoleClient,
  createConsoleOpportunity,
  eraseConsoleClient,
  getConsoleClient,
  getConsoleDevis,
  getConsoleOpportunity,
  listClientOpportunities,
  listConsoleClients,
  listConsoleDevis,
  listConsoleOpportunities,
  signConsoleDevis,
  updateConsoleClient,
  updateConsoleOpportunity,
} from '../../shared/console-records.js';
import type { Opportunity } from '../../shared/crm.js';
import { addConsoleOpportunityNote, listConsoleOpportunityNotes } from '../../shared/opportunity-notes.js';
import * as clients from '../crm/clients.js';
import * as notes from '../crm/notes.js';
import * as crm from '../crm/service.js';
import type { Deps } from '../deps.js';
import { attachClient } from '../devis/attach-client.js';
import { listDevis as listQuotes } from '../devis/list.js';
import * as devis from '../devis/service.js';
import * as erasure from '../erasure/service.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { consoleUser } from './guard.js';
import { describeDevis, describeOneDevis, describeOpportunities, describeOpportunity } from './records.js';

/**
 * The console's records: clients, opportunities and quotes, through the CRM's and the quotes'
 * services as the REST API calls them, for the signed-in user's cabinet.
 */
export async function recordsConsoleRoutes(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const cabinet = (request: Parameters<typeof consoleUser>[0]) => consoleUser(request).cabinetId;

  registerEndpoint(app, listConsoleClients, (request) => clients.listClients(deps, cabinet(request), request.query));
  registerEndpoint(app, createConsoleClient, (request) => respond(201, clients.createClient(deps, cabinet(request), request.body)));
  registerEndpoint(app, getConsoleClient, (request) => clients.getClient(deps, cabinet(request), request.params.client_id));
  registerEndpoint(app, updateConsoleClient, (request) =>
    clients.updateClient(deps, cabinet(request), request.params.client_id, request.body),
  );
  registerEndpoint(app, eraseConsoleClient, (request, reply) => {
    erasure.eraseClient(deps, cabinet(request), request.params.client_id);
    return reply.code(204).send();
  });
  registerEndpoint(app, listClientOpportunities, (request) => {
    const cabinetId = cabinet(request);
    const client = clients.getClient(deps, cabinetId, request.params.client_id);
    const quoted = devis.opportunityIdsOfClient(deps, cabinetId, client.client_id);
    return { data: crm.listOpportunitiesOfClient(deps, cabinetId, client, quoted) };
  });

  const described = (cabinetId: string, opportunity: Opportunity) => describeOpportunity(deps, cabinetId, opportunity);
  registerEndpoint(app, listConsoleOpportunities, (request) => {
    const cabinetId = cabinet(request);
    const page = crm.listOpportunities(deps, cabinetId, request.query);
    return { ...page, data: describeOpportunities(deps, cabinetId, page.data) };
  });
  registerEndpoint(app, createConsoleOpportunity, (request) => {
    const cabinetId = cabinet(request);
    return respond(201, described(cabinetId, crm.createOpportunity(deps, cabinetId, request.body, 'console')));
  });
  registerEndpoint(app, getConsoleOpportunity, (request) => {
    const cabinetId = cabinet(request);
    return described(cabinetId, crm.getOpportunity(deps, cabinetId, request.params.opportunity_id));
  });
  registerEndpoint(app, updateConsoleOpportunity, (request) => {
    const cabinetId = cabinet(request);
    return described(cabinetId, crm.updateOpportunity(deps, cabinetId, request.params.opportunity_id, request.body));
  });
  registerEndpoint(app, listConsoleOpportunityNotes, (request) => notes.listNotes(deps, cabinet(request), request.params.opportunity_id));
  registerEndpoint(app, addConsoleOpportunityNote, (request) => {
    const user = consoleUser(request);
    return respond(
      201,
      notes.addNote(deps, user.cabinetId, request.params.opportunity_id, { author: user.email, body: request.body.body }),
    );
  });

  registerEndpoint(app, listConsoleDevis, (request) => {
    const cabinetId = cabinet(request);
    const page = listQuotes(deps, cabinetId, request.query);
    return { ...page, data: describeDevis(deps, cabinetId, page.data) };
  });
  registerEndpoint(app, getConsoleDevis, (request) => {
    const cabinetId = cabinet(request);
    return describeOneDevis(deps, cabinetId, devis.getDevis(deps, cabinetId, request.params.devis_id));
  });
  registerEndpoint(app, attachConsoleDevisClient, (request) => {
    const cabinetId = cabinet(request);
    const attached = attachClient(deps, cabinetId, request.params.devis_id, request.body.client_id);
    request.log.info({ devis_id: attached.devis_id }, 'client attached to a quote from the console');
    return describeOneDevis(deps, cabinetId, attached);
  });
  registerEndpoint(app, signConsoleDevis, (request) => {
    const cabinetId = cabinet(request);
    return describeOneDevis(deps, cabinetId, devis.signDevis(deps, cabinetId, request.params.devis_id, request.body));
  });
}
