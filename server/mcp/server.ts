import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type Implementation,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../errors.js';
import { errorResult, type ToolContext } from './tool-definition.js';
import type { McpToolCatalogue } from './tools.js';

/** What the assistant is told about this server at initialize. */
const MCP_INSTRUCTIONS =
  'Courtier is the back office of a French insurance brokerage (cabinet): its CRM (opportunities, clients), its quotes (devis) ' +
  'and robots that price products on insurer portals. Ids are never guessed: take them from the list_, create_ and get_ tools. ' +
  'price_quote spends Robot credits: check the request with dry_run: true first, then follow the job with get_job. ' +
  'Errors come back as {error, message, details}: read message, it says what to do. ' +
  'Unless the cabinet shares personal data with assistants, names, contact details and quote data show as their first letter and *** ' +
  'and free text that may name a client as ***: ask the user, or point them to the Courtier console.';

/**
 * The schema the tools/call handler is registered with. The SDK parses a request with it, then its
 * tools/call wrapper parses the same request with the full CallToolRequestSchema before the handler
 * runs. Registered with CallToolRequestSchema itself, a malformed call would fail the first parse,
 * and the client would get InternalError (-32603) instead of the wrapper's InvalidParams (-32602);
 * and every call would pay two full parses (this one is cheaper than a full one).
 */
const toolCallMethod = z.object({ method: z.literal('tools/call'), params: z.unknown().optional() });

/** The request's context, as the transport keeps it for the request the server is handling. */
export type ContextOf = (requestId: RequestId) => (ToolContext & { log: FastifyBaseLogger }) | undefined;

/**
 * Makes the route's one MCP server. The low-level Server rather than McpServer: the tool list,
 * its JSON Schemas and the server options are built once here; the handlers find each request's
 * access token through `contextOf` (the transport's, exchange.ts).
 */
export function createMcpServer(options: { version: string; catalogue: McpToolCatalogue; contextOf: ContextOf }): Server {
  const { catalogue, contextOf } = options;
  const info: Implementation = { name: 'courtier', title: 'Courtier', version: options.version };
  // The SDK builds an Ajv instance per Server unless given one; this server never validates with it.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const server = new Server(info, { capabilities: { tools: { listChanged: false } }, instructions: MCP_INSTRUCTIONS, jsonSchemaValidator });
  const contextFor = (requestId: RequestId) => {
    const ctx = contextOf(requestId);
    if (!ctx) throw new McpError(ErrorCode.InternalError, 'This request has no context any more.');
    return ctx;
  };
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => ({
    tools: catalogue.list(contextFor(extra.requestId).access.scopes),
  }));
  server.setRequestHandler(toolCallMethod, (request, extra): CallToolResult => {
    // The SDK's wrapper checked the request against CallToolRequestSchema before this runs.
    const { params } = request as unknown as CallToolRequest;
    const ctx = contextFor(extra.requestId);
    const { name } = params;
    const tool = catalogue.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${name}; tools/list gives the tools this connection can use.`);
    // The route refuses such calls with 403 before they get here; kept so that the server never relies on it.
    if (tool.scope !== null && !ctx.access.scopes.includes(tool.scope)) {
      return errorResult(
        new ApiError('insufficient_scope', `This connection lacks the scope ${tool.scope}, which ${name} requires.`, {
          required_scope: tool.scope,
        }),
      );
    }
    try {
      return tool.call(ctx, params.arguments);
    } catch (err) {
      ctx.log.error({ err, tool: name }, 'MCP tool failed');
      return errorResult(new ApiError('internal_error', 'Something went wrong on our side. Quote the time of the call if you report it.'));
    }
  });
  return server;
}
