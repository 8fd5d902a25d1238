/**
 * Reads `perf script -F tid,period,ip,sym` output line by line and says how much of a server's
 * CPU each part of the request path took (bench/profile.ts). Pure, so that the attribution is
 * tested on its own.
 */

/** One sample, put down to its part: the thread it hit and its weight (ns of CPU). */
export interface AttributedSample {
  tid: number;
  periodNs: number;
  part: string;
}

/**
 * Parts of the request path, each recognised by a substring of a frame's symbol (JIT frames carry
 * their file through node --perf-basic-prof). A sample goes to the innermost frame that matches;
 * where one frame matches several entries, the first entry wins (so `fastify/lib/reply` before
 * `fastify/lib/`). The outer parts (Fastify's hooks, promise jobs, the event loop) also take what
 * runs beneath them and matches nothing more precise.
 */
const REQUEST_PATH_PARTS: readonly (readonly [part: string, pattern: string])[] = [
  ['API keys (the check, the /me handler)', '/server/api-keys/'],
  ['the access token check', '/server/oauth/access'],
  ['the rate limit', '/server/plugins/rate-limit'],
  ['the auth hook', '/server/plugins/auth'],
  ['the local guard', '/server/plugins/local-guard'],
  ['the request line', '/server/platform/logging'],
  ["the log's writes (sonic-boom)", 'sonic-boom'],
  ['the request id (randomUUID)', 'getBufferedUUID'],
  ['the MCP SDK', '@modelcontextprotocol'],
  ['zod', '/node_modules/zod/'],
  ['our MCP route and tools', '/server/mcp/'],
  ['the JSON body', 'content-type-parser'],
  ['JSON.stringify (any)', 'JsonStringifier'],
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
  ['writev (Node and the kernel)', 'writev'],
  ['streams and sockets', 'internal/streams'],
  ['streams and sockets', 'node:net'],
  ['promise jobs and timers', 'task_queues'],
  ['promise jobs and timers', 'internal/timers'],
  ['the event loop', 'uv__io_poll'],
];

export const OTHER_THREADS = 'other threads (GC helpers, thread pool)';
export const UNATTRIBUTED = 'the rest';

/** A sample's header: its thread id and period, which perf pads to a width that depends on its version. */
const HEADER = /^\s*(\d+)\s+(\d+)\s*$/;

function partOf(frames: readonly string[]): string {
  for (const frame of frames) {
    const found = REQUEST_PATH_PARTS.find(([, pattern]) => frame.includes(pattern));
    if (found) return found[0];
  }
  return UNATTRIBUTED;
}

/**
 * A parser of perf script's output with the fields tid,period,ip,sym: a header line per sample,
 * then one tab-indented line per frame (`<ip> <symbol>`, leaf first), then a blank line. Fed line
 * by line, since a recording's text can outgrow a string; keeps each sample's part, not its stack.
 */
export function perfScriptParser() {
  const samples: AttributedSample[] = [];
  let current: { tid: number; periodNs: number; frames: string[] } | undefined;
  const close = () => {
    if (current) samples.push({ tid: current.tid, periodNs: current.periodNs, part: partOf(current.frames) });
    current = undefined;
  };
  return {
    line(line: string): void {
      if (line.startsWith('\t')) {
        // `7f12ab34 JS:*routeHandler /path/route.js:465:25`: the symbol is what follows the address.
        current?.frames.push(line.trim().replace(/^[0-9a-f]+\s+/, ''));
        return;
      }
      close();
      const header = HEADER.exec(line);
      if (header) current = { tid: Number(header[1]), periodNs: Number(header[2]), frames: [] };
    },
    samples(): AttributedSample[] {
      close();
      return samples;
    },
  };
}

/**
 * CPU µs per request of each part. The thread with the most samples is the event loop's; the
 * samples of every other thread (V8's GC helpers, libuv's thread pool) are counted together.
 */
export function microsPerRequestByPart(samples: readonly AttributedSample[], requests: number): Map<string, number> {
  if (samples.length === 0) throw new Error('perf recorded no sample of the server (was it attached?)');
  if (requests <= 0) throw new Error('no request was answered during the recording');
  const byThread = new Map<number, number>();
  for (const sample of samples) byThread.set(sample.tid, (byThread.get(sample.tid) ?? 0) + sample.periodNs);
  const mainThread = [...byThread].sort((a, b) => b[1] - a[1])[0]?.[0];
  const totals = new Map<string, number>();
  for (const sample of samples) {
    const part = sample.tid === mainThread ? sample.part : OTHER_THREADS;
    totals.set(part, (totals.get(part) ?? 0) + sample.periodNs / 1000 / requests);
  }
  return totals;
}
