/**
 * Reads `perf script -F tid,period,ip,sym` output and says how much of a server's CPU each part of
 * the request path took (bench/profile.ts). Pure, so that the attribution is tested on its own.
 */

/** One sample: the thread it hit, its weight (ns of CPU) and its stack, leaf first. */
export interface PerfSample {
  tid: number;
  periodNs: number;
  frames: string[];
}

/**
 * Parts of the request path, each recognised by a substring of a frame's symbol (JIT frames carry
 * their file through node --perf-basic-prof). A sample goes to the innermost frame that matches;
 * where one frame matches several entries, the first entry wins (so `fastify/lib/reply` before
 * `fastify/lib/`).
 */
const REQUEST_PATH_PARTS: readonly (readonly [part: string, pattern: string])[] = [
  ['the API key check', '/server/api-keys/'],
  ['the access token check', '/server/oauth/access'],
  ['the rate limit', '/server/plugins/rate-limit'],
  ['the auth hook', '/server/plugins/auth'],
  ['the local guard', '/server/plugins/local-guard'],
  ['the request line', '/server/logging'],
  ["the log's writes (sonic-boom)", 'sonic-boom'],
  ['the request id (randomUUID)', 'getBufferedUUID'],
  ['the MCP SDK', '@modelcontextprotocol'],
  ['zod', '/node_modules/zod/'],
  ['our MCP route and tools', '/server/mcp/'],
  ['the JSON body', 'content-type-parser'],
  ['JSON of the response', 'JsonStringifier'],
  ["Fastify's reply", 'fastify/lib/reply'],
  ["Fastify's hooks and routing", 'fastify/lib/'],
  ["Fastify's hooks and routing", 'fastify/fastify.js'],
  ["Fastify's hooks and routing", 'find-my-way'],
  ['other server code', '/dist/server/'],
  ['GC', 'Scaveng'],
  ['GC', 'MarkCompact'],
  ['GC', 'ConcurrentMarking'],
  ["Node's http response", '_http_outgoing'],
  ["Node's http response", '_http_server'],
  ["Node's http parsing", 'llhttp'],
  ["Node's http parsing", '_http_common'],
  ["Node's http parsing", '_http_incoming'],
  ["the response's writev (kernel)", 'writev'],
  ['streams and sockets', 'internal/streams'],
  ['streams and sockets', 'node:net'],
  ['promise jobs and timers', 'task_queues'],
  ['promise jobs and timers', 'internal/timers'],
  ['the event loop', 'uv__io_poll'],
];

export const OTHER_THREADS = 'other threads (GC helpers, thread pool)';
export const UNATTRIBUTED = 'the rest';

/**
 * Parses perf script's output with the fields tid,period,ip,sym: a header line per sample
 * (`<tid> <period>`), then one indented line per frame (`<ip> <symbol>`), then a blank line.
 */
export function parsePerfScript(text: string): PerfSample[] {
  const samples: PerfSample[] = [];
  let current: PerfSample | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (current) samples.push(current);
      current = undefined;
    } else if (/^\s/.test(line)) {
      // `7f12ab34 JS:*routeHandler /path/route.js:465:25`: the symbol is what follows the address.
      const symbol = line.trim().replace(/^[0-9a-f]+\s+/, '');
      current?.frames.push(symbol);
    } else {
      const [tid, period] = line.trim().split(/\s+/).map(Number);
      current = tid !== undefined && period !== undefined && Number.isFinite(tid) && Number.isFinite(period) ? { tid, periodNs: period, frames: [] } : undefined;
    }
  }
  if (current) samples.push(current);
  return samples;
}

function partOf(frames: readonly string[], parts: typeof REQUEST_PATH_PARTS): string {
  for (const frame of frames) {
    const found = parts.find(([, pattern]) => frame.includes(pattern));
    if (found) return found[0];
  }
  return UNATTRIBUTED;
}

/**
 * CPU µs per request of each part. The thread with the most samples is the event loop's; the
 * samples of every other thread (V8's GC helpers, libuv's thread pool) are counted together.
 */
export function microsPerRequestByPart(samples: readonly PerfSample[], requests: number, parts = REQUEST_PATH_PARTS): Map<string, number> {
  if (requests <= 0) throw new Error('no request was answered during the recording');
  const byThread = new Map<number, number>();
  for (const sample of samples) byThread.set(sample.tid, (byThread.get(sample.tid) ?? 0) + sample.periodNs);
  const mainThread = [...byThread].sort((a, b) => b[1] - a[1])[0]?.[0];
  const totals = new Map<string, number>();
  for (const sample of samples) {
    const part = sample.tid === mainThread ? partOf(sample.frames, parts) : OTHER_THREADS;
    totals.set(part, (totals.get(part) ?? 0) + sample.periodNs / 1000 / requests);
  }
  return totals;
}
