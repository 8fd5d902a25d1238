import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { MCP_PATH, MCP_SCOPES, type McpScope } from '../../shared/oauth.js';
import type { Worker } from '../automation/worker.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { publicBaseUrl } from '../http/base-url.js';
import type { AccessTokenAuthenticator, McpAccess } from '../oauth/access.js';
import { packageVersion } from '../paths.js';
import type { RateLimiter } from '../plugins/rate-limit.js';
import { createMcpServerFactory } from './server.js';
import { createToolCatalogue, type McpToolCatalogue } from './tools.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The access token's grant on POST /mcp, set before the body is read; null elsewhere. */
    mcpAccess: McpAccess | null;
  }
}

export interface McpRouteOptions {
  deps: Deps;
  worker: Worker;
  authenticate: AccessTokenAuthenticator;
  /** The API's per-credential limiter: an assistant in a loop is held to the same rate as a key, per grant. */
  rateLimiter: RateLimiter;
}

const ALL_SCOPES = MCP_SCOPES.join(' ');

/** The RFC 9728 metadata document of this resource, which names the authorization server. */
function resourceMetadataUrl(deps: Deps, request: FastifyRequest): string {
  return `${publicBaseUrl(deps.config, request)}/.well-known/oauth-protected-resource${MCP_PATH}`;
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
 * and transport (JSON responses, no session), behind an OAuth access token checked here.
 * GET and DELETE (the SSE stream, session end) are not offered: 405 with Allow: POST.
 */
export async function mcpRoutes(app: FastifyInstance, options: McpRouteOptions): Promise<void> {
  const { deps, worker, authenticate, rateLimiter } = options;
  const catalogue = createToolCatalogue();
  const createServer = createMcpServerFactory({ version: packageVersion(), catalogue });

  app.decorateRequest('mcpAccess', null);

  /** Before the body is read: a client without a valid token learns where to get one (RFC 9728, MCP authorization). */
  const authenticateToken: onRequestHookHandler = (request, reply, done) => {
    const authorization = request.headers.authorization;
    const token = authorization === undefined ? undefined : /^Bearer +(\S+)\s*$/i.exec(authorization)?.[1];
    const access = token === undefined ? null : authenticate(token);
    if (access) {
      request.mcpAccess = access;
      // Per grant, not per token: a refresh must not buy a fresh budget. Prefixed so that it never meets an API key's id.
      const rate = rateLimiter.hit(`grant:${access.grantId}`);
      reply.header('RateLimit-Limit', String(rate.limit));
      reply.header('RateLimit-Remaining', String(rate.remaining));
      reply.header('RateLimit-Reset', String(rate.resetInSeconds));
      if (!rate.allowed) {
        return done(
          new ApiError('rate_limited', `Too many requests with this access token; try again in ${rate.resetInSeconds} s.`, undefined, {
            'Retry-After': String(rate.resetInSeconds),
          }),
        );
      }
      return done();
    }
    const challenge = `Bearer resource_metadata="${resourceMetadataUrl(deps, request)}", scope="${ALL_SCOPES}"`;
    if (token === undefined) {
      return done(
        new ApiError('missing_credentials', 'Send an OAuth access token as Authorization: Bearer <token>; the WWW-Authenticate header says where to get one.', undefined, {
          'WWW-Authenticate': challenge,
        }),
      );
    }
    const description = 'The access token is unknown, expired or revoked';
    return done(
      new ApiError('invalid_token', `${description}: refresh it or authorize again.`, undefined, {
        'WWW-Authenticate': `${challenge}, error="invalid_token", error_description="${description}"`,
      }),
    );
  };

  async function handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const access = request.mcpAccess;
    if (!access) throw new ApiError('internal_error', 'The MCP route ran without its token check.');
    const body = request.body;
    if (Array.isArray(body)) return reply.code(400).type('application/json; charset=utf-8').send(BATCH_REFUSAL);
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
  }

  // Only POST: no SSE stream (GET) and no sessions (DELETE), which MCP's Streamable HTTP allows
  // with a 405. The errors plugin answers every other method on this path with 405 method_not_allowed
  // and Allow: POST, computed from the routes registered here.
  app.route({ method: 'POST', url: MCP_PATH, onRequest: authenticateToken, handler: handle });
}
