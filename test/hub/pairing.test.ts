// @module-tag postgres
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pairDevice, pullChanges, SYNC_PROTOCOL_HEADER } from '../../shared/sync-protocol.js';
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

  it('registers the install’s cabinet with a code made without --cabinet, then joins it with a code made with it', async () => {
    const register = await createInvite(hub.deps, null);
    expect(register.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(register.cabinet_id).toBeNull();
    expect(Date.parse(register.expires_at)).toBe(hub.clock.now() + INVITE_TTL_MS);
    const first = await pairRequest(hub, { code: register.code, device_name: 'Accueil', cabinet: { id: 'cab-dupont', name: 'Cabinet Dupont' } });
    expect(first.statusCode).toBe(201);
    const paired = first.json();
    expect(paired).toMatchObject({ cabinet_id: 'cab-dupont', cabinet_name: 'Cabinet Dupont', hub_time: new Date(hub.clock.now()).toISOString() });
    expect(paired.device_secret.startsWith(`${paired.device_id}.`)).toBe(true);

    // Typed by hand: lower case, spaces, O for 0 and I or L for 1 still match.
    const join = await createInvite(hub.deps, 'cab-dupont');
    const typed = join.code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'o').replace(/1/g, 'l');
    const second = await pairRequest(hub, { code: typed, device_name: 'Direction' });
    expect(second.statusCode).toBe(201);
    expect(second.json()).toMatchObject({ cabinet_id: 'cab-dupont', cabinet_name: 'Cabinet Dupont' });
    expect(second.json().device_id).not.toBe(paired.device_id);

    // The credential works; the hub kept only its hash.
    const pull = await hub.request({ method: 'GET', url: pathTo(pullChanges), headers: { authorization: `Bearer ${second.json().device_secret}`, ...PROTOCOL } });
    expect(pull.statusCode).toBe(200);
    const stored = await hub.deps.sql<{ credential_hash: string }[]>`SELECT credential_hash FROM hub_devices WHERE id = ${second.json().device_id}`;
    expect(stored[0]!.credential_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(second.json().device_secret.split('.')[1]);
  });

  it('uses a code once', async () => {
    const { code } = await createInvite(hub.deps, null);
    expect((await pairRequest(hub, { code, device_name: 'a', cabinet: { id: 'cab-once', name: 'Once' } })).statusCode).toBe(201);
    const again = await pairRequest(hub, { code, device_name: 'b', cabinet: { id: 'cab-once-2', name: 'Once 2' } });
    expect(again.statusCode).toBe(401);
    expect(again.json().error).toBe('invalid_pairing_code');
  });

  it('lets only one of several simultaneous requests with the same code pair', async () => {
    const { code } = await createInvite(hub.deps, 'cab-dupont');
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => pairRequest(hub, { code, device_name: `poste ${i}` }, { address: `198.51.100.${i}` })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 401, 401, 401, 401, 401]);
  });

  it('refuses a code after its 15 minutes', async () => {
    const { code } = await createInvite(hub.deps, 'cab-dupont');
    const late = await createInvite(hub.deps, 'cab-dupont');
    hub.clock.advance(INVITE_TTL_MS - 1000);
    expect((await pairRequest(hub, { code, device_name: 'in time' })).statusCode).toBe(201);
    hub.clock.advance(1000);
    const expired = await pairRequest(hub, { code: late.code, device_name: 'too late' });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error).toBe('invalid_pairing_code');
  });

  it('refuses to register a cabinet the hub has, and keeps the code for the right request', async () => {
    const { code } = await createInvite(hub.deps, null);
    const taken = await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-dupont', name: 'Autre' } });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().error).toBe('cabinet_already_on_hub');
    const noCabinet = await pairRequest(hub, { code, device_name: 'x' });
    expect(noCabinet.statusCode).toBe(400);
    expect(noCabinet.json().details).toEqual([{ path: 'body.cabinet', message: expect.stringContaining('registers a cabinet') }]);
    expect((await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-new', name: 'New' } })).statusCode).toBe(201);
  });

  it('refuses a join code sent with another cabinet, and an unknown cabinet for a join code', async () => {
    const { code } = await createInvite(hub.deps, 'cab-dupont');
    const other = await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-other', name: 'Other' } });
    expect(other.statusCode).toBe(400);
    expect((await pairRequest(hub, { code, device_name: 'x', cabinet: { id: 'cab-dupont', name: 'Cabinet Dupont' } })).statusCode).toBe(201);
    await expect(createInvite(hub.deps, 'cab-nowhere')).rejects.toThrow(ApiError);
  });

  it('needs the protocol header and refuses a protocol below 1', async () => {
    const { code } = await createInvite(hub.deps, 'cab-dupont');
    const missing = await hub.app.inject({ method: 'POST', url: pathTo(pairDevice), headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ code, device_name: 'x' }) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details[0].path).toBe('header.X-Courtier-Sync-Protocol');
    const zero = await pairRequest(hub, { code, device_name: 'x' }, { headers: { [SYNC_PROTOCOL_HEADER]: '0' } });
    expect(zero.statusCode).toBe(426);
    expect(zero.json().error).toBe('sync_protocol_too_old');
    expect((await pairRequest(hub, { code, device_name: 'x' })).statusCode).toBe(201);
  });

  it('answers malformed bodies with a 400 and writes nothing', async () => {
    const { code } = await createInvite(hub.deps, null);
    const before = await counts(hub);
    const body = fc.oneof(
      fc.anything(),
      fc.record({ code: fc.oneof(fc.string(), fc.integer(), fc.constant(code)), device_name: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(null)) }, { requiredKeys: [] }),
      fc.record({ code: fc.constant(code), device_name: fc.constant('x'), cabinet: fc.oneof(fc.anything(), fc.record({ id: fc.string({ maxLength: 100 }), name: fc.constant('') })) }),
      // Text PostgreSQL cannot hold (U+0000, unpaired surrogates) is a 400 too, never a 500.
      fc.record({ code: fc.constant(code), device_name: fc.string({ unit: 'binary', minLength: 1 }).map((t) => `${t}\u0000`), cabinet: fc.record({ id: fc.constant('cab-fuzz'), name: fc.constant('x') }) }),
      fc.record({ code: fc.constant(code), device_name: fc.constant('x'), cabinet: fc.record({ id: fc.constant('cab-fuzz'), name: fc.constant('a\udc00') }) }),
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
        const { code } = await createInvite(one.deps, null);
        expect((await pairRequest(i % 2 ? one : two, { code, device_name: 'x', cabinet: { id: `cab-${i}`, name: 'x' } }, { address: guesser })).statusCode).toBe(201);
      }
      // Wrong codes, at once, through both processes: exactly the limit get a 401, the rest a 429.
      const guesses = await Promise.all(
        Array.from({ length: 2 * PAIRING_ATTEMPTS_PER_WINDOW }, (_, i) => pairRequest(i % 2 ? one : two, { code: `WRONG-CODE-${i}`, device_name: 'x' }, { address: guesser })),
      );
      const statuses = guesses.map((g) => g.statusCode);
      expect(statuses.filter((s) => s === 401)).toHaveLength(PAIRING_ATTEMPTS_PER_WINDOW);
      expect(statuses.filter((s) => s === 429)).toHaveLength(PAIRING_ATTEMPTS_PER_WINDOW);
      const limited = guesses.find((g) => g.statusCode === 429)!;
      expect(limited.json().error).toBe('too_many_pairing_attempts');
      expect(Number(limited.headers['retry-after'])).toBe(PAIRING_WINDOW_MS / 1000 - 60);

      // Even the right code waits now; another address does not.
      const { code } = await createInvite(one.deps, 'cab-0');
      expect((await pairRequest(two, { code, device_name: 'x' }, { address: guesser })).statusCode).toBe(429);
      expect((await pairRequest(two, { code, device_name: 'x' }, { address: '198.51.100.24' })).statusCode).toBe(201);

      // The next window starts afresh.
      clock.advance(PAIRING_WINDOW_MS);
      const { code: later } = await createInvite(one.deps, 'cab-0');
      expect((await pairRequest(one, { code: later, device_name: 'x' }, { address: guesser })).statusCode).toBe(201);
      expect((await pairRequest(one, { code: 'WRONG', device_name: 'x' }, { address: guesser })).statusCode).toBe(401);
    } finally {
      await two.close();
      await one.close();
    }
  });
});
