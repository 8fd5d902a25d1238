// @module-tag postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pushChanges, type SyncChange } from '../../shared/sync-protocol.js';
import { change, pairTestDevice, sha256, stampedBy, startHub, storeBlob, type TestDevice, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * What a client's erasure reaches on the hub, pushed by a device with a valid credential: the
 * personal fields of the records that name the client, wherever the hub holds them, now and when
 * they come later; the PDF and documents of an unsigned quote of the client, for good. Nothing of another
 * cabinet, nothing else of the cabinet: other clients' records, a record's other fields, a signed
 * quote's PDF, a job its install did not tie to the client.
 */
let pg: TestPostgres;
/** The hub of the describe running: each path of a push has its own. */
let hub: TestHub;
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(() => pg.stop());

const pdf = (who: string) => Buffer.from(`%PDF-1.4\nBT (Assure : ${who}) Tj ET\n%%EOF\n`, 'latin1');
const PDF = {
  priced: pdf('Quintavalle, devis auto'),
  signed: pdf('Quintavalle, devis MRH'),
  other: pdf('Autre, devis auto'),
  late: pdf('Quintavalle, devis tardif'),
  /** The other documents of a quote: its information document, its conditions. */
  pricedIpid: pdf('Quintavalle, IPID auto'),
  signedConditions: pdf('Quintavalle, conditions MRH'),
  lateIpid: pdf('Quintavalle, IPID tardif'),
  /** An advice document given to the client: kept, as the duty to advise requires. */
  advice: pdf('Quintavalle, document de conseil'),
};
/** A quote's documents field, as an install syncs it. */
const documents = (...files: { kind: string; bytes: Buffer }[]) =>
  JSON.stringify(files.map((file) => ({ kind: file.kind, label: `Document ${file.kind}`, sha256: sha256(file.bytes) })));

/** Numbers each device's changes on, as its install would. */
const numbers = new Map<string, number>();
async function push(device: TestDevice, batch: Omit<SyncChange, 'number' | 'hlc'>[]): Promise<void> {
  const first = numbers.get(device.device_id) ?? 1;
  const stamped = batch.map((c, i) => change(first + i, hub.clock.now(), c));
  numbers.set(device.device_id, first + batch.length);
  const res = await hub.request({
    method: 'POST',
    url: pathTo(pushChanges),
    headers: device.headers,
    body: { changes: stampedBy(device, stamped) },
  });
  expect(res.statusCode, res.body).toBe(200);
}

const upsert = (kind: SyncChange['kind'], record_id: string, fields: Record<string, unknown>) => ({
  kind,
  record_id,
  op: 'upsert' as const,
  fields,
});
const contact = (last_name: string, email: string | null) =>
  JSON.stringify({ last_name, first_name: null, company_name: null, siret: null, email, phone: null });
const event = (id: string, type: string, data: Record<string, unknown>) =>
  upsert('event', id, { type, version: 'v1', created_at: 1, data: JSON.stringify(data) });

/** Every stored change of a record of the cabinet, oldest first: its fields. */
async function stored(cabinetId: string, kind: string, recordId: string): Promise<Record<string, unknown>[]> {
  const rows = await hub.deps.sql<
    { fields: Record<string, unknown> }[]
  >`SELECT fields FROM hub_changes WHERE cabinet_id = ${cabinetId} AND kind = ${kind} AND record_id = ${recordId} ORDER BY seq`;
  return rows.map((row) => row.fields);
}

async function blobs(cabinetId: string): Promise<string[]> {
  return (await hub.deps.sql<{ sha256: string }[]>`SELECT sha256 FROM hub_blobs WHERE cabinet_id = ${cabinetId} ORDER BY sha256`).map(
    (row) => row.sha256,
  );
}

const ERASED_CONTACT = contact('', null);

// A large push is staged before its locks (server/hub/store.ts stageChanges), a small one stored straight: both paths, on a hub each.
describe.each([
  { path: 'stored straight', stagedPushChanges: 1000 },
  { path: 'staged', stagedPushChanges: 1 },
])('a client’s erasure on the hub, pushes $path', ({ stagedPushChanges }) => {
  let x1: TestDevice;
  let x2: TestDevice;
  let y: TestDevice;

  beforeAll(async () => {
    hub = await startHub(pg, { limits: { stagedPushChanges } });
    x1 = await pairTestDevice(hub, { id: 'cab-x' });
    x2 = await pairTestDevice(hub, { id: 'cab-x' }, { join: true, name: 'portable' });
    y = await pairTestDevice(hub, { id: 'cab-y' });
    for (const bytes of [PDF.priced, PDF.signed, PDF.other, PDF.pricedIpid, PDF.signedConditions, PDF.advice])
      await storeBlob(hub, x1, bytes);
    await push(x1, [
      upsert('client', 'C', { type: 'person', last_name: 'Quintavalle', email: 'M.Quintavalle@exemple.fr', siret: null }),
      upsert('client', 'K', { type: 'person', last_name: 'Autre', email: 'autre@exemple.fr', siret: null }),
      // Tied by the client's email (any case), by a quote, and not at all.
      upsert('opportunity', 'O-email', { title: 'Auto', contact: contact('Quintavalle', 'm.quintavalle@exemple.fr') }),
      upsert('opportunity', 'O-quote', { title: 'MRH', contact: contact('Quintavalle', null) }),
      upsert('opportunity', 'O-other', { title: 'Flotte', contact: contact('Autre', 'autre@exemple.fr') }),
      // The client's quotes, one signed; another client's; a job of each, the first named by a quote of the client's through job_id only.
      upsert('devis', 'D-priced', {
        status: 'priced',
        client_id: 'C',
        opportunity_id: 'O-quote',
        dic_data: '{"insured_name":"Quintavalle"}',
        suspens: 'Permis de Quintavalle',
        tarif_cents: 61240,
        pdf_sha256: sha256(PDF.priced),
        documents: documents({ kind: 'information', bytes: PDF.pricedIpid }),
        job_id: 'J-other',
      }),
      upsert('devis', 'D-signed', {
        status: 'signed',
        client_id: 'C',
        opportunity_id: 'O-quote',
        dic_data: '{"insured_name":"Quintavalle"}',
        tarif_cents: 21000,
        pdf_sha256: sha256(PDF.signed),
        documents: documents({ kind: 'conditions', bytes: PDF.signedConditions }),
        contract_id: 'K-signed',
      }),
      upsert('devis', 'D-other', {
        status: 'priced',
        client_id: 'K',
        opportunity_id: null,
        dic_data: '{"insured_name":"Autre"}',
        tarif_cents: 500,
        pdf_sha256: sha256(PDF.other),
      }),
      upsert('job', 'J-priced', {
        status: 'completed',
        devis_id: 'D-priced',
        dic_data: '{"insured_name":"Quintavalle"}',
        result_suspens: 'Permis de Quintavalle',
        error_message: null,
      }),
      upsert('job', 'J-other', {
        status: 'completed',
        devis_id: 'D-other',
        dic_data: '{"insured_name":"Autre"}',
        result_suspens: null,
        error_message: null,
      }),
      // A comparison for the client, and its advice document; another client's comparison.
      upsert('comparaison', 'CMP', {
        ligne: 'auto',
        client_id: 'C',
        risque: '{"conducteur":{"nom":"Quintavalle","date_naissance":"1985-02-10"}}',
        jobs: '[]',
      }),
      upsert('comparaison', 'CMP-other', { ligne: 'auto', client_id: 'K', risque: '{"conducteur":{"nom":"Autre"}}', jobs: '[]' }),
      upsert('conseil', 'ADV', { comparaison_id: 'CMP', client_id: 'C', formule: 'tiers', pdf_sha256: sha256(PDF.advice) }),
      event('E-opportunity', 'opportunity.created', {
        opportunity_id: 'O-email',
        title: 'Auto',
        contact: { last_name: 'Quintavalle', company_name: null, siret: null },
      }),
      event('E-job', 'job.completed', {
        job_id: 'J-priced',
        devis_id: 'D-priced',
        status: 'completed',
        tarif_eur: 612.4,
        suspens: 'Permis de Quintavalle',
      }),
      event('E-update', 'client.updated', {
        id: 'C',
        client_id: 'C',
        last_name: 'Quintavalle',
        email: 'M.Quintavalle@exemple.fr',
        changed_fields: ['email'],
      }),
      event('E-other', 'opportunity.created', {
        opportunity_id: 'O-other',
        title: 'Flotte',
        contact: { last_name: 'Autre', company_name: null, siret: null },
      }),
    ]);
    // Another cabinet holds records under the same ids and email, and the same PDF.
    await storeBlob(hub, y, PDF.priced);
    await push(y, [
      upsert('devis', 'D-priced', {
        status: 'priced',
        client_id: 'C',
        dic_data: '{"insured_name":"Quintavalle"}',
        pdf_sha256: sha256(PDF.priced),
      }),
      upsert('opportunity', 'O-email', { title: 'Auto', contact: contact('Quintavalle', 'm.quintavalle@exemple.fr') }),
    ]);
    // A device tries to have the signed quote's PDF deleted: it says the quote is only priced, then erases the client.
    await push(x2, [upsert('devis', 'D-signed', { status: 'priced', contract_id: null, signed_at: null })]);
    await push(x2, [
      { kind: 'client', record_id: 'C', op: 'erase', fields: { type: 'person', last_name: null, email: null, erased_at: hub.clock.now() } },
    ]);
  });
  afterAll(() => hub.close());

  it('empties the personal fields of every stored change of the quotes, jobs, opportunities and comparisons that name the client, and only those: never another cabinet’s', async () => {
    for (const id of ['O-email', 'O-quote'])
      expect((await stored('cab-x', 'opportunity', id)).map((f) => f.contact)).toEqual([ERASED_CONTACT]);
    expect((await stored('cab-x', 'opportunity', 'O-email'))[0]?.title).toBe('Auto');
    expect((await stored('cab-x', 'devis', 'D-priced'))[0]).toMatchObject({
      dic_data: '{}',
      suspens: null,
      pdf_sha256: null,
      documents: null,
      status: 'priced',
      tarif_cents: 61240,
      client_id: 'C',
    });
    expect((await stored('cab-x', 'devis', 'D-signed')).map((f) => [f.dic_data, f.pdf_sha256, f.documents])).toEqual([
      ['{}', sha256(PDF.signed), documents({ kind: 'conditions', bytes: PDF.signedConditions })],
      [undefined, undefined, undefined],
    ]);
    expect(await stored('cab-x', 'job', 'J-priced')).toEqual([
      { status: 'completed', devis_id: 'D-priced', dic_data: '{}', result_suspens: null, error_message: null },
    ]);
    expect(await stored('cab-x', 'comparaison', 'CMP')).toEqual([{ ligne: 'auto', client_id: 'C', risque: '{}', jobs: '[]' }]);
    expect((await stored('cab-x', 'comparaison', 'CMP-other'))[0]).toMatchObject({ risque: '{"conducteur":{"nom":"Autre"}}' });
    // Not the client's: another client's quote, its job (which a quote of the client names through job_id only), another opportunity.
    expect((await stored('cab-x', 'devis', 'D-other'))[0]).toMatchObject({ dic_data: '{"insured_name":"Autre"}' });
    expect((await stored('cab-x', 'job', 'J-other'))[0]).toMatchObject({ dic_data: '{"insured_name":"Autre"}' });
    expect((await stored('cab-x', 'opportunity', 'O-other'))[0]).toMatchObject({ contact: contact('Autre', 'autre@exemple.fr') });
    // Another cabinet's records under the same ids, with the same email and the same PDF.
    expect((await stored('cab-y', 'devis', 'D-priced'))[0]).toMatchObject({
      dic_data: '{"insured_name":"Quintavalle"}',
      pdf_sha256: sha256(PDF.priced),
    });
    expect((await stored('cab-y', 'opportunity', 'O-email'))[0]).toMatchObject({
      contact: contact('Quintavalle', 'm.quintavalle@exemple.fr'),
    });
    expect(await blobs('cab-y')).toEqual([sha256(PDF.priced)]);
  });

  it('takes the personal data out of the events about them: a client.updated keeps nothing', async () => {
    const data = async (id: string) => JSON.parse(String((await stored('cab-x', 'event', id))[0]?.data)) as Record<string, unknown>;
    expect(await data('E-opportunity')).toMatchObject({
      opportunity_id: 'O-email',
      title: 'Auto',
      contact: { last_name: '', company_name: null, siret: null },
    });
    expect(await data('E-job')).toMatchObject({ job_id: 'J-priced', tarif_eur: 612.4, suspens: null });
    expect(await stored('cab-x', 'event', 'E-update')).toEqual([{}]);
    expect((await data('E-other')).contact).toEqual({ last_name: 'Autre', company_name: null, siret: null });
  });

  const kept = () => [sha256(PDF.signed), sha256(PDF.signedConditions), sha256(PDF.other), sha256(PDF.advice)].sort();

  it('deletes the unsigned quote’s PDF and documents for good, and keeps the signed one’s (even said unsigned since) and the advice document', async () => {
    expect(await blobs('cab-x')).toEqual(kept());
    // An install that had not heard of the erasure uploads them again: answered, not stored.
    await storeBlob(hub, x1, PDF.priced);
    await storeBlob(hub, x1, PDF.pricedIpid);
    expect(await blobs('cab-x')).toEqual(kept());
    const [state] = await hub.deps.sql<
      { fields: Record<string, unknown> }[]
    >`SELECT fields FROM hub_records WHERE cabinet_id = 'cab-x' AND kind = 'devis' AND record_id = 'D-priced'`;
    expect(state?.fields).toMatchObject({ pdf_sha256: null, documents: null });
  });

  it('empties what comes later about the client: a late job, a new quote of the client and its opportunity, a comparison, their PDF and events', async () => {
    await storeBlob(hub, x1, PDF.late);
    await storeBlob(hub, x1, PDF.lateIpid);
    await push(x1, [
      upsert('job', 'J-priced', { status: 'completed', dic_data: '{"insured_name":"Quintavalle"}', result_suspens: 'Quintavalle again' }),
      upsert('opportunity', 'O-late', { title: 'Habitation', contact: contact('Quintavalle', null) }),
      upsert('devis', 'D-late', {
        status: 'priced',
        client_id: 'C',
        opportunity_id: 'O-late',
        dic_data: '{"insured_name":"Quintavalle"}',
        pdf_sha256: sha256(PDF.late),
        documents: documents({ kind: 'information', bytes: PDF.lateIpid }),
      }),
      upsert('job', 'J-late', { status: 'completed', devis_id: 'D-late', dic_data: '{"insured_name":"Quintavalle"}' }),
      upsert('comparaison', 'CMP-late', { ligne: 'mrh', client_id: 'C', risque: '{"souscripteur":{"nom":"Quintavalle"}}', jobs: '[]' }),
      event('E-late-update', 'client.updated', {
        id: 'C',
        client_id: 'C',
        last_name: 'Quintavalle',
        phone: '+33 6 55 44 33 22',
        changed_fields: ['phone'],
      }),
      event('E-late-failed', 'devis.failed', { devis_id: 'D-late', job_id: 'J-late', client_id: 'C', reason: 'Quintavalle refusé' }),
    ]);
    expect((await stored('cab-x', 'job', 'J-priced'))[1]).toEqual({ status: 'completed', dic_data: '{}', result_suspens: null });
    expect((await stored('cab-x', 'opportunity', 'O-late')).map((f) => f.contact)).toEqual([ERASED_CONTACT]);
    expect((await stored('cab-x', 'devis', 'D-late'))[0]).toMatchObject({ dic_data: '{}', pdf_sha256: null, documents: null });
    expect((await stored('cab-x', 'job', 'J-late'))[0]).toMatchObject({ dic_data: '{}' });
    expect((await stored('cab-x', 'comparaison', 'CMP-late'))[0]).toMatchObject({ risque: '{}', ligne: 'mrh' });
    expect(await stored('cab-x', 'event', 'E-late-update')).toEqual([{}]);
    expect(JSON.parse(String((await stored('cab-x', 'event', 'E-late-failed'))[0]?.data))).toMatchObject({
      devis_id: 'D-late',
      reason: '',
    });
    expect(await blobs('cab-x')).toEqual(kept());
    const [left] = await hub.deps.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = 'cab-x' AND fields::text ILIKE '%quintavalle%'`;
    expect(left?.n).toBe(0);
    const [held] = await hub.deps.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM hub_records WHERE cabinet_id = 'cab-x' AND fields::text ILIKE '%quintavalle%'`;
    expect(held?.n).toBe(0);
  });
});
