import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SCOPES, type McpScope } from '../../shared/oauth.js';
import { CRM_TOOLS } from './crm-tools.js';
import { DEVIS_PDF_LINK_TOOL, DEVIS_TOOLS } from './devis-tools.js';
import { COMPARISON_TOOLS, JOB_TOOLS, PRODUCT_TOOLS } from './pricing-tools.js';
import { defineTool, NO_ARGUMENTS, READ, toInputSchema, toOutputSchema, type McpTool } from './tool-definition.js';

/** Who the connection acts for, whatever its scopes. */
const WHOAMI = defineTool({
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
});

/** The tools of the MCP endpoint, in the order tools/list shows them. */
const TOOL_SPECS = [WHOAMI, ...PRODUCT_TOOLS, ...CRM_TOOLS, ...DEVIS_TOOLS, ...JOB_TOOLS, ...COMPARISON_TOOLS, DEVIS_PDF_LINK_TOOL];

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
