import type { FastifyBaseLogger } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import type { WritePriority } from '../platform/db/write-priority.js';
import type { Deps } from '../deps.js';
import { packageRoot } from '../paths.js';
import { createDispatcher, fanOutPending, purgeDaily, type Dispatcher, type DispatcherOptions } from './dispatcher.js';
import * as store from './store.js';
import type { ResolvedAddress } from './target.js';

/**
 * The webhook dispatcher on a thread of its own: signing, sending and recording deliveries on the
 * one event loop that also answers the API would make both wait under a steady flow of events. The
 * thread runs the same dispatcher on its own connection to the same SQLite file: the outbox, the
 * leases and what a kill -9 leaves behind are as on the main thread. This side forwards the
 * outbox's signal, relays drain/attemptNow/stop, and writes the thread's log lines to the app's log.
 */

/**
 * Time, randomness and DNS as a test gives them to the dispatcher: plain data, so that they reach
 * its thread. The service gives none: the real clock, up to 10 % of random extra delay on a retry,
 * the system's DNS.
 */
export interface DispatcherInputs {
  /** The time, as a SharedClock holds it (server/platform/shared-clock.ts). */
  clock?: SharedArrayBuffer;
  /** Names resolved from this table only (`*`: any name it does not list); a name it lacks does not exist. */
  hosts?: Record<string, ResolvedAddress[]>;
  /** Retries at exactly their delay. */
  noJitter?: boolean;
}

/** DNS and jitter made from the inputs, on whichever thread the dispatcher runs. */
export function dispatcherOptionsFrom(inputs: DispatcherInputs = {}): Pick<DispatcherOptions, 'resolve' | 'jitter'> {
  const { hosts, noJitter } = inputs;
  return {
    ...(hosts && {
      resolve: async (hostname: string) => {
        const addresses = hosts[hostname] ?? hosts['*'];
        if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return addresses;
      },
    }),
    ...(noJitter && { jitter: () => 0 }),
  };
}

/** What the thread starts from: plain data, copied to it. */
export interface DispatcherThreadData {
  inputs?: DispatcherInputs;
  file: string;
  config: Config;
  keys: Deps['keys'];
  extraCa: readonly string[];
  /** The service connection's `wal_autocheckpoint`: 0 when a checkpoint thread runs, which the dispatcher's connection follows. */
  autocheckpointPages: number;
  logLevel: string;
  /** The API connection's transactions, which the thread lets go first (write-priority.ts). */
  apiWrites: SharedArrayBuffer;
}

export type ToDispatcherThread =
  | { type: 'pump' }
  | { type: 'drain'; id: number }
  | { type: 'stop'; id: number }
  | { type: 'attemptNow'; id: number; cabinetId: string; deliveryId: string };

export type FromDispatcherThread = { type: 'ready' } | { type: 'log'; line: string } | { type: 'done'; id: number; error?: string };

/** The app's webhook options: the dispatcher's thread entry, extra trusted CAs, and a test's inputs. */
export interface WebhookOptions {
  entry: string;
  extraCa?: readonly string[];
  inputs?: DispatcherInputs;
}

/**
 * The compiled thread entry, beside this module in dist/ and the desktop app; from the TypeScript
 * sources (the tests), the one the build wrote, since a thread runs plain JavaScript.
 */
export function dispatcherEntry(): string {
  const beside = fileURLToPath(new URL('./dispatcher-worker.js', import.meta.url));
  return existsSync(beside) ? beside : join(packageRoot(), 'dist', 'server', 'webhooks', 'dispatcher-worker.js');
}

/** The service's webhook options. */
export function serviceWebhooks(extraCa?: readonly string[]): WebhookOptions {
  return { entry: dispatcherEntry(), extraCa };
}

const RESTART_DELAY_MS = 1000;
const PINO_LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** A log line of the thread (pino's JSON), written to the app's logger at its level. */
function relayLog(logger: FastifyBaseLogger, line: string): void {
  try {
    const {
      level,
      msg,
      time: _time,
      pid: _pid,
      hostname: _hostname,
      ...fields
    } = JSON.parse(line) as Record<string, unknown> & { level: number; msg?: string };
    logger[PINO_LEVELS[level] ?? 'info']({ ...fields, thread: 'webhooks' }, msg ?? '');
  } catch {
    logger.info({ thread: 'webhooks' }, line);
  }
}

export interface ThreadedDispatcherOptions extends WebhookOptions {
  logger: FastifyBaseLogger;
}

type Request = { type: 'drain' } | { type: 'stop' } | { type: 'attemptNow'; cabinetId: string; deliveryId: string };

/**
 * Runs the dispatcher on a worker thread, started once there is something to deliver: an install
 * without any webhook subscription does not pay the thread's memory (BENCHMARKS.md, Idle memory).
 * Until then, new events are marked fanned out here (a subscription made later must not receive
 * older events) and history is purged here. Should the thread not start at all (its file cannot be
 * loaded where the app is packaged), the dispatcher runs on the main thread, with a warning; a
 * thread that dies later is started again after a second.
 */
export function createThreadedDispatcher(deps: Deps, options: ThreadedDispatcherOptions): Dispatcher {
  const { logger } = options;
  const pending = new Map<number, { request: Request; resolve: () => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let worker: Worker | undefined;
  let running = false;
  let everReady = false;
  let fallback: Dispatcher | undefined;
  let unlisten: (() => void) | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;
  let apiWrites: WritePriority | undefined;

  function spawn(): void {
    apiWrites ??= deps.db.prioritizeWrites();
    const data: DispatcherThreadData = {
      inputs: options.inputs,
      file: deps.db.sqlite.name,
      config: deps.config,
      keys: deps.keys,
      extraCa: options.extraCa ?? [],
      autocheckpointPages: Number(deps.db.sqlite.pragma('wal_autocheckpoint', { simple: true })),
      logLevel: logger.level,
      apiWrites: apiWrites.buffer,
    };
    const thread = new Worker(options.entry, { workerData: data });
    // Like the checkpoint thread, it never keeps the process alive: the service's close stops it.
    thread.unref();
    worker = thread;
    thread.on('message', (message: FromDispatcherThread) => {
      if (message.type === 'ready') everReady = true;
      else if (message.type === 'log') relayLog(logger, message.line);
      else settle(message.id, message.error);
    });
    thread.on('error', (err) => logger.error({ err }, 'the webhook dispatcher thread failed'));
    thread.on('exit', () => {
      if (worker !== thread) return;
      worker = undefined;
      if (running && !everReady) return fallBack();
      for (const id of [...pending.keys()]) settle(id, 'The webhook dispatcher thread stopped.');
      if (!running) return;
      setTimeout(() => {
        if (running && !worker) spawn();
      }, RESTART_DELAY_MS).unref();
    });
  }

  /** The thread could not start: the main thread delivers, and what was asked of the thread is asked of it. */
  function fallBack(): void {
    logger.warn('the webhook dispatcher thread could not start; deliveries run on the main thread');
    const dispatcher = createDispatcher(deps, { logger, extraCa: options.extraCa, ...dispatcherOptionsFrom(options.inputs) });
    fallback = dispatcher;
    dispatcher.start();
    for (const [id, { request }] of [...pending]) {
      const work = request.type === 'attemptNow' ? dispatcher.attemptNow(request.cabinetId, request.deliveryId) : dispatcher.drain();
      work.then(
        () => settle(id, undefined),
        (err: unknown) => settle(id, (err as Error).message),
      );
    }
  }

  function settle(id: number, error: string | undefined): void {
    const waiting = pending.get(id);
    pending.delete(id);
    if (error === undefined) waiting?.resolve();
    else waiting?.reject(new Error(error));
  }

  /** Starts the thread if any subscription exists; true when it runs. */
  function threadNeeded(): boolean {
    if (!worker && running && !fallback && store.anySubscription(deps.db.orm)) spawn();
    return worker !== undefined;
  }

  function ask(request: Request): Promise<void> {
    const thread = worker;
    if (!thread) return Promise.reject(new Error('The webhook dispatcher thread is not running.'));
    nextId += 1;
    const id = nextId;
    return new Promise<void>((resolve, reject) => {
      pending.set(id, { request, resolve, reject });
      thread.postMessage({ ...request, id } satisfies ToDispatcherThread);
    });
  }

  function onOutbox(): void {
    if (fallback) return;
    try {
      if (threadNeeded()) worker?.postMessage({ type: 'pump' } satisfies ToDispatcherThread);
      else fanOutPending(deps);
    } catch (err) {
      logger.error({ err }, 'webhook dispatcher error');
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      unlisten = deps.outbox.listen(onOutbox);
      if (threadNeeded()) return;
      // The thread purges once it runs; until then, here.
      purgeTimer = purgeDaily(deps, logger, () => worker === undefined && fallback === undefined);
      onOutbox();
    },
    async stop() {
      running = false;
      unlisten?.();
      clearInterval(purgeTimer);
      if (fallback) return fallback.stop();
      const thread = worker;
      if (!thread) return;
      // The thread waits for its attempts in flight and records them before it closes its connection.
      await ask({ type: 'stop' }).catch((err: unknown) => logger.warn({ err }, 'the webhook dispatcher thread did not stop cleanly'));
      worker = undefined;
      await thread.terminate();
    },
    async drain() {
      if (fallback) return fallback.drain();
      if (threadNeeded()) return ask({ type: 'drain' });
      fanOutPending(deps);
    },
    async attemptNow(cabinetId, deliveryId) {
      if (fallback) return fallback.attemptNow(cabinetId, deliveryId);
      if (threadNeeded()) return ask({ type: 'attemptNow', cabinetId, deliveryId });
    },
  };
}
