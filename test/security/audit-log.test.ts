import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatHlc } from '../../shared/hlc.js';
import { listAudit, purgeExpiredAudit, recordAudit, SYSTEM_ACTOR, verifyAudit } from '../../server/audit/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { runCourtier } from '../helpers/cli.js';
import { consoleClient } from '../helpers/console.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeHub, type FakeHub } from '../helpers/fake-hub.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * CWE-778 (insufficient logging) and CWE-117/CWE-345 (a log that can be altered unseen): what an
 * administrator must be able to see afterwards is in the audit log — a cabinet uploaded to a hub,
 * credentials deleted, the desktop's one-time sign-in, data sharing with AI, credits, an erasure
 * that came from another install — and the log is a chain of seals that `courtier audit verify`
 * walks: an entry changed, removed or slipped in is named.
 */

const ADMIN = { email: 'admin@audit.fr', password: 'correct horse battery' };
const FAST_SYNC = { scanIntervalMs: 100, pullWaitSeconds: 1, pushIntervalMs: 200, refusedRetryMs: 200, maxBackoffMs: 500 };
const token = randomBytes(32).toString('base64url');
const clock = testClock(Date.UTC(2026, 11, 1, 9, 0, 0));
let server: TestServer;
let hub: FakeHub;
let cabinetId: string;

beforeAll(async () => {
  hub = await startFakeHub();
  server = await startTestServer({
    clock,
    insurers: [createTestInsurer()],
    sync: FAST_SYNC,
    config: { desktopLoginTokenSha256: createHash('sha256').update(token).digest('hex') },
  });
  ({ cabinet_id: cabinetId } = await initCabinet(server.deps, { cabinet: 'Cabinet Audit', ...ADMIN }));
});
afterAll(async () => {
  await server?.close();
  await hub?.close();
});

const actions = () => listAudit(server.deps, cabinetId, { limit: 500 });

describe('what the audit log records', () => {
  it('the console’s sync connect (with the hub’s host), pause, resume and disconnect, by whom', async () => {
    const admin = await consoleClient(server, ADMIN);
    const connected = await admin.request('/api/v1/console/sync/connect', {
      method: 'POST',
      json: { hub_url: hub.url, code: 'ANY-CODE', device_name: 'Poste audit' },
    });
    expect(connected.status, await connected.clone().text()).toBe(200);
    expect((await admin.request('/api/v1/console/sync/pause', { method: 'POST' })).status).toBe(200);
    expect((await admin.request('/api/v1/console/sync/resume', { method: 'POST' })).status).toBe(200);
    const entry = actions().find((e) => e.action === 'sync.connected');
    expect(entry).toMatchObject({
      actor: { kind: 'user', label: ADMIN.email },
      details: { hub: new URL(hub.url).host, device_name: 'Poste audit' },
    });
    expect(JSON.stringify(entry)).not.toContain('secret');
    expect(actions().map((e) => e.action)).toEqual(expect.arrayContaining(['sync.paused', 'sync.resumed']));
  });

  it('an erasure and refused changes that came from another install, with the device they came from', async () => {
    const clientId = randomUUID();
    const remote = randomUUID();
    const hlc = (counter: number) => formatHlc({ time: clock.now(), counter, device: remote });
    const client = {
      type: 'person',
      last_name: 'Durand',
      first_name: null,
      company_name: null,
      siret: null,
      email: null,
      phone: null,
      address: null,
      birth_date: null,
      created_at: clock.now(),
      updated_at: clock.now(),
      erased_at: null,
    };
    hub.pages.push({
      after: 0,
      changes: [
        { seq: 1, device_id: remote, kind: 'client', record_id: clientId, op: 'upsert', hlc: hlc(1), fields: client },
        {
          seq: 2,
          device_id: remote,
          kind: 'client',
          record_id: clientId,
          op: 'erase',
          hlc: hlc(2),
          fields: { ...client, last_name: null, erased_at: clock.now() },
        },
        { seq: 3, device_id: remote, kind: 'contract', record_id: randomUUID(), op: 'erase', hlc: hlc(3), fields: { premium_cents: 1 } },
      ],
      last_seq: 3,
    });
    await eventually(
      () => actions(),
      (entries) => entries.some((e) => e.action === 'sync.changes_set_aside'),
      'the page’s audit entries',
    );
    expect(actions().find((e) => e.action === 'sync.erasure_applied')).toMatchObject({
      actor: { kind: 'system' },
      target: clientId,
      details: { device_id: remote },
    });
    expect(actions().find((e) => e.action === 'sync.changes_set_aside')).toMatchObject({
      result: 'failure',
      details: { count: 1, devices: [remote], reasons: ['operation_refused'] },
    });
    // The console's Sync page lists them for administrators.
    const admin = await consoleClient(server, ADMIN);
    expect(((await (await admin.request('/api/v1/console/sync')).json()) as { set_aside_changes: number }).set_aside_changes).toBe(1);
    const listed = (await (await admin.request('/api/v1/console/sync/conflicts')).json()) as {
      data: { seq: number; reason: string; device_id: string }[];
    };
    expect(listed.data).toEqual([expect.objectContaining({ seq: 3, reason: 'operation_refused', device_id: remote })]);
  });

  it('insurer credentials deleted, AI data sharing changed, the desktop’s one-time sign-in, a disconnect, and the CLI’s credit grants', async () => {
    const admin = await consoleClient(server, ADMIN);
    setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'l', password: 'p' });
    expect((await admin.request('/api/v1/console/insurers/testco/credentials', { method: 'DELETE' })).status).toBe(204);
    expect((await admin.request('/api/v1/console/settings', { method: 'PATCH', json: { llm_data_sharing: true } })).status).toBe(200);
    const desktop = await server.request(`/console/desktop-login?token=${token}`, { redirect: 'manual' });
    expect(desktop.headers.get('location')).toBe('/console/');
    // Credits are granted on the install once the cabinet no longer syncs (with sync on, the hub keeps them).
    expect((await admin.request('/api/v1/console/sync', { method: 'DELETE' })).status).toBe(200);
    expect(actions().find((e) => e.action === 'sync.disconnected')).toMatchObject({
      actor: { label: ADMIN.email },
      details: { left_hub: true },
    });
    const granted = await runCourtier([
      'credits',
      'grant',
      '--cabinet',
      cabinetId,
      '--amount',
      '25',
      '--note',
      'avoir',
      '--data-dir',
      server.dataDir,
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    const byAction = new Map(actions().map((e) => [e.action, e]));
    expect(byAction.get('insurer_credentials.deleted')).toMatchObject({ target: 'testco', actor: { label: ADMIN.email } });
    expect(byAction.get('settings.llm_data_sharing_changed')).toMatchObject({ details: { llm_data_sharing: true } });
    expect(byAction.get('console.desktop_signed_in')).toMatchObject({ actor: { kind: 'user', label: ADMIN.email }, listener: 'loopback' });
    expect(byAction.get('credits.granted')).toMatchObject({ actor: { kind: 'cli' }, details: { amount: 25, balance: 25, note: 'avoir' } });
  });
});

describe('the chain of seals', () => {
  it('verifies intact, then names the entry that was changed, removed or slipped in', async () => {
    const verify = async () => {
      const result = await runCourtier(['audit', 'verify', '--json', '--data-dir', server.dataDir]);
      return {
        code: result.code,
        body: JSON.parse(result.stdout) as { ok: boolean; checked: number; head: string | null; broken: { id: string } | null },
      };
    };
    const intact = await verify();
    expect(intact.code).toBe(0);
    expect(intact.body).toMatchObject({ ok: true, broken: null });
    expect(intact.body.checked).toBeGreaterThan(10);
    expect(intact.body.head).toMatch(/^[0-9a-f]{64}$/);

    const rows = server.withOtherConnection(
      (db) =>
        db.prepare('SELECT rowid, id, details FROM audit_events ORDER BY rowid').all() as { rowid: number; id: string; details: string }[],
    );
    const victim = rows[3]!;
    // Changed: a detail rewritten in the database.
    server.withOtherConnection((db) =>
      db.prepare('UPDATE audit_events SET details = ? WHERE rowid = ?').run('{"reason":"rewritten"}', victim.rowid),
    );
    const changed = await verify();
    expect(changed.code).toBe(1);
    expect(changed.body).toMatchObject({ ok: false, broken: { id: victim.id } });
    server.withOtherConnection((db) => db.prepare('UPDATE audit_events SET details = ? WHERE rowid = ?').run(victim.details, victim.rowid));
    expect((await verify()).code).toBe(0);

    // Removed: the entry after it is named.
    const removed = rows[5]!;
    const saved = server.withOtherConnection(
      (db) => db.prepare('SELECT * FROM audit_events WHERE rowid = ?').get(removed.rowid) as Record<string, unknown>,
    );
    server.withOtherConnection((db) => db.prepare('DELETE FROM audit_events WHERE rowid = ?').run(removed.rowid));
    expect((await verify()).body).toMatchObject({ ok: false, broken: { id: rows[6]!.id } });
    server.withOtherConnection((db) => {
      const names = Object.keys(saved);
      db.prepare(`INSERT INTO audit_events (rowid, ${names.join(', ')}) VALUES (?, ${names.map(() => '?').join(', ')})`).run(
        removed.rowid,
        ...(Object.values(saved) as never[]),
      );
    });
    // Slipped in: an entry written straight into the table cannot carry a valid seal.
    const forged = randomUUID();
    server.withOtherConnection((db) =>
      db
        .prepare(
          "INSERT INTO audit_events (id, cabinet_id, at, action, result, actor_kind, listener, details, chain) VALUES (?, ?, ?, 'api_key.revoked', 'success', 'cli', 'cli', '{}', ?)",
        )
        .run(forged, cabinetId, clock.now(), 'f'.repeat(64)),
    );
    expect((await verify()).body).toMatchObject({ ok: false, broken: { id: forged } });
    server.withOtherConnection((db) => db.prepare('DELETE FROM audit_events WHERE id = ?').run(forged));
    const human = await runCourtier(['audit', 'verify', '--data-dir', server.dataDir]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^The audit log is intact: \d+ entries checked\. Newest seal: [0-9a-f]{64}/);
  });

  it('rows written before the log was chained are sealed once; after that a row without a seal is a break, never sealed again', () => {
    // As a log written before the chain: no start, no seals.
    server.withOtherConnection((db) => {
      db.prepare('DELETE FROM audit_chain_start').run();
      db.prepare("UPDATE audit_events SET chain = ''").run();
    });
    recordAudit(server.deps, { cabinetId, action: 'robots.paused', actor: SYSTEM_ACTOR, details: { reason: 'test' } });
    expect(verifyAudit(server.deps)).toMatchObject({ ok: true, broken: null });
    expect(server.withOtherConnection((db) => db.prepare("SELECT count(*) AS n FROM audit_events WHERE chain = ''").get())).toEqual({
      n: 0,
    });
    // Now a seal blanked in the database is a break, and the next entry does not heal it.
    const victim = server.withOtherConnection(
      (db) => db.prepare('SELECT rowid, id FROM audit_events ORDER BY rowid LIMIT 1 OFFSET 2').get() as { rowid: number; id: string },
    );
    const seal = server.withOtherConnection(
      (db) => (db.prepare('SELECT chain FROM audit_events WHERE rowid = ?').get(victim.rowid) as { chain: string }).chain,
    );
    server.withOtherConnection((db) => db.prepare("UPDATE audit_events SET chain = '' WHERE rowid = ?").run(victim.rowid));
    recordAudit(server.deps, { cabinetId, action: 'robots.resumed', actor: SYSTEM_ACTOR });
    expect(verifyAudit(server.deps)).toMatchObject({ ok: false, broken: { id: victim.id } });
    server.withOtherConnection((db) => db.prepare('UPDATE audit_events SET chain = ? WHERE rowid = ?').run(seal, victim.rowid));
    expect(verifyAudit(server.deps)).toMatchObject({ ok: true });
  });

  it('rows removed from the start, with where the chain starts moved to hide it, are seen', () => {
    const [first, second] = server.withOtherConnection(
      (db) => db.prepare('SELECT rowid, chain FROM audit_events ORDER BY rowid LIMIT 2').all() as { rowid: number; chain: string }[],
    );
    const saved = server.withOtherConnection((db) => ({
      row: db.prepare('SELECT * FROM audit_events WHERE rowid = ?').get(first!.rowid) as Record<string, unknown>,
      start: db.prepare('SELECT * FROM audit_chain_start').get() as Record<string, unknown>,
    }));
    server.withOtherConnection((db) => {
      db.prepare('DELETE FROM audit_events WHERE rowid = ?').run(first!.rowid);
      db.prepare('UPDATE audit_chain_start SET chain = ?, purged = purged + 1').run(first!.chain);
    });
    expect(verifyAudit(server.deps)).toMatchObject({ ok: false, broken: { id: 'start' } });
    server.withOtherConnection((db) => {
      const names = Object.keys(saved.row);
      db.prepare(`INSERT INTO audit_events (rowid, ${names.join(', ')}) VALUES (?, ${names.map(() => '?').join(', ')})`).run(
        first!.rowid,
        ...(Object.values(saved.row) as never[]),
      );
      db.prepare('UPDATE audit_chain_start SET chain = ?, purged = ?').run(saved.start.chain, saved.start.purged);
    });
    expect(verifyAudit(server.deps)).toMatchObject({ ok: true });
    expect(second).toBeDefined();
  });

  it('keeps a year of the log’s own time: a clock set years ahead, and entries written with it, remove nothing', () => {
    const before = actions().length;
    clock.advance(3 * 366 * 86_400_000);
    recordAudit(server.deps, { cabinetId, action: 'robots.paused', actor: SYSTEM_ACTOR, details: { reason: 'clock ahead' } });
    expect(purgeExpiredAudit(server.deps)).toBe(0);
    expect(actions()).toHaveLength(before + 1);
    // A year of ordinary use, an entry every six days: what it leaves behind goes, the chain goes on.
    for (let day = 0; day < 372; day += 6) {
      clock.advance(6 * 86_400_000);
      recordAudit(server.deps, { cabinetId, action: 'robots.resumed', actor: SYSTEM_ACTOR, details: { day } });
    }
    const removed = purgeExpiredAudit(server.deps);
    expect(removed).toBeGreaterThan(before);
    expect(actions().every((e) => e.action === 'robots.resumed')).toBe(true);
    expect(verifyAudit(server.deps)).toMatchObject({ ok: true, purged: removed });
  });
});
