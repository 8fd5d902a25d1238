import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpSender } from '../../server/webhooks/sender.js';

/** The name the receiver's certificate is for: no DNS knows it, so only the pinned address can reach it. */
const HOST = 'hooks.courtier.test';
const LOOPBACK = { address: '127.0.0.1', family: 4 } as const;

let server: Server;
let port: number;
let ca: string;
const requests: { path: string; body: string }[] = [];

/** Each path is a receiver behaviour. */
const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/ok': (_req, res) => void res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok'),
  '/long': (_req, res) => void res.writeHead(200).end('x'.repeat(5_000)),
  '/gzip': (_req, res) => void res.writeHead(503, { 'Content-Encoding': 'gzip' }).end(gzipSync('overloaded, retry later')),
  '/redirect': (_req, res) => void res.writeHead(302, { Location: '/ok' }).end(),
  '/hang': () => undefined,
  '/cut': (_req, res) => {
    res.writeHead(200, { 'Content-Length': '100' }).write('partial');
    setImmediate(() => res.socket?.destroy());
  },
};

beforeAll(async () => {
  const pems = await generate([{ name: 'commonName', value: HOST }], {
    keySize: 2048,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: HOST }] }],
  });
  ca = pems.cert;
  server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', body });
      routes[req.url ?? '']?.(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (sender: ReturnType<typeof createHttpSender>, path: string) =>
  sender({
    url: `https://${HOST}:${port}${path}`,
    address: LOOPBACK,
    headers: { 'Content-Type': 'application/json' },
    body: '{"id":"evt"}',
  });

describe('the webhook sender (node:https, keep-alive)', () => {
  it('posts the body to the vetted address, never asking DNS, and keeps the answer', async () => {
    const sender = createHttpSender({ timeoutMs: 5_000, extraCa: [ca] });
    try {
      expect(await post(sender, '/ok')).toEqual({ kind: 'response', status: 200, body: 'ok' });
      expect(requests.at(-1)).toEqual({ path: '/ok', body: '{"id":"evt"}' });
    } finally {
      sender.close();
    }
  });

  it('keeps the first KB of a long answer, decompresses a gzip one, and reuses the connection after both', async () => {
    const sender = createHttpSender({ timeoutMs: 5_000, extraCa: [ca] });
    const connections = new Set<unknown>();
    const count = (socket: unknown) => connections.add(socket);
    server.on('secureConnection', count);
    try {
      const long = await post(sender, '/long');
      expect(long).toEqual({ kind: 'response', status: 200, body: 'x'.repeat(1024) });
      expect(await post(sender, '/gzip')).toEqual({ kind: 'response', status: 503, body: 'overloaded, retry later' });
      expect(await post(sender, '/ok')).toMatchObject({ status: 200 });
      expect(connections.size).toBe(1);
    } finally {
      server.off('secureConnection', count);
      sender.close();
    }
  });

  it('does not follow a redirect: the 302 is the outcome', async () => {
    const sender = createHttpSender({ timeoutMs: 5_000, extraCa: [ca] });
    const before = requests.length;
    try {
      expect(await post(sender, '/redirect')).toMatchObject({ kind: 'response', status: 302 });
      expect(requests.slice(before).map((r) => r.path)).toEqual(['/redirect']);
    } finally {
      sender.close();
    }
  });

  it('gives up on an endpoint that does not answer within the timeout', async () => {
    const sender = createHttpSender({ timeoutMs: 200, extraCa: [ca] });
    try {
      expect(await post(sender, '/hang')).toEqual({ kind: 'error', error: 'timeout' });
    } finally {
      sender.close();
    }
  });

  it('reports an answer cut short as an error, not as a response', async () => {
    const sender = createHttpSender({ timeoutMs: 5_000, extraCa: [ca] });
    try {
      const result = await post(sender, '/cut');
      expect(result.kind).toBe('error');
      expect(result.kind === 'error' && result.error).toMatch(/^(ECONNRESET|ERR_\w+): /);
    } finally {
      sender.close();
    }
  });

  it('refuses a certificate it does not trust, with its code', async () => {
    const sender = createHttpSender({ timeoutMs: 5_000 });
    try {
      const result = await post(sender, '/ok');
      expect(result).toMatchObject({ kind: 'error' });
      expect(result.kind === 'error' && result.error).toMatch(
        /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE): /,
      );
    } finally {
      sender.close();
    }
  });
});
