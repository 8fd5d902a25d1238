import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RobotOffer } from '@courtier/adapter-kit';
import { jobSchema } from '../../shared/automation.js';
import { devisSchema } from '../../shared/devis.js';
import { errorBodySchema } from '../../shared/errors.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, TEST_PDF, type Script, type TestInsurer } from '../helpers/test-insurer.js';

/** A quote's formulas and other documents: what a portal that shows several offers and PDFs gives. */
const clock = testClock();
let server: TestServer;
let insurer: TestInsurer;

beforeAll(async () => {
  insurer = createTestInsurer();
  server = await startTestServer({ clock, insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } });
});
afterAll(() => server.close());

const OFFRES: RobotOffer[] = [
  {
    formule: 'tiers',
    libelle: 'Tiers',
    prime_annuelle_eur: 312.4,
    prime_mensuelle_eur: 26.03,
    franchise_eur: null,
    garanties: [{ code: 'rc', libelle: 'Responsabilité civile', incluse: true, plafond_eur: null }],
  },
  {
    formule: 'tous_risques',
    libelle: 'Tous risques',
    prime_annuelle_eur: 702,
    franchise_eur: 300,
    garanties: [
      { code: 'rc', libelle: 'Responsabilité civile', incluse: true },
      { code: 'dommages_tous_accidents', libelle: 'Dommages tous accidents', incluse: true, plafond_eur: 25000 },
    ],
  },
];
const CONDITIONS = Buffer.from('%PDF-1.4\n% conditions generales\n%%EOF\n');
const IPID = Buffer.from('%PDF-1.4\n% document d information\n%%EOF\n');

const withExtras =
  (extras: Partial<Parameters<Script>[0]> & Record<string, unknown>): Script =>
  async (ctx) => {
    ctx.markSubmitted();
    return { tarif_eur: 702, pdf: TEST_PDF, outcome: 'complete', ...extras };
  };

async function cabinet() {
  const id = await server.createCabinet();
  grantCredits(server.deps, id, 100);
  setInsurerCredentials(server.deps, id, 'testco', { login: 'broker', password: 'pw' });
  return { id, api: apiClient(server, server.createKey(id).key) };
}

let n = 0;
async function priced(api: ReturnType<typeof apiClient>, status: 'completed' | 'failed' = 'completed') {
  n += 1;
  const res = await api.post('/automation/tarifications', {
    compagnie: 'testco',
    produit: 'auto',
    dicData: { postcode: String(30000 + n), birth_date: '1984-03-09', formula: 'tous_risques' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await expect
    .poll(async () => jobSchema.parse((await api.get(`/automation/jobs/${String(res.body.job_id)}`)).body).status, { timeout: 10_000 })
    .toBe(status);
  return jobSchema.parse((await api.get(`/automation/jobs/${String(res.body.job_id)}`)).body);
}

async function download(api: ReturnType<typeof apiClient>, path: string) {
  const link = await api.get(path.replace('/api/v1/public', ''));
  expect(link.status, JSON.stringify(link.body)).toBe(302);
  const location = String(link.headers.get('location'));
  return { location, res: await server.request(location) };
}

describe('quote offers and documents', () => {
  it('keeps every formula offered and each document, and serves the documents through signed links', async () => {
    const { api } = await cabinet();
    insurer.queue(
      withExtras({
        offres: OFFRES,
        documents: [
          { kind: 'conditions', label: 'Conditions générales', pdf: CONDITIONS },
          { kind: 'information', label: 'Document d’information (IPID)', pdf: IPID },
        ],
      }),
    );
    const job = await priced(api);
    const devis = devisSchema.strict().parse((await api.get(`/devis/${job.devis_id}`)).body);
    expect(devis.tarif_eur).toBe(702);
    expect(devis.offres).toEqual([
      OFFRES[0],
      {
        ...OFFRES[1],
        prime_mensuelle_eur: null,
        garanties: [
          { code: 'rc', libelle: 'Responsabilité civile', incluse: true, plafond_eur: null },
          { code: 'dommages_tous_accidents', libelle: 'Dommages tous accidents', incluse: true, plafond_eur: 25000 },
        ],
      },
    ]);
    expect(devis.documents).toEqual([
      { position: 1, kind: 'conditions', label: 'Conditions générales', url: `/api/v1/public/devis/${job.devis_id}/documents/1` },
      { position: 2, kind: 'information', label: 'Document d’information (IPID)', url: `/api/v1/public/devis/${job.devis_id}/documents/2` },
    ]);
    for (const [index, bytes] of [CONDITIONS, IPID].entries()) {
      const { res } = await download(api, devis.documents[index]!.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    }
    // The main PDF is still the quote's own.
    const main = await download(api, devis.pdf_url!);
    expect(Buffer.from(await main.res.arrayBuffer())).toEqual(TEST_PDF);
  });

  it('refuses a document the quote does not have, a link to another document, and another cabinet’s quote', async () => {
    const { api } = await cabinet();
    insurer.queue(withExtras({ documents: [{ kind: 'conditions', label: 'Conditions générales', pdf: CONDITIONS }] }));
    const job = await priced(api);
    const missing = await api.get(`/devis/${job.devis_id}/documents/2`);
    expect(missing.status).toBe(404);
    expect(errorBodySchema.parse(missing.body)).toMatchObject({
      error: 'pdf_not_available',
      message: `The quote ${job.devis_id} has 1 other document, no document 2.`,
    });
    expect((await api.get(`/devis/${job.devis_id}/documents/0`)).status).toBe(400);
    // A link signed for document 1 does not open document 2, nor the quote's PDF.
    const { location } = await download(api, `/devis/${job.devis_id}/documents/1`);
    for (const altered of [location.replace('/documents/1.pdf', '/documents/2.pdf'), location.replace('/documents/1.pdf', '.pdf')]) {
      const res = await server.request(altered);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_signature');
    }
    const other = await cabinet();
    expect((await other.api.get(`/devis/${job.devis_id}/documents/1`)).status).toBe(404);
  });

  it('fails a result out of bounds as the adapter’s technical error, refunded, and stores nothing of it', async () => {
    const { api } = await cabinet();
    const tooMany = Array.from({ length: 6 }, (_, i) => ({ kind: 'other' as const, label: `Annexe ${i + 1}`, pdf: CONDITIONS }));
    insurer.queue(withExtras({ documents: tooMany }));
    const job = await priced(api, 'failed');
    expect(job.error).toMatchObject({ code: 'invalid_result', technical: true });
    expect(job.error?.message).toMatch(/^The robot's result does not fit what a quote holds: documents: /);
    expect(job.credits_consumed).toBe(0);
    const devis = devisSchema.parse((await api.get(`/devis/${job.devis_id}`)).body);
    expect(devis).toMatchObject({ status: 'failed', offres: null, documents: [] });
  });

  it('shows no offers and no documents for a portal that gives one price and one PDF', async () => {
    const { api } = await cabinet();
    const job = await priced(api);
    expect(devisSchema.parse((await api.get(`/devis/${job.devis_id}`)).body)).toMatchObject({ offres: null, documents: [] });
  });
});
