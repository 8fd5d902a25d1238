import type { Result } from 'autocannon';
import type { ServerChild } from './child.js';
import type { LatencyHistogram } from './latency.js';
import { measureRun, startLoad, type CpuReader, type LoadOptions, type Measurement } from './load.js';
import { listOpportunities } from '../../shared/crm-endpoints.js';
import { pathTo } from '../../shared/endpoint.js';

/** POST /opportunities with a fresh Idempotency-Key per request: every response is a create. */
const CREATE_PATH = pathTo(listOpportunities);

const CREATE_BODY = JSON.stringify({
  title: 'Bench [<id>]',
  product: 'auto',
  contact: { last_name: 'Bench', email: 'bench@example.fr' },
  expected_value_eur: 1200,
  tags: ['bench'],
});

function runCreate(server: ServerChild, path: string, connections: number, seconds: number, latency?: LatencyHistogram) {
  const headers = { ...server.headers, 'content-type': 'application/json', 'idempotency-key': 'bench-[<id>]' };
  return startLoad(
    { url: server.origin + path, method: 'POST', headers, body: CREATE_BODY, idReplacement: true },
    connections,
    seconds,
    latency,
  );
}

/** Every response must be a 201: a replay (200) or an error would mean the keys were not fresh. */
function assertAllCreated(result: Result, label: string): void {
  const created = result.statusCodeStats['201']?.count ?? 0;
  if (result.errors + result.timeouts + result.resets > 0 || created !== result.requests.total || created === 0) {
    const statuses = Object.entries(result.statusCodeStats).map(([code, { count }]) => `${code}×${count}`);
    throw new Error(
      `${label}: not every response was a 201 (errors ${result.errors}, timeouts ${result.timeouts}; statuses: ${statuses.join(', ') || 'none'})`,
    );
  }
}

/**
 * POST with fresh keys, measured as measure() measures a GET; `side` as for measureRun. `path` is
 * the API's by default (the bare-sqlite baseline has its own).
 */
export async function measureCreate(
  server: ServerChild,
  options: LoadOptions,
  side: Record<string, CpuReader> = {},
  path = CREATE_PATH,
): Promise<Measurement> {
  const measurement = await measureRun(
    server,
    `POST ${path}`,
    (seconds, latency) => runCreate(server, path, options.connections, seconds, latency),
    options,
    assertAllCreated,
    side,
  );
  console.log(`   POST: ${measurement.requests} responses, all 201`);
  return measurement;
}
