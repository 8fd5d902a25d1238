import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExchangeTransport, readMcpPost } from '../../server/mcp/exchange.js';

const HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

const id = fc.oneof(fc.integer(), fc.string());
const method = fc.constantFrom('tools/call', 'tools/list', 'notifications/initialized', 'ping');
const params = fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined });
const withoutUndefined = (message: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(message).filter(([, value]) => value !== undefined));

/** The four kinds of valid messages. */
const validMessage = fc.oneof(
  fc.record({ jsonrpc: fc.constant('2.0'), id, method, params }).map(withoutUndefined),
  fc.record({ jsonrpc: fc.constant('2.0'), method, params }).map(withoutUndefined),
  fc.record({ jsonrpc: fc.constant('2.0'), id, result: fc.dictionary(fc.string(), fc.jsonValue()) }),
  fc.record({ jsonrpc: fc.constant('2.0'), id, error: fc.record({ code: fc.integer(), message: fc.string() }) }),
);

/** A valid message, or one with a member taken away or set to anything (a stray id, a method on a response…). */
const messageLike = validMessage.chain((message) =>
  fc.oneof(
    fc.constant(message),
    fc.constantFrom(...Object.keys(message)).map((gone) => Object.fromEntries(Object.entries(message).filter(([key]) => key !== gone))),
    fc
      .tuple(fc.constantFrom('jsonrpc', 'id', 'method', 'params', 'result', 'error', 'stray'), fc.oneof(id, method, fc.jsonValue()))
      .map(([key, value]) => ({ ...message, [key]: value })),
  ),
);

describe('readMcpPost', () => {
  it('runs exactly the messages the SDK takes for requests, and accepts the other valid ones', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.oneof(messageLike, fc.jsonValue()), (body) => {
        const post = readMcpPost(HEADERS, body);
        seen.add(post.kind);
        const valid = !Array.isArray(body) && JSONRPCMessageSchema.safeParse(body).success;
        expect(post.kind).toBe(!valid ? 'refused' : isJSONRPCRequest(body) ? 'request' : 'accepted');
      }),
      { numRuns: 5_000 },
    );
    expect([...seen].sort()).toEqual(['accepted', 'refused', 'request']);
  });
});

describe('ExchangeTransport.send', () => {
  it('settles an exchange with the results and errors the SDK sends, under the client id, and drops anything else', async () => {
    const transport = new ExchangeTransport<null>();
    const received: JSONRPCMessage[] = [];
    transport.onmessage = (message) => void received.push(message);
    const sent: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 1, result: { content: [] } },
      { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
      { jsonrpc: '2.0', id: 3, method: 'sampling/createMessage', params: {} },
    ];
    for (const message of sent) {
      const { response } = transport.exchange({ jsonrpc: '2.0', id: 'client-id', method: 'tools/call', params: { name: 'whoami' } }, null);
      const serverId = (received.at(-1) as { id: number }).id;
      await transport.send('id' in message && typeof message.id === 'number' ? { ...message, id: serverId } : message);
      const settled = await Promise.race([response, Promise.resolve('pending' as const)]);
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) expect(settled).toEqual({ ...message, id: 'client-id' });
      else expect(settled).toBe('pending');
    }
  });
});
