// @module-tag postgres
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { cancelJobAndRobot } from '../../server/automation/job-controls.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { ApiError } from '../../server/errors.js';
import { createLogger } from '../../server/platform/logging.js';
import { createSyncEngine, type SyncEngine } from '../../server/sync/engine.js';
import { connectCabinet, disconnectCabinet } from '../../server/sync/service.js';
import { exchangeWallet } from '../../server/sync/wallet-exchange.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { creditBalance, getWallet, grantCredits, walletConsistent } from '../../server/wallet/service.js';
import { applyWalletAnswer } from '../../server/wallet/hub-link.js';
import { createHubClient } from '../../server/sync/hub-client.js';
import { deviceSecretName } from '../../server/sync/service.js';
import { runCourtier } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { useListeningHub } from '../helpers/use-hub.js';
import {
  backupSyncNode,
  closeSyncNode,
  exchangeNode,
  fetchHub,
  grantOnHub,
  joinNode,
  openSyncNode,
  pullNode,
  pushNode,
  restoreSyncNode,
  type SyncNode,
} from '../helpers/sync-node.js';
import { createTestInsurer } from '../helpers/test-insurer.js';
import * as syncStore from '../../server/sync/store.js';

/**
 * One wallet per cabinet across its synced installs, through a real hub on PostgreSQL: the hub
 * keeps the ledger and the balance; each install mirrors it, and spends against the balance the hub
 * last gave it, at most its offline allowance beyond what the hub has acknowledged.
 */
const fixture = useListeningHub();
const nodes: SyncNode[] = [];
/** Each run of a quote of the test insurer costs this. */
const COST = 10;
const ALLOWANCE = 20;

afterAll(async () => {
  for (const node of nodes) closeSyncNode(node);
});

/** An install with the test insurer, its login, and an offline allowance of 20 credits and 3 runs. */
function withInsurer(node: SyncNode): SyncNode {
  node.deps = { ...node.deps, config: { ...node.deps.config, offlineCreditsAllowance: ALLOWANCE, offlineQuotaAllowance: 3 } };
  setInsurerCredentials(node.deps, node.cabinetId, 'testco', { login: 'broker', password: 'secret' });
  nodes.push(node);
  return node;
}

/** A registers its cabinet bringing `opening` credits, B joins; both have exchanged their wallet. */
async function cabinetOfTwo(opening: number): Promise<[SyncNode, SyncNode]> {
  const opened = openSyncNode(Date.now(), undefined, undefined, [createTestInsurer()]);
  const { cabinet_id: cabinetId } = await initCabinet(opened.deps, {
    cabinet: 'Cabinet Wallet',
    email: 'a@w.fr',
    password: 'correct horse battery',
  });
  const a = withInsurer({ ...opened, cabinetId });
  if (opening > 0) grantCredits(a.deps, cabinetId, opening);
  await connectCabinet(
    a.deps,
    { cabinetId, hubUrl: fixture.hub.url, code: await fixture.hub.invite({ register: cabinetId }), deviceName: 'A' },
    { fetch: fetchHub, records: a.records },
    CLI_ACTOR,
  );
  await pushNode(a);
  await exchangeNode(a);
  const b = withInsurer(await joinNode(fixture.hub, cabinetId, Date.now(), 'B', [createTestInsurer()]));
  await exchangeNode(b);
  return [a, b];
}

/** What a running install's sync does: push, pull, then exchange its wallet. */
async function syncNode(node: SyncNode): Promise<void> {
  await pushNode(node);
  await pullNode(node);
  await exchangeNode(node);
}

let postcode = 10_000;
/** A pricing never asked before (the replay guard answers the same one with the earlier job). */
function enqueue(node: SyncNode): { job_id: string } | ApiError {
  postcode += 1;
  try {
    return enqueueTarification(
      node.deps,
      node.cabinetId,
      { compagnie: 'testco', produit: 'auto', dicData: { postcode: String(postcode), birth_date: '1984-03-09', formula: 'tiers' } },
      'prod',
    );
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

const codeOf = (result: { job_id: string } | ApiError) => (result instanceof ApiError ? result.code : 'enqueued');

async function hubBalance(cabinetId: string): Promise<{ balance: number; debits: number }> {
  const [row] = await fixture.hub.database.sql<{ balance: string; debits: number }[]>`
    SELECT wallet_balance AS balance, (SELECT count(*)::int FROM hub_wallet_entries WHERE cabinet_id = ${cabinetId} AND kind = 'debit') AS debits FROM hub_cabinets WHERE id = ${cabinetId}`;
  return { balance: Number(row?.balance), debits: row?.debits ?? -1 };
}

describe('one wallet per cabinet', () => {
  it('counts the registering install’s balance once: the joining install shows the cabinet’s, and a hub grant reaches both running installs', async () => {
    const [a, b] = await cabinetOfTwo(40);
    expect(await hubBalance(a.cabinetId)).toEqual({ balance: 40, debits: 0 });
    expect([creditBalance(a.deps, a.cabinetId), creditBalance(b.deps, b.cabinetId)]).toEqual([40, 40]);
    expect(getWallet(b.deps, b.cabinetId)).toMatchObject({
      balance: 40,
      synced: true,
      unconfirmed_credits: 0,
      ledger: [{ kind: 'opening', amount: 40 }],
    });

    // The installs' own sync engines, long-polling the hub: the grant wakes them, no timer involved.
    const logger = createLogger({ level: 'silent' });
    const engines: SyncEngine[] = [a, b].map((node) =>
      createSyncEngine(node.deps, { logger, records: node.records, pullWaitSeconds: 25, pushIntervalMs: 60_000, scanIntervalMs: 60_000 }),
    );
    try {
      for (const engine of engines) engine.start();
      // Both long polls wait at the hub before the grant.
      await eventually(
        () => fixture.hub.app.hubWaiters.count(),
        (count) => count === 2,
        'both installs waiting on the hub',
      );
      expect(await grantOnHub(fixture.hub, a.cabinetId, 100)).toBe(140);
      for (const node of [a, b])
        await eventually(
          () => creditBalance(node.deps, node.cabinetId),
          (balance) => balance === 140,
          'the grant on each install',
          10_000,
        );
    } finally {
      await Promise.all(engines.map((engine) => engine.stop()));
    }
    for (const node of [a, b]) expect(walletConsistent(node.deps, node.cabinetId)).toBe(true);
  });

  it('two installs spending a balance that covers one run overspend by at most the offline allowance each, and then stop', async () => {
    const [a, b] = await cabinetOfTwo(COST);
    // Neither has heard of the other's run yet: each may run one.
    expect(codeOf(enqueue(a))).toBe('enqueued');
    expect(codeOf(enqueue(b))).toBe('enqueued');
    expect(codeOf(enqueue(a))).toBe('credits_exhausted');
    await exchangeNode(a);
    await exchangeNode(b);
    await exchangeNode(a);
    // The cabinet overspent one run: within one allowance per install.
    const after = await hubBalance(a.cabinetId);
    expect(after).toEqual({ balance: -COST, debits: 2 });
    expect(after.balance).toBeGreaterThanOrEqual(-2 * ALLOWANCE);
    expect([creditBalance(a.deps, a.cabinetId), creditBalance(b.deps, b.cabinetId)]).toEqual([-COST, -COST]);
    for (const node of [a, b]) expect(codeOf(enqueue(node))).toBe('credits_exhausted');

    // Interleaved at random from a larger balance: whatever the order, never more than one allowance per install.
    expect(await grantOnHub(fixture.hub, a.cabinetId, 100 + COST)).toBe(100);
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let step = 0; step < 60; step++) {
      const node = random() < 0.5 ? a : b;
      // Time goes by (the runs' allowance counts the runs made since the install's last pull that caught up).
      node.clock.advance(1000);
      if (random() < 0.7) enqueue(node);
      else await syncNode(node);
    }
    for (const node of [a, b, a]) await exchangeNode(node);
    const final = await hubBalance(a.cabinetId);
    expect(final.balance).toBeGreaterThanOrEqual(-2 * ALLOWANCE);
    expect(final.balance).toBeLessThan(COST);
    expect(100 - final.balance).toBe(final.debits * COST - 2 * COST);
  });

  it('an install that cannot reach the hub stops at its offline allowance, and goes on once it hears from it again', async () => {
    const [a] = await cabinetOfTwo(100);
    const offline = {
      deps: a.deps,
      client: createHubClient({
        hubUrl: 'http://127.0.0.1:9',
        credential: a.deps.secrets.get(deviceSecretName(a.cabinetId)),
        fetch: fetchHub,
        now: () => a.clock.now(),
      }),
    };
    expect(codeOf(enqueue(a))).toBe('enqueued');
    expect(codeOf(enqueue(a))).toBe('enqueued');
    await expect(exchangeWallet(offline, a.cabinetId)).rejects.toThrow(/cannot be reached/);
    const refused = enqueue(a);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      code: 'offline_allowance_exhausted',
      details: { allowance_of: 'credits', used: 2 * COST, allowance: ALLOWANCE },
    });
    expect(getWallet(a.deps, a.cabinetId)).toMatchObject({ balance: 100 - 2 * COST, unconfirmed_credits: 2 * COST });
    // Back online: the hub acknowledges the two runs, and the allowance is whole again.
    await exchangeNode(a);
    expect(getWallet(a.deps, a.cabinetId)).toMatchObject({ balance: 100 - 2 * COST, unconfirmed_credits: 0 });
    expect(codeOf(enqueue(a))).toBe('enqueued');
    expect(await hubBalance(a.cabinetId)).toEqual({ balance: 100 - 2 * COST, debits: 2 });
  });

  it('debits and refunds exactly once when the hub’s answers are lost, or given twice', async () => {
    const [a, b] = await cabinetOfTwo(100);
    const queued = enqueue(a);
    if (queued instanceof ApiError) throw queued;
    // The hub stores the debit, and its answer never arrives (the connection drops).
    let dropAnswers = true;
    const lossy = async (url: string, init: RequestInit) => {
      const res = await fetchHub(url, init);
      if (dropAnswers && url.endsWith('/wallet')) {
        await res.body?.cancel();
        throw new Error('connection reset');
      }
      return res;
    };
    const connection = syncStore.findConnection(a.deps.db.orm, a.cabinetId);
    const client = createHubClient({
      hubUrl: fixture.hub.url,
      credential: a.deps.secrets.get(deviceSecretName(a.cabinetId)),
      fetch: lossy,
      now: () => a.clock.now(),
    });
    expect(connection).toBeDefined();
    await expect(exchangeWallet({ deps: a.deps, client }, a.cabinetId)).rejects.toThrow(/cannot be reached/);
    cancelJobAndRobot(a.deps, { abort: () => undefined }, a.cabinetId, queued.job_id);
    await expect(exchangeWallet({ deps: a.deps, client }, a.cabinetId)).rejects.toThrow(/cannot be reached/);
    expect(await hubBalance(a.cabinetId)).toEqual({ balance: 100, debits: 1 });
    // The answer that comes at last, then the same answer once more (a retried request): nothing doubles.
    dropAnswers = false;
    const answer = await client.exchangeWallet({ after: 0, entries: [] });
    await exchangeNode(a);
    applyWalletAnswer(a.deps, a.cabinetId, answer, 0);
    await exchangeNode(a);
    await exchangeNode(b);
    const kinds = await fixture.hub.database.sql<
      { kind: string }[]
    >`SELECT kind FROM hub_wallet_entries WHERE cabinet_id = ${a.cabinetId} AND job_id = ${queued.job_id} ORDER BY seq`;
    expect(kinds.map((k) => k.kind)).toEqual(['debit', 'refund']);
    expect(await hubBalance(a.cabinetId)).toEqual({ balance: 100, debits: 1 });
    for (const node of [a, b]) {
      expect(creditBalance(node.deps, node.cabinetId)).toBe(100);
      expect(walletConsistent(node.deps, node.cabinetId)).toBe(true);
    }
    expect(a.deps.db.sqlite.prepare('SELECT kind, hub_state FROM wallet_ledger WHERE job_id = ? ORDER BY id').all(queued.job_id)).toEqual([
      { kind: 'debit', hub_state: 'held' },
      { kind: 'refund', hub_state: 'held' },
    ]);
  });

  it('an install restored from a backup, and a laptop joined again, get the cabinet’s balance back', async () => {
    const [a, b] = await cabinetOfTwo(100);
    const backup = backupSyncNode(b);
    const queued = enqueue(b);
    expect(codeOf(queued)).toBe('enqueued');
    await pushNode(b);
    await exchangeNode(b);
    const restored = restoreSyncNode(b, backup);
    nodes.splice(nodes.indexOf(b), 1, restored);
    await pullNode(restored);
    await exchangeNode(restored);
    expect(creditBalance(restored.deps, restored.cabinetId)).toBe(100 - COST);
    // Its own debit made after the backup is its own again.
    expect(
      restored.deps.db.sqlite
        .prepare('SELECT kind, hub_state FROM wallet_ledger WHERE job_id = ?')
        .all((queued as { job_id: string }).job_id),
    ).toEqual([{ kind: 'debit', hub_state: 'held' }]);
    const laptop = withInsurer(await joinNode(fixture.hub, a.cabinetId, Date.now(), 'Portable', [createTestInsurer()]));
    await exchangeNode(laptop);
    expect(creditBalance(laptop.deps, laptop.cabinetId)).toBe(100 - COST);
  });

  it('counts the hourly quota over the cabinet’s installs, and an install offline at most its allowance of runs beyond it', async () => {
    const [a, b] = await cabinetOfTwo(1000);
    for (const node of [a, b])
      node.deps = { ...node.deps, config: { ...node.deps.config, tarificationQuotaPerHour: 5, offlineCreditsAllowance: 1000 } };
    expect([enqueue(a), enqueue(a), enqueue(a)].map(codeOf)).toEqual(['enqueued', 'enqueued', 'enqueued']);
    await pushNode(a);
    await exchangeNode(a);
    await pullNode(b);
    await exchangeNode(b);
    // B sees A's three: two left for the cabinet.
    expect([enqueue(b), enqueue(b), enqueue(b)].map(codeOf)).toEqual(['enqueued', 'enqueued', 'rpa_quota_exceeded']);

    // Offline (D has not pulled since its runs): at most 3 runs beyond what it knows of the others'.
    const [c, d] = await cabinetOfTwo(1000);
    for (const node of [c, d]) node.deps = { ...node.deps, config: { ...node.deps.config, offlineCreditsAllowance: 1000 } };
    const runs = [enqueue(d), enqueue(d), enqueue(d), enqueue(d)];
    expect(runs.map(codeOf)).toEqual(['enqueued', 'enqueued', 'enqueued', 'offline_allowance_exhausted']);
    expect(runs[3]).toMatchObject({ details: { allowance_of: 'runs', used: 3, allowance: 3 } });
    // Back online a moment later: it knows the others' runs again.
    d.clock.advance(1);
    await syncNode(d);
    expect(codeOf(enqueue(d))).toBe('enqueued');
    expect(codeOf(enqueue(c))).toBe('enqueued');
  });

  it('counts the runs’ allowance from the last pull that brought the other installs’ jobs, not from the last wallet exchange', async () => {
    const [c, d] = await cabinetOfTwo(1000);
    for (const node of [c, d])
      node.deps = { ...node.deps, config: { ...node.deps.config, tarificationQuotaPerHour: 5, offlineCreditsAllowance: 1000 } };
    c.deps = { ...c.deps, config: { ...c.deps.config, offlineQuotaAllowance: 10 } };
    await pullNode(d);
    // C uses the cabinet's hour, and D does not hear of it: its pushes and wallet exchanges go through, its pulls do not.
    expect([enqueue(c), enqueue(c), enqueue(c), enqueue(c), enqueue(c)].map(codeOf)).toEqual(Array(5).fill('enqueued'));
    await pushNode(c);
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) {
      d.clock.advance(1);
      runs.push(codeOf(enqueue(d)));
      await pushNode(d);
      await exchangeNode(d);
    }
    expect(runs).toEqual(['enqueued', 'enqueued', 'enqueued', 'offline_allowance_exhausted']);
    // Its pull brings C's runs: the cabinet's hour is used, past it by D's allowance at most.
    await pullNode(d);
    expect(codeOf(enqueue(d))).toBe('rpa_quota_exceeded');
  });

  it('goes on counting the runs an install could not push, though its pulls go through', async () => {
    const [c, d] = await cabinetOfTwo(1000);
    for (const node of [c, d]) node.deps = { ...node.deps, config: { ...node.deps.config, offlineCreditsAllowance: 1000 } };
    // D's pushes fail (its clock is refused, say), its pulls do not: C never hears of its runs.
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) {
      d.clock.advance(1);
      await pullNode(d);
      runs.push(codeOf(enqueue(d)));
    }
    expect(runs).toEqual(['enqueued', 'enqueued', 'enqueued', 'offline_allowance_exhausted']);
    // Once its runs are on the hub, its next catch-up starts the count again.
    await pushNode(d);
    d.clock.advance(1);
    await pullNode(d);
    expect(codeOf(enqueue(d))).toBe('enqueued');
  });

  it('after a disconnect, an install keeps the balance it last knew and grants locally again; while synced, a local grant is refused', async () => {
    const [a] = await cabinetOfTwo(100);
    expect(() => grantCredits(a.deps, a.cabinetId, 10)).toThrow(expect.objectContaining({ code: 'credits_on_hub' }));
    const cli = await runCourtier(['credits', 'grant', '--cabinet', a.cabinetId, '--amount', '10', '--json', '--data-dir', a.dir]);
    expect(cli.code).not.toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      error: 'credits_on_hub',
      message: expect.stringContaining('courtier hub credits grant'),
    });
    const shown = await runCourtier(['credits', 'balance', '--cabinet', a.cabinetId, '--json', '--data-dir', a.dir]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ balance: 100, synced: true });

    expect(codeOf(enqueue(a))).toBe('enqueued');
    await disconnectCabinet(a.deps, a.cabinetId, { fetch: fetchHub }, CLI_ACTOR);
    // Its run reached the hub before it left.
    expect(await hubBalance(a.cabinetId)).toEqual({ balance: 100 - COST, debits: 1 });
    expect(getWallet(a.deps, a.cabinetId)).toMatchObject({ balance: 100 - COST, synced: false });
    expect(grantCredits(a.deps, a.cabinetId, 5)).toBe(100 - COST + 5);
    expect(walletConsistent(a.deps, a.cabinetId)).toBe(true);
  }, 60_000);
});
