import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { hostWithPort, listenerAddresses, type MachineNetwork } from './plan.js';
import type { Discovery } from './discovery.js';
import { caFingerprint, servedCertificate } from './office-ca.js';
import { lanPlan, type LanDeps } from './settings.js';

/**
 * The office LAN listener: HTTPS only, on the LAN addresses, next to the loopback HTTP listener
 * that stays as it is. It follows the stored settings, the IT policy and the machine's addresses
 * by itself — switched on or off by the CLI or the console, an address gone or come, a certificate
 * renewed — with no restart: servers open and close per address, and a new certificate is swapped
 * into the open ones (setSecureContext) so that connections and sessions carry on.
 */
export interface LanListener {
  start(): void;
  /** Brings the listener in line with the settings now (the console awaits it after a change). */
  reconcile(): Promise<void>;
  stop(): Promise<void>;
  /** The Host values (name or address, with the port) a request on the LAN listener may carry. */
  allowedHosts(): ReadonlySet<string>;
  /** Where it listens now, e.g. ["https://192.168.1.20:8443"]. */
  listening(): string[];
}

export interface LanListenerOptions {
  /** The app's request handler (Fastify's routing). */
  handler: (request: IncomingMessage, response: ServerResponse) => void;
  /** What a malformed request gets (the app's clientErrorHandler). */
  onClientError: (err: Error, socket: Socket) => void;
  logger: FastifyBaseLogger;
  network: MachineNetwork;
  intervalMs: number;
  /** mDNS/DNS-SD while the listener is open. */
  discovery: Discovery;
}

interface Open {
  server: Server;
  address: string;
  port: number;
  /** Every connection, handshakes in progress included, so that closing never waits on a silent client. */
  sockets: Set<Socket>;
}

/**
 * Nobody stands in front of the LAN listener: a client's forwarding headers would let it choose its
 * own address (throttles, blocks, the audit log) or protocol (cookies), whatever COURTIER_TRUST_PROXY says.
 */
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'forwarded', 'x-real-ip'];

/** A TLS handshake that has not finished by then is dropped (Node's default waits 120 s). */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/** What a failed listen means, for the person reading the log or `lan status`. */
function listenProblem(err: NodeJS.ErrnoException): string {
  if (err.code === 'EADDRINUSE') return 'the port is taken by another program';
  if (err.code === 'EACCES') return 'this account may not use that port (below 1024 needs an administrator)';
  if (err.code === 'EADDRNOTAVAIL') return 'the address is no longer this machine’s';
  return err.code ?? err.message;
}

export function createLanListener(deps: LanDeps, options: LanListenerOptions): LanListener {
  const open = new Map<string, Open>();
  let servedFingerprint: string | null = null;
  let allowed: ReadonlySet<string> = new Set();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let lastProblem = '';
  let stopped = false;

  const warnOnce = (problem: string, extra: Record<string, unknown> = {}) => {
    if (problem === lastProblem) return;
    lastProblem = problem;
    if (problem !== '') options.logger.warn(extra, problem);
  };

  async function close(entry: Open): Promise<void> {
    open.delete(entry.address);
    await new Promise<void>((resolve) => {
      entry.server.close(() => resolve());
      for (const socket of entry.sockets) socket.destroy();
    });
    options.logger.info({ url: `https://${hostWithPort(entry.address, entry.port)}` }, 'office LAN listener closed');
  }

  async function closeAll(): Promise<void> {
    options.discovery.update(null);
    await Promise.all([...open.values()].map(close));
    allowed = new Set();
    servedFingerprint = null;
  }

  async function listen(address: string, port: number, keyPem: string, certificatePem: string): Promise<void> {
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      for (const name of FORWARDING_HEADERS) delete request.headers[name];
      options.handler(request, response);
    };
    const server = createServer(
      { key: keyPem, cert: certificatePem, requireHostHeader: false, minVersion: 'TLSv1.2', handshakeTimeout: HANDSHAKE_TIMEOUT_MS },
      handler,
    );
    server.keepAliveTimeout = 72_000;
    server.on('clientError', options.onClientError);
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: address, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Later errors (too many open files on accept) are reported, never thrown at the process.
    server.on('error', (err) => options.logger.warn({ err, address }, 'office LAN listener error'));
    open.set(address, { server, address, port, sockets });
    options.logger.info({ url: `https://${hostWithPort(address, port)}` }, `office LAN listener on https://${hostWithPort(address, port)}`);
  }

  async function reconcileOnce(): Promise<void> {
    const plan = lanPlan(deps);
    if (!plan.enabled || stopped) {
      await closeAll();
      warnOnce('');
      return;
    }
    const served = await servedCertificate(deps, options.network);
    if (!served) {
      await closeAll();
      warnOnce('Office LAN mode is on but has no certificate yet; run `courtier lan enable` again.');
      return;
    }
    const { addresses, missing } = listenerAddresses(plan.addresses, options.network);
    for (const entry of [...open.values()]) {
      if (!addresses.includes(entry.address) || entry.port !== plan.port) await close(entry);
    }
    if (served.facts.fingerprintSha256 !== servedFingerprint) {
      for (const entry of open.values()) entry.server.setSecureContext({ key: served.keyPem, cert: served.certificatePem });
      servedFingerprint = served.facts.fingerprintSha256;
    }
    const failures: string[] = [];
    for (const address of addresses) {
      if (open.has(address)) continue;
      try {
        await listen(address, plan.port, served.keyPem, served.certificatePem);
      } catch (err) {
        failures.push(`${hostWithPort(address, plan.port)} (${listenProblem(err as NodeJS.ErrnoException)})`);
      }
    }
    allowed = new Set(
      [...served.facts.names, ...served.facts.addresses, ...addresses].map((host) => hostWithPort(host.toLowerCase(), plan.port)),
    );
    const listeningOn = [...open.keys()];
    options.discovery.update(
      listeningOn.length === 0
        ? null
        : {
            hostname: options.network.hostname(),
            addresses: listeningOn,
            port: plan.port,
            caFingerprint: served.source === 'generated' ? caFingerprint(deps) : null,
          },
    );
    const problems = [
      ...(missing.length > 0 ? [`configured address(es) ${missing.join(', ')} not on this machine`] : []),
      ...(addresses.length === 0 ? ['no LAN address to listen on'] : []),
      ...(failures.length > 0 ? [`cannot listen on ${failures.join('; ')}`] : []),
    ];
    warnOnce(problems.length > 0 ? `Office LAN listener: ${problems.join('; ')}.` : '');
  }

  /** One reconcile at a time; a call during one runs once more after it, with the newest settings. */
  function reconcile(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await reconcileOnce();
        } catch (err) {
          warnOnce(`Office LAN listener: ${(err as Error).message}`, { err });
        }
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    start() {
      stopped = false;
      void reconcile();
      timer = setInterval(() => void reconcile(), options.intervalMs);
      timer.unref();
    },
    reconcile,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await running;
      await closeAll();
      await options.discovery.stop();
    },
    allowedHosts: () => allowed,
    listening: () => [...open.values()].map((entry) => `https://${hostWithPort(entry.address, entry.port)}`),
  };
}
