import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { PulledChange } from '../../shared/sync-protocol.js';

/**
 * A hub that speaks the sync protocol but serves what the test scripts: the pages of changes an
 * install pulls (whatever they hold), and the answer to each PDF it asks for. It plays a hostile or
 * broken hub — its operator, or whoever took it over — against a real install.
 */
export interface FakeHub {
  url: string;
  /** The pages, in order: a pull after `after` gets the page that starts there. */
  pages: { after: number; changes: PulledChange[]; last_seq: number; more?: boolean }[];
  /** How to answer GET /blobs/{sha256}: the bytes, or a function writing its own answer. */
  blobs: Map<string, Buffer | ((res: ServerResponse) => void)>;
  /** Every request, as "METHOD path". */
  requests: string[];
  /** Pulls that were answered (a page's worth or empty). */
  pulls: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

export async function startFakeHub(): Promise<FakeHub> {
  const hub: Omit<FakeHub, 'url' | 'close'> = { pages: [], blobs: new Map(), requests: [], pulls: 0 };
  const wallet = { balance: 0, seq: 0 };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-courtier-hub-time': String(Date.now()) }).end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://hub');
      hub.requests.push(`${req.method} ${url.pathname}`);
      const body = await readBody(req);
      const hubTime = new Date().toISOString();
      if (req.method === 'POST' && url.pathname === '/sync/v1/pair') {
        const pair = JSON.parse(body) as { cabinet?: { id: string; name: string } };
        const deviceId = randomUUID();
        return json(res, 201, {
          device_id: deviceId,
          device_secret: `${deviceId}.secret`,
          cabinet_id: pair.cabinet?.id ?? 'unknown',
          cabinet_name: pair.cabinet?.name ?? 'x',
          hub_time: hubTime,
        });
      }
      if (req.method === 'POST' && url.pathname === '/sync/v1/changes') {
        const push = JSON.parse(body) as { changes: { number: number }[] };
        return json(res, 200, { acknowledged_number: push.changes.at(-1)?.number ?? 0, hub_time: hubTime });
      }
      if (req.method === 'GET' && url.pathname === '/sync/v1/changes') {
        const after = Number(url.searchParams.get('after') ?? 0);
        const page = hub.pages.find((p) => p.after === after);
        hub.pulls += 1;
        if (page) return json(res, 200, { changes: page.changes, last_seq: page.last_seq, more: page.more ?? false, hub_time: hubTime });
        // Nothing new: a short wait, as a long poll would end.
        await new Promise((resolve) => setTimeout(resolve, 100));
        return json(res, 200, { changes: [], last_seq: after, more: false, hub_time: hubTime });
      }
      if (req.method === 'POST' && url.pathname === '/sync/v1/wallet') {
        // Takes every entry as it came: the install's wallet is not what these tests look at.
        const exchange = JSON.parse(body) as { entries: { entry_id: string; amount: number }[] };
        const acknowledged = exchange.entries.map((entry) => {
          wallet.balance += entry.amount;
          wallet.seq += 1;
          return { entry_id: entry.entry_id, seq: wallet.seq };
        });
        return json(res, 200, { balance: wallet.balance, acknowledged, entries: [], last_seq: wallet.seq, more: false, hub_time: hubTime });
      }
      const blob = /^\/sync\/v1\/blobs\/(.+)$/.exec(url.pathname);
      if (blob && req.method === 'PUT') return json(res, 200, { sha256: blob[1], size: 0 });
      if (blob && req.method === 'GET') {
        const answer = hub.blobs.get(blob[1] ?? '');
        if (answer === undefined) return json(res, 404, { error: 'not_found', message: 'No blob.', request_id: randomUUID() });
        if (typeof answer === 'function') return answer(res);
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(answer);
        return;
      }
      if (req.method === 'DELETE' && url.pathname === '/sync/v1/device')
        return json(res, 200, { device_id: 'x', revoked_at: hubTime, hub_time: hubTime });
      json(res, 404, { error: 'not_found', message: 'No route.', request_id: randomUUID() });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return Object.assign(hub, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
