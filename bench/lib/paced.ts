import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * An open loop at a steady rate: request i leaves at start + i / rate, whatever the answers to the
 * earlier ones, on keep-alive connections. autocannon's `overallRate` is not that: each connection
 * sends its share of the second at once, as fast as the server answers, then waits for the next
 * second, so "200 per second" arrives as a burst of 200 every second.
 */
export interface PacedLoad {
  url: string;
  method: 'GET' | 'POST';
  /** The headers of request i. */
  headers: (i: number) => Record<string, string>;
  /** The body of request i, if any. */
  body?: (i: number) => string;
  rate: number;
  seconds: number;
  /** At most this many requests in flight (the agent's sockets); later ones wait for a socket. */
  connections: number;
}

/** How many answers came with each status; `failed`: requests that got no answer. */
export interface PacedResult {
  statuses: Map<number, number>;
  failed: number;
}

export async function sendPaced(load: PacedLoad): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: load.connections });
  const statuses = new Map<number, number>();
  let failed = 0;
  const send = (i: number) =>
    new Promise<void>((resolve) => {
      const body = load.body?.(i);
      const outgoing = request(
        load.url,
        {
          method: load.method,
          agent,
          headers: body === undefined ? load.headers(i) : { ...load.headers(i), 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
            resolve();
          });
        },
      );
      outgoing.on('error', () => {
        failed += 1;
        resolve();
      });
      outgoing.end(body);
    });
  const total = Math.round(load.rate * load.seconds);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  try {
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / load.rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      inFlight.push(send(i));
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  return { statuses, failed };
}
