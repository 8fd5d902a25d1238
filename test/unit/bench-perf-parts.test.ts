import { describe, expect, it } from 'vitest';
import { microsPerRequestByPart, OTHER_THREADS, perfScriptParser, UNATTRIBUTED } from '../../bench/lib/perf-parts.js';

// `perf script -F tid,period,ip,sym`: a header per sample (perf pads the thread id, to 5 or 7
// characters depending on its version), tab-indented frames (leaf first), a blank line.
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
  '  19149     500000 ',
  '\t    7f2b8c1a2c00 JS:*serialize /work/main/node_modules/fastify/lib/reply.js:1086:20',
  '\t    7f2b8c1a2c10 JS:*routeHandler /work/main/node_modules/fastify/lib/route.js:465:25',
  '',
  ' 9150     250000 ',
  '\t          200000 v8::internal::Scavenger::ScavengeObject',
  '',
  '19149     250000 ',
  '\t    7f2b8c1a2d00 JS:*logRequest file:///work/main/dist/server/platform/logging.js:60:5',
  '\t    7f2b8c1a2d10 JS:*onResponse /work/main/node_modules/fastify/lib/hooks.js:10:5',
].join('\n');

function parse(text: string) {
  const parser = perfScriptParser();
  for (const line of text.split('\n')) parser.line(line);
  return parser.samples();
}

describe("perf script's samples, by part of the request path", () => {
  it('reads each sample, padded headers included, and puts it down to its innermost known frame', () => {
    expect(parse(SCRIPT)).toEqual([
      { tid: 19149, periodNs: 250_000, part: UNATTRIBUTED },
      { tid: 19149, periodNs: 250_000, part: 'API keys (the check, the /me handler)' },
      // reply.js matches "fastify/lib/reply" and "fastify/lib/": the first entry wins.
      { tid: 19149, periodNs: 500_000, part: "Fastify's reply" },
      { tid: 9150, periodNs: 250_000, part: 'GC' },
      { tid: 19149, periodNs: 250_000, part: 'the request line' },
    ]);
  });

  it('gives µs per request by part, with the threads other than the busiest one together', () => {
    // 250,000 ns over 10 requests: 25 µs a request.
    expect(Object.fromEntries(microsPerRequestByPart(parse(SCRIPT), 10))).toEqual({
      [UNATTRIBUTED]: 25,
      'API keys (the check, the /me handler)': 25,
      "Fastify's reply": 50,
      'the request line': 25,
      [OTHER_THREADS]: 25,
    });
  });

  it('skips what is not a sample, and refuses a recording without samples or requests', () => {
    expect(parse('perf: warning\n\tdeadbeef frame\n\n19149 250000\n\tabc sym\n')).toEqual([
      { tid: 19149, periodNs: 250_000, part: UNATTRIBUTED },
    ]);
    expect(() => microsPerRequestByPart(parse(SCRIPT), 0)).toThrow(/no request/);
    expect(() => microsPerRequestByPart([], 10)).toThrow(/no sample/);
  });
});
