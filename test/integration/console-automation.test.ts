import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jobSchema, type Job } from '../../shared/automation.js';
import { consoleDryRunSchema, consoleJobPageSchema, readyEventSchema } from '../../shared/console-automation.js';
import { consoleInsurerListSchema, testLoginResultSchema } from '../../shared/console-insurers.js';
import { errorBodySchema } from '../../shared/errors.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { hashPassword } from '../../server/tenancy/passwords.js';
import { insertUser } from '../../server/tenancy/store.js';
import { expectErrorResponse, json } from '../helpers/api.js';
import { builtInPackage } from '../helpers/adapter-package.js';
import { useAutomationServer, type AutomationCabinet } from '../helpers/automation-server.js';
import { consoleClient, type ConsoleClient } from '../helpers/console.js';
import { PASSWORD } from '../helpers/oauth.js';
import { createTestInsurer, gated, TEST_PDF, withMfa } from '../helpers/test-insurer.js';

/**
 * The console's automation routes over real HTTP: session cookie + CSRF, admin-only credential
 * writes, cabinet isolation, pricing through the worker (a scripted insurer), and the live feed
 * (Server-Sent Events) read with fetch and a stream reader.
 */

const app = useAutomationServer();
const { insurer, cabinet, request } = app;
type Cabinet = AutomationCabinet;

/** A broker (not admin) of the same cabinet. */
async function broker(cab: Cabinet): Promise<ConsoleClient> {
  const email = `broker-${randomUUID()}@example.fr`;
  insertUser(app.server.deps.db.orm, {
    id: randomUUID(),
    cabinetId: cab.user.cabinetId,
    email,
    passwordHash: await hashPassword(PASSWORD, app.server.deps.randomBytes(16)),
    role: 'broker',
    createdAt: Date.now(),
  });
  return consoleClient(app.server, { email, password: PASSWORD });
}

async function enqueue(client: ConsoleClient, body = request()): Promise<string> {
  const res = await client.request('/api/v1/console/tarifications', { method: 'POST', json: body });
  expect(res.status).toBe(202);
  return String(((await json(res)) as { job_id: string }).job_id);
}

async function getJob(client: ConsoleClient, id: string): Promise<Job> {
  const res = await client.request(`/api/v1/console/jobs/${id}`);
  expect(res.status).toBe(200);
  return jobSchema.parse(await json(res));
}

async function untilJob(client: ConsoleClient, id: string, until: (job: Job) => boolean): Promise<Job> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = await getJob(client, id);
    if (until(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} stuck in ${job.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface SseEvent {
  event: string;
  data: string;
}

/** An open /events stream, parsed frame by frame. */
async function openFeed(client: ConsoleClient) {
  const controller = new AbortController();
  const response = await client.request('/api/v1/console/events', { signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const events: SseEvent[] = [];
  const raw: string[] = [];
  const waiter: { wake: (() => void) | null } = { wake: null };
  let ended = false;
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          raw.push(block);
          const lines = block.split('\n');
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
          const data = lines
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (event) events.push({ event, data });
        }
        waiter.wake?.();
      }
    } catch {
      // aborted by the test
    } finally {
      ended = true;
      waiter.wake?.();
    }
  })();
  async function next<T>(find: (events: SseEvent[]) => T | undefined, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find(events);
      if (found !== undefined) return found;
      if (ended) throw new Error('the stream ended');
      if (Date.now() > deadline) throw new Error(`no such event; got ${events.map((e) => e.event).join(', ')}`);
      await new Promise<void>((resolve) => {
        waiter.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
  }
  const jobs = () => events.filter((e) => e.event === 'job').map((e) => jobSchema.parse(JSON.parse(e.data)));
  return {
    response,
    events,
    raw,
    jobs,
    next,
    /** Waits for a job event that satisfies the predicate. */
    job: (predicate: (job: Job) => boolean, timeoutMs?: number) => next(() => jobs().find(predicate), timeoutMs),
    ready: () => next((e) => e.find((x) => x.event === 'ready')).then((e) => readyEventSchema.parse(JSON.parse(e.data))),
    async close() {
      controller.abort();
      await pump;
    },
    ended: () => ended,
  };
}

describe('console automation routes: access rules', () => {
  it('lists insurers with their products and credentials state, never a password', async () => {
    const cab = await cabinet(0, false);
    let res = await cab.admin.request('/api/v1/console/insurers');
    expect(res.status).toBe(200);
    let list = consoleInsurerListSchema.parse(await json(res));
    const testco = list.data.find((i) => i.code === 'testco');
    expect(testco).toMatchObject({
      name: 'Test Assurances',
      credentials: { configured: false, login: null, updated_at: null },
      can_test_login: false,
    });
    expect(testco?.products.map((p) => [p.code, p.kind, p.cost_credits])).toEqual([
      ['auto', 'quote', 10],
      ['attestation', 'routine', 4],
    ]);
    expect(list.data.find((i) => i.code === 'sandbox')).toMatchObject({ name: 'Sandbox Assurances', can_test_login: true });

    res = await cab.admin.request('/api/v1/console/insurers/testco/credentials', {
      method: 'PUT',
      json: { login: 'agence-7', password: 'Tr3s-secret!' },
    });
    expect(res.status).toBe(200);
    const saved = JSON.stringify(await json(res));
    expect(saved).toContain('agence-7');
    expect(saved).not.toContain('Tr3s-secret!');

    res = await cab.admin.request('/api/v1/console/insurers');
    const text = await res.text();
    expect(text).not.toContain('Tr3s-secret!');
    list = consoleInsurerListSchema.parse(JSON.parse(text));
    expect(list.data.find((i) => i.code === 'testco')?.credentials).toMatchObject({ configured: true, login: 'agence-7' });
    expect(app.server.logs.join('')).not.toContain('Tr3s-secret!');

    // Replace, then remove.
    res = await cab.admin.request('/api/v1/console/insurers/testco/credentials', {
      method: 'PUT',
      json: { login: 'agence-8', password: 'autre' },
    });
    expect(res.status).toBe(200);
    res = await cab.admin.request('/api/v1/console/insurers/testco/credentials', { method: 'DELETE' });
    expect(res.status).toBe(204);
    await expectErrorResponse(
      await cab.admin.request('/api/v1/console/insurers/testco/credentials', { method: 'DELETE' }),
      409,
      'insurer_credentials_missing',
    );
    await expectErrorResponse(
      await cab.admin.request('/api/v1/console/insurers/nope/credentials', { method: 'PUT', json: { login: 'a', password: 'b' } }),
      404,
      'unknown_insurer',
    );
    await expectErrorResponse(
      await cab.admin.request('/api/v1/console/insurers/testco/credentials', { method: 'PUT', json: { login: ' ', password: '' } }),
      400,
      'validation_error',
    );
  });

  it('says which adapter package prices for each insurer and who signed it; the packages that did not load, to admins', async () => {
    const cab = await cabinet();
    const list = async (client: ConsoleClient) => {
      const res = await client.request('/api/v1/console/insurers');
      expect(res.status).toBe(200);
      return consoleInsurerListSchema.parse(await json(res));
    };
    const before = await list(cab.admin);
    expect(before.data.find((i) => i.code === 'sandbox')).toMatchObject({
      version: builtInPackage('sandbox').version,
      source: 'built-in',
      signed: null,
    });
    // The scripted insurer is given in code: no package, so it reads as part of the application.
    expect(before.data.find((i) => i.code === 'testco')).toMatchObject({ version: '1.0.0', source: 'built-in', signed: null });
    expect(before.problems).toEqual([]);

    // What a reload after `courtier insurers install` leaves: testco installed and signed, acme
    // installed unsigned, one package refused.
    const registry = app.server.deps.insurers;
    const loaded = registry.list();
    const origin = { source: 'installed' as const, apiRange: '^1.0.0', dir: '/packages/x' };
    const fingerprint = 'ed25519:ab12cd34ef56ab12cd34ef56ab12cd34';
    const refused = "courtier-insurer-broken@1.0.0 is not signed, and this machine's IT policy accepts signed adapters only.";
    registry.replace(
      [
        { ...insurer, version: '2.1.0', origin: { ...origin, signer: { fingerprint, trusted: true } } },
        { ...createTestInsurer('acme', 'Acme Assurances'), version: '0.3.0', origin: { ...origin, signer: null } },
        ...loaded.filter((i) => i.code === 'sandbox'),
      ],
      [refused],
    );
    try {
      const after = await list(cab.admin);
      expect(after.data.map((i) => [i.code, i.version, i.source, i.signed])).toEqual([
        ['testco', '2.1.0', 'installed', { by: fingerprint, trusted: true }],
        ['acme', '0.3.0', 'installed', null],
        ['sandbox', builtInPackage('sandbox').version, 'built-in', null],
      ]);
      expect(after.data[0]?.products.map((p) => p.code)).toEqual(['auto', 'attestation']);
      expect(after.problems).toEqual([refused]);
      // A broker prices with the insurers; installing packages is not their business.
      expect((await list(await broker(cab))).problems).toEqual([]);
    } finally {
      registry.replace(loaded);
    }
  });

  it('credential writes and test logins are for admins; pricing and jobs for every user', async () => {
    const cab = await cabinet();
    const user = await broker(cab);
    await expectErrorResponse(
      await user.request('/api/v1/console/insurers/testco/credentials', { method: 'PUT', json: { login: 'x', password: 'y' } }),
      403,
      'admin_only',
    );
    await expectErrorResponse(await user.request('/api/v1/console/insurers/testco/credentials', { method: 'DELETE' }), 403, 'admin_only');
    await expectErrorResponse(await user.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' }), 403, 'admin_only');
    expect((await user.request('/api/v1/console/insurers')).status).toBe(200);
    const dry = await user.request('/api/v1/console/tarifications', { method: 'POST', json: request({ dry_run: true }) });
    expect(dry.status).toBe(200);
    const id = await enqueue(user);
    expect((await untilJob(user, id, (j) => j.status === 'completed')).credits_consumed).toBe(10);
    expect((await user.request('/api/v1/console/jobs')).status).toBe(200);
  });

  it('needs the session cookie (an API key is not enough) and the CSRF header on writes', async () => {
    const cab = await cabinet();
    const key = app.server.createKey(cab.user.cabinetId).key;
    await expectErrorResponse(
      await app.server.request('/api/v1/console/insurers', { headers: { 'X-API-Key': key } }),
      401,
      'not_signed_in',
    );
    await expectErrorResponse(await app.server.request('/api/v1/console/events', { headers: { 'X-API-Key': key } }), 401, 'not_signed_in');
    const forged = await app.server.request('/api/v1/console/insurers/testco/credentials', {
      method: 'PUT',
      headers: { cookie: cab.admin.cookie, 'Content-Type': 'application/json', Origin: app.server.url, 'X-CSRF-Token': 'forged' },
      body: JSON.stringify({ login: 'x', password: 'y' }),
    });
    await expectErrorResponse(forged, 403, 'invalid_csrf_token');
    const noCsrf = await app.server.request('/api/v1/console/tarifications', {
      method: 'POST',
      headers: { cookie: cab.admin.cookie, 'Content-Type': 'application/json', Origin: app.server.url },
      body: JSON.stringify(request()),
    });
    await expectErrorResponse(noCsrf, 403, 'invalid_csrf_token');
  });

  it('keeps cabinets apart: jobs, artifacts, PDFs, answers and the live feed', async () => {
    const a = await cabinet();
    const b = await cabinet();
    const feedB = await openFeed(b.admin);
    await feedB.ready();
    const id = await enqueue(a.admin);
    const done = await untilJob(a.admin, id, (j) => j.status === 'completed');
    await expectErrorResponse(await b.admin.request(`/api/v1/console/jobs/${id}`), 404, 'not_found');
    await expectErrorResponse(await b.admin.request(`/api/v1/console/jobs/${id}/cancel`, { method: 'POST' }), 404, 'not_found');
    await expectErrorResponse(
      await b.admin.request(`/api/v1/console/jobs/${id}/mfa`, { method: 'POST', json: { code: '1' } }),
      404,
      'not_found',
    );
    await expectErrorResponse(await b.admin.request(`/api/v1/console/devis/${done.devis_id}/pdf`), 404, 'not_found');
    await expectErrorResponse(await b.admin.request(`/api/v1/console/jobs/${id}/artifacts/screenshot.png`), 404, 'not_found');
    const listB = consoleJobPageSchema.parse(await json(await b.admin.request('/api/v1/console/jobs')));
    expect(listB.data).toEqual([]);
    // B's feed said nothing about A's job.
    await new Promise((r) => setTimeout(r, 100));
    expect(feedB.jobs().map((j) => j.job_id)).not.toContain(id);
    await feedB.close();
  });
});

describe('console pricing and jobs', () => {
  it('dry run: cost, quota, balance, missing and invalid fields; nothing created', async () => {
    const cab = await cabinet(25);
    const res = await cab.admin.request('/api/v1/console/tarifications', {
      method: 'POST',
      json: { compagnie: 'testco', produit: 'auto', dry_run: true, dicData: { postcode: '6900' } },
    });
    expect(res.status).toBe(200);
    const dry = consoleDryRunSchema.parse(await json(res));
    expect(dry).toMatchObject({
      status: 'dry_run_ok',
      balance: 25,
      validation: {
        schema_ok: false,
        missing_required_fields: ['birth_date'],
        credentials_configured: true,
        would_cost_credits: 10,
        quota: { limit: 1000, remaining: 1000 },
      },
    });
    expect(dry.invalid_fields.map((f) => f.field)).toEqual(['postcode']);
    expect(consoleJobPageSchema.parse(await json(await cab.admin.request('/api/v1/console/jobs'))).count).toBe(0);
    // A real enqueue with the same problems is a 400 naming the fields.
    const bad = await cab.admin.request('/api/v1/console/tarifications', {
      method: 'POST',
      json: { compagnie: 'testco', produit: 'auto', dicData: { postcode: '6900' } },
    });
    expect(bad.status).toBe(400);
    const body = errorBodySchema.parse(await json(bad));
    expect(JSON.stringify(body.details)).toContain('body.dicData.birth_date');
  });

  it('the product schema and the product list, as REST gives them', async () => {
    const cab = await cabinet(0, false);
    const res = await cab.admin.request('/api/v1/console/products/auto/schema?compagnie=testco');
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ produit: 'auto', compagnie: 'testco', cost_credits: 10, required: ['postcode', 'birth_date'] });
    await expectErrorResponse(await cab.admin.request('/api/v1/console/products/auto/schema?compagnie=nope'), 404, 'unknown_insurer');
    const products = (await json(await cab.admin.request('/api/v1/console/products'))) as { data: { code: string }[] };
    expect(products.data.map((p) => p.code)).toEqual(expect.arrayContaining(['auto', 'mrh', 'attestation']));
  });

  it('prices through the worker, filters by status and date, serves the PDF as an attachment', async () => {
    const cab = await cabinet();
    const id = await enqueue(cab.admin);
    const job = await untilJob(cab.admin, id, (j) => j.status === 'completed');
    expect(job).toMatchObject({ environment: 'prod', credits_consumed: 10, result: { tarif_eur: 432.1 }, progress: { percent: 100 } });

    const pdf = await cab.admin.request(`/api/v1/console/devis/${job.devis_id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    // No client and no insured_name: the product and the day name it (devisPdfFileName).
    expect(pdf.headers.get('content-disposition')).toMatch(/^attachment; filename="Devis_Assurance-auto_\d{4}-\d{2}-\d{2}\.pdf"$/);
    expect(Buffer.from(await pdf.arrayBuffer()).equals(TEST_PDF)).toBe(true);

    const list = async (query: string) =>
      consoleJobPageSchema.parse(await json(await cab.admin.request(`/api/v1/console/jobs${query}`))).data.map((j) => j.job_id);
    expect(await list('')).toEqual([id]);
    expect(await list('?status=completed')).toEqual([id]);
    expect(await list('?status=failed')).toEqual([]);
    const today = job.created_at.slice(0, 10);
    const tomorrow = new Date(Date.parse(job.created_at) + 86_400_000).toISOString().slice(0, 10);
    expect(await list(`?from=${today}&to=${today}`)).toEqual([id]);
    expect(await list(`?from=${tomorrow}`)).toEqual([]);
    expect(await list(`?to=${encodeURIComponent(job.created_at)}`)).toEqual([]);
    expect(await list(`?from=${encodeURIComponent(job.created_at)}`)).toEqual([id]);
    await expectErrorResponse(await cab.admin.request('/api/v1/console/jobs?from=yesterday'), 400, 'validation_error');
    await expectErrorResponse(await cab.admin.request('/api/v1/console/jobs?status=done'), 400, 'validation_error');
  });

  it('paginates with a cursor bound to the filters', async () => {
    const cab = await cabinet(100);
    const ids = [await enqueue(cab.admin), await enqueue(cab.admin), await enqueue(cab.admin)];
    for (const id of ids) await untilJob(cab.admin, id, (j) => j.status === 'completed');
    const first = consoleJobPageSchema.parse(await json(await cab.admin.request('/api/v1/console/jobs?limit=2')));
    expect(first).toMatchObject({ count: 2, has_more: true });
    const second = consoleJobPageSchema.parse(
      await json(await cab.admin.request(`/api/v1/console/jobs?limit=2&cursor=${first.next_cursor}`)),
    );
    expect([...first.data, ...second.data].map((j) => j.job_id).sort()).toEqual([...ids].sort());
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs?limit=2&status=completed&cursor=${first.next_cursor}`),
      400,
      'invalid_cursor',
    );
  });
});

describe('the live feed (Server-Sent Events)', () => {
  it('streams the cabinet’s job changes: snapshot on connect, progress, completion; and closes cleanly', async () => {
    const cab = await cabinet();
    const gate = gated();
    insurer.queue(gate.script);
    const id = await enqueue(cab.admin);
    await gate.entered;

    const feed = await openFeed(cab.admin);
    expect(feed.response.status).toBe(200);
    expect(feed.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(feed.response.headers.get('cache-control')).toBe('no-store');
    expect(feed.response.headers.get('x-request-id')).toBeTruthy();
    // On connect: retry, then the unfinished jobs, then ready.
    const ready = await feed.ready();
    expect(ready.unfinished).toEqual([id]);
    expect(feed.raw[0]).toBe('retry: 3000');
    expect(feed.jobs()[0]).toMatchObject({ job_id: id, status: 'running', progress: { step: 'on the pricing form', percent: 40 } });

    gate.open();
    const done = await feed.job((j) => j.job_id === id && j.status === 'completed');
    expect(done).toMatchObject({ progress: { percent: 100 }, result: { tarif_eur: 100 }, credits_consumed: 10 });

    // A new job: pending, running with progress, completed, in order.
    const second = await enqueue(cab.admin);
    await feed.job((j) => j.job_id === second && j.status === 'completed');
    const seen = feed.jobs().filter((j) => j.job_id === second);
    expect(seen[0]?.status).toBe('pending');
    expect(seen.at(-1)?.status).toBe('completed');
    const percents = seen.map((j) => j.progress.percent);
    expect([...percents].sort((x, y) => x - y)).toEqual(percents);

    const before = app.server.logs.length;
    await feed.close();
    // The server noticed the disconnect: the request's log line is written, with its status.
    const deadline = Date.now() + 5_000;
    let line: { url?: string; status?: number } | undefined;
    while (!line && Date.now() < deadline) {
      line = app.server.logs
        .slice(before)
        .map((l) => JSON.parse(l) as { msg: string; url?: string; status?: number })
        .find((l) => l.msg === 'request' && l.url === '/api/v1/console/events');
      if (!line) await new Promise((r) => setTimeout(r, 20));
    }
    expect(line).toMatchObject({ status: 200 });
  });

  it('MFA through the console: prompt data on the feed, seen, answered, resumed; 409 once answered', async () => {
    const cab = await cabinet();
    const feed = await openFeed(cab.admin);
    await feed.ready();
    insurer.queue(withMfa('Un code à 6 chiffres a été envoyé au 06 •• •• •• 42.'));
    const id = await enqueue(cab.admin);
    const waiting = await feed.job((j) => j.job_id === id && j.status === 'mfa_required');
    expect(waiting.mfa).toMatchObject({ challenge: 'Un code à 6 chiffres a été envoyé au 06 •• •• •• 42.' });

    // A console showed it: awaiting_mfa, on every feed.
    const seen = await cab.admin.request(`/api/v1/console/jobs/${id}/mfa/seen`, { method: 'POST' });
    expect(jobSchema.parse(await json(seen)).status).toBe('awaiting_mfa');
    await feed.job((j) => j.job_id === id && j.status === 'awaiting_mfa');

    const answered = await cab.admin.request(`/api/v1/console/jobs/${id}/mfa`, { method: 'POST', json: { code: '271' } });
    expect(answered.status).toBe(200);
    expect(jobSchema.parse(await json(answered)).mfa).toBeNull();
    const done = await feed.job((j) => j.job_id === id && j.status === 'completed');
    expect(done.result?.tarif_eur).toBe(271);
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${id}/mfa`, { method: 'POST', json: { code: '272' } }),
      409,
      'job_not_awaiting_mfa',
    );
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${id}/mfa`, { method: 'POST', json: { code: ' ' } }),
      400,
      'validation_error',
    );
    await feed.close();
  });

  it('cancel from the console: refunded, the robot aborted, the feed says so', async () => {
    const cab = await cabinet(10);
    const feed = await openFeed(cab.admin);
    await feed.ready();
    const gate = gated();
    insurer.queue(gate.script);
    const id = await enqueue(cab.admin);
    await gate.entered;
    const res = await cab.admin.request(`/api/v1/console/jobs/${id}/cancel`, { method: 'POST' });
    expect(jobSchema.parse(await json(res))).toMatchObject({ status: 'cancelled', credits_consumed: 0 });
    await feed.job((j) => j.job_id === id && j.status === 'cancelled');
    await expectErrorResponse(
      await cab.admin.request(`/api/v1/console/jobs/${'0'.repeat(8)}-0000-4000-8000-000000000000/cancel`, { method: 'POST' }),
      404,
      'not_found',
    );
    await feed.close();
  });

  it('a signed-out session cannot open the feed again', async () => {
    const cab = await cabinet();
    const feed = await openFeed(cab.admin);
    await feed.ready();
    const head = await cab.admin.request('/api/v1/console/events', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const out = await cab.admin.request('/api/v1/console/session', { method: 'DELETE' });
    expect(out.status).toBe(204);
    // The next connection is refused at once.
    await expectErrorResponse(await cab.admin.request('/api/v1/console/events'), 401, 'not_signed_in');
    await feed.close();
  });
});

describe('test login (the robot’s login step in a real browser)', () => {
  it('409 without credentials; not_supported for a robot without a login check', async () => {
    const cab = await cabinet(0, false);
    await expectErrorResponse(
      await cab.admin.request('/api/v1/console/insurers/sandbox/test-login', { method: 'POST' }),
      409,
      'insurer_credentials_missing',
    );
    setInsurerCredentials(app.server.deps, cab.user.cabinetId, 'testco', { login: 'x', password: 'y' });
    const res = await cab.admin.request('/api/v1/console/insurers/testco/test-login', { method: 'POST' });
    expect(testLoginResultSchema.parse(await json(res))).toMatchObject({ ok: false, code: 'not_supported' });
  });

  it(
    'on the sandbox portal: demo OK, a wrong password invalid_credentials, demo-mfa OK with a code asked',
    { tags: ['browser'] },
    async () => {
      const cab = await cabinet(0, false);
      const test = async () => {
        const res = await cab.admin.request('/api/v1/console/insurers/sandbox/test-login', { method: 'POST' });
        expect(res.status).toBe(200);
        return testLoginResultSchema.parse(await json(res));
      };
      const put = (login: string, password: string) =>
        cab.admin.request('/api/v1/console/insurers/sandbox/credentials', { method: 'PUT', json: { login, password } });
      expect((await put('demo', 'demo')).status).toBe(200);
      expect(await test()).toEqual({ ok: true, mfa_required: false });
      expect((await put('demo', 'wrong')).status).toBe(200);
      expect(await test()).toMatchObject({ ok: false, code: 'invalid_credentials' });
      expect((await put('demo-mfa', 'demo')).status).toBe(200);
      expect(await test()).toEqual({ ok: true, mfa_required: true });
    },
  );
});
