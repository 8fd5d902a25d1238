import { z } from 'zod';
import {
  changesSomeContactField,
  CLIENT_CONTACT_FIELDS,
  CLIENT_TYPES,
  createClientBody,
  createOpportunityBody,
  FINAL_STAGES,
  opportunityStageSchema,
  updateClientBody,
  updateOpportunityBody,
} from '../../shared/crm.js';
import { getClient, getOpportunity, listClients, listOpportunities } from '../../shared/crm-endpoints.js';
import * as clients from '../crm/clients.js';
import * as crm from '../crm/service.js';
import * as erasure from '../erasure/service.js';
import { CREATE, defineTool, listed, READ } from './tool-definition.js';

const opportunityId = getOpportunity.params.shape.opportunity_id.describe(
  'The opportunity id (id or opportunity_id from list_opportunities or create_opportunity).',
);

const clientId = getClient.params.shape.client_id.describe('The client id (id or client_id from list_clients or create_client).');

const PAGING =
  'Answers {data, next_cursor, has_more, count}, newest first, at most limit items (default 50, max 100). ' +
  'To read the next page, call again with cursor set to next_cursor and the same filters.';

/** The CRM's tools: opportunities, then clients and a client's erasure. */
export const CRM_TOOLS = [
  defineTool({
    name: 'list_opportunities',
    title: 'List opportunities',
    description:
      `Lists the cabinet’s sales opportunities (leads), each with id, title, product, stage (${listed(opportunityStageSchema.options)}), ` +
      'expected_value_eur, source, contact, tags and dates. Filter by stage or created_after. ' +
      PAGING,
    input: listOpportunities.query.strict(),
    annotations: { ...READ, title: 'List opportunities' },
    scope: 'crm:read',
    returns: 'opportunity_page',
    run: ({ deps, access }, query) => crm.listOpportunities(deps, access.cabinetId, query),
  }),
  defineTool({
    name: 'get_opportunity',
    title: 'Get an opportunity',
    description:
      'Returns one opportunity by its id (from list_opportunities or create_opportunity), with its stage, contact, amounts and tags.',
    input: z.strictObject({ opportunity_id: opportunityId }),
    annotations: { ...READ, title: 'Get an opportunity' },
    scope: 'crm:read',
    returns: 'opportunity',
    run: ({ deps, access }, { opportunity_id }) => crm.getOpportunity(deps, access.cabinetId, opportunity_id),
  }),
  defineTool({
    name: 'create_opportunity',
    title: 'Create an opportunity',
    description:
      'Creates a sales opportunity (a lead) in the CRM and returns it with its id. Needs a title, a product (code or label, e.g. auto, mrh) ' +
      'and a contact with at least last_name; stage, expected_value_eur and tags have defaults. ' +
      'Each call creates a new opportunity: check list_opportunities first if it may already exist.',
    input: createOpportunityBody,
    annotations: { ...CREATE, title: 'Create an opportunity' },
    scope: 'crm:write',
    idempotent: true,
    returns: 'opportunity',
    run: ({ deps, access }, input) => crm.createOpportunity(deps, access.cabinetId, input, 'mcp'),
  }),
  defineTool({
    name: 'update_opportunity_stage',
    title: 'Move an opportunity to a stage',
    description:
      `Moves an opportunity (id from list_opportunities) to a stage: ${listed(opportunityStageSchema.options)}, and returns it. ` +
      `Open stages move freely; ${listed(FINAL_STAGES, 'and')} are final: moving out of them needs reopen: true (else the error invalid_stage_transition). ` +
      `Reaching ${listed(FINAL_STAGES)} notifies the cabinet’s integrations.`,
    input: z.strictObject({ opportunity_id: opportunityId, stage: opportunityStageSchema, reopen: updateOpportunityBody.shape.reopen }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
      title: 'Move an opportunity to a stage',
    },
    scope: 'crm:write',
    returns: 'opportunity',
    run: ({ deps, access }, { opportunity_id, stage, reopen }) =>
      crm.updateOpportunity(deps, access.cabinetId, opportunity_id, { stage, ...(reopen === undefined ? {} : { reopen }) }),
  }),
  defineTool({
    name: 'list_clients',
    title: 'List clients',
    description:
      `Lists the cabinet’s clients, each with its type (${listed(CLIENT_TYPES)}), id, names, SIRET, email, phone, address and birth date. ` +
      'Filter by type or created_after. Use it to find the client_id that create_devis and price_quote take. ' +
      PAGING,
    input: listClients.query.strict(),
    annotations: { ...READ, title: 'List clients' },
    scope: 'crm:read',
    returns: 'client_page',
    run: ({ deps, access }, query) => clients.listClients(deps, access.cabinetId, query),
  }),
  defineTool({
    name: 'create_client',
    title: 'Create a client',
    description:
      'Creates a client and returns it with its id (client_id). A person (type person, the default) needs last_name; ' +
      'a company (type company) needs company_name. A SIRET is checked with its key; birth_date is YYYY-MM-DD. ' +
      'Each call creates a new client: check list_clients first if the client may already exist.',
    input: createClientBody,
    annotations: { ...CREATE, title: 'Create a client' },
    scope: 'crm:write',
    idempotent: true,
    returns: 'client',
    run: ({ deps, access }, input) => clients.createClient(deps, access.cabinetId, input),
  }),
  defineTool({
    name: 'update_client',
    title: 'Change a client’s contact details',
    description:
      `Changes a client (client_id from list_clients) and returns it after the change. Give any of ${listed(CLIENT_CONTACT_FIELDS, 'and')} ` +
      '(at least one), checked as in create_client; the others stay, null clears an optional one, and address is replaced whole. ' +
      'The type never changes: a person keeps a last_name, a company keeps a company_name. An erased client gives the error not_found.',
    input: z
      .strictObject({ client_id: clientId, ...updateClientBody.shape })
      .refine(changesSomeContactField, 'give at least one field to change'),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
      title: 'Change a client’s contact details',
    },
    scope: 'crm:write',
    returns: 'client',
    run: ({ deps, access }, { client_id, ...patch }) => clients.updateClient(deps, access.cabinetId, client_id, patch),
  }),
  defineTool({
    name: 'erase_client',
    title: 'Erase a client’s personal data',
    description:
      'Erases a client (client_id from list_clients) for good, for the right to erasure: every name, SIRET, email, phone, address and birth date is wiped ' +
      'and cannot be recovered. The client disappears from list_clients and cannot be used in new quotes; its existing quotes and contracts keep its client_id. ' +
      'Only call it when the user has clearly asked to erase this client, and confirm which client first. ' +
      'Returns {client_id, erased_at}; erasing an erased client returns the same answer again.',
    input: z.strictObject({ client_id: clientId }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
      title: 'Erase a client’s personal data',
    },
    scope: 'crm:write',
    returns: 'client_erasure',
    run: ({ deps, access }, { client_id }) => erasure.eraseClient(deps, access.cabinetId, client_id),
  }),
];
