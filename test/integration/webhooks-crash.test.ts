import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initArgs, runCourtier, startServeProcess } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/server.js';

const dataDir = tempDir();
let receiver: Receiver;
let env: NodeJS.ProcessEnv;
let key: string;

beforeAll(async () => {
  receiver = await startReceiver();
  const caFile = join(dataDir, 'receiver-ca.pem');
  writeFileSync(caFile, receiver.ca);
  env = {
    COURTIER_DATA_DIR: dataDir,
    COURTIER_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: caFile,
    // Short attempts and retries, so that leases of the killed process run out within the test.
    COURTIER_WEBHOOK_TIMEOUT_MS: '1000',
    COURTIER_WEBHOOK_RETRY_DELAYS: '0,1,1,1,1,1',
  };
  const init = await runCourtier([...initArgs('Crash', 'crash@example.fr'), '--json'], {
    env,
  });
  const cabinet = (JSON.parse(init.stdout) as { cabinet_id: string }).cabinet_id;
  const created = await runCourtier(
    ['keys', 'create', '--cabinet', cabinet, '--name', 'k', '--env', 'prod', '--scopes', 'crm:write,webhooks:manage', '--json'],
    { env },
  );
  key = (JSON.parse(created.stdout) as { key: string }).key;
});
afterAll(async () => {
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('webhook delivery across a crash', () => {
  it('after kill -9 mid-delivery, every event is delivered once the service restarts', async () => {
    const first = await startServeProcess([], env);
    const headers = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    const subscribed = await fetch(`${first.url}/api/v1/public/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url, events: ['opportunity.created'] }),
    });
    expect(subscribed.status).toBe(201);

    // The receiver hangs: deliveries are leased and in flight when the process dies.
    receiver.hang(true);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${first.url}/api/v1/public/opportunities`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: `O${i}`, product: 'auto', contact: { last_name: `N${i}` } }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    }
    await receiver.waitFor(1);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    receiver.hang(false);
    const before = new Set(
      receiver.received.map((r) => (JSON.parse(r.rawBody) as { data: { opportunity_id: string } }).data.opportunity_id),
    );
    expect(before.size).toBeLessThan(20);

    const second = await startServeProcess([], env);
    try {
      const deadline = Date.now() + 15_000;
      const delivered = () =>
        new Set(receiver.received.map((r) => (JSON.parse(r.rawBody) as { data: { opportunity_id: string } }).data.opportunity_id));
      while (delivered().size < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect([...delivered()].sort()).toEqual([...ids].sort());
      // At-least-once: envelope ids are stable, so receivers can deduplicate what was sent twice.
      const envelopes = new Map<string, string>();
      for (const r of receiver.received) {
        const body = JSON.parse(r.rawBody) as { id: string; data: { opportunity_id: string } };
        const seen = envelopes.get(body.data.opportunity_id);
        if (seen) expect(body.id).toBe(seen);
        envelopes.set(body.data.opportunity_id, body.id);
      }
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    }
  });
});
