// @module-tag postgres
import type { ChildProcess } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../server/api-keys/service.js';
import { loadConfig } from '../../server/config.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import { createDevis, recordDevisPriced } from '../../server/devis/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import {
  hubInvite,
  runCourtier,
  startHubServeProcess,
  startServeProcess,
  stopChild,
  syncConnectArgs,
  syncJoinArgs,
} from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';

/**
 * What a cabinet meets in real life, with every part a real process: a `courtier hub serve` on
 * PostgreSQL, two `courtier serve` installs, the brokers' records created through the public API
 * and the operator's steps through the CLI. An install restored from a backup, the hub's database
 * restored from a backup, and an install disconnected and connected again each end with both
 * installs holding every record once, and a later edit winning over an earlier one. Two installs
 * signing one quote while the hub is down make one contract; a client's erasure leaves their data
 * on neither install nor the hub; text no hub can store is refused at the install's door.
 */
const PASSWORD = 'correct horse battery';
const CRM_SCOPES = ['crm:read', 'crm:write', 'devis:read', 'devis:draft'] as const;

let pg: TestPostgres;
/** The hub's database as it runs now: the restore points the hub at a copy made earlier. */
let databaseUrl: string;
let hubPort: number;
let hub: { child: ChildProcess; url: string } | undefined;
let cabinet: string;
const dirs = { a: '', b: '' };
const keys = { a: '', b: '' };
const installs: Record<'a' | 'b', { child: ChildProcess; url: string } | undefined> = { a: undefined, b: undefined };

function withDeps<T>(dataDir: string, body: (deps: Deps) => Promise<T> | T): Promise<T> {
  const db = openDatabase(databaseFile(dataDir));
  return Promise.resolve(body(defaultDeps(db, loadConfig({ dataDir }, {}), { insurers: [], env: {} }))).finally(() => db.close());
}

async function courtier(args: string[], input?: string): Promise<string> {
  const result = await runCourtier(args, input === undefined ? {} : { input });
  expect(result.code, `courtier ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

async function startHub(): Promise<void> {
  // The same port every time: the installs know the hub by its URL.
  hub = await startHubServeProcess(['--database-url', databaseUrl, '--port', String(hubPort)]);
}

async function startInstall(name: 'a' | 'b'): Promise<string> {
  const started = await startServeProcess(['--data-dir', dirs[name]]);
  installs[name] = started;
  return started.url;
}

async function stopInstall(name: 'a' | 'b'): Promise<void> {
  await stopChild(installs[name]?.child);
  installs[name] = undefined;
}

function urlOf(name: 'a' | 'b'): string {
  const install = installs[name];
  if (!install) throw new Error(`install ${name} is not running`);
  return install.url;
}

async function create(name: 'a' | 'b', title: string): Promise<string> {
  const res = await fetch(`${urlOf(name)}/api/v1/public/opportunities`, {
    method: 'POST',
    headers: { 'x-api-key': keys[name], 'content-type': 'application/json' },
    body: JSON.stringify({ title, product: 'auto', contact: { last_name: 'Martin' } }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { opportunity_id: string }).opportunity_id;
}

async function rename(name: 'a' | 'b', id: string, title: string): Promise<void> {
  const res = await fetch(`${urlOf(name)}/api/v1/public/opportunities/${id}`, {
    method: 'PATCH',
    headers: { 'x-api-key': keys[name], 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  expect(res.status).toBe(200);
}

async function titles(name: 'a' | 'b'): Promise<string[]> {
  const res = await fetch(`${urlOf(name)}/api/v1/public/opportunities?limit=100`, { headers: { 'x-api-key': keys[name] } });
  const body = (await res.json()) as { data: { title: string }[] };
  return body.data.map((o) => o.title).sort();
}

/** A request to an install's public API with its key; the status, and the body when there is one. */
async function api(name: 'a' | 'b', method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${urlOf(name)}/api/v1/public${path}`, {
    method,
    headers: { 'x-api-key': keys[name], ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
}

/** What `courtier sync status` says of an install (its data dir, read beside the running service). */
async function syncStatusOf(name: 'a' | 'b'): Promise<{ set_aside_changes: number; refused_by_hub: number; pending_changes: number }> {
  return JSON.parse(await courtier(['sync', 'status', '--cabinet', cabinet, '--json', '--data-dir', dirs[name]])) as {
    set_aside_changes: number;
    refused_by_hub: number;
    pending_changes: number;
  };
}

/** The rows of a table of an install's database whose JSON text holds `text`. */
function rowsHolding(name: 'a' | 'b', table: string, text: string): Promise<number> {
  return withDeps(dirs[name], (deps) => {
    const rows = deps.db.sqlite.prepare(`SELECT * FROM ${table}`).all();
    return rows.filter((row) => JSON.stringify(row).includes(text)).length;
  });
}

/**
 * Both installs hold exactly `expected` (each title once). Generous: after the hub was down, an
 * install retries with exponential backoff, up to a minute.
 */
async function bothHold(expected: string[]): Promise<void> {
  const wanted = [...expected].sort();
  for (const name of ['a', 'b'] as const)
    await eventually(
      () => titles(name),
      (t) => JSON.stringify(t) === JSON.stringify(wanted),
      `install ${name} holding ${wanted.join(', ')}`,
      90_000,
    );
}

beforeAll(async () => {
  pg = await startTestPostgres();
  databaseUrl = await pg.createDatabase();
  hubPort = await freePort();
  await startHub();
  dirs.a = tempDir();
  dirs.b = tempDir();
  ({ cabinet, key: keys.a } = await withDeps(dirs.a, async (deps) => {
    const { cabinet_id } = await initCabinet(deps, { cabinet: 'Cabinet Martin', email: 'a@martin.fr', password: PASSWORD });
    return { cabinet: cabinet_id, key: createApiKey(deps, cabinet_id, { name: 'a', environment: 'prod', scopes: [...CRM_SCOPES] }).key };
  }));
  const hubUrl = `http://127.0.0.1:${hubPort}`;
  await courtier([...syncConnectArgs(cabinet, hubUrl, await hubInvite(databaseUrl, { register: cabinet })), '--data-dir', dirs.a]);
  await courtier(
    [...syncJoinArgs(hubUrl, await hubInvite(databaseUrl, { join: cabinet }), 'b@martin.fr'), '--data-dir', dirs.b],
    `${PASSWORD}\n`,
  );
  keys.b = await withDeps(dirs.b, (deps) => createApiKey(deps, cabinet, { name: 'b', environment: 'prod', scopes: [...CRM_SCOPES] }).key);
  await startInstall('a');
  await startInstall('b');
}, 120_000);

afterAll(async () => {
  await Promise.all([stopInstall('a'), stopInstall('b'), stopChild(hub?.child)]);
  await pg?.stop();
  for (const dir of Object.values(dirs)) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a cabinet of two installs and a hub, each a real process', () => {
  const held: string[] = [];

  it('an install restored from a backup loses nothing: what it made after the backup comes back from the hub', async () => {
    await create('a', 'Avant la sauvegarde');
    held.push('Avant la sauvegarde');
    await bothHold(held);

    await stopInstall('a');
    const backup = tempDir('courtier-backup-');
    cpSync(dirs.a, backup, { recursive: true });
    await startInstall('a');
    await create('a', 'Après la sauvegarde');
    held.push('Après la sauvegarde');
    await bothHold(held);

    // The laptop's disk is replaced by last night's copy.
    await stopInstall('a');
    rmSync(dirs.a, { recursive: true, force: true });
    cpSync(backup, dirs.a, { recursive: true });
    rmSync(backup, { recursive: true, force: true });
    await startInstall('a');
    await create('a', 'Après la restauration');
    held.push('Après la restauration');
    await bothHold(held);
  }, 300_000);

  it('a hub restored from a backup gets back, from the installs, what it lost, once the operator says so', async () => {
    await create('a', 'Avant la copie du hub');
    held.push('Avant la copie du hub');
    await bothHold(held);

    // The operator's nightly copy of the hub's database.
    await stopChild(hub?.child);
    const admin = postgres(pg.url, { max: 1 });
    const copy = `hub_copy_${Date.now()}`;
    try {
      await admin.unsafe(`CREATE DATABASE ${copy} TEMPLATE ${new URL(databaseUrl).pathname.slice(1)}`);
    } finally {
      await admin.end();
    }
    await startHub();
    await create('b', 'Après la copie du hub');
    held.push('Après la copie du hub');
    await bothHold(held);

    // The hub's disk fails; its database comes back from the copy, which lacks the last record.
    await stopChild(hub?.child);
    databaseUrl = Object.assign(new URL(databaseUrl), { pathname: `/${copy}` }).toString();
    await courtier(['hub', 'restored', '--database-url', databaseUrl]);
    await startHub();
    await create('a', 'Après la restauration du hub');
    held.push('Après la restauration du hub');
    await bothHold(held);

    // The record the copy lacked is on the hub again, sent back by the install that made it.
    const hubDatabase = postgres(databaseUrl, { max: 1 });
    try {
      const copies = () =>
        hubDatabase<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = ${cabinet} AND fields->>'title' = 'Après la copie du hub'`;
      await eventually(copies, (rows) => (rows[0]?.n ?? 0) > 0, 'the lost record back on the hub', 90_000);
    } finally {
      await hubDatabase.end();
    }
  }, 400_000);

  it('an install disconnected and connected again sends what it made meanwhile, and an earlier edit never beats a later one', async () => {
    const shared = await create('a', 'Dossier partagé');
    held.push('Dossier partagé');
    await bothHold(held);

    await courtier(['sync', 'disconnect', '--cabinet', cabinet, '--data-dir', dirs.a]);
    await create('a', 'Créée hors synchro');
    await rename('a', shared, 'Dossier partagé (A, plus tôt)');
    // Wall clocks: B's edit comes later than A's, so it wins on both installs.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await rename('b', shared, 'Dossier partagé (B, plus tard)');

    await courtier([
      ...syncConnectArgs(cabinet, `http://127.0.0.1:${hubPort}`, await hubInvite(databaseUrl, { join: cabinet })),
      '--data-dir',
      dirs.a,
    ]);
    held.splice(held.indexOf('Dossier partagé'), 1, 'Dossier partagé (B, plus tard)', 'Créée hors synchro');
    await bothHold(held);
  }, 300_000);

  it('two installs sign the same quote while the hub is down: one contract on both once it is back, nothing set aside', async () => {
    const client = await api('a', 'POST', '/clients', { type: 'person', last_name: 'Petit', email: 'petit@exemple.fr' });
    expect(client.status).toBe(201);
    const clientId = (client.body as { client_id: string }).client_id;
    // A quote priced by a robot on A (its pricing is the robots' own test): written while A is stopped, sent once it starts.
    await stopInstall('a');
    const devisId = await withDeps(dirs.a, (deps) => {
      const quote = createDevis(deps, cabinet, { client_id: clientId, compagnie: 'sandbox', produit: 'auto', dicData: {} });
      recordDevisPriced(deps, cabinet, quote.devis_id, { tarifEur: 420 });
      return quote.devis_id;
    });
    await startInstall('a');
    await eventually(
      () => api('b', 'GET', `/devis/${devisId}`),
      (res) => res.status === 200 && (res.body as { status: string }).status === 'priced',
      'the priced quote on B',
      90_000,
    );

    await stopChild(hub?.child);
    expect((await api('a', 'POST', `/devis/${devisId}/sign`)).status).toBe(200);
    expect((await api('b', 'POST', `/devis/${devisId}/sign`)).status).toBe(200);
    await startHub();

    const contractsOf = (name: 'a' | 'b') =>
      withDeps(
        dirs[name],
        (deps) => deps.db.sqlite.prepare('SELECT id FROM contracts WHERE devis_id = ?').all(devisId) as { id: string }[],
      );
    const quiet = async (name: 'a' | 'b') => {
      const status = await syncStatusOf(name);
      return status.pending_changes === 0 ? status : undefined;
    };
    for (const name of ['a', 'b'] as const)
      await eventually(
        () => quiet(name),
        (status) => status !== undefined,
        `install ${name} quiet`,
        90_000,
      );
    const [onA, onB] = [await contractsOf('a'), await contractsOf('b')];
    expect(onA).toHaveLength(1);
    expect(onB).toEqual(onA);
    // Each install then makes a record after its contract: holding the other's, each has pulled past the other's contract.
    await create('a', 'Après les deux signatures, de A');
    await create('b', 'Après les deux signatures, de B');
    held.push('Après les deux signatures, de A', 'Après les deux signatures, de B');
    await bothHold(held);
    for (const name of ['a', 'b'] as const) expect(await syncStatusOf(name)).toMatchObject({ set_aside_changes: 0, refused_by_hub: 0 });
    expect(await contractsOf('b')).toEqual(await contractsOf('a'));
  }, 300_000);

  it('a client erased on one install leaves no personal data on the other or on the hub', async () => {
    const email = 'zoe.erasmus@exemple.fr';
    const client = await api('a', 'POST', '/clients', { type: 'person', last_name: 'Erasmus', first_name: 'Zoé', email });
    const clientId = (client.body as { client_id: string }).client_id;
    const opportunity = await api('a', 'POST', '/opportunities', {
      title: 'Habitation Erasmus',
      product: 'auto',
      contact: { last_name: 'Erasmus', email },
    });
    expect(opportunity.status).toBe(201);
    held.push('Habitation Erasmus');
    await bothHold(held);
    await eventually(
      () => api('b', 'GET', `/clients/${clientId}`),
      (res) => res.status === 200,
      'the client on B',
      90_000,
    );
    const hubHolding = async () => {
      const hubDatabase = postgres(databaseUrl, { max: 1 });
      try {
        const [found] = await hubDatabase<{ n: number }[]>`
          SELECT (SELECT count(*) FROM hub_changes WHERE cabinet_id = ${cabinet} AND fields::text LIKE ${`%${email}%`})
            + (SELECT count(*) FROM hub_records WHERE cabinet_id = ${cabinet} AND fields::text LIKE ${`%${email}%`}) AS n`;
        return Number(found?.n);
      } finally {
        await hubDatabase.end();
      }
    };
    // Where the checks below look, the data is found before the erasure.
    expect(await rowsHolding('b', 'clients', email)).toBe(1);
    expect(await rowsHolding('b', 'opportunities', email)).toBe(1);
    expect(await hubHolding()).toBeGreaterThan(0);

    expect((await api('a', 'DELETE', `/clients/${clientId}`)).status).toBe(204);
    await eventually(
      () => api('b', 'GET', `/clients/${clientId}`),
      (res) => res.status === 404,
      'the erasure on B',
      90_000,
    );
    for (const name of ['a', 'b'] as const)
      for (const table of ['clients', 'opportunities', 'events', 'sync_outbox', 'sync_conflicts', 'sync_refused'])
        expect(await rowsHolding(name, table, email), `${table} on ${name}`).toBe(0);
    expect(await hubHolding()).toBe(0);
  }, 300_000);

  it('text no hub can store is refused at the door, the field named, and nothing is queued', async () => {
    const before = (await syncStatusOf('a')).pending_changes;
    const refused = await api('a', 'POST', '/opportunities', {
      title: 'Nul\u0000 octet',
      product: 'auto',
      contact: { last_name: 'Martin' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'validation_error', details: [expect.objectContaining({ path: 'body.title' })] });
    expect((await syncStatusOf('a')).pending_changes).toBe(before);
    expect(await rowsHolding('a', 'opportunities', 'Nul')).toBe(0);
  });
});
