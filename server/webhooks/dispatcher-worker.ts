import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { createAfterCommitSignal } from '../platform/after-commit-signal.js';
import { createJobSignal } from '../automation/job-signal.js';
import { openDatabase } from '../platform/db/open.js';
import { yieldsTo } from '../platform/db/write-priority.js';
import type { Deps } from '../deps.js';
import { createInsurerRegistry } from '../insurers/registry.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { createDispatcher } from './dispatcher.js';
import {
  dispatcherOptionsFrom,
  type DispatcherThreadData,
  type FromDispatcherThread,
  type ToDispatcherThread,
} from './dispatcher-thread.js';
import { readSharedClock } from '../platform/shared-clock.js';
import { holdNextTickShape } from '../platform/http/tick-shape.js';

/**
 * The webhook dispatcher's thread (see dispatcher-thread.ts): its own connection to the service's
 * SQLite file, the service's config and keys, the real clock (or a test's), and the same dispatcher
 * as on the main thread. It needs no insurer password, and none is reachable from here.
 */

// The thread is its own V8 isolate, with its own nextTick and its own HTTPS requests.
holdNextTickShape();
const port = parentPort;
if (!port) throw new Error('dispatcher-worker.js runs as a worker thread of the service.');
const data = workerData as DispatcherThreadData;
const post = (message: FromDispatcherThread) => port.postMessage(message);

/** Keys arrive as Uint8Array (a Buffer loses its class on the way): Buffers again. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const noSecrets: SecretStore = {
  kind: 'none',
  get: () => undefined,
  set: () => {
    throw new Error('The webhook dispatcher thread keeps no secrets.');
  },
  delete: () => undefined,
};

const db = openDatabase(data.file);
db.sqlite.pragma(`wal_autocheckpoint = ${data.autocheckpointPages}`);
// Never asleep waiting for the lock (SQLite sleeps 1, 2, 5, 10 ms… between tries): the dispatcher
// tries again on its next turn, answering responses meanwhile (see whileBusy in dispatcher.ts).
db.sqlite.pragma('busy_timeout = 0');
const deps: Deps = {
  db,
  config: data.config,
  clock: data.inputs?.clock ? readSharedClock(data.inputs.clock) : { now: () => Date.now() },
  randomBytes,
  keys: {
    cursor: asBuffer(data.keys.cursor),
    downloadLink: asBuffer(data.keys.downloadLink),
    webhookSecrets: asBuffer(data.keys.webhookSecrets),
    csrf: asBuffer(data.keys.csrf),
    auditChain: asBuffer(data.keys.auditChain),
  },
  outbox: createAfterCommitSignal(),
  syncChanges: createAfterCommitSignal(),
  syncLinks: createAfterCommitSignal(),
  jobSignal: createJobSignal(),
  jobQueue: createAfterCommitSignal(),
  insurers: createInsurerRegistry([]),
  secrets: noSecrets,
};
const logger = pino({ level: data.logLevel }, { write: (line: string) => post({ type: 'log', line }) });
const dispatcher = createDispatcher(deps, {
  logger,
  extraCa: data.extraCa,
  yieldTo: yieldsTo(data.apiWrites),
  ...dispatcherOptionsFrom(data.inputs),
});

async function answer(id: number, work: () => Promise<void>): Promise<void> {
  try {
    await work();
    post({ type: 'done', id });
  } catch (err) {
    post({ type: 'done', id, error: (err as Error).message });
  }
}

port.on('message', (message: ToDispatcherThread) => {
  switch (message.type) {
    case 'pump':
      deps.outbox.notify();
      return;
    case 'drain':
      void answer(message.id, () => dispatcher.drain());
      return;
    case 'attemptNow':
      void answer(message.id, () => dispatcher.attemptNow(message.cabinetId, message.deliveryId));
      return;
    case 'stop':
      void answer(message.id, async () => {
        await dispatcher.stop();
        db.close();
      });
      return;
  }
});

dispatcher.start();
post({ type: 'ready' });
logger.info('webhook deliveries run on a thread of their own');
