import { z } from 'zod';
import { enqueueTarification, getJob } from './automation.js';
import { getProductSchema, listProducts } from './products.js';
import { clientErasureSchema } from './crm.js';
import { getClient, getOpportunity, listClients, listOpportunities } from './crm-endpoints.js';
import { getDevis } from './devis.js';
import { createComparison, getComparison, getRiskSchema } from './comparaisons.js';
import { mcpScopeSchema } from './oauth.js';

/**
 * What the MCP tools answer that no REST route does; the other tools answer the REST resources
 * (Opportunity, Client, Devis, Job…). shared/masking.ts lists the personal data of each.
 */
export const mcpWhoamiSchema = z.object({
  cabinet: z.object({ id: z.uuid(), name: z.string() }),
  user: z.object({ id: z.uuid(), email: z.string() }),
  client: z.object({ client_id: z.string(), client_name: z.string() }),
  scopes: z.array(mcpScopeSchema),
  token_expires_at: z.iso.datetime(),
});

export const devisPdfLinkSchema = z.object({
  devis_id: z.uuid(),
  url: z.string().describe('Absolute signed download link; needs no sign-in.'),
  expires_at: z.iso.datetime(),
});

/**
 * The result of each kind of tool (a tool declares its kind: `returns`), which is its MCP
 * outputSchema. Where a REST route answers the same resource, its response schema is taken from
 * the route itself, so that a tool and the API cannot drift apart.
 */
export const TOOL_RESULTS = {
  whoami: mcpWhoamiSchema,
  product_list: listProducts.responses[200].schema,
  product_schema: getProductSchema.responses[200].schema,
  opportunity: getOpportunity.responses[200].schema,
  opportunity_page: listOpportunities.responses[200].schema,
  client: getClient.responses[200].schema,
  client_page: listClients.responses[200].schema,
  // DELETE /clients/{id} answers 204 without a body: the tool says which client and when instead.
  client_erasure: clientErasureSchema,
  devis: getDevis.responses[200].schema,
  devis_pdf_link: devisPdfLinkSchema,
  // A dry run's validation, or the enqueued job: POST /automation/tarifications's 200.
  tarification: enqueueTarification.responses[200].schema,
  job: getJob.responses[200].schema,
  risk_schema: getRiskSchema.responses[200].schema,
  // A dry run's answer, or the comparison enqueued: POST /automation/comparaisons's 200 or 202.
  comparison_started: z.union([createComparison.responses[200].schema, createComparison.responses[202].schema]),
  comparison: getComparison.responses[200].schema,
} as const satisfies Record<string, z.ZodType<object>>;

/** The resources MCP tools return, by the kind each tool declares. */
export type ToolPayloads = { [K in keyof typeof TOOL_RESULTS]: z.output<(typeof TOOL_RESULTS)[K]> };
export type ToolPayloadKind = keyof ToolPayloads;
