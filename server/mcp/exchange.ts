import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
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
  | { kind: 'refused'; status: 400 | 406; body: JsonRpcError }
  | { kind: 'accepted' }
  | { kind: 'request'; message: JSONRPCRequest };

function refused(status: 400 | 406, code: number, message: string): McpPost {
  return { kind: 'refused', status, body: { jsonrpc: '2.0', id: null, error: { code, message } } };
}

export function readMcpPost(headers: { accept?: string; 'mcp-protocol-version'?: string | string[] }, body: unknown): McpPost {
  if (Array.isArray(body)) {
    return refused(400, ErrorCode.InvalidRequest, 'JSON-RPC batches are not supported (MCP 2025-06-18 and later have none): send one message per request.');
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
      return refused(400, TRANSPORT_ERROR, `Bad Request: Unsupported protocol version: ${named} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }
  }
  return isJSONRPCRequest(message) ? { kind: 'request', message } : { kind: 'accepted' };
}

/**
 * The SDK Transport for one JSON-RPC request and its one JSON response: the server connected to it
 * gets the request from `exchange()`, which resolves with the server's response, or with null
 * when the transport closed first (the client went away). What a handler sends besides its
 * response (a progress notification) is dropped, as the SDK's transport does in JSON mode: there
 * is no stream to carry it.
 */
export class SingleRequestTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  readonly #request: JSONRPCRequest;
  readonly #response: Promise<JSONRPCMessage | null>;
  #settle: (response: JSONRPCMessage | null) => void = () => undefined;

  constructor(request: JSONRPCRequest) {
    this.#request = request;
    this.#response = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id === this.#request.id) this.#settle(message);
  }

  async close(): Promise<void> {
    this.#settle(null);
    this.onclose?.();
  }

  /** Hands the request to the connected server; call once, after `server.connect(this)`. */
  exchange(): Promise<JSONRPCMessage | null> {
    if (!this.onmessage) throw new Error('Connect a server to the transport before the exchange.');
    this.onmessage(this.#request);
    return this.#response;
  }
}
