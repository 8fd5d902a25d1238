import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { isLanRequest } from '../platform/http/listener.js';

export interface LocalGuardOptions {
  /** The server is bound to a loopback address: only loopback Host names are answered. */
  loopbackOnly: boolean;
  /** Further host names accepted in Host (the public base URL's). */
  extraHostnames: readonly string[];
  /** Origins allowed to call cross-origin from a browser. */
  corsOrigins: readonly string[];
  /** Paths any origin may call without credentials (OAuth discovery and token endpoints for browser-based MCP clients). */
  openCorsPaths?: readonly string[];
  /** The Host values (name or address with the port) the office LAN listener answers to now. */
  lanHosts: () => ReadonlySet<string>;
  /** Throws when the client's address is blocked on the LAN listener (too many failed sign-ins). */
  lanAddressCheck: (address: string) => void;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', '[::1]', 'localhost']);
const ALLOWED_HEADERS = 'Content-Type, Authorization, X-API-Key, Idempotency-Key, MCP-Protocol-Version, Mcp-Method';
const EXPOSED_HEADERS =
  'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Location, Idempotent-Replayed, WWW-Authenticate';

export function parseHostHeader(host: string): { hostname: string; port: number | null } | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host);
  if (!match?.[1]) return null;
  return { hostname: match[1].toLowerCase(), port: match[2] === undefined ? null : Number(match[2]) };
}

function isSameOrigin(request: FastifyRequest, origin: string): boolean {
  return origin === `${request.protocol}://${request.headers.host ?? ''}`;
}

/**
 * DNS-rebinding and drive-by protection for a service on the broker's own machine: while bound to
 * loopback, a Host that is not a loopback name is 421; a browser request from another origin is
 * refused unless that origin is configured (and then answered with CORS headers).
 */
export const localGuardPlugin = fp<LocalGuardOptions>(
  async (app, options) => {
    const hostnames = new Set([...LOOPBACK_NAMES, ...options.extraHostnames.map((h) => h.toLowerCase())]);
    const corsOrigins = new Set(options.corsOrigins.map((o) => new URL(o).origin));
    const openPaths = new Set(options.openCorsPaths ?? []);

    app.addHook('onRequest', (request, reply, done) => {
      try {
        if (checkRequest(request, reply)) reply.code(204).send();
        else done();
      } catch (err) {
        done(err as Error);
      }
    });

    /** Throws when refused; true when it answered a CORS preflight itself. */
    function checkRequest(request: FastifyRequest, reply: FastifyReply): boolean {
      if (isLanRequest(request)) checkLanRequest(request);
      else if (options.loopbackOnly) {
        const host = parseHostHeader(request.headers.host ?? '');
        const localPort = request.socket.localPort;
        const portMatches = host?.port === null || localPort === undefined || host?.port === localPort;
        if (!host || !hostnames.has(host.hostname) || !portMatches) {
          throw new ApiError(
            'misdirected_request',
            `This Courtier service answers only to 127.0.0.1, [::1] or localhost; Host "${request.headers.host ?? ''}" is refused.`,
          );
        }
      }

      const origin = request.headers.origin;
      if (origin === undefined) {
        // No Origin: not a CORS request. Refuse only sub-resource loads from another site (img, script).
        const site = request.headers['sec-fetch-site'];
        if (site === 'cross-site' && request.headers['sec-fetch-mode'] !== 'navigate') {
          throw new ApiError('origin_not_allowed', 'Cross-site browser requests are not allowed.');
        }
        return false;
      }
      if (isSameOrigin(request, origin)) return false;
      const queryAt = request.url.indexOf('?');
      if (openPaths.has(queryAt === -1 ? request.url : request.url.slice(0, queryAt))) {
        // No cookie or key is honoured on these paths, so answering every origin leaks nothing.
        reply.header('Access-Control-Allow-Origin', '*');
        reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
        return answerPreflight(request, reply, 'GET, POST, OPTIONS');
      }
      if (!corsOrigins.has(origin)) {
        throw new ApiError(
          'origin_not_allowed',
          `Browser requests from ${origin} are not allowed. An administrator can allow it with COURTIER_CORS_ORIGINS.`,
        );
      }
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Vary', 'Origin');
      reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      return answerPreflight(request, reply, 'GET, POST, PATCH, PUT, DELETE');
    }

    /**
     * The office LAN listener: Host must be one of its certificate's names or addresses with its
     * port (DNS rebinding, 421), and what is not open there (docs, the sandbox insurer, anything
     * for this machine only) is refused before any credential is looked at.
     */
    function checkLanRequest(request: FastifyRequest): void {
      const host = parseHostHeader(request.headers.host ?? '');
      const allowed = options.lanHosts();
      // A wildcard name (an IT certificate's *.office.lan) covers one label, as TLS matches it.
      const wildcard = host ? `*.${host.hostname.split('.').slice(1).join('.')}:${host.port ?? 443}` : '';
      if (
        !host ||
        !(allowed.has(`${host.hostname}:${host.port ?? 443}`) || (host.hostname.split('.').length > 2 && allowed.has(wildcard)))
      ) {
        throw new ApiError(
          'misdirected_request',
          `This office listener answers to ${[...allowed].join(', ') || 'no name yet'}; Host "${request.headers.host ?? ''}" is refused.`,
        );
      }
      options.lanAddressCheck(request.ip);
      const endpoint = request.routeOptions.config.endpoint;
      const routed = request.routeOptions.url !== undefined;
      if (routed && (endpoint === undefined || (endpoint.auth === 'none' && endpoint.openOnLan !== true))) {
        throw new ApiError('local_only', 'This is served to the machine that runs Courtier only, not on the office LAN listener.');
      }
    }

    function answerPreflight(request: FastifyRequest, reply: FastifyReply, methods: string): boolean {
      if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return false;
      reply.header('Access-Control-Allow-Methods', methods);
      reply.header('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      reply.header('Access-Control-Max-Age', '600');
      return true;
    }
  },
  { name: 'courtier-local-guard' },
);
