import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { jobSchema, type Job } from '../../shared/automation.js';
import { walletSchema } from '../../shared/wallet.js';
import { CLI_WITH_TEST_INSURERS, initArgs, jsonCli, keyArgs, startServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/server.js';

const dataDir = tempDir();
const env = { COURTIER_DATA_DIR: dataDir, COURTIER_JOB_LEASE_SECONDS: '2' };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cli = jsonCli(env);

describe('a tarification across a crash of the service', () => {
  it('kill -9 mid-job: a job not yet submitted is retried once and completes; a submitted one fails, refunded', async () => {
    const { cabinet_id: cabinet } = (await cli(initArgs('Crash', 'jobs@example.fr'))) as { cabinet_id: string };
    const { key } = (await cli(keyArgs(cabinet, 'automation:enqueue,automation:read'))) as { key: string };
    await cli(['credits', 'grant', '--cabinet', cabinet, '--amount', '100']);
    for (const compagnie of ['crash-before', 'crash-after']) {
      await cli(
        ['insurers', 'set-credentials', '--cabinet', cabinet, '--compagnie', compagnie, '--login', 'broker', '--password-stdin'],
        'pw\n',
      );
    }

    const first = await startServeProcess([], { ...env, COURTIER_TEST_HANG: '1' }, CLI_WITH_TEST_INSURERS);
    const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    const get = async (base: string, id: string): Promise<Job> =>
      jobSchema.parse(await (await fetch(`${base}/api/v1/public/automation/jobs/${id}`, { headers })).json());
    const ids: Record<string, string> = {};
    for (const compagnie of ['crash-before', 'crash-after']) {
      const res = await fetch(`${first.url}/api/v1/public/automation/tarifications`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ compagnie, produit: 'auto', dicData: { ref: compagnie } }),
      });
      expect(res.status).toBe(202);
      ids[compagnie] = ((await res.json()) as { job_id: string }).job_id;
    }
    const until = async (base: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await until(first.url, async () => {
      const jobs = await Promise.all(Object.values(ids).map((id) => get(first.url, id)));
      return jobs.every((j) => j.progress.step === 'hanging');
    });
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');

    const second = await startServeProcess([], env, CLI_WITH_TEST_INSURERS);
    try {
      await until(second.url, async () => {
        const jobs = await Promise.all(Object.values(ids).map((id) => get(second.url, id)));
        return jobs.every((j) => ['completed', 'failed'].includes(j.status));
      });
      expect(await get(second.url, ids['crash-before'] ?? '')).toMatchObject({
        status: 'completed',
        credits_consumed: 10,
        result: { tarif_eur: 250 },
      });
      expect(await get(second.url, ids['crash-after'] ?? '')).toMatchObject({
        status: 'failed',
        credits_consumed: 0,
        error: { code: 'worker_crashed', technical: true },
      });
      const wallet = walletSchema.parse(await (await fetch(`${second.url}/api/v1/public/wallet`, { headers })).json());
      expect(wallet.balance).toBe(90);
      expect(wallet.ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  });
});
