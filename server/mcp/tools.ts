import type { Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { cancelJob, jobStatusSchema, tarificationRequestBody, TERMINAL_STATUSES } from '../../shared/automation.js';
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
import { codeSchema, createDevisBody, devisStatusSchema, getDevis, type Devis } from '../../shared/devis.js';
import { MCP_SCOPES, type McpScope } from '../../shared/oauth.js';
import * as catalogue from '../automation/catalogue.js';
import * as jobs from '../automation/jobs.js';
import * as automation from '../automation/service.js';
import * as jobControls from '../automation/job-controls.js';
import * as clients from '../crm/clients.js';
import * as crm from '../crm/service.js';
import * as devis from '../devis/service.js';
import { createPdfLink } from '../devis/pdf-link.js';
import * as erasure from '../erasure/service.js';
import { ApiError } from '../errors.js';
import { defineTool, sharesPersonalData, toInputSchema, toOutputSchema, type McpTool, type ToolContext } from './tool-definition.js';

/** get_devis_pdf_link while the cabinet does not share personal data: where a person gets the PDF instead. */
function pdfWithheld({ baseUrl }: ToolContext, quote: Devis): ApiError {
  // The console's jobs page opens the job named in ?job=, with its PDF.
  const consoleUrl = quote.job_id === null ? `${baseUrl()}/console/` : `${baseUrl()}/console/jobs?job=${encodeURIComponent(quote.job_id)}`;
  return new ApiError(
    'llm_data_sharing_off',
    `The PDF of quote ${quote.devis_id} holds the client’s personal data, which this cabinet does not share with AI assistants, so no link is given. ` +
      `A person can download it in the Courtier console: ${consoleUrl}. An administrator can enable LLM data sharing in the console’s Settings.`,
    { devis_id: quote.devis_id, console_url: consoleUrl },
  );
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const NO_ARGUMENTS = z.strictObject({});

const opportunityId = getOpportunity.params.shape.opportunity_id.describe(
  'The opportunity id (id or opportunity_id from list_opportunities or create_opportunity).',
);

const clientId = getClient.params.shape.client_id.describe('The client id (id or client_id from list_clients or create_client).');

const devisId = getDevis.params.shape.devis_id.describe(
  'The quote id (devis_id from create_devis, price_quote via get_job, or get_devis).',
);

const jobId = cancelJob.params.shape.job_id.describe('The job id returned by price_quote.');

/** 'a, b or c': the values of an enum for a description, read from the contract rather than copied into the text. */
function listed(values: readonly string[], last: 'or' | 'and' = 'or'): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} ${last} ${values.at(-1)}`;
}

const PAGING =
  'Answers {data, next_cursor, has_more, count}, newest first, at most limit items (default 50, max 100). ' +
  'To read the next page, call again with cursor set to next_cursor and the same filters.';

/** The tools of the MCP endpoint, in the order tools/list shows them. */
const TOOL_SPECS = [
  defineTool({
    name: 'whoami',
    title: 'Who am I',
    description:
      'Returns who this connection acts for: the cabinet (brokerage office) {id, name}, the signed-in user {id, email}, ' +
      'the connected client {client_id, client_name}, the scopes granted (which tools are usable) and when the access token expires. ' +
      'Takes no arguments. Use it to check the connection or before acting, to know which cabinet you are working in.',
    input: NO_ARGUMENTS,
    annotations: { ...READ, title: 'Who am I' },
    scope: null,
    returns: 'whoami',
    run: ({ access }) => ({
      cabinet: { id: access.cabinetId, name: access.cabinetName },
      user: { id: access.userId, email: access.userEmail },
      client: { client_id: access.clientId, client_name: access.clientName },
      scopes: [...access.scopes],
      token_expires_at: new Date(access.expiresAt).toISOString(),
    }),
  }),
  defineTool({
    name: 'list_products',
    title: 'List insurance products',
    description:
      'Returns the products that can be priced by the robots ({data: [{code, label, kind, cost_credits, insurers: [{code, name}]}]}): ' +
      'kind quote prices a contract, kind routine fetches a document. cost_credits is what one real run spends. ' +
      'Use it first to find the produit and compagnie codes that get_product_schema and price_quote need.',
    input: NO_ARGUMENTS,
    annotations: { ...READ, title: 'List insurance products' },
    scope: 'automation:read',
    returns: 'product_list',
    run: ({ deps }) => catalogue.listProducts(deps),
  }),
  defineTool({
    name: 'get_product_schema',
    title: 'Get the data a product needs',
    description:
      'Returns what dicData a product needs at an insurer: json_schema (JSON Schema of dicData), required (field names), ' +
      'labels (each field in words, in French) and example (a dicData that passes). produit and compagnie are codes from list_products. ' +
      'Use it before price_quote or create_devis to build a valid dicData; ask the user for any required field you do not know.',
    input: z.strictObject({
      produit: codeSchema.describe('Product code, from list_products (e.g. auto).'),
      compagnie: codeSchema.describe('Insurer code, from the product’s insurers in list_products (e.g. sandbox).'),
    }),
    annotations: { ...READ, title: 'Get the data a product needs' },
    scope: 'automation:read',
    returns: 'product_schema',
    run: ({ deps }, { produit, compagnie }) => catalogue.productSchemaDocument(deps, produit, compagnie),
  }),
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
  defineTool({
    name: 'create_devis',
    title: 'Create a draft quote',
    description:
      'Creates a draft quote (devis) for a client, without pricing it, and returns it with its devis_id and status draft. ' +
      'client_id comes from list_clients or create_client; compagnie and produit are codes from list_products; dicData follows get_product_schema ' +
      '(it may be incomplete in a draft). To price it later, call price_quote with this devis_id.',
    input: createDevisBody,
    annotations: { ...CREATE, title: 'Create a draft quote' },
    scope: 'devis:draft',
    idempotent: true,
    returns: 'devis',
    run: ({ deps, access }, input) => devis.createDevis(deps, access.cabinetId, input),
  }),
  defineTool({
    name: 'get_devis',
    title: 'Get a quote',
    description:
      `Returns one quote (devis) by its devis_id: status (${listed(devisStatusSchema.options)}), the premium tarif_eur once priced, ` +
      'the insurer’s pending conditions (suspens), whether a PDF exists (pdf_available) and the pricing job_id. ' +
      'For the PDF itself, use get_devis_pdf_link.',
    input: z.strictObject({ devis_id: devisId }),
    annotations: { ...READ, title: 'Get a quote' },
    scope: 'devis:read',
    returns: 'devis',
    run: ({ deps, access }, { devis_id }) => devis.getDevis(deps, access.cabinetId, devis_id),
  }),
  defineTool({
    name: 'price_quote',
    title: 'Price a quote at an insurer',
    description:
      'Prices a product at an insurer with a robot on the insurer’s portal. compagnie and produit are codes from list_products; ' +
      'dicData must follow get_product_schema. With dry_run: true it only checks the request (missing fields, quota, credentials, cost) ' +
      'and spends nothing: do that first. Without dry_run it starts a job that spends Robot credits (cost_credits of the product) and returns ' +
      `{job_id, status: pending}; follow it with get_job until its status is final: ${listed(TERMINAL_STATUSES)} (usually a few seconds to a minute). ` +
      'Pass devis_id to price a draft from create_devis, or client_id to link the new quote to a client.',
    input: tarificationRequestBody.omit({ callback_webhook_id: true }),
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
      title: 'Price a quote at an insurer',
    },
    scope: 'automation:enqueue',
    idempotent: true,
    returns: 'tarification',
    run: ({ deps, access }, request) => {
      if (request.dry_run === true) return automation.dryRunTarification(deps, access.cabinetId, request, 'prod');
      return automation.enqueueTarification(deps, access.cabinetId, request, 'prod');
    },
  }),
  defineTool({
    name: 'get_job',
    title: 'Get a pricing job',
    description:
      `Returns a pricing job started by price_quote (job_id): status (${listed(jobStatusSchema.options)}), ` +
      'progress {step, percent}, result {tarif_eur, suspens} once priced, error {code, message} on failure, credits_consumed, and devis_id, the quote it prices ' +
      '(read it with get_devis). While mfa_required, the insurer sent a code to the broker: ask the user to enter it in the Courtier console.',
    input: z.strictObject({ job_id: jobId }),
    annotations: { ...READ, title: 'Get a pricing job' },
    scope: 'automation:read',
    returns: 'job',
    run: ({ deps, access }, { job_id }) => jobs.getJob(deps, access.cabinetId, job_id),
  }),
  defineTool({
    name: 'cancel_job',
    title: 'Cancel a pricing job',
    description:
      'Cancels a pricing job (job_id from price_quote) that has not finished: a running robot is stopped and the credits are refunded. ' +
      'Returns the job, now cancelled; a job already cancelled is returned as is; a finished job gives the error job_not_cancellable, ' +
      'and one started on another computer of the cabinet job_runs_elsewhere (only that computer cancels it).',
    input: z.strictObject({ job_id: jobId }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false, title: 'Cancel a pricing job' },
    scope: 'automation:enqueue',
    returns: 'job',
    run: ({ deps, worker, access }, { job_id }) => jobControls.cancelJobAndRobot(deps, worker, access.cabinetId, job_id),
  }),
  defineTool({
    name: 'get_devis_pdf_link',
    title: 'Get a download link for a quote’s PDF',
    description:
      'Returns {devis_id, url, expires_at}: an absolute download link to the PDF of a priced quote (devis_id from get_devis or get_job). ' +
      'The link needs no sign-in and expires after 5 minutes; give it to the user rather than fetching it. ' +
      'A quote that is not priced yet gives the error pdf_not_available. While the cabinet does not share personal data with assistants, ' +
      'the PDF (which holds the client’s) is not given: the error llm_data_sharing_off says where a person downloads it in the console.',
    input: z.strictObject({ devis_id: devisId }),
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
      title: 'Get a download link for a quote’s PDF',
    },
    scope: 'devis:read',
    returns: 'devis_pdf_link',
    run: (ctx, { devis_id }) => {
      const { deps, access, baseUrl } = ctx;
      // First what any caller is told (no such quote, no PDF yet); a signed link made here for nothing costs nothing.
      const url = baseUrl() + createPdfLink(deps, access.cabinetId, devis_id);
      // Masking cannot reach into a PDF: while sharing is off, the bearer link itself is withheld.
      if (!sharesPersonalData(ctx)) throw pdfWithheld(ctx, devis.getDevis(deps, access.cabinetId, devis_id));
      const expires = Number(new URL(url).searchParams.get('expires'));
      return { devis_id, url, expires_at: new Date(expires * 1000).toISOString() };
    },
  }),
];

/** The tools, built once per app: descriptors and their input and output JSON Schemas are computed here, not per request. */
export interface McpToolCatalogue {
  get(name: string): McpTool | undefined;
  /** The descriptors of the tools a token with these scopes can call (tools/list). */
  list(scopes: readonly McpScope[]): Tool[];
  /** The tools a token with these scopes can call. */
  allowed(scopes: readonly McpScope[]): McpTool[];
}

export function createToolCatalogue(): McpToolCatalogue {
  const tools: McpTool[] = TOOL_SPECS.map((spec) => ({
    name: spec.name,
    scope: spec.scope,
    descriptor: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema: toInputSchema(spec.input),
      outputSchema: toOutputSchema(spec.output),
      annotations: spec.annotations,
    },
    call: spec.call,
  }));
  const byName = new Map(tools.map((t) => [t.name, t]));
  // Keyed by the set of scopes as a bit mask: at most 2^6 entries, whatever order tokens list them in.
  const memo = new Map<number, { tools: McpTool[]; descriptors: Tool[] }>();
  function forScopes(scopes: readonly McpScope[]) {
    let mask = 0;
    for (const scope of scopes) mask |= 1 << MCP_SCOPES.indexOf(scope);
    let entry = memo.get(mask);
    if (!entry) {
      const allowed = tools.filter((t) => t.scope === null || scopes.includes(t.scope));
      entry = { tools: allowed, descriptors: allowed.map((t) => t.descriptor) };
      memo.set(mask, entry);
    }
    return entry;
  }
  return {
    get: (name) => byName.get(name),
    list: (scopes) => forScopes(scopes).descriptors,
    allowed: (scopes) => forScopes(scopes).tools,
  };
}
