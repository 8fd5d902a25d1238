/**
 * Throughput of the hub on a throwaway cluster (not a test: `node --import tsx test/hub/throughput.ts [rows]`).
 * Push: batches of 500 changes of about 1 KB; pull: pages of 1000; one-change pushes one after the
 * other (latency); 8 devices pushing at once. Through the app (inject: routing, validation, auth,
 * PostgreSQL), without sockets. Figures in docs/SYNC.md.
 */
import { pathTo } from '../../shared/endpoint.js';
import { pullChanges, pushChanges, type PullResponse, type SyncChange } from '../../shared/sync-protocol.js';
import { changes, pairTestDevice, startHub, type TestDevice, type TestHub } from '../helpers/hub.js';
import { startTestPostgres } from '../helpers/postgres.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const BATCH = 500;

function kilobyteChange(c: SyncChange): SyncChange {
  return { ...c, fields: { last_name: c.record_id, notes: 'x'.repeat(900), email: `${c.record_id}@example.fr`, phone: '0601020304' } };
}

async function pushAll(hub: TestHub, device: TestDevice, rows: number, batch: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let next = 1; next <= rows; next += batch) {
    const size = Math.min(batch, rows - next + 1);
    const started = performance.now();
    const res = await hub.request({ method: 'POST', url: pathTo(pushChanges), headers: device.headers, body: { changes: changes(next, size, hub.clock.now()).map(kilobyteChange) } });
    if (res.statusCode !== 200) throw new Error(res.body);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const pg = await startTestPostgres();
const hub = await startHub(pg);
try {
  const device = await pairTestDevice(hub, { id: 'cab-bench' });
  let started = performance.now();
  await pushAll(hub, device, ROWS, BATCH);
  const pushSeconds = (performance.now() - started) / 1000;
  console.log(`push ${ROWS} rows of ~1 KB in batches of ${BATCH}: ${pushSeconds.toFixed(1)} s, ${Math.round(ROWS / pushSeconds)} rows/s`);

  started = performance.now();
  let after = 0;
  let pulled = 0;
  for (;;) {
    const page = (await hub.request({ method: 'GET', url: pathTo(pullChanges, {}, { after, limit: 1000 }), headers: device.headers })).json<PullResponse>();
    pulled += page.changes.length;
    after = page.last_seq;
    if (!page.more) break;
  }
  const pullSeconds = (performance.now() - started) / 1000;
  console.log(`pull ${pulled} rows in pages of 1000: ${pullSeconds.toFixed(1)} s, ${Math.round(pulled / pullSeconds)} rows/s`);

  const single = await pairTestDevice(hub, { id: 'cab-bench' }, { join: true });
  const latencies = await pushAll(hub, single, 1000, 1);
  console.log(`single-change push, 1000 one after the other: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);

  const writers = await Promise.all(Array.from({ length: 8 }, (_, i) => pairTestDevice(hub, { id: 'cab-bench' }, { join: true, name: `w${i}` })));
  started = performance.now();
  await Promise.all(writers.map((w) => pushAll(hub, w, 5000, 100)));
  const concurrentSeconds = (performance.now() - started) / 1000;
  console.log(`8 devices of one cabinet at once, 5000 rows each in batches of 100: ${concurrentSeconds.toFixed(1)} s, ${Math.round(40_000 / concurrentSeconds)} rows/s`);
} finally {
  await hub.close();
  await pg.stop();
}
