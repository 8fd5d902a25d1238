import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueTarification } from '../../server/automation/service.js';
import { findJob } from '../../server/automation/jobs.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { fanOutEvents } from '../../server/webhooks/service.js';
import { apiClient } from '../helpers/api.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

/**
 * The SQL each hot request runs, counted: a change that adds a query or a commit to /me, a list, a
 * create or an enqueue fails here, long before a benchmark would show it. The statements a request
 * runs are told apart from the background's (worker, dispatcher, sync) by the request's async
 * context, from the server's 'request' event until its answer is sent (the background wakes on a
 * later turn).
 * A budget that goes down is good news: lower it here.
 */

interface Trace {
  open: boolean;
  statements: string[];
}

const traces = new AsyncLocalStorage<Trace>();
let server: TestServer;
let cabinetId: string;
const insurer = createTestInsurer();
let last: Trace | undefined;
let api: ReturnType<typeof apiClient>;

beforeAll(async () => {
  server = await startTestServer({
    insurers: [insurer],
    // Time stands still: no once-a-minute write (a key's last use) lands in one request and not another.
    clock: testClock(),
    config: { tarificationQuotaPerHour: 100_000 },
    onStatement: (sql) => {
      const trace = traces.getStore();
      if (trace?.open) trace.statements.push(sql);
    },
    beforeListen: (app) => {
      // Before Fastify's own listener, so that the trace starts before the first hook (the key lookup).
      app.server.prependListener('request', () => {
        last = { open: true, statements: [] };
        traces.enterWith(last);
      });
      app.addHook('onSend', (_request, _reply, payload, done) => {
        const trace = traces.getStore();
        if (trace) trace.open = false;
        done(null, payload);
      });
    },
  });
  cabinetId = await server.createCabinet('Cabinet Budget');
  grantCredits(server.deps, cabinetId, 1_000_000);
  setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
  api = apiClient(server, server.createKey(cabinetId).key);
  for (let i = 0; i < 60; i++) {
    const created = await api.post(
      '/opportunities',
      { title: `Opportunité ${i}`, product: 'auto', contact: { last_name: `Client ${i}` } },
      { 'Idempotency-Key': randomUUID() },
    );
    expect(created.status).toBe(201);
  }
});
afterAll(() => server?.close());

/** The statements of one request, once it was warm (the first call of a route prepares and caches). */
async function statementsOf(request: () => Promise<{ status: number }>, status: number): Promise<string[]> {
  expect((await request()).status).toBe(status);
  expect((await request()).status).toBe(status);
  return last?.statements ?? [];
}

function commits(statements: readonly string[]): number {
  return statements.filter((sql) => /^\s*COMMIT\b/i.test(sql)).length;
}

/** Budgets measured on 2026-11-24 (the enqueue's on 2026-11-25, a job's finish too; the sync capture of an enqueue and a claim on 2026-12-02): statements per request, and commits among them. */
const BUDGETS = {
  /** The key's lookup. */
  me: { statements: 1, commits: 0 },
  /** The key, the page. */
  list: { statements: 2, commits: 0 },
  listNext: { statements: 2, commits: 0 },
  /** One transaction: the Idempotency-Key's claim, the row and its event (each with the sync's clock), the stored answer. */
  create: { statements: 11, commits: 1 },
  /**
   * One transaction: the claim, the guards (switches, breaker, credentials, quota, replay), whether
   * the wallet is the hub's (read once, for the quota and the debit), the debit, the quote, the job
   * (its first step in its row) and its sync capture (the other installs' replay guard sees it
   * queued; no write for a cabinet that does not sync), the answer.
   */
  enqueue: { statements: 19, commits: 1 },
  /** Without any webhook subscription, a fan-out after creates, however many: any subscription? (no transaction: the first subscription starts from the newest event). */
  fanOutWithoutSubscriptions: { statements: 1, commits: 0 },
  /**
   * One transaction: the job's completion (the credits it consumed, its row, its quote updated as it
   * returns, the breaker closed without a read, the login's state for the Insurers page, two events,
   * four sync captures, none of which writes for a cabinet that does not sync) and, in a savepoint,
   * the next job's claim (the kill switch, the
   * cabinets whose jobs wait for the hub, the oldest claimable job leased by one UPDATE, its sync
   * capture, the login its robot will use; a second UPDATE for the free slot, which finds none).
   */
  finishAndClaim: { statements: 21, commits: 1 },
};

function expectWithin(name: keyof typeof BUDGETS, statements: readonly string[]): void {
  const budget = BUDGETS[name];
  const shown = statements.map((sql, i) => `${i + 1}. ${sql.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n');
  expect({ statements: statements.length, commits: commits(statements) }, `${name} ran:\n${shown}`).toEqual(budget);
}

describe('statements per request on the hot paths', () => {
  it('the outbox fan-out of an install without webhook subscriptions', async () => {
    // Stopped, so that its own fan-out (woken by the creates' signal) does not take the events first.
    await server.app.webhookDispatcher.stop();
    for (let i = 0; i < 5; i++)
      expect(
        (await api.post('/opportunities', { title: `Sans abonnement ${i}`, product: 'auto', contact: { last_name: 'Martin' } })).status,
      ).toBe(201);
    const trace: Trace = { open: true, statements: [] };
    traces.run(trace, () => fanOutEvents(server.deps, 500));
    expectWithin('fanOutWithoutSubscriptions', trace.statements);
  });

  it('GET /me', async () => {
    expectWithin('me', await statementsOf(() => api.get('/me'), 200));
  });

  it('GET /opportunities?limit=50, first page and the next', async () => {
    expectWithin('list', await statementsOf(() => api.get('/opportunities?limit=50'), 200));
    const first = await api.get('/opportunities?limit=50');
    const cursor = String(first.body.next_cursor);
    expectWithin('listNext', await statementsOf(() => api.get(`/opportunities?limit=50&cursor=${encodeURIComponent(cursor)}`), 200));
  });

  it('POST /opportunities with a fresh Idempotency-Key', async () => {
    const create = () =>
      api.post(
        '/opportunities',
        { title: 'Flotte', product: 'auto', contact: { last_name: 'Martin' } },
        { 'Idempotency-Key': randomUUID() },
      );
    expectWithin('create', await statementsOf(create, 201));
  });

  it('POST /automation/tarifications (enqueue)', async () => {
    // Stopped, so that no claim or finished job of the worker shares the request's transaction (the connection's commit group).
    await server.app.robotWorker.stop();
    let n = 0;
    const enqueue = () => {
      n += 1;
      return api.post(
        '/automation/tarifications',
        { compagnie: 'testco', produit: 'auto', dicData: { postcode: String(10000 + n), birth_date: '1984-03-09' } },
        { 'Idempotency-Key': randomUUID() },
      );
    };
    expectWithin('enqueue', await statementsOf(enqueue, 202));
  });

  it('the robot worker: a finished job commits together with the claim of the next one', async () => {
    await server.app.robotWorker.stop();
    await server.app.robotWorker.idle(); // the jobs enqueued above, run first
    const jobs = 5;
    for (let i = 0; i < jobs; i++) insurer.queue(async () => ({ tarif_eur: 100, outcome: 'partial' }));
    const trace: Trace = { open: true, statements: [] };
    const jobIds = traces.run(trace, () => {
      server.app.robotWorker.start();
      return Array.from(
        { length: jobs },
        (_, i) =>
          enqueueTarification(
            server.deps,
            cabinetId,
            { compagnie: 'testco', produit: 'auto', dicData: { postcode: String(30000 + i), birth_date: '1984-03-09' } },
            'prod',
          ).job_id,
      );
    });
    while (!jobIds.every((id) => findJob(server.deps, cabinetId, id)?.status === 'partial'))
      await new Promise((resolve) => setImmediate(resolve));
    trace.open = false;
    // The transactions, each from its BEGIN to its COMMIT.
    const transactions: string[][] = [];
    for (const sql of trace.statements) {
      if (/^BEGIN\b/.test(sql)) transactions.push([]);
      transactions.at(-1)?.push(sql);
    }
    const finishing = transactions.filter((statements) => statements.some((sql) => /^update "jobs" set "status" = 'partial'/i.test(sql)));
    // The claim is one UPDATE of the oldest claimable job, whether or not there is one.
    const claiming = (statements: string[]) => statements.some((sql) => /^update "jobs" set "status" = 'running'/i.test(sql));
    expect(finishing).toHaveLength(jobs);
    // One job at a time on the cabinet's login: each finish claims the next job in its transaction (the
    // last one finds none). Only two claims had a transaction of their own: the start's tick, before
    // the enqueues (nothing to claim yet), and the first job's, woken by them.
    expect(finishing.filter(claiming)).toHaveLength(jobs);
    expect(transactions.filter((statements) => claiming(statements) && !finishing.includes(statements))).toHaveLength(2);
    // A job's completion and its successor's claim, from BEGIN to COMMIT (the next robot's start comes after).
    const finishAndClaim = finishing.find(claiming) ?? [];
    expectWithin('finishAndClaim', finishAndClaim.slice(0, finishAndClaim.findIndex((sql) => /^COMMIT\b/.test(sql)) + 1));
  });
});
