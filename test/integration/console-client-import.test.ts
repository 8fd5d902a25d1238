import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_IMPORT_ENDPOINTS, IMPORT_MAX_BYTES } from '../../shared/console-import.js';
import { clientSchema } from '../../shared/crm.js';
import { pathTo } from '../../shared/endpoint.js';
import { errorBodySchema } from '../../shared/errors.js';
import { apiClient, expectErrorResponse, json } from '../helpers/api.js';
import { signInNewUser, type ConsoleClient } from '../helpers/console.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { xlsx } from '../helpers/xlsx.js';

/**
 * Importing clients in the console over real HTTP and SQLite: any user of the cabinet, the preview
 * writes nothing, bad files are clear 4xx with nothing written, the valid rows are created all or
 * nothing, a client already there (or twice in the file) is not created again, and each cabinet
 * imports into itself only.
 */

const C = '/api/v1/console';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

interface Cabinet {
  id: string;
  broker: ConsoleClient;
  api: ReturnType<typeof apiClient>;
}

async function cabinet(): Promise<Cabinet> {
  const id = await server.createCabinet(`Cabinet ${randomUUID().slice(0, 6)}`);
  const { client } = await signInNewUser(server, id, 'broker');
  return { id, broker: client, api: apiClient(server, server.createKey(id).key) };
}

const file = (text: string, name = 'clients.csv') => ({ file_name: name, content_base64: Buffer.from(text, 'utf8').toString('base64') });

const CSV = [
  'Nom;Prénom;Courriel;Raison sociale;SIRET;Code postal;Ville;Adresse',
  'Dupont;Jean;Jean.Dupont@Exemple.fr;;;69003;Lyon;3 rue Garibaldi',
  'Martin;Léa;lea.martin@exemple.fr;;;;;',
  ';;contact@garage.fr;Garage du Pont;732 829 320 00074;;;',
  'Sans;Courriel;pas-un-email;;;;;',
  'Martin;Léa bis;LEA.MARTIN@exemple.fr;;;;;',
].join('\r\n');

async function post(client: ConsoleClient, preview: boolean, body: unknown): Promise<Response> {
  return client.request(`${C}/clients/import${preview ? '/preview' : ''}`, { method: 'POST', json: body });
}

async function ok(response: Response): Promise<Record<string, unknown> & { counts: Record<string, number> }> {
  const body = (await json(response)) as Record<string, unknown> & { counts: Record<string, number> };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

function count(sql: string, ...params: unknown[]): number {
  return (server.deps.db.sqlite.prepare(sql).get(...params) as { n: number }).n;
}
const clientCount = (cabinetId: string) => count('SELECT count(*) AS n FROM clients WHERE cabinet_id = ?', cabinetId);

describe('client import: access', () => {
  it('both lines need a session (401), and a CSRF token; nothing is written', async () => {
    for (const line of CONSOLE_IMPORT_ENDPOINTS) {
      const res = await server.request(pathTo(line), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: server.url },
        body: JSON.stringify(file(CSV)),
      });
      expect(res.status, line.operationId).toBe(401);
      expect(errorBodySchema.parse(await json(res)).error).toBe('not_signed_in');
    }
    const cab = await cabinet();
    const noCsrf = await server.request(`${C}/clients/import`, {
      method: 'POST',
      headers: { cookie: cab.broker.cookie, 'Content-Type': 'application/json', Origin: server.url },
      body: JSON.stringify(file(CSV)),
    });
    await expectErrorResponse(noCsrf, 403, 'invalid_csrf_token');
    expect(clientCount(cab.id)).toBe(0);
  });
});

describe('client import: preview and import', () => {
  it('a broker previews (nothing written), then imports: the valid rows created, the bad ones listed, the second Martin already there', async () => {
    const cab = await cabinet();
    const preview = await ok(await post(cab.broker, true, file(CSV)));
    expect(clientCount(cab.id)).toBe(0);
    expect(preview.file).toEqual({ format: 'csv', encoding: 'utf-8', separator: ';' });
    expect((preview.columns as { field: string }[]).map((c) => c.field)).toEqual([
      'last_name',
      'first_name',
      'email',
      'company_name',
      'siret',
      'postcode',
      'city',
      'address_line1',
    ]);
    expect(preview.counts).toEqual({ rows: 5, valid: 3, already_there: 1, refused: 1 });
    expect(preview.refused).toEqual([
      { row: 5, problems: [{ field: 'email', issue: expect.objectContaining({ code: 'invalid_format', format: 'email' }) as unknown }] },
    ]);
    expect(preview.already_there).toEqual([{ row: 6, match: 'email', existing: 'file', first_row: 3 }]);
    expect(
      (preview.preview as { row: number; client: { type: string; siret: string | null } }[]).map((p) => [
        p.row,
        p.client.type,
        p.client.siret,
      ]),
    ).toEqual([
      [2, 'person', null],
      [3, 'person', null],
      [4, 'company', '73282932000074'],
    ]);

    const imported = await ok(await post(cab.broker, false, file(CSV)));
    expect(imported.created).toBe(3);
    expect(imported.counts).toEqual(preview.counts);
    const listed = (await json(await cab.broker.request(`${C}/clients?limit=100`))) as { data: unknown[] };
    const clients = listed.data.map((c) => clientSchema.parse(c));
    expect(clients.map((c) => c.email).sort()).toEqual(['Jean.Dupont@Exemple.fr', 'contact@garage.fr', 'lea.martin@exemple.fr']);
    expect(clients.find((c) => c.last_name === 'Dupont')?.address).toEqual({
      line1: '3 rue Garibaldi',
      line2: null,
      postcode: '69003',
      city: 'Lyon',
      country: 'FR',
    });

    // The import is in the audit log with its counts, and no client's data.
    const audit = server.deps.db.sqlite
      .prepare("SELECT details FROM audit_events WHERE cabinet_id = ? AND action = 'clients.imported'")
      .all(cab.id) as { details: string }[];
    expect(audit.map((a) => JSON.parse(a.details) as unknown)).toEqual([{ created: 3, already_there: 1, refused: 1, format: 'csv' }]);

    // Again: nothing new, everything already there in the cabinet.
    const again = await ok(await post(cab.broker, false, file(CSV)));
    expect(again.created).toBe(0);
    expect(again.counts).toEqual({ rows: 5, valid: 0, already_there: 4, refused: 1 });
    expect(clientCount(cab.id)).toBe(3);
  });

  it('a client already in the cabinet is recognised by its email in any case, its SIRET, or a person’s names and birth date', async () => {
    const cab = await cabinet();
    for (const body of [
      { last_name: 'Roux', email: 'ROUX@exemple.fr' },
      { type: 'company', company_name: 'Garage', siret: '73282932000074' },
      { last_name: 'Élie', first_name: 'Zoé', birth_date: '1980-03-15' },
    ])
      expect((await cab.api.post('/clients', body)).status).toBe(201);
    const text = [
      'Nom,Prénom,Email,SIRET,Raison sociale,Date de naissance',
      'Roux,,roux@exemple.fr,,,',
      ',,,73282932000074,Autre nom,',
      'ELIE,zoe,,,,15/03/1980',
      'Élie,Zoé,,,,16/03/1980',
    ].join('\n');
    const result = await ok(await post(cab.broker, false, file(text)));
    expect(result.already_there).toEqual([
      { row: 2, match: 'email', existing: 'cabinet', first_row: null },
      { row: 3, match: 'siret', existing: 'cabinet', first_row: null },
      { row: 4, match: 'identity', existing: 'cabinet', first_row: null },
    ]);
    expect(result.created).toBe(1);
  });

  it('the broker’s columns and default type replace the guessed ones; a column choice that does not fit is a validation_error', async () => {
    const cab = await cabinet();
    const text = 'Col A;Col B\nAcme;acme@exemple.fr\n';
    const guessed = await ok(await post(cab.broker, true, file(text)));
    expect((guessed.columns as { field: string; samples: string[] }[]).map((c) => [c.field, c.samples])).toEqual([
      ['ignore', ['Acme']],
      ['ignore', ['acme@exemple.fr']],
    ]);
    const chosen = await ok(await post(cab.broker, true, { ...file(text), columns: ['company_name', 'email'], default_type: 'company' }));
    expect(chosen.counts).toMatchObject({ valid: 1, refused: 0 });
    await expectErrorResponse(await post(cab.broker, true, { ...file(text), columns: ['email'] }), 400, 'validation_error');
    await expectErrorResponse(await post(cab.broker, true, { ...file(text), columns: ['email', 'email'] }), 400, 'validation_error');
  });

  it('imports an Excel workbook', async () => {
    const cab = await cabinet();
    const workbook = xlsx([
      ['Last name', 'First name', 'E-mail', 'Phone'],
      ['Moreau', 'Paul', 'paul@exemple.fr', 612345678],
    ]);
    const result = await ok(await post(cab.broker, false, { file_name: 'export.xlsx', content_base64: workbook.toString('base64') }));
    expect(result).toMatchObject({ created: 1, file: { format: 'xlsx' } });
    const [client] = ((await json(await cab.broker.request(`${C}/clients`))) as { data: unknown[] }).data.map((c) => clientSchema.parse(c));
    expect(client).toMatchObject({ last_name: 'Moreau', phone: '0612345678' });
  });
});

describe('client import: files that cannot be imported, and nothing half-imported', () => {
  it('a file that is neither CSV nor .xlsx, an empty one, one too large: a stable code, nothing written', async () => {
    const cab = await cabinet();
    const pdf = { file_name: 'scan.pdf', content_base64: Buffer.from('%PDF-1.7\n\u0000\u0001binary', 'latin1').toString('base64') };
    for (const preview of [true, false]) {
      await expectErrorResponse(await post(cab.broker, preview, pdf), 400, 'import_file_unreadable');
      await expectErrorResponse(await post(cab.broker, preview, file('')), 400, 'import_file_empty');
      await expectErrorResponse(await post(cab.broker, preview, file('Nom;Prénom\n')), 400, 'import_file_empty');
    }
    const big = await expectErrorResponse(
      await post(cab.broker, false, file('a'.repeat(IMPORT_MAX_BYTES + 1))),
      413,
      'import_file_too_large',
    );
    expect(big.details).toEqual({ max_bytes: IMPORT_MAX_BYTES, max_rows: 10_000 });
    const rows = Array.from({ length: 10_001 }, (_, i) => `Client${i};c${i}@exemple.fr`).join('\n');
    await expectErrorResponse(await post(cab.broker, false, file(`Nom;Email\n${rows}`)), 413, 'import_file_too_large');
    expect(clientCount(cab.id)).toBe(0);
  });

  it('an error while the rows are written leaves none of them', async () => {
    const cab = await cabinet();
    const db = server.deps.db.sqlite;
    // The third row's insert fails, after the first two were written in the same transaction.
    db.exec("CREATE TRIGGER fail_import BEFORE INSERT ON clients WHEN NEW.last_name = 'Panne' BEGIN SELECT RAISE(ABORT, 'disk gone'); END");
    try {
      const res = await post(
        cab.broker,
        false,
        file('Nom;Email\nUn;un@exemple.fr\nDeux;deux@exemple.fr\nPanne;panne@exemple.fr\nQuatre;q@exemple.fr\n'),
      );
      expect(res.status).toBe(500);
      expect(clientCount(cab.id)).toBe(0);
      expect(count("SELECT count(*) AS n FROM audit_events WHERE cabinet_id = ? AND action = 'clients.imported'", cab.id)).toBe(0);
    } finally {
      db.exec('DROP TRIGGER fail_import');
    }
    expect((await ok(await post(cab.broker, false, file('Nom;Email\nUn;un@exemple.fr\n')))).created).toBe(1);
  });

  it('imported clients are queued for the cabinet’s other installs as one created by hand is; a failed import queues nothing', async () => {
    const cab = await cabinet();
    // The cabinet syncs (paused: no hub is called), so that its changes are queued.
    server.deps.db.sqlite
      .prepare(
        `INSERT INTO sync_connections (cabinet_id, hub_url, device_id, device_name, paused, next_number, acknowledged_number, pull_cursor, clock_time, clock_counter, state, connected_at)
         VALUES (?, 'https://hub.invalid', ?, 'Poste test', 1, 1, 0, 0, 0, 0, 'idle', 0)`,
      )
      .run(cab.id, randomUUID());
    const queued = () => count("SELECT count(*) AS n FROM sync_outbox WHERE cabinet_id = ? AND kind = 'client' AND op = 'upsert'", cab.id);
    const db = server.deps.db.sqlite;
    db.exec(
      "CREATE TRIGGER fail_sync_import BEFORE INSERT ON clients WHEN NEW.last_name = 'Panne' BEGIN SELECT RAISE(ABORT, 'disk gone'); END",
    );
    try {
      expect((await post(cab.broker, false, file('Nom;Email\nUn;un@exemple.fr\nPanne;panne@exemple.fr\n'))).status).toBe(500);
    } finally {
      db.exec('DROP TRIGGER fail_sync_import');
    }
    expect(queued()).toBe(0);
    expect((await ok(await post(cab.broker, false, file(CSV)))).created).toBe(3);
    expect(queued()).toBe(3);
  });

  it('each cabinet imports into itself: another cabinet’s clients are neither seen as already there nor touched', async () => {
    const a = await cabinet();
    const b = await cabinet();
    await ok(await post(a.broker, false, file(CSV)));
    const before = clientCount(a.id);
    const inB = await ok(await post(b.broker, false, file(CSV)));
    expect(inB.created).toBe(3);
    expect(inB.already_there).toEqual([{ row: 6, match: 'email', existing: 'file', first_row: 3 }]);
    expect(clientCount(a.id)).toBe(before);
    expect(clientCount(b.id)).toBe(3);
    const ofB = (await json(await b.broker.request(`${C}/clients?limit=100`))) as { data: { client_id: string }[] };
    const ofA = (await json(await a.broker.request(`${C}/clients?limit=100`))) as { data: { client_id: string }[] };
    expect(ofB.data.map((c) => c.client_id).filter((id) => ofA.data.some((c) => c.client_id === id))).toEqual([]);
  });
});
