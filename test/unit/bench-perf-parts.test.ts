import { describe, expect, it } from 'vitest';
import { microsPerRequestByPart, OTHER_THREADS, parsePerfScript, UNATTRIBUTED } from '../../bench/lib/perf-parts.js';

// `perf script -F tid,period,ip,sym` as perf 6 prints it: a header per sample, indented frames (leaf first), a blank line.
const SCRIPT = [
  '19149     250000 ',
  '\t          108cae epoll_pwait',
  '',
  '19149     250000 ',
  '\t          7f1000 sqlite3VdbeExec',
  '\t    7f2b8c1a2b3c JS:* file:///work/main/dist/server/api-keys/service.js:121:12',
  '\t    7f2b8c1a2b40 JS:* file:///work/main/dist/server/plugins/auth.js:20:12',
  '\t    7f2b8c1a2b50 JS:*routeHandler /work/main/node_modules/fastify/lib/route.js:465:25',
  '',
  '19149     500000 ',
  '\t    7f2b8c1a2c00 JS:*serialize /work/main/node_modules/fastify/lib/reply.js:1086:20',
  '\t    7f2b8c1a2c10 JS:*routeHandler /work/main/node_modules/fastify/lib/route.js:465:25',
  '',
  '19150     250000 ',
  '\t          200000 v8::internal::Scavenger::ScavengeObject',
  '',
].join('\n');

describe("perf script's samples, by part of the request path", () => {
  it('reads each sample with its thread, weight and frames, leaf first', () => {
    const samples = parsePerfScript(SCRIPT);
    expect(samples).toHaveLength(4);
    expect(samples[1]).toEqual({
      tid: 19149,
      periodNs: 250_000,
      frames: [
        'sqlite3VdbeExec',
        'JS:* file:///work/main/dist/server/api-keys/service.js:121:12',
        'JS:* file:///work/main/dist/server/plugins/auth.js:20:12',
        'JS:*routeHandler /work/main/node_modules/fastify/lib/route.js:465:25',
      ],
    });
  });

  it('puts a sample down to its innermost known frame, the first matching part for a frame, and other threads together', () => {
    const parts = microsPerRequestByPart(parsePerfScript(SCRIPT), 10);
    // 250,000 ns over 10 requests: 25 µs a request.
    expect(Object.fromEntries(parts)).toEqual({
      [UNATTRIBUTED]: 25,
      'the API key check': 25,
      // reply.js matches "fastify/lib/reply" and "fastify/lib/": the first entry wins.
      "Fastify's reply": 50,
      [OTHER_THREADS]: 25,
    });
  });

  it('refuses a recording without requests, and skips a header it cannot read', () => {
    expect(() => microsPerRequestByPart(parsePerfScript(SCRIPT), 0)).toThrow(/no request/);
    expect(parsePerfScript('perf: warning\n\tdeadbeef frame\n\n19149 250000\n\tabc sym\n')).toEqual([{ tid: 19149, periodNs: 250_000, frames: ['sym'] }]);
  });
});
