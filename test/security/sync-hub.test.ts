// @module-tag postgres
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import {
  MAX_CHANGE_BYTES,
  MAX_PULL_PAGE_BYTES,
  pullChanges,
  pushChanges,
  putBlob,
  SYNC_PROTOCOL_HEADER,
  type PullResponse,
  type SyncChange,
} from '../../shared/sync-protocol.js';
import { pairDevice } from '../../shared/sync-pairing.js';
import { formatHlc } from '../../shared/hlc.js';
import { revokeHubDevice } from '../../server/hub/admin.js';
import { sha256Hex } from '../../server/hub/credentials.js';
import { createInvite, PAIRING_ATTEMPTS_PER_WINDOW } from '../../server/hub/pairing.js';
import { runCourtier } from '../helpers/cli.js';
import { change, pairTestDevice, PROTOCOL, startHub, type TestDevice, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * A hostile device — a stolen or former laptop with a real device credential, speaking plain HTTP —
 * against the shared hub: what it pushes must not make other installs do anything (the protocol's
 * rules), and it must not exhaust the hub for other cabinets (sizes, quotas, concurrency), nor
 * keep receiving once revoked. Each attempt here succeeded on the hub before these rules.
 */

let pg: TestPostgres;
let hub: TestHub;
beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startHub(pg, {
    limits: { cabinetChanges: 40, cabinetChangeBytes: 3 * 1024 * 1024, cabinetBlobs: 2, cabinetBlobBytes: 1024 * 1024 },
  });
});
afterAll(async () => {
  await hub?.close();
  await pg?.stop();
});

/** A cabinet of its own with `n` devices (the first registers it). */
async function cabinet(n: number, on: TestHub = hub): Promise<TestDevice[]> {
  const id = `cab-${randomUUID()}`;
  const devices = [await pairTestDevice(on, { id })];
  for (let i = 1; i < n; i++) devices.push(await pairTestDevice(on, { id }, { join: true, name: `poste ${i}` }));
  return devices;
}

/** A change as the device itself stamps it (its own id in the clock). */
function by(device: TestDevice, number: number, overrides: Partial<SyncChange> = {}): SyncChange {
  return change(number, hub.clock.now(), {
    hlc: formatHlc({ time: hub.clock.now(), counter: number, device: device.device_id }),
    ...overrides,
  });
}

function push(device: TestDevice, batch: SyncChange[], on: TestHub = hub) {
  return on.request({ method: 'POST', url: pathTo(pushChanges), headers: device.headers, body: { changes: batch } });
}

function pull(device: TestDevice, query: { after?: number; limit?: number; wait?: number } = {}, on: TestHub = hub) {
  return on.request({ method: 'GET', url: pathTo(pullChanges, {}, query), headers: device.headers });
}

async function stored(cabinetId: string): Promise<number> {
  const [row] = await hub.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = ${cabinetId}`;
  return row?.n ?? 0;
}

describe('what a device may push: the protocol’s rules', () => {
  it('refuses a job with a column of the install that enqueued it or without its status, erasures of kinds never erased, tombstones that keep data, and a clock in another device’s name', async () => {
    const [thief, other] = await cabinet(2);
    const queued = { status: 'pending', compagnie: 'sandbox', produit: 'auto', dic_data: '{}' };
    const attempts: [string, SyncChange][] = [
      // An enqueue number is what makes an install's robots take a job for one of theirs.
      ['a job with an enqueue number', by(thief!, 1, { kind: 'job', record_id: randomUUID(), fields: { ...queued, enqueue_number: 1 } })],
      [
        'a job with a lease',
        by(thief!, 1, {
          kind: 'job',
          record_id: randomUUID(),
          fields: { ...queued, status: 'running', lease_until: hub.clock.now() + 60_000 },
        }),
      ],
      [
        'a job with an MFA challenge',
        by(thief!, 1, {
          kind: 'job',
          record_id: randomUUID(),
          fields: { ...queued, status: 'mfa_required', mfa_challenge: 'Entrez le code' },
        }),
      ],
      [
        'a job with a callback, artifacts or a timeline',
        by(thief!, 1, {
          kind: 'job',
          record_id: randomUUID(),
          fields: { ...queued, callback_webhook_id: randomUUID(), artifacts: '{}', timeline: '[]' },
        }),
      ],
      ['a job without status', by(thief!, 1, { kind: 'job', record_id: randomUUID(), fields: { compagnie: 'sandbox' } })],
      [
        'a job with a status that is none',
        by(thief!, 1, { kind: 'job', record_id: randomUUID(), fields: { ...queued, status: 'claimed' } }),
      ],
      ['an erasure of a contract', by(thief!, 1, { kind: 'contract', op: 'erase', record_id: randomUUID(), fields: { premium_cents: 1 } })],
      ['an erasure of a quote', by(thief!, 1, { kind: 'devis', op: 'erase', record_id: randomUUID(), fields: {} })],
      [
        'a client tombstone that keeps a name',
        by(thief!, 1, { op: 'erase', record_id: randomUUID(), fields: { last_name: 'Figé', erased_at: 1 } }),
      ],
      [
        'a client tombstone with other fields',
        by(thief!, 1, { op: 'erase', record_id: randomUUID(), fields: { erased_at: 1, stage: 'won' } }),
      ],
      [
        'an event erasure that keeps contact data',
        by(thief!, 1, {
          kind: 'event',
          op: 'erase',
          record_id: randomUUID(),
          fields: { type: 'client.updated', data: JSON.stringify({ email: 'x@y.fr' }) },
        }),
      ],
      [
        'an erasure of another event type',
        by(thief!, 1, { kind: 'event', op: 'erase', record_id: randomUUID(), fields: { type: 'contract.signed', data: '{}' } }),
      ],
      [
        'a clock in another device’s name',
        by(thief!, 1, { hlc: formatHlc({ time: hub.clock.now(), counter: 0, device: other!.device_id }) }),
      ],
    ];
    for (const [what, attempt] of attempts) {
      const res = await push(thief!, [attempt]);
      expect(res.statusCode, what).toBe(400);
      expect(res.json().error, what).toBe('validation_error');
    }
    expect(await stored(thief!.cabinet_id)).toBe(0);
    // What an honest install sends still goes: a job queued, running and finished, a client's tombstone, an event cleared of its contact.
    const jobId = randomUUID();
    const fine = await push(thief!, [
      by(thief!, 1, { kind: 'job', record_id: jobId, fields: queued }),
      by(thief!, 2, { kind: 'job', record_id: jobId, fields: { ...queued, status: 'running' } }),
      by(thief!, 3, { kind: 'job', record_id: jobId, fields: { ...queued, status: 'completed' } }),
      by(thief!, 4, { op: 'erase', record_id: randomUUID(), fields: { type: 'person', last_name: null, email: null, erased_at: 1 } }),
      by(thief!, 5, {
        kind: 'event',
        op: 'erase',
        record_id: randomUUID(),
        fields: { type: 'client.updated', version: '1', created_at: 1, data: JSON.stringify({ client_id: randomUUID(), email: null }) },
      }),
    ]);
    expect(fine.statusCode, fine.body).toBe(200);
  });

  it('refuses a change over 256 KiB of fields, whole batch, nothing stored', async () => {
    const [thief] = await cabinet(1);
    const big = 'x'.repeat(MAX_CHANGE_BYTES);
    const res = await push(thief!, [by(thief!, 1), by(thief!, 2, { fields: { last_name: big } })]);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: 'payload_too_large', details: { number: 2, limit: MAX_CHANGE_BYTES } });
    expect(await stored(thief!.cabinet_id)).toBe(0);
    // Measured as PostgreSQL writes it out, which is what a pull sends: 45 KB of 1e308 is 2.3 MB there.
    const swollen = await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: thief!.headers,
      body: { changes: [by(thief!, 1, { fields: { last_name: Array.from({ length: 7500 }, () => 1e308) } })] },
    });
    expect(swollen.statusCode).toBe(413);
    expect(swollen.json().details.bytes).toBeGreaterThan(2_000_000);
    expect(await stored(thief!.cabinet_id)).toBe(0);
  });
});

describe('what a cabinet may store: quotas', () => {
  it('refuses changes past the cabinet’s count or bytes with hub_quota_exceeded, storing nothing of the batch, and other cabinets are untouched', async () => {
    const [thief] = await cabinet(1);
    const [neighbour] = await cabinet(1);
    const batch = (from: number, count: number, bytes = 10) =>
      Array.from({ length: count }, (_, i) => by(thief!, from + i, { record_id: randomUUID(), fields: { last_name: 'n'.repeat(bytes) } }));
    expect((await push(thief!, batch(1, 30))).statusCode).toBe(200);
    const over = await push(thief!, batch(31, 11));
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ error: 'hub_quota_exceeded', details: { quota: 'changes', limit: 40 } });
    expect(await stored(thief!.cabinet_id)).toBe(30);
    expect((await push(thief!, batch(31, 10))).statusCode).toBe(200);
    expect((await push(thief!, batch(41, 1))).json()).toMatchObject({ error: 'hub_quota_exceeded' });
    // Bytes: large changes reach the byte quota first.
    const [heavy] = await cabinet(1);
    const large = (n: number) => by(heavy!, n, { record_id: randomUUID(), fields: { last_name: 'x'.repeat(MAX_CHANGE_BYTES - 100) } });
    const accepted: number[] = [];
    for (let n = 1; n <= 14; n++) {
      const res = await push(heavy!, [large(n)]);
      if (res.statusCode !== 200) {
        expect(res.json()).toMatchObject({ error: 'hub_quota_exceeded', details: { quota: 'change_bytes' } });
        break;
      }
      accepted.push(n);
    }
    expect(accepted).toHaveLength(12);
    expect(
      (
        await push(
          neighbour!,
          batch(1, 1).map((c) => ({ ...c, hlc: formatHlc({ time: hub.clock.now(), counter: 1, device: neighbour!.device_id }) })),
        )
      ).statusCode,
    ).toBe(200);
  });

  it('refuses PDFs past the cabinet’s count or bytes', async () => {
    const [thief] = await cabinet(1);
    const put = (bytes: Buffer) =>
      hub.request({
        method: 'PUT',
        url: pathTo(putBlob, { sha256: sha256Hex(bytes) }),
        headers: { ...thief!.headers, 'content-type': 'application/octet-stream' },
        payload: bytes,
      });
    expect((await put(Buffer.from('%PDF one'))).statusCode).toBe(200);
    expect((await put(Buffer.from('%PDF one'))).statusCode).toBe(200);
    expect((await put(Buffer.from('%PDF two'))).statusCode).toBe(200);
    const third = await put(Buffer.from('%PDF three'));
    expect(third.statusCode).toBe(409);
    expect(third.json()).toMatchObject({ error: 'hub_quota_exceeded', details: { quota: 'blobs', limit: 2 } });
    const [other] = await cabinet(1);
    const big = Buffer.alloc(1024 * 1024 + 1, 1);
    const tooBig = await hub.request({
      method: 'PUT',
      url: pathTo(putBlob, { sha256: sha256Hex(big) }),
      headers: { ...other!.headers, 'content-type': 'application/octet-stream' },
      payload: big,
    });
    expect(tooBig.json()).toMatchObject({ error: 'hub_quota_exceeded', details: { quota: 'blob_bytes' } });
    const [row] = await hub.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_blobs WHERE cabinet_id = ${other!.cabinet_id}`;
    expect(row?.n).toBe(0);
  });
});

describe('what a pull answers: a page of bounded size', () => {
  it('stops a page before 4 MiB of fields (at least one change always comes) and says more', async () => {
    const big = await startHub(pg);
    try {
      const [writer, reader] = await cabinet(2, big);
      const size = MAX_CHANGE_BYTES - 1000;
      for (let n = 1; n <= 40; n += 8) {
        const batch = Array.from({ length: 8 }, (_, i) =>
          change(n + i, big.clock.now(), {
            hlc: formatHlc({ time: big.clock.now(), counter: n + i, device: writer!.device_id }),
            record_id: randomUUID(),
            fields: { last_name: 'x'.repeat(size) },
          }),
        );
        expect((await push(writer!, batch, big)).statusCode).toBe(200);
      }
      let after = 0;
      const pages: number[] = [];
      for (;;) {
        const res = await pull(reader!, { after, limit: 1000 }, big);
        const page = res.json<PullResponse>();
        expect(Buffer.byteLength(res.body)).toBeLessThan(MAX_PULL_PAGE_BYTES + MAX_CHANGE_BYTES + 64 * 1024);
        pages.push(page.changes.length);
        after = page.last_seq;
        if (!page.more) break;
      }
      expect(pages.reduce((a, b) => a + b, 0)).toBe(40);
      expect(Math.max(...pages)).toBeLessThanOrEqual(Math.ceil(MAX_PULL_PAGE_BYTES / size));
      expect(pages.length).toBeGreaterThan(2);
    } finally {
      await big.close();
    }
  });
});

describe('what one device may hold open', () => {
  it('at most 2 long polls and 8 requests at once per device on a hub process (429 with Retry-After); others are not affected', async () => {
    // A new cabinet: nothing after 0, so these pulls wait (a cursor past its newest seq is answered at once).
    const [thief, honest] = await cabinet(2);
    const polls = Array.from({ length: 2 }, () => pull(thief!, { after: 0, wait: 5 }));
    for (let i = 0; i < 500 && hub.app.hubWaiters.count() < 2; i++) await sleep(10);
    const third = await pull(thief!, { after: 0, wait: 5 });
    expect(third.statusCode).toBe(429);
    expect(third.json().error).toBe('sync_too_many_requests');
    expect(third.headers['retry-after']).toBe('1');
    // The honest device of the same cabinet still long-polls.
    const honestPoll = pull(honest!, { after: 0, wait: 1 });
    expect((await honestPoll).statusCode).toBe(200);
    await Promise.all(polls);
    // Once answered, the device may poll again.
    expect((await pull(thief!, { after: 0 })).statusCode).toBe(200);
  });

  it('a revoked device’s waiting long poll ends at once, on every hub process, with nothing', async () => {
    const other = await startHub(pg, { databaseUrl: hub.databaseUrl });
    try {
      const [thief, writer] = await cabinet(2);
      const started = Date.now();
      const waiting = pull(thief!, { after: 0, wait: 30 }, other);
      for (let i = 0; i < 500 && other.app.hubWaiters.count() < 1; i++) await sleep(10);
      await revokeHubDevice(hub.deps, thief!.device_id);
      const answer = await waiting;
      expect(answer.statusCode).toBe(401);
      expect(answer.json().error).toBe('device_revoked');
      expect(Date.now() - started).toBeLessThan(10_000);
      // And what is pushed after the revocation never reaches it.
      expect((await push(writer!, [by(writer!, 1)])).statusCode).toBe(200);
      expect((await pull(thief!, {}, other)).statusCode).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe('pairing, which anyone may call', () => {
  it('refuses a body over 4 KiB before reading it, and an address over its limit before its body is parsed', async () => {
    const huge = { code: 'X', device_name: 'x'.repeat(8 * 1024 * 1024) };
    const res = await hub.request({ method: 'POST', url: pathTo(pairDevice), headers: PROTOCOL, body: huge });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toBe('payload_too_large');
    // Nor any path a stranger may make up: Fastify reads a body before it answers 404.
    const nowhere = await hub.request({ method: 'POST', url: '/sync/v1/nowhere', body: huge });
    expect(nowhere.statusCode).toBe(413);
    const address = '198.51.100.77';
    for (let i = 0; i < PAIRING_ATTEMPTS_PER_WINDOW; i++) {
      await hub.app.inject({
        method: 'POST',
        url: pathTo(pairDevice),
        headers: { 'content-type': 'application/json', ...PROTOCOL },
        payload: JSON.stringify({ code: `WRONG-${i}`, device_name: 'x' }),
        remoteAddress: address,
      });
    }
    // Over the limit: refused even when the body is not JSON at all, so it was never parsed.
    const refused = await hub.app.inject({
      method: 'POST',
      url: pathTo(pairDevice),
      headers: { 'content-type': 'application/json', ...PROTOCOL },
      payload: '{not json',
      remoteAddress: address,
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toBe('too_many_pairing_attempts');
  });

  it('a protocol above the hub’s is refused and never raises the cabinet’s (which would shut out every install); the operator can reset it', async () => {
    const [device] = await cabinet(1);
    const ahead = await hub.request({
      method: 'GET',
      url: pathTo(pullChanges),
      headers: { ...device!.headers, [SYNC_PROTOCOL_HEADER]: '999999999' },
    });
    expect(ahead.statusCode).toBe(400);
    expect(ahead.json().error).toBe('sync_protocol_unsupported');
    expect((await pull(device!)).statusCode).toBe(200);
    // A cabinet raised before this rule (or by a newer hub rolled back) is reset by the operator.
    await hub.deps.sql`UPDATE hub_cabinets SET highest_protocol = 999999999 WHERE id = ${device!.cabinet_id}`;
    expect((await pull(device!)).statusCode).toBe(426);
    const reset = await runCourtier([
      'hub',
      'cabinets',
      'reset-protocol',
      '--cabinet',
      device!.cabinet_id,
      '--json',
      '--database-url',
      hub.databaseUrl,
    ]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toEqual({ cabinet_id: device!.cabinet_id, highest_protocol: 1 });
    expect((await pull(device!)).statusCode).toBe(200);
  });

  it('a name written before the rule reaches the operator’s terminal escaped', async () => {
    const [device] = await cabinet(1);
    await hub.deps.sql`UPDATE hub_devices SET name = ${'poste\u001b[2K\r' + 'dev-legit\u202e'} WHERE id = ${device!.device_id}`;
    const listed = await runCourtier(['hub', 'devices', 'list', '--cabinet', device!.cabinet_id, '--database-url', hub.databaseUrl]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('poste\\u001b[2K\\u000ddev-legit\\u202e');
    expect(listed.stdout).not.toMatch(/[\u001b\r\u202e]/);
  });
});

describe('the operator’s codes', () => {
  it('an attacker who knows a victim’s cabinet id cannot register it, even with a code of their own', async () => {
    const victim = randomUUID();
    const theirs = await createInvite(hub.deps, { register: randomUUID() });
    const squat = await hub.request({
      method: 'POST',
      url: pathTo(pairDevice),
      headers: PROTOCOL,
      body: { code: theirs.code, device_name: 'x', cabinet: { id: victim, name: 'Victime' } },
    });
    expect(squat.statusCode).toBe(401);
    const [row] = await hub.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_cabinets WHERE id = ${victim}`;
    expect(row?.n).toBe(0);
  });
});

describe('the hub’s audit log', () => {
  it('records pairings (and refused ones, with the address), devices leaving or revoked and the operator’s commands, in a chain that shows an edit', async () => {
    const id = `cab-${randomUUID()}`;
    const invited = await runCourtier(['hub', 'invite', '--new-cabinet', id, '--json', '--database-url', hub.databaseUrl]);
    expect(invited.code, invited.stderr).toBe(0);
    const code = (JSON.parse(invited.stdout) as { code: string }).code;
    const refused = await hub.app.inject({
      method: 'POST',
      url: pathTo(pairDevice),
      headers: { 'content-type': 'application/json', ...PROTOCOL },
      payload: JSON.stringify({ code, device_name: 'intrus', cabinet: { id: 'cab-victim', name: 'V' } }),
      remoteAddress: '203.0.113.9',
    });
    expect(refused.statusCode).toBe(401);
    const paired = await hub.app.inject({
      method: 'POST',
      url: pathTo(pairDevice),
      headers: { 'content-type': 'application/json', ...PROTOCOL },
      payload: JSON.stringify({ code, device_name: 'Accueil', cabinet: { id, name: 'Audit' } }),
      remoteAddress: '203.0.113.10',
    });
    expect(paired.statusCode).toBe(201);
    const device = paired.json<{ device_id: string; device_secret: string }>();
    const second = await pairTestDevice(hub, { id }, { join: true, name: 'Portable' });
    const left = await hub.request({ method: 'DELETE' as 'GET', url: '/sync/v1/device', headers: second.headers });
    expect(left.statusCode).toBe(200);
    expect((await runCourtier(['hub', 'devices', 'revoke', '--device', device.device_id, '--database-url', hub.databaseUrl])).code).toBe(0);

    const listed = await runCourtier(['hub', 'audit', 'list', '--cabinet', id, '--json', '--database-url', hub.databaseUrl]);
    expect(listed.code, listed.stderr + listed.stdout).toBe(0);
    const entries = (
      JSON.parse(listed.stdout) as {
        data: {
          action: string;
          result: string;
          actor: { kind: string; label: string | null };
          address: string | null;
          target: string | null;
        }[];
      }
    ).data;
    expect(entries.map((e) => e.action)).toEqual([
      'hub.device_revoked',
      'hub.device_left',
      'hub.device_paired',
      'hub.device_paired',
      'hub.invite_created',
    ]);
    expect(entries.find((e) => e.action === 'hub.device_revoked')).toMatchObject({ actor: { kind: 'operator' }, target: device.device_id });
    expect(entries.find((e) => e.action === 'hub.device_left')).toMatchObject({
      actor: { kind: 'device', label: 'Portable' },
      target: second.device_id,
    });
    expect(entries.at(-2)).toMatchObject({ actor: { kind: 'anonymous' }, address: '203.0.113.10', target: device.device_id });
    const all = await runCourtier(['hub', 'audit', 'list', '--json', '--database-url', hub.databaseUrl]);
    const refusal = (
      JSON.parse(all.stdout) as { data: { action: string; address: string; result: string; details: Record<string, unknown> }[] }
    ).data.find((e) => e.address === '203.0.113.9');
    expect(refusal).toMatchObject({
      action: 'hub.pairing_refused',
      result: 'failure',
      details: { code: 'invalid_pairing_code', cabinet_brought: 'cab-victim' },
    });

    const verify = () => runCourtier(['hub', 'audit', 'verify', '--json', '--database-url', hub.databaseUrl]);
    const intact = await verify();
    expect(intact.code).toBe(0);
    expect(JSON.parse(intact.stdout)).toMatchObject({ ok: true, broken: null });
    const [row] = await hub.deps.sql<
      { seq: string }[]
    >`SELECT seq FROM hub_audit_events WHERE action = 'hub.device_revoked' ORDER BY seq DESC LIMIT 1`;
    await hub.deps.sql`UPDATE hub_audit_events SET target = 'someone-else' WHERE seq = ${row!.seq}`;
    const broken = await verify();
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, broken: { seq: Number(row!.seq), action: 'hub.device_revoked' } });
  });
});
