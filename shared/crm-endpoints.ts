import { z } from 'zod';
import { defineEndpoint } from './endpoint.js';
import {
  CLIENT_SORTS,
  OPPORTUNITY_SORTS,
  CLIENT_TYPES,
  clientSchema,
  createClientBody,
  createOpportunityBody,
  opportunitySchema,
  opportunityStageSchema,
  updateClientBody,
  updateOpportunityBody,
} from './crm.js';
import { createdAfterSchema, idParam, listQueryBase, pageSchema } from './pagination.js';

/** The CRM's routes: opportunities and clients. Their bodies and answers are in crm.ts. */

export const IDEMPOTENCY_HEADER = {
  'Idempotency-Key': {
    description:
      'A fresh UUID per distinct operation. A retry with the same key and body returns the original result with HTTP 200 and Idempotent-Replayed: true.',
    required: false,
  },
} as const;
const IDEMPOTENCY_ERRORS = ['idempotency_conflict', 'idempotency_key_reused'] as const;
const REPLAY_RESPONSE = (schema: z.ZodType) => ({ description: 'Replay of an earlier request with the same Idempotency-Key.', schema });

export const createOpportunity = defineEndpoint({
  method: 'POST',
  path: '/opportunities',
  operationId: 'createOpportunity',
  summary: 'Create an opportunity',
  description: 'Emits opportunity.created.',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:write',
  headers: IDEMPOTENCY_HEADER,
  body: createOpportunityBody,
  responses: { 201: { description: 'Created.', schema: opportunitySchema }, 200: REPLAY_RESPONSE(opportunitySchema) },
  errors: IDEMPOTENCY_ERRORS,
});

export const listOpportunities = defineEndpoint({
  method: 'GET',
  path: '/opportunities',
  operationId: 'listOpportunities',
  summary: 'List opportunities, newest first',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:read',
  query: z.object({
    ...listQueryBase,
    stage: opportunityStageSchema.optional(),
    created_after: createdAfterSchema.optional(),
    sort: z
      .enum(OPPORTUNITY_SORTS)
      .default('-created_at')
      .describe(
        '-created_at: newest first (the default); -expected_value_eur: the largest expected value first. A cursor is for the order it was made in.',
      ),
  }),
  responses: { 200: { description: 'A page.', schema: pageSchema(opportunitySchema, 'OpportunityPage') } },
  errors: ['invalid_cursor'],
});

const opportunityParams = idParam('opportunity_id');

export const getOpportunity = defineEndpoint({
  method: 'GET',
  path: '/opportunities/{opportunity_id}',
  operationId: 'getOpportunity',
  summary: 'Get an opportunity',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:read',
  params: opportunityParams,
  responses: { 200: { description: 'The opportunity.', schema: opportunitySchema } },
  errors: ['not_found'],
});

export const updateOpportunity = defineEndpoint({
  method: 'PATCH',
  path: '/opportunities/{opportunity_id}',
  operationId: 'updateOpportunity',
  summary: 'Change an opportunity, including its stage',
  description:
    'Stages: new, qualified, quoted, negotiation, won, lost. Open stages move freely; won and lost are final unless reopen is true. ' +
    'A stage change emits opportunity.stage_changed, plus opportunity.won or opportunity.lost when it reaches them.',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:write',
  params: opportunityParams,
  body: updateOpportunityBody,
  responses: { 200: { description: 'The opportunity after the change.', schema: opportunitySchema } },
  errors: ['not_found', 'invalid_stage_transition'],
});

export const createClient = defineEndpoint({
  method: 'POST',
  path: '/clients',
  operationId: 'createClient',
  summary: 'Create a client (a person or a company)',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:write',
  headers: IDEMPOTENCY_HEADER,
  body: createClientBody,
  responses: { 201: { description: 'Created.', schema: clientSchema }, 200: REPLAY_RESPONSE(clientSchema) },
  errors: IDEMPOTENCY_ERRORS,
});

export const listClients = defineEndpoint({
  method: 'GET',
  path: '/clients',
  operationId: 'listClients',
  summary: 'List clients, newest first',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:read',
  description:
    'q searches the last name, first name, company name and email (case-insensitive, anywhere in the word): q=dupont finds Dupont and Dupont-Aignan.',
  query: z.object({
    ...listQueryBase,
    type: z.enum(CLIENT_TYPES).optional(),
    q: z
      .string()
      .trim()
      .min(1, 'q must not be empty')
      .max(100)
      .optional()
      .describe('Text to find in the last name, first name, company name or email.'),
    sort: z
      .enum(CLIENT_SORTS)
      .default('-created_at')
      .describe(
        '-created_at: newest first (the default); name: by name from A to Z, a company by its name and a person by last then first name, in French order (accents and case count only between equal names). A cursor is for the order it was made in.',
      ),
  }),
  responses: { 200: { description: 'A page.', schema: pageSchema(clientSchema, 'ClientPage') } },
  errors: ['invalid_cursor'],
});

const clientParams = idParam('client_id');

export const getClient = defineEndpoint({
  method: 'GET',
  path: '/clients/{client_id}',
  operationId: 'getClient',
  summary: 'Get a client',
  description: 'An erased client (DELETE /clients/{client_id}) answers 404 not_found, as an unknown one does.',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:read',
  params: clientParams,
  responses: { 200: { description: 'The client.', schema: clientSchema } },
  errors: ['not_found'],
});

export const updateClient = defineEndpoint({
  method: 'PATCH',
  path: '/clients/{client_id}',
  operationId: 'updateClient',
  summary: "Change a client's contact details",
  description:
    'Send any of last_name, first_name, company_name, siret, email, phone, address, birth_date (at least one), validated as at creation; ' +
    'the others stay, null clears an optional one, and address is replaced whole. The type cannot change, and its rules hold after the change ' +
    '(a person keeps a last_name, a company a company_name and no birth_date): else 400 validation_error naming the field. ' +
    'Emits client.updated with the client after the change and changed_fields, the names of the fields whose value changed. ' +
    'A change that changes nothing answers the client as it is and emits nothing. An unknown or erased client is 404 not_found.',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:write',
  params: clientParams,
  body: updateClientBody,
  responses: { 200: { description: 'The client after the change.', schema: clientSchema } },
  errors: ['not_found'],
});

export const eraseClient = defineEndpoint({
  method: 'DELETE',
  path: '/clients/{client_id}',
  operationId: 'eraseClient',
  summary: "Erase a client's personal data (right to erasure)",
  description:
    'Wipes every personal field of the client (names, SIRET, email, phone, address, birth date) for good, with the copies the service keeps: ' +
    'its earlier client.updated events (a replayed delivery carries nulls) and its creation as stored for Idempotency-Key replays. ' +
    'The client then answers 404 not_found to GET and PATCH and is left out of GET /clients; POST /devis and tarifications ' +
    'naming it are refused as for an unknown client. Quotes and contracts keep their client_id (a brokerage must keep its contracts): ' +
    'the id stays as a tombstone, with no personal data. Emits client.erased {client_id, erased_at}, which carries no personal data. ' +
    'Idempotent: erasing an erased client answers 204 again and emits nothing.',
  tag: 'CRM',
  auth: 'api_key',
  scope: 'crm:write',
  params: clientParams,
  responses: { 204: { description: 'Erased (now or before); no body.' } },
  errors: ['not_found'],
});
