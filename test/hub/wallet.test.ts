// @module-tag postgres
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, type PullResponse } from '../../shared/sync-protocol.js';
import { exchangeWallet, type WalletExchangeResponse } from '../../shared/sync-wallet.js';
import { grantHubCredits } from '../../server/hub/wallet.js';
import { runCourtier } from '../helpers/cli.js';
import { pairTestDevice, startHub, type TestDevice, type TestHub } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * The cabinet's one wallet on the hub: the operator grants, each device sends its own debits and
 * refunds (and the registering device, once, its opening balance), the hub answers the balance.
 * A device with a valid credential cannot mint credits, nor undo another device's debits.
 */
let pg: TestPostgres;
let hub: TestHub;
let first: TestDevice;
let second: TestDevice;
/** A stolen laptop of the cabinet: a valid credential, a hostile install. */
let thief: TestDevice;
let other: TestDevice;
const log = { warn: () => undefined };

beforeAll(async () => {
  pg = await startTestPostgres();
  hub = await startHub(pg);
  first = await pairTestDevice(hub, { id: 'cab-w' });
  second = await pairTestDevice(hub, { id: 'cab-w' }, { join: true, name: 'second' });
  thief = await pairTestDevice(hub, { id: 'cab-w' }, { join: true, name: 'volé' });
  other = await pairTestDevice(hub, { id: 'cab-other' });
});
afterAll(async () => {
  await hub.close();
  await pg.stop();
});

type Sent = { entry_id?: string; kind: string; amount: number; job_id?: string | null; note?: string | null };

function entry(sent: Sent) {
  return {
    entry_id: sent.entry_id ?? randomUUID(),
    kind: sent.kind,
    amount: sent.amount,
    job_id: sent.job_id ?? null,
    note: sent.note ?? null,
  };
}

async function exchange(device: TestDevice, entries: Sent[], after = 0) {
  return hub.request({
    method: 'POST',
    url: pathTo(exchangeWallet),
    headers: device.headers,
    body: { after, entries: entries.map(entry) },
  });
}

async function ledger(cabinetId = 'cab-w'): Promise<{ balance: number; entries: number }> {
  const [row] = await hub.database.sql<{ balance: string; entries: number }[]>`
    SELECT wallet_balance AS balance, (SELECT count(*)::int FROM hub_wallet_entries WHERE cabinet_id = ${cabinetId}) AS entries FROM hub_cabinets WHERE id = ${cabinetId}`;
  return { balance: Number(row?.balance), entries: row?.entries ?? -1 };
}

describe('the cabinet’s wallet on the hub', () => {
  it('takes the registering install’s opening once, the operator’s grants, and answers every device the same balance and ledger', async () => {
    const opening = { entry_id: randomUUID(), kind: 'opening', amount: 30 };
    const opened = await exchange(first, [opening]);
    expect(opened.statusCode, opened.body).toBe(200);
    expect(opened.json<WalletExchangeResponse>()).toMatchObject({
      balance: 30,
      acknowledged: [{ entry_id: opening.entry_id, seq: 1 }],
      last_seq: 1,
      more: false,
    });
    // Sent again (its answer was lost): acknowledged again under the same seq, never doubled.
    const again = await exchange(first, [opening]);
    expect(again.json<WalletExchangeResponse>()).toMatchObject({ balance: 30, acknowledged: [{ entry_id: opening.entry_id, seq: 1 }] });
    // A second opening, even from the registering device, is refused.
    const second_ = await exchange(first, [{ kind: 'opening', amount: 30 }]);
    expect(second_.statusCode).toBe(409);
    expect(second_.json()).toMatchObject({ error: 'wallet_entry_refused', details: { refused: [{ reason: 'opening_refused' }] } });

    const granted = await grantHubCredits(hub.deps, 'cab-w', 70, 'avril', log);
    expect(granted).toMatchObject({ balance: 100, seq: 2 });
    const seen = (await exchange(second, [])).json<WalletExchangeResponse>();
    expect(seen.balance).toBe(100);
    expect(seen.entries.map((e) => [e.seq, e.kind, e.amount, e.device_id])).toEqual([
      [1, 'opening', 30, first.device_id],
      [2, 'grant', 70, null],
    ]);
    expect(await ledger()).toEqual({ balance: 100, entries: 2 });
  });

  it('takes no opening from the registering device after its first exchange: a stolen laptop cannot mint one later', async () => {
    const laptop = await pairTestDevice(hub, { id: 'cab-late' });
    // Its cabinet had no credits when it connected: its first exchange brings none.
    expect((await exchange(laptop, [])).statusCode).toBe(200);
    const late = await exchange(laptop, [{ kind: 'opening', amount: 10_000_000 }]);
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ error: 'wallet_entry_refused', details: { refused: [{ reason: 'opening_refused' }] } });
    expect(await ledger('cab-late')).toEqual({ balance: 0, entries: 0 });
  });

  it('debits and refunds a job exactly once per device, whatever is sent again', async () => {
    const job = randomUUID();
    const debit = { entry_id: randomUUID(), kind: 'debit', amount: -10, job_id: job };
    const refund = { entry_id: randomUUID(), kind: 'refund', amount: 10, job_id: job, note: 'refund: cancelled' };
    expect((await exchange(second, [debit], 2)).json<WalletExchangeResponse>()).toMatchObject({ balance: 90 });
    // The answer was lost, and the refund was made meanwhile: both go again, the debit is not doubled.
    const both = (await exchange(second, [debit, refund], 2)).json<WalletExchangeResponse>();
    expect(both.balance).toBe(100);
    expect(both.acknowledged.map((a) => a.seq)).toEqual([3, 4]);
    // Another debit or refund of the same job under a new id is refused, nothing stored.
    for (const twice of [
      { ...debit, entry_id: randomUUID() },
      { ...refund, entry_id: randomUUID() },
    ]) {
      const res = await exchange(second, [twice], 4);
      expect(res.statusCode).toBe(409);
      expect(res.json().details.refused[0].reason).toMatch(/^job_already_(debited|refunded)$/);
    }
    expect(await ledger()).toEqual({ balance: 100, entries: 4 });
  });

  it('refuses whatever a hostile device with a valid credential sends to mint credits or undo another’s debit, storing nothing', async () => {
    const job = randomUUID();
    const debit = { entry_id: randomUUID(), kind: 'debit', amount: -10, job_id: job };
    expect((await exchange(first, [debit])).statusCode).toBe(200);
    const before = await ledger();
    expect(before.balance).toBe(90);

    // A grant is the operator's: the contract has no such entry for a device.
    const grant = await exchange(thief, [{ kind: 'grant', amount: 1_000 }]);
    expect(grant.statusCode).toBe(400);
    expect(grant.json().error).toBe('validation_error');
    // Huge amounts: past what a job may cost, or an opening past any grant.
    for (const huge of [
      { kind: 'debit', amount: -1_000_000, job_id: randomUUID() },
      { kind: 'opening', amount: 100_000_000 },
    ]) {
      expect((await exchange(thief, [huge])).json().error).toBe('validation_error');
    }
    const refusals: [Sent, string][] = [
      // A refund of the other device's job: its debit is not this device's.
      [{ kind: 'refund', amount: 10, job_id: job }, 'no_matching_debit'],
      // A refund of nothing.
      [{ kind: 'refund', amount: 500, job_id: randomUUID() }, 'no_matching_debit'],
      // A debit that gives credits.
      [{ kind: 'debit', amount: 50, job_id: randomUUID() }, 'debit_not_negative'],
      // An opening from a device that did not register the cabinet.
      [{ kind: 'opening', amount: 1_000 }, 'opening_refused'],
      // The other device's entry, under its id, as if it were the thief's (to take it over).
      [{ entry_id: debit.entry_id, kind: 'debit', amount: -1, job_id: job }, 'entry_id_taken'],
    ];
    for (const [sent, reason] of refusals) {
      const res = await exchange(thief, [sent]);
      expect(res.statusCode, JSON.stringify(sent)).toBe(409);
      expect(res.json()).toMatchObject({ error: 'wallet_entry_refused', details: { refused: [{ reason }] } });
    }
    // Its own debit, then a refund of more than it: refused; a valid debit in a batch with a forged refund: nothing stored.
    const own = randomUUID();
    const mixed = await exchange(thief, [
      { kind: 'debit', amount: -4, job_id: own },
      { kind: 'refund', amount: 400, job_id: own },
    ]);
    expect(mixed.json()).toMatchObject({ error: 'wallet_entry_refused', details: { refused: [{ reason: 'refund_amount' }] } });
    expect(await ledger()).toEqual(before);
    // The other cabinet's device, with this cabinet's entry id: its own cabinet only.
    expect(
      (await exchange(other, [{ entry_id: debit.entry_id, kind: 'debit', amount: -1, job_id: job }])).json<WalletExchangeResponse>(),
    ).toMatchObject({ balance: -1 });
    expect(await ledger()).toEqual(before);
    expect(await ledger('cab-other')).toEqual({ balance: -1, entries: 1 });
  });

  it('ends a waiting pull when a grant commits, with the cabinet’s newest wallet seq', async () => {
    const cursor = (await exchange(second, [])).json<WalletExchangeResponse>().last_seq;
    const waiting = hub.request({
      method: 'GET',
      url: pathTo(pullChanges, {}, { after: 0, wait: 20, wallet_after: cursor }),
      headers: second.headers,
    });
    await expect.poll(() => hub.app.hubWaiters.count()).toBe(1);
    await grantHubCredits(hub.deps, 'cab-w', 5, null, log);
    const answer = (await waiting).json<PullResponse>();
    expect(answer.wallet_seq).toBe(cursor + 1);
  });
});

describe('what a cabinet’s wallet may hold: a hostile device cannot flood the ledger', () => {
  it('refuses new entries past the cabinet’s quota whole with hub_quota_exceeded, storing nothing; entries held are acknowledged again; other cabinets go on', async () => {
    const limited = await startHub(pg, { limits: { cabinetWalletEntries: 5 } });
    try {
      const thief_ = await pairTestDevice(limited, { id: 'cab-flood' });
      const neighbour = await pairTestDevice(limited, { id: 'cab-calm' });
      const send = (device: TestDevice, entries: ReturnType<typeof entry>[]) =>
        limited.request({ method: 'POST', url: pathTo(exchangeWallet), headers: device.headers, body: { after: 0, entries } });
      const debits = (n: number) => Array.from({ length: n }, () => entry({ kind: 'debit', amount: -1, job_id: randomUUID() }));
      const count = async (cabinetId: string) =>
        (await limited.database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM hub_wallet_entries WHERE cabinet_id = ${cabinetId}`)[0]
          ?.n;
      const first3 = debits(3);
      expect((await send(thief_, first3)).statusCode).toBe(200);
      await grantHubCredits(limited.deps, 'cab-flood', 10, null, log);
      const over = await send(thief_, debits(2));
      expect(over.statusCode).toBe(409);
      expect(over.json()).toMatchObject({ error: 'hub_quota_exceeded', details: { quota: 'wallet_entries', limit: 5 } });
      expect(await count('cab-flood')).toBe(4);
      // What the hub holds is acknowledged again (a lost answer), with the one entry still allowed.
      const last = await send(thief_, [...first3, ...debits(1)]);
      expect(last.statusCode, last.body).toBe(200);
      expect(last.json<WalletExchangeResponse>().balance).toBe(10 - 4);
      expect((await send(thief_, first3)).statusCode).toBe(200);
      expect((await send(thief_, debits(1))).json()).toMatchObject({ error: 'hub_quota_exceeded' });
      expect(await count('cab-flood')).toBe(5);
      expect((await send(neighbour, debits(5))).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('bounds one exchange: at most 500 entries, in a body of at most 256 KiB', async () => {
    const before = await ledger();
    const many = Array.from({ length: 501 }, () => entry({ kind: 'debit', amount: -1, job_id: randomUUID() }));
    const tooMany = await hub.request({
      method: 'POST',
      url: pathTo(exchangeWallet),
      headers: thief.headers,
      body: { after: 0, entries: many },
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error).toBe('validation_error');
    // 500 entries with notes of 200 three-byte characters: over the body's limit, refused before it is parsed.
    const heavy = many.slice(0, 500).map((e) => ({ ...e, note: '€'.repeat(200) }));
    const tooLarge = await hub.request({
      method: 'POST',
      url: pathTo(exchangeWallet),
      headers: thief.headers,
      body: { after: 0, entries: heavy },
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().error).toBe('payload_too_large');
    expect(await ledger()).toEqual(before);
  });
});

describe('courtier hub credits', () => {
  it('grants and shows the balance, and says what is wrong with bad input, exit code non-zero', async () => {
    const url = hub.databaseUrl;
    const granted = await runCourtier([
      'hub',
      'credits',
      'grant',
      '--cabinet',
      'cab-w',
      '--amount',
      '25',
      '--note',
      'mai',
      '--json',
      '--database-url',
      url,
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    const grant = JSON.parse(granted.stdout) as { balance: number; granted: number };
    expect(grant.granted).toBe(25);
    const balance = await runCourtier(['hub', 'credits', 'balance', '--cabinet', 'cab-w', '--json', '--database-url', url]);
    const shown = JSON.parse(balance.stdout) as { cabinet_id: string; balance: number; entries: unknown[] };
    expect(shown).toMatchObject({ cabinet_id: 'cab-w', balance: grant.balance });
    // Newest first.
    expect(shown.entries[0]).toMatchObject({ kind: 'grant', amount: 25, note: 'mai', device_id: null });
    const human = await runCourtier(['hub', 'credits', 'balance', '--cabinet', 'cab-w', '--database-url', url]);
    expect(human.stdout).toContain(`Cabinet cab-w: ${grant.balance} credits.`);

    const bad: [string[], string][] = [
      [['grant', '--cabinet', 'cab-w'], '--amount is required'],
      [['grant', '--cabinet', 'cab-w', '--amount', '0'], '--amount must be a whole number'],
      [['grant', '--cabinet', 'cab-w', '--amount', '-5'], '--amount'],
      [['grant', '--cabinet', 'cab-w', '--amount', '2.5'], '--amount must be a whole number'],
      [['grant', '--cabinet', 'cab-w', '--amount', '99999999999'], '--amount must be a whole number'],
      [['grant', '--amount', '5'], '--cabinet is required'],
      [['grant', '--cabinet', 'cab-w', '--amount', '5', '--note', 'bell\u0007'], '--note'],
      [['refund', '--cabinet', 'cab-w'], 'use grant or balance'],
      [['grant', '--cabinet', 'cab-nowhere', '--amount', '5'], 'No cabinet cab-nowhere'],
    ];
    for (const [args, message] of bad) {
      const result = await runCourtier(['hub', 'credits', ...args, '--json', '--database-url', url]);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(JSON.parse(result.stdout).message, args.join(' ')).toContain(message);
    }
    expect((await ledger()).balance).toBe(grant.balance);
    const audit = await hub.database.sql<{ action: string }[]>`SELECT action FROM hub_audit_events WHERE action = 'hub.credits_granted'`;
    expect(audit).toHaveLength(1);
  }, 60_000);
});
