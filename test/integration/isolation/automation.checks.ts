/**
 * Pricing (tag Pricing, server/automation): the products, tarification jobs, MFA, artifacts, the wallet and the quota.
 * One check per operationId, run by automation.test.ts; test/helpers/isolation.ts holds the two cabinets.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  answerMfa,
  automationStatusSchema,
  cancelJob,
  dryRunResultSchema,
  enqueuedSchema,
  enqueueTarification,
  getAutomationStatus,
  getJob,
  getJobArtifact,
  getMfaImage,
  jobSchema,
  listJobs,
  pollUrl,
  type AutomationStatus,
  type Job,
} from '../../../shared/automation.js';
import { getProductSchema, listProducts, productListSchema, productSchemaDocument } from '../../../shared/products.js';
import {
  comparisonDryRunSchema,
  comparisonEnqueuedSchema,
  comparisonSchema,
  conseilSchema,
  createComparison,
  createConseil,
  getComparison,
  getConseilPdf,
  getRiskSchema,
  listComparisons,
  listConseils,
  riskSchemaDocument,
} from '../../../shared/comparaisons.js';
import { RISK_EXAMPLES } from '@courtier/adapter-kit';
import { getWallet, walletSchema, type Wallet } from '../../../shared/wallet.js';
import { listClients } from '../../../shared/crm-endpoints.js';
import { getDevis } from '../../../shared/devis.js';
import { errorBodySchema } from '../../../shared/errors.js';
import { recordArtifacts } from '../../../server/automation/artifacts.js';
import { acknowledgeMfaPrompt } from '../../../server/automation/job-controls.js';
import { findJob } from '../../../server/automation/store.js';
import { setInsurerCredentials } from '../../../server/credentials/service.js';
import { listEvents } from '../../../server/events/service.js';
import { grantCredits } from '../../../server/wallet/service.js';
import { expectError } from '../../helpers/api.js';
import { gated, succeed, withMfa, type Script } from '../../helpers/test-insurer.js';
import {
  A,
  aExtra,
  aIds,
  aWebhookRows,
  B,
  cabinetA,
  cabinetB,
  cabinetRowCounts,
  call,
  clock,
  count,
  drain,
  enqueueAs,
  expectNotFoundForB,
  insurer,
  keyA,
  keyB,
  listAs,
  LOGINS,
  otherInsurer,
  QUOTA_PER_HOUR,
  robots,
  row,
  server,
  tarification,
  withAndWithoutIdempotencyKey,
  type IsolationCheck,
  type Result,
} from '../../helpers/isolation.js';

async function jobAs(key: string, id: string): Promise<Job> {
  const res = await call(key, getJob, { params: { job_id: id } });
  expect(res.status, res.text).toBe(200);
  return jobSchema.strict().parse(res.body);
}

type JobPage = { data: Job[]; next_cursor: string | null; has_more: boolean; count: number };

async function jobsAs(key: string, query: Record<string, string> = {}): Promise<JobPage> {
  const res = await call(key, listJobs, { query });
  expect(res.status, res.text).toBe(200);
  const page = res.body as JobPage;
  return { ...page, data: page.data.map((j) => jobSchema.strict().parse(j)) };
}

async function walletAs(key: string): Promise<Wallet> {
  const res = await call(key, getWallet);
  expect(res.status, res.text).toBe(200);
  return walletSchema.strict().parse(res.body);
}

async function statusAs(key: string): Promise<AutomationStatus> {
  const res = await call(key, getAutomationStatus);
  expect(res.status, res.text).toBe(200);
  return automationStatusSchema.strict().parse(res.body);
}

async function dryRunAs(key: string, body: Record<string, unknown>) {
  const res = await call(key, enqueueTarification, { body: { ...body, dry_run: true } });
  expect(res.status, res.text).toBe(200);
  return dryRunResultSchema.strict().parse(res.body);
}

/** Waits (bounded; on SQLite, not to spend the keys' rate limit) until the worker has moved a job to a status. */
async function untilStatus(id: string, status: Job['status']): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (row('jobs', id)?.status === status) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`job ${id} never reached ${status}; it is ${String(row('jobs', id)?.status)}`);
}

/** A job's row, without the lease the worker keeps renewing while its robot runs. */
function jobState(id: string): Record<string, unknown> {
  const state = { ...row('jobs', id) };
  delete state.lease_until;
  return state;
}

function jobIdsOf(cabinetId: string): string[] {
  return (server.deps.db.sqlite.prepare('SELECT id FROM jobs WHERE cabinet_id = ?').all(cabinetId) as { id: string }[]).map((r) => r.id);
}

type LedgerRow = { id: number; cabinet_id: string; kind: string; amount: number; job_id: string | null; note: string | null };

function ledgerRows(cabinetId: string): LedgerRow[] {
  return server.deps.db.sqlite.prepare('SELECT * FROM wallet_ledger WHERE cabinet_id = ? ORDER BY id').all(cabinetId) as LedgerRow[];
}

/** Notes a job of A's, and the quote it prices, among A's ids. */
function ownA(jobId: string): string {
  const devisId = row('jobs', jobId)?.devis_id;
  expect(row('jobs', jobId)?.cabinet_id).toBe(cabinetA);
  aExtra.push(jobId, String(devisId));
  return jobId;
}

/** Every job of a page B received is B's, as is the quote it prices, per the database; none is A's. */
function expectOnlyBJobs(jobs: Job[]): void {
  const aJobs = new Set(jobIdsOf(cabinetA));
  for (const job of jobs) {
    expect(aJobs.has(job.job_id)).toBe(false);
    expect(aIds()).not.toContain(job.devis_id);
    expect(row('jobs', job.job_id)?.cabinet_id).toBe(cabinetB);
    expect(row('devis', job.devis_id)?.cabinet_id).toBe(cabinetB);
  }
}

/** A script that notes the credentials the robot was given, then prices. */
function noting(into: { login: string; password: string }[], then: Script = succeed()): Script {
  return async (ctx, input) => {
    const { login, password } = ctx.credentials();
    into.push({ login, password });
    return then(ctx, input);
  };
}

/** An error answer with the given ids blanked: B's answer for A's id must equal its answer for an id nobody has. */
function errorShape(res: Result, ...ids: string[]) {
  const body = errorBodySchema.parse(res.body);
  const blank = (text: string) => ids.reduce((t, id) => t.replaceAll(id, '<id>'), text);
  return { status: res.status, error: body.error, message: blank(body.message), details: blank(JSON.stringify(body.details ?? null)) };
}

/** Every robot run so far logged in with the portal login of the cabinet whose job it ran (runs matched to jobs by dicData). */
function expectOwnLogins(): void {
  for (const [code, adapter] of [
    ['testco', insurer],
    ['otherco', otherInsurer],
  ] as const) {
    const jobsRun = server.deps.db.sqlite
      .prepare('SELECT cabinet_id, dic_data FROM jobs WHERE compagnie = ? AND attempts > 0')
      .all(code) as {
      cabinet_id: string;
      dic_data: string;
    }[];
    const expected = jobsRun.map((j) => `${j.dic_data} ${(j.cabinet_id === cabinetA ? LOGINS.A : LOGINS.B)[code].login}`).sort();
    expect(adapter.runs.map((r) => `${JSON.stringify(r.dicData)} ${r.login}`).sort()).toEqual(expected);
  }
}

export const AUTOMATION_CHECKS: Record<string, IsolationCheck> = {
  [listProducts.operationId]: {
    title: 'the catalogue is the same for A and B, and says nothing of either cabinet (nor of their credentials)',
    async run() {
      const a = await call(keyA.key, listProducts);
      const b = await call(keyB.key, listProducts);
      expect(a.status, a.text).toBe(200);
      expect(b.status, b.text).toBe(200);
      expect(b.text).toBe(a.text);
      const catalogue = productListSchema.strict().parse(b.body);
      expect(catalogue.data.map((p) => [p.code, p.insurers.map((i) => i.code)])).toEqual([
        ['auto', ['testco', 'otherco']],
        ['attestation', ['testco', 'otherco']],
      ]);
      for (const secret of [cabinetA, cabinetB, LOGINS.A.testco.login, LOGINS.A.otherco.login, LOGINS.B.testco.login])
        expect(b.text).not.toContain(secret);
    },
  },

  [getProductSchema.operationId]: {
    title: 'a product schema is the same for A and B, at an insurer only A has credentials for too; unknowns are refused alike',
    async run() {
      for (const [code, compagnie] of [
        ['auto', 'testco'],
        ['attestation', 'testco'],
        ['auto', 'otherco'],
      ] as const) {
        const a = await call(keyA.key, getProductSchema, { params: { code }, query: { compagnie } });
        const b = await call(keyB.key, getProductSchema, { params: { code }, query: { compagnie } });
        expect(a.status, a.text).toBe(200);
        expect(b.status, b.text).toBe(200);
        expect(b.text).toBe(a.text);
        expect(productSchemaDocument.strict().parse(b.body)).toMatchObject({ produit: code, compagnie });
        for (const secret of [cabinetA, cabinetB, LOGINS.A.otherco.login]) expect(b.text).not.toContain(secret);
      }
      for (const [code, compagnie, error] of [
        ['moto', 'testco', 'unknown_product'],
        ['auto', 'nobody', 'unknown_insurer'],
      ] as const) {
        const a = await call(keyA.key, getProductSchema, { params: { code }, query: { compagnie } });
        const b = await call(keyB.key, getProductSchema, { params: { code }, query: { compagnie } });
        expectError(b, 404, error);
        expect(errorShape(b)).toEqual(errorShape(a));
      }
    },
  },

  [getRiskSchema.operationId]: {
    title: 'a line’s common risk model is the same for A and B; an unknown line is refused alike',
    async run() {
      for (const ligne of ['auto', 'mrh'] as const) {
        const a = await call(keyA.key, getRiskSchema, { params: { ligne } });
        const b = await call(keyB.key, getRiskSchema, { params: { ligne } });
        expect(a.status, a.text).toBe(200);
        expect(b.text).toBe(a.text);
        expect(riskSchemaDocument.strict().parse(b.body)).toMatchObject({ ligne });
        for (const secret of [cabinetA, cabinetB, LOGINS.A.otherco.login]) expect(b.text).not.toContain(secret);
      }
      const a = await call(keyA.key, getRiskSchema, { params: { ligne: 'moto' } });
      const b = await call(keyB.key, getRiskSchema, { params: { ligne: 'moto' } });
      expectError(b, 404, 'unknown_line');
      expect(errorShape(b)).toEqual(errorShape(a));
    },
  },

  [createComparison.operationId]: {
    title: "a comparison asks only the insurers the cabinet has logins for; B's naming A's client is 400 and enqueues or debits nothing",
    async run() {
      await robots().idle();
      await drain();
      const risque = { ...RISK_EXAMPLES.auto, usage: { ...RISK_EXAMPLES.auto.usage, code_postal: '13001' } };
      // A has logins for both test insurers, B for testco only: B's comparison leaves otherco out.
      const dryA = comparisonDryRunSchema
        .strict()
        .parse((await call(keyA.key, createComparison, { body: { ligne: 'auto', risque, dry_run: true } })).body);
      const dryB = comparisonDryRunSchema
        .strict()
        .parse((await call(keyB.key, createComparison, { body: { ligne: 'auto', risque, dry_run: true } })).body);
      expect(dryA.compagnies.map((c) => [c.compagnie, c.would_run])).toEqual([
        ['testco', true],
        ['otherco', true],
      ]);
      expect(dryB.compagnies.map((c) => [c.compagnie, c.would_run, c.raison])).toEqual([
        ['testco', true, null],
        ['otherco', false, 'insurer_credentials_missing'],
      ]);
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const walletBefore = await walletAs(keyB.key);
      const refused = await call(keyB.key, createComparison, { body: { ligne: 'auto', risque, client_id: A.personClient } });
      expectError(refused, 400, 'validation_error');
      expect(refused.text).not.toContain(cabinetA);
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);
      expect((await walletAs(keyB.key)).balance).toBe(walletBefore.balance);
      // B's own comparison: one job, on B's login, in B's cabinet.
      const created = await call(keyB.key, createComparison, { body: { ligne: 'auto', risque } });
      expect(created.status, created.text).toBe(202);
      const enqueued = comparisonEnqueuedSchema.strict().parse(created.body);
      expect(enqueued.jobs.map((j) => j.compagnie)).toEqual(['testco']);
      expect(row('jobs', enqueued.jobs[0]!.job_id)?.cabinet_id).toBe(cabinetB);
      await robots().idle();
      await drain();
    },
  },

  [getComparison.operationId]: {
    title: "A's comparison is 404 for B, like an id that does not exist",
    async run() {
      await robots().idle();
      const created = await call(keyA.key, createComparison, {
        // testco only: the otherco check counts that robot's runs.
        body: {
          ligne: 'auto',
          compagnies: ['testco'],
          risque: { ...RISK_EXAMPLES.auto, usage: { ...RISK_EXAMPLES.auto.usage, code_postal: '13002' } },
        },
      });
      expect(created.status, created.text).toBe(202);
      const id = comparisonEnqueuedSchema.parse(created.body).comparaison_id;
      aExtra.push(id);
      await robots().idle();
      await drain();
      expect(
        comparisonSchema.strict().parse((await call(keyA.key, getComparison, { params: { comparaison_id: id } })).body).comparaison_id,
      ).toBe(id);
      await expectNotFoundForB(getComparison, 'comparaison_id', [id]);
      expectError(await call(keyB.key, getComparison, { params: { comparaison_id: randomUUID() } }), 404, 'not_found');
    },
  },

  [listComparisons.operationId]: {
    title: "B's list holds B's comparisons only, also filtered by A's client",
    async run() {
      const idsOf = async (key: string) => {
        const listed = await call(key, listComparisons);
        expect(listed.status, listed.text).toBe(200);
        return (listed.body as { data: { comparaison_id: string }[] }).data.map((c) => c.comparaison_id);
      };
      if ((await idsOf(keyA.key)).length === 0) {
        await robots().idle();
        const risque = { ...RISK_EXAMPLES.auto, usage: { ...RISK_EXAMPLES.auto.usage, code_postal: '13003' } };
        expect((await call(keyA.key, createComparison, { body: { ligne: 'auto', compagnies: ['testco'], risque } })).status).toBe(202);
        await robots().idle();
        await drain();
      }
      const ofA = await idsOf(keyA.key);
      expect(ofA.length).toBeGreaterThan(0);
      expect((await idsOf(keyB.key)).filter((id) => ofA.includes(id))).toEqual([]);
      const byClient = await call(keyB.key, listComparisons, { query: { client_id: A.personClient } });
      expect((byClient.body as { data: unknown[] }).data).toEqual([]);
    },
  },

  [createConseil.operationId]: {
    title: "B's advice document on A's comparison is 404 not_found and keeps nothing; A's own is A's",
    async run() {
      await robots().idle();
      const risque = { ...RISK_EXAMPLES.auto, usage: { ...RISK_EXAMPLES.auto.usage, code_postal: '13004' } };
      const created = await call(keyA.key, createComparison, {
        body: { ligne: 'auto', compagnies: ['testco'], risque, client_id: A.personClient },
      });
      expect(created.status, created.text).toBe(202);
      const comparaison_id = comparisonEnqueuedSchema.parse(created.body).comparaison_id;
      await robots().idle();
      await drain();
      const advice = { compagnie: 'testco', motif: 'Le meilleur prix.', besoins: 'Assurer la voiture.' };
      const before = count('SELECT count(*) AS n FROM conseils');
      const refused = await call(keyB.key, createConseil, { params: { comparaison_id }, body: advice });
      expectError(refused, 404, 'not_found');
      expect(refused.text).not.toContain(cabinetA);
      expect(count('SELECT count(*) AS n FROM conseils')).toBe(before);
      const mine = await call(keyA.key, createConseil, { params: { comparaison_id }, body: advice });
      expect(mine.status, mine.text).toBe(201);
      const conseil = conseilSchema.strict().parse(mine.body);
      aExtra.push(conseil.conseil_id);
      expect(row('conseils', conseil.conseil_id)?.cabinet_id).toBe(cabinetA);
    },
  },

  [getConseilPdf.operationId]: {
    title: "A's advice PDF is 404 for B, like an id that does not exist, and none of its bytes are served",
    async run() {
      const listed = await call(keyA.key, listConseils);
      const ids = (listed.body as { data: { conseil_id: string }[] }).data.map((c) => c.conseil_id);
      if (ids.length === 0) return expect.fail('the createConseil check makes A an advice document first');
      await expectNotFoundForB(getConseilPdf, 'conseil_id', ids);
      expectError(await call(keyB.key, getConseilPdf, { params: { conseil_id: randomUUID() } }), 404, 'not_found');
    },
  },

  [listConseils.operationId]: {
    title: "B's list of advice documents holds B's only, also filtered by A's client",
    async run() {
      const ofB = await call(keyB.key, listConseils);
      expect(ofB.status, ofB.text).toBe(200);
      expect((ofB.body as { data: unknown[] }).data).toEqual([]);
      expect(((await call(keyB.key, listConseils, { query: { client_id: A.personClient } })).body as { data: unknown[] }).data).toEqual([]);
    },
  },

  [enqueueTarification.operationId]: {
    title:
      "B's enqueue with A's webhook, quote or client is 400 validation_error and debits or creates nothing; the replay guard, Idempotency-Key and insurer credentials are per cabinet",
    async run() {
      await robots().idle();
      await drain();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const aRowsBefore = [row('devis', A.pricingDraft), row('devis', A.draftDevis), row('clients', A.personClient), ...aWebhookRows()];
      const bWalletBefore = await walletAs(keyB.key);
      const nobody = randomUUID();

      // 1. A's ids are refused exactly as ids nobody has, before anything is debited. A.pricingDraft is
      // a draft at testco/auto: were it found, the enqueue would price it.
      const references: { field: string; ids: string[] }[] = [
        { field: 'callback_webhook_id', ids: [A.webhook, A.pausedWebhook] },
        { field: 'devis_id', ids: [A.pricingDraft, A.draftDevis] },
        { field: 'client_id', ids: [A.personClient, A.companyClient] },
      ];
      for (const { field, ids } of references) {
        const unknown = await call(keyB.key, enqueueTarification, { body: tarification({ [field]: nobody }) });
        expectError(unknown, 400, 'validation_error');
        for (const id of ids) {
          for (const headers of withAndWithoutIdempotencyKey()) {
            const res = await call(keyB.key, enqueueTarification, { body: tarification({ [field]: id }), headers });
            const error = expectError(res, 400, 'validation_error');
            expect(error.details).toEqual([{ path: `body.${field}`, message: expect.stringContaining('in this cabinet') as string }]);
            expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
            expect(res.text).not.toContain(cabinetA);
          }
        }
        // Nor does a dry run tell A's ids from ids nobody has.
        const body = tarification();
        expect(await dryRunAs(keyB.key, { ...body, [field]: ids[0] })).toEqual(await dryRunAs(keyB.key, { ...body, [field]: nobody }));
      }
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore); // no job, ledger entry, quote, event or idempotency claim
      expect(await walletAs(keyB.key)).toEqual(bWalletBefore);
      expect([row('devis', A.pricingDraft), row('devis', A.draftDevis), row('clients', A.personClient), ...aWebhookRows()]).toEqual(
        aRowsBefore,
      );
      expect(row('devis', A.pricingDraft)).toMatchObject({ status: 'draft', job_id: null });
      expect(
        count(
          'SELECT count(*) AS n FROM jobs WHERE callback_webhook_id IN (?, ?) OR devis_id IN (?, ?)',
          A.webhook,
          A.pausedWebhook,
          A.pricingDraft,
          A.draftDevis,
        ),
      ).toBe(0);

      // The same references by their owner work (the route works; only the cabinet differs).
      const bOwn = await enqueueAs(keyB.key, tarification({ callback_webhook_id: B.webhook, client_id: B.client }));
      const aOwn = ownA(await enqueueAs(keyA.key, tarification({ devis_id: A.pricingDraft, callback_webhook_id: A.webhook })));
      await robots().idle();
      expect(row('jobs', bOwn)).toMatchObject({ cabinet_id: cabinetB, callback_webhook_id: B.webhook, status: 'completed' });
      expect(row('devis', String(row('jobs', bOwn)?.devis_id))).toMatchObject({
        cabinet_id: cabinetB,
        client_id: B.client,
        status: 'priced',
      });
      expect(row('jobs', aOwn)).toMatchObject({
        cabinet_id: cabinetA,
        devis_id: A.pricingDraft,
        callback_webhook_id: A.webhook,
        status: 'completed',
      });
      expect(row('devis', A.pricingDraft)).toMatchObject({ status: 'priced', job_id: aOwn });

      // 2. One request and one Idempotency-Key, used by A then B: two jobs, one per cabinet. The
      // replay guard then answers each cabinet with its own job.
      const body = tarification();
      const key = randomUUID();
      clock.advance(1000);
      const fromA = ownA(await enqueueAs(keyA.key, body, { 'Idempotency-Key': key }));
      const b = await call(keyB.key, enqueueTarification, { body, headers: { 'Idempotency-Key': key } });
      expect(b.status, b.text).toBe(202);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      const fromB = enqueuedSchema.strict().parse(b.body).job_id;
      expect(fromB).not.toBe(fromA);
      expect(row('jobs', fromA)?.cabinet_id).toBe(cabinetA);
      expect(row('jobs', fromB)?.cabinet_id).toBe(cabinetB);
      expect(row('jobs', fromB)?.request_hash).toBe(row('jobs', fromA)?.request_hash); // the very same request
      expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(2);
      expect(ledgerRows(cabinetB).filter((e) => e.job_id !== null && [fromA, fromB].includes(e.job_id))).toMatchObject([
        { kind: 'debit', amount: -10, job_id: fromB },
      ]);
      for (const [k, own, other] of [
        [keyA.key, fromA, fromB],
        [keyB.key, fromB, fromA],
      ] as const) {
        const replay = await call(k, enqueueTarification, { body, headers: { 'Idempotency-Key': key } });
        expect(replay.status, replay.text).toBe(200);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(enqueuedSchema.parse(replay.body).job_id).toBe(own);
        const again = await call(k, enqueueTarification, { body, headers: { 'Idempotency-Key': randomUUID() } });
        expect(expectError(again, 429, 'rpa_replay_detected').details).toEqual({
          retry_after_seconds: 600,
          job_id: own,
          job_status: expect.any(String),
        });
        expect(again.text).not.toContain(other);
      }
      await robots().idle();

      // 3. Credentials are per cabinet: A's otherco login does not let B enqueue at otherco...
      const atOtherco = () => tarification({ compagnie: 'otherco' });
      const bBefore = [cabinetRowCounts(cabinetB), await walletAs(keyB.key)];
      for (const headers of withAndWithoutIdempotencyKey()) {
        const res = await call(keyB.key, enqueueTarification, { body: atOtherco(), headers });
        expectError(res, 409, 'insurer_credentials_missing');
        expect(res.text).not.toContain(LOGINS.A.otherco.login);
      }
      expect((await dryRunAs(keyB.key, atOtherco())).validation.credentials_configured).toBe(false);
      expect((await dryRunAs(keyA.key, atOtherco())).validation.credentials_configured).toBe(true);
      expect([cabinetRowCounts(cabinetB), await walletAs(keyB.key)]).toEqual(bBefore);
      expect(otherInsurer.runs).toHaveLength(0);
      // ...and once B has its own, B's robot gets B's login and password, and A's gets A's.
      setInsurerCredentials(server.deps, cabinetB, 'otherco', LOGINS.B.otherco);
      const seen: { login: string; password: string }[] = [];
      otherInsurer.queue(noting(seen), noting(seen));
      const bOther = await enqueueAs(keyB.key, atOtherco());
      await robots().idle();
      const aOther = ownA(await enqueueAs(keyA.key, atOtherco()));
      await robots().idle();
      expect(seen).toEqual([LOGINS.B.otherco, LOGINS.A.otherco]);
      expect(otherInsurer.runs.map((r) => r.login)).toEqual([LOGINS.B.otherco.login, LOGINS.A.otherco.login]);
      expect([row('jobs', bOther)?.status, row('jobs', aOther)?.status]).toEqual(['completed', 'completed']);
      expectOwnLogins();
      await drain();
    },
  },

  [getJob.operationId]: {
    title: "B's GET of A's job (completed or refused) is 404 not_found, never 403, and says no more than for an unknown id",
    async run() {
      expect(await jobAs(keyA.key, A.job)).toMatchObject({ status: 'completed', credits_consumed: 10, result: { tarif_eur: 612.4 } });
      expect(await jobAs(keyA.key, A.failedJob)).toMatchObject({ status: 'failed', error: { code: 'risk_declined' } });
      await expectNotFoundForB(getJob, 'job_id', [A.job, A.failedJob]);
      const nobody = randomUUID();
      const unknown = await call(keyB.key, getJob, { params: { job_id: nobody } });
      for (const id of [A.job, A.failedJob]) {
        const res = await call(keyB.key, getJob, { params: { job_id: id } });
        expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
        expect(res.text).not.toContain(A.jobDevis);
      }
      // B's own job is B's, and A cannot read it either; the quote A's job priced stays A's.
      const own = await jobAs(keyB.key, B.job);
      expect(own).toMatchObject({ job_id: B.job, status: 'completed', result: { tarif_eur: 42 } });
      expect(row('devis', own.devis_id)?.cabinet_id).toBe(cabinetB);
      expectError(await call(keyA.key, getJob, { params: { job_id: B.job } }), 404, 'not_found');
      expectError(await call(keyB.key, getDevis, { params: { devis_id: A.jobDevis } }), 404, 'not_found');
    },
  },

  [listJobs.operationId]: {
    title: "B's job lists never hold A's jobs, whatever the filters, page by page; A's cursors are invalid_cursor for B",
    async run() {
      const aJobs = jobIdsOf(cabinetA);
      expect(aJobs.length).toBeGreaterThanOrEqual(5);
      const all = await jobsAs(keyB.key, { limit: '100' });
      expect(all.data.map((j) => j.job_id)).toContain(B.job);
      expect(all.data.map((j) => j.job_id).sort()).toEqual(jobIdsOf(cabinetB).sort());
      expectOnlyBJobs(all.data);
      const filters: Record<string, string>[] = [
        { status: 'completed' },
        { status: 'failed' },
        { status: 'pending' },
        { status: 'cancelled' },
        { limit: '1' },
        { status: 'completed', limit: '1' },
        { created_after: '2000-01-01T00:00:00Z' },
      ];
      for (const query of filters) expectOnlyBJobs((await jobsAs(keyB.key, query)).data);
      // Only A has a refused job: B's failed filter is empty, not A's.
      expect(await jobsAs(keyB.key, { status: 'failed' })).toEqual({ data: [], next_cursor: null, has_more: false, count: 0 });
      // Walking B's pages one by one never reaches A's jobs.
      let cursor: string | null = null;
      let seen = 0;
      do {
        const page: JobPage = await jobsAs(keyB.key, cursor === null ? { limit: '1' } : { limit: '1', cursor });
        expectOnlyBJobs(page.data);
        seen += page.count;
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(seen).toBe(all.count);
      // A's list holds A's jobs (so there was something to leak), and not B's.
      const mine = await jobsAs(keyA.key, { limit: '100' });
      expect(mine.data.map((j) => j.job_id).sort()).toEqual([...aJobs].sort());
      // A's cursors work for A and are refused for B, with the same filters or none.
      for (const query of [{}, { status: 'completed' }] as Record<string, string>[]) {
        const first = await jobsAs(keyA.key, { ...query, limit: '1' });
        expect(first.has_more).toBe(true);
        const aCursor = first.next_cursor ?? '';
        const second = await jobsAs(keyA.key, { ...query, limit: '1', cursor: aCursor });
        expect(second.count).toBe(1);
        expect(second.data[0]?.job_id).not.toBe(first.data[0]?.job_id);
        expectError(await call(keyB.key, listJobs, { query: { ...query, limit: '1', cursor: aCursor } }), 400, 'invalid_cursor');
        expectError(await call(keyB.key, listJobs, { query: { cursor: aCursor } }), 400, 'invalid_cursor');
      }
      // ...and so is a cursor of another of A's lists.
      const clientsCursor = (await listAs(keyA.key, listClients, { limit: '1' })).next_cursor ?? '';
      expect(clientsCursor).not.toBe('');
      expectError(await call(keyB.key, listJobs, { query: { cursor: clientsCursor } }), 400, 'invalid_cursor');
    },
  },

  [cancelJob.operationId]: {
    title:
      "B's cancel of A's job (running, pending or finished) is 404 not_found: nothing is aborted, cancelled or refunded, and A's cancel is never replayed to B",
    async run() {
      await robots().idle();
      const gate = gated();
      insurer.queue(gate.script);
      const running = await enqueueAs(keyA.key, tarification());
      await gate.entered;
      const robot = insurer.runs.at(-1);
      expect(robot?.login).toBe(LOGINS.A.testco.login);
      // A's login is busy, so A's next job waits.
      const pending = await enqueueAs(keyA.key, tarification());
      robots().tick();
      ownA(running);
      ownA(pending);
      expect([row('jobs', running)?.status, row('jobs', pending)?.status]).toEqual(['running', 'pending']);
      await drain();

      const ids = [running, pending, A.job, A.failedJob];
      const statesBefore = ids.map(jobState);
      const ledgerBefore = ledgerRows(cabinetA);
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const nobody = randomUUID();
      const unknown = await call(keyB.key, cancelJob, { params: { job_id: nobody } });
      expectError(unknown, 404, 'not_found');
      clock.advance(1000); // a cancel would change updated_at
      for (const id of ids) {
        for (const headers of withAndWithoutIdempotencyKey()) {
          const res = await call(keyB.key, cancelJob, { params: { job_id: id }, headers });
          // 404, not 409 job_not_cancellable for A's finished jobs: their state is not revealed either.
          expectError(res, 404, 'not_found');
          expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
        }
      }
      expect(robot?.signal.aborted).toBe(false);
      expect(ids.map(jobState)).toEqual(statesBefore);
      expect(ledgerRows(cabinetA)).toEqual(ledgerBefore); // no refund
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore);

      // A's busy login does not hold up B's jobs: B's runs meanwhile, on B's own login.
      const bJob = await enqueueAs(keyB.key, tarification());
      await untilStatus(bJob, 'completed');
      expect([row('jobs', running)?.status, row('jobs', pending)?.status]).toEqual(['running', 'pending']);

      // One Idempotency-Key: A's cancel of its pending job is A's, and B's call with it is still a 404.
      const key = randomUUID();
      const mine = await call(keyA.key, cancelJob, { params: { job_id: pending }, headers: { 'Idempotency-Key': key } });
      expect(mine.status, mine.text).toBe(200);
      expect(jobSchema.strict().parse(mine.body)).toMatchObject({ job_id: pending, status: 'cancelled', credits_consumed: 0 });
      const b = await call(keyB.key, cancelJob, { params: { job_id: pending }, headers: { 'Idempotency-Key': key } });
      expectError(b, 404, 'not_found');
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      const replayA = await call(keyA.key, cancelJob, { params: { job_id: pending }, headers: { 'Idempotency-Key': key } });
      expect(replayA.headers.get('idempotent-replayed')).toBe('true');
      expect(
        ledgerRows(cabinetA)
          .filter((e) => e.job_id === pending)
          .map((e) => e.kind),
      ).toEqual(['debit', 'refund']);
      expect(count('SELECT count(*) AS n FROM wallet_ledger WHERE cabinet_id = ? AND job_id IN (?, ?)', cabinetB, running, pending)).toBe(
        0,
      );

      // A's running robot was never aborted by B: it finishes, and A pays for it.
      gate.open();
      await robots().idle();
      expect(robot?.signal.aborted).toBe(false);
      expect(await jobAs(keyA.key, running)).toMatchObject({ status: 'completed', credits_consumed: 10, result: { tarif_eur: 100 } });
      await drain();
    },
  },

  [answerMfa.operationId]: {
    title:
      "B's code for A's job waiting for MFA is 404 not_found and never reaches A's robot, nor can B cancel it; the job stays waiting and A's own code completes it",
    async run() {
      await robots().idle();
      insurer.queue(withMfa('Code sent by SMS to A'), withMfa('Code sent by SMS to B'));
      const aJob = ownA(await enqueueAs(keyA.key, tarification()));
      await untilStatus(aJob, 'mfa_required');
      const bJob = await enqueueAs(keyB.key, tarification());
      await untilStatus(bJob, 'mfa_required');
      const runsBefore = insurer.runs.length;
      expect(insurer.runs.slice(-2).map((r) => r.login)).toEqual([LOGINS.A.testco.login, LOGINS.B.testco.login]);
      await drain();
      const countsBefore = [cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)];
      const ledgerBefore = [ledgerRows(cabinetA), ledgerRows(cabinetB)];
      const nobody = randomUUID();
      const unknown = await call(keyB.key, answerMfa, { params: { job_id: nobody }, body: { code: '999' } });
      expectError(unknown, 404, 'not_found');
      // A's finished jobs: 404, not 409 job_not_awaiting_mfa (their state is not revealed).
      for (const id of [A.job, A.failedJob]) {
        const res = await call(keyB.key, answerMfa, { params: { job_id: id }, body: { code: '999' } });
        expect(errorShape(res, id)).toEqual(errorShape(unknown, nobody));
      }

      // In both waiting states: mfa_required, then awaiting_mfa once A's broker opened the prompt.
      for (const state of ['mfa_required', 'awaiting_mfa'] as const) {
        if (state === 'awaiting_mfa') expect(acknowledgeMfaPrompt(server.deps, cabinetA, aJob).status).toBe('awaiting_mfa');
        const stateBefore = jobState(aJob);
        clock.advance(1000); // a resume or cancel would change updated_at
        for (const code of ['999', '0']) {
          for (const headers of withAndWithoutIdempotencyKey()) {
            const res = await call(keyB.key, answerMfa, { params: { job_id: aJob }, body: { code }, headers });
            // 404, not 200 nor 409 job_not_awaiting_mfa.
            expectError(res, 404, 'not_found');
            expect(errorShape(res, aJob)).toEqual(errorShape(unknown, nobody));
            expect(res.text).not.toContain('SMS to A');
          }
        }
        expectError(await call(keyB.key, cancelJob, { params: { job_id: aJob } }), 404, 'not_found');
        expectError(await call(keyB.key, getJob, { params: { job_id: aJob } }), 404, 'not_found');
        expect(jobState(aJob)).toEqual(stateBefore);
        expect(await jobAs(keyA.key, aJob)).toMatchObject({ status: state, mfa: { challenge: 'Code sent by SMS to A' } });
      }
      expect(insurer.runs).toHaveLength(runsBefore);
      expect([ledgerRows(cabinetA), ledgerRows(cabinetB)]).toEqual(ledgerBefore);
      expect([cabinetRowCounts(cabinetA), cabinetRowCounts(cabinetB)]).toEqual(countsBefore); // (acknowledging records no event)
      expect(count(`SELECT count(*) AS n FROM events WHERE cabinet_id = ? AND data LIKE '%' || ? || '%'`, cabinetB, aJob)).toBe(0);

      // Each cabinet answers its own job only: A's code for B's job is 404, B's code reaches B's robot
      // alone (A's job keeps waiting), and A's own code then reaches A's.
      expectError(await call(keyA.key, answerMfa, { params: { job_id: bJob }, body: { code: '111' } }), 404, 'not_found');
      const bAnswer = await call(keyB.key, answerMfa, { params: { job_id: bJob }, body: { code: '654' } });
      expect(bAnswer.status, bAnswer.text).toBe(200);
      await untilStatus(bJob, 'completed');
      expect(row('jobs', aJob)?.status).toBe('awaiting_mfa');
      const key = randomUUID();
      const aAnswer = await call(keyA.key, answerMfa, {
        params: { job_id: aJob },
        body: { code: '321' },
        headers: { 'Idempotency-Key': key },
      });
      expect(aAnswer.status, aAnswer.text).toBe(200);
      // A's answer is never replayed to B.
      const b = await call(keyB.key, answerMfa, { params: { job_id: aJob }, body: { code: '321' }, headers: { 'Idempotency-Key': key } });
      expectError(b, 404, 'not_found');
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      await robots().idle();
      expect(await jobAs(keyA.key, aJob)).toMatchObject({
        status: 'completed',
        result: { tarif_eur: 321 },
        mfa: null,
        credits_consumed: 10,
      });
      expect(await jobAs(keyB.key, bJob)).toMatchObject({ status: 'completed', result: { tarif_eur: 654 }, mfa: null });
      expect(
        listEvents(server.deps, cabinetB)
          .filter((e) => e.type === 'job.mfa_required')
          .map((e) => e.data.job_id),
      ).toEqual([bJob]);
      expect(
        listEvents(server.deps, cabinetA)
          .filter((e) => e.type === 'job.mfa_required')
          .map((e) => e.data.job_id),
      ).toEqual([aJob]);
      await drain();
    },
  },

  [getJobArtifact.operationId]: {
    title:
      "B's GET of the screenshot, trace or portal changes of A's failed job is 404 not_found, like an unknown job's, and serves none of A's bytes",
    async run() {
      // What a failed robot run leaves beside A's job (written here, as the robot runtime would).
      const files = {
        'screenshot.png': Buffer.from('\x89PNG A-only screenshot'),
        'trace.zip': Buffer.from('PK A-only trace'),
        'portal-changed.json': Buffer.from('{"step":"A-only step"}'),
      };
      const dir = join(server.dataDir, 'artifacts', 'jobs', A.failedJob);
      mkdirSync(dir, { recursive: true });
      for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
      const failedRow = findJob(server.deps.db.orm, cabinetA, A.failedJob);
      if (!failedRow) throw new Error('A.failedJob is missing');
      recordArtifacts(server.deps, failedRow, { screenshot: true, trace: true, portalChanges: true });
      const links = (await jobAs(keyA.key, A.failedJob)).artifacts;
      expect(links).toEqual({
        screenshot_url: `${pollUrl(A.failedJob)}/artifacts/screenshot.png`,
        trace_url: `${pollUrl(A.failedJob)}/artifacts/trace.zip`,
        portal_changes_url: `${pollUrl(A.failedJob)}/artifacts/portal-changed.json`,
      });

      const nobody = randomUUID();
      for (const [name, bytes] of Object.entries(files)) {
        // A gets its file (so there is something to leak)...
        const mine = await server.request(`${pollUrl(A.failedJob)}/artifacts/${name}`, { headers: { 'X-API-Key': keyA.key } });
        expect(mine.status).toBe(200);
        expect(Buffer.from(await mine.arrayBuffer())).toEqual(bytes);
        // ...B gets the 404 of a job that does not exist, for GET and HEAD, with none of A's bytes.
        const unknown = await call(keyB.key, getJobArtifact, { params: { job_id: nobody, name } });
        expectError(unknown, 404, 'not_found');
        const res = await call(keyB.key, getJobArtifact, { params: { job_id: A.failedJob, name } });
        expectError(res, 404, 'not_found');
        expect(errorShape(res, A.failedJob)).toEqual(errorShape(unknown, nobody));
        expect(res.headers.get('content-disposition')).toBeNull();
        expect(res.text).not.toContain('A-only');
        expect((await call(keyB.key, getJobArtifact, { params: { job_id: A.failedJob, name }, method: 'HEAD' })).status).toBe(404);
      }
      // B's own job (which has no artifacts) is a 404 of its own; A cannot reach B's job either.
      expectError(await call(keyB.key, getJobArtifact, { params: { job_id: B.job, name: 'screenshot.png' } }), 404, 'not_found');
      expectError(await call(keyA.key, getJobArtifact, { params: { job_id: B.job, name: 'screenshot.png' } }), 404, 'not_found');
    },
  },

  [getMfaImage.operationId]: {
    title: "B's GET of the captcha image of A's job is 404 not_found, like an unknown job's; A cannot reach B's either",
    async run() {
      const nobody = randomUUID();
      const unknown = await call(keyB.key, getMfaImage, { params: { job_id: nobody } });
      expectError(unknown, 404, 'not_found');
      for (const job of [A.failedJob, A.job]) {
        const res = await call(keyB.key, getMfaImage, { params: { job_id: job } });
        expectError(res, 404, 'not_found');
        expect(errorShape(res, job)).toEqual(errorShape(unknown, nobody));
      }
      expectError(await call(keyA.key, getMfaImage, { params: { job_id: B.job } }), 404, 'not_found');
    },
  },

  [getWallet.operationId]: {
    title: "each cabinet's wallet shows its own balance and ledger only: none of the other's grants, debits, refunds or job ids",
    async run() {
      await robots().idle();
      for (const [key, cabinet, other] of [
        [keyB.key, cabinetB, cabinetA],
        [keyA.key, cabinetA, cabinetB],
      ] as const) {
        const res = await call(key, getWallet);
        expect(res.status, res.text).toBe(200);
        const wallet = walletSchema.strict().parse(res.body);
        const rows = ledgerRows(cabinet);
        expect(rows.length).toBeLessThan(50);
        expect(wallet.balance).toBe(rows.reduce((total, e) => total + e.amount, 0));
        expect(wallet.ledger.map((e) => [e.id, e.kind, e.amount, e.job_id, e.note])).toEqual(
          rows.map((e) => [e.id, e.kind, e.amount, e.job_id, e.note]).reverse(),
        );
        // Every job of the cabinet was debited, on its own ledger; no job of the other's is there.
        expect(new Set(wallet.ledger.filter((e) => e.kind === 'debit').map((e) => e.job_id))).toEqual(new Set(jobIdsOf(cabinet)));
        for (const entry of wallet.ledger) {
          if (entry.job_id !== null) expect(row('jobs', entry.job_id)?.cabinet_id).toBe(cabinet);
        }
        for (const id of [other, ...jobIdsOf(other)]) expect(res.text).not.toContain(id);
      }
      expect(count('SELECT count(*) AS n FROM wallet_ledger l JOIN jobs j ON j.id = l.job_id WHERE l.cabinet_id <> j.cabinet_id')).toBe(0);
      // A grant to A moves A's balance only.
      const a = await walletAs(keyA.key);
      const b = await walletAs(keyB.key);
      expect(a.balance).not.toBe(b.balance);
      grantCredits(server.deps, cabinetA, 7, 'A-only top-up');
      expect((await walletAs(keyA.key)).balance).toBe(a.balance + 7);
      const after = await call(keyB.key, getWallet);
      expect(walletSchema.parse(after.body)).toEqual(b);
      expect(after.text).not.toContain('A-only top-up');
      expect(after.text).not.toContain('A top-up');
    },
  },

  [getAutomationStatus.operationId]: {
    title:
      "each cabinet's quota counts its own jobs: A using up its hourly quota leaves B's untouched; the install-wide state is the same for both",
    async run() {
      await robots().idle();
      const quotaOf = (cabinetId: string) => {
        const { n, oldest } = server.deps.db.sqlite
          .prepare('SELECT count(*) AS n, min(created_at) AS oldest FROM jobs WHERE cabinet_id = ? AND created_at > ?')
          .get(cabinetId, clock.now() - 3600_000) as { n: number; oldest: number | null };
        return {
          limit: QUOTA_PER_HOUR,
          remaining: Math.max(0, QUOTA_PER_HOUR - n),
          reset_at: oldest === null ? null : new Date(oldest + 3600_000).toISOString(),
        };
      };
      const a = await statusAs(keyA.key);
      const b = await statusAs(keyB.key);
      expect(a.quota).toEqual(quotaOf(cabinetA));
      expect(b.quota).toEqual(quotaOf(cabinetB));
      expect(a.quota.remaining).toBeGreaterThan(0);
      expect(b.quota.remaining).toBeGreaterThan(a.quota.remaining); // so that a shared count would show
      // Kill switch, breakers and workers are the install's: the same for both.
      expect({ ...b, quota: null }).toEqual({ ...a, quota: null });

      // A uses up its quota...
      for (let i = a.quota.remaining; i > 0; i--) ownA(await enqueueAs(keyA.key, tarification()));
      const over = await call(keyA.key, enqueueTarification, { body: tarification() });
      expect(expectError(over, 429, 'rpa_quota_exceeded').details).toEqual({ reset_at: quotaOf(cabinetA).reset_at, limit: QUOTA_PER_HOUR });
      expect((await statusAs(keyA.key)).quota).toEqual({ ...quotaOf(cabinetA), remaining: 0 });
      expect((await dryRunAs(keyA.key, tarification())).validation.quota).toEqual({ remaining: 0, limit: QUOTA_PER_HOUR });
      // ...and B's is untouched: its status, its dry run, and B's enqueue still passes.
      expect((await statusAs(keyB.key)).quota).toEqual(b.quota);
      expect((await dryRunAs(keyB.key, tarification())).validation.quota).toEqual({ remaining: b.quota.remaining, limit: QUOTA_PER_HOUR });
      await enqueueAs(keyB.key, tarification());
      expect((await statusAs(keyB.key)).quota).toEqual({ ...b.quota, remaining: b.quota.remaining - 1 });
      expect((await statusAs(keyA.key)).quota.remaining).toBe(0);
      await robots().idle();
      await drain();
      expectOwnLogins();
    },
  },
};
