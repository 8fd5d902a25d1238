import type { TestServer } from './server.js';

/** The JSON-RPC message that calls an MCP tool. */
export const toolsCall = (name: string, args: Record<string, unknown> = {}, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The JSON-RPC message that lists the MCP tools: the simplest call an access token must be good for. */
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

/** POSTs a JSON-RPC message (tools/list unless told) to /mcp with a Bearer token, as an assistant does. */
export function postMcp(server: TestServer, token: string, message: unknown = TOOLS_LIST): Promise<Response> {
  return server.request('/mcp', {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  });
}
