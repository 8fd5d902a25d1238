// @module-tag postgres
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import {
  DEVICE_TIME_HEADER,
  HUB_TIME_HEADER,
  MAX_CLOCK_AHEAD_MS,
  pullChanges,
  pushChanges,
  SYNC_PROTOCOL_HEADER,
  type PulledChange,
  type SyncChange,
} from '../../shared/sync-protocol.js';
import { formatHlc } from '../../shared/hlc.js';
import { change, changes, pairTestDevice, startHub, type TestDevice, type TestHub, stampedBy } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

let pg: TestPostgres;
let hub: TestHub;
beforeAll(async () => {
  pg = await startTestPostgres();
  // A hub that speaks protocols up to 3, to see two versions of installs side by side.
  hub = await startHub(pg, { protocol: 3 });
});
afterAll(async () => {
  await hub.close();
  await pg.stop();
});

function push(device: TestDevice, batch: SyncChange[], headers: Record<string, string> = {}) {
  return hub.request({
    method: 'POST',
    url: pathTo(pushChanges),
    headers: { ...device.headers, ...headers },
    body: { changes: stampedBy(device, batch) },
  });
}

async function pull(
  device: TestDevice,
  query: { after?: number; limit?: number; wait?: number } = {},
  headers: Record<string, string> = {},
) {
  return hub.request({ method: 'GET', url: pathTo(pullChanges, {}, query), headers: { ...device.headers, ...headers } });
}

async function rowCount(cabinetId: string): Promise<number> {
  const [row] = await hub.deps.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_changes WHERE cabinet_id = ${cabinetId}`;
  return row!.n;
}

let cabinets = 0;
async function newCabinet(devices = 2): Promise<TestDevice[]> {
  const id = `cab-${++cabinets}`;
  const first = await pairTestDevice(hub, { id });
  const others = await Promise.all(
    Array.from({ length: devices - 1 }, (_, i) => pairTestDevice(hub, { id }, { join: true, name: `poste ${i + 2}` })),
  );
  return [first, ...others];
}

describe('push', () => {
  it('stores a batch and acknowledges its last number; a replay stores nothing and gets the same answer', async () => {
    const [a] = await newCabinet(1);
    const now = hub.clock.now();
    const first = await push(a!, changes(1, 5, now));
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ acknowledged_number: 5, hub_time: new Date(now).toISOString() });
    expect(first.headers[HUB_TIME_HEADER]).toBe(String(now));
    const replay = await push(a!, changes(1, 5, now));
    expect(replay.json().acknowledged_number).toBe(5);
    // Overlapping: 4 and 5 are known, 6 and 7 are new.
    const overlap = await push(a!, changes(4, 4, now));
    expect(overlap.json().acknowledged_number).toBe(7);
    expect(await rowCount(a!.cabinet_id)).toBe(7);
    const numbers = await hub.deps.sql<
      { number: string }[]
    >`SELECT number FROM hub_changes WHERE cabinet_id = ${a!.cabinet_id} ORDER BY seq`;
    expect(numbers.map((r) => Number(r.number))).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('refuses a batch that skips numbers with the number to send from, storing nothing', async () => {
    const [a] = await newCabinet(1);
    await push(a!, changes(1, 3, hub.clock.now()));
    const gap = await push(a!, changes(6, 2, hub.clock.now()));
    expect(gap.statusCode).toBe(409);
    expect(gap.json()).toMatchObject({ error: 'sync_gap', details: { expected_number: 4 } });
    const fresh = await newCabinet(1);
    const startsLate = await push(fresh[0]!, changes(2, 1, hub.clock.now()));
    expect(startsLate.json()).toMatchObject({ error: 'sync_gap', details: { expected_number: 1 } });
    expect(await rowCount(a!.cabinet_id)).toBe(3);
  });

  it('refuses numbers that do not follow each other', async () => {
    const [a] = await newCabinet(1);
    const batch = [change(1, hub.clock.now()), change(2, hub.clock.now()), change(4, hub.clock.now())];
    const res = await push(a!, batch);
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([{ path: 'body.changes.2.number', message: expect.stringContaining('consecutive') }]);
    expect(await rowCount(a!.cabinet_id)).toBe(0);
  });

  it('refuses a clock more than 5 minutes ahead, by the header or by the changes’ HLC, storing nothing', async () => {
    const [a] = await newCabinet(1);
    const now = hub.clock.now();
    const byHeader = await push(a!, changes(1, 2, now), { [DEVICE_TIME_HEADER]: String(now + MAX_CLOCK_AHEAD_MS + 90_000) });
    expect(byHeader.statusCode).toBe(409);
    expect(byHeader.json()).toMatchObject({
      error: 'clock_skew',
      details: { hub_time: new Date(now).toISOString(), ahead_seconds: MAX_CLOCK_AHEAD_MS / 1000 + 90 },
    });
    const byHlc = await push(a!, [change(1, now), change(2, now + MAX_CLOCK_AHEAD_MS + 1000)]);
    expect(byHlc.json()).toMatchObject({ error: 'clock_skew', details: { ahead_seconds: MAX_CLOCK_AHEAD_MS / 1000 + 1 } });
    expect(await rowCount(a!.cabinet_id)).toBe(0);
    // At the limit, and behind (an install whose clock is late is fine): stored.
    const atLimit = await push(a!, [change(1, now + MAX_CLOCK_AHEAD_MS), change(2, now - 3600_000)], {
      [DEVICE_TIME_HEADER]: String(now + MAX_CLOCK_AHEAD_MS),
    });
    expect(atLimit.statusCode).toBe(200);
  });

  it('serves protocols one below the cabinet’s newest, and raises the newest on push and pull', async () => {
    const [v1, v2, v3] = await newCabinet(3);
    const at = (p: number) => ({ [SYNC_PROTOCOL_HEADER]: String(p) });
    expect((await push(v2!, changes(1, 1, hub.clock.now()), at(2))).statusCode).toBe(200);
    expect((await push(v1!, changes(1, 1, hub.clock.now()), at(1))).statusCode).toBe(200);
    expect((await pull(v3!, {}, at(3))).statusCode).toBe(200);
    const old = await push(v1!, changes(2, 1, hub.clock.now()), at(1));
    expect(old.statusCode).toBe(426);
    expect(old.json()).toMatchObject({ error: 'sync_protocol_too_old', details: { protocol: 1, highest_protocol: 3 } });
    expect((await pull(v1!, {}, at(1))).statusCode).toBe(426);
    expect((await push(v2!, changes(2, 1, hub.clock.now()), at(2))).statusCode).toBe(200);
    const missing = await hub.request({
      method: 'POST',
      url: pathTo(pushChanges),
      headers: { authorization: v2!.headers.authorization! },
      body: { changes: changes(3, 1, hub.clock.now()) },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details[0].path).toBe('header.X-Courtier-Sync-Protocol');
  });

  it('answers malformed batches with a 400 and writes nothing', async () => {
    const [a] = await newCabinet(1);
    const now = hub.clock.now();
    const hlc = fc.oneof(fc.string(), fc.constant(formatHlc({ time: now, counter: 0, device: 'x' })));
    const badChange = fc.record(
      {
        number: fc.oneof(fc.integer({ min: -5, max: 0 }), fc.double(), fc.string()),
        kind: fc.oneof(fc.string(), fc.constant('client')),
        record_id: fc.oneof(fc.constant(''), fc.string({ minLength: 201, maxLength: 210 })),
        op: fc.oneof(fc.string(), fc.constant('delete')),
        hlc,
        fields: fc.oneof(fc.constant(null), fc.array(fc.integer()), fc.string()),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.anything(),
      fc.record({ changes: fc.oneof(fc.constant([]), fc.array(badChange, { minLength: 1, maxLength: 4 })) }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const res = await hub.request({ method: 'POST', url: pathTo(pushChanges), headers: a!.headers, body: value });
        expect(res.statusCode).toBe(400);
        expect(['validation_error', 'invalid_json']).toContain(res.json().error);
      }),
      { numRuns: 150 },
    );
    expect(await rowCount(a!.cabinet_id)).toBe(0);
  });
});

/** What secure-json-parse refuses: a "__proto__" key, or a "constructor" key holding an object with "prototype". */
function hasPrototypePoisoningKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasPrototypePoisoningKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(
    ([key, inner]) =>
      key === '__proto__' ||
      (key === 'constructor' && inner !== null && typeof inner === 'object' && Object.hasOwn(inner, 'prototype')) ||
      hasPrototypePoisoningKey(inner),
  );
}

describe('what is stored', () => {
  it('is any text and JSON PostgreSQL can hold, exactly as sent; the rest is a 400 that stores nothing', async () => {
    const [a, reader] = await newCabinet(2);
    let next = 1;
    let refusedRuns = 0;
    const anyText = fc.string({ unit: 'binary', maxLength: 30 });
    const unstorable = fc.tuple(anyText, fc.constantFrom('\u0000', '\ud800', '\udfff'), anyText).map(([x, bad, y]) => x + bad + y);
    const text = fc.oneof({ weight: 9, arbitrary: anyText }, { weight: 1, arbitrary: unstorable });
    const changeFields = fc.dictionary(text, fc.jsonValue({ stringUnit: 'binary', maxDepth: 3 }), { maxKeys: 4 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ record_id: text.filter((t) => t.length > 0), fields: changeFields }), { minLength: 1, maxLength: 3 }),
        async (drawn) => {
          const before = await rowCount(a!.cabinet_id);
          const batch = drawn.map((d, i) => change(next + i, hub.clock.now(), d));
          const res = await push(a!, batch);
          expect([200, 400]).toContain(res.statusCode);
          if (res.statusCode === 400) {
            // Keys that would poison a prototype are refused by every JSON body parser of ours.
            expect(res.json().error).toBe(hasPrototypePoisoningKey(batch) ? 'invalid_json' : 'validation_error');
            expect(await rowCount(a!.cabinet_id)).toBe(before);
            refusedRuns++;
            return;
          }
          next += batch.length;
          expect(res.json().acknowledged_number).toBe(next - 1);
          const pulled = (await pull(reader!, { limit: 1000 })).json<{ changes: PulledChange[] }>().changes.slice(-batch.length);
          // JSON has no -0: what was sent is what JSON.stringify sent.
          expect(pulled.map((c) => [c.record_id, c.fields])).toEqual(JSON.parse(JSON.stringify(batch.map((c) => [c.record_id, c.fields]))));
        },
      ),
      { numRuns: 80 },
    );
    // Both paths ran: stored round trips and refusals.
    expect(next - 1).toBeGreaterThan(20);
    expect(refusedRuns).toBeGreaterThan(5);
    const refused = await push(a!, [change(next, hub.clock.now(), { record_id: 'r\u0000', fields: { ok: 'a\ud800', ['k\u0000']: 1 } })]);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().details.map((d: { path: string }) => d.path)).toEqual([
      'body.changes.0.record_id',
      'body.changes.0.fields.ok',
      'body.changes.0.fields.k\u0000',
    ]);
    const poisoning = await push(a!, [
      change(next, hub.clock.now(), { record_id: 'r', fields: JSON.parse('{"__proto__": {"admin": true}}') }),
    ]);
    expect(poisoning.statusCode).toBe(400);
    expect(poisoning.json()).toMatchObject({ error: 'invalid_json', message: expect.stringContaining('"__proto__"') });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('pull', () => {
  it('gives every other device’s changes in seq order, a page at a time', async () => {
    const [a, b, c] = await newCabinet(3);
    const now = hub.clock.now();
    await push(a!, changes(1, 3, now, { kind: 'client' }));
    await push(b!, changes(1, 4, now, { kind: 'devis' }));
    await push(a!, changes(4, 2, now, { kind: 'contract' }));
    const all = await pull(c!, { limit: 1000 });
    const body = all.json<{ changes: PulledChange[]; last_seq: number; more: boolean }>();
    expect(body.changes.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(body.changes.map((c) => `${c.device_id === a!.device_id ? 'a' : 'b'}${c.kind}`)).toEqual([
      'aclient',
      'aclient',
      'aclient',
      'bdevis',
      'bdevis',
      'bdevis',
      'bdevis',
      'acontract',
      'acontract',
    ]);
    expect(body).toMatchObject({ last_seq: 9, more: false });
    expect(body.changes[0]).toEqual({
      seq: 1,
      device_id: a!.device_id,
      kind: 'client',
      record_id: 'client-1',
      op: 'upsert',
      hlc: formatHlc({ time: now, counter: 0, device: a!.device_id }),
      fields: { last_name: 'Nom 1' },
    });

    const seen: number[] = [];
    let after = 0;
    for (let page = 0; page < 10; page++) {
      const res = (await pull(c!, { after, limit: 4 })).json<{ changes: PulledChange[]; last_seq: number; more: boolean }>();
      seen.push(...res.changes.map((change) => change.seq));
      after = res.last_seq;
      if (!res.more) break;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const end = (await pull(c!, { after: 9 })).json();
    expect(end).toMatchObject({ changes: [], last_seq: 9, more: false });
  });

  it('leaves out the caller’s own changes and moves its cursor past them, to the newest seq when no more wait', async () => {
    const [a, b] = await newCabinet(2);
    const now = hub.clock.now();
    await push(a!, changes(1, 3, now, { kind: 'client' })); // seqs 1-3
    await push(b!, changes(1, 2, now, { kind: 'devis' })); // 4-5
    await push(a!, changes(4, 2, now, { kind: 'contract' })); // 6-7
    const ofA = (await pull(a!, { limit: 1000 })).json<{ changes: PulledChange[]; last_seq: number; more: boolean }>();
    expect(ofA.changes.map((change) => change.seq)).toEqual([4, 5]);
    expect(ofA).toMatchObject({ last_seq: 7, more: false });
    // Pages: the last one served when more wait, the newest seq after the last page.
    const first = (await pull(a!, { limit: 1 })).json<{ changes: PulledChange[]; last_seq: number; more: boolean }>();
    expect(first).toMatchObject({ last_seq: 4, more: true });
    const second = (await pull(a!, { after: 4, limit: 1 })).json<{ changes: PulledChange[]; last_seq: number; more: boolean }>();
    expect(second.changes.map((change) => change.seq)).toEqual([5]);
    expect(second).toMatchObject({ last_seq: 7, more: false });
    // Nothing but its own: an empty page that still moves the cursor, at once even when asked to wait.
    const started = Date.now();
    const own = (await pull(a!, { after: 5, wait: 20 })).json<{ changes: PulledChange[]; last_seq: number; more: boolean }>();
    expect(own).toMatchObject({ changes: [], last_seq: 7, more: false });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('keeps a long poll waiting through the caller’s own pushes, and answers another device’s', async () => {
    const [a, b] = await newCabinet(2);
    const now = hub.clock.now();
    const waiting = pull(a!, { wait: 10 });
    // Waiting on the hub before the push (a push first would be a cursor behind, answered at once).
    for (let i = 0; i < 500 && hub.app.hubWaiters.count() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hub.app.hubWaiters.count()).toBe(1);
    await push(a!, changes(1, 2, now, { kind: 'client' })); // seqs 1-2, its own
    const early = await Promise.race([
      waiting.then(() => 'answered'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300)),
    ]);
    expect(early).toBe('still waiting');
    await push(b!, changes(1, 1, now, { kind: 'devis' })); // seq 3
    const answer = (await waiting).json<{ changes: PulledChange[]; last_seq: number }>();
    expect(answer.changes.map((change) => [change.seq, change.device_id])).toEqual([[3, b!.device_id]]);
    expect(answer.last_seq).toBe(3);
  });

  it('checks its query', async () => {
    const [a] = await newCabinet(1);
    for (const query of ['limit=0', 'limit=1001', 'after=-1', 'wait=31', 'after=abc']) {
      const res = await hub.request({ method: 'GET', url: `${pathTo(pullChanges)}?${query}`, headers: a!.headers });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().details[0].path).toMatch(/^query\./);
    }
  });
});

describe('erasure', () => {
  it('empties every earlier change of the record, keeps later upserts empty, and leaves other records alone', async () => {
    const [a, b, reader] = await newCabinet(3);
    const now = hub.clock.now();
    const record = { kind: 'client' as const, record_id: 'client-erased' };
    await push(a!, [
      change(1, now, { ...record, fields: { last_name: 'Martin', email: 'martin@example.fr' } }),
      change(2, now, { record_id: 'client-kept' }),
    ]);
    await push(b!, [change(1, now, { ...record, fields: { phone: '0601020304' } })]);
    // The same id under another kind is another record.
    await push(b!, [change(2, now, { kind: 'devis', record_id: 'client-erased', fields: { premium: 100 } })]);
    await push(a!, [change(3, now, { ...record, op: 'erase', fields: { last_name: null, email: null, erased_at: now } })]);
    // A device that had not heard of the erasure yet edits the record; in the same batch, another record.
    await push(b!, [
      change(3, now - 60_000, { ...record, fields: { phone: '0699999999' } }),
      change(4, now, { record_id: 'client-other', fields: { last_name: 'Autre' } }),
    ]);
    const pulled = (await pull(reader!, { limit: 100 })).json<{ changes: PulledChange[] }>().changes;
    const byRecord = pulled.map((c) => [c.kind, c.record_id, c.op, c.fields]);
    expect(byRecord).toEqual([
      ['client', 'client-erased', 'upsert', {}],
      ['client', 'client-kept', 'upsert', { last_name: 'Nom 2' }],
      ['client', 'client-erased', 'upsert', {}],
      ['devis', 'client-erased', 'upsert', { premium: 100 }],
      ['client', 'client-erased', 'erase', { last_name: null, email: null, erased_at: now }],
      ['client', 'client-erased', 'upsert', {}],
      ['client', 'client-other', 'upsert', { last_name: 'Autre' }],
    ]);
    const stored = await hub.deps.sql`SELECT fields::text AS f FROM hub_changes WHERE cabinet_id = ${a!.cabinet_id}`;
    expect(JSON.stringify(stored)).not.toMatch(/Martin|martin@|0601020304|0699999999/);
  });

  it('within one batch: an erasure empties the upserts before it, and those after it are stored empty', async () => {
    const [a, reader] = await newCabinet(2);
    const now = hub.clock.now();
    const r = { record_id: 'client-batch' };
    await push(a!, [
      change(1, now, { ...r, fields: { last_name: 'Avant' } }),
      change(2, now, { ...r, op: 'erase', fields: { erased_at: now } }),
      change(3, now, { ...r, fields: { last_name: 'Après' } }),
      change(4, now, { record_id: 'client-x', fields: { last_name: 'X' } }),
    ]);
    const pulled = (await pull(reader!)).json<{ changes: PulledChange[] }>().changes;
    expect(pulled.map((c) => c.fields)).toEqual([{}, { erased_at: now }, {}, { last_name: 'X' }]);
  });
});

describe('device credentials', () => {
  it('are required and checked, and every answer carries the hub’s time', async () => {
    const [a, b] = await newCabinet(2);
    const url = pathTo(pullChanges);
    const none = await hub.request({ method: 'GET', url });
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toBe('missing_credentials');
    expect(none.headers[HUB_TIME_HEADER]).toBe(String(hub.clock.now()));
    const mixed = `Bearer ${a!.device_id}.${b!.device_secret.split('.')[1]}`;
    for (const authorization of [
      'Bearer nonsense',
      `Bearer ${a!.device_id}`,
      mixed,
      `Basic ${a!.device_secret}`,
      `Bearer ${a!.device_secret}x`,
    ]) {
      const res = await hub.request({ method: 'GET', url, headers: { authorization } });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.json().error).toBe('invalid_device_credential');
    }
  });

  it('record when a device was last seen, at most once a minute', async () => {
    const [a] = await newCabinet(1);
    const seen = async () =>
      (await hub.deps.sql<{ t: Date }[]>`SELECT last_seen_at AS t FROM hub_devices WHERE id = ${a!.device_id}`)[0]!.t;
    await pull(a!);
    const first = Date.parse(String(await seen()));
    expect(first).toBe(hub.clock.now());
    hub.clock.advance(30_000);
    await pull(a!);
    expect(Date.parse(String(await seen()))).toBe(first);
    hub.clock.advance(30_000);
    await pull(a!);
    expect(Date.parse(String(await seen()))).toBe(first + 60_000);
  });
});
