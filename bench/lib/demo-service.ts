import { Writable } from 'node:stream';
import { createApiKey } from '../../server/api-keys/service.js';
import { buildApp } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import { defaultDeps, type Deps } from '../../server/deps.js';
import { loadInsurers } from '../../server/insurers/service.js';
import type { Insurer } from '../../server/insurers/registry.js';
import { databaseFile, openDatabase } from '../../server/platform/db/open.js';
import { createLogger } from '../../server/platform/logging.js';
import { initCabinet } from '../../server/tenancy/service.js';
import { grantCredits } from '../../server/wallet/service.js';
import type { BenchContext } from '../benchmark.js';
import { startServerChild } from './child.js';
import { createProcessTree } from './process-tree.js';

type ProcessTree = ReturnType<typeof createProcessTree>;

/** A demo insurer as the benchmarks use it: built in, with its package's folder. */
type DemoInsurer = Insurer & Required<Pick<Insurer, 'origin'>>;

/**
 * The service with every demo insurer, as the robot benchmarks run it: the demo portals in a process
 * of their own (the outside world: mode normal, no think time, excluded from the measured tree), the
 * app in this process on a real port, and one cabinet per name with a test key and credits.
 */
export interface DemoService {
  deps: Deps;
  demos: DemoInsurer[];
  tree: ProcessTree;
  /** A cabinet's test key, made on first use. */
  keyOf(cabinet: string): Promise<string>;
  api(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }>;
  /** Resolves at the next change of one of these jobs (the service's job signal), or after `deadlineMs`. */
  nextChange(jobIds: readonly string[], deadlineMs: number): { changed: Promise<void>; stop(): void };
  /** CPU of the service and of Chromium over `work`, and the peak memory meanwhile. */
  measured<T>(work: () => Promise<T>): Promise<{ value: T; cpuS: number; peak: { pssMb: number } }>;
  close(): Promise<void>;
}

export async function startDemoService(ctx: BenchContext, name: string, options: { workerConcurrency: number }): Promise<DemoService> {
  const tree = createProcessTree(100);
  const dataDir = ctx.tempDir(name);
  const config = loadConfig(
    {
      dataDir,
      host: '127.0.0.1',
      port: 0,
      sandbox: true,
      sandboxMode: 'normal',
      sandboxLatencyMs: 0,
      workerConcurrency: options.workerConcurrency,
      tarificationQuotaPerHour: 10_000,
    },
    {},
  );
  const portalChild = await startServerChild('sandbox-portal', ctx.tempDir(`${name}-portal`));
  tree.exclude(portalChild.pid);
  const { insurers } = await loadInsurers(config, { serviceUrl: () => portalChild.origin });
  const demos = insurers.filter((i): i is DemoInsurer => i.testKeys !== undefined && i.origin !== undefined);
  const db = openDatabase(databaseFile(dataDir));
  const deps = defaultDeps(db, config, { insurers: demos, env: {} });
  const app = await buildApp(deps, { logger: createLogger({ level: 'info', stream: new Writable({ write: (_c, _e, cb) => cb() }) }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the app does not listen on a TCP port');
  const origin = `http://127.0.0.1:${address.port}`;
  const keys = new Map<string, string>();
  return {
    deps,
    demos,
    tree,
    async keyOf(cabinet) {
      const known = keys.get(cabinet);
      if (known) return known;
      const { cabinet_id } = await initCabinet(deps, {
        cabinet: `Cabinet ${cabinet}`,
        email: `${cabinet}@example.fr`,
        password: 'correct horse battery staple',
      });
      grantCredits(deps, cabinet_id, 10_000);
      const key = createApiKey(deps, cabinet_id, {
        name: 'bench',
        environment: 'test',
        scopes: ['automation:read', 'automation:enqueue'],
      }).key;
      keys.set(cabinet, key);
      return key;
    },
    async api(key, method, path, body) {
      const res = await fetch(`${origin}/api/v1/public${path}`, {
        method,
        headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    },
    nextChange(jobIds, deadlineMs) {
      let stop = () => undefined as void;
      const changed = new Promise<void>((resolve) => {
        const timer = setTimeout(() => stop(), deadlineMs);
        const unlisten = deps.jobSignal.listen((changes) => (changes.some((c) => jobIds.includes(c.jobId)) ? stop() : undefined));
        stop = () => {
          clearTimeout(timer);
          unlisten();
          resolve();
        };
      });
      return { changed, stop };
    },
    async measured(work) {
      const sampler = tree.startSampler();
      const cpuBefore = process.cpuUsage();
      const childrenBefore = tree.childrenCpuSeconds();
      const value = await work();
      const cpu = process.cpuUsage(cpuBefore);
      const peak = sampler.stop();
      const cpuS = (cpu.user + cpu.system) / 1e6 - sampler.cpuSeconds() + (tree.childrenCpuSeconds() - childrenBefore);
      return { value, cpuS, peak };
    },
    async close() {
      await app.close();
      db.close();
      await portalChild.stop();
    },
  };
}
