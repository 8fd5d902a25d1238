import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { McpScope } from '../../shared/oauth.js';
import { callMcp } from '../../shared/oauth-endpoints.js';
import type { RobotControl } from '../automation/robot-control.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../platform/http/base-url.js';
import { registerEndpoint, respond } from '../platform/http/endpoint.js';
import { packageVersion } from '../paths.js';
import { resourceMetadataUrl } from './access-check.js';
import { ExchangeTransport, readMcpPost } from './exchange.js';
import { createMcpServer } from './server.js';
import type { ToolContext } from './tool-definition.js';
import { createToolCatalogue, type McpToolCatalogue } from './tools.js';

export interface McpRouteOptions {
  deps: Deps;
  worker: RobotControl;
}

/** The tool a tools/call message wants and the scope the token lacks for it, if any. */
function missingToolScope(
  message: object,
  scopes: readonly McpScope[],
  catalogue: McpToolCatalogue,
): { tool: string; scope: McpScope } | null {
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'tools/call' || typeof params !== 'object' || params === null) return null;
  const name = (params as { name?: unknown }).name;
  const tool = typeof name === 'string' ? catalogue.get(name) : undefined;
  return tool && tool.scope !== null && !scopes.includes(tool.scope) ? { tool: tool.name, scope: tool.scope } : null;
}

/**
 * POST /mcp: the MCP endpoint, Streamable HTTP, stateless, behind an OAuth access token (the
 * access_token check of access-check.ts). One SDK server answers every request, through a
 * transport of ours where each request is one exchange with one JSON response (exchange.ts): the
 * SDK's own Streamable HTTP transport would convert every request to web Request/Response objects
 * and back, a large share of the route's cost, as a server per request would be (BENCHMARKS.md,
 * mcp). Only POST: no SSE stream (GET) and no sessions (DELETE), which MCP's Streamable HTTP allows
 * with a 405; the errors plugin answers those with 405 and Allow: POST.
 */
export async function mcpRoutes(app: FastifyInstance, options: McpRouteOptions): Promise<void> {
  const { deps, worker } = options;
  const catalogue = createToolCatalogue();
  const transport = new ExchangeTransport<ToolContext & { log: FastifyBaseLogger }>();
  const server = createMcpServer({ version: packageVersion(), catalogue, contextOf: (id) => transport.contextOf(id) });
  await server.connect(transport);
  app.addHook('onClose', async () => server.close());

  registerEndpoint(app, callMcp, async (request, reply) => {
    const access = request.mcpAccess;
    if (!access) throw new ApiError('internal_error', 'The MCP route ran without its token check.');
    const body = request.body;
    if (body === undefined || body === null || typeof body !== 'object') {
      throw new ApiError('invalid_json', 'Send one JSON-RPC message as a JSON body.');
    }
    const missing = missingToolScope(body, access.scopes, catalogue);
    if (missing) {
      throw new ApiError(
        'insufficient_scope',
        `This access token lacks the scope ${missing.scope}, which the tool ${missing.tool} requires; authorize again with it.`,
        { required_scope: missing.scope },
        {
          'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${missing.scope}", resource_metadata="${resourceMetadataUrl(deps, request)}"`,
        },
      );
    }

    const post = readMcpPost(request.headers, body);
    if (post.kind === 'refused') return respond(post.status, post.body);
    if (post.kind === 'accepted') return reply.code(202).send();

    let baseUrl: string | undefined;
    const context = {
      deps,
      worker,
      idempotency: app.idempotency,
      access,
      baseUrl: () => (baseUrl ??= publicBaseUrl(deps.config, request)),
      log: request.log,
    };
    const { response: answered, abandon } = transport.exchange(post.message, context);
    // A client that goes away before the answer cancels the handler still running.
    const res = reply.raw;
    res.on('close', () => {
      if (!res.writableFinished) abandon();
    });
    const response = await answered;
    // Closed first: the client is gone, there is no one to answer.
    if (response === null) return reply.hijack();
    return respond(200, response);
  });
}
