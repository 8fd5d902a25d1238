import { networkInterfaces } from 'node:os';
import type { TestServer } from './server.js';

/** An IPv4 address of this machine that is not loopback, or null when it has none. */
export function lanAddress(): string | null {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  return null;
}

/** A client of the server that is not on loopback, as a neighbour on the office LAN would be. */
export interface LanClient {
  /** The TCP peer address the server sees. */
  address: string;
  /**
   * `socket`: a real TCP connection to this machine's LAN address (the server must listen on
   * 0.0.0.0); `inject`: the machine has no such address, so Fastify's inject with `remoteAddress`.
   */
  via: 'socket' | 'inject';
  request(path: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Response>;
}

/** The stand-in peer address when the machine has no LAN address (TEST-NET-2, never routed). */
const INJECTED_PEER = '198.51.100.7';

/** The address the server will see for lanClient(): known before the server starts (for its configuration). */
export function lanPeerAddress(): string {
  return lanAddress() ?? INJECTED_PEER;
}

export function lanClient(server: TestServer): LanClient {
  const address = lanAddress();
  const port = new URL(server.url).port;
  if (address !== null) {
    return {
      address,
      via: 'socket',
      request: (path, init = {}) => fetch(`http://${address}:${port}${path}`, { ...init, redirect: 'manual' }),
    };
  }
  return {
    address: INJECTED_PEER,
    via: 'inject',
    async request(path, init = {}) {
      const response = await server.app.inject({
        method: (init.method ?? 'GET') as 'GET',
        url: path,
        headers: init.headers,
        payload: init.body,
        remoteAddress: INJECTED_PEER,
      });
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        for (const one of [value].flat()) if (one !== undefined) headers.append(name, String(one));
      }
      const empty = response.statusCode === 204 || response.statusCode === 304;
      return new Response(empty ? null : response.rawPayload, { status: response.statusCode, headers });
    },
  };
}
