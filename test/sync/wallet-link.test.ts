// @module-tag postgres
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_GRANT_CREDITS } from '../../shared/sync-wallet.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { cancelJobAndRobot } from '../../server/automation/job-controls.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { connectCabinet, disconnectCabinet } from '../../server/sync/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { creditBalance, grantCredits, walletConsistent } from '../../server/wallet/service.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { closeSyncNode, exchangeNode, fetchHub, openSyncNode, pushNode, type SyncNode } from '../helpers/sync-node.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * The credits of jobs debited before an install linked its cabinet to the hub, through a real hub
 * on PostgreSQL: the registering install carries its unfinished jobs' debits to the cabinet's
 * wallet, so that their refunds reach it; a reconnecting install's earlier debits were never the
 * cabinet's, so their refunds stay on the install, neither sent (the hub would refuse them) nor counted.
 */
const fixture = useListeningHub();
const nodes: SyncNode[] = [];
/** Each run of a quote of the test insurer costs this. */
const COST = 10;

afterAll(() => {
  for (const node of nodes) closeSyncNode(node);
});

/** An install with a cabinet of its own, the test insurer's login and `credits` granted locally; not linked. */
async function installWithCredits(credits: number): Promise<SyncNode> {
  const opened = openSyncNode(Date.now(), undefined, undefined, [createTestInsurer()]);
  const { cabinet_id: cabinetId } = await initCabinet(opened.deps, {
    cabinet: 'Cabinet Lien',
    email: 'a@l.fr',
    password: 'correct horse battery',
  });
  const node = { ...opened, cabinetId };
  setInsurerCredentials(node.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
  grantCredits(node.deps, cabinetId, credits);
  nodes.push(node);
  return node;
}

let postcode = 20_000;
function enqueue(node: SyncNode): string {
  postcode += 1;
  const request = {
    compagnie: 'testco',
    produit: 'auto',
    dicData: { postcode: String(postcode), birth_date: '1984-03-09', formula: 'tiers' },
  };
  return enqueueTarification(node.deps, node.cabinetId, request, 'prod').job_id;
}

function cancel(node: SyncNode, jobId: string): void {
  cancelJobAndRobot(node.deps, { abort: () => undefined }, node.cabinetId, jobId);
}

async function connect(node: SyncNode, target: { register: string } | { join: string }): Promise<void> {
  const code = await fixture.hub.invite(target);
  await connectCabinet(
    node.deps,
    { cabinetId: node.cabinetId, hubUrl: fixture.hub.url, code, deviceName: 'A' },
    { fetch: fetchHub, records: node.records },
    CLI_ACTOR,
  );
  await pushNode(node);
  await exchangeNode(node);
}

async function hubLedger(cabinetId: string): Promise<{ balance: number; entries: [string, number][] }> {
  const [row] = await fixture.hub.database.sql<
    { balance: string }[]
  >`SELECT wallet_balance AS balance FROM hub_cabinets WHERE id = ${cabinetId}`;
  const entries = await fixture.hub.database.sql<
    { kind: string; amount: number }[]
  >`SELECT kind, amount FROM hub_wallet_entries WHERE cabinet_id = ${cabinetId} ORDER BY seq`;
  return { balance: Number(row?.balance), entries: entries.map((e) => [e.kind, e.amount]) };
}

const states = (node: SyncNode, jobId: string) =>
  node.deps.db.sqlite.prepare('SELECT kind, hub_state FROM wallet_ledger WHERE job_id = ? ORDER BY id').all(jobId);

describe('jobs debited before the cabinet’s wallet was the hub’s', () => {
  it('registering: the debits of unfinished jobs go with the opening, so that a refund after connecting reaches the cabinet; a finished job’s stays behind', async () => {
    const node = await installWithCredits(100);
    const finished = enqueue(node);
    cancel(node, finished);
    const queued = enqueue(node);
    expect(creditBalance(node.deps, node.cabinetId)).toBe(100 - COST);

    await connect(node, { register: node.cabinetId });
    // The opening is raised by the unfinished job's debit, which the hub holds as this device's: the balance is the same.
    expect(await hubLedger(node.cabinetId)).toEqual({
      balance: 100 - COST,
      entries: [
        ['opening', 100],
        ['debit', -COST],
      ],
    });
    expect(creditBalance(node.deps, node.cabinetId)).toBe(100 - COST);

    // It fails after the connect: its refund is the cabinet's.
    cancel(node, queued);
    await exchangeNode(node);
    expect(await hubLedger(node.cabinetId)).toEqual({
      balance: 100,
      entries: [
        ['opening', 100],
        ['debit', -COST],
        ['refund', COST],
      ],
    });
    expect(states(node, queued)).toEqual([
      { kind: 'debit', hub_state: 'held' },
      { kind: 'refund', hub_state: 'held' },
    ]);
    expect(creditBalance(node.deps, node.cabinetId)).toBe(100);
    expect(walletConsistent(node.deps, node.cabinetId)).toBe(true);
  });

  it('registering with as much as the hub takes as an opening: a debit the opening cannot cover is not carried, so that the cabinet never pays it out of its own credits', async () => {
    const node = await installWithCredits(MAX_GRANT_CREDITS);
    grantCredits(node.deps, node.cabinetId, COST);
    const queued = enqueue(node);
    await connect(node, { register: node.cabinetId });
    expect(await hubLedger(node.cabinetId)).toEqual({ balance: MAX_GRANT_CREDITS, entries: [['opening', MAX_GRANT_CREDITS]] });
    expect(creditBalance(node.deps, node.cabinetId)).toBe(MAX_GRANT_CREDITS);
    // Its refund is this install's only: the cabinet never held the debit.
    cancel(node, queued);
    await exchangeNode(node);
    expect(states(node, queued)).toEqual([
      { kind: 'debit', hub_state: null },
      { kind: 'refund', hub_state: 'outside' },
    ]);
    expect(await hubLedger(node.cabinetId)).toMatchObject({ balance: MAX_GRANT_CREDITS });
    expect(walletConsistent(node.deps, node.cabinetId)).toBe(true);
  });

  it('reconnecting: a refund of a debit the cabinet never held, or held from the install’s earlier device, stays on the install, neither sent nor counted', async () => {
    const node = await installWithCredits(100);
    await connect(node, { register: node.cabinetId });
    const linked = enqueue(node);
    await disconnectCabinet(node.deps, node.cabinetId, { fetch: fetchHub }, CLI_ACTOR);
    const offline = enqueue(node);
    expect(creditBalance(node.deps, node.cabinetId)).toBe(100 - 2 * COST);

    await connect(node, { join: node.cabinetId });
    // What it spent while disconnected stays its own: it takes the cabinet's balance.
    expect(creditBalance(node.deps, node.cabinetId)).toBe(100 - COST);
    cancel(node, linked);
    cancel(node, offline);
    await exchangeNode(node);
    for (const jobId of [linked, offline])
      expect(states(node, jobId)).toEqual([
        { kind: 'debit', hub_state: null },
        { kind: 'refund', hub_state: 'outside' },
      ]);
    expect(await hubLedger(node.cabinetId)).toEqual({
      balance: 100 - COST,
      entries: [
        ['opening', 100],
        ['debit', -COST],
      ],
    });
    expect(creditBalance(node.deps, node.cabinetId)).toBe(100 - COST);
    expect(walletConsistent(node.deps, node.cabinetId)).toBe(true);
    // The job shows its credits given back, once: a second refund is refused by the ledger.
    expect(node.deps.db.sqlite.prepare("SELECT count(*) AS n FROM wallet_ledger WHERE hub_state = 'refused'").get()).toEqual({ n: 0 });
  });
});
