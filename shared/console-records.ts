import { z } from 'zod';
import { jobStatusSchema } from './automation.js';
import { opportunitySchema } from './crm.js';
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
} from './crm-endpoints.js';
import { devisSchema, getDevis, listDevis, signDevis } from './devis.js';
import { consoleTwin, defineEndpoint } from './endpoint.js';
import { idParam, pageSchema } from './pagination.js';

/**
 * The cabinet's records in the console: clients, opportunities and quotes, whoever created them
 * (the REST API, MCP assistants, robots, another install through the sync). Each line is the REST
 * API's own, offered to a console session (consoleTwin); quotes are answered with the names a
 * person reads (the client's, the product's) and the job that priced them.
 */

const TAG = 'Console: records';
const twin = { tag: TAG, auth: 'console' } as const;

// Clients.

export const listConsoleClients = defineEndpoint(consoleTwin(listClients, { ...twin, operationId: 'consoleListClients' }));
// A console's POST is not replayed (no Idempotency-Key): its answer is the creation alone.
export const createConsoleClient = defineEndpoint({
  ...consoleTwin(createClient, { ...twin, operationId: 'consoleCreateClient' }),
  responses: { 201: createClient.responses[201] },
});
export const getConsoleClient = defineEndpoint(consoleTwin(getClient, { ...twin, operationId: 'consoleGetClient' }));
export const updateConsoleClient = defineEndpoint(consoleTwin(updateClient, { ...twin, operationId: 'consoleUpdateClient' }));
export const eraseConsoleClient = defineEndpoint(consoleTwin(eraseClient, { ...twin, operationId: 'consoleEraseClient' }));

export const listClientOpportunities = defineEndpoint({
  method: 'GET',
  surface: 'console',
  path: '/clients/{client_id}/opportunities',
  operationId: 'consoleListClientOpportunities',
  summary: 'The opportunities of a client',
  description:
    'An opportunity is the client’s when its client_id is the client, when one of the client’s quotes names it (opportunity_id), ' +
    'or when its contact has the client’s email (case-insensitive) or SIRET. Newest first, at most 100.',
  tag: TAG,
  auth: 'console',
  params: idParam('client_id'),
  responses: { 200: { description: 'The opportunities.', schema: z.object({ data: z.array(opportunitySchema) }) } },
  errors: ['not_found'],
});

// Opportunities (created from the console: created_via console), with their client's name.

/** An opportunity as a person reads it: the REST API's Opportunity, with its client's name. */
export const consoleOpportunitySchema = opportunitySchema
  .extend({
    client_name: z.string().nullable().describe('The client’s name; null without a client, or once the client was erased.'),
  })
  .meta({ id: 'ConsoleOpportunity' });
export type ConsoleOpportunity = z.infer<typeof consoleOpportunitySchema>;

const oneOpportunity = (description: string) => ({ description, schema: consoleOpportunitySchema });

export const listConsoleOpportunities = defineEndpoint({
  ...consoleTwin(listOpportunities, { ...twin, operationId: 'consoleListOpportunities' }),
  responses: { 200: { description: 'A page, newest first.', schema: pageSchema(consoleOpportunitySchema, 'ConsoleOpportunityPage') } },
});
export const createConsoleOpportunity = defineEndpoint({
  ...consoleTwin(createOpportunity, { ...twin, operationId: 'consoleCreateOpportunity' }),
  responses: { 201: oneOpportunity('Created.') },
});
export const getConsoleOpportunity = defineEndpoint({
  ...consoleTwin(getOpportunity, { ...twin, operationId: 'consoleGetOpportunity' }),
  responses: { 200: oneOpportunity('The opportunity.') },
});
export const updateConsoleOpportunity = defineEndpoint({
  ...consoleTwin(updateOpportunity, { ...twin, operationId: 'consoleUpdateOpportunity' }),
  responses: { 200: oneOpportunity('The opportunity after the change.') },
});

// Quotes.

/** A quote as a person reads it: the REST API's Devis, with the names behind its ids. */
export const consoleDevisSchema = devisSchema
  .extend({
    client_name: z.string().nullable().describe('The client’s name; null without a client, or once the client was erased.'),
    client_erased: z.boolean().describe('The quote’s client was erased: its id stays, its name is gone.'),
    product_label: z.string().describe('The product’s label (its code when no insurer of this install offers it any more).'),
    insurer_name: z.string().describe('The insurer’s name (its code when this install has no such insurer).'),
    job: z
      .object({ job_id: z.uuid(), status: jobStatusSchema, created_at: z.iso.datetime() })
      .nullable()
      .describe('The job that priced it, if any.'),
  })
  .meta({ id: 'ConsoleDevis' });
export type ConsoleDevis = z.infer<typeof consoleDevisSchema>;

const consoleDevisPageSchema = z.object({
  data: z.array(consoleDevisSchema),
  next_cursor: z.string().nullable(),
  has_more: z.boolean(),
  count: z.int(),
});

export const listConsoleDevis = defineEndpoint({
  ...consoleTwin(listDevis, { ...twin, operationId: 'consoleListDevis' }),
  responses: { 200: { description: 'A page, newest first.', schema: consoleDevisPageSchema } },
});
export const getConsoleDevis = defineEndpoint({
  ...consoleTwin(getDevis, { ...twin, operationId: 'consoleGetDevis' }),
  responses: { 200: { description: 'The quote.', schema: consoleDevisSchema } },
});
export const signConsoleDevis = defineEndpoint({
  ...consoleTwin(signDevis, { ...twin, operationId: 'consoleSignDevis' }),
  responses: { 200: { description: 'The signed quote.', schema: consoleDevisSchema } },
});

export const attachConsoleDevisClient = defineEndpoint({
  method: 'POST',
  surface: 'console',
  path: '/devis/{devis_id}/client',
  operationId: 'consoleAttachDevisClient',
  summary: 'Give a quote priced without a client its client (once), so that it can be signed',
  tag: TAG,
  auth: 'console',
  params: idParam('devis_id'),
  body: z.strictObject({ client_id: z.uuid().describe('A client of the cabinet, not erased.') }),
  responses: { 200: { description: 'The quote, with its client.', schema: consoleDevisSchema } },
  errors: ['not_found', 'invalid_devis_transition'],
});

export const CONSOLE_RECORDS_ENDPOINTS = [
  listConsoleClients,
  createConsoleClient,
  getConsoleClient,
  updateConsoleClient,
  eraseConsoleClient,
  listClientOpportunities,
  listConsoleOpportunities,
  createConsoleOpportunity,
  getConsoleOpportunity,
  updateConsoleOpportunity,
  listConsoleDevis,
  getConsoleDevis,
  signConsoleDevis,
  attachConsoleDevisClient,
] as const;
