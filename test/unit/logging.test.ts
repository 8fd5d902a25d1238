import fc from 'fast-check';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, logDestination, redactUrl, requestLogger } from '../../server/platform/logging.js';
import { packageRoot } from '../../server/paths.js';

/** A logger made as the service makes it, its lines kept. */
function capturingLogger() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', stream: { write: (line: string) => void lines.push(line) } });
  return { logger, lines };
}

/** Times and durations differ from one call to the next; everything else must be the same bytes. */
const steady = (line: string) => line.replace(/"time":\d+/, '"time":0').replace(/"ms":[\d.]+/, '"ms":0');

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function appLoggingWith(logger: pino.Logger, caller: Record<string, string> | undefined) {
  const logRequest = requestLogger(logger);
  app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get('/things/:id', async () => ({ ok: true }));
  app.addHook('onResponse', (request, reply, done) => {
    logRequest(request, reply, caller);
    // The same fields through pino's generic path.
    const fields = {
      reqId: request.id,
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      ip: request.ip,
    };
    logger.info({ ...fields, ...caller }, 'request');
    done();
  });
  await app.ready();
  return app;
}

describe('the request line', () => {
  it('is the line pino writes for the same fields, byte for byte', async () => {
    const { logger, lines } = capturingLogger();
    const server = await appLoggingWith(logger, { key_id: 'key "quoted" \\ é ✓' });
    for (const url of ['/things/1', '/things/%C3%A9?api_key=secret&page=2', '/things/"quote"\\back?x=é', '/nowhere']) {
      lines.length = 0;
      await server.inject({ method: 'GET', url });
      expect(lines).toHaveLength(2);
      const [ours, pinos] = lines as [string, string];
      expect(steady(ours)).toBe(steady(pinos));
      expect(JSON.parse(ours)).toMatchObject({ level: 30, msg: 'request', pid: process.pid, key_id: 'key "quoted" \\ é ✓' });
      expect(ours).not.toContain('secret');
      expect(ours.endsWith('}\n')).toBe(true);
    }
  });

  it('carries no caller fields when there is no caller, and nothing below the info level', async () => {
    const { logger, lines } = capturingLogger();
    const server = await appLoggingWith(logger, undefined);
    await server.inject({ method: 'POST', url: '/things/1' });
    const [ours, pinos] = lines as [string, string];
    expect(steady(ours)).toBe(steady(pinos));
    expect(JSON.parse(ours)).toMatchObject({ status: 404, method: 'POST' });

    logger.level = 'warn';
    lines.length = 0;
    await server.inject({ method: 'GET', url: '/things/1' });
    expect(lines).toEqual([]);
  });
});

describe('the request line, with any text in its fields', () => {
  it('is JSON that gives back every value', async () => {
    const { logger, lines } = capturingLogger();
    let caller: Record<string, string> = {};
    const logRequest = requestLogger(logger);
    app = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
    app.get('/', async () => ({}));
    app.addHook('onResponse', (request, reply, done) => {
      logRequest(request, reply, caller);
      done();
    });
    await app.ready();
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), async (value, other) => {
        caller = { key_id: value, 'a "name" \\': other };
        lines.length = 0;
        await app!.inject({ method: 'GET', url: '/' });
        const line = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
        expect(line.key_id).toBe(value);
        expect(line['a "name" \\']).toBe(other);
        expect(line.msg).toBe('request');
      }),
      { numRuns: 300 },
    );
  });
});

describe('request.log', () => {
  it('writes a route’s own lines with the request id of its request line', async () => {
    const { logger, lines } = capturingLogger();
    const logRequest = requestLogger(logger);
    app = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
    app.get('/chatty', async (request) => {
      request.log.warn({ detail: 'é"\\' }, 'a route line');
      request.log.child({ step: 'inner' }).error('from a grandchild');
      return { ok: true };
    });
    app.addHook('onResponse', (request, reply, done) => {
      logRequest(request, reply, undefined);
      done();
    });
    await app.ready();
    await app.inject({ method: 'GET', url: '/chatty' });
    const written = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(written).toMatchObject([
      { level: 40, detail: 'é"\\', msg: 'a route line' },
      { level: 50, step: 'inner', msg: 'from a grandchild' },
      { level: 30, msg: 'request', url: '/chatty' },
    ]);
    expect(new Set(written.map((line) => line.reqId)).size).toBe(1);
    expect(typeof written[0]?.reqId).toBe('string');
  });
});

/** Whether flush called back before it returned: nothing was left to wait for. */
function flushesAtOnce(destination: { flush(callback: () => void): void }): boolean {
  let called = false;
  destination.flush(() => {
    called = true;
  });
  return called;
}

/** Runs with a fresh temp dir, removed afterwards. */
async function inTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'courtier-log-'));
  try {
    await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the default destination (standard output, asynchronous)', () => {
  const expectedMessage = (i: number) => `ligne ${i} — é✓ 𝄞 "${'x'.repeat(i % 300)}"`;

  async function linesOfChild(how: 'return' | 'exit'): Promise<{ i: number; msg: string }[]> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(packageRoot(), 'test', 'fixtures', 'log-lines.ts'), how, '2000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(code).toBe(0);
    return Buffer.concat(chunks)
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { i: number; msg: string });
  }

  it.each(['return', 'exit'] as const)(
    'writes every line whole and in order, multi-byte characters included, when the process ends by %s',
    async (how) => {
      const lines = await linesOfChild(how);
      expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
      expect(lines.every((line) => line.msg === expectedMessage(line.i))).toBe(true);
    },
  );

  it('writes to a file as well', async () => {
    await inTempDir(async (dir) => {
      const file = join(dir, 'service.log');
      const fd = openSync(file, 'a');
      const destination = logDestination(fd);
      const logger = pino({ level: 'info' }, destination);
      for (let i = 0; i < 500; i++) logger.info({ i }, expectedMessage(i));
      // flush calls back once the asynchronous writes have landed, as `courtier serve` waits
      // before it returns. (Not flushSync: it writes what is queued while the first write may
      // still be in flight, so a slow thread pool could land that line after the others.)
      const flushed = await new Promise<Error | undefined>((resolve) => destination.flush(resolve));
      expect(flushed).toBeUndefined();
      const read = readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { i: number; msg: string });
      expect(read.map((line) => line.msg)).toEqual(Array.from({ length: 500 }, (_, i) => expectedMessage(i)));
      closeSync(fd);
    });
  });

  it("calls back from flush with a write's error, and at once from the flushes after it", async () => {
    // In a child process: see the fixture for why it cannot end as processes usually do.
    await inTempDir(async (dir) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(packageRoot(), 'test', 'fixtures', 'log-flush-error.ts'), join(dir, 'read-only.log')],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      const chunks: Buffer[] = [];
      child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
      const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (_code, killedBy) => resolve(killedBy));
      });
      expect(signal).toBe('SIGKILL');
      expect(JSON.parse(Buffer.concat(chunks).toString('utf8').trim())).toEqual({ first: 'EBADF', second: 'called back' });
    });
  });

  it('calls back from flush at once when nothing is queued, and when the reader of its pipe has gone', async () => {
    await inTempDir(async (dir) => {
      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      const writer = openSync(fifo, constants.O_WRONLY);
      const destination = logDestination(writer);
      await new Promise<void>((resolve) => destination.flush(() => resolve()));
      closeSync(reader);
      const logger = pino({ level: 'info' }, destination);
      // The first write fails with EPIPE, on which pino stops writing: nothing will ever drain.
      // Whether that error comes before or during this flush, the flush ends.
      for (let i = 0; i < 50; i++) logger.info({ i }, expectedMessage(i));
      await new Promise<void>((resolve) => destination.flush(() => resolve()));
      // Now pino has stopped writing: lines logged after it leave nothing to wait for.
      for (let i = 0; i < 50; i++) logger.info({ i }, expectedMessage(i));
      expect(flushesAtOnce(destination)).toBe(true);
      closeSync(writer);
    });
  });
});
