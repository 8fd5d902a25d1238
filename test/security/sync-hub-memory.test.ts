// @module-tag postgres
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathTo } from '../../shared/endpoint.js';
import {
  MAX_CHANGE_BYTES,
  MAX_PUSH_BYTES,
  pullChanges,
  pushChanges,
  type PullResponse,
  type SyncChange,
} from '../../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../../shared/sync-pairing.js';
import { formatHlc } from '../../shared/hlc.js';
import { runCourtier, startHubServeProcess, stopChild } from '../helpers/cli.js';
import { PROTOCOL } from '../helpers/hub.js';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * The hub's memory while one device pushes the largest changes it may and another pulls them, on
 * a real `courtier hub serve` process: pages are bounded in bytes, so what the hub holds for a pull
 * does not grow with what a device stored. (Before, one pull of 1000 such changes made an answer of
 * a quarter of a gigabyte, and the hub grew by several times that.)
 */

let pg: TestPostgres;
let hub: { child: ChildProcess; url: string };
let databaseUrl: string;

beforeAll(async () => {
  pg = await startTestPostgres();
  databaseUrl = await pg.createDatabase();
  hub = await startHubServeProcess(['--database-url', databaseUrl]);
});
afterAll(async () => {
  await stopChild(hub?.child);
  await pg?.stop();
});

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function invite(args: string[]): Promise<string> {
  const result = await runCourtier(['hub', 'invite', ...args, '--json', '--database-url', databaseUrl]);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { code: string }).code;
}

async function pairing(body: object): Promise<PairResponse> {
  const res = await fetch(hub.url + pathTo(pairDevice), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...PROTOCOL },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as PairResponse;
}

describe.skipIf(process.platform !== 'linux')('the hub’s memory under the largest changes', () => {
  it('stays bounded while a device pushes 120 MiB of changes of 256 KiB and another pulls them all', async () => {
    const cabinetId = randomUUID();
    const writer = await pairing({
      code: await invite(['--new-cabinet', cabinetId]),
      device_name: 'writer',
      cabinet: { id: cabinetId, name: 'Mémoire' },
    });
    const reader = await pairing({ code: await invite(['--cabinet', cabinetId]), device_name: 'reader' });
    const auth = (device: PairResponse) => ({ authorization: `Bearer ${device.device_secret}`, ...PROTOCOL });
    const pid = hub.child.pid ?? 0;
    const idle = rssMb(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
    try {
      const fields = { last_name: 'x'.repeat(MAX_CHANGE_BYTES - 200) };
      const perBatch = Math.floor(MAX_PUSH_BYTES / (MAX_CHANGE_BYTES + 400));
      let number = 0;
      let pushedBytes = 0;
      while (pushedBytes < 120 * 1024 * 1024) {
        const batch: SyncChange[] = Array.from({ length: perBatch }, () => {
          number += 1;
          return {
            number,
            kind: 'client',
            record_id: randomUUID(),
            op: 'upsert',
            hlc: formatHlc({ time: Date.now(), counter: number, device: writer.device_id }),
            fields,
          };
        });
        const res = await fetch(hub.url + pathTo(pushChanges), {
          method: 'POST',
          headers: { ...auth(writer), 'content-type': 'application/json' },
          body: JSON.stringify({ changes: batch }),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        await res.arrayBuffer();
        pushedBytes += perBatch * MAX_CHANGE_BYTES;
      }
      const beforePulls = rssMb(pid);
      const pushesPeak = peak;
      peak = beforePulls;
      let after = 0;
      let received = 0;
      let largestAnswer = 0;
      for (;;) {
        const res = await fetch(hub.url + pathTo(pullChanges, {}, { after, limit: 1000 }), { headers: auth(reader) });
        const text = await res.text();
        largestAnswer = Math.max(largestAnswer, text.length);
        const page = JSON.parse(text) as PullResponse;
        received += page.changes.length;
        after = page.last_seq;
        if (!page.more) break;
      }
      expect(received).toBe(number);
      expect(largestAnswer).toBeLessThan(5 * 1024 * 1024);
      const figures = `idle ${idle.toFixed(0)} MB, peak while pushing ${pushesPeak.toFixed(0)} MB, before the pulls ${beforePulls.toFixed(0)} MB, peak while pulling ${peak.toFixed(0)} MB`;
      // The hub holds a few 8 MiB push bodies or 4 MiB pages and their copies until V8 collects them: bounded,
      // whatever the total stored (the same peak for 360 MiB as for 120), where one page of 1000 such changes
      // made an answer of 250 MB and grew the hub by several times that.
      expect(Math.max(pushesPeak, peak) - idle, figures).toBeLessThan(400);
    } finally {
      clearInterval(sampler);
    }
  });
});
