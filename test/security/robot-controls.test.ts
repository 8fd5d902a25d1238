/**
 * Who switches the robots off, what a pause stops, how long artifacts live, and one insurer login
 * never used twice at once. Real HTTP, a real SQLite file, the real worker; the test insurer for
 * robots (real Chromium only where artifacts need a page).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACT_RETENTION_MS, automationStatusSchema, jobSchema, type Job } from '../../shared/automation.js';
import { setKillSwitch } from '../../server/automation/guards.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { RobotError } from '@courtier/adapter-kit';
import type { Insurer } from '../../server/insurers/registry.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { signInNewUser } from '../helpers/console.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, gated } from '../helpers/test-insurer.js';

const clock = testClock();
const insurer = createTestInsurer('testco');
let openLoginCheck: () => void = () => undefined;
let loginCheckEntered: Promise<void> = Promise.resolve();

/** The test insurer, whose login check waits on a gate the test opens. */
const checkedInsurer: Insurer = {
  ...insurer,
  async verifyLogin() {
    let signalEntered: () => void = () => undefined;
    loginCheckEntered = new Promise((resolve) => (signalEntered = resolve));
    const gate = new Promise<void>((resolve) => (openLoginCheck = resolve));
    signalEntered();
    await gate;
    return { mfa: false };
  },
};

/** A robot that opens a page and fails: its run leaves a screenshot and a trace. */
const failing: Insurer = {
  code: 'failing',
  name: 'Failing Assurances',
  version: '1.0.0',
  products: insurer.products,
  async run(ctx) {
    const page = await ctx.openPage();
    await page.setContent('<h1>Maintenance</h1>');
    throw new RobotError('technical', 'layout_changed', 'The page is not the one expected.');
  },
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ clock, insurers: [checkedInsurer, failing], config: { tarificationQuotaPerHour: 1000 } });
});
afterAll(() => server.close());

async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 1000);
  setInsurerCredentials(server.deps, id, 'testco', { login: `broker-${id}`, password: 'pw' });
  setInsurerCredentials(server.deps, id, 'failing', { login: `broker-${id}`, password: 'pw' });
  const admin = await signInNewUser(server, id, 'admin');
  return { id, api: apiClient(server, server.createKey(id).key), admin: admin.client, adminEmail: admin.email };
}

let counter = 0;
function tarification(compagnie = 'testco') {
  counter += 1;
  return { compagnie, produit: 'auto', dicData: { postcode: String(10000 + counter), birth_date: '1984-03-09' } };
}

async function job(api: ReturnType<typeof apiClient>, id: string): Promise<Job> {
  return jobSchema.parse((await api.get(`/automation/jobs/${id}`)).body);
}

/** Enqueues behind a running job on the same login, so that it stays pending; returns both. */
async function pendingBehindRunningJob(api: ReturnType<typeof apiClient>) {
  const gate = gated();
  insurer.queue(gate.script);
  const running = String((await api.post('/automation/tarifications', tarification())).body.job_id);
  await gate.entered;
  const waiting = String((await api.post('/automation/tarifications', tarification())).body.job_id);
  server.app.robotWorker.tick();
  expect((await job(api, waiting)).status).toBe('pending');
  return { running, waiting, finishRunning: gate.open };
}

describe('CWE-284 (improper access control): the robots’ switches', () => {
  it('a cabinet admin pauses their own cabinet only: its tarifications get 503 with its reason, another cabinet is untouched and sees nothing of it', async () => {
    const a = await cabinet();
    const b = await cabinet();
    const paused = await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true } });
    expect(paused.status).toBe(200);
    const status = automationStatusSchema.parse(await paused.json());
    expect(status).toMatchObject({
      robots_enabled: false,
      kill_switch: null,
      cabinet_pause: { reason: expect.stringContaining(a.adminEmail) as string },
    });

    const refused = await a.api.post('/automation/tarifications', tarification());
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'api_rpa_temporarily_disabled', details: { scope: 'cabinet' } });

    const other = await b.api.post('/automation/tarifications', tarification());
    expect(other.status).toBe(202);
    const otherStatus = await b.api.get('/automation/status');
    expect(otherStatus.body).toMatchObject({ robots_enabled: true, kill_switch: null, cabinet_pause: null });
    expect(JSON.stringify(otherStatus.body)).not.toContain(a.adminEmail);

    expect((await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } })).status).toBe(200);
    expect((await a.api.post('/automation/tarifications', tarification())).status).toBe(202);
    await server.app.robotWorker.idle();
  });

  it('the install-wide switch is not the console’s: no console route flips it, a cabinet admin cannot undo it, and its 503 names no cabinet user', async () => {
    const a = await cabinet();
    const b = await cabinet();
    // What `courtier robots disable` does, from another process.
    setKillSwitch(server.deps, 'Insurer portals under maintenance tonight.');
    try {
      const oldRoute = await a.admin.request('/api/v1/console/robots/kill-switch', { method: 'PUT', json: { disabled: false } });
      expect(oldRoute.status).toBe(404);
      expect((await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } })).status).toBe(200);
      for (const cab of [a, b]) {
        const refused = await cab.api.post('/automation/tarifications', tarification());
        expect(refused.status).toBe(503);
        expect(refused.body).toMatchObject({
          error: 'api_rpa_temporarily_disabled',
          details: { scope: 'install', reason: 'Insurer portals under maintenance tonight.' },
        });
        expect(JSON.stringify(refused.body)).not.toContain(a.adminEmail);
      }
    } finally {
      setKillSwitch(server.deps, null);
    }
  });

  it('no login check reaches a portal while the robots are paused or switched off', async () => {
    const a = await cabinet();
    await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true } });
    const whilePaused = await a.admin.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' });
    expect(whilePaused.status).toBe(503);
    expect(await whilePaused.json()).toMatchObject({ error: 'api_rpa_temporarily_disabled', details: { scope: 'cabinet' } });
    await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } });
    setKillSwitch(server.deps, 'Maintenance');
    try {
      const whileOff = await a.admin.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' });
      expect(whileOff.status).toBe(503);
      expect(await whileOff.json()).toMatchObject({ error: 'api_rpa_temporarily_disabled', details: { scope: 'install' } });
    } finally {
      setKillSwitch(server.deps, null);
    }
  });

  it('a cabinet admin’s pause never shows its reason or email to another cabinet, even while both are refused', async () => {
    const a = await cabinet();
    const b = await cabinet();
    await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true, reason: 'Audit interne du cabinet A' } });
    await b.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true } });
    const fromB = await b.api.post('/automation/tarifications', tarification());
    expect(fromB.status).toBe(503);
    expect(JSON.stringify(fromB.body)).not.toContain('Audit interne du cabinet A');
    expect(JSON.stringify(fromB.body)).not.toContain(a.adminEmail);
    await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } });
    await b.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } });
  });
});

describe('CWE-696 (incorrect behaviour order): paused means queued jobs are not started', () => {
  it('a cabinet’s pause holds its queued job; resuming starts it', async () => {
    const a = await cabinet();
    const { waiting, finishRunning } = await pendingBehindRunningJob(a.api);
    await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true } });
    finishRunning();
    await server.app.robotWorker.idle();
    expect((await job(a.api, waiting)).status).toBe('pending');

    await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } });
    await server.app.robotWorker.idle();
    expect((await job(a.api, waiting)).status).toBe('completed');
  });

  it('the install-wide switch holds every queued job; switching back on starts them', async () => {
    const a = await cabinet();
    const { waiting, finishRunning } = await pendingBehindRunningJob(a.api);
    setKillSwitch(server.deps, 'Maintenance');
    try {
      finishRunning();
      await server.app.robotWorker.idle();
      expect((await job(a.api, waiting)).status).toBe('pending');
    } finally {
      setKillSwitch(server.deps, null);
    }
    await server.app.robotWorker.idle();
    expect((await job(a.api, waiting)).status).toBe('completed');
  });
});

describe('CWE-400 (one tenant denying service to others): a paused cabinet never holds an insurer’s breaker shut', () => {
  it('its pending trial job of a half-open breaker lets another cabinet’s job become the trial', async () => {
    const a = await cabinet();
    const b = await cabinet();
    const { waiting, finishRunning } = await pendingBehindRunningJob(a.api);
    // The insurer's breaker reopened for a trial, and A's pending job is the trial it waits for.
    server.deps.db.sqlite
      .prepare('INSERT OR REPLACE INTO insurer_breakers (compagnie, consecutive_failures, open_until, trial_job_id) VALUES (?, 5, ?, ?)')
      .run('testco', clock.now() - 1, waiting);
    try {
      expect((await b.api.post('/automation/tarifications', tarification())).body).toMatchObject({ error: 'rpa_circuit_open' });
      await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: true } });
      const fromB = await b.api.post('/automation/tarifications', tarification());
      expect(fromB.status, JSON.stringify(fromB.body)).toBe(202);
      // B's job is the trial now: it runs (beside A's, still running), succeeds, and closes the breaker for everyone.
      const deadline = Date.now() + 10_000;
      while ((await job(b.api, String(fromB.body.job_id))).status !== 'completed') {
        if (Date.now() > deadline) throw new Error('the trial job did not complete');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await b.api.get('/automation/status')).body).toMatchObject({ breakers: [{ compagnie: 'testco', state: 'closed' }] });
    } finally {
      finishRunning();
      await a.admin.request('/api/v1/console/robots/pause', { method: 'PUT', json: { paused: false } });
      await server.app.robotWorker.idle();
      server.deps.db.sqlite.prepare(`DELETE FROM insurer_breakers WHERE compagnie = 'testco'`).run();
    }
  });
});

describe('CWE-362 (race on a shared resource): a login check and a robot never use one insurer login at once', () => {
  it('a job queued while the console tests the login waits for the check to end', async () => {
    const a = await cabinet();
    const check = a.admin.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' });
    await loginCheckEntered;
    const queued = String((await a.api.post('/automation/tarifications', tarification())).body.job_id);
    server.app.robotWorker.tick();
    expect((await job(a.api, queued)).status).toBe('pending');
    // A second check of the same login is refused meanwhile.
    const second = await a.admin.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: 'insurer_login_busy' });

    openLoginCheck();
    expect((await check).status).toBe(200);
    await server.app.robotWorker.idle();
    expect((await job(a.api, queued)).status).toBe('completed');
  });

  it('a check is refused while a robot holds the login', async () => {
    const a = await cabinet();
    const gate = gated();
    insurer.queue(gate.script);
    await a.api.post('/automation/tarifications', tarification());
    await gate.entered;
    const refused = await a.admin.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: 'insurer_login_busy' });
    gate.open();
    await server.app.robotWorker.idle();
  });
});

describe(
  'CWE-459 (incomplete cleanup): artifacts are deleted 7 days after the job while the service runs, and refused on download from then',
  { tags: ['browser'] },
  () => {
    it('downloadable for 7 days; refused from the 7th day; deleted within the hour by the sweep of the running service', async () => {
      const a = await cabinet();
      const enqueued = await a.api.post('/automation/tarifications', tarification('failing'));
      await server.app.robotWorker.idle();
      const failed = await job(a.api, String(enqueued.body.job_id));
      expect(failed.status).toBe('failed');
      const url = failed.artifacts?.screenshot_url ?? '';
      expect(url).not.toBe('');
      const dir = `${server.dataDir}/artifacts/jobs/${failed.job_id}`;
      const download = async () => {
        const res = await a.api.get(url.replace('/api/v1/public', ''));
        return res.status;
      };

      clock.advance(ARTIFACT_RETENTION_MS - 1);
      expect(await download()).toBe(200);
      clock.advance(1);
      // Refused at once, whether or not the sweep has run yet.
      expect(await download()).toBe(404);

      // The running service's worker sweeps at most once an hour (its ticks, every second, check): no restart needed.
      clock.advance(60 * 60 * 1000);
      server.app.robotWorker.tick();
      expect(existsSync(dir)).toBe(false);
      expect((await job(a.api, failed.job_id)).artifacts).toBeNull();
    });
  },
);
