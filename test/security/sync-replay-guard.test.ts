// @module-tag postgres
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import { pushChanges, type SyncChange } from '../../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../../shared/sync-pairing.js';
import { formatHlc } from '../../shared/hlc.js';
import { CLI_ACTOR } from '../../server/audit/service.js';
import { enqueueTarification } from '../../server/automation/service.js';
import * as jobStore from '../../server/automation/store.js';
import * as queueStore from '../../server/automation/store-queue.js';
import * as quotaStore from '../../server/automation/store-quota.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { ApiError } from '../../server/errors.js';
import { canonicalJson } from '../../server/platform/http/canonical-json.js';
import { connectCabinet } from '../../server/sync/service.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { creditBalance, grantCredits } from '../../server/wallet/service.js';
import { useListeningHub } from '../helpers/use-hub.js';
import { PROTOCOL } from '../helpers/hub.js';
import { fetchHub, openSyncNode, pullNode, pushNode, useSyncInstalls, type SyncNode } from '../helpers/sync-node.js';
import { createTestInsurer } from '../helpers/test-insurer.js';

/**
 * A stolen laptop of the cabinet forges a job "running on another computer" for a pricing it knows
 * a broker will ask for: the installs' replay guard counts another install's unfinished jobs, so the
 * forgery blocks that request — for a bounded time only. A job counts within the guard's window
 * (10 minutes from its creation), and a creation time that is more than the hub's clock tolerance
 * (5 minutes) in the install's future is not believed: no job blocks a request for longer than
 * 15 minutes after it arrives. It never runs, costs or counts on the install that pulled it.
 */

const MINUTE = 60_000;
const fixture = useListeningHub();
const { nodes } = useSyncInstalls();

/** An install of the cabinet with an insurer login and credits, connected to the hub, and a stolen laptop paired with it. */
async function victimAndThief(): Promise<{ victim: SyncNode; thief: PairResponse }> {
  const opened = openSyncNode(Date.now(), undefined, undefined, [createTestInsurer()]);
  const { cabinet_id: cabinetId } = await initCabinet(opened.deps, {
    cabinet: 'Cabinet Dupont',
    email: 'a@dupont.fr',
    password: 'correct horse battery',
  });
  const victim = { ...opened, cabinetId };
  nodes.push(victim);
  // Before connecting: the balance the install brings to the cabinet's wallet.
  grantCredits(victim.deps, cabinetId, 100);
  await connectCabinet(
    victim.deps,
    { cabinetId, hubUrl: fixture.hub.url, code: await fixture.hub.invite({ register: cabinetId }), deviceName: 'Poste A' },
    { fetch: fetchHub, records: victim.records },
    CLI_ACTOR,
  );
  await pushNode(victim);
  setInsurerCredentials(victim.deps, cabinetId, 'testco', { login: 'broker', password: 'secret' });
  const res = await fetch(fixture.hub.url + pathTo(pairDevice), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PROTOCOL },
    body: JSON.stringify({ code: await fixture.hub.invite({ join: cabinetId }), device_name: 'Portable' }),
  });
  expect(res.status).toBe(201);
  return { victim, thief: (await res.json()) as PairResponse };
}

/** The pricing a broker asks for, and its hash as the replay guard computes it. */
function pricing(postcode: string) {
  const dicData = { postcode, birth_date: '1984-03-09', formula: 'tiers' };
  const hash = createHash('sha256')
    .update(canonicalJson({ compagnie: 'testco', produit: 'auto', dicData }))
    .digest('hex');
  return { request: { compagnie: 'testco', produit: 'auto', dicData }, hash };
}

/** A running job as an install sends it, for that request, created when the thief says. */
function forgedRunning(hash: string, createdAt: number): Record<string, unknown> {
  return {
    compagnie: 'testco',
    produit: 'auto',
    dic_data: '{}',
    request_hash: hash,
    devis_id: randomUUID(),
    status: 'running',
    progress_step: 'logging in',
    progress_percent: 10,
    cost_credits: 10,
    credits_consumed: null,
    result_tarif_cents: null,
    result_suspens: null,
    error_code: null,
    error_message: null,
    error_technical: null,
    submitted: false,
    attempts: 1,
    mfa_requested_at: null,
    mfa_expires_at: null,
    environment: 'prod',
    robot_compagnie: 'testco',
    created_at: createdAt,
    updated_at: createdAt,
    finished_at: null,
  };
}

async function push(thief: PairResponse, jobs: [string, Record<string, unknown>][]): Promise<void> {
  const changes: SyncChange[] = jobs.map(([id, fields], i) => ({
    number: i + 1,
    kind: 'job',
    record_id: id,
    op: 'upsert',
    hlc: formatHlc({ time: Date.now(), counter: i, device: thief.device_id }),
    fields,
  }));
  const res = await fetch(fixture.hub.url + pathTo(pushChanges), {
    method: 'POST',
    headers: { authorization: `Bearer ${thief.device_secret}`, ...PROTOCOL, 'content-type': 'application/json' },
    body: JSON.stringify({ changes }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('a forged running job from a stolen laptop', () => {
  it('blocks the same pricing on another install for the guard’s window only, and one dated in the future not at all; it never runs, costs or counts there', async () => {
    const { victim, thief } = await victimAndThief();
    const now = victim.clock.now();
    const blocked = pricing('75001');
    const farAhead = pricing('69003');
    const forged = randomUUID();
    const forgedAhead = randomUUID();
    await push(thief, [
      [forged, forgedRunning(blocked.hash, now)],
      // A year ahead: "younger than the window" for a year, were it believed.
      [forgedAhead, forgedRunning(farAhead.hash, now + 365 * 24 * 60 * MINUTE)],
    ]);
    await pullNode(victim);
    expect(jobStore.findJob(victim.deps.db.orm, victim.cabinetId, forged)?.status).toBe('running');

    // Within the window the guard answers with the forged job, as it would with one of its own.
    const replay = refusal(() => enqueueTarification(victim.deps, victim.cabinetId, blocked.request, 'prod'));
    expect(replay.code).toBe('rpa_replay_detected');
    expect(replay.details).toEqual({ retry_after_seconds: 600, job_id: forged, job_status: 'running' });
    expect(replay.message).toContain('on another computer of the cabinet');
    // The one dated a year ahead is not believed: that pricing goes at once.
    const notBlocked = enqueueTarification(victim.deps, victim.cabinetId, farAhead.request, 'prod');
    expect(notBlocked.status).toBe('pending');

    // Nine minutes on, still blocked (the window is the install's own); past ten, the pricing goes.
    victim.clock.advance(9 * MINUTE);
    expect(refusal(() => enqueueTarification(victim.deps, victim.cabinetId, blocked.request, 'prod')).details).toEqual({
      retry_after_seconds: 60,
      job_id: forged,
      job_status: 'running',
    });
    victim.clock.advance(MINUTE + 1);
    const priced = enqueueTarification(victim.deps, victim.cabinetId, blocked.request, 'prod');
    expect(priced.job_id).not.toBe(forged);

    // The forged jobs were never the install's: no lease, no attempt, no debit, no place in its hour's quota.
    // The robots claim the oldest of the install's own jobs: the forged ones, running on the same insurer login, hold nothing back.
    const claimed = victim.deps.db.immediateTransaction(() => queueStore.claimNextJob(victim.deps.db.orm, victim.clock.now(), MINUTE));
    expect(claimed?.id).toBe(notBlocked.job_id);
    for (const id of [forged, forgedAhead])
      expect(jobStore.findJob(victim.deps.db.orm, victim.cabinetId, id)).toMatchObject({
        status: 'running',
        leaseUntil: null,
        enqueueNumber: null,
        attempts: 1,
      });
    expect(creditBalance(victim.deps, victim.cabinetId)).toBe(100 - 2 * 10);
    expect(quotaStore.enqueuesSince(victim.deps.db.orm, victim.cabinetId, 0).count).toBe(2);
  });

  it('a creation time up to the hub’s clock tolerance ahead is believed (an honest clock a little fast): it blocks 15 minutes at most', async () => {
    const { victim, thief } = await victimAndThief();
    const ahead = pricing('13001');
    const forged = randomUUID();
    await push(thief, [[forged, forgedRunning(ahead.hash, victim.clock.now() + 5 * MINUTE)]]);
    await pullNode(victim);
    const replay = refusal(() => enqueueTarification(victim.deps, victim.cabinetId, ahead.request, 'prod'));
    expect(replay.details).toEqual({ retry_after_seconds: 15 * 60, job_id: forged, job_status: 'running' });
    victim.clock.advance(15 * MINUTE + 1);
    expect(enqueueTarification(victim.deps, victim.cabinetId, ahead.request, 'prod').status).toBe('pending');
  });
});
