// @module-tag postgres
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pushChanges, type SyncChange } from '../../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../../shared/sync-pairing.js';
import { formatHlc } from '../../shared/hlc.js';
import type { SyncConflict } from '../../shared/console-sync.js';
import { keyArgs, runCourtier, startServeProcess, stopChild, syncConnectArgs } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { PROTOCOL } from '../helpers/hub.js';
import { tempDir } from '../helpers/server.js';

/**
 * A stolen (or former) laptop of the cabinet, with its real device credential, speaking plain HTTP
 * to the real hub on a real PostgreSQL, against an install running as `courtier serve`: the hub
 * refuses what the protocol forbids (a job that claims an install's robots, an erasure that freezes
 * a contract), a job queued "elsewhere" is shown and never run, and what it
 * passes on but the install's rules refuse is set aside there, without stopping its sync, its
 * listings or its other cabinets.
 */

const fixture = useListeningHub();
let serve: { child: ChildProcess; url: string };
const dataDir = tempDir();
let cabinet = '';
let key = '';
let neighbourKey = '';
let enqueueKey = '';
const QUOTA = 60;
let neighbourClient = '';
let thief: PairResponse;

async function cli(args: string[], input?: string): Promise<Record<string, unknown>> {
  const result = await runCourtier([...args, '--data-dir', dataDir, '--json'], input === undefined ? {} : { input });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function api(
  path: string,
  init: { method?: string; body?: unknown; as?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
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
  return fetch(fixture.hub.url + pathTo(pushChanges), {
    method: 'POST',
    headers: { authorization: `Bearer ${thief.device_secret}`, ...PROTOCOL, 'content-type': 'application/json' },
    body: JSON.stringify({ changes }),
  });
}

/** A job row as an install sends it (every synced column), for the sandbox's robot. */
const forgedJob = (overrides: Record<string, unknown>) => ({
  compagnie: 'sandbox',
  produit: 'auto',
  dic_data: JSON.stringify({ insured_name: 'Forgé' }),
  request_hash: 'a'.repeat(64),
  devis_id: randomUUID(),
  status: 'pending',
  progress_step: 'queued',
  progress_percent: 0,
  cost_credits: 10,
  credits_consumed: null,
  result_tarif_cents: null,
  result_suspens: null,
  error_code: null,
  error_message: null,
  error_technical: null,
  submitted: false,
  attempts: 0,
  mfa_requested_at: null,
  mfa_expires_at: null,
  environment: 'test',
  robot_compagnie: 'sandbox',
  created_at: Date.now(),
  updated_at: Date.now(),
  finished_at: null,
  ...overrides,
});

const clientRow = (overrides: Record<string, unknown>) => ({
  type: 'person',
  last_name: 'Client',
  first_name: null,
  company_name: null,
  siret: null,
  email: null,
  phone: null,
  address: null,
  birth_date: null,
  created_at: Date.now(),
  updated_at: Date.now(),
  erased_at: null,
  ...overrides,
});

beforeAll(async () => {
  cabinet = String(
    (await cli(['init', '--cabinet', 'Cabinet Dupont', '--email', 'admin@dupont.fr', '--password-stdin'], 'correct horse battery\n'))
      .cabinet_id,
  );
  key = String((await cli(keyArgs(cabinet, 'crm:read,crm:write,devis:read,automation:read'))).key);
  enqueueKey = String((await cli(keyArgs(cabinet, 'automation:read,automation:enqueue', { name: 'robots', env: 'test' }))).key);
  const neighbour = String(
    (await cli(['init', '--cabinet', 'Cabinet Voisin', '--email', 'admin@voisin.fr', '--password-stdin'], 'correct horse battery\n'))
      .cabinet_id,
  );
  neighbourKey = String((await cli(keyArgs(neighbour, 'crm:read,crm:write'))).key);
  await cli(syncConnectArgs(cabinet, fixture.hub.url, await fixture.hub.invite({ register: cabinet })));
  serve = await startServeProcess(['--data-dir', dataDir]);
  neighbourClient = String((await api('/clients', { method: 'POST', body: { last_name: 'Voisin' }, as: neighbourKey })).body.id);
  // The laptop that was stolen: a device of the cabinet like any other.
  const res = await fetch(fixture.hub.url + pathTo(pairDevice), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PROTOCOL },
    body: JSON.stringify({ code: await fixture.hub.invite({ join: cabinet }), device_name: 'Portable' }),
  });
  thief = (await res.json()) as PairResponse;
}, 120_000);

afterAll(async () => {
  await stopChild(serve?.child);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a stolen laptop with a valid device credential', () => {
  it('cannot make the installs’ robots run a job, nor freeze a record with an erasure: the hub refuses a job that claims to be theirs; one queued elsewhere is only shown', async () => {
    const queued = forgedJob({ status: 'pending', progress_step: 'queued' });
    // An enqueue number (or a lease) is what an install's robots take a job by: never on the wire.
    for (const forged of [
      { ...queued, enqueue_number: 1 },
      { ...queued, status: 'running', lease_until: Date.now() + 60_000 },
    ]) {
      const refused = await push([change('job', randomUUID(), forged)]);
      expect(refused.status).toBe(400);
      number -= 1;
    }
    const freeze = change('contract', randomUUID(), { premium_cents: 1 }, 'erase');
    const refusedErasure = await push([freeze]);
    expect(refusedErasure.status).toBe(400);
    number -= 1;
    const [row] = await fixture.hub.deps.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM hub_changes WHERE device_id = ${thief.device_id}`;
    expect(row?.n).toBe(0);

    // A job queued "elsewhere" travels, as every install's queued jobs do; the install shows it and never runs it.
    const jobId = randomUUID();
    expect((await push([change('job', jobId, queued)])).status).toBe(200);
    const shown = await eventually(
      () => api(`/automation/jobs/${jobId}`),
      (res) => res.status === 200,
      'the forged job on the install',
    );
    expect(shown.body.status).toBe('pending');
    // The worker ticks every second: three ticks later the job is still queued, never leased, never tried.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await api(`/automation/jobs/${jobId}`)).body).toMatchObject({ status: 'pending', progress: { step: 'queued', percent: 0 } });
    const owner = await api(`/automation/jobs/${jobId}/cancel`, { method: 'POST', as: enqueueKey });
    expect(owner.status).toBe(409);
    expect(owner.body.error).toBe('job_runs_elsewhere');
    // The wallet did not pay for it. The cabinet's hourly quota counts it, as any install's queued
    // job (it protects the insurer): a stolen laptop can use the quota up until it is revoked.
    const dryRun = await api('/automation/tarifications', {
      method: 'POST',
      as: enqueueKey,
      body: { compagnie: 'sandbox', produit: 'auto', dicData: {}, dry_run: true },
    });
    expect(dryRun.body).toMatchObject({ validation: { quota: { remaining: QUOTA - 1, limit: QUOTA } } });
    expect((await api('/wallet', { as: enqueueKey })).body.ledger).toEqual([]);
  });

  it('what the hub passes on but the install refuses is set aside there; its sync, listings and other cabinet go on', async () => {
    const poisoned = [
      change('client', randomUUID(), clientRow({ address: 'not json' })),
      change('event', randomUUID(), { type: 'opportunity.created', version: '1', created_at: Date.now(), data: '{not json' }),
      change('devis', randomUUID(), {
        status: 'priced',
        client_id: null,
        opportunity_id: null,
        compagnie: 'sandbox',
        produit: 'auto',
        dic_data: '{}',
        tarif_cents: 1,
        suspens: null,
        job_id: null,
        pdf_sha256: 'zz',
        contract_id: null,
        signed_at: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      }),
      change('client', neighbourClient, clientRow({ last_name: 'Écrasé' })),
    ];
    const honest = change('client', randomUUID(), clientRow({ last_name: 'Honnête' }));
    const pushed = await push([...poisoned, honest]);
    expect(pushed.status, await pushed.clone().text()).toBe(200);

    const arrived = await eventually(
      () => api(`/clients/${honest.record_id}`),
      (res) => res.status === 200,
      'the honest change on the install',
    );
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
