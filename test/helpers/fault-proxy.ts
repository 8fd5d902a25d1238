import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does to the next requests that match: forward them, drop the request (the hub
 * never sees it), drop the response (the hub committed, the caller never hears), send the request
 * twice, delay it, or hold it until the test releases it (to kill a process at that point).
 */
type Fault =
  | { kind: 'drop_request' }
  | { kind: 'drop_response' }
  | { kind: 'duplicate' }
  | { kind: 'delay'; ms: number }
  /** release(false) drops the held request instead of forwarding it. */
  | { kind: 'hold_request'; held: (release: (forward?: boolean) => void) => void }
  | { kind: 'hold_response'; held: (release: () => void) => void };

export interface FaultProxy {
  url: string;
  /** Applies the fault to the next `times` requests whose method, path and body (when given) match. */
  inject(match: { method?: string; path?: RegExp; body?: (text: string) => boolean }, fault: Fault, times?: number): void;
  /** Every request seen, in arrival order: method and path. */
  seen: string[];
  /** The hub is "down": every request fails at once until this is turned off. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

interface Rule {
  method?: string;
  path?: RegExp;
  body?: (text: string) => boolean;
  fault: Fault;
  left: number;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function forward(
  target: URL,
  request: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: target.host },
      },
      (response) => {
        readBody(response).then((data) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: data }), reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A proxy in front of a hub that loses, repeats, delays and holds requests on demand. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  const rules: Rule[] = [];
  const seen: string[] = [];
  let down = false;

  const take = (request: IncomingMessage, body: Buffer): Fault | null => {
    const rule = rules.find(
      (r) =>
        r.left > 0 &&
        (!r.method || r.method === request.method) &&
        (!r.path || r.path.test(request.url ?? '')) &&
        (!r.body || r.body(body.toString('utf8'))),
    );
    if (!rule) return null;
    rule.left -= 1;
    return rule.fault;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${request.method ?? ''} ${request.url ?? ''}`);
    const body = await readBody(request);
    if (down) return void response.socket?.destroy();
    const fault = take(request, body);
    if (fault?.kind === 'drop_request') return void response.socket?.destroy();
    if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
    if (fault?.kind === 'hold_request') {
      const forward = await new Promise<boolean>((release) => fault.held((go = true) => release(go)));
      if (!forward) return void response.socket?.destroy();
    }
    if (fault?.kind === 'duplicate') await forward(targetUrl, request, body).catch(() => undefined);
    let answer: Awaited<ReturnType<typeof forward>>;
    try {
      answer = await forward(targetUrl, request, body);
    } catch {
      return void response.socket?.destroy();
    }
    if (fault?.kind === 'drop_response') return void response.socket?.destroy();
    if (fault?.kind === 'hold_response') await new Promise<void>((release) => fault.held(release));
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => response.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    inject(match, fault, times = 1) {
      rules.push({ ...match, fault, left: times });
    },
    setDown(value) {
      down = value;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
