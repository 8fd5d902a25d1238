import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setKillSwitch, setRobotPause } from '../../server/automation/guards.js';
import { createJobQueueSignal } from '../../server/automation/job-signal.js';
import { findJob } from '../../server/automation/jobs.js';
import { enqueueTarification } from '../../server/automation/service.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { startTestServer, testClock, type TestServer } from '../helpers/server.js';
import { createTestInsurer, gated, type TestInsurer } from '../helpers/test-insurer.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the job queue signal', () => {
  it('calls its listeners once, on a later turn, however often it was notified in this one', async () => {
    const signal = createJobQueueSignal();
    let calls = 0;
    const unlisten = signal.listen(() => (calls += 1));
    signal.notify();
    signal.notify();
    expect(calls).toBe(0);
    await nextTurn();
    expect(calls).toBe(1);
    unlisten();
    signal.notify();
    await nextTurn();
    expect(calls).toBe(1);
  });
});

describe('the worker claims what the service signals, without a caller waking it', () => {
  const clock = testClock();
  let server: TestServer;
  let insurer: TestInsurer;
  let cabinetId: string;
  let n = 0;
  const request = () => ({ compagnie: 'testco', produit: 'auto', dicData: { postcode: String(20000 + ++n), birth_date: '1984-03-09' } });

  beforeAll(async () => {
    insurer = createTestInsurer();
    server = await startTestServer({ clock, insurers: [insurer], config: { tarificationQuotaPerHour: 1000 } });
    cabinetId = await server.createCabinet();
    grantCredits(server.deps, cabinetId, 1000);
    setInsurerCredentials(server.deps, cabinetId, 'testco', { login: 'broker', password: 'pw' });
  });
  afterAll(() => server.close());

  it('an enqueue straight through the service starts its robot on the next turns, long before the worker’s 1 s tick', async () => {
    const gate = gated();
    insurer.queue(gate.script);
    const { job_id } = enqueueTarification(server.deps, cabinetId, request(), 'prod');
    expect(findJob(server.deps, cabinetId, job_id)?.status).toBe('pending');
    // The signal's turn: the worker claims there (its interval would take up to a second).
    await nextTurn();
    await nextTurn();
    expect(findJob(server.deps, cabinetId, job_id)?.status).toBe('running');
    await gate.entered;
    gate.open();
    await server.app.robotWorker.idle();
  });

  it('a refused enqueue signals nothing; resuming a cabinet and switching robots back on do', async () => {
    let signalled = 0;
    const unlisten = server.deps.jobQueue.listen(() => (signalled += 1));
    try {
      setKillSwitch(server.deps, 'maintenance');
      expect(() => enqueueTarification(server.deps, cabinetId, request(), 'prod')).toThrow(/switched off/);
      await nextTurn();
      expect(signalled).toBe(0);
      setKillSwitch(server.deps, null);
      await nextTurn();
      expect(signalled).toBe(1);

      setRobotPause(server.deps, cabinetId, { reason: 'audit', by: { userId: 'u', email: 'a@example.fr' } });
      await nextTurn();
      expect(signalled).toBe(1);
      setRobotPause(server.deps, cabinetId, null);
      await nextTurn();
      expect(signalled).toBe(2);
    } finally {
      unlisten();
    }
  });
});
