import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createSecureContext } from 'node:tls';
import type { Benchmark, BenchContext } from './benchmark.js';
import { pinToCpus } from './lib/affinity.js';
import { compareAlternating, inPairs, pairRatios, roundRatiosLine, roundSeconds } from './lib/alternate.js';
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
/** Far above a handshake's few milliseconds, even on a slow machine. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

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
  seconds: number;
  /** Server CPU over the run, µs. */
  serverMicros: number;
}

/** New TLS connections (full handshakes, no session reuse), one GET each with Connection: close, for `seconds`. */
async function handshakes(server: ServerChild, target: { port: number; path: string; ca: string }, seconds: number): Promise<HandshakeRun> {
  let done = 0;
  // One context for all connections: a `ca` given to each connect() parses the certificate and builds
  // a trust store every time, which would hold back the rate of handshakes against both servers.
  const secureContext = createSecureContext({ ca: target.ca });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const socket = connect({ host: LAN_BENCH_ADDRESS, port: target.port, servername: LAN_NAME, secureContext }, () => {
        socket.write(`GET ${target.path} HTTP/1.1\r\nHost: ${LAN_NAME}:${target.port}\r\nConnection: close\r\n\r\n`);
      });
      let head = '';
      socket.on('data', (chunk: Buffer) => {
        if (head.length < 16) head += chunk.toString('latin1');
      });
      socket.on('end', () => (head.startsWith('HTTP/1.1 200') ? resolve() : reject(new Error(`not a 200: ${head.slice(0, 40)}`))));
      socket.on('error', reject);
      // A handshake that stalls fails the run instead of hanging it.
      socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy(new Error(`no answer within ${HANDSHAKE_TIMEOUT_MS} ms`)));
    });
  const worker = async (deadline: number) => {
    while (performance.now() < deadline) {
      await one();
      done++;
    }
  };
  const cpuBefore = await server.cpuMicros();
  // The deadline from here: asking the child for its CPU must not eat into the measured time.
  const started = performance.now();
  await Promise.all(Array.from({ length: HANDSHAKE_CONCURRENCY }, () => worker(started + seconds * 1000)));
  const elapsed = (performance.now() - started) / 1000;
  return { handshakes: done, seconds: elapsed, serverMicros: (await server.cpuMicros()) - cpuBefore };
}

/** A side's rounds as one run: handshakes over the summed time, server CPU per handshake and in cores. */
function pooledHandshakes(rounds: readonly HandshakeRun[]): {
  handshakes: number;
  perSecond: number;
  serverMicrosEach: number;
  serverCores: number;
} {
  const sum = (value: (run: HandshakeRun) => number) => rounds.reduce((total, run) => total + value(run), 0);
  const done = sum((run) => run.handshakes);
  const seconds = sum((run) => run.seconds);
  const serverMicros = sum((run) => run.serverMicros);
  return { handshakes: done, perSecond: done / seconds, serverMicrosEach: serverMicros / done, serverCores: serverMicros / 1e6 / seconds };
}

/**
 * The LAN app's child and the bare https server's, both started before any measurement, so that
 * the handshakes too run in turn; each measured alone on one core, the rest for the load
 * generator (which also does TLS), the idle one beside it.
 */
async function withChildren<T>(ctx: BenchContext, body: (lan: ServerChild, bare: ServerChild) => Promise<T>): Promise<T> {
  const lan = await startServerChild('courtier-lan', ctx.tempDir('courtier-lan'), ctx.child);
  try {
    const bare = await startServerChild('bare-tls', ctx.tempDir('bare-tls'), ctx.child);
    try {
      const pinned = cpuCount() >= 2 && pinToCpus([lan.pid, bare.pid], '0') && pinToCpus([process.pid], `1-${cpuCount() - 1}`);
      if (!pinned) console.log('(not pinned to CPUs: the servers and the load generator share the cores)');
      return await body(lan, bare);
    } finally {
      pinToCpus([process.pid], `0-${cpuCount() - 1}`);
      await bare.stop();
    }
  } finally {
    await lan.stop();
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
      // Each side's handshakes: four rounds of a quarter of half the load's duration, at least 2 s each.
      const handshakeRound = roundSeconds(Math.round(ctx.load.durationSeconds / 2));
      const { me, lanRounds, bareRounds } = await withChildren(ctx, async (lan, bare) => {
        const url = `https://${LAN_BENCH_ADDRESS}:${lanPort}${ME_PATH}`;
        // The same server over both listeners, in turn (compareAlternating).
        const me = await compareAlternating(
          (options) => measure(lan, ME_PATH, options),
          (options) =>
            measureRun(lan, url, (s, latency) => startLoad({ url, headers: lan.headers }, options.connections, s, latency), options),
          ctx.load,
        );
        const lanTarget = { port: lanPort, path: '/healthz', ca: authority.certificatePem };
        const bareTarget = { port: Number(new URL(bare.origin).port), path: '/', ca: authority.certificatePem };
        await handshakes(lan, lanTarget, 1);
        await handshakes(bare, bareTarget, 1);
        const rounds = await inPairs(
          () => handshakes(bare, bareTarget, handshakeRound),
          () => handshakes(lan, lanTarget, handshakeRound),
        );
        return { me, lanRounds: rounds.subject, bareRounds: rounds.baseline };
      });
      const lanHandshakes = pooledHandshakes(lanRounds);
      const bareHandshakes = pooledHandshakes(bareRounds);
      const handshakeRatios = {
        roundRatios: pairRatios({ baseline: bareRounds, subject: lanRounds }, (run) => run.handshakes / run.seconds),
      };

      console.log(
        formatTable(MEASUREMENT_HEADER, [
          measurementRow(`loopback HTTP GET ${ME_PATH}`, me.baseline),
          measurementRow(`LAN HTTPS GET ${ME_PATH}`, me.subject),
        ]),
      );
      console.log(roundRatiosLine(me));
      console.log(
        `   ${me.schedule}; the handshakes in the same pairs, in rounds of ${handshakeRound} s, after 1 s of warm-up per side before the first`,
      );
      console.log(
        formatTable(
          ['target', 'handshakes/s', 'handshakes', 'server µs CPU each', 'server CPU'],
          [
            [
              'bare https server',
              bareHandshakes.perSecond.toFixed(0),
              String(bareHandshakes.handshakes),
              bareHandshakes.serverMicrosEach.toFixed(0),
              `${(bareHandshakes.serverCores * 100).toFixed(0)}%`,
            ],
            [
              'LAN listener GET /healthz',
              lanHandshakes.perSecond.toFixed(0),
              String(lanHandshakes.handshakes),
              lanHandshakes.serverMicrosEach.toFixed(0),
              `${(lanHandshakes.serverCores * 100).toFixed(0)}%`,
            ],
          ],
        ),
      );
      console.log(`handshakes, ${roundRatiosLine(handshakeRatios)}`);
      // The client's side of a handshake (two ECDSA verifications) costs more than the server's (one
      // signature), so the load generator on its core may not keep a server busy: then the rates stay
      // close whatever each server costs. What each server could sustain on its core is the inverse
      // of its CPU per handshake; the goal is judged on the lower of the two ratios.
      const rateRatio = lanHandshakes.perSecond / bareHandshakes.perSecond;
      const capacityRatio = bareHandshakes.serverMicrosEach / lanHandshakes.serverMicrosEach;
      console.log(
        `handshakes/s ratio LAN/bare: ${rateRatio.toFixed(2)}; capacity ratio (bare ÷ LAN µs CPU per handshake): ${capacityRatio.toFixed(2)}`,
      );
      const meRatio = me.ratio;
      const handshakeRatio = Math.min(rateRatio, capacityRatio);
      const meMet = meRatio >= ME_GOAL;
      const handshakeMet = handshakeRatio >= HANDSHAKE_GOAL;
      const meLine = `ratio LAN/loopback GET /me: ${meRatio.toFixed(2)} (goal >= ${ME_GOAL}) ${meMet ? 'met' : 'MISSED'}`;
      const handshakeLine = `ratio LAN/bare TLS handshakes, the lower of rate and capacity: ${handshakeRatio.toFixed(2)} (goal >= ${HANDSHAKE_GOAL}) ${handshakeMet ? 'met' : 'MISSED'}`;
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
