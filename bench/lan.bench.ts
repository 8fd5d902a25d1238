import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { Benchmark, BenchContext } from './benchmark.js';
import { pinToCpus } from './lib/affinity.js';
import { compareAlternating, roundRatiosLine } from './lib/alternate.js';
import { startServerChild, type ServerChild } from './lib/child.js';
import { measure, measureRun, startLoad } from './lib/load.js';
import { cpuCount } from './lib/machine.js';
import { LAN_BENCH_ADDRESS, LAN_CERT_FILE_ENV, LAN_KEY_FILE_ENV, LAN_PORT_ENV } from './lib/protocol.js';
import { formatTable, MEASUREMENT_HEADER, measurementRow } from './lib/report.js';
import { getMe } from '../shared/api-keys.js';
import { pathTo } from '../shared/endpoint.js';
import { createAuthority, issueServerCertificate } from '../server/lan/certificates.js';
import { createServer } from 'node:net';

const ME_PATH = pathTo(getMe);
const LAN_NAME = 'courtier.bench.lan';
/** /me over HTTPS with keep-alive: TLS costs its record encryption, not handshakes; 30% is the most it may take. */
const ME_GOAL = 0.7;
/** A handshake and one request on the LAN listener against a bare https server's: the crypto is the same, the app's routing is small beside it. */
const HANDSHAKE_GOAL = 0.8;
/** Clients opening connections at once in the handshake run. */
const HANDSHAKE_CONCURRENCY = 8;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, LAN_BENCH_ADDRESS, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

interface HandshakeRun {
  handshakes: number;
  perSecond: number;
  /** Server CPU per handshake and request, µs. */
  serverMicros: number;
}

/** New TLS connections (full handshakes, no session reuse), one GET each with Connection: close, for `seconds`. */
async function handshakes(server: ServerChild, target: { port: number; path: string; ca: string }, seconds: number): Promise<HandshakeRun> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host: LAN_BENCH_ADDRESS, port: target.port, servername: LAN_NAME, ca: target.ca }, () => {
        socket.write(`GET ${target.path} HTTP/1.1\r\nHost: ${LAN_NAME}:${target.port}\r\nConnection: close\r\n\r\n`);
      });
      let head = '';
      socket.on('data', (chunk: Buffer) => {
        if (head.length < 16) head += chunk.toString('latin1');
      });
      socket.on('end', () => (head.startsWith('HTTP/1.1 200') ? resolve() : reject(new Error(`not a 200: ${head.slice(0, 40)}`))));
      socket.on('error', reject);
    });
  const worker = async () => {
    while (performance.now() < deadline) {
      await one();
      done++;
    }
  };
  const cpuBefore = await server.cpuMicros();
  const started = performance.now();
  await Promise.all(Array.from({ length: HANDSHAKE_CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = (await server.cpuMicros()) - cpuBefore;
  return { handshakes: done, perSecond: done / elapsed, serverMicros: cpu / done };
}

async function withChild<T>(ctx: BenchContext, target: 'courtier-lan' | 'bare-tls', body: (server: ServerChild) => Promise<T>): Promise<T> {
  const server = await startServerChild(target, ctx.tempDir(target), ctx.child);
  // One core for the server, the rest for the load generator (which also does TLS).
  const pinned = cpuCount() >= 2 && pinToCpus([server.pid], '0') && pinToCpus([process.pid], `1-${cpuCount() - 1}`);
  if (!pinned) console.log('(not pinned to CPUs: the server and the load generator share the cores)');
  try {
    return await body(server);
  } finally {
    pinToCpus([process.pid], `0-${cpuCount() - 1}`);
    await server.stop();
  }
}

/**
 * The office LAN listener's cost: GET /me over HTTPS with keep-alive against the same over
 * loopback HTTP in the same process, and full TLS handshakes per second against a bare Node
 * https server with the very same certificate.
 */
export const benchmark: Benchmark = {
  name: 'lan',
  description: `GET ${ME_PATH} over the office LAN listener (HTTPS, keep-alive) vs loopback HTTP; TLS handshakes/s on the LAN listener vs a bare https server with the same certificate`,
  async run(ctx) {
    const dir = ctx.tempDir('lan-certificate');
    const now = Date.now();
    const authority = await createAuthority({ constraints: { names: [LAN_NAME], addresses: [] }, now, label: 'Courtier bench CA' });
    const served = await issueServerCertificate({ authority, names: [LAN_NAME], addresses: [LAN_BENCH_ADDRESS], now });
    writeFileSync(join(dir, 'cert.pem'), served.certificatePem);
    writeFileSync(join(dir, 'key.pem'), served.privateKeyPem, { mode: 0o600 });
    const lanPort = await freePort();
    process.env[LAN_CERT_FILE_ENV] = join(dir, 'cert.pem');
    process.env[LAN_KEY_FILE_ENV] = join(dir, 'key.pem');
    process.env[LAN_PORT_ENV] = String(lanPort);
    try {
      const seconds = Math.max(3, Math.round(ctx.load.durationSeconds / 2));
      const { me, lanHandshakes } = await withChild(ctx, 'courtier-lan', async (server) => {
        const url = `https://${LAN_BENCH_ADDRESS}:${lanPort}${ME_PATH}`;
        // The same server over both listeners, in turn (compareAlternating).
        const me = await compareAlternating(
          (options) => measure(server, ME_PATH, options),
          (options) => measureRun(server, url, (s, latency) => startLoad({ url, headers: server.headers }, options.connections, s, latency), options),
          ctx.load,
        );
        await handshakes(server, { port: lanPort, path: '/healthz', ca: authority.certificatePem }, 1);
        return { me, lanHandshakes: await handshakes(server, { port: lanPort, path: '/healthz', ca: authority.certificatePem }, seconds) };
      });
      const bareHandshakes = await withChild(ctx, 'bare-tls', async (server) => {
        await handshakes(server, { port: Number(new URL(server.origin).port), path: '/', ca: authority.certificatePem }, 1);
        return handshakes(server, { port: Number(new URL(server.origin).port), path: '/', ca: authority.certificatePem }, seconds);
      });

      console.log(formatTable(MEASUREMENT_HEADER, [measurementRow(`loopback HTTP GET ${ME_PATH}`, me.baseline), measurementRow(`LAN HTTPS GET ${ME_PATH}`, me.subject)]));
      console.log(roundRatiosLine(me));
      console.log(`   ${me.schedule}; the handshakes, LAN listener then bare server, one after the other`);
      console.log(
        formatTable(
          ['target', 'handshakes/s', 'handshakes', 'server µs CPU each'],
          [
            ['bare https server', bareHandshakes.perSecond.toFixed(0), String(bareHandshakes.handshakes), bareHandshakes.serverMicros.toFixed(0)],
            ['LAN listener GET /healthz', lanHandshakes.perSecond.toFixed(0), String(lanHandshakes.handshakes), lanHandshakes.serverMicros.toFixed(0)],
          ],
        ),
      );
      const meRatio = me.ratio;
      const handshakeRatio = lanHandshakes.perSecond / bareHandshakes.perSecond;
      const meMet = meRatio >= ME_GOAL;
      const handshakeMet = handshakeRatio >= HANDSHAKE_GOAL;
      const meLine = `ratio LAN/loopback GET /me: ${meRatio.toFixed(2)} (goal >= ${ME_GOAL}) ${meMet ? 'met' : 'MISSED'}`;
      const handshakeLine = `ratio LAN/bare TLS handshakes: ${handshakeRatio.toFixed(2)} (goal >= ${HANDSHAKE_GOAL}) ${handshakeMet ? 'met' : 'MISSED'}`;
      console.log(meLine);
      console.log(handshakeLine);
      return { goalMet: meMet && handshakeMet, summary: `${meLine}; ${handshakeLine}` };
    } finally {
      delete process.env[LAN_CERT_FILE_ENV];
      delete process.env[LAN_KEY_FILE_ENV];
      delete process.env[LAN_PORT_ENV];
    }
  },
};
