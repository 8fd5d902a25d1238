// @module-tag postgres
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, SYNC_PROTOCOL_HEADER, SYNC_PROTOCOL_VERSION } from '../../shared/sync-protocol.js';
import { pairDevice } from '../../shared/sync-pairing.js';
import { ApiError } from '../../server/errors.js';
import { createInvite, INVITE_TTL_MS, PAIRING_ATTEMPTS_PER_WINDOW, PAIRING_WINDOW_MS } from '../../server/hub/pairing.js';
import { PROTOCOL, startHub, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';
import { testClock } from '../helpers/server.js';

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startTestPostgres();
});
afterAll(() => pg.stop());

function pairRequest(hub: TestHub, body: unknown, options: { address?: string; headers?: Record<string, string> } = {}) {
  return hub.app.inject({
    method: 'POST',
    url: pathTo(pairDevice),
    headers: { 'content-type': 'application/json', ...PROTOCOL, ...options.headers },
    payload: JSON.stringify(body),
    remoteAddress: options.address ?? '203.0.113.7',
  });
}

async function failuresOf(hub: TestHub, address: string): Promise<number> {
  const rows = await hub.deps.sql<{ count: number }[]>`SELECT count FROM hub_pairing_failures WHERE address = ${address}`;
  return rows.reduce((sum, row) => sum + row.count, 0);
}

async function counts(hub: TestHub): Promise<{ cabinets: number; devices: number; used: number }> {
  const [row] = await hub.deps.sql<{ cabinets: number; devices: number; used: number }[]>`
    SELECT (SELECT count(*)::int FROM hub_cabinets) AS cabinets, (SELECT count(*)::int FROM hub_devices) AS devices,
           (SELECT count(*)::int FROM hub_invites WHERE used_at IS NOT NULL) AS used`;
  return row!;
}

describe('pairing', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startHub(pg);
  });
  afterAll(() => hub.close());

  it('registers the cabinet a code was made for (--new-cabinet), then joins it with a code made with --cabinet', async () => {
    const register = await createInvite(hub.deps, { register: 'cab-dupont' });
    expect(register.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(register).toMatchObject({ purpose: 'register', cabinet_id: 'cab-dupont' });
    expect(Date.parse(register.expires_at)).toBe(hub.clock.now() + INVITE_TTL_MS);
    const first = await pairRequest(hub, {
      code: register.code,
      device_name: 'Accueil',
      cabinet: { id: 'cab-dupont', name: 'Cabinet Dupont' },
    });
    expect(first.statusCode).toBe(201);
    const paired = first.json();
    expect(paired).toMatchObject({
      cabinet_id: 'cab-dupont',
      cabinet_name: 'Cabinet Dupont',
      hub_time: new Date(hub.clock.now()).toISOString(),
    });
    expect(paired.device_secret.startsWith(`${paired.device_id}.`)).toBe(true);

    // Typed by hand: lower case, spaces, O for 0 and I or L for 1 still match.
    const join = await createInvite(hub.deps, { join: 'cab-dupont' });
    expect(join).toMatchObject({ purpose: 'join', cabinet_id: 'cab-dupont' });
    const typed = join.code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'o').replace(/1/g, 'l');
    const second = await pairRequest(hub, { code: typed, device_name: 'Direction' });
    expect(second.statusCode).toBe(201);
    expect(second.json()).toMatchObject({ cabinet_id: 'cab-dupont', cabinet_name: 'Cabinet Dupont' });
    expect(second.json().device_id).not.toBe(paired.device_id);

    // The credential works; the hub kept only its hash.
    const pull = await hub.request({
      method: 'GET',
      url: pathTo(pullChanges),
      headers: { authorization: `Bearer ${second.json().device_secret}`, ...PROTOCOL },
    });
    expect(pull.statusCode).toBe(200);
    const stored = await hub.deps.sql<
      { credential_hash: string }[]
    >`SELECT credential_hash FROM hub_devices WHERE id = ${second.json().device_id}`;
    expect(stored[0]!.credential_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(second.json().device_secret.split('.')[1]);
  });

  it('uses a code once', async () => {
    const { code } = await createInvite(hub.deps, { register: 'cab-once' });
    expect((await pairRequest(hub, { code, device_name: 'a', cabinet: { id: 'cab-once', name: 'Once' } })).statusCode).toBe(201);
    const again = await pairRequest(hub, { code, device_name: 'b', cabinet: { id: 'cab-once', name: 'Once' } });
    expect(again.statusCode).toBe(401);
    expect(again.json().error).toBe('invalid_pairing_code');
  });

  it('lets only one of several simultaneous requests with the same code pair', async () => {
    const { code } = await createInvite(hub.deps, { join: 'cab-dupont' });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => pairRequest(hub, { code, device_name: `poste ${i}` }, { address: `198.51.100.${i}` })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 401, 401, 401, 401, 401]);
  });

  it('refuses a code after its 15 minutes', async () => {
    const { code } = await createInvite(hub.deps, { join: 'cab-dupont' });
    const late = await createInvite(hub.deps, { join: 'cab-dupont' });
    hub.clock.advance(INVITE_TTL_MS - 1000);
    expect((await pairRequest(hub, { code, device_name: 'in time' })).statusCode).toBe(201);
    hub.clock.advance(1000);
    const expired = await pairRequest(hub, { code: late.code, device_name: 'too late' });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error).toBe('invalid_pairing_code');
  });

  it('a register code registers its own cabinet only: another id is refused (and counted), the code stays for the right one', async () => {
    const { code } = await createInvite(hub.deps, { register: 'cab-martin' });
    const address = '203.0.113.50';
    const squat = await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-victim', name: 'Autre' } }, { address });
    expect(squat.statusCode).toBe(401);
    expect(squat.json()).toMatchObject({ error: 'invalid_pairing_code', message: expect.stringContaining('made for another cabinet') });
    const noCabinet = await pairRequest(hub, { code, device_name: 'x' }, { address });
    expect(noCabinet.statusCode).toBe(400);
    expect(noCabinet.json().details).toEqual([{ path: 'body.cabinet', message: expect.stringContaining('registers a cabinet') }]);
    expect(await failuresOf(hub, address)).toBe(2);
    expect(
      (await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-martin', name: 'Cabinet Martin' } }, { address })).statusCode,
    ).toBe(201);
    expect(await failuresOf(hub, address)).toBe(2);
    expect((await counts(hub)).cabinets).toBe(3);
  });

  it('a code cannot be made to register a cabinet the hub has, nor to join one it has not; a taken id is refused without advice to join it', async () => {
    await expect(createInvite(hub.deps, { register: 'cab-dupont' })).rejects.toMatchObject({ code: 'cabinet_already_on_hub' });
    await expect(createInvite(hub.deps, { join: 'cab-nowhere' })).rejects.toThrow(ApiError);
    await expect(createInvite(hub.deps, { register: 'not an id!' })).rejects.toMatchObject({ code: 'validation_error' });
    // Registered by someone else between the invite and its use (two codes for one id).
    const one = await createInvite(hub.deps, { register: 'cab-race' });
    const two = await createInvite(hub.deps, { register: 'cab-race' });
    expect((await pairRequest(hub, { code: one.code, device_name: 'a', cabinet: { id: 'cab-race', name: 'Race' } })).statusCode).toBe(201);
    const late = await pairRequest(hub, { code: two.code, device_name: 'b', cabinet: { id: 'cab-race', name: 'Race' } });
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toBe('cabinet_already_on_hub');
    expect(late.json().message).not.toMatch(/join/i);
  });

  it('a join code used to connect another cabinet (sync connect sends it) is refused: it would upload that cabinet into the code’s; with the code’s own cabinet, it reconnects', async () => {
    const { code } = await createInvite(hub.deps, { join: 'cab-dupont' });
    const refused = await pairRequest(
      hub,
      { code, device_name: 'x', cabinet: { id: 'cab-other', name: 'Other' } },
      { address: '203.0.113.51' },
    );
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toBe('pairing_code_joins');
    expect(await failuresOf(hub, '203.0.113.51')).toBe(1);
    const again = await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-dupont', name: 'Un autre nom' } });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toMatchObject({ cabinet_id: 'cab-dupont', cabinet_name: 'Cabinet Dupont', reconnected: true });
    const joined = await pairRequest(hub, { code: (await createInvite(hub.deps, { join: 'cab-dupont' })).code, device_name: 'y' });
    expect(joined.json()).toMatchObject({ reconnected: false });
  });

  it('needs the protocol header, refuses a protocol below 1 and one above the hub’s own (it would shut out every other install)', async () => {
    const { code } = await createInvite(hub.deps, { join: 'cab-dupont' });
    const missing = await hub.app.inject({
      method: 'POST',
      url: pathTo(pairDevice),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ code, device_name: 'x' }),
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details[0].path).toBe('header.X-Courtier-Sync-Protocol');
    const zero = await pairRequest(hub, { code, device_name: 'x' }, { headers: { [SYNC_PROTOCOL_HEADER]: '0' } });
    expect(zero.statusCode).toBe(426);
    expect(zero.json().error).toBe('sync_protocol_too_old');
    for (const future of [String(SYNC_PROTOCOL_VERSION + 1), '999999999']) {
      const ahead = await pairRequest(hub, { code, device_name: 'x' }, { headers: { [SYNC_PROTOCOL_HEADER]: future } });
      expect(ahead.statusCode).toBe(400);
      expect(ahead.json()).toMatchObject({
        error: 'sync_protocol_unsupported',
        details: { protocol: Number(future), hub_protocol: SYNC_PROTOCOL_VERSION },
      });
    }
    const [cabinet] = await hub.deps.sql<{ highest_protocol: number }[]>`SELECT highest_protocol FROM hub_cabinets WHERE id = 'cab-dupont'`;
    expect(cabinet?.highest_protocol).toBe(SYNC_PROTOCOL_VERSION);
    expect((await pairRequest(hub, { code, device_name: 'x' })).statusCode).toBe(201);
  });

  it('refuses device and cabinet names with control characters or direction marks (they reach the operator’s terminal)', async () => {
    const { code } = await createInvite(hub.deps, { register: 'cab-names' });
    for (const name of ['poste\u001b[2K\rdev-legit', 'poste\u0007', 'evil\u202eetisop', 'a\nb']) {
      for (const body of [
        { code, device_name: name, cabinet: { id: 'cab-names', name: 'Names' } },
        { code, device_name: 'poste', cabinet: { id: 'cab-names', name } },
      ]) {
        const res = await pairRequest(hub, body, { address: '203.0.113.52' });
        expect(res.statusCode).toBe(400);
        expect(JSON.stringify(res.json().details)).toContain('no control characters or direction marks');
      }
    }
    expect(
      (
        await pairRequest(hub, {
          code,
          device_name: 'Poste d’accueil — étage 2',
          cabinet: { id: 'cab-names', name: 'Cabinet Dupont & Fils' },
        })
      ).statusCode,
    ).toBe(201);
  });

  it('answers malformed bodies with a 400 and writes nothing', async () => {
    const { code } = await createInvite(hub.deps, { register: 'cab-fuzz' });
    const before = await counts(hub);
    const body = fc.oneof(
      fc.anything(),
      fc.record(
        {
          code: fc.oneof(fc.string(), fc.integer(), fc.constant(code)),
          device_name: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(null)),
        },
        { requiredKeys: [] },
      ),
      fc.record({
        code: fc.constant(code),
        device_name: fc.constant('x'),
        cabinet: fc.oneof(fc.anything(), fc.record({ id: fc.string({ maxLength: 100 }), name: fc.constant('') })),
      }),
      // Text PostgreSQL cannot hold (U+0000, unpaired surrogates) is a 400 too, never a 500.
      fc.record({
        code: fc.constant(code),
        device_name: fc.string({ unit: 'binary', minLength: 1 }).map((t) => `${t}\u0000`),
        cabinet: fc.record({ id: fc.constant('cab-fuzz'), name: fc.constant('x') }),
      }),
      fc.record({
        code: fc.constant(code),
        device_name: fc.constant('x'),
        cabinet: fc.record({ id: fc.constant('cab-fuzz'), name: fc.constant('a\udc00') }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const res = await pairRequest(hub, value, { address: '192.0.2.99' });
        // A body that happens to be valid with a wrong code is a 401; anything else, a 400.
        expect([400, 401, 429]).toContain(res.statusCode);
      }),
      { numRuns: 120 },
    );
    expect(await counts(hub)).toEqual(before);
  });
});

describe('guessing codes', () => {
  it('is limited per address across hub processes, concurrent guesses included, and valid codes do not count', async () => {
    const clock = testClock(Math.floor(Date.now() / PAIRING_WINDOW_MS) * PAIRING_WINDOW_MS + 60_000);
    const one = await startHub(pg, { clock });
    const two = await startHub(pg, { clock, databaseUrl: one.databaseUrl });
    try {
      const guesser = '198.51.100.23';
      // Valid codes are taken back: an office pairing many machines from one address is never blocked.
      for (let i = 0; i < PAIRING_ATTEMPTS_PER_WINDOW + 2; i++) {
        const { code } = await createInvite(one.deps, { register: `cab-${i}` });
        expect(
          (await pairRequest(i % 2 ? one : two, { code, device_name: 'x', cabinet: { id: `cab-${i}`, name: 'x' } }, { address: guesser }))
            .statusCode,
        ).toBe(201);
      }
      // Wrong codes, at once, through both processes: exactly the limit get a 401, the rest a 429.
      const guesses = await Promise.all(
        Array.from({ length: 2 * PAIRING_ATTEMPTS_PER_WINDOW }, (_, i) =>
          pairRequest(i % 2 ? one : two, { code: `WRONG-CODE-${i}`, device_name: 'x' }, { address: guesser }),
        ),
      );
      const statuses = guesses.map((g) => g.statusCode);
      expect(statuses.filter((s) => s === 401)).toHaveLength(PAIRING_ATTEMPTS_PER_WINDOW);
      expect(statuses.filter((s) => s === 429)).toHaveLength(PAIRING_ATTEMPTS_PER_WINDOW);
      const limited = guesses.find((g) => g.statusCode === 429)!;
      expect(limited.json().error).toBe('too_many_pairing_attempts');
      expect(Number(limited.headers['retry-after'])).toBe(PAIRING_WINDOW_MS / 1000 - 60);

      // Even the right code waits now; another address does not.
      const { code } = await createInvite(one.deps, { join: 'cab-0' });
      expect((await pairRequest(two, { code, device_name: 'x' }, { address: guesser })).statusCode).toBe(429);
      expect((await pairRequest(two, { code, device_name: 'x' }, { address: '198.51.100.24' })).statusCode).toBe(201);

      // The next window starts afresh.
      clock.advance(PAIRING_WINDOW_MS);
      const { code: later } = await createInvite(one.deps, { join: 'cab-0' });
      expect((await pairRequest(one, { code: later, device_name: 'x' }, { address: guesser })).statusCode).toBe(201);
      expect((await pairRequest(one, { code: 'WRONG', device_name: 'x' }, { address: guesser })).statusCode).toBe(401);
    } finally {
      await two.close();
      await one.close();
    }
  });
});
