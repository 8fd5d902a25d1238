import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { generate } from 'selfsigned';

interface ReceivedDelivery {
  rawBody: string;
  headers: IncomingHttpHeaders;
  receivedAt: number;
}

export interface Receiver {
  url: string;
  /** PEM of its self-signed certificate, to trust in the dispatcher. */
  ca: string;
  received: ReceivedDelivery[];
  /** Statuses to answer, in order; 200 once they run out. */
  respondWith(...statuses: number[]): void;
  /** While true, requests are recorded but not answered (an endpoint that hangs); false answers those held. */
  hang(on: boolean): void;
  /** Resolves when at least n deliveries have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/** A real HTTPS webhook receiver on 127.0.0.1, with a certificate made for the test. */
export async function startReceiver(path = '/hooks/courtier'): Promise<Receiver> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  const received: ReceivedDelivery[] = [];
  const statuses: number[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let hanging = false;
  const held: ServerResponse[] = [];
  const answer = (res: ServerResponse) => {
    if (res.destroyed) return;
    const status = statuses.shift() ?? 200;
    res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status < 300 ? 'ok' : `failing with ${status}`);
  };
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ rawBody: Buffer.concat(chunks).toString('utf8'), headers: req.headers, receivedAt: Date.now() });
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
      if (hanging) held.push(res);
      else answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}${path}`,
    ca: pems.cert,
    received,
    respondWith: (...s) => void statuses.push(...s),
    hang(on) {
      hanging = on;
      if (!on) for (const res of held.splice(0)) answer(res);
    },
    waitFor(n, timeoutMs = 5000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${n} deliveries, got ${received.length}`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(received)) });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
