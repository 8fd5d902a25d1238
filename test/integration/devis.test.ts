import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devisSchema } from '../../shared/devis.js';
import { contractSignedPayload, devisSignedPayload, opportunityStagePayload } from '../../shared/events.js';
import { recordDevisPriced } from '../../server/devis/service.js';
import { listEvents } from '../../server/events/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';

const clock = testClock();
let server: TestServer;
let cabinetId: string;
let api: ReturnType<typeof apiClient>;
let clientId: string;
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

beforeAll(async () => {
  server = await startTestServer({ clock });
  cabinetId = await server.createCabinet();
  api = apiClient(server, server.createKey(cabinetId).key);
  clientId = String((await api.post('/clients', { last_name: 'Durand', first_name: 'Paul' })).body.id);
});
afterAll(() => server.close());

async function draft(extra: Record<string, unknown> = {}) {
  clock.advance(1000);
  const res = await api.post('/devis', {
    client_id: clientId,
    compagnie: 'Sandbox',
    produit: 'auto',
    dicData: { postcode: '69003' },
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return devisSchema.strict().parse(res.body);
}

describe('quotes (devis)', () => {
  it('creates a draft, without pricing and without event', async () => {
    const before = listEvents(server.deps, cabinetId).length;
    const d = await draft();
    expect(d).toMatchObject({
      status: 'draft',
      client_id: clientId,
      compagnie: 'sandbox',
      produit: 'auto',
      dicData: { postcode: '69003' },
      tarif_eur: null,
      pdf_available: false,
      pdf_url: null,
      opportunity_id: null,
    });
    expect((await api.get(`/devis/${d.id}`)).body).toEqual(d);
    expect(listEvents(server.deps, cabinetId).length).toBe(before);
  });

  it('refuses an unknown client or opportunity as a validation error on that field', async () => {
    const ghost = '6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f';
    const res = await api.post('/devis', { client_id: ghost, compagnie: 'sandbox', produit: 'auto' });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'body.client_id', message: expect.stringContaining('no client') }]);
    const res2 = await api.post('/devis', { client_id: clientId, opportunity_id: ghost, compagnie: 'sandbox', produit: 'auto' });
    expect(res2.body.details).toEqual([{ path: 'body.opportunity_id', message: expect.stringContaining('no opportunity') }]);
    const res3 = await api.post('/devis', { client_id: clientId, compagnie: 'not a code!', produit: 'auto' });
    expect((res3.body.details as { path: string }[])[0]?.path).toBe('body.compagnie');
  });

  it('lists with status and client filters', async () => {
    const d = await draft();
    recordDevisPriced(server.deps, cabinetId, d.id, { tarifEur: 420 });
    const priced = await api.get('/devis?status=priced');
    expect((priced.body.data as { id: string }[]).map((x) => x.id)).toEqual([d.id]);
    const mine = await api.get(`/devis?client_id=${clientId}&limit=100`);
    expect((mine.body.data as { client_id: string }[]).every((x) => x.client_id === clientId)).toBe(true);
    expect((await api.get('/devis?status=lost')).body.error).toBe('validation_error');
  });

  it('signs a priced quote: a contract, devis.signed and contract.signed, and the opportunity won, in one go', async () => {
    const opportunity = await api.post('/opportunities', {
      title: 'Auto Durand',
      product: 'auto',
      contact: { last_name: 'Durand' },
      stage: 'quoted',
    });
    const d = await draft({ opportunity_id: opportunity.body.id });
    const notYet = await api.post(`/devis/${d.id}/sign`);
    expect(notYet.status).toBe(409);
    expect(notYet.body.error).toBe('invalid_devis_transition');

    recordDevisPriced(server.deps, cabinetId, d.id, {
      tarifEur: 612.4,
      suspens: 'Relevé d’information à fournir',
      pdf: PDF,
      jobId: 'job_1',
    });
    const before = listEvents(server.deps, cabinetId).length;
    clock.advance(1000);
    const signed = await api.post(`/devis/${d.id}/sign`, { signed_at: '2026-11-22T10:00:00+01:00' });
    expect(signed.status).toBe(200);
    const body = devisSchema.strict().parse(signed.body);
    expect(body).toMatchObject({
      status: 'signed',
      tarif_eur: 612.4,
      suspens: 'Relevé d’information à fournir',
      job_id: 'job_1',
      signed_at: '2026-11-22T09:00:00.000Z',
    });
    expect(body.contract_id).not.toBeNull();

    const events = listEvents(server.deps, cabinetId).slice(before);
    expect(events.map((e) => e.type)).toEqual(['devis.signed', 'contract.signed', 'opportunity.stage_changed', 'opportunity.won']);
    expect(devisSignedPayload.strict().parse(events[0]?.data)).toMatchObject({
      devis_id: d.id,
      tarif_eur: 612.4,
      contract_id: body.contract_id,
    });
    expect(contractSignedPayload.strict().parse(events[1]?.data)).toMatchObject({
      contract_id: body.contract_id,
      premium_eur: 612.4,
      opportunity_id: opportunity.body.id,
    });
    expect(opportunityStagePayload.parse(events[3]?.data)).toMatchObject({ previous_stage: 'quoted', stage: 'won' });
    expect((await api.get(`/opportunities/${String(opportunity.body.id)}`)).body.stage).toBe('won');

    const again = await api.post(`/devis/${d.id}/sign`);
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already signed/);
    const contracts = server.deps.db.sqlite.prepare('SELECT count(*) AS n FROM contracts WHERE devis_id = ?').get(d.id);
    expect(contracts).toEqual({ n: 1 });
  });

  it('a signature with an empty JSON body or no body at all is accepted', async () => {
    for (const init of [
      { body: '', contentType: 'application/json' },
      { body: undefined, contentType: undefined },
    ]) {
      const d = await draft();
      recordDevisPriced(server.deps, cabinetId, d.id, { tarifEur: 100 });
      const res = await server.request(`/api/v1/public/devis/${d.id}/sign`, {
        method: 'POST',
        headers: { 'X-API-Key': server.createKey(cabinetId).key, ...(init.contentType ? { 'Content-Type': init.contentType } : {}) },
        ...(init.body === undefined ? {} : { body: init.body }),
      });
      expect(res.status).toBe(200);
    }
  });
});

describe('quote PDF links', () => {
  it('404 pdf_not_available while the quote has no PDF', async () => {
    const d = await draft();
    const res = await api.get(`/devis/${d.id}/pdf`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('pdf_not_available');
  });

  it('302 to a signed link that serves the PDF without an API key for 5 minutes', async () => {
    const d = await draft();
    const priced = recordDevisPriced(server.deps, cabinetId, d.id, { tarifEur: 250, pdf: PDF });
    expect(priced.pdf_url).toBe(`/api/v1/public/devis/${d.id}/pdf`);
    const res = await api.get(`/devis/${d.id}/pdf`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect(location).toMatch(
      new RegExp(`^/api/v1/public/files/devis/${d.id}\\.pdf\\?cabinet_id=${cabinetId}&expires=\\d+&signature=[0-9a-f]{64}$`),
    );

    const download = await server.request(location);
    expect(download.status, await download.clone().text()).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await download.arrayBuffer())).toEqual(PDF);

    // fetch follows the redirect by itself, as the contract asks clients to.
    const followed = await server.request(`/api/v1/public/devis/${d.id}/pdf`, {
      headers: { 'X-API-Key': server.createKey(cabinetId).key },
    });
    expect(followed.status).toBe(200);
    expect(
      Buffer.from(await followed.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    const url = new URL(location, server.url);
    const altered: string[] = [];
    const other = '6f1c1a52-8a8e-4c7e-9d44-1b2a3c4d5e6f';
    altered.push(location.replace(d.id, other));
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    altered.push(later.pathname + later.search);
    const sig = new URL(url);
    const s = sig.searchParams.get('signature') ?? '';
    sig.searchParams.set('signature', `${s.slice(0, -1)}${s.endsWith('0') ? '1' : '0'}`);
    altered.push(sig.pathname + sig.search);
    altered.push(url.pathname);
    altered.push(`${url.pathname}?cabinet_id=${cabinetId}&expires=abc&signature=zz`);
    for (const link of altered) {
      const bad = await server.request(link);
      expect(bad.status, link).toBe(403);
      expect(((await bad.json()) as { error: string }).error).toBe('invalid_signature');
    }

    clock.advance(301_000);
    const expired = await server.request(location);
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as { message: string }).message).toMatch(/expired/);
  });
});
