import type { BrowserContext } from 'playwright-core';

/**
 * What an insurer's robot may load, as its manifest declares it: whole origins, and URL prefixes (a
 * demo portal's path on this service). `prefixes` is read when the job's browser context is made:
 * the service's port is known once it listens.
 */
export interface Reach {
  origins: readonly string[];
  prefixes: () => readonly string[];
}

/** A reach parsed once, so that the check of each request is a parse of its URL and a Set lookup. */
export interface AllowList {
  origins: ReadonlySet<string>;
  prefixes: readonly { origin: string; path: string }[];
  /** The same for the same reach: a parked browser context is only resumed under the reach it was made with. */
  key: string;
}

/** Schemes whose URLs never leave the machine: the page's own data, blobs and blank documents. */
const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:']);

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * A URL's origin as its declared origins are written: a WebSocket is reached at its page origin's
 * host (ws: as http:, wss: as https:).
 */
function originOf(url: URL): string {
  if (url.protocol === 'ws:') return `http://${url.host}`;
  if (url.protocol === 'wss:') return `https://${url.host}`;
  return url.origin;
}

/** Parses a reach; a prefix or origin that does not parse allows nothing (the robot then fails closed). */
export function allowListOf(reach: Reach): AllowList {
  const origins = new Set<string>();
  for (const origin of reach.origins) {
    const url = parse(origin);
    if (url && url.origin !== 'null') origins.add(url.origin);
  }
  const prefixes: { origin: string; path: string }[] = [];
  for (const prefix of reach.prefixes()) {
    const url = parse(prefix);
    if (url && url.origin !== 'null') prefixes.push({ origin: url.origin, path: url.pathname });
  }
  const key = JSON.stringify([[...origins].sort(), prefixes.map((p) => `${p.origin}${p.path}`).sort()]);
  return { origins, prefixes, key };
}

/**
 * Whether the robot's browser may load this URL: one of the declared origins (scheme, host and port
 * equal once parsed: no userinfo, look-alike host or other port gets through), a URL under a declared
 * prefix (compared on the parsed path, so `..` cannot climb out of it), or a URL that never leaves
 * the machine (data:, blob:, about:).
 */
export function isAllowed(url: string | URL, allowed: AllowList): boolean {
  const parsed = typeof url === 'string' ? parse(url) : url;
  if (!parsed) return false;
  if (LOCAL_SCHEMES.has(parsed.protocol)) return true;
  const origin = originOf(parsed);
  if (allowed.origins.has(origin)) return true;
  for (const prefix of allowed.prefixes) {
    if (prefix.origin === origin && parsed.pathname.startsWith(prefix.path)) return true;
  }
  return false;
}

/**
 * What a log line or a message may say of a blocked URL: its origin only (a path or a query string
 * may hold a client's personal data).
 */
export function blockedOriginOf(url: string): string {
  const parsed = parse(url);
  if (!parsed) return 'an unreadable URL';
  const origin = originOf(parsed);
  return origin === 'null' ? parsed.protocol : origin;
}

/**
 * A browser context's filter: the allow list it was made with, and who is told of a URL outside it
 * (the job using the context now; nobody while it is parked). `stopped` is false for a redirect's
 * next hop, which Playwright follows without routing it: it went out, and what its page asks for next
 * is blocked.
 */
export interface ContextGuard {
  allowList: AllowList;
  report: ((origin: string, stopped: boolean) => void) | undefined;
}

/**
 * Installs the guard's filter on a new context, before any page: requests and WebSockets to anything
 * the allow list does not hold are aborted, and reported by origin. An allowed request is left to
 * Playwright's own fallback, which neither traces it as an action nor parses its URL again.
 */
export async function guardContext(context: BrowserContext, guard: ContextGuard): Promise<void> {
  const outside = (url: URL) => !isAllowed(url, guard.allowList);
  await context.route(outside, async (route) => {
    guard.report?.(blockedOriginOf(route.request().url()), true);
    // The page may have closed meanwhile: the request is gone either way.
    await route.abort('blockedbyclient').catch(() => undefined);
  });
  await context.routeWebSocket(outside, async (socket) => {
    guard.report?.(blockedOriginOf(socket.url()), true);
    await socket.close({ code: 1008, reason: 'blocked' }).catch(() => undefined);
  });
  context.on('request', (request) => {
    if (request.redirectedFrom() && !isAllowed(request.url(), guard.allowList)) guard.report?.(blockedOriginOf(request.url()), false);
  });
}

/**
 * The sentence a failure's message ends with when the robot's browser asked for origins outside its
 * reach: the likely cause of the failure, said to the person who reads it.
 */
export function outsideReachNote(outside: ReadonlyMap<string, number>): string {
  const listed = [...outside.keys()];
  const shown = listed.length <= 3 ? listed.join(', ') : `${listed.slice(0, 3).join(', ')} and ${listed.length - 3} more`;
  const requests = [...outside.values()].reduce((sum, n) => sum + n, 0);
  return `The insurer's pages asked for ${shown}, which its adapter does not declare (${requests === 1 ? '1 request' : `${requests} requests`}).`;
}
