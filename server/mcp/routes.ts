import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { McpScope } from '../../shared/oauth.js';
import { callMcp } from '../../shared/oauth-endpoints.js';
import type { RobotControl } from '../automation/robot-control.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../http/base-url.js';
import { registerEndpoint, respond } from '../http/endpoint.js';
import { packageVersion } from '../paths.js';
import { resourceMetadataUrl } from './access-check.js';
import { createMcpServerFactory } from './server.js';
import { createToolCatalogue, type McpToolCatalogue } from './tools.js';

export interface McpRouteOptions {
  deps: Deps;
  worker: RobotControl;
}

/** The tool a tools/call message wants and the scope the token lacks for it, if any. */
function missingToolScope(message: object, scopes: readonly McpScope[], catalogue: McpToolCatalogue): { tool: string; scope: McpScope } | null {
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'tools/call' || typeof params !== 'object' || params === null) return null;
  const name = (params as { name?: unknown }).name;
  const tool = typeof name === 'string' ? catalogue.get(name) : undefined;
  return tool && tool.scope !== null && !scopes.includes(tool.scope) ? { tool: tool.name, scope: tool.scope } : null;
}

/**
 * The answer to a JSON-RPC batch (a JSON array body), as JSON-RPC so that MCP clients can read it.
 * MCP 2025-06-18 and later have no batching, and a batch would let one request, one rate-limit
 * hit, run any number of tool calls.
 */
const BATCH_REFUSAL = {
  jsonrpc: '2.0',
  id: null,
  error: { code: ErrorCode.InvalidRequest, message: 'JSON-RPC batches are not supported (MCP 2025-06-18 and later have none): send one message per request.' },
} as const;

/**
 * POST /mcp: the MCP endpoint, Streamable HTTP, stateless. Each request gets its own SDK server
 * and transport (JSON responses, no session), behind an OAuth access token (the access_token
 * check of access-check.ts). Only POST: no SSE stream (GET) and no sessions (DELETE), which MCP's
 * Streamable HTTP allows with a 405; the errors plugin answers those with 405 and Allow: POST.
 */
export async function mcpRoutes(app: FastifyInstance, options: McpRouteOptions): Promise<void> {
  const { deps, worker } = options;
  const catalogue = createToolCatalogue();
  const createServer = createMcpServerFactory({ version: packageVersion(), catalogue });

  registerEndpoint(app, callMcp, async (request, reply) => {
    const access = request.mcpAccess;
    if (!access) throw new ApiError('internal_error', 'The MCP route ran without its token check.');
    const body = request.body;
    if (Array.isArray(body)) return respond(400, BATCH_REFUSAL);
    if (body === undefined || body === null || typeof body !== 'object') {
      throw new ApiError('invalid_json', 'Send one JSON-RPC message as a JSON body.');
    }
    const missing = missingToolScope(body, access.scopes, catalogue);
    if (missing) {
      throw new ApiError(
        'insufficient_scope',
        `This access token lacks the scope ${missing.scope}, which the tool ${missing.tool} requires; authorize again with it.`,
        { required_scope: missing.scope },
        { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${missing.scope}", resource_metadata="${resourceMetadataUrl(deps, request)}"` },
      );
    }

    let baseUrl: string | undefined;
    const server = createServer({ deps, worker, idempotency: app.idempotency, access, baseUrl: () => (baseUrl ??= publicBaseUrl(deps.config, request)) }, request.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);

    // The SDK writes to the raw response: carry over what hooks put on the reply (X-Request-Id, CORS).
    const res = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) res.setHeader(name, value);
    }
    reply.hijack();
    // A response that finished leaves nothing open (JSON mode answers once every handler has), and
    // closing would cost an error object per request: close only when the client went away early,
    // which aborts the handlers still running.
    res.on('close', () => {
      if (!res.writableFinished) server.close().catch((err: unknown) => request.log.warn({ err }, 'closing the MCP server failed'));
    });
    try {
      await transport.handleRequest(request.raw, res, body);
    } catch (err) {
      request.log.error({ err }, 'MCP request failed');
      if (!res.headersSent) {
        res.statusCode = 500;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.end(JSON.stringify({ error: 'internal_error', message: 'Something went wrong on our side. Quote the request_id if you report it.', request_id: request.id }));
      } else {
        res.end();
      }
    }
    return reply;
  });
}
