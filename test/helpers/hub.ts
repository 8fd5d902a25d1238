import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { putBlob, SYNC_PROTOCOL_HEADER, SYNC_PROTOCOL_VERSION, type SyncChange } from '../../shared/sync-protocol.js';
import { pairDevice, type PairResponse } from '../../shared/sync-pairing.js';
import { formatHlc, parseHlc } from '../../shared/hlc.js';
import { pathTo } from '../../shared/endpoint.js';
import { buildHubApp } from '../../server/hub/app.js';
import { connectHub, migrateHub, type HubDatabase } from '../../server/hub/database.js';
import { hubDeps, type HubDeps, type HubLimits } from '../../server/hub/deps.js';
import { createInvite } from '../../server/hub/pairing.js';
import { createLogger } from '../../server/platform/logging.js';
import type { TestPostgres } from './postgres.js';
import { testClock, type TestClock } from './server.js';

/** One hub app on a database of the test cluster, driven with inject (real routing, no socket). */
export interface TestHub {
  app: FastifyInstance;
  deps: HubDeps;
  database: HubDatabase;
  databaseUrl: string;
  clock: TestClock;
  logs: string[];
  request(options: {
    method: 'GET' | 'POST' | 'PUT';
    url: string;
    headers?: Record<string, string>;
    body?: unknown;
    payload?: Buffer;
  }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * A hub app. Without databaseUrl, a fresh database; with one, another hub "process" on the same
 * database (its own connections, its own LISTEN, its own long polls).
 */
export async function startHub(
  pg: TestPostgres,
  options: { databaseUrl?: string; clock?: TestClock; protocol?: number; limits?: Partial<HubLimits> } = {},
): Promise<TestHub> {
  const databaseUrl = options.databaseUrl ?? (await pg.createDatabase());
  const database = connectHub(databaseUrl, { max: 12 });
  await migrateHub(database.sql);
  const clock = options.clock ?? testClock(Date.now());
  const deps = hubDeps(database, '0.0.0-test', {
    clock,
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const app = await buildHubApp(deps, { logger: createLogger({ level: 'info', stream }) });
  await app.ready();
  return {
    app,
    deps,
    database,
    databaseUrl,
    clock,
    logs,
    request: ({ method, url, headers, body, payload }) =>
      app.inject({
        method,
        url,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(payload ? { payload } : body === undefined ? {} : { payload: JSON.stringify(body) }),
      }),
    async close() {
      await app.close();
      await database.close();
    },
  };
}

export const PROTOCOL = { [SYNC_PROTOCOL_HEADER]: String(SYNC_PROTOCOL_VERSION) };

export interface TestDevice extends PairResponse {
  headers: Record<string, string>;
}

/** Pairs a device: registers the cabinet (first device) or joins it. */
export async function pairTestDevice(
  hub: TestHub,
  cabinet: { id: string; name?: string },
  options: { join?: boolean; name?: string; address?: string } = {},
): Promise<TestDevice> {
  const invite = await createInvite(hub.deps, options.join ? { join: cabinet.id } : { register: cabinet.id });
  const body = {
    code: invite.code,
    device_name: options.name ?? 'poste',
    ...(options.join ? {} : { cabinet: { id: cabinet.id, name: cabinet.name ?? `Cabinet ${cabinet.id}` } }),
  };
  const res = await hub.app.inject({
    method: 'POST',
    url: pathTo(pairDevice),
    headers: { 'content-type': 'application/json', ...PROTOCOL },
    payload: JSON.stringify(body),
    ...(options.address ? { remoteAddress: options.address } : {}),
  });
  if (res.statusCode !== 201) throw new Error(`pairing failed: ${res.statusCode} ${res.body}`);
  const paired = res.json<PairResponse>();
  return { ...paired, headers: { authorization: `Bearer ${paired.device_secret}`, ...PROTOCOL } };
}

/** A change numbered `number`, stamped at the clock's time. */
export function change(number: number, clockMs: number, overrides: Partial<SyncChange> = {}): SyncChange {
  return {
    number,
    kind: 'client',
    record_id: `client-${number}`,
    op: 'upsert',
    hlc: formatHlc({ time: clockMs, counter: 0, device: 'test-device' }),
    fields: { last_name: `Nom ${number}` },
    ...overrides,
  };
}

/** The batch as its device stamps it: the clock's device part is the device's id (the hub checks it); a clock stamped otherwise on purpose stays. */
export function stampedBy(device: { device_id: string }, batch: SyncChange[]): SyncChange[] {
  return batch.map((c) => {
    const hlc = parseHlc(c.hlc);
    return hlc.device === 'test-device' ? { ...c, hlc: formatHlc({ ...hlc, device: device.device_id }) } : c;
  });
}

export function changes(from: number, count: number, clockMs: number, overrides: Partial<SyncChange> = {}): SyncChange[] {
  return Array.from({ length: count }, (_, i) => change(from + i, clockMs, overrides));
}

/** The hex SHA-256 of the bytes: a blob's address on the hub (computed here, not by the code under test). */
export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The device uploads the bytes as a blob at their address; the hub's answer, whatever it is. */
export function uploadBlob(hub: TestHub, device: TestDevice, bytes: Buffer): Promise<LightMyRequestResponse> {
  return hub.request({
    method: 'PUT',
    url: pathTo(putBlob, { sha256: sha256(bytes) }),
    headers: { ...device.headers, 'content-type': 'application/octet-stream' },
    payload: bytes,
  });
}

/** The device uploads the bytes as a blob, and the hub stores them (200). */
export async function storeBlob(hub: TestHub, device: TestDevice, bytes: Buffer): Promise<void> {
  const res = await uploadBlob(hub, device, bytes);
  expect(res.statusCode, res.body).toBe(200);
}
