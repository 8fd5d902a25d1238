import { afterAll, describe, expect, it } from 'vitest';
import { RISK_EXAMPLES, RobotError } from '@courtier/adapter-kit';
import { comparisonEnqueuedSchema, comparisonSchema, type Comparison } from '../../shared/comparaisons.js';
import { setInsurerCredentials } from '../../server/credentials/service.js';
import { listEvents } from '../../server/events/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import { apiClient } from '../helpers/api.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';
import { createTestInsurer, TEST_AUTO_LINE, type Script } from '../helpers/test-insurer.js';

/**
 * A comparison's end, with scripted insurers (no browser): comparaison.completed once every job
 * ended, once, and after a restart for a comparison whose last job ended while the service stopped.
 */
const dataDir = tempDir();
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close().catch(() => undefined);
});

async function start(scripts: Script[] = []) {
  const testco = Object.assign(createTestInsurer('testco', 'Test Assurances'), { risks: TEST_AUTO_LINE });
  const otherco = Object.assign(createTestInsurer('otherco', 'Other Assurances'), { risks: TEST_AUTO_LINE });
  otherco.queue(...scripts);
  const server = await startTestServer({ dataDir, insurers: [testco, otherco], config: { tarificationQuotaPerHour: 1000 } });
  servers.push(server);
  return server;
}

async function settled(api: ReturnType<typeof apiClient>, id: string): Promise<Comparison> {
  for (let i = 0; i < 400; i++) {
    const comparison = comparisonSchema.parse((await api.get(`/automation/comparaisons/${id}`)).body);
    if (!['pending', 'running'].includes(comparison.status)) return comparison;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`comparison ${id} never ended`);
}

const completed = (server: TestServer, cabinetId: string) =>
  listEvents(server.deps, cabinetId).filter((e) => e.type === 'comparaison.completed');

describe('a comparison’s end', () => {
  it('records comparaison.completed once, when the last insurer answers; one that refused makes it partial', async () => {
    const refused: Script = () => Promise.reject(new RobotError('business', 'risk_declined', 'Risque refusé par la compagnie.'));
    const server = await start([refused]);
    const cabinetId = await server.createCabinet();
    grantCredits(server.deps, cabinetId, 100);
    for (const code of ['testco', 'otherco']) setInsurerCredentials(server.deps, cabinetId, code, { login: 'broker', password: 'secret' });
    const api = apiClient(server, server.createKey(cabinetId).key);
    const res = await api.post('/automation/comparaisons', { ligne: 'auto', risque: RISK_EXAMPLES.auto });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = comparisonEnqueuedSchema.parse(res.body).comparaison_id;
    const done = await settled(api, id);
    expect(done.status).toBe('partial');
    expect(done.resultats.map((r) => [r.compagnie, r.status, r.error?.code ?? null])).toEqual([
      ['testco', 'completed', null],
      ['otherco', 'failed', 'risk_declined'],
    ]);
    await expect.poll(() => completed(server, cabinetId).length).toBe(1);
    expect(completed(server, cabinetId)[0]?.data).toMatchObject({ comparaison_id: id, status: 'partial' });
    // Nothing more on later job changes.
    await new Promise((r) => setTimeout(r, 100));
    expect(completed(server, cabinetId)).toHaveLength(1);

    // As if the service had stopped between the last job's end and the comparison's: reopened, its event gone.
    server.withOtherConnection((db) => {
      db.prepare("DELETE FROM events WHERE type = 'comparaison.completed'").run();
      db.prepare('UPDATE comparaisons SET completed_at = NULL').run();
    });
    await server.close();
    const again = await start();
    expect(completed(again, cabinetId)).toHaveLength(1);
    expect(completed(again, cabinetId)[0]?.data).toMatchObject({ comparaison_id: id, status: 'partial' });
  });
});
