// @module-tag postgres
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { formatHlc, pairDevice, pushChanges, type PairResponse, type SyncChange } from '../../shared/sync-protocol.js';
import type { SyncConflict } from '../../shared/sync.js';
import { runCourtier, startServeProcess, stopChild } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startListeningHub, type ListeningHub } from '../helpers/hub-server.js';
import { PROTOCOL } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';

/**
 * A stolen (or former) laptop of the cabinet, with its real device credential, speaking plain HTTP
 * to the real hub on a real PostgreSQL, against an install running as `courtier serve`: the hub
 * refuses what the protocol forbids (a job to run, an erasure that freezes a contract), and what it
 * passes on but the install's rules refuse is set aside there, without stopping its sync, its
 * listings or its other cabinets.
 */

let pg: TestPostgres;
let hub: ListeningHub;
let serve: { child: ChildProcess; url: string };
const dataDir = tempDir();
let cabinet = '';
let key = '';
let neighbourKey = '';
let neighbourClient = '';
let thief: PairResponse;

async function cli(args: string[], input?: string): Promise<Record<string, unknown>> {
  const result = await runCourtier([...args, '--data-dir', dataDir, '--json'], input === undefined ? {} : { input });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function api(path: string, init: { method?: string; body?: unknown; as?: string } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(serve.url + `/api/v1/public${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-API-Key': init.as ?? key, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

let number = 0;
function change(kind: SyncChange['kind'], recordId: string, fields: Record<string, unknown>, op: SyncChange['op'] = 'upsert'): SyncChange {
  number += 1;
  return { number, kind, record_id: recordId, op, hlc: formatHlc({ time: Date.now(), counter: number, device: thief.device_id }), fields };
}

async function push(changes: SyncChange[]): Promise<Response> {
  return fetch(hub.url + pathTo(pushChanges), { method: 'POST', headers: { authorization: `Bearer ${thief.device_secret}`, ...PROTOCOL, 'content-type': 'application/json' }, body: JSON.stringify({ changes }) });
}

const clientRow = (overrides: Record<string, unknown>) => ({
  type: 'person', last_name: 'Client', first_name: null, company_name: null, siret: null, email: null, phone: null, address: null, birth_date: null,
  created_at: Date.now(), updated_at: Date.now(), erased_at: null, ...overrides,
});

beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startListeningHub(await pg.createDatabase());
  cabinet = String((await cli(['init', '--cabinet', 'Cabinet Dupont', '--email', 'admin@dupont.fr', '--password-stdin'], 'correct horse battery\n')).cabinet_id);
  key = String((await cli(['keys', 'create', '--cabinet', cabinet, '--name', 'k', '--env', 'prod', '--scopes', 'crm:read,crm:write,devis:read,automation:read'])).key);
  const neighbour = String((await cli(['init', '--cabinet', 'Cabinet Voisin', '--email', 'admin@voisin.fr', '--password-stdin'], 'correct horse battery\n')).cabinet_id);
  neighbourKey = String((await cli(['keys', 'create', '--cabinet', neighbour, '--name', 'k', '--env', 'prod', '--scopes', 'crm:read,crm:write'])).key);
  await cli(['sync', 'connect', '--cabinet', cabinet, '--hub', hub.url, '--code', await hub.invite({ register: cabinet }), '--name', 'Poste A']);
  serve = await startServeProcess(['--data-dir', dataDir]);
  neighbourClient = String((await api('/clients', { method: 'POST', body: { last_name: 'Voisin' }, as: neighbourKey })).body.id);
  // The laptop that was stolen: a device of the cabinet like any other.
  const res = await fetch(hub.url + pathTo(pairDevice), { method: 'POST', headers: { 'content-type': 'application/json', ...PROTOCOL }, body: JSON.stringify({ code: await hub.invite({ join: cabinet }), device_name: 'Portable' }) });
  thief = (await res.json()) as PairResponse;
}, 120_000);

afterAll(async () => {
  await stopChild(serve?.child);
  await hub?.close();
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a stolen laptop with a valid device credential', () => {
  it('cannot push a job for the installs’ robots to run, nor an erasure that freezes a record at its values: the hub refuses them', async () => {
    const job = change('job', randomUUID(), { status: 'pending', compagnie: 'sandbox', produit: 'auto', dic_data: '{}', robot_compagnie: 'sandbox', environment: 'prod' });
    const refusedJob = await push([job]);
    expect(refusedJob.status).toBe(400);
    number -= 1;
    const freeze = change('contract', randomUUID(), { premium_cents: 1 }, 'erase');
    const refusedErasure = await push([freeze]);
    expect(refusedErasure.status).toBe(400);
    number -= 1;
    const [row] = await hub.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_changes WHERE device_id = ${thief.device_id}`;
    expect(row?.n).toBe(0);
  });

  it('what the hub passes on but the install refuses is set aside there; its sync, listings and other cabinet go on', async () => {
    const poisoned = [
      change('client', randomUUID(), clientRow({ address: 'not json' })),
      change('event', randomUUID(), { type: 'opportunity.created', version: '1', created_at: Date.now(), data: '{not json' }),
      change('devis', randomUUID(), { status: 'priced', client_id: null, opportunity_id: null, compagnie: 'sandbox', produit: 'auto', dic_data: '{}', tarif_cents: 1, suspens: null, job_id: null, pdf_sha256: 'zz', contract_id: null, signed_at: null, created_at: Date.now(), updated_at: Date.now() }),
      change('client', neighbourClient, clientRow({ last_name: 'Écrasé' })),
    ];
    const honest = change('client', randomUUID(), clientRow({ last_name: 'Honnête' }));
    const pushed = await push([...poisoned, honest]);
    expect(pushed.status, await pushed.clone().text()).toBe(200);

    const arrived = await eventually(() => api(`/clients/${honest.record_id}`), (res) => res.status === 200, 'the honest change on the install');
    expect(arrived.body.last_name).toBe('Honnête');
    const { conflicts } = (await cli(['sync', 'conflicts', '--cabinet', cabinet])) as { conflicts: SyncConflict[] };
    expect(conflicts.map((c) => [c.record_id, c.reason, c.device_id]).reverse()).toEqual([
      [poisoned[0]!.record_id, 'invalid_fields', thief.device_id],
      [poisoned[1]!.record_id, 'invalid_fields', thief.device_id],
      [poisoned[2]!.record_id, 'invalid_fields', thief.device_id],
      [neighbourClient, 'record_clash', thief.device_id],
    ]);
    const status = await cli(['sync', 'status', '--cabinet', cabinet]);
    expect(status).toMatchObject({ set_aside_changes: 4, last_error: null });
    expect((await api('/clients')).status).toBe(200);
    expect((await api(`/clients/${neighbourClient}`, { as: neighbourKey })).body.last_name).toBe('Voisin');
    const human = await runCourtier(['sync', 'conflicts', '--cabinet', cabinet, '--data-dir', dataDir]);
    expect(human.stdout).toContain('record_clash: another cabinet of this install holds a client with this id');
  });
});
