import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsDashboardSchema, type JobsDashboard } from '../../shared/console-dashboard.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { findJob } from '../../server/automation/jobs.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { expectErrorResponse, json } from '../helpers/api.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { createUser, type TestUser } from '../helpers/oauth.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, failWith, gated, succeed, type Script } from '../helpers/test-insurer.js';

/**
 * The jobs dashboard over real HTTP and SQLite: jobs with known outcomes, durations and credits,
 * created at pinned times, and every figure checked: counts, success rates, median and p90,
 * credits net of refunds, every day of the period (zeros too), the period's first instant in and
 * the one before it out, and another cabinet seeing none of it.
 */

const clock = testClock(Date.UTC(2026, 10, 15, 23, 0, 0));
const testco = createTestInsurer();
const otherco = createTestInsurer('otherco', 'Autre Assurances');
let server: TestServer;
let user: TestUser;
let n = 0;
/** The statements the server runs while a test records them (the dashboard's budget). */
let recorded: string[] | null = null;

beforeAll(async () => {
  server = await startTestServer({
    insurers: [testco, otherco],
    clock,
    config: { tarificationQuotaPerHour: 1000 },
    onStatement: (statement) => recorded?.push(statement),
  });
  user = await createUser(server, 'Cabinet Tableau');
  grantCredits(server.deps, user.cabinetId, 1000);
  for (const code of ['testco', 'otherco'])
    setInsurerCredentials(server.deps, user.cabinetId, code, { login: 'broker', password: 'secret' });
});
afterAll(() => server?.close());

/** A robot run that takes `seconds` of the pinned clock before it prices. */
const pricesIn =
  (seconds: number): Script =>
  async (ctx, input) => {
    clock.advance(seconds * 1000);
    return succeed()(ctx, input);
  };

/** Enqueues a job at `at` on `insurer`'s robot running `script`; waits until it is no longer queued or running, unless told not to. */
async function jobAt(at: string, insurer: typeof testco, script: Script, wait = true): Promise<string> {
  clock.set(Date.parse(at));
  insurer.queue(script);
  n += 1;
  const { job_id } = enqueueTarification(
    server.deps,
    user.cabinetId,
    { compagnie: insurer.code, produit: 'auto', dicData: { postcode: String(30000 + n), birth_date: '1984-03-09' } },
    'prod',
  );
  for (let i = 0; wait && i < 5000; i++) {
    const status = findJob(server.deps, user.cabinetId, job_id)?.status;
    if (status !== 'pending' && status !== 'running') return job_id;
    await new Promise((r) => setTimeout(r, 2));
  }
  return job_id;
}

async function dashboard(client: ConsoleClient, days = 7): Promise<JobsDashboard> {
  const res = await client.request(`/api/v1/console/automation/dashboard?days=${days}`);
  expect(res.status).toBe(200);
  return jobsDashboardSchema.strict().parse(await json(res));
}

/** A copy of the cabinet's latest job priced by testco under a new id, with `changes` to its columns. */
function copyJob(changes: Record<string, unknown>): void {
  const db = server.deps.db.sqlite;
  const source = db
    .prepare("SELECT * FROM jobs WHERE cabinet_id = ? AND compagnie = 'testco' AND status = 'completed' ORDER BY created_at DESC LIMIT 1")
    .get(user.cabinetId) as Record<string, unknown>;
  const row = { ...source, ...changes, id: randomUUID() };
  const columns = Object.keys(row);
  db.prepare(`INSERT INTO jobs (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`).run(row);
}

/** Measured on 2026-12-04: the session, its user and cabinet, then the four queries (counts, credits, durations, failures). */
const DASHBOARD_STATEMENTS = 7;

const zeros = { jobs: 0, succeeded: 0, failed: 0, cancelled: 0, open: 0, success_rate: null, credits: 0 };

describe('the jobs dashboard', () => {
  it('counts, rates, durations, credits net of refunds, every day, the period’s bounds and failures by reason', async () => {
    // The last second before the 7-day period (2026-11-16 to 2026-11-22, UTC): not counted.
    await jobAt('2026-11-15T23:59:59.999Z', testco, pricesIn(5));
    await jobAt('2026-11-16T00:00:00.000Z', testco, pricesIn(10));
    await jobAt('2026-11-18T10:00:00.000Z', testco, pricesIn(20));
    await jobAt('2026-11-18T11:00:00.000Z', testco, pricesIn(40));
    // Technical: refunded.
    const down = await jobAt('2026-11-18T12:00:00.000Z', testco, failWith('technical', 'portal_down'));
    // A business refusal: not refunded.
    const declined = await jobAt('2026-11-20T09:00:00.000Z', otherco, failWith('business', 'risk_declined'));
    const declinedAgain = await jobAt('2026-11-20T09:30:00.000Z', testco, failWith('business', 'risk_declined'));
    await jobAt('2026-11-22T08:00:00.000Z', otherco, pricesIn(7));
    const gate = gated();
    const open = await jobAt('2026-11-22T08:30:00.000Z', testco, gate.script, false);
    await gate.entered;
    clock.set(Date.parse('2026-11-22T09:00:00.000Z'));

    const admin = await consoleClient(server, user);
    const board = await dashboard(admin);
    expect(board).toMatchObject({ days: 7, from: '2026-11-16', to: '2026-11-22' });
    expect(board.insurers).toEqual([
      {
        compagnie: 'testco',
        name: 'Test Assurances',
        jobs: 6,
        succeeded: 3,
        failed: 2,
        cancelled: 0,
        open: 1,
        success_rate: 3 / 5,
        // 10, 20, 40 s: the middle one; the 90th percentile is the 3rd of 3.
        median_seconds: 20,
        p90_seconds: 40,
        // 3 priced and 1 refused at 10 each, the technical failure refunded, the running one debited.
        credits: 50,
      },
      {
        compagnie: 'otherco',
        name: 'Autre Assurances',
        jobs: 2,
        succeeded: 1,
        failed: 1,
        cancelled: 0,
        open: 0,
        success_rate: 0.5,
        median_seconds: 7,
        p90_seconds: 7,
        credits: 20,
      },
    ]);
    // 7, 10, 20, 40 s: the two middle ones averaged; ceil(0.9 × 4) = the 4th.
    expect(board.totals).toEqual({
      jobs: 8,
      succeeded: 4,
      failed: 3,
      cancelled: 0,
      open: 1,
      success_rate: 4 / 7,
      credits: 70,
      median_seconds: 15,
      p90_seconds: 40,
    });
    expect(board.per_day.map((d) => d.date)).toEqual([
      '2026-11-16',
      '2026-11-17',
      '2026-11-18',
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
    ]);
    expect(board.per_day[0]).toEqual({
      date: '2026-11-16',
      jobs: 1,
      succeeded: 1,
      failed: 0,
      cancelled: 0,
      open: 0,
      success_rate: 1,
      credits: 10,
    });
    expect(board.per_day[1]).toEqual({ date: '2026-11-17', ...zeros });
    expect(board.per_day[2]).toEqual({
      date: '2026-11-18',
      jobs: 3,
      succeeded: 2,
      failed: 1,
      cancelled: 0,
      open: 0,
      success_rate: 2 / 3,
      credits: 20,
    });
    expect(board.per_day[3]).toEqual({ date: '2026-11-19', ...zeros });
    expect(board.per_day[4]).toEqual({
      date: '2026-11-20',
      jobs: 2,
      succeeded: 0,
      failed: 2,
      cancelled: 0,
      open: 0,
      success_rate: 0,
      credits: 20,
    });
    expect(board.per_day[5]).toEqual({ date: '2026-11-21', ...zeros });
    expect(board.per_day[6]).toEqual({
      date: '2026-11-22',
      jobs: 2,
      succeeded: 1,
      failed: 0,
      cancelled: 0,
      open: 1,
      success_rate: 1,
      credits: 20,
    });
    expect(board.failures).toEqual([
      { code: 'risk_declined', count: 2, insurers: ['otherco', 'testco'], last_job_id: declinedAgain, last_at: '2026-11-20T09:30:00.000Z' },
      { code: 'portal_down', count: 1, insurers: ['testco'], last_job_id: down, last_at: '2026-11-18T12:00:00.000Z' },
    ]);
    expect(declined).not.toBe(declinedAgain);

    // Cancelled, the running job is refunded: it counts as finished and costs nothing.
    const cancel = await admin.request(`/api/v1/console/jobs/${open}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(200);
    const after = await dashboard(admin);
    expect(after.insurers[0]).toMatchObject({ compagnie: 'testco', open: 0, cancelled: 1, success_rate: 3 / 6, credits: 40 });
    expect(after.totals).toMatchObject({ jobs: 8, open: 0, cancelled: 1, credits: 60 });

    // A day later the first day leaves the 7-day period; 30 days still hold every job, the one before the 16th too.
    clock.set(Date.parse('2026-11-23T00:00:00.000Z'));
    const later = await consoleClient(server, user);
    const moved = await dashboard(later);
    expect(moved).toMatchObject({ from: '2026-11-17', to: '2026-11-23', totals: { jobs: 7, credits: 50 } });
    expect(moved.per_day.at(-1)).toEqual({ date: '2026-11-23', ...zeros });
    const month = await dashboard(later, 30);
    expect(month).toMatchObject({ days: 30, from: '2026-10-25', totals: { jobs: 9, succeeded: 5, credits: 70 } });
    expect(month.per_day).toHaveLength(30);
    expect(month.totals).toMatchObject({ median_seconds: 10, p90_seconds: 40 });
  });

  it('another cabinet sees none of it: every day at zero, no insurer, no failure', async () => {
    const other = await createUser(server, 'Cabinet Voisin');
    const board = await dashboard(await consoleClient(server, other), 90);
    expect(board.insurers).toEqual([]);
    expect(board.failures).toEqual([]);
    expect(board.totals).toEqual({ ...zeros, median_seconds: null, p90_seconds: null });
    expect(board.per_day).toHaveLength(90);
    expect(board.per_day.every((d) => d.jobs === 0 && d.credits === 0 && d.success_rate === null)).toBe(true);
  });

  it('refuses a period other than 7, 30 or 90 days with a stable code, and takes 7 by default', async () => {
    const admin = await consoleClient(server, user);
    for (const days of ['5', 'abc', '', '7.0'])
      await expectErrorResponse(await admin.request(`/api/v1/console/automation/dashboard?days=${days}`), 400, 'validation_error');
    const res = await admin.request('/api/v1/console/automation/dashboard');
    expect(res.status).toBe(200);
    expect(jobsDashboardSchema.parse(await json(res)).days).toBe(7);
  });

  it('runs a fixed number of statements, however many jobs: the session, three aggregates, the wallet’s credits', async () => {
    const admin = await consoleClient(server, user);
    await dashboard(admin, 90);
    recorded = [];
    const board = await dashboard(admin, 90);
    const statements = recorded;
    recorded = null;
    expect(board.totals.jobs).toBe(9);
    const shown = statements.map((sql, i) => `${i + 1}. ${sql.replace(/\s+/g, ' ').slice(0, 140)}`).join('\n');
    expect(
      statements.filter((sql) => /group by/i.test(sql)),
      shown,
    ).toHaveLength(4);
    expect(statements.length, shown).toBe(DASHBOARD_STATEMENTS);
  });

  it('is for signed-in people only', async () => {
    await expectErrorResponse(await server.request('/api/v1/console/automation/dashboard'), 401, 'not_signed_in');
  });
  it('counts a job another computer of the cabinet ran with the credits it wrote, from its creation, and leaves out test keys’ jobs', async () => {
    const admin = await consoleClient(server, user);
    const before = await dashboard(admin, 90);
    const created = Date.parse('2026-11-21T10:00:00.000Z');
    // As sync writes a pulled job: no enqueue number here, no steps, the credits its install consumed.
    copyJob({ enqueue_number: null, timeline: null, credits_consumed: 4, created_at: created, finished_at: created + 12_000 });
    // A test key's job names testco but ran on a demo insurer: not testco's figures.
    copyJob({ enqueue_number: null, environment: 'test', created_at: created });
    const after = await dashboard(admin, 90);
    expect(after.totals.jobs).toBe(before.totals.jobs + 1);
    expect(after.totals.credits).toBe(before.totals.credits + 4);
    expect(after.per_day.find((d) => d.date === '2026-11-21')).toMatchObject({ jobs: 1, succeeded: 1, credits: 4 });
    // testco's priced runs: 5, 10, 20 and 40 s before, now 12 s too (from its creation, having no steps here).
    expect(after.insurers.find((i) => i.compagnie === 'testco')).toMatchObject({ median_seconds: 12, p90_seconds: 40 });
  });
});
