import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isInitializeRequest,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonRpcError } from '../../shared/oauth-endpoints.js';

/** The SDK's code for transport-level refusals (Accept, protocol version). */
const TRANSPORT_ERROR = -32000;

/**
 * What a POST /mcp asks for, read as the SDK's Streamable HTTP transport reads it when stateless
 * with JSON responses: refused (the status and JSON-RPC error it answers), accepted (notifications
 * and responses: 202, nothing to run, since no session or stream outlives the request), or one
 * request to run. A batch is refused: MCP 2025-06-18 and later have none, and a batch would let
 * one request, one rate-limit hit, run any number of tool calls. Content-Type is Fastify's.
 */
export type McpPost =
  { kind: 'refused'; status: 400 | 406; body: JsonRpcError } | { kind: 'accepted' } | { kind: 'request'; message: JSONRPCRequest };

function refused(status: 400 | 406, code: number, message: string): McpPost {
  return { kind: 'refused', status, body: { jsonrpc: '2.0', id: null, error: { code, message } } };
}

/**
 * A message JSONRPCMessageSchema accepted that is a request. The union's four kinds are strict
 * objects and only a request has both a method and an id: parsing again (isJSONRPCRequest) would
 * tell nothing more.
 */
function isParsedRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

export function readMcpPost(headers: { accept?: string; 'mcp-protocol-version'?: string | string[] }, body: unknown): McpPost {
  if (Array.isArray(body)) {
    return refused(
      400,
      ErrorCode.InvalidRequest,
      'JSON-RPC batches are not supported (MCP 2025-06-18 and later have none): send one message per request.',
    );
  }
  // A substring check, as the SDK's: Accept is a list, and clients send both with parameters or q-values.
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return refused(406, TRANSPORT_ERROR, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  }
  const parsed = JSONRPCMessageSchema.safeParse(body);
  if (!parsed.success) return refused(400, ErrorCode.ParseError, 'Parse error: Invalid JSON-RPC message');
  const message = parsed.data;
  // The method first: isInitializeRequest parses the whole message against the initialize schema.
  const initialize = 'method' in message && message.method === 'initialize' && isInitializeRequest(message);
  if (!initialize) {
    const version = headers['mcp-protocol-version'];
    const named = Array.isArray(version) ? version.join(', ') : version;
    if (named !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(named)) {
      return refused(
        400,
        TRANSPORT_ERROR,
        `Bad Request: Unsupported protocol version: ${named} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    }
  }
  return isParsedRequest(message) ? { kind: 'request', message } : { kind: 'accepted' };
}

/**
 * The SDK Transport between the one SDK server of the route and its POSTs: each request is one
 * exchange, its one JSON response the answer. Building and connecting a server per request would
 * cost a large share of the route's CPU (BENCHMARKS.md, mcp). Two clients may both send id 1, so
 * each request goes to the server under an id of this transport's, the answer comes back under the
 * client's, and the handlers find the request's own context (its access token) by that id. What a
 * handler sends besides its response (a progress notification) is dropped, as the SDK's transport
 * does in JSON mode: there is no stream to carry it.
 */
export class ExchangeTransport<Context> implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  #lastId = 0;
  readonly #exchanges = new Map<number, { clientId: RequestId; context: Context; settle: (response: JSONRPCMessage | null) => void }>();

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    // The SDK's own messages, told apart by their members: parsing a tool's result again against the
    // response schema (isJSONRPCResultResponse) would be a visible share of a call.
    if (!('result' in message) && !('error' in message)) return;
    const id = Number(message.id);
    const exchange = this.#exchanges.get(id);
    if (!exchange) return;
    this.#exchanges.delete(id);
    exchange.settle({ ...message, id: exchange.clientId });
  }

  async close(): Promise<void> {
    for (const exchange of this.#exchanges.values()) exchange.settle(null);
    this.#exchanges.clear();
    this.onclose?.();
  }

  /** The context of the request the server knows by this id (a handler's `extra.requestId`). */
  contextOf(requestId: RequestId): Context | undefined {
    return this.#exchanges.get(Number(requestId))?.context;
  }

  /**
   * Hands one request to the connected server. `response` resolves with its answer under the
   * client's id, or with null once `abandon()` was called (the client went away), which also
   * cancels the handler.
   */
  exchange(request: JSONRPCRequest, context: Context): { response: Promise<JSONRPCMessage | null>; abandon: () => void } {
    if (!this.onmessage) throw new Error('Connect the server to the transport before the first exchange.');
    this.#lastId += 1;
    const id = this.#lastId;
    const response = new Promise<JSONRPCMessage | null>((settle) => this.#exchanges.set(id, { clientId: request.id, context, settle }));
    this.onmessage({ ...request, id });
    const abandon = () => {
      const exchange = this.#exchanges.get(id);
      if (!exchange) return;
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'The client went away.' } });
      this.#exchanges.delete(id);
      exchange.settle(null);
    };
    return { response, abandon };
  }
}
